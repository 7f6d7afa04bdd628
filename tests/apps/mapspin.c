// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mapspin.c: maps a file executable (never touching it) and runs mapspin_burn: 0.5 ms of CPU,
 * then a 5 ms sleep, over and over, so a profiler sees it on and off CPU (even on a host so
 * loaded that a pure spinner gets no CPU for seconds: sleepers are scheduled promptly on
 * wakeup) and reads the file's symbols. "mapspin FILE SECONDS [CHILD_MS]": with
 * CHILD_MS, a new child does this every CHILD_MS (each one a new pid whose files are read
 * afresh). Prints "mapped" once the (first) mapping exists.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void mapspin_nap(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void mapspin_burn(double seconds)
{
	double end = now_s() + seconds;

	while (now_s() < end) {
		double slice = now_s() + 0.0005;

		while (now_s() < slice)
			for (int i = 0; i < 1000; i++)
				sink += (unsigned long)i * 3;
		mapspin_nap();
	}
}

/* the mapping stays as long as the process: the file may shrink, we never touch it */
static int map_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return -1;
	/* length fixed at the start size: the file may be empty right now */
	p = mmap(NULL, 64 << 20, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	return p == MAP_FAILED ? -1 : 0;
}

int main(int argc, char **argv)
{
	double seconds, end;
	long child_ms;

	if (argc < 3) {
		fprintf(stderr, "usage: mapspin FILE SECONDS [CHILD_MS]\n");
		return 2;
	}
	seconds = atof(argv[2]);
	child_ms = argc > 3 ? atol(argv[3]) : 0;
	if (!child_ms) {
		if (map_file(argv[1])) {
			perror(argv[1]);
			return 1;
		}
		printf("mapped\n");
		fflush(stdout);
		mapspin_burn(seconds);
		return 0;
	}
	end = now_s() + seconds;
	printf("mapped\n");
	fflush(stdout);
	while (now_s() < end) {
		pid_t pid = fork();

		if (pid == 0) {
			if (map_file(argv[1]))
				_exit(1);
			mapspin_burn(child_ms / 1000.0);
			_exit(0);
		}
		if (pid < 0)
			return 1;
		(void)waitpid(pid, NULL, 0);
	}
	return 0;
}

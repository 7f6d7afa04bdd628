// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fakejvm.c: processes that look like JVMs to jprof, as an unprivileged user can make them:
 * "fakejvm LIBJVM COUNT LIFE_MS PAR SIZE [PIDFILES]" starts COUNT processes (at most PAR at
 * once), each mapping LIBJVM (a file named libjvm.so) and writing its hsperfdata file
 * /tmp/hsperfdata_<user>/<pid> of SIZE bytes (0: a small valid PerfData file), then living
 * LIFE_MS (0: until killed) and exiting without removing the file, as a killed JVM does.
 * PIDFILES > 0: first, that many files named by pids that are not running are written to
 * the same directory. Prints "ready" once the first COUNT processes were started.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[256];

/* a PerfData v2 prologue with sun.os.hrt.frequency and one collector's counters */
static size_t perfdata(unsigned char *b, size_t cap)
{
	static const char *const names[] = { "sun.os.hrt.frequency", "sun.gc.collector.0.invocations",
					     "sun.gc.collector.0.time" };
	size_t len = 32;
	unsigned int n = 0;

	memset(b, 0, cap);
	b[0] = 0xca, b[1] = 0xfe, b[2] = 0xc0, b[3] = 0xc0;
	b[4] = 1; /* little endian */
	b[5] = 2;
	b[7] = 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		unsigned int noff = 20, doff = (unsigned int)(noff + strlen(names[i]) + 1 + 7) & ~7u;
		unsigned int elen = (doff + 8 + 7) & ~7u, zero = 0;
		unsigned long long v = i == 0 ? 1000000000ull : 1;
		unsigned char *e = b + len;

		memcpy(e, &elen, 4);
		memcpy(e + 4, &noff, 4);
		memcpy(e + 8, &zero, 4);
		e[12] = 'J';
		e[14] = 1;
		e[15] = 3;
		memcpy(e + 16, &doff, 4);
		memcpy(e + noff, names[i], strlen(names[i]) + 1);
		memcpy(e + doff, &v, 8);
		len += elen;
		n++;
	}
	memcpy(b + 24, &(unsigned int){ 32 }, 4);
	memcpy(b + 28, &n, 4);
	return len;
}

static void write_file(pid_t pid, size_t size)
{
	static unsigned char small[4096];
	char path[320];
	int fd;

	snprintf(path, sizeof(path), "%s/%d", dir, (int)pid);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return;
	if (size) {
		/* garbage: a fixed byte, the file read over and over by a careless reader */
		if (ftruncate(fd, (off_t)size) == 0) {
			unsigned char *m = mmap(NULL, size, PROT_WRITE, MAP_SHARED, fd, 0);

			if (m != MAP_FAILED) {
				memset(m, 'x', size);
				munmap(m, size);
			}
		}
	} else {
		size_t len = perfdata(small, sizeof(small));

		if (write(fd, small, len) != (ssize_t)len)
			perror("write");
	}
	close(fd);
}

static void one(const char *libjvm, unsigned int life_ms, size_t size)
{
	int fd = open(libjvm, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || mmap(NULL, st.st_size ? (size_t)st.st_size : 4096, PROT_READ,
					     MAP_PRIVATE, fd, 0) == MAP_FAILED)
		_exit(1);
	write_file(getpid(), size);
	if (!life_ms)
		for (;;)
			pause();
	usleep(life_ms * 1000u);
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned int count, life_ms, par, running = 0, pidfiles;
	struct passwd *pw = getpwuid(geteuid());
	size_t size;

	if (argc < 6 || !pw) {
		fprintf(stderr, "usage: fakejvm LIBJVM COUNT LIFE_MS PAR SIZE [PIDFILES]\n");
		return 2;
	}
	count = (unsigned int)atoi(argv[2]);
	life_ms = (unsigned int)atoi(argv[3]);
	par = (unsigned int)atoi(argv[4]);
	size = (size_t)atol(argv[5]);
	pidfiles = argc > 6 ? (unsigned int)atoi(argv[6]) : 0;
	snprintf(dir, sizeof(dir), "/tmp/hsperfdata_%s", pw->pw_name);
	mkdir(dir, 0755);
	/* pid-named files of no process (pids above the default pid_max first) */
	for (unsigned int i = 0; i < pidfiles; i++) {
		pid_t p = (pid_t)(4000000 - i);

		if (kill(p, 0) && errno == ESRCH)
			write_file(p, 0);
	}
	for (unsigned int i = 0; i < count; i++) {
		pid_t pid;

		while (running >= par && wait(NULL) > 0)
			running--;
		pid = fork();
		if (pid == 0)
			one(argv[1], life_ms, size);
		if (pid > 0)
			running++;
	}
	printf("ready\n");
	fflush(stdout);
	while (wait(NULL) > 0)
		;
	return 0;
}

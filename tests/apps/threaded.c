// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * threaded.c [SECONDS]: two threads burn CPU in spin() for SECONDS (default 5). Their stacks
 * run through glibc's start_thread, which Debian's libc.so.6 names only in its separate
 * debug file (libc6-dbg): the test of debug-file symbolization.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 5;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(void)
{
	for (int i = 0; i < 1000000; i++)
		sink += (unsigned long)i * 7;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	double end = now_s() + seconds;

	(void)arg;
	while (now_s() < end)
		spin();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		seconds = atof(argv[1]);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cpuwork.c: fixed CPU-bound work on N threads; waits for a line on stdin, prints elapsed ms. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long iters;

static void *work(void *arg)
{
	volatile unsigned long x = (unsigned long)arg;

	for (unsigned long i = 0; i < iters; i++)
		x = x * 6364136223846793005ul + i;
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t t[64];
	struct timespec a, b;
	char line[16];

	iters = argc > 2 ? strtoul(argv[2], NULL, 10) : 1500000000ul;
	if (nthreads < 1 || nthreads > 64)
		return 2;
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, work, (void *)(long)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("elapsed_ms=%.3f\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * churnproc.c: a short-lived process for bench/churn.py: THREADS threads (1 = the main
 * thread alone) each run MS ms of their own CPU time, then it exits 0. Built once per
 * -DCHURN_VARIANT=N, so each variant is its own binary with its own function names and
 * build id (jprof's symbol caches see many binaries, not one).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#ifndef CHURN_VARIANT
#define CHURN_VARIANT 0
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define SPIN CAT(churn_spin_v, CHURN_VARIANT)
#define THREAD_MAIN CAT(churn_thread_v, CHURN_VARIANT)

static long cpu_ms;
static volatile unsigned long sink;

static long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

__attribute__((noinline)) void SPIN(void)
{
	long end = thread_cpu_ns() + cpu_ms * 1000000L;
	unsigned long x = CHURN_VARIANT;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + (unsigned long)i;
	sink += x;
}

static void *THREAD_MAIN(void *arg)
{
	(void)arg;
	SPIN();
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[16];

	cpu_ms = argc > 1 ? atol(argv[1]) : 10;
	if (nthreads < 1 || nthreads > 16)
		return 2;
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, THREAD_MAIN, NULL))
			return 1;
	SPIN();
	for (int i = 1; i < nthreads; i++)
		pthread_join(t[i], NULL);
	return 0;
}

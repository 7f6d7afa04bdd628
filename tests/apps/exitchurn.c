// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * exitchurn.c SECS TRIGGER OUT: once the file TRIGGER exists, two lanes for SECS seconds
 * each start a thread ("churn"), which spins until its own CPU clock reaches 2 ms and
 * exits, join it and start the next. Then writes "tid cpu_ns" for every worker to OUT (its
 * CPU clock as it returned: what a profile weighing samples by CPU time owes it). Prints
 * "ready" once it waits for the trigger.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 100000
#define WORK_NS 2000000LL

struct rec {
	long tid;
	long long cpu_ns;
};

static struct rec recs[MAX_WORKERS];
static int nrecs;
static double seconds;
static volatile unsigned long sink;

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void spin(void)
{
	for (int i = 0; i < 10000; i++)
		sink += (unsigned long)i * 7;
}

static void *worker(void *arg)
{
	long long cpu;
	int i;

	(void)arg;
	pthread_setname_np(pthread_self(), "churn");
	while ((cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID)) < WORK_NS)
		spin();
	i = __atomic_fetch_add(&nrecs, 1, __ATOMIC_RELAXED);
	if (i < MAX_WORKERS)
		recs[i] = (struct rec){ .tid = (long)syscall(SYS_gettid), .cpu_ns = cpu };
	return NULL;
}

static void *lane(void *arg)
{
	long long end = *(long long *)arg;

	while (clock_ns(CLOCK_MONOTONIC) < end && nrecs < MAX_WORKERS) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL))
			break;
		pthread_join(t, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t lanes[2];
	long long end;
	FILE *out;

	if (argc != 4) {
		fprintf(stderr, "usage: exitchurn SECS TRIGGER OUT\n");
		return 2;
	}
	seconds = atof(argv[1]);
	printf("ready\n");
	fflush(stdout);
	while (access(argv[2], F_OK))
		usleep(10000);
	end = clock_ns(CLOCK_MONOTONIC) + (long long)(seconds * 1e9);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&lanes[i], NULL, lane, &end))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(lanes[i], NULL);
	out = fopen(argv[3], "w");
	if (!out)
		return 1;
	for (int i = 0; i < nrecs && i < MAX_WORKERS; i++)
		fprintf(out, "%ld %lld\n", recs[i].tid, recs[i].cpu_ns);
	return fclose(out) ? 1 : 0;
}

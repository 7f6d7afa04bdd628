// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * duty.c: ground truth for CPU accounting. Three threads run at 100, 50 and 25% duty
 * cycle, each in its own busy function, from the moment a trigger file appears for
 * SECONDS seconds; each measures its own CPU time (CLOCK_THREAD_CPUTIME_ID) over its
 * work and the program prints "tid function cpu_ns" per thread at the end.
 * Usage: duty TRIGGER_FILE SECONDS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct worker {
	const char *name;
	int duty_pct;
	void (*busy)(struct worker *, long long);
	pid_t tid;
	long long cpu_ns;
};

static const char *trigger;
static double seconds;
static volatile unsigned long sink;

static long long clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* spins until the thread has used ns more CPU time */
static void spin(long long ns)
{
	long long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

/* one function per thread, so each thread's CPU has its own leaf */
__attribute__((noinline)) static void busy_full(struct worker *w, long long ns)
{
	(void)w;
	spin(ns);
}

__attribute__((noinline)) static void busy_half(struct worker *w, long long ns)
{
	(void)w;
	spin(ns);
}

__attribute__((noinline)) static void busy_quarter(struct worker *w, long long ns)
{
	(void)w;
	spin(ns);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	const long long slot = 20 * 1000000LL; /* 20 ms: busy duty% of it, sleep the rest */
	long long end, c0;
	struct timespec nap;

	w->tid = syscall(SYS_gettid);
	while (access(trigger, F_OK))
		usleep(10000);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	end = clock_ns(CLOCK_MONOTONIC) + (long long)(seconds * 1e9);
	while (clock_ns(CLOCK_MONOTONIC) < end) {
		w->busy(w, slot * w->duty_pct / 100);
		if (w->duty_pct < 100) {
			nap.tv_sec = 0;
			nap.tv_nsec = slot * (100 - w->duty_pct) / 100;
			nanosleep(&nap, NULL);
		}
	}
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[3] = {
		{ "busy_full", 100, busy_full, 0, 0 },
		{ "busy_half", 50, busy_half, 0, 0 },
		{ "busy_quarter", 25, busy_quarter, 0, 0 },
	};
	pthread_t t[3];

	if (argc != 3) {
		fprintf(stderr, "usage: duty TRIGGER_FILE SECONDS\n");
		return 2;
	}
	trigger = argv[1];
	seconds = atof(argv[2]);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, run, &w[i]))
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 3; i++)
		printf("%d %s %lld\n", w[i].tid, w[i].name, w[i].cpu_ns);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hotab.c: burns CPU in hot_a about three times as long as in hot_b, for the
 * seconds given (default 5), then prints the CPU time each really took:
 * "hot_a_ns=N hot_b_ns=M" -- the truth the e2e tests compare profiles with.
 * Built with -fno-inline -fno-omit-frame-pointer so main;run;hot_a is the stack.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static unsigned long long thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) void hot_a(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 7;
}

__attribute__((noinline)) void hot_b(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 5;
}

__attribute__((noinline)) void run(double seconds, unsigned long long *a_ns, unsigned long long *b_ns)
{
	unsigned long long end = thread_ns() + (unsigned long long)(seconds * 1e9), t;

	while ((t = thread_ns()) < end) {
		hot_a(3000000);
		*a_ns += thread_ns() - t;
		t = thread_ns();
		hot_b(1000000);
		*b_ns += thread_ns() - t;
	}
}

int main(int argc, char **argv)
{
	unsigned long long a = 0, b = 0;
	double secs = argc > 1 ? atof(argv[1]) : 5.0;

	run(secs, &a, &b);
	printf("hot_a_ns=%llu hot_b_ns=%llu\n", a, b);
	return 0;
}

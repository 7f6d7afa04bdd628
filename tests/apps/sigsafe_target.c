// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sigsafe_target.c spin|sleep SECONDS: the non-Java program SignalSafety execs into.
 * Burns CPU in target_spin, or blocks in 1 ms sleeps in target_sleep, for SECONDS,
 * then prints "target survived" and exits 0. Handlers are SIG_DFL after the exec, so a
 * stray real-time signal kills it before that line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void target_spin(double end)
{
	while (now_s() < end)
		for (unsigned long i = 0; i < 100000; i++)
			sink += i * 7;
}

/* the syscall is made here, not in libc, whose wrapper has no frame pointer and would hide us */
__attribute__((noinline)) void target_sleep(double end)
{
	struct timespec ts = { .tv_nsec = 1000000 };
	long ret;

	while (now_s() < end)
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
				 : "rcx", "r11", "memory");
	(void)ret;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 3;

	if (argc < 2 || (strcmp(argv[1], "spin") && strcmp(argv[1], "sleep"))) {
		fprintf(stderr, "usage: sigsafe_target spin|sleep SECONDS\n");
		return 2;
	}
	printf("target running\n");
	fflush(stdout);
	if (!strcmp(argv[1], "spin"))
		target_spin(now_s() + secs);
	else
		target_sleep(now_s() + secs);
	printf("target survived\n");
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sc_sleeper.c COUNT MSEC: waits for SIGUSR1, then COUNT times: sleeps MSEC in
 * nanosleep (a slow, blocking call) from do_sleep and makes 1000 getppid() calls
 * (fast ones) from do_fast; exits silently. do_sleep makes the syscall itself (no libc
 * wrapper, which has no frame pointer and would hide do_sleep from the stack walk).
 */
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void do_sleep(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	long ret;

	do {
		register long rem __asm__("r10") = (long)&ts;

		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_clock_nanosleep), "D"((long)CLOCK_MONOTONIC), "S"(0L),
				   "d"(&ts), "r"(rem)
				 : "rcx", "r11", "memory");
	} while (ret == -EINTR);
}

__attribute__((noinline)) void do_fast(void)
{
	for (int i = 0; i < 1000; i++)
		(void)getppid();
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 5;
	long ms = argc > 2 ? atol(argv[2]) : 50;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) || sigwait(&set, &sig))
		return 1;
	for (long i = 0; i < count; i++) {
		do_sleep(ms);
		do_fast();
	}
	return 0;
}

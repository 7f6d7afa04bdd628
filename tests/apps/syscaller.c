// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * syscaller.c: spends its time in the kernel: 1-byte writes to /dev/null made by
 * do_writes itself (a raw syscall instruction, not libc's write, which has no frame
 * pointer and would hide do_writes from a frame-pointer walk).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void do_writes(int fd, long n)
{
	char c = 'x';

	for (long i = 0; i < n; i++) {
		long ret;

		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_write), "D"((long)fd), "S"(&c), "d"(1L)
				 : "rcx", "r11", "memory");
		if (ret != 1)
			exit(1);
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5.0;
	struct timespec t0, t;
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		do_writes(fd, 100000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}

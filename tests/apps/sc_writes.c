// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sc_writes.c N: N 1-byte write()s to /dev/null; prints "ns_per_call=X" (CLOCK_MONOTONIC). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void do_writes(int fd, long n)
{
	char c = 'x';

	for (long i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1)
			exit(2);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct timespec t0, t1;
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0 || n <= 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do_writes(fd, n);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("ns_per_call=%.1f\n",
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n);
	return 0;
}

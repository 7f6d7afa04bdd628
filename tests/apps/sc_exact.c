// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sc_exact.c N M [K]: waits for SIGUSR1 (so a tracer can attach first), then makes
 * exactly N write()s to /dev/null, M open()s failing with ENOENT and K execve()s
 * failing with EACCES (/dev/null is not a regular file: EACCES even for root), and
 * exits without printing anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void do_writes(int fd, long n)
{
	char c = 'x';

	for (long i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1)
			exit(2);
}

__attribute__((noinline)) void do_enoent(long n)
{
	for (long i = 0; i < n; i++)
		if (open("/nonexistent-jprof-test/x", O_RDONLY) >= 0 || errno != ENOENT)
			exit(3);
}

__attribute__((noinline)) void do_eacces(long n)
{
	char *const argv[] = { "null", NULL };

	for (long i = 0; i < n; i++)
		if (execve("/dev/null", argv, argv + 1) == 0 || errno != EACCES)
			exit(4);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long m = argc > 2 ? atol(argv[2]) : 100;
	long k = argc > 3 ? atol(argv[3]) : 0;
	sigset_t set;
	int fd, sig;

	fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL) || sigwait(&set, &sig))
		return 1;
	do_writes(fd, n);
	do_enoent(m);
	do_eacces(k);
	return 0;
}

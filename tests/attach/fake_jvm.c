// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fake_jvm.c: a process that looks like a JVM to discovery (it maps a file named libjvm.so)
 * and catches SIGQUIT, but never opens an attach socket: an attach to it always stalls.
 *   fake_jvm LIBJVM_SO READY_FILE
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t quits;

static void on_quit(int sig)
{
	(void)sig;
	quits++;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: fake_jvm LIBJVM_SO READY_FILE\n");
		return 2;
	}
	if (!dlopen(argv[1], RTLD_NOW)) {
		fprintf(stderr, "fake_jvm: %s\n", dlerror());
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_quit;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGQUIT, &sa, NULL))
		return 1;
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "ready\n", 6) != 6)
		return 1;
	close(fd);
	for (;;) {
		unsigned int seen = (unsigned int)quits;

		pause();
		if ((unsigned int)quits != seen) {
			printf("SIGQUIT %u\n", (unsigned int)quits);
			fflush(stdout);
		}
	}
}

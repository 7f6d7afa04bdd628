// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * openwatch.c: who opens a file. "openwatch PATH": with fanotify (root), prints
 * "<pid> <exe>" for every open of PATH's inode, through any path or mount, until killed;
 * "watching" once the mark is set. Opens with O_PATH are not opens of the file and are not
 * reported (the kernel sends no event): only real opens, which are what a FIFO or device
 * reacts to. Events carry a file handle (FAN_REPORT_FID), so the watcher opens nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[8192] __attribute__((aligned(8)));
	int fan;

	if (argc < 2) {
		fprintf(stderr, "usage: openwatch PATH\n");
		return 2;
	}
	fan = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC, O_RDONLY);
	if (fan < 0 || fanotify_mark(fan, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, argv[1])) {
		perror("fanotify");
		return 1;
	}
	printf("watching\n");
	fflush(stdout);
	for (;;) {
		ssize_t n = read(fan, buf, sizeof(buf));
		struct fanotify_event_metadata *m = (struct fanotify_event_metadata *)buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 1;
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			char link[64], exe[PATH_MAX];
			ssize_t len;

			snprintf(link, sizeof(link), "/proc/%d/exe", (int)m->pid);
			len = readlink(link, exe, sizeof(exe) - 1);
			exe[len > 0 ? len : 0] = '\0';
			printf("%d %s\n", (int)m->pid, len > 0 ? exe : "?");
			fflush(stdout);
		}
	}
}

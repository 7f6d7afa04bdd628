// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hswatch.c: inotify on /tmp/hsperfdata_* for the pids of JVMs being born. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hswatch.h"

#define WATCH_DIRS_MAX 256
#define READ_MAX       (64 * 1024)
#define SCAN_NAMES_MAX 4096 /* names looked at in /tmp or a directory at once */
#define PREFIX	       "hsperfdata_"

struct hswatch {
	int fd;
	int tmp_wd;
	int wds[WATCH_DIRS_MAX];
	char names[WATCH_DIRS_MAX][NAME_MAX + 1]; /* the directory of each watch, in /tmp */
	size_t nwds;
	unsigned long pid_max;
	__u64 dirs_skipped, overflows, phantoms;
	/* pids found by a directory scan, handed out by the next reads */
	__u32 backlog[256];
	size_t nbacklog;
};

/* a pid file's name: digits only, no leading zero, fits a pid */
static __u32 name_pid(const char *name)
{
	unsigned long v = 0;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	for (const char *p = name; *p; p++) {
		if (*p < '0' || *p > '9' || p - name > 9)
			return 0;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	return v <= INT_MAX ? (__u32)v : 0;
}

static bool known_wd(const struct hswatch *w, int wd)
{
	for (size_t i = 0; i < w->nwds; i++)
		if (w->wds[i] == wd)
			return true;
	return false;
}

static const char *wd_name(const struct hswatch *w, int wd)
{
	for (size_t i = 0; i < w->nwds; i++)
		if (w->wds[i] == wd)
			return w->names[i];
	return NULL;
}

/*
 * A pid file names a JVM worth a look: its process exists, or it does not and its file
 * is gone too (a JVM that came and went removes it). A file that stays while no such
 * process exists (or with a pid beyond pid_max) is anyone's name, not a JVM: 20,000 of
 * them in a user's directory were 65 phantom "exited before attach" lines in root's report.
 */
static bool real_pid(struct hswatch *w, const char *dir, __u32 pid)
{
	char path[PATH_MAX];
	struct stat st;

	if (w->pid_max && pid > w->pid_max)
		goto phantom;
	(void)snprintf(path, sizeof(path), "/proc/%u", pid);
	if (!stat(path, &st))
		return true;
	if (!dir || snprintf(path, sizeof(path), "/tmp/%s/%u", dir, pid) >= (int)sizeof(path) ||
	    fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW))
		return true;
phantom:
	w->phantoms++;
	return false;
}

static unsigned long read_pid_max(void)
{
	char buf[32] = "";
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");
	unsigned long v = 0;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtoul(buf, NULL, 10);
		fclose(f);
	}
	return v;
}

/* watch /tmp/<name>; files created before the watch are picked up by a scan */
static void watch_dir(struct hswatch *w, const char *name, bool scan)
{
	char path[PATH_MAX];
	int wd, dfd, seen = 0;
	struct dirent *d;
	DIR *dir;

	if (strncmp(name, PREFIX, sizeof(PREFIX) - 1) || strchr(name, '/'))
		return;
	if (snprintf(path, sizeof(path), "/tmp/%s", name) >= (int)sizeof(path))
		return;
	if (w->nwds == WATCH_DIRS_MAX) {
		w->dirs_skipped++;
		return;
	}
	/* a symlink planted under that name is not followed: the watch fails */
	wd = inotify_add_watch(w->fd, path, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
	if (wd < 0 || known_wd(w, wd))
		return;
	(void)snprintf(w->names[w->nwds], sizeof(w->names[0]), "%s", name);
	w->wds[w->nwds++] = wd;
	if (!scan)
		return;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return;
	}
	while (seen++ < SCAN_NAMES_MAX && (d = readdir(dir))) {
		__u32 pid = name_pid(d->d_name);

		if (pid && w->nbacklog < sizeof(w->backlog) / sizeof(w->backlog[0]) &&
		    real_pid(w, name, pid))
			w->backlog[w->nbacklog++] = pid;
	}
	closedir(dir);
}

struct hswatch *hswatch__new(void)
{
	struct hswatch *w = calloc(1, sizeof(*w));
	struct dirent *d;
	DIR *dir;
	int seen = 0, err;

	if (!w)
		return NULL;
	w->pid_max = read_pid_max();
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0)
		goto out_free;
	w->tmp_wd = inotify_add_watch(w->fd, "/tmp",
				      IN_CREATE | IN_MOVED_TO | IN_ONLYDIR | IN_DONT_FOLLOW);
	if (w->tmp_wd < 0)
		goto out_free;
	/* directories that exist already; files in them are JVMs found by discovery */
	dir = opendir("/tmp");
	if (dir) {
		while (seen++ < SCAN_NAMES_MAX && (d = readdir(dir)))
			if (d->d_type == DT_DIR)
				watch_dir(w, d->d_name, false);
		closedir(dir);
	}
	return w;
out_free:
	err = errno;
	hswatch__free(w);
	errno = err;
	return NULL;
}

void hswatch__free(struct hswatch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}

int hswatch__read(struct hswatch *w, __u32 *pids, size_t max)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	size_t n = 0, total = 0;

	while (n < max && total < READ_MAX) {
		ssize_t len;

		while (n < max && w->nbacklog)
			pids[n++] = w->backlog[--w->nbacklog];
		if (n == max)
			break;
		len = read(w->fd, buf, sizeof(buf));
		if (len < 0)
			return errno == EAGAIN ? (int)n : -errno;
		total += (size_t)len;
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const void *)p;
			__u32 pid;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				w->overflows++;
				continue;
			}
			if (!ev->len)
				continue;
			if (ev->wd == w->tmp_wd) {
				if (ev->mask & IN_ISDIR)
					watch_dir(w, ev->name, true);
				continue;
			}
			pid = name_pid(ev->name);
			if (!pid || !real_pid(w, wd_name(w, ev->wd), pid))
				continue;
			if (n < max)
				pids[n++] = pid;
			else if (w->nbacklog < sizeof(w->backlog) / sizeof(w->backlog[0]))
				w->backlog[w->nbacklog++] = pid;
		}
	}
	return (int)n;
}

void hswatch__counters(const struct hswatch *w, __u64 *ret_dirs_skipped, __u64 *ret_overflows)
{
	*ret_dirs_skipped = w ? w->dirs_skipped : 0;
	*ret_overflows = w ? w->overflows : 0;
}

__u64 hswatch__phantoms(const struct hswatch *w)
{
	return w ? w->phantoms : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsperf_file.c: a JVM's hsperfdata file, found in its /tmp and opened safely; the read buffer */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include <time.h>

#include "hsperf.h"
#include "hsperf_int.h"
#include "util/procfs.h"
#include "util/safe_open.h"

/* ---- one JVM's file and its pauses ---- */

static int try_open(int tmp, const char *dir, __u32 nspid, uid_t uid)
{
	struct safe_expect exp = {.uid = uid, .max_size = 256ull << 20, .one_link = true};
	char path[320];

	if (strchr(dir, '/') ||
	    snprintf(path, sizeof(path), "%s/%u", dir, nspid) >= (int)sizeof(path))
		return -EINVAL;
	return safe_open_at(tmp, path, SAFE_BENEATH | SAFE_SAME_MOUNT, &exp, NULL);
}

/* the JVM's /tmp, resolved in its root; -errno */
static int open_tmp(__u32 pid)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char path[64];
	int root, tmp;

	(void)snprintf(path, sizeof(path), "/proc/%u/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	tmp = (int)syscall(SYS_openat2, root, "tmp", &how, sizeof(how));
	if (tmp < 0)
		tmp = -errno;
	close(root);
	return tmp;
}

/* the hsperfdata_* directories of tmp, bounded: a hostile /tmp may hold millions of names */
static int scan_tmp(int tmp, __u32 nspid, uid_t uid)
{
	int dfd = dup(tmp), fd = -ENOENT, seen = 0, tries = 0;
	struct dirent *d;
	DIR *dir;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -errno;
	}
	while (fd < 0 && seen++ < DIR_SCAN_NAMES && tries < DIR_SCAN_TRIES && (d = readdir(dir))) {
		if (strncmp(d->d_name, "hsperfdata_", 11))
			continue;
		tries++;
		fd = try_open(tmp, d->d_name, nspid, uid);
		if (fd == -EPERM) /* another user's file with this pid's name: keep looking */
			fd = -ENOENT;
	}
	closedir(dir);
	return fd;
}

/*
 * One read buffer for all JVMs (HSPERF_FILE_MAX each would be 1 MiB per JVM, for files
 * of 32 KiB): each poll parses what it read before the next read. Not thread-safe,
 * like the rest of a recording's main loop; freed with the last JVM.
 */
static unsigned char *shared_buf;
static unsigned int shared_users;

static unsigned char *buf_get(void)
{
	if (!shared_buf)
		shared_buf = malloc(HSPERF_FILE_MAX);
	if (shared_buf)
		shared_users++;
	return shared_buf;
}

static void buf_put(void)
{
	if (shared_users && !--shared_users) {
		free(shared_buf);
		shared_buf = NULL;
	}
}

struct hsperf *hsperf__open_fd(int fd, bool from_zero)
{
	struct hsperf *h = calloc(1, sizeof(*h));

	if (h)
		h->buf = buf_get();
	if (!h || !h->buf) {
		free(h);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	h->fd = fd;
	h->from_zero = from_zero;
	(void)snprintf(h->kinds[HSPERF_COLLECTORS].name, HSPERF_STR_LEN, "safepoints");
	return h;
}

struct hsperf *hsperf__open(__u32 pid, __u32 nspid, uid_t uid, const char *user, bool from_zero)
{
	char dir[HSPERF_STR_LEN + 16];
	struct hsperf *h;
	int tmp, fd = -ENOENT;

	tmp = open_tmp(pid);
	if (tmp < 0) {
		errno = -tmp;
		return NULL;
	}
	if (user && user[0] && snprintf(dir, sizeof(dir), "hsperfdata_%s", user) < (int)sizeof(dir))
		fd = try_open(tmp, dir, nspid, uid);
	if (fd == -ENOENT)
		fd = scan_tmp(tmp, nspid, uid);
	close(tmp);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	h = hsperf__open_fd(fd, from_zero);
	if (h)
		h->start_mono_ns = proc_start_mono_ns(pid);
	return h;
}

void hsperf__close_file(struct hsperf *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	if (h->buf)
		buf_put();
	h->buf = NULL;
}

bool hsperf__is_open(const struct hsperf *h)
{
	return h->fd >= 0;
}

void hsperf__free(struct hsperf *h)
{
	if (!h)
		return;
	if (h->fd >= 0)
		close(h->fd);
	for (size_t i = 0; i <= HSPERF_COLLECTORS; i++)
		free(h->kinds[i].durs);
	free(h->events);
	if (h->buf)
		buf_put();
	free(h);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* discover_proc.c: bounded reads of /proc files: status fields, caught signals, groups */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "discover.h"
#include "discover_int.h"
#include "util/safe_open.h"
#include "util/cgroup.h"
#include "log.h"

int jvm_open_in_root(int root_fd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (__u64)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd >= 0)
		return fd;
	if (errno != ENOSYS)
		return -errno;
	/* before 5.6: no in-root resolution; at least never follow the last component */
	while (*path == '/')
		path++;
	fd = openat(root_fd, *path ? path : ".", flags | O_CLOEXEC | O_NOFOLLOW, mode);
	return fd < 0 ? -errno : fd;
}

/* reads at most cap - 1 bytes of fd into buf, NUL-terminated; returns length or -errno */
ssize_t dc_read_bounded_fd(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while (len < cap - 1) {
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

/* the same of dir_fd/name, opened without following a symlink */
ssize_t dc_read_bounded(int dir_fd, const char *name, char *buf, size_t cap)
{
	ssize_t len;
	int fd;

	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	len = dc_read_bounded_fd(fd, buf, cap);
	close(fd);
	return len;
}

/* copies src[0..len) to dst, stopping at NUL, replacing bytes a terminal might act on */
void dc_copy_clean(char *dst, size_t dst_len, const char *src, size_t len)
{
	size_t i;

	if (!dst_len)
		return;
	for (i = 0; i < len && i < dst_len - 1 && src[i]; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	dst[i] = '\0';
}

/* value of "key:" at the start of a line in a status-like buffer, or NULL */
static const char *status_value(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			p += klen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* n-th (0-based) whitespace-separated unsigned field of a status line; n < 0: the last one */
int dc_status_uint(const char *buf, const char *key, int n, unsigned long *ret)
{
	const char *p = status_value(buf, key);
	unsigned long val = 0;
	int i = 0, found = 0;

	if (!p)
		return -ENOENT;
	while (*p && *p != '\n') {
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			break;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		val = strtoul(p, &end, 10);
		if (errno || (*end && *end != ' ' && *end != '\t' && *end != '\n'))
			return -EINVAL;
		if (i == n) {
			*ret = val;
			return 0;
		}
		found = 1;
		i++;
		p = end;
	}
	if (n < 0 && found) {
		*ret = val;
		return 0;
	}
	return -ENOENT;
}

/* SigCgt bit of sig in a status buffer: 1, 0, or -EINVAL when absent or malformed */
static int status_sig_caught(const char *buf, int sig)
{
	unsigned long long mask;
	const char *p;
	char *end;

	p = status_value(buf, "SigCgt");
	if (!p || !isxdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	mask = strtoull(p, &end, 16);
	if (errno || (*end && *end != '\n'))
		return -EINVAL;
	return (mask >> (sig - 1)) & 1;
}

int jvm_signal_caught_fd(int status_fd, int sig)
{
	char *buf;
	ssize_t len = 0, n;
	int err;

	if (sig < 1 || sig > 64)
		return -EINVAL;
	buf = malloc(STATUS_MAX);
	if (!buf)
		return -ENOMEM;
	/* proc files are generated at each read from offset 0: this is the state now */
	while (len < STATUS_MAX - 1) {
		n = pread(status_fd, buf + len, STATUS_MAX - 1 - (size_t)len, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				len = -errno;
			break;
		}
		len += n;
	}
	if (len < 0) {
		err = len == -ESRCH || len == -ENOENT ? -ESRCH : (int)len;
		goto out_free;
	}
	buf[len] = '\0';
	err = status_sig_caught(buf, sig);
out_free:
	free(buf);
	return err;
}

int jvm_signal_caught(const char *proc_root, __u32 pid, int sig)
{
	char path[PATH_MAX];
	int fd, err;

	if (sig < 1 || sig > 64)
		return -EINVAL;
	if (snprintf(path, sizeof(path), "%s/%u/status", proc_root, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = jvm_signal_caught_fd(fd, sig);
	close(fd);
	return err;
}

int jvm_parse_groups(const char *buf, size_t len, gid_t *groups, int max)
{
	const char *p = buf, *end = buf + len;
	int n = 0;

	/* "Groups:" then space-separated decimal gids up to the end of the line */
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) >= 7 && !memcmp(p, "Groups:", 7)) {
			p += 7;
			while (p < eol) {
				unsigned long long v = 0;
				int digits = 0;

				while (p < eol && (*p == ' ' || *p == '\t'))
					p++;
				if (p == eol)
					break;
				while (p < eol && *p >= '0' && *p <= '9') {
					v = v * 10 + (unsigned long long)(*p - '0');
					if (++digits > 10)
						return -EINVAL;
					p++;
				}
				if (!digits || (p < eol && *p != ' ' && *p != '\t') ||
				    v >= 0xffffffffULL)
					return -EINVAL;
				if (n >= max)
					return -E2BIG;
				groups[n++] = (gid_t)v;
			}
			return n;
		}
		p = eol + 1;
	}
	return -ENOENT;
}

int jvm_read_groups(const char *proc_root, __u32 pid, gid_t *groups, int max)
{
	char path[PATH_MAX], *buf;
	ssize_t len;
	int dfd, err;

	if (snprintf(path, sizeof(path), "%s/%u", proc_root, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = malloc(STATUS_MAX);
	if (!buf) {
		close(dfd);
		return -ENOMEM;
	}
	len = dc_read_bounded(dfd, "status", buf, STATUS_MAX);
	close(dfd);
	if (len < 0)
		err = len == -ENOENT ? -ESRCH : (int)len;
	else
		err = jvm_parse_groups(buf, (size_t)len, groups, max);
	free(buf);
	return err;
}

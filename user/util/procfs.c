// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* procfs.c: small readers of /proc/<pid> files that several modules need. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "procfs.h"

ssize_t proc_read_small(int dir_fd, const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	if (size < 2)
		return -EINVAL;
	fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return n;
}

int proc_start_ticks(__u32 pid, __u64 *ret)
{
	char path[64], buf[2048], *p;
	unsigned long long v;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = proc_read_small(AT_FDCWD, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p || p[1] != ' ' || !p[2])
		return -EIO;
	/* after ") ": state is field 3; starttime is field 22 */
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d "
		   "%llu",
		   &v) != 1)
		return -EIO;
	*ret = v;
	return 0;
}

/*
 * /proc/<pid>/stat counts boot time in clock ticks (truncated: never later than the real
 * start); boot time includes suspends, which are subtracted at today's total (never less
 * than then), so the result is never later than the process's real start.
 */
__u64 proc_start_mono_ns(__u32 pid)
{
	struct timespec boot, mono;
	__u64 ticks, start, suspended;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || proc_start_ticks(pid, &ticks))
		return 0;
	/* monotonic first: the difference then over-states the suspended time, never under */
	if (clock_gettime(CLOCK_MONOTONIC, &mono) || clock_gettime(CLOCK_BOOTTIME, &boot))
		return 0;
	start = ticks * (1000000000ull / (__u64)hz);
	suspended = ((__u64)boot.tv_sec * 1000000000ull + (__u64)boot.tv_nsec) -
		    ((__u64)mono.tv_sec * 1000000000ull + (__u64)mono.tv_nsec);
	return start > suspended ? start - suspended : 0;
}

int proc_state(__u32 pid, __u32 tid)
{
	char path[64], buf[512], *p;
	ssize_t n;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	n = proc_read_small(AT_FDCWD, path, buf, sizeof(buf));
	if (n < 0)
		return n == -ESRCH ? -ENOENT : (int)n;
	p = strrchr(buf, ')'); /* the state follows the name, which may hold ')' */
	if (!p || p[1] != ' ' || !p[2])
		return -EIO;
	return (unsigned char)p[2];
}

bool proc_gone(__u32 pid)
{
	int st = proc_state(pid, 0);

	return st == -ENOENT || st == 'Z' || st == 'X';
}

int proc_runtime_at(int dir_fd, const char *path, __u64 *ret)
{
	char buf[128];
	unsigned long long ns;
	ssize_t n;

	n = proc_read_small(dir_fd, path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (sscanf(buf, "%llu", &ns) != 1)
		return -EIO;
	*ret = ns;
	return 0;
}

int proc_thread_runtime(__u32 pid, __u32 tid, __u64 *ret)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", pid, tid);
	return proc_runtime_at(AT_FDCWD, path, ret);
}

void proc_comm(__u32 pid, __u32 tid, char comm[16])
{
	char path[64], buf[32];
	ssize_t n;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	memset(comm, 0, 16);
	n = proc_read_small(AT_FDCWD, path, buf, sizeof(buf));
	if (n <= 0)
		return;
	if (buf[n - 1] == '\n')
		buf[--n] = '\0';
	memcpy(comm, buf, n < 16 ? (size_t)n : 15);
}

/* a thread's status is about 1.5 KiB; more is not a status file */
#define STATUS_MAX 8192

/*
 * NSpid's first and last fields in a status buffer: 0, -ENOENT no such line, -EINVAL one
 * that is not a list of decimal tids
 */
static int status_nspid(const char *buf, __u32 *ret_first, __u32 *ret_last)
{
	const char *p = buf;
	unsigned long v;
	int n = 0;

	while (strncmp(p, "NSpid:", 6)) {
		p = strchr(p, '\n');
		if (!p)
			return -ENOENT;
		p++;
	}
	for (p += 6;;) {
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			break;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || !v || v > UINT32_MAX ||
		    (*end && *end != ' ' && *end != '\t' && *end != '\n'))
			return -EINVAL;
		if (!n++)
			*ret_first = (__u32)v;
		*ret_last = (__u32)v;
		p = end;
	}
	return n ? 0 : -EINVAL;
}

static int by_nstid(const void *a, const void *b)
{
	__u32 x = ((const struct proc_nstid *)a)->nstid, y = ((const struct proc_nstid *)b)->nstid;

	return x < y ? -1 : x > y;
}

int proc_ns_tids_at(int task_dfd, struct proc_nstid *ret, size_t cap, size_t *ret_n,
		    size_t *ret_bad)
{
	size_t n = 0, bad = 0;
	struct dirent *de;
	char *buf;
	DIR *d;
	int fd, err = 0;

	/* a descriptor of its own: the directory's read position is not the caller's */
	fd = openat(task_dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	buf = malloc(STATUS_MAX);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	while ((de = readdir(d))) {
		char path[32];
		unsigned long tid;
		__u32 first = 0, last = 0;
		char *end;
		size_t len = 0;
		ssize_t r;
		int sfd;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		errno = 0;
		tid = strtoul(de->d_name, &end, 10);
		if (*end || errno || tid > UINT32_MAX)
			continue;
		snprintf(path, sizeof(path), "%lu/status", tid);
		sfd = openat(task_dfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (sfd < 0)
			continue; /* exited since */
		while (len < STATUS_MAX - 1) {
			r = read(sfd, buf + len, STATUS_MAX - 1 - len);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			len += (size_t)r;
		}
		close(sfd);
		buf[len] = '\0';
		r = status_nspid(buf, &first, &last);
		if (r == -ENOENT && len) {
			first = last = (__u32)tid; /* before 4.1: no pid namespaces to mind */
		} else if (r || first != tid) {
			bad += len > 0;
			continue;
		}
		if (n == cap) {
			err = -E2BIG;
			goto out_free;
		}
		ret[n++] = (struct proc_nstid){.nstid = last, .tid = (__u32)tid};
	}
	qsort(ret, n, sizeof(*ret), by_nstid);
	*ret_n = n;
	if (ret_bad)
		*ret_bad = bad;
out_free:
	free(buf);
out_close:
	closedir(d);
	return err;
}

int proc_ns_tids(__u32 pid, struct proc_nstid *ret, size_t cap, size_t *ret_n, size_t *ret_bad)
{
	char path[48];
	int dfd, err;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = proc_ns_tids_at(dfd, ret, cap, ret_n, ret_bad);
	close(dfd);
	return err;
}

__u32 proc_nstid_host(const struct proc_nstid *m, size_t n, __u32 nstid)
{
	struct proc_nstid key = {.nstid = nstid};
	const struct proc_nstid *hit = n ? bsearch(&key, m, n, sizeof(key), by_nstid) : NULL;

	return hit ? hit->tid : 0;
}

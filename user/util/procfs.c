// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* procfs.c: small readers of /proc/<pid> files that several modules need. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attach_copy.c: the agent library copied, as the JVM's user, where it can load it */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_files.h"
#include "attach.h"
#include "attach_int.h"
#include "log.h"
#include "ring.h"
#include "util/procfs.h"
#include "util/safe_open.h"

static __u64 fnv1a64(const unsigned char *p, size_t n)
{
	__u64 h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* the agent library, through the fd root opened: the child cannot open it by path */
static int read_agent(int fd, unsigned char **ret_buf, size_t *ret_len)
{
	unsigned char *buf;
	struct stat st;
	size_t len = 0;
	ssize_t n;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > AGENT_MAX)
		return -EINVAL;
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return -ENOMEM;
	while (len < (size_t)st.st_size) {
		n = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		len += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 1 when dir_fd/name is a copy of buf owned by us (the JVM's user), writable by no one else */
static int is_good_copy(int dir_fd, const char *name, const unsigned char *buf, size_t len)
{
	unsigned char chunk[65536];
	struct stat st;
	size_t off = 0;
	ssize_t n;
	int fd, ok = 0;

	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size != (off_t)len)
		goto out_close;
	while (off < len) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (size_t)n > len - off || memcmp(chunk, buf + off, (size_t)n))
			goto out_close;
		off += (size_t)n;
	}
	ok = 1;
out_close:
	close(fd);
	return ok;
}

/*
 * Places the agent in dir (as the JVM sees it) as jprof-agent-<fnv1a64>-<uid>.so, created
 * by the child as the JVM's user, 0644. The uid in the name keeps users sharing a /tmp
 * apart: a JVM only ever maps a copy its own user owns, never one another user could
 * rewrite. Only ever replaced by rename(), so a mapped copy is never modified. Writes the
 * JVM-side path.
 */
static int place_agent(struct attach_ctx *c, const char *dir, const unsigned char *buf, size_t len,
		       char *ret_path, size_t path_len)
{
	char name[64], tmp[96];
	unsigned long long rnd = 0;
	struct statvfs sv;
	int dir_fd, fd, err;

	dir_fd = jvm_open_in_root(c->root_fd, dir, O_PATH | O_DIRECTORY, 0);
	if (dir_fd < 0)
		return dir_fd;
	/* dlopen() needs an exec mapping; hardened containers mount /tmp noexec */
	if (!fstatvfs(dir_fd, &sv) && (sv.f_flag & ST_NOEXEC)) {
		err = -EACCES;
		goto out_close;
	}
	snprintf(name, sizeof(name), "jprof-agent-%016llx-%u.so",
		 (unsigned long long)fnv1a64(buf, len), (unsigned int)geteuid());
	if (is_good_copy(dir_fd, name, buf, len))
		goto out_done;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (unsigned long long)at_now_ms() ^ ((unsigned long long)getpid() << 32);
	snprintf(tmp, sizeof(tmp), "%s.%016llx.tmp", name, rnd);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out_close;
	}
	err = fchmod(fd, 0644) ? -errno : 0; /* whatever our umask */
	if (!err)
		err = write_all(fd, buf, len);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		(void)unlinkat(dir_fd, tmp, 0);
		goto out_close;
	}
	/*
	 * A file of that name that is not our copy (left by an old build, or planted) is
	 * replaced where the JVM's user may rename over it. When that fails (another user's
	 * file in sticky /tmp, a directory of that name), the unique temp name serves as the
	 * final one.
	 */
	if (renameat(dir_fd, tmp, dir_fd, name)) {
		pr_debug("attach: rename %s/%s: %s, loading the temp copy", dir, tmp,
			 strerror(errno));
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, tmp);
		if (strlen(tmp) >= sizeof(name)) {
			err = -ENAMETOOLONG;
			(void)unlinkat(dir_fd, tmp, 0);
			goto out_close;
		}
	}
out_done:
	if (snprintf(ret_path, path_len, "%s/%s", dir, name) >= (int)path_len)
		err = -ENAMETOOLONG;
	else
		err = 0;
out_close:
	close(dir_fd);
	return err;
}

int at_copy_agent(struct attach_ctx *c, char *ret_path, size_t path_len)
{
	/* /tmp first (what the JVM itself uses); the others when it is noexec */
	static const char *const dirs[] = {"/tmp", "/var/tmp", "/dev/shm"};
	unsigned char *buf = NULL;
	size_t len = 0, i;
	int err;

	err = read_agent(c->agent_fd, &buf, &len);
	if (err) {
		at_set_err(c, "cannot read the agent library: %s", strerror(-err));
		return err;
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		err = place_agent(c, dirs[i], buf, len, ret_path, path_len);
		if (!err)
			break;
		pr_debug("attach: cannot place agent in %s of pid %u: %s", dirs[i], c->jvm->pid,
			 strerror(-err));
	}
	free(buf);
	if (err)
		at_set_err(c, "cannot copy the agent into the JVM's /tmp as uid %u: %s",
			   (unsigned int)geteuid(), strerror(-err));
	return err;
}

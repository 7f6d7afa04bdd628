// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* safe_open.c: resolve with O_PATH + openat2, check the inode, then reopen it for reading. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fdlimit.h"
#include "util/safe_open.h"

int safe_check_fd(int fd, const struct safe_expect *exp, struct stat *ret_st)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	if (exp->dev && st.st_dev != exp->dev)
		return -ESTALE;
	if (exp->ino && st.st_ino != exp->ino)
		return -ESTALE;
	if (exp->uid != (uid_t)-1 && st.st_uid != exp->uid)
		return -EPERM;
	if (exp->one_link && st.st_nlink != 1)
		return -EMLINK;
	if (exp->max_size && (unsigned long long)st.st_size > exp->max_size)
		return -EFBIG;
	if (ret_st)
		*ret_st = st;
	return 0;
}

/*
 * Opens the inode behind an O_PATH fd for reading. /proc/self/fd/N names exactly that
 * inode, whatever happened to the path since, so the checks made on pathfd hold.
 */
static int reopen(int pathfd, unsigned int flags, const struct stat *checked, struct stat *ret_st)
{
	int oflags = (flags & SAFE_RDWR ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	char buf[64];
	struct stat st;
	int fd;

	(void)snprintf(buf, sizeof(buf), "/proc/self/fd/%d", pathfd);
	/* reading every 100 ms must not dirty the inode (atime) of a file on disk */
	fd = open(buf, oflags | O_NOATIME);
	if (fd < 0 && errno == EPERM) /* O_NOATIME needs ownership or CAP_FOWNER */
		fd = open(buf, oflags);
	if (fd < 0) {
		int err = -errno;

		fdlimit_note(err, "a file of another process");
		return err;
	}
	if (fstat(fd, &st) || st.st_dev != checked->st_dev || st.st_ino != checked->st_ino) {
		close(fd);
		return -ESTALE;
	}
	if (ret_st)
		*ret_st = st;
	return fd;
}

static int check_and_reopen(int pathfd, unsigned int flags, const struct safe_expect *exp,
			    struct stat *ret_st)
{
	struct stat st;
	int err;

	err = safe_check_fd(pathfd, exp, &st);
	if (err)
		return err;
	return reopen(pathfd, flags, &st, ret_st);
}

int safe_open_at(int dirfd, const char *path, unsigned int flags, const struct safe_expect *exp,
		 struct stat *ret_st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int pfd, fd;

	if (flags & SAFE_BENEATH)
		how.resolve |= RESOLVE_BENEATH;
	if (flags & SAFE_IN_ROOT)
		how.resolve |= RESOLVE_IN_ROOT;
	if (flags & SAFE_SAME_MOUNT)
		how.resolve |= RESOLVE_NO_XDEV;
	pfd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (pfd < 0) {
		int err = -errno;

		fdlimit_note(err, path);
		return err;
	}
	fd = check_and_reopen(pfd, flags, exp, ret_st);
	close(pfd);
	return fd;
}

int safe_open_proc_link(const char *path, const struct safe_expect *exp, struct stat *ret_st)
{
	int pfd, fd;

	/* O_PATH follows the kernel's link without opening the target */
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	fd = check_and_reopen(pfd, 0, exp, ret_st);
	close(pfd);
	return fd;
}

int safe_open_proc_tmp(unsigned int pid, const char *name, unsigned int flags,
		       const struct safe_expect *exp, struct stat *ret_st)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char buf[64];
	int root, tmp, fd;

	(void)snprintf(buf, sizeof(buf), "/proc/%u/root", pid);
	root = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	/* /tmp may be a mount of its own (tmpfs): crossing into it is the process's view */
	tmp = (int)syscall(SYS_openat2, root, "tmp", &how, sizeof(how));
	fd = tmp < 0 ? -errno : 0;
	close(root);
	if (fd)
		return fd;
	/* the file itself: no symlink, and no bind mount on top of it */
	fd = safe_open_at(tmp, name, (flags & SAFE_RDWR) | SAFE_BENEATH | SAFE_SAME_MOUNT, exp,
			  ret_st);
	close(tmp);
	return fd;
}

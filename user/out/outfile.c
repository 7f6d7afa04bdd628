// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* outfile.c: the -o file: a temporary file renamed into place, or a device written in place. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

#define TMP_TRIES 16

struct outfile {
	FILE *f;
	int dirfd; /* -1: written in place */
	char base[NAME_MAX + 1];
	char tmp[NAME_MAX + 1];
};

static int set_why(char *why, size_t len, int err, const char *what)
{
	if (why && len)
		snprintf(why, len, "%s", what);
	return err;
}

/* the target of a link whose target does not exist yet: its directory must */
static int resolve_dangling(const char *link, char *ret, size_t len)
{
	char target[PATH_MAX], dir[PATH_MAX], base[PATH_MAX], real[PATH_MAX];
	ssize_t n = readlink(link, target, sizeof(target) - 1);

	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (target[0] != '/') {
		char ldir[PATH_MAX];

		if (snprintf(ldir, sizeof(ldir), "%s", link) >= (int)sizeof(ldir) ||
		    snprintf(dir, sizeof(dir), "%s/%s", dirname(ldir), target) >= (int)sizeof(dir))
			return -ENAMETOOLONG;
	} else {
		snprintf(dir, sizeof(dir), "%s", target);
	}
	snprintf(base, sizeof(base), "%s", dir);
	if (!realpath(dirname(dir), real))
		return -errno;
	if (snprintf(ret, len, "%s/%s", real, basename(base)) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * The kernel's protected_symlinks rule: in a sticky, world-writable directory, follow a
 * link only when its owner is the follower or the directory's owner. Root is no exception:
 * that is what stops another user from aiming root's output at /etc/passwd.
 */
static int check_planted(const char *path, const struct stat *lst, const char *what, char *why,
			 size_t len)
{
	char dir[PATH_MAX];
	struct stat dst;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (stat(dirname(dir), &dst))
		return -errno;
	if (!(dst.st_mode & S_ISVTX) || !(dst.st_mode & S_IWOTH) || lst->st_uid == geteuid() ||
	    lst->st_uid == dst.st_uid)
		return 0;
	if (why && len)
		snprintf(why, len,
			 "it is %s owned by another user in a world-writable sticky directory; "
			 "refusing to write through it",
			 what);
	return -EPERM;
}

static int open_in_place(const char *path, struct outfile *o)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		return -errno;
	}
	o->dirfd = -1;
	return 0;
}

static int open_tmp(struct outfile *o)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		unsigned int r = 0;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (unsigned int)getpid() * 2654435761u + (unsigned int)i;
		if (snprintf(o->tmp, sizeof(o->tmp), ".%.200s.jprof-%08x", o->base, r) >=
		    (int)sizeof(o->tmp))
			return -ENAMETOOLONG;
		fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -errno;
		o->f = fdopen(fd, "w");
		if (!o->f) {
			int err = -errno;

			close(fd);
			(void)unlinkat(o->dirfd, o->tmp, 0);
			return err;
		}
		return 0;
	}
	return -EEXIST;
}

int outfile__open(const char *path, struct outfile **ret, char *why, size_t why_len)
{
	char real[PATH_MAX], dir[PATH_MAX], base[PATH_MAX];
	struct outfile *o;
	struct stat st;
	int err;

	if (why && why_len)
		why[0] = '\0';
	if (!path || !*path)
		return -EINVAL;
	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		err = check_planted(path, &st, "a symbolic link", why, why_len);
		if (err)
			return err;
		/* rename must replace the link's target, not the link */
		if (!realpath(path, real)) {
			err = errno == ENOENT ? resolve_dangling(path, real, sizeof(real)) : -errno;
			if (err)
				return set_why(why, why_len, err, "a symbolic link to nowhere");
		}
		path = real;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->dirfd = -1;
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			free(o);
			return set_why(why, why_len, -EISDIR, "it is a directory");
		}
		/* the kernel's protected_fifos rule, for the same reason */
		err = S_ISFIFO(st.st_mode) ? check_planted(path, &st, "a FIFO", why, why_len) : 0;
		if (!err)
			err = open_in_place(path, o); /* /dev/null, /dev/full, a FIFO */
		goto out;
	}
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    snprintf(base, sizeof(base), "%s", path) >= (int)sizeof(base)) {
		err = -ENAMETOOLONG;
		goto out;
	}
	if (snprintf(o->base, sizeof(o->base), "%s", basename(base)) >= (int)sizeof(o->base)) {
		err = -ENAMETOOLONG;
		goto out;
	}
	o->dirfd = open(dirname(dir), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0) {
		err = -errno;
		goto out;
	}
	err = open_tmp(o);
out:
	if (err) {
		if (o->dirfd >= 0)
			close(o->dirfd);
		free(o);
		return err;
	}
	*ret = o;
	return 0;
}

FILE *outfile__stream(const struct outfile *o)
{
	return o->f;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (fflush(o->f))
		err = -errno;
	/* a device has no fsync (EINVAL); a full disk shows here at the latest */
	if (!err && fsync(fileno(o->f)) && errno != EINVAL && errno != EROFS)
		err = -errno;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (o->dirfd < 0) {
		free(o);
		return err;
	}
	if (!err && renameat(o->dirfd, o->tmp, o->dirfd, o->base))
		err = -errno;
	if (err)
		(void)unlinkat(o->dirfd, o->tmp, 0);
	close(o->dirfd);
	free(o);
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (!o)
		return;
	if (o->f)
		fclose(o->f);
	if (o->dirfd >= 0) {
		(void)unlinkat(o->dirfd, o->tmp, 0);
		close(o->dirfd);
	}
	free(o);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* outfile.c: the -o file: a temporary file renamed into place, or a device written in place. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
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

/* a link sits at dirpath (no links in it): may the caller follow it? (check_planted's rule) */
static int link_allowed(const char *dirpath, const struct stat *lst, const char *link, char *why,
			size_t len)
{
	struct stat dst;

	if (stat(dirpath, &dst))
		return -errno;
	if (!(dst.st_mode & S_ISVTX) || !(dst.st_mode & S_IWOTH) || lst->st_uid == geteuid() ||
	    lst->st_uid == dst.st_uid || lst->st_uid == 0)
		return 0;
	if (why && len)
		snprintf(why, len,
			 "%.200s is a symbolic link owned by another user in a world-writable "
			 "sticky directory; refusing to write through it",
			 link);
	return -EPERM;
}

/*
 * path resolved by hand, one component at a time, into ret (absolute, no symlink left in
 * it): every link met on the way, in a directory part or in a link's target, must pass
 * the kernel's protected_symlinks rule, whatever fs.protected_symlinks says on this host
 * (realpath would follow /tmp/link -> /etc planted by another user). The last component
 * may not exist (it is kept by name); a last component that is a link is followed too
 * (the caller replaces the link's target), a dangling one to a name in an existing
 * directory. At most 40 links, as the kernel.
 */
static int resolve_checked(const char *path, char *ret, size_t len, char *why, size_t why_len)
{
	char todo[PATH_MAX], res[PATH_MAX], cand[PATH_MAX], target[PATH_MAX];
	struct statfs sfs;
	int links = 0, err;

	if (path[0] == '/') {
		res[0] = '\0';
	} else if (!getcwd(res, sizeof(res))) {
		return -errno;
	} else if (!strcmp(res, "/")) {
		res[0] = '\0';
	}
	if (snprintf(todo, sizeof(todo), "%s", path) >= (int)sizeof(todo))
		return -ENAMETOOLONG;
	for (;;) {
		char *comp = todo, *rest;
		struct stat st;
		ssize_t n;
		bool last;

		while (*comp == '/')
			comp++;
		if (!*comp)
			break;
		rest = strchr(comp, '/');
		if (rest)
			*rest++ = '\0';
		else
			rest = comp + strlen(comp);
		while (*rest == '/')
			rest++;
		last = !*rest;
		if (!strcmp(comp, ".")) {
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(res, '/');

			if (slash)
				*slash = '\0';
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		if (snprintf(cand, sizeof(cand), "%s/%s", res, comp) >= (int)sizeof(cand))
			return -ENAMETOOLONG;
		if (lstat(cand, &st)) {
			if (errno == ENOENT && last) {
				memcpy(res, cand, sizeof(res));
				break;
			}
			return -errno;
		}
		if (!S_ISLNK(st.st_mode)) {
			if (!last && !S_ISDIR(st.st_mode))
				return -ENOTDIR;
			memcpy(res, cand, sizeof(res));
			memmove(todo, rest, strlen(rest) + 1);
			continue;
		}
		if (++links > 40)
			return -ELOOP;
		err = link_allowed(res[0] ? res : "/", &st, cand, why, why_len);
		if (err)
			return err;
		/* a /proc magic link (/dev/stdout -> /proc/self/fd/1 -> pipe:[N]) names no
		 * path: the kernel follows it on open, and nobody plants links in /proc */
		if (last && !statfs(res[0] ? res : "/", &sfs) && sfs.f_type == PROC_SUPER_MAGIC) {
			memcpy(res, cand, sizeof(res));
			break;
		}
		n = readlink(cand, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		if (snprintf(cand, sizeof(cand), "%s%s%s", target, *rest ? "/" : "", rest) >=
		    (int)sizeof(cand))
			return -ENAMETOOLONG;
		memcpy(todo, cand, sizeof(todo));
		if (target[0] == '/')
			res[0] = '\0';
	}
	if (snprintf(ret, len, "%s", res[0] ? res : "/") >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * The directory resolve_checked() found, opened without following any link: one swapped
 * in since is refused (ELOOP), not followed. openat2 is 5.6+; before, O_NOFOLLOW covers
 * the last component only.
 */
static int open_dir_nofollow(const char *dir)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS,
	};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
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

/*
 * Temporary files an earlier jprof left when it was killed: ".<base>.jprof-<pid>-<hex>" of a
 * pid that no longer runs, a regular file of ours (never another user's, never a link),
 * in the directory of this -o. At most 4,096 names looked at.
 */
static void remove_stale(struct outfile *o)
{
	char prefix[NAME_MAX + 16];
	struct dirent *d;
	int dfd, seen = 0;
	size_t pl;
	DIR *dir;

	pl = (size_t)snprintf(prefix, sizeof(prefix), ".%.200s.jprof-", o->base);
	dfd = openat(o->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return;
	}
	while (seen++ < 4096 && (d = readdir(dir))) {
		char *end;
		long pid;
		struct stat st;

		if (strncmp(d->d_name, prefix, pl))
			continue;
		pid = strtol(d->d_name + pl, &end, 10);
		if (pid <= 0 || *end != '-' || pid == getpid() || !kill((pid_t)pid, 0) ||
		    errno != ESRCH)
			continue;
		if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		(void)unlinkat(dirfd(dir), d->d_name, 0);
	}
	closedir(dir);
}

static int open_tmp(struct outfile *o)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		unsigned int r = 0;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (unsigned int)getpid() * 2654435761u + (unsigned int)i;
		if (snprintf(o->tmp, sizeof(o->tmp), ".%.200s.jprof-%d-%08x", o->base, (int)getpid(),
			     r) >= (int)sizeof(o->tmp))
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
	err = resolve_checked(path, real, sizeof(real), why, why_len);
	if (err) {
		if (why && why_len && !why[0] && err == -ENOENT)
			set_why(why, why_len, err, "a directory on its path does not exist");
		return err;
	}
	path = real;
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
	o->dirfd = open_dir_nofollow(dirname(dir));
	if (o->dirfd < 0) {
		err = o->dirfd;
		goto out;
	}
	remove_stale(o);
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

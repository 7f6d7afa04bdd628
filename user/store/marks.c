// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * marks.c: a window of the store kept outside its limits. A mark is a store of its own,
 * DIR/marks/<UTC>-<NAME>/segments/: the segments of the window as hard links (the same
 * files: no copy, and the limits' removal of the originals leaves them) and the open
 * interval's snapshot written beside them, so `report --store` and `serve --store` read a
 * mark as they read the store.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"
#include "util/why.h"
#include "util/units.h"

bool store_mark_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > STORE_MARK_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
	       n;
}

/* the marks there are now (names not starting with '.': a half-made one is ".tmp-") */
static int count_marks(int marksfd)
{
	int fd = dup(marksfd), n = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* snap_fd's bytes (from 0) into name below dirfd, synced; 0 or -errno */
static int copy_snapshot(int snap_fd, int dirfd, const char *name)
{
	char buf[65536];
	off_t off = 0;
	ssize_t n;
	int fd, err = 0;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -errno;
	while ((n = pread(snap_fd, buf, sizeof(buf), off)) > 0) {
		for (ssize_t w = 0, k; w < n; w += k) {
			k = write(fd, buf + w, (size_t)(n - w));
			if (k < 0) {
				err = -errno;
				goto out;
			}
		}
		off += n;
	}
	if (n < 0)
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
out:
	close(fd);
	return err;
}

/* removes a half-made mark directory (its segments/ and the files in it) */
static void remove_tmp(int marksfd, const char *tmp)
{
	int fd = openat(marksfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), sfd;
	struct dirent *de;
	DIR *d;

	if (fd >= 0) {
		sfd = openat(fd, SEGMENTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		d = sfd >= 0 ? fdopendir(sfd) : NULL;
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				(void)unlinkat(sfd, de->d_name, 0);
		if (d)
			closedir(d);
		else if (sfd >= 0)
			close(sfd);
		(void)unlinkat(fd, SEGMENTS_DIR, AT_REMOVEDIR);
		close(fd);
	}
	(void)unlinkat(marksfd, tmp, AT_REMOVEDIR);
}

int store__mark(struct store *s, const char *name, __u64 since_s, __u64 now_s, int snap_fd,
		__u64 snap_start_s, __u64 snap_end_s, char *ret_dir, size_t dir_len,
		size_t *ret_n, char *why, size_t why_len)
{
	char stamp[32], dir[STORE_MARK_NAME_MAX + 40], tmp[sizeof(dir) + 8], seg[STORE_NAME_LEN];
	int marksfd = -1, mfd = -1, sfd = -1, n, err;
	size_t kept = 0;
	struct stat st;

	if (why && why_len)
		why[0] = '\0';
	*ret_n = 0;
	if (!store_mark_name_ok(name))
		return set_why(why, why_len, -EINVAL,
			       "a mark's name is 1 to %d letters, digits, '.', '-' or '_'",
			       STORE_MARK_NAME_MAX);
	if (s->lockfd < 0)
		return -EPERM; /* a reader: only the daemon writes */
	if (units_format_utc(now_s, stamp, sizeof(stamp)))
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%s-%s", stamp, name);
	snprintf(tmp, sizeof(tmp), "%s%s", TMP_PREFIX, dir);
	marksfd = store_open_dir(s->dirfd, STORE_MARKS_DIR, true, why, why_len);
	if (marksfd < 0)
		return marksfd;
	n = count_marks(marksfd);
	if (n < 0) {
		err = n;
		goto out;
	}
	if (n >= STORE_MARKS_MAX) {
		err = set_why(why, why_len, -ENOSPC,
			      "%d marks are kept already: remove one (rm -r DIR/%s/NAME)", n,
			      STORE_MARKS_DIR);
		goto out;
	}
	if (!fstatat(marksfd, dir, &st, AT_SYMLINK_NOFOLLOW)) {
		err = set_why(why, why_len, -EEXIST, "a mark %s is there already", dir);
		goto out;
	}
	remove_tmp(marksfd, tmp); /* a killed daemon's */
	err = mfd = store_open_dir(marksfd, tmp, true, why, why_len);
	if (err < 0)
		goto out;
	err = sfd = store_open_dir(mfd, SEGMENTS_DIR, true, why, why_len);
	if (err < 0)
		goto out_tmp;
	/* the window's segments: the same files, linked */
	for (size_t i = 0; i < s->n; i++) {
		if (s->segs[i].end_s <= since_s || s->segs[i].start_s >= now_s)
			continue;
		if (linkat(s->segfd, s->segs[i].name, sfd, s->segs[i].name, 0)) {
			if (errno == ENOENT)
				continue; /* removed by the limits meanwhile */
			err = set_why(why, why_len, -errno, "cannot link %s into the mark: %s",
				      s->segs[i].name, strerror(errno));
			goto out_tmp;
		}
		kept++;
	}
	/* and what no segment holds yet */
	if (snap_fd >= 0 && snap_start_s < snap_end_s &&
	    !store_seg_name(snap_start_s, snap_end_s, seg, sizeof(seg)) &&
	    fstatat(sfd, seg, &st, AT_SYMLINK_NOFOLLOW)) {
		err = copy_snapshot(snap_fd, sfd, seg);
		if (err) {
			set_why(why, why_len, err, "cannot write the open interval into the mark: %s",
				strerror(-err));
			goto out_tmp;
		}
		kept++;
	}
	if (fsync(sfd) || renameat(marksfd, tmp, marksfd, dir)) {
		err = set_why(why, why_len, -errno, "cannot put the mark in place: %s",
			      strerror(errno));
		goto out_tmp;
	}
	(void)fsync(marksfd);
	snprintf(ret_dir, dir_len, "%s/%s", STORE_MARKS_DIR, dir);
	*ret_n = kept;
	err = 0;
	goto out;
out_tmp:
	remove_tmp(marksfd, tmp);
out:
	if (sfd >= 0)
		close(sfd);
	if (mfd >= 0)
		close(mfd);
	close(marksfd);
	return err;
}

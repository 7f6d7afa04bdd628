// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* store.c: the daemon's segments on disk: names, the directory, writes, limits, reads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>

#include "store_int.h"
#include "util/why.h"
#include "util/safe_open.h"
#include "util/units.h"

/* names looked at in segments/: a year of 1-minute segments is 525,600 */
#define STORE_MAX_SEGS (4u << 20)

int store_seg_name(__u64 start_s, __u64 end_s, char *buf, size_t len)
{
	char a[32], b[32];

	if (start_s >= end_s || units_format_utc(start_s, a, sizeof(a)) ||
	    units_format_utc(end_s, b, sizeof(b)))
		return -EINVAL;
	if (snprintf(buf, len, "%s-%s%s", a, b, STORE_SEG_SUFFIX) >= (int)len)
		return -EINVAL;
	return 0;
}

int store_seg_parse(const char *name, struct store_seg *ret)
{
	char a[17], b[17], canon[STORE_NAME_LEN];
	struct store_seg s = {0};

	/* exactly START-END.pb.gz: 16 + 1 + 16 + the suffix */
	if (strlen(name) != 33 + strlen(STORE_SEG_SUFFIX) || name[16] != '-' ||
	    strcmp(name + 33, STORE_SEG_SUFFIX))
		return -EINVAL;
	memcpy(a, name, 16);
	a[16] = '\0';
	memcpy(b, name + 17, 16);
	b[16] = '\0';
	if (units_parse_time(a, 0, &s.start_s) || units_parse_time(b, 0, &s.end_s) ||
	    s.start_s >= s.end_s)
		return -EINVAL;
	/* one name per interval: "20261127T040060Z" (a leap second's spelling) is not one */
	if (store_seg_name(s.start_s, s.end_s, canon, sizeof(canon)) || strcmp(canon, name))
		return -EINVAL;
	memcpy(s.name, name, strlen(name) + 1);
	*ret = s;
	return 0;
}

/* path opened O_PATH without following any link in it; openat2 is 5.6+, before: the last only */
static int open_path_nofollow(int dirfd, const char *path, __u64 resolve)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | resolve,
	};
	int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = openat(dirfd, path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* a directory of the store, opened for reading below parent (no link), mode 0700 when fix */
int store_open_dir(int parent, const char *name, bool create, char *why, size_t len)
{
	struct stat st;
	int fd, err;

	if (create && mkdirat(parent, name, 0700) && errno != EEXIST)
		return set_why(why, len, -errno, "cannot create %s: %s", name, strerror(errno));
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (!fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
			return set_why(why, len, -ELOOP,
				       "%s is a symbolic link: give the store's real path", name);
		if (err == -ENOTDIR)
			return set_why(why, len, err, "%s is not a directory", name);
		return set_why(why, len, err, "cannot open %s: %s", name, strerror(-err));
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (create && st.st_uid != geteuid()) {
		close(fd);
		return set_why(why, len, -EPERM,
			       "%s belongs to uid %u, not to jprof's user (uid %u): refusing to "
			       "write there",
			       name, (unsigned int)st.st_uid, (unsigned int)geteuid());
	}
	/* nobody else reads the profiles: they name every process, thread and function */
	if (create && (st.st_mode & 077) && fchmod(fd, 0700)) {
		err = -errno;
		close(fd);
		return set_why(why, len, err, "cannot make %s private (mode 0700): %s", name,
			       strerror(-err));
	}
	return fd;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct store_seg *x = a, *y = b;

	if (x->start_s != y->start_s)
		return x->start_s < y->start_s ? -1 : 1;
	if (x->end_s != y->end_s)
		return x->end_s < y->end_s ? -1 : 1;
	return 0;
}

static int seg_push(struct store *s, const struct store_seg *seg)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		struct store_seg *nv;

		if (nc > STORE_MAX_SEGS || !(nv = realloc(s->segs, nc * sizeof(*nv))))
			return -ENOMEM;
		s->segs = nv;
		s->cap = nc;
	}
	s->segs[s->n++] = *seg;
	s->bytes += seg->bytes;
	return 0;
}

int store_scan_dir(struct store *s, int dirfd, bool sweep, store_scan_fn one)
{
	int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *d;
	DIR *dir;
	int err = 0;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		err = -errno;
		close(dfd);
		return err;
	}
	while (!err && (d = readdir(dir))) {
		struct stat st;

		if (fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (sweep && !strncmp(d->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) &&
		    st.st_uid == geteuid()) {
			if (!unlinkat(dfd, d->d_name, 0))
				s->st.swept++;
			continue;
		}
		err = one(s, d->d_name, (__u64)st.st_size);
	}
	closedir(dir);
	return err;
}

static int scan_seg(struct store *s, const char *name, __u64 bytes)
{
	struct store_seg seg;

	if (store_seg_parse(name, &seg))
		return 0;
	seg.bytes = bytes;
	return seg_push(s, &seg);
}

/*
 * segments/ read: the segments by name, oldest first; a writer (sweep) also removes the
 * temporary files of a writer that was killed (it holds the lock: nobody writes them now)
 */
static int scan(struct store *s, bool sweep)
{
	int err = store_scan_dir(s, s->segfd, sweep, scan_seg);

	if (!err && s->n)
		qsort(s->segs, s->n, sizeof(*s->segs), seg_cmp);
	return err;
}

static int store_open(const char *path, bool writer, const struct store_limits *lim,
		      struct store **ret, char *why, size_t why_len)
{
	char dir[PATH_MAX], base[PATH_MAX];
	struct store *s;
	int parent, err;

	if (why && why_len)
		why[0] = '\0';
	if (!path || !*path || snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    snprintf(base, sizeof(base), "%s", path) >= (int)sizeof(base))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dirfd = s->segfd = s->lockfd = s->rollfd = -1;
	if (lim)
		s->lim = *lim;
	parent = open_path_nofollow(AT_FDCWD, dirname(dir), 0);
	if (parent < 0) {
		err = parent;
		if (err == -ELOOP)
			set_why(why, why_len, err,
				"a symbolic link on the path: give the store's real path");
		goto out_free;
	}
	err = s->dirfd = store_open_dir(parent, basename(base), writer, why, why_len);
	close(parent);
	if (err < 0)
		goto out_free;
	err = s->segfd = store_open_dir(s->dirfd, SEGMENTS_DIR, writer, why, why_len);
	if (err < 0)
		goto out_free;
	if (writer) {
		s->lockfd = openat(s->dirfd, LOCK_FILE,
				   O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (s->lockfd < 0) {
			err = set_why(why, why_len, -errno, "cannot open its lock file: %s",
				      strerror(errno));
			goto out_free;
		}
		if (flock(s->lockfd, LOCK_EX | LOCK_NB)) {
			err = errno == EWOULDBLOCK
				      ? set_why(why, why_len, -EBUSY,
						"another jprof daemon writes this store")
				      : -errno;
			goto out_free;
		}
	}
	err = scan(s, writer);
	if (err)
		goto out_free;
	/*
	 * roll-ups: never needed, segments are read without them (none made yet, an older
	 * daemon's store, a mark; a writer that cannot make the directory makes none)
	 */
	err = store_open_dir(s->dirfd, STORE_ROLLUPS_DIR, writer, why, why_len);
	if (err >= 0) {
		s->rollfd = err;
		err = store_rollups_scan(s, writer);
		if (err)
			goto out_free;
	}
	err = 0;
	if (why && why_len)
		why[0] = '\0';
	if (writer)
		(void)store_index_compact(s); /* a hint: without it, readers read the segments */
	*ret = s;
	return 0;
out_free:
	store__free(s);
	return err;
}

int store__open_writer(const char *dir, const struct store_limits *lim, __u64 now_s,
		       struct store **ret, char *why, size_t why_len)
{
	int err = store_open(dir, true, lim, ret, why, why_len);

	if (!err)
		(void)store__rotate(*ret, now_s);
	return err;
}

int store__open_reader(const char *dir, struct store **ret, char *why, size_t why_len)
{
	return store_open(dir, false, NULL, ret, why, why_len);
}

void store__free(struct store *s)
{
	if (!s)
		return;
	if (s->segfd >= 0)
		close(s->segfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	if (s->rollfd >= 0)
		close(s->rollfd);
	if (s->lockfd >= 0)
		close(s->lockfd); /* the lock goes with the last fd of its open file */
	free(s->segs);
	free(s->rolls);
	free(s);
}

const struct store_seg *store__segments(const struct store *s, size_t *ret_n)
{
	*ret_n = s->n;
	return s->segs;
}

__u64 store__newest_end(const struct store *s)
{
	__u64 end = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->segs[i].end_s > end)
			end = s->segs[i].end_s;
	return end;
}

__u64 store__bytes(const struct store *s)
{
	return s->bytes;
}

void store__stats(const struct store *s, struct store_stats *ret)
{
	*ret = s->st;
}

int store__dirfd(const struct store *s)
{
	return s->dirfd;
}

/*
 * removes the oldest segment, its roll-up first (never one without all its segments); one
 * removed by someone else meanwhile counts as removed
 */
static void remove_oldest(struct store *s)
{
	store_rollups_drop_before(s, s->segs[0].end_s);
	if (unlinkat(s->segfd, s->segs[0].name, 0) && errno != ENOENT)
		return; /* left where it is: the next rotation tries again */
	s->bytes -= s->segs[0].bytes;
	memmove(s->segs, s->segs + 1, (s->n - 1) * sizeof(*s->segs));
	s->n--;
}

/* the limits with incoming bytes about to be added: oldest first, by age, then by size */
size_t store_rotate(struct store *s, __u64 now_s, __u64 incoming)
{
	size_t removed = 0, n;

	while (s->n && s->lim.max_age_s && s->segs[0].end_s + s->lim.max_age_s < now_s) {
		n = s->n;
		remove_oldest(s);
		if (s->n == n)
			return removed;
		s->st.removed_age++;
		removed++;
	}
	while (s->n && s->lim.max_size && s->bytes + incoming > s->lim.max_size) {
		n = s->n;
		remove_oldest(s);
		if (s->n == n)
			return removed;
		s->st.removed_size++;
		removed++;
	}
	return removed;
}

void store__set_limits(struct store *s, const struct store_limits *lim)
{
	s->lim = *lim;
}

size_t store__rotate(struct store *s, __u64 now_s)
{
	return store_rotate(s, now_s, 0);
}

/* the new segment in the list, in order (it is nearly always the newest) */
static int add_seg(struct store *s, const struct store_seg *seg)
{
	size_t i;
	int err = seg_push(s, seg);

	if (err)
		return err;
	for (i = s->n - 1; i > 0 && seg_cmp(&s->segs[i - 1], seg) > 0; i--)
		s->segs[i] = s->segs[i - 1];
	s->segs[i] = *seg;
	return 0;
}

static void count_drop(struct store *s, int err)
{
	if (err == -ENOSPC || err == -EDQUOT)
		s->st.dropped_full++;
	else if (err == -EFBIG)
		s->st.dropped_big++;
	else
		s->st.dropped_error++;
}

int store__write(struct store *s, __u64 start_s, __u64 end_s, __u64 now_s, store_write_fn fn,
		 void *ctx)
{
	char tmp[STORE_NAME_LEN + 8];
	struct store_seg seg = {.start_s = start_s, .end_s = end_s};
	struct stat st;
	FILE *f;
	int fd, err;

	err = store_seg_name(start_s, end_s, seg.name, sizeof(seg.name));
	if (err)
		goto out_count;
	snprintf(tmp, sizeof(tmp), "%s%s", TMP_PREFIX, seg.name);
	if (!fstatat(s->segfd, seg.name, &st, AT_SYMLINK_NOFOLLOW)) {
		err = -EEXIST;
		goto out_count;
	}
	(void)unlinkat(s->segfd, tmp, 0);
	fd = openat(s->segfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		err = -errno;
		goto out_count;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out_unlink;
	}
	err = fn(ctx, f);
	if (!err && fflush(f))
		err = -errno;
	/* the data on disk before the name: after a crash a segment is whole or absent */
	if (!err && fsync(fd))
		err = -errno;
	if (!err && fstat(fd, &st))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (err)
		goto out_unlink;
	seg.bytes = (__u64)st.st_size;
	if (s->lim.max_size && seg.bytes > s->lim.max_size) {
		err = -EFBIG;
		goto out_unlink;
	}
	(void)store_rotate(s, now_s, seg.bytes);
	if (renameat(s->segfd, tmp, s->segfd, seg.name)) {
		err = -errno;
		goto out_unlink;
	}
	(void)fsync(s->segfd); /* the rename itself, durable */
	s->st.written++;
	s->st.bytes_written += seg.bytes;
	if (add_seg(s, &seg))
		s->bytes += seg.bytes; /* not listed (no memory): the next open lists it */
	return 0;
out_unlink:
	(void)unlinkat(s->segfd, tmp, 0);
out_count:
	count_drop(s, err);
	return err;
}

int store__read(const struct store *s, const struct store_seg *seg, size_t max, char **ret_buf,
		size_t *ret_len)
{
	return store_read_at(s->segfd, seg->name, max, ret_buf, ret_len);
}

int store_read_at(int dirfd, const char *name, size_t max, char **ret_buf, size_t *ret_len)
{
	struct safe_expect exp = {.uid = (uid_t)-1, .max_size = max};
	size_t len = 0;
	struct stat st;
	char *buf;
	int fd, err = 0;

	fd = safe_open_at(dirfd, name, SAFE_BENEATH, &exp, &st);
	if (fd == -ENOSYS) { /* no openat2 (< 5.6): the name itself is no link, checked */
		fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st))
			err = -errno;
		else if (!S_ISREG(st.st_mode))
			err = -EBADFD;
		else if ((__u64)st.st_size > max)
			err = -EFBIG;
		if (err) {
			close(fd);
			return err;
		}
	}
	if (fd < 0)
		return fd;
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO; /* shorter than it was: cut meanwhile */
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

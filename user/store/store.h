/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * store.h: the daemon's local store, a directory of time-partitioned segments. Each
 * segment is one interval's profile, a standard gzip'ed pprof file named by the UTC
 * seconds it covers, [start, end): DIR/segments/20261127T040000Z-20261127T040100Z.pb.gz.
 * A segment is written to DIR/segments/.tmp-NAME, synced, and renamed into place, so
 * every *.pb.gz there is complete; temporary files a killed writer left are removed when
 * the next writer opens the store. One writer at a time (a lock on DIR/lock). Limits by
 * age and size remove the oldest segments first. Files are 0600 in 0700 directories of
 * the writer's user; no symbolic link is followed anywhere in DIR's path. Not thread-safe.
 */
#ifndef JPROF_STORE_H
#define JPROF_STORE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define STORE_SEG_SUFFIX ".pb.gz"
#define STORE_NAME_LEN	 48	      /* "20261127T040000Z-20261127T040100Z.pb.gz" and its NUL */
#define STORE_READ_MAX	 (256u << 20) /* a segment larger than this is not read */

/* one segment: the UTC seconds it covers, [start_s, end_s), and its size */
struct store_seg {
	__u64 start_s, end_s;
	__u64 bytes;
	char name[STORE_NAME_LEN];
};

/* 0: no limit */
struct store_limits {
	__u64 max_age_s; /* segments that ended longer ago than this are removed */
	__u64 max_size;	 /* the segments' bytes in all, the one being added included */
};

struct store_stats {
	__u64 written, bytes_written; /* segments put in place */
	__u64 removed_age, removed_size;
	__u64 dropped_full;  /* segments not written: no space (ENOSPC, EDQUOT) */
	__u64 dropped_big;   /* ... larger than max_size on their own */
	__u64 dropped_error; /* ... any other write error */
	__u64 swept;	     /* temporary files of a killed writer, removed at open */
	__u64 rollups_written, rollups_removed; /* roll-ups put in place; removed (limits, stale) */
};

/* "START-END.pb.gz" of the interval into buf (STORE_NAME_LEN bytes); 0 or -EINVAL */
int store_seg_name(__u64 start_s, __u64 end_s, char *buf, size_t len);
/* a segment's name back into *ret (bytes 0); -EINVAL for any other name, start >= end too */
int store_seg_parse(const char *name, struct store_seg *ret);

struct store;

/*
 * Opens DIR to write segments: creates DIR (its parent must exist) and DIR/segments
 * (0700, mode tightened when looser), takes the writer's lock, removes temporary files and
 * applies the limits at now_s. 0 and *ret, or -errno with a one-line reason in why
 * (-EBUSY: another writer holds the lock; -EPERM: owned by another user; -ELOOP: a
 * symbolic link on the path).
 */
int store__open_writer(const char *dir, const struct store_limits *lim, __u64 now_s,
		       struct store **ret, char *why, size_t why_len);
/* Opens DIR to read its segments (nothing is created or removed). As store__open_writer. */
int store__open_reader(const char *dir, struct store **ret, char *why, size_t why_len);
void store__free(struct store *s); /* NULL-safe; the lock goes with it */

/* the segments, oldest first; valid until the next call that writes or removes */
const struct store_seg *store__segments(const struct store *s, size_t *ret_n);
/* the end of the newest segment (0: none): a writer starts its first interval there or later */
__u64 store__newest_end(const struct store *s);
/* bytes of all segments */
__u64 store__bytes(const struct store *s);

/* writes one segment's content into f; 0 or -errno */
typedef int (*store_write_fn)(void *ctx, FILE *f);

/*
 * Writes the segment [start_s, end_s) with fn: temporary file, fsync, the limits applied
 * at now_s with its size counted, rename, fsync of the directory. 0, or -errno with
 * nothing left behind and the loss counted: -ENOSPC/-EDQUOT no space, -EFBIG larger than
 * max_size alone, -EEXIST a segment of that name is there already.
 */
int store__write(struct store *s, __u64 start_s, __u64 end_s, __u64 now_s, store_write_fn fn,
		 void *ctx);
/* new limits (SIGHUP): applied from the next write or rotation on */
void store__set_limits(struct store *s, const struct store_limits *lim);
/* removes segments past the limits at now_s, oldest first; how many */
size_t store__rotate(struct store *s, __u64 now_s);

/*
 * The segment's bytes, opened without following links and read whole (at most max):
 * a malloc'ed *ret_buf. 0 or -errno (-EFBIG larger than max; -ENOENT removed meanwhile).
 */
int store__read(const struct store *s, const struct store_seg *seg, size_t max, char **ret_buf,
		size_t *ret_len);

void store__stats(const struct store *s, struct store_stats *ret);

/* the store's directory, opened without links (the daemon's control socket lives there) */
int store__dirfd(const struct store *s);

/*
 * The index (index.c): "NAME SAMPLES BYTES" a line per segment the writer put in place, so
 * the counts of a day's segments are had without reading them. A hint: a missing line means
 * "read it"; a line of a segment no longer there, or of another size, is to be ignored.
 */
/* the writer, for a listed segment (its size from the list); 0 or -errno */
int store__index_add(struct store *s, const char *name, __u64 samples);
typedef void (*store_index_fn)(void *ctx, const char *name, __u64 samples, __u64 bytes);
/* each well-formed line (at most 16 MiB of them); 0, or -errno (-ENOENT: no index yet) */
int store__index_read(const struct store *s, store_index_fn fn, void *ctx);
/* the lines of buf[0..len) (written in place: NULs), fn for each well-formed one; how many */
int store_index_parse(char *buf, size_t len, store_index_fn fn, void *ctx);

/*
 * Roll-ups (rollup.c): DIR/rollups/START-END.HASH.pb.gz, the segments lying wholly in [START,
 * END) merged into one pprof file (the daemon writes one per completed ten minutes and one per
 * hour, made of those), which readers take for those segments: the same model, read in one
 * file; a range reads the fewest bytes its valid roll-ups allow. HASH (16 hex digits) is that
 * of those segments' names and sizes, so a roll-up whose segments changed since (one removed,
 * added, cut) is stale and not used. Written as segments are (temporary file, fsync,
 * rename); removed with the oldest of its segments (no later) and, stale, at the writer's
 * open; its bytes count in the store's (store__bytes, max_size).
 */
#define STORE_ROLLUPS_DIR     "rollups"
#define STORE_ROLLUP_S	      3600 /* the daemon's period: an hour */
#define STORE_ROLLUP_PARTS    6	   /* ... and its parts' (ten minutes) */
#define STORE_ROLLUP_NAME_LEN 64   /* "START-END.0123456789abcdef.pb.gz" and its NUL */

struct store_rollup {
	__u64 start_s, end_s;
	__u64 hash; /* of its segments (store__span) */
	__u64 bytes;
	char name[STORE_ROLLUP_NAME_LEN];
};

/* "START-END.HASH.pb.gz" into buf (STORE_ROLLUP_NAME_LEN bytes); 0 or -EINVAL */
int store_rollup_name(__u64 start_s, __u64 end_s, __u64 hash, char *buf, size_t len);
/* a roll-up's name back into *ret (bytes 0); -EINVAL for any other name */
int store_rollup_parse(const char *name, struct store_rollup *ret);

/*
 * The segments lying wholly in [start_s, end_s): how many (0 none, or when one that crosses
 * end_s lies between them), the first's index in store__segments, the hash of their names
 * and sizes
 */
size_t store__span(const struct store *s, __u64 start_s, __u64 end_s, size_t *ret_first,
		   __u64 *ret_hash);
/* the roll-ups, oldest first; valid until the next call that writes or removes */
const struct store_rollup *store__rollups(const struct store *s, size_t *ret_n);
/* r's segments are the store's now (its hash): true, and they in *ret_first, *ret_n */
bool store__rollup_valid(const struct store *s, const struct store_rollup *r, size_t *ret_first,
			 size_t *ret_n);
/* a roll-up's bytes (as store__read); -ENOENT: none, or removed meanwhile */
int store__read_rollup(const struct store *s, const struct store_rollup *r, size_t max,
		       char **ret_buf, size_t *ret_len);

/*
 * Merges the segments lying wholly in [start_s, end_s) (at least 2, every one readable; the
 * valid roll-ups of shorter periods among them read for theirs) into a temporary file
 * DIR/rollups/.tmp-NAME, synced; any thread, with a store of its own (a reader of the
 * writer's directory: its rollups/ must exist). *stop set: given up between two files. 0 and
 * *ret (name, hash, bytes), or -errno with nothing left behind: -ENODATA fewer than 2
 * segments, or one unreadable; -ECANCELED stopped; -EFBIG larger than STORE_READ_MAX;
 * -ENOMEM/-ENOSPC out of memory or over the model's budget.
 */
int store_rollup_build(const struct store *s, __u64 start_s, __u64 end_s,
		       const volatile bool *stop, struct store_rollup *ret);
/*
 * Puts the roll-up store_rollup_build made in place (the writer): still valid, the limits
 * applied at now_s with its bytes counted, still valid, rename, fsync of the directory; a
 * roll-up of the same range there before is removed. 0, or -errno with its temporary file
 * removed (-ESTALE: its segments changed meanwhile; -EFBIG larger than max_size alone).
 */
int store__add_rollup(struct store *s, const struct store_rollup *r, __u64 now_s);

/* marks (marks.c): windows kept outside the limits, each a store of its own */
#define STORE_MARKS_DIR	    "marks"
#define STORE_MARKS_MAX	    64 /* marks kept at once; more are refused until some are removed */
#define STORE_MARK_NAME_MAX 48

/* 1 to STORE_MARK_NAME_MAX of [A-Za-z0-9._-], not starting with '.' or '-' */
bool store_mark_name_ok(const char *name);

/*
 * Keeps [since_s, now_s) of the store as DIR/marks/<UTC now>-<name>/segments/: its segments
 * linked (the same files), and snap_fd's bytes (>= 0: the open interval [snap_start_s,
 * snap_end_s) as pprof) written beside them; made under a temporary name and renamed, so a
 * mark is whole or absent. The writer only. 0 with "marks/<dir>" in ret_dir and the
 * segments kept in *ret_n, or -errno with why (-EINVAL a bad name, -ENOSPC STORE_MARKS_MAX
 * kept already, -EEXIST the same name this second).
 */
int store__mark(struct store *s, const char *name, __u64 since_s, __u64 now_s, int snap_fd,
		__u64 snap_start_s, __u64 snap_end_s, char *ret_dir, size_t dir_len,
		size_t *ret_n, char *why, size_t why_len);

#endif /* JPROF_STORE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* store_int.h: what store.c and marks.c share: the store's open directories and its list. */
#ifndef JPROF_STORE_INT_H
#define JPROF_STORE_INT_H

#include <stdbool.h>

#include "store.h"

#define TMP_PREFIX   ".tmp-"
#define SEGMENTS_DIR "segments"
#define LOCK_FILE    "lock"

struct store {
	int dirfd, segfd; /* DIR and DIR/segments, opened without links */
	int lockfd;	  /* -1: a reader */
	int rollfd;	  /* DIR/rollups; -1: none (a reader of a store without roll-ups) */
	struct store_limits lim;
	struct store_seg *segs; /* oldest first */
	size_t n, cap;
	__u64 bytes; /* segments' and roll-ups' */
	struct store_rollup *rolls; /* oldest first */
	size_t nroll, caproll;
	struct store_stats st;
};

/*
 * A directory of the store, name below parent, opened for reading without following a
 * link; with create, made first (0700) and checked to be jprof's user's and private. fd or
 * -errno with why.
 */
int store_open_dir(int parent, const char *name, bool create, char *why, size_t len);

/* the bytes of name below dirfd, opened without links, read whole (at most max): store__read */
int store_read_at(int dirfd, const char *name, size_t max, char **ret_buf, size_t *ret_len);

/* removes segments (their roll-ups first) past the limits at now_s, incoming bytes to come */
size_t store_rotate(struct store *s, __u64 now_s, __u64 incoming);

/* rollup.c: rollups/ listed (a writer sweeps temporary files and removes stale roll-ups) */
int store_rollups_scan(struct store *s, bool writer);
/*
 * The regular files of dirfd (never a link), each told to one (name, size) until it fails;
 * sweep: the writer's temporary files of a killed writer are removed (counted in st.swept).
 * 0 or -errno.
 */
typedef int (*store_scan_fn)(struct store *s, const char *name, __u64 bytes);
int store_scan_dir(struct store *s, int dirfd, bool sweep, store_scan_fn one);
/* removes the roll-ups that start before end_s (those of the oldest segment, ending there) */
void store_rollups_drop_before(struct store *s, __u64 end_s);

/* index.c: the index rewritten without the lines of segments no longer there (the writer, at open) */
int store_index_compact(struct store *s);

#endif /* JPROF_STORE_INT_H */

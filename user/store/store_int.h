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
	struct store_limits lim;
	struct store_seg *segs; /* oldest first */
	size_t n, cap;
	__u64 bytes;
	struct store_stats st;
};

/*
 * A directory of the store, name below parent, opened for reading without following a
 * link; with create, made first (0700) and checked to be jprof's user's and private. fd or
 * -errno with why.
 */
int store_open_dir(int parent, const char *name, bool create, char *why, size_t len);

/* index.c: the index rewritten without the lines of segments no longer there (the writer, at open) */
int store_index_compact(struct store *s);

#endif /* JPROF_STORE_INT_H */

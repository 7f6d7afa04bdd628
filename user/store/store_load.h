/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* store_load.h: the segments of a time range, read back and merged into one model. */
#ifndef JPROF_STORE_LOAD_H
#define JPROF_STORE_LOAD_H

#include <linux/types.h>
#include <stddef.h>

#include "store.h"
#include "model/model.h"
#include "model/pprof_read.h"

/*
 * Told of each segment in the range, oldest first: err 0 and its own account in info
 * (strings valid during the call only), or err < 0 with why (it was skipped).
 */
typedef void (*store_seg_fn)(void *ctx, const struct store_seg *seg,
			     const struct pprof_read_info *info, int err, const char *why);

struct store_load_result {
	size_t in_range;	/* segments overlapping [since_s, until_s) */
	size_t loaded, skipped; /* of them: merged; unreadable (cut short, corrupt) */
	__u64 start_s, end_s;	/* what the merged ones cover, first start to last end */
};

/*
 * Adds to dst every segment that overlaps [since_s, until_s), each read straight into dst
 * (model/pprof_merge.h) and checked whole first, so one that is cut short or corrupt (a crash,
 * power loss) is skipped whole (told to fn) and never half-merged. dst gets what reading each
 * into a model of its own and copying it over would give. Segments valid roll-ups hold
 * (store.h), all of them in the range, are read from them instead, the fewest bytes (an
 * hour's roll-up, else its ten minutes', else segments): fn is told of each once, a store_seg
 * of its range and name; a roll-up that cannot be read is left for its segments.
 * 0, or -ENOMEM/-ENOSPC (dst's budget; dst then holds part of the range).
 */
int store__load(const struct store *s, __u64 since_s, __u64 until_s, struct model *dst,
		store_seg_fn fn, void *ctx, struct store_load_result *ret);

/*
 * Adds segments first .. first + n - 1 (store__segments' indices; no roll-up) as store__load
 * does; *stop set (by another thread): stops between two segments, with 0
 */
int store__load_segs(const struct store *s, size_t first, size_t n, struct model *dst,
		     store_seg_fn fn, void *ctx, const volatile bool *stop,
		     struct store_load_result *ret);

/*
 * Adds segments first .. first + n - 1 as store__load adds a range (the valid roll-ups of
 * segments among them read for them); *stop as store__load_segs. A roll-up is made so from
 * the roll-ups of shorter periods inside it.
 */
int store__load_span(const struct store *s, size_t first, size_t n, struct model *dst,
		     store_seg_fn fn, void *ctx, const volatile bool *stop,
		     struct store_load_result *ret);

#endif /* JPROF_STORE_LOAD_H */

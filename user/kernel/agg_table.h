/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agg_table.h: the records user space learnt for the in-kernel counts (--aggregate): a
 * stack's hash -> its first full record (header and frames), which its counted samples
 * replay. Bounded by entries and bytes; the least recently used are retired (still found
 * for a while, since counts made before BPF forgot their mark may still come) and then
 * freed. Not thread-safe.
 */
#ifndef JPROF_KERNEL_AGG_TABLE_H
#define JPROF_KERNEL_AGG_TABLE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "jprof.h"

struct agg_table;

/*
 * An empty table of at most max_entries live records and max_bytes bytes of them, and
 * max_retired retired ones more (with a quarter more bytes) until reaped; NULL: ENOMEM
 */
struct agg_table *agg_table__new(size_t max_entries, size_t max_bytes, size_t max_retired);
void agg_table__free(struct agg_table *t); /* NULL-safe */
/*
 * Keeps a copy of s with its frames (kernel, then user and the Java walk's after it) as
 * hash's record, used at now_ns (a retired one of that hash lives again); retired: kept
 * retired at once (found until reaped), within the retired budget. 0;
 * -ENOSPC over a budget (nothing kept); -ENOMEM.
 */
int agg_table__put(struct agg_table *t, __u64 hash, const struct jp_sample *s, const __u64 *kstack,
		   const __u64 *ustack, __u64 now_ns, bool retired);
/* hash's record, its frames right after it, marked used at now_ns; NULL when unknown */
const struct jp_sample *agg_table__get(struct agg_table *t, __u64 hash, __u64 now_ns);
/*
 * Retires the least recently used quarter of the live records (at most max): their hashes
 * into out (the caller makes BPF forget them), found still until agg_table__reap frees
 * them. Returns how many.
 */
size_t agg_table__retire(struct agg_table *t, __u64 now_ns, __u64 *out, size_t max);
/* frees the records retired at or before until_ns; returns how many */
size_t agg_table__reap(struct agg_table *t, __u64 until_ns);
/* records held (live and retired), and their bytes */
size_t agg_table__count(const struct agg_table *t);
size_t agg_table__bytes(const struct agg_table *t);

#endif /* JPROF_KERNEL_AGG_TABLE_H */

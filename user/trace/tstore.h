/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tstore.h: per-thread windows of kernel events for jprof trace's split, in a byte budget. */
#ifndef JPROF_TRACE_TSTORE_H
#define JPROF_TRACE_TSTORE_H

#include <linux/types.h>
#include <stddef.h>

#include "trace/tsplit.h"

struct tstore;

/*
 * Threads are keyed by (the JVM's host pid, the tid in its namespace: the agent's). Each
 * keeps its events of the last window_ns (by their end); the store keeps at most
 * budget_bytes of events and threads. Over it an event is not kept and its thread's
 * lost_until covers it (counted), so a call it overlapped is marked incomplete. NULL +
 * errno.
 */
struct tstore *tstore__new(size_t budget_bytes, __u64 window_ns);
void tstore__free(struct tstore *s); /* NULL-safe */
/* one event of host thread tid (events of a thread arrive in the order they ended) */
void tstore__add(struct tstore *s, __u32 tgid, __u32 ns_tid, __u32 tid, const struct tsplit_ev *ev);
/* drops events that ended before now_ns - window_ns */
void tstore__prune(struct tstore *s, __u64 now_ns);
/*
 * events lost from before since_ns on (the kernel side's drops, which no thread names):
 * every call that started before since_ns... is not affected; calls overlapping a drop are
 * marked by tstore__mark_lost(s, at_ns): all threads' lost_until raised to at_ns
 */
void tstore__mark_lost(struct tstore *s, __u64 at_ns);
/* the split of a call on the thread (no events: all on-CPU, unless lost) */
void tstore__split(const struct tstore *s, __u32 tgid, __u32 ns_tid, __u64 start_ns, __u64 dur_ns,
		   struct tsplit_res *r);

/* the same, with events still open elsewhere (the kernel's open batch) counted too */
void tstore__split_with(const struct tstore *s, __u32 tgid, __u32 ns_tid, __u64 start_ns,
			__u64 dur_ns, const struct tsplit_ev *extra, size_t n_extra,
			struct tsplit_res *r);
/* the thread's host tid, as its last event said: 0, or -ENOENT */
int tstore__host_tid(const struct tstore *s, __u32 tgid, __u32 ns_tid, __u32 *ret);

struct tstore_stats {
	__u64 events, dropped_budget, pruned;
	size_t threads, bytes, bytes_peak;
};
void tstore__stats(const struct tstore *s, struct tstore_stats *ret);

#endif /* JPROF_TRACE_TSTORE_H */

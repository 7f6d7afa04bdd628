/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* mtk.h: jprof trace's kernel part: loads mtrace.bpf.c for the traced JVMs, keeps their threads' events. */
#ifndef JPROF_TRACE_MTK_H
#define JPROF_TRACE_MTK_H

#include <linux/types.h>
#include <stddef.h>

#include "trace/tsplit.h"

struct mtk;

struct mtk_opts {
	size_t budget_bytes; /* events kept in user space; 0: 64 MiB */
	__u64 window_ns;     /* a thread's events kept this long; 0: 30 s */
	size_t ring_bytes;   /* the BPF ring buffer (a power of 2 pages); 0: 8 MiB */
};

/*
 * Opens, loads (tp_btf, else raw_tp) and attaches mtrace.bpf.c for the host pids
 * tgids[0..n) (at most JP_MTK_PIDS_MAX): their threads' off-CPU intervals and system
 * calls from now on. 0 or -errno (the caller says it once: the trace runs without it).
 */
int mtk__start(const __u32 *tgids, size_t n, const struct mtk_opts *o, struct mtk **ret);
void mtk__free(struct mtk *m); /* NULL-safe: detaches and unloads */
/* reads what the programs sent into the threads' windows, prunes what is older; 0 or -errno */
int mtk__poll(struct mtk *m, __u64 now_ns);
/*
 * The split of a call [start_ns, start_ns + dur_ns) of JVM tgid's thread ns_tid (the tid
 * the agent records), the kernel functions named. Call after mtk__poll() that followed
 * the reading of the call's record: its events were sent before the record was written.
 */
void mtk__split(struct mtk *m, __u32 tgid, __u32 ns_tid, __u64 start_ns, __u64 dur_ns,
		struct tsplit_res *r);

struct mtk_stats {
	__u64 off, sc; /* events the programs sent: off-CPU intervals, system calls one by one */
	__u64 batches, batched;	 /* ... batches of short system calls, and the calls in them */
	__u64 rb_full, thr_full; /* ... lost in the kernel: the ring buffer or thread table full */
	__u64 no_enter, kstack_err;
	__u64 no_in;	/* switch-ins the programs did not see (the thread found running) */
	__u64 end_exit; /* ... of which intervals ended at their wait's return */
	__u64 unsure;	/* ... of which spans unsure: the calls they overlap incomplete */
	__u64 bad;	/* records malformed */
	__u64 kept_dropped, pruned; /* user space: over the budget, out of the window */
	size_t bytes_peak, threads;
};
void mtk__stats(struct mtk *m, struct mtk_stats *ret);

#endif /* JPROF_TRACE_MTK_H */

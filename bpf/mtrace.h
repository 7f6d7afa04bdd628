/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* mtrace.h: types shared by mtrace.bpf.c and user/trace/mtk.c (jprof trace's kernel split). */
#ifndef JPROF_MTRACE_H
#define JPROF_MTRACE_H

#define JP_MTK_KSTACK	  10 /* kernel frames kept of a blocking switch-out */
#define JP_MTK_PIDS_MAX	  16 /* traced JVMs (trace.h TRACE_PIDS_MAX) */
#define JP_MTK_RB_DEFAULT (8u << 20)

/* jp_mtk_ev.kind */
#define JP_MTK_OFF	1 /* an off-CPU interval: switch-out to switch-in */
#define JP_MTK_SC	2 /* a system call: sys_enter to sys_exit */
#define JP_MTK_SCB	3 /* short system calls in a row: first start, last end, count, time */
#define JP_MTK_LOST	4 /* [start, end) of the thread unsure: a switch-in not seen */

/* jp_mtk_ev.flags (JP_MTK_OFF) */
#define JP_MTK_F_END_EXIT 1 /* its switch-in was not seen: it ends at the sys_exit of its call */

#define JP_MTK_NR_MIXED (-2) /* JP_MTK_SCB of several calls */

/* jp_mtk_ev.state (JP_MTK_OFF): how the thread left the CPU */
#define JP_MTK_RUNNABLE 1 /* preempted, or yielded while runnable: waiting for a CPU */
#define JP_MTK_SLEEP	2 /* S: interruptible sleep */
#define JP_MTK_DISK	3 /* D: uninterruptible (I/O, mostly) */

/* per-CPU counters (jp_mtk_stat index) */
#define JP_MTK_ST_OFF	   0 /* off-CPU intervals sent */
#define JP_MTK_ST_SC	   1 /* system calls sent */
#define JP_MTK_ST_RB_OFF   2 /* ... not sent: the ring buffer was full */
#define JP_MTK_ST_RB_SC	   3
#define JP_MTK_ST_THR_FULL 4 /* a thread not tracked: the thread table was full */
#define JP_MTK_ST_NO_ENTER 5 /* a sys_exit without its sys_enter (began before attach) */
#define JP_MTK_ST_KSTACK   6 /* kernel stacks that could not be taken */
#define JP_MTK_ST_BATCHED  7 /* short system calls sent in a JP_MTK_SCB */
#define JP_MTK_ST_BATCHES  8 /* JP_MTK_SCB records sent */
#define JP_MTK_ST_NO_IN	   9 /* a thread back on a CPU whose switch-in was not seen */
#define JP_MTK_ST_MAX	   10

/* one event, host tid and the tid in the JVM's pid namespace (what the agent records) */
struct jp_mtk_ev {
	__u64 start_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns), as the agent's records */
	__u64 end_ns;
	__u32 tid;    /* host */
	__u32 ns_tid; /* the thread's pid namespace (the JVM's gettid()) */
	__u32 tgid;
	__s32 nr;      /* JP_MTK_SC: the call; JP_MTK_OFF: the call in flight, -1 none */
	__u8 kind;     /* JP_MTK_* */
	__u8 state;    /* JP_MTK_OFF: JP_MTK_RUNNABLE/SLEEP/DISK */
	__u8 n_kstack; /* JP_MTK_OFF, blocking: frames in kstack */
	__u8 flags;    /* JP_MTK_OFF: JP_MTK_F_* */
	__u32 count; /* JP_MTK_SCB: the calls, and their time */
	__u64 sc_ns;
	__u64 kstack[JP_MTK_KSTACK];
};

/*
 * Per thread (the mt_thr map, read by user space for a batch still open): what is open.
 * System calls shorter than sc_batch_ns are not sent one by one: they add up in the open
 * batch, sent as one JP_MTK_SCB when a longer call or a switch-out comes, or when it spans
 * more than batch_span_ns.
 */
struct jp_mtk_thr {
	__u64 sc_start; /* 0: no call in flight */
	__s32 sc_nr;
	__u32 b_count; /* the open batch (0: none) */
	__u64 b_start, b_end, b_ns;
	__s32 b_nr; /* the batch's call, or JP_MTK_NR_MIXED */
	__u32 pad;
	struct jp_mtk_ev off; /* start_ns 0: on CPU (or not seen leaving) */
};

#endif /* JPROF_MTRACE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ptable.h: the process table. Every process jprof holds anything of has one entry, by pid
 * (identity: pid plus start time); it is the one place that learns a process exec'd or
 * exited, and it tells every store that keeps state per process (symbols, the join's JVM,
 * BPF map entries, the attach state, the record loop's agents) exactly once, through the
 * functions they subscribed. Lookups by pid are O(1); memory follows the live processes
 * (an exited one is dropped `linger` after its exit, once its last samples are joined).
 */
#ifndef JPROF_PROC_PTABLE_H
#define JPROF_PROC_PTABLE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "jprof.h"

#define PT_F_JVM   (1u << 0) /* known as a JVM */
#define PT_F_DEFER (1u << 1) /* samples held for its symbols this round (record loop) */
#define PT_F_SYMS  (1u << 2) /* its symbols are loaded, or asked for (record loop) */

struct pt_proc {
	__u32 pid;
	__u32 flags;	   /* PT_F_* */
	__u64 start_ticks; /* /proc/<pid>/stat field 22; 0 until someone read it */
	__u64 samples;	   /* samples read of it */
	__u64 gone_ns;	   /* when it was found exited; 0 while it lives */
	char comm[JP_COMM_LEN];
};

enum pt_why {
	PT_EXITED, /* exited (the kernel said, or its /proc entry is gone or another process's) */
	PT_EXECED, /* exec'd: the old program's state goes, the pid is a new process */
	PT_END,	   /* the table is freed with it still in */
};

/* a store's drop of p's state: called once per process, in subscription order */
typedef void (*pt_drop_fn)(void *ctx, const struct pt_proc *p, enum pt_why why, __u64 now_ns);

struct ptable;

/* linger_ns: how long an exited process stays (its samples still in flight). NULL + errno */
struct ptable *ptable__new(__u64 linger_ns);
/* NULL-safe; entries still in are not reported to the subscribers */
void ptable__free(struct ptable *t);
/* at most PT_SUBSCRIBERS_MAX; 0 or -ENOSPC */
#define PT_SUBSCRIBERS_MAX 8
int ptable__subscribe(struct ptable *t, pt_drop_fn fn, void *ctx);

/* the entry of pid, NULL when it has none. Entries move when the table grows or drops. */
struct pt_proc *ptable__find(struct ptable *t, __u32 pid);
/* the entry of pid, made when new (*is_new); NULL when out of memory. pid 0 has none. */
struct pt_proc *ptable__get(struct ptable *t, __u32 pid, bool *is_new);

/* pid exited (no-op when unknown or known already): it is dropped linger_ns after now_ns */
void ptable__exited(struct ptable *t, __u32 pid, __u64 now_ns);
/* pid exec'd: its entry is dropped now, and its next ptable__get makes a new one */
void ptable__execed(struct ptable *t, __u32 pid, __u64 now_ns);
/* drops the processes that exited linger_ns ago or more; how many */
size_t ptable__tick(struct ptable *t, __u64 now_ns);
/*
 * For exits the kernel could not tell (its ring was full): looks at up to budget entries
 * whose start time is known, in turn, and marks those whose /proc entry is gone or another
 * process's as exited. How many it marked.
 */
size_t ptable__sweep(struct ptable *t, __u64 now_ns, size_t budget);

/* calls fn for every entry (not while the table changes) */
typedef void (*pt_each_fn)(void *ctx, const struct pt_proc *p);
void ptable__for_each(const struct ptable *t, pt_each_fn fn, void *ctx);

struct ptable_stats {
	__u64 seen;	      /* processes made */
	__u64 live;	      /* entries now */
	__u64 exited, execed; /* dropped, by why */
	__u64 swept;	      /* found exited by ptable__sweep */
	__u64 peak;	      /* the most entries at once */
	__u64 nomem;	      /* ptable__get out of memory */
};
void ptable__stats(const struct ptable *t, struct ptable_stats *ret);

#endif /* JPROF_PROC_PTABLE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* offcpu.h: loads offcpu.bpf.c: JP_EV_OFFCPU samples (blocked time, weight in ns) into the session's ring. */
#ifndef JPROF_KERNEL_OFFCPU_H
#define JPROF_KERNEL_OFFCPU_H

#include <linux/types.h>
#include <stdbool.h>

#include "kernel/session.h"

/*
 * A JP_SF_OPEN sample's flag (user space only, beside bpf/jprof.h's JP_SF_*): the thread
 * was blocked from the recording's start (or before) to its end.
 */
#define OFFCPU_SF_WHOLE 0x40000000u

struct offcpu_opts {
	__u64 min_block_ns;	  /* shorter blocked intervals are not reported; 0: all */
	unsigned int max_threads; /* threads tracked at once (LRU); 0: 16384 */
	bool include_kthreads;	  /* also kernel threads (they have no user stack) */
	bool wakers;		  /* --wakers: not implemented yet, -EOPNOTSUPP */
	bool runnable;		  /* also preempted intervals (waiting for a CPU), JP_SF_RUNNABLE */
	/*
	 * -e lock: JVM threads BPF walks are signalled at their syscall's return all the same,
	 * for the park's blocker the agent's trace carries
	 */
	bool parks;
};

struct offcpu;

/*
 * Opens offcpu.bpf.c, sets its rodata (pid filter from ks), makes it use ks's
 * events/pids/jvms/stats maps, loads it (tp_btf, else raw_tp) and attaches it to
 * sched_switch and raw_syscalls. Samples arrive through kernel_session__poll();
 * drops and signals are counted in kernel_session__stats(). 0 or -errno, logged.
 * ks must outlive the returned object.
 */
int offcpu__start(struct kernel_session *ks, const struct offcpu_opts *o, struct offcpu **ret);
/*
 * Intervals count from start_ns (CLOCK_MONOTONIC) on: the part before is left out. Until
 * it is called none counts (one that ends before the recording's start is not its own).
 */
void offcpu__set_window(struct offcpu *oc, __u64 start_ns);
/*
 * The end of the recording at end_ns (CLOCK_MONOTONIC): detaches the programs, then
 * every interval still open (a thread switched out at or before end_ns and not back
 * in) becomes a sample to fn, weighted from max(its switch-out, start_ns) to end_ns,
 * time_ns end_ns, flagged JP_SF_OPEN, with the stacks it blocked in; never signalled
 * (that would wake it), so a JVM thread's has no Java frames. Returns how many were
 * given to fn, or -errno (fn's error included).
 */
int offcpu__flush_open(struct offcpu *oc, __u64 start_ns, __u64 end_ns, kernel_sample_fn fn,
		       void *ctx);
/*
 * At the recording's start (start_ns), once the programs run: each thread of pid asleep
 * now (S or D) that BPF has not seen block (no entry) has slept since before; it gets an
 * entry as if BPF had seen it block at start_ns, its stack the one frame /proc gives
 * (JP_SF_SEEDED). If it wakes, its switch-in emits the interval from start_ns; one that
 * sleeps to the end is offcpu__flush_blocked()'s. At most max_threads threads are looked
 * at. How many were given an entry, or -errno.
 */
int offcpu__seed_blocked(struct offcpu *oc, __u32 pid, __u64 start_ns, unsigned int max_threads);
/*
 * Before offcpu__flush_open(), while the programs run: the threads of pid blocked since
 * before the recording (sleeping now, S or D, and no switch-out seen: no entry, or one
 * offcpu__seed_blocked() made, untouched) become
 * JP_SF_OPEN samples weighted end_ns - start_ns. BPF never saw them block, so their
 * stack is what /proc/PID/task/TID/syscall gives without waking them: the blocked
 * syscall and the user PC, one frame. At most max_threads threads are looked at.
 * Returns how many were given to fn, or -errno (fn's error included).
 */
int offcpu__flush_blocked(struct offcpu *oc, __u32 pid, __u64 start_ns, __u64 end_ns,
			  unsigned int max_threads, kernel_sample_fn fn, void *ctx);
/* NULL-safe: detaches and unloads */
void offcpu__free(struct offcpu *oc);

#endif /* JPROF_KERNEL_OFFCPU_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* syscalls.h: loads syscalls.bpf.c: per-process syscall statistics, samples of slow calls. */
#ifndef JPROF_KERNEL_SYSCALLS_H
#define JPROF_KERNEL_SYSCALLS_H

#include <linux/types.h>
#include <stdbool.h>

#include "kernel/session.h"

struct sc_table; /* out/sctable.h */

struct syscalls_opts {
	__u64 slow_ns;	 /* calls at least this long become JP_EV_SYSCALL samples; 0: none */
	bool per_thread; /* aggregate per thread instead of per process */
	unsigned int max_entries; /* (process, call) pairs kept; 0: 16384 */
};

struct syscalls;

/*
 * Opens syscalls.bpf.c, sets its rodata (pid filter from ks), makes it use ks's
 * shared maps, loads it (tp_btf, else raw_tp) and attaches it to raw_syscalls
 * sys_enter/sys_exit. Slow-call samples (weight: latency in ns, syscall_nr set,
 * user stack only) arrive through kernel_session__poll(); JVM threads get their
 * stack request at the call's exit. 0 or -errno, logged. ks must outlive it.
 */
int syscalls__start(struct kernel_session *ks, const struct syscalls_opts *o,
		    struct syscalls **ret);
/*
 * Reads the in-kernel aggregate (as of now; may be called again later) into a new
 * table, sorted, with names and p50/p90/p99. Caller frees with sc_table_free().
 * 0 or -errno.
 */
int syscalls__read(struct syscalls *s, struct sc_table **ret);
/* NULL-safe: detaches and unloads */
void syscalls__free(struct syscalls *s);

/*
 * "write", or "syscall_<nr>" for numbers this build's headers do not know; the
 * latter lives in a per-thread buffer valid until the next call in the thread.
 */
const char *syscall_name(int nr);

#endif /* JPROF_KERNEL_SYSCALLS_H */

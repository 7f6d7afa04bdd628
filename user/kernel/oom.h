/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* oom.h: the kernel's OOM kills as they happen (oom.bpf.c on oom:mark_victim), for the daemon. */
#ifndef JPROF_KERNEL_OOM_H
#define JPROF_KERNEL_OOM_H

#include <linux/types.h>
#include <stddef.h>

struct oom_kill {
	__u64 time_ns; /* CLOCK_MONOTONIC */
	__u32 pid, tid, uid;
	const char *comm; /* the kernel's, or /proc's while the process is still there; "" */
};

typedef void (*oom_fn)(void *ctx, const struct oom_kill *k);

struct oom_watch;

/* loads and attaches oom.bpf.c. 0 and *ret, or -errno with why (e.g. no such tracepoint) */
int oom_watch__start(struct oom_watch **ret, char *why, size_t why_len);
/* calls fn for each OOM kill since the last call; never blocks. How many, or -errno */
int oom_watch__poll(struct oom_watch *w, oom_fn fn, void *ctx);
/* events the kernel side had no room for */
__u64 oom_watch__lost(const struct oom_watch *w);
void oom_watch__free(struct oom_watch *w); /* NULL-safe */

#endif /* JPROF_KERNEL_OOM_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * session_int.h: one kernel session's state (struct kernel_session), shared by
 * kernel/session.c (load, attach, poll the ring) and kernel/session_procs.c (what BPF holds
 * per process: JVMs that answer stack requests, native threads, Method*s, -p targets).
 */
#ifndef JPROF_KERNEL_SESSION_INT_H
#define JPROF_KERNEL_SESSION_INT_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "log.h"
#include "kernel/session.h"
#include "util/procfs.h"
#include "cpu.skel.h"
#include "jvms.skel.h"

/* exits kept between two takes (a round): past it they are counted, not kept */
#define KS_EXITS_MAX 8192

struct kernel_session {
	struct cpu_bpf *cpu;
	struct jvms_bpf *jvms; /* exec and exit drop jvms entries */
	struct ring_buffer *rb;
	struct bpf_link **links;
	int *pfds;
	int ncpus;
	unsigned int freq_hz;
	const char *cpu_event;
	kernel_sample_fn fn;
	void *ctx;
	__u32 *cpu_pids; /* -p targets, whose threads' CPU time is read at the start */
	size_t cpu_npids;
	/* the current consume round: records left, and when it must end */
	unsigned int round_left;
	__u64 round_ns, round_end_ns; /* end 0: set by the round's first record */
	bool round_over;
	/* jw_methods entries put there per process, so a registration scans only for its own */
	struct jw_count {
		__u32 tgid, n;
	} *jw_counts;
	size_t n_jw_counts, cap_jw_counts;
	__u32 jw_gen; /* the last jw_methods entry's generation (see jwalk.bpf.h) */
	/* processes that exited (JP_EV_EXIT) or exec'd (JP_EV_EXEC), until take_exits */
	struct ks_proc_event exits[KS_EXITS_MAX];
	size_t nexits;
	__u64 exits_dropped;
	struct ks_agg *agg; /* --aggregate (session_agg.c); NULL: off */
	bool sampling_stopped;
};

/* session_agg.c: the in-kernel counts. Before load: map sizes, rodata; 0 or -errno */
int ks_agg_configure(struct kernel_session *s, const struct kernel_opts *o);
void ks_agg_free(struct ks_agg *a); /* NULL-safe */
/* a full record that carries its stack's hash (s->agg set) */
void ks_agg_learn(struct kernel_session *s, const struct jp_sample *smp, const __u64 *kstack,
		  const __u64 *ustack);
/* BPF asked for a drain (JP_EV_AGG_FILL) */
void ks_agg_fill(struct kernel_session *s);
/*
 * The closed slots' counts (all: every one, the sampler stopped) replayed through s->fn,
 * once a slot unless asked; 0 or -errno (the callback's)
 */
int ks_agg_drain(struct kernel_session *s, bool all);
void ks_agg_stats(const struct kernel_session *s, struct ks_agg_stats *ret);
/* the slots' phase (kernel_session__agg_clock) */
void ks_agg_clock(struct kernel_session *s, __u64 mono0_ns);

#endif /* JPROF_KERNEL_SESSION_INT_H */

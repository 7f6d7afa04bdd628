/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_opts.h: the agent's options, as -agentpath:...=OPTIONS and each attach give them
 * ("signo=N,depth=N,ring=KB,dir=PATH,lock,alloc[=BYTES],live,trace=P|P,...").
 */
#ifndef JPROF_AGENT_OPTS_H
#define JPROF_AGENT_OPTS_H

#include <linux/types.h>

#include "ring.h"

struct jpa_opts {
	int signo;
	__u32 depth;
	__u32 ring_bytes;
	int recompile; /* on attach: have all compiled code recompiled (see jpa_recompile) */
	int nofallback; /* AGCT alone: no fallback walk where it fails */
	int perfmap; /* write /tmp/perf-<pid>.map for other tools */
	__u32 testfault; /* tests only: every Nth walk faults on purpose */
	unsigned int events; /* JPA_EV_*: lock, alloc, live */
	char trace[JP_MT_PATTERNS_MAX + 1]; /* trace=P1|P2: start a method trace (trace.c) */
	__u32 trace_slow_us; /* traceslow=US: slow calls' stacks */
	__u32 trace_args;    /* traceargs=N: their first N arguments kept (--args) */
	__u32 alloc_interval; /* alloc=BYTES: heap sampling interval */
	char dir[256];
};

/* s (NULL: none) into *o, defaults first; -EINVAL, -ERANGE, -E2BIG on a bad one (logged) */
int jpa_parse_options(const char *s, struct jpa_opts *o);

#endif /* JPROF_AGENT_OPTS_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tout.h: jprof trace's slowest calls as files: a flame graph (-o *.html), JFR (-o *.jfr). */
#ifndef JPROF_TRACE_TOUT_H
#define JPROF_TRACE_TOUT_H

#include <linux/types.h>
#include <stddef.h>

struct tstats;

/* the traced JVMs: each one's pid, its statistics and its main class ("" unknown) */
struct tout_jvm {
	__u32 pid;
	const struct tstats *s;
	const char *main;
};

/*
 * The slowest calls kept (--top, their stacks with --slow) as a flame graph weighted by
 * their durations, through the profile writers' HTML; a root per JVM when there are
 * several (nj > 1). t0_ns: the trace's start (CLOCK_MONOTONIC). 0 or an exit code, said.
 */
int tout_write_flame(const char *path, const struct tout_jvm *jv, size_t nj, __u64 t0_ns);

/*
 * The same calls as one JFR chunk: a jdk.MethodTrace event each (out/jfr.h: the JDK 25
 * fields, jprof's split), its thread and stack, at its own time. 0 or an exit code, said.
 */
int tout_write_jfr(const char *path, const struct tout_jvm *jv, size_t nj, __u64 t0_ns);

#endif /* JPROF_TRACE_TOUT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tstats.h: jprof trace's per-method statistics (every call in a log-linear histogram) and outputs. */
#ifndef JPROF_TRACE_TSTATS_H
#define JPROF_TRACE_TSTATS_H

#include <linux/types.h>
#include <stddef.h>
#include <stdio.h>

#define TSTATS_METHODS_MAX 512u /* the agent's table (ring.h JP_MT_METHODS_MAX) */
#define TSTATS_SLOWEST_MAX 100u

struct tstats;

/* slowest: how many slowest calls to keep (<= TSTATS_SLOWEST_MAX). NULL + errno */
struct tstats *tstats__new(unsigned int slowest);
void tstats__free(struct tstats *s); /* NULL-safe */
/* the slowest list keeps only calls at least this long (--slow) */
void tstats__set_slow(struct tstats *s, __u64 min_ns);
/* one call of method id; -EINVAL for an id out of range, -ENOMEM (the call is counted lost) */
int tstats__add(struct tstats *s, unsigned int id, __u32 tid, __u64 start_ns, __u64 dur_ns,
		int thrown);
/* the method's name and, when refused, why (copied; NULL why: traced) */
int tstats__name(struct tstats *s, unsigned int id, const char *name, const char *why);
/* calls of id and the duration at quantile q (0..1) from the histogram: within 1/128 of it */
__u64 tstats__calls(const struct tstats *s, unsigned int id);
__u64 tstats__quantile(const struct tstats *s, unsigned int id, double q);
/* the tid of the i-th slowest call: 0, or -ENOENT past the last */
int tstats__slow_tid(const struct tstats *s, unsigned int i, __u32 *ret);
/*
 * the Java stack (frames[0] the traced method, its callers after it; copied) of the slow
 * call of method id on tid that began at start_ns, if it is among the slowest kept: 1 set,
 * 0 not kept, -ENOMEM
 */
int tstats__set_stack(struct tstats *s, unsigned int id, __u32 tid, __u64 start_ns,
		      const char *const *frames, unsigned int n);
/* the same call's arguments in words (--args: "#0 7, #2 \"abc\""; copied): 1 set, 0, -ENOMEM */
int tstats__set_args(struct tstats *s, unsigned int id, __u32 tid, __u64 start_ns,
		     const char *args);
/* a thread's name for the slowest calls (copied), by tid */
int tstats__thread(struct tstats *s, __u32 tid, const char *name);

struct tsplit_res;

/* the i-th slowest call kept (longest first): 0, or -ENOENT past the last */
struct tstats_call {
	unsigned int id;
	__u32 tid;
	__u64 start_ns, dur_ns;
	int has_split;
};
int tstats__slow_at(const struct tstats *s, unsigned int i, struct tstats_call *ret);
/* the i-th slowest call's split (copied): 0, -ENOENT, -ENOMEM */
int tstats__set_split(struct tstats *s, unsigned int i, const struct tsplit_res *r);
/* the i-th slowest call's split to amend (its GC pauses), NULL when it has none */
struct tsplit_res *tstats__split(struct tstats *s, unsigned int i);

struct profile;
/*
 * The slowest calls kept as a flame graph's stacks, weighted by their durations (ns): root
 * first `root` (NULL none, e.g. "JVM 42"), the thread's name (or tid), then the call's Java
 * stack from main down to the traced method (the method alone when its stack was not
 * taken). The agent's frames carry no tier: they are added as JIT frames. 0 or -errno.
 */
int tstats__add_slow_stacks(const struct tstats *s, const char *root, struct profile *p);

struct model;
struct out_method_trace;
/*
 * The slowest calls kept as JFR method-trace events (out/jfr.h), appended to ev[*n..cap):
 * each call's thread (pid, "java", main class, its tid and name) and stack (the traced method with its
 * descriptor, then its callers; the method alone when its stack was not taken) interned
 * in m, its start from t0_ns (CLOCK_MONOTONIC), its split as its numbers and two lines
 * (strings interned in m). 0, -ENOMEM, -ENOSPC when ev is full.
 */
int tstats__add_slow_events(const struct tstats *s, __u32 pid, const char *main, __u64 t0_ns,
			    struct model *m, struct out_method_trace *ev, size_t cap, size_t *n);

struct tstats_totals {
	__u64 dropped, lost_depth, unmatched, classes_failed, retransform_failed, cost_ns;
	const char *stopped; /* why the trace ended, one phrase */
	double seconds;
	__u32 pid; /* when set: the JVM's, said first (one of several traced) */
};
/* the table (methods with calls, refused ones with their reason) and the slowest calls */
void tstats__write_text(const struct tstats *s, const struct tstats_totals *t, FILE *f);
/* the same as one JSON object */
void tstats__write_json(const struct tstats *s, const struct tstats_totals *t, FILE *f);

#endif /* JPROF_TRACE_TSTATS_H */

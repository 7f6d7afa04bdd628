/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * jwalk.h: the BPF Java walk's frames (jprof.h, --java-walk shadow) named and checked
 * against the agent's own walk of the same sample, one JVM at a time.
 */
#ifndef JPROF_JWALK_H
#define JPROF_JWALK_H

#include <linux/types.h>
#include <stdbool.h>

#include "jprof.h"
#include "jvm/agent_ring.h"

/* jp_sample.jstack_err from JP_JW_BAD_ANCHOR (-11) to JP_JW_DEPTH (2): index err + JW_END_BIAS */
#define JW_END_BIAS 11
#define JW_ENDS	    14

struct jwalk_stats {
	__u64 walked;	      /* samples BPF walked (jstack_err set) */
	__u64 ends[JW_ENDS];  /* by how the walk ended */
	__u64 compared;	      /* whole walks next to a trace of frames */
	__u64 agree;	      /* ... the same methods in the same order */
	__u64 learned;	      /* ... of which named an interpreted frame's Method* first */
	__u64 leaf_inlining;  /* ... the same but for the inlining at the interrupted pc */
	/*
	 * ... BPF's top frame a method in its prologue, the rest the same as the agent's: its
	 * walk drops the callee whose frame is not made yet (agent stacks.c's fallback)
	 */
	__u64 prologue;
	__u64 differ;	      /* ... another stack */
	__u64 differ_length;  /* ... of those: the same frames as far as the shorter goes */
	__u64 unnamed;	      /* a compiled pc in no known blob: not compared */
	__u64 no_trace;	      /* the agent's trace had no frames: not compared */
	__u64 methods;	      /* Method* learned (held; budget JWALK_MAX_METHODS) */
	__u64 unlearned;      /* ... forgotten: a learned Method* named another method */
	__u64 named;	      /* samples not signalled, their stack named from BPF's frames */
	__u64 stub_fp;	      /* compared walks that passed a stub by its rbp frame */
	__u64 stub_fp_differ; /* ... of those that differ */
	__u64 mh;	      /* compared walks that passed a method handle intrinsic */
	__u64 mh_differ;      /* ... of those that differ */
	__u64 c2i;	      /* compared walks that passed a C2I adapter at the top */
	__u64 c2i_differ;     /* ... of those that differ */
};

/* a Method* of JVM pid was learned (known) or forgotten: BPF's jw_methods follows */
typedef void (*jwalk_method_fn)(void *ctx, __u32 pid, __u64 method, bool known);

struct jwalk;

struct jwalk *jwalk__new(__u32 pid, jwalk_method_fn fn, void *ctx);
void jwalk__free(struct jwalk *w); /* NULL-safe */
/*
 * One sample with BPF's frames f (s->jstack_len of them, s->jstack_err) and the agent's
 * trace tr of the same request: named by a's dictionary (compiled pcs) and by what earlier
 * agreeing samples taught (an interpreted frame's Method* is the trace's method at the
 * same place), compared, counted.
 */
void jwalk__compare(struct jwalk *w, struct jvm_agent *a, const struct jp_sample *s,
		    const struct jp_jframe *f, const struct java_trace *tr);
/*
 * A sample BPF walked and did not signal (JP_SF_JWALK): its Java stack from BPF's frames,
 * into *ret (frames valid until the next call). 0, or -ENOENT when a frame cannot be
 * named (yet: the dictionary may name it later).
 */
int jwalk__trace(struct jwalk *w, struct jvm_agent *a, const struct jp_sample *s,
		 const struct jp_jframe *f, struct java_trace *ret);
/*
 * The same as far as it can be named, for a sample that can wait no longer: a frame that
 * cannot be named (a Method* not learned, a pc the dictionary lacks, or no agent: a NULL)
 * has method_id 0 and bci -2 - its index in f. 0 and *ret (*ret_unknown: frames so left),
 * or -EINVAL (not whole).
 */
int jwalk__trace_partial(struct jwalk *w, struct jvm_agent *a, const struct jp_sample *s,
			 const struct jp_jframe *f, struct java_trace *ret, int *ret_unknown);
/* what naming learned so far (Method*s held, dictionary-independent): a retry's trigger */
__u64 jwalk__learned(const struct jwalk *w);
void jwalk__stats(const struct jwalk *w, struct jwalk_stats *ret);
/* "entry frame", "outside the code cache", ... for an index of ends[] */
const char *jwalk_end_str(int idx);

#endif /* JPROF_JWALK_H */

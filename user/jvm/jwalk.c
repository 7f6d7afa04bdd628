/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* jwalk.c: BPF's Java frames named, and compared with the agent's walk of the same sample. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jwalk.h"
#include "ring.h"
#include "log.h"

/*
 * Method* -> jmethodID, learned from samples where both walks agree but for interpreted
 * frames not named yet. Open addressing, a fixed budget: a JVM cannot make jprof hold
 * more than JWALK_MAX_METHODS entries (256 KiB; the BPF map holds 65,536 for all JVMs).
 */
#define JWALK_MAX_METHODS 16384
#define JWALK_MAX_EXPANDED 2048 /* Java frames of one sample, inlined ones included (AGCT: the same) */
#define JWALK_SHOW_DIFFS   5	/* the first few differences, with -v */

struct jw_method {
	__u64 mptr; /* 0: empty */
	__u64 mid;
};

struct jwalk {
	struct jw_method *m;
	size_t n, cap;
	struct jwalk_stats st;
	__u32 pid;
	jwalk_method_fn method_fn;
	void *fn_ctx;
	__s32 exp_bci[JWALK_MAX_EXPANDED];
	struct java_frame tr[JWALK_MAX_EXPANDED]; /* a stack named for jwalk__trace */
	__u64 exp_mid[JWALK_MAX_EXPANDED];  /* this sample's frames: the method, 0 unknown */
	__u64 exp_mptr[JWALK_MAX_EXPANDED]; /* an interpreted frame's Method*, else 0 */
	int leaf_chain; /* frames in the leaf's inline chain, 0: not compiled */
	__u8 exp_root[JWALK_MAX_EXPANDED]; /* 1: a compiled frame's own method (not inlined) */
};

struct jwalk *jwalk__new(__u32 pid, jwalk_method_fn fn, void *ctx)
{
	struct jwalk *w = calloc(1, sizeof(struct jwalk));

	if (w) {
		w->pid = pid;
		w->method_fn = fn;
		w->fn_ctx = ctx;
	}
	return w;
}

void jwalk__free(struct jwalk *w)
{
	if (!w)
		return;
	free(w->m);
	free(w);
}

static size_t m_hash(__u64 k)
{
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k ^ (k >> 29));
}

static struct jw_method *m_slot(struct jw_method *m, size_t cap, __u64 mptr)
{
	if (!cap)
		return NULL;
	for (size_t i = m_hash(mptr) & (cap - 1);; i = (i + 1) & (cap - 1)) {
		if (!m[i].mptr || m[i].mptr == mptr)
			return &m[i];
	}
}

/* forgets mptr (a frame named by it disagreed: the method may have been freed, its
 * memory reused), here and in BPF */
static void m_del(struct jwalk *w, __u64 mptr)
{
	struct jw_method *e = m_slot(w->m, w->cap, mptr);
	size_t i, j;

	if (!e || !e->mptr)
		return;
	if (w->method_fn)
		w->method_fn(w->fn_ctx, w->pid, mptr, false);
	/* backward-shift deletion keeps every probe chain whole */
	i = (size_t)(e - w->m);
	for (j = (i + 1) & (w->cap - 1); w->m[j].mptr; j = (j + 1) & (w->cap - 1)) {
		size_t h = m_hash(w->m[j].mptr) & (w->cap - 1);

		if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
			w->m[i] = w->m[j];
			i = j;
		}
	}
	w->m[i].mptr = 0;
	w->n--;
	w->st.methods = w->n;
}

static __u64 m_get(const struct jwalk *w, __u64 mptr)
{
	struct jw_method *e = m_slot(w->m, w->cap, mptr);

	return e && e->mptr ? e->mid : 0;
}

static int m_put(struct jwalk *w, __u64 mptr, __u64 mid)
{
	struct jw_method *e;

	if ((w->n + 1) * 2 > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;
		struct jw_method *m;

		if (w->n >= JWALK_MAX_METHODS)
			return -ENOSPC;
		m = calloc(cap, sizeof(*m));
		if (!m)
			return -ENOMEM;
		for (size_t i = 0; i < w->cap; i++) {
			if (w->m[i].mptr)
				*m_slot(m, cap, w->m[i].mptr) = w->m[i];
		}
		free(w->m);
		w->m = m;
		w->cap = cap;
	}
	e = m_slot(w->m, w->cap, mptr);
	if (!e->mptr)
		w->n++;
	e->mptr = mptr;
	e->mid = mid;
	if (w->method_fn)
		w->method_fn(w->fn_ctx, w->pid, mptr, true);
	return 0;
}

/* an interpreted frame's bci: -3 a native method's, -1 none */
static __s32 jframe_bci(const struct jp_jframe *f)
{
	if (f->pc == JP_JFRAME_NATIVE_BCI)
		return -3;
	return f->pc > 0xffff ? -1 : (__s32)f->pc;
}

/* the kind of a frame named with bci as AGCT's frames are (agent_ring.c: -3 native) */
static enum jp_frame_kind jframe_kind(__s32 bci, bool interp, bool root)
{
	if (bci == -3)
		return JP_FK_NATIVE;
	return interp ? JP_FK_INTERP : root ? JP_FK_JIT : JP_FK_INLINED;
}

/*
 * BPF's frames, each compiled one as its inline chain: into exp_*; -1 when one is unnamed.
 * prologue: the top frame's pc is in its method's prologue: that method alone (nothing
 * inlined runs there yet)
 */
static int expand(struct jwalk *w, struct jvm_agent *a, const struct jp_jframe *f, __u32 nf,
		  bool prologue, bool at_call)
{
	int n = 0;

	w->leaf_chain = 0;
	/* exp_root is written with each frame below, not cleared whole (2 KiB a sample) */
	for (__u32 k = 0; k < nf; k++) {
		const __u64 *chain;
		const __s32 *bci;
		int c;

		if (f[k].method) {
			if (n >= JWALK_MAX_EXPANDED)
				return n;
			w->exp_mptr[n] = f[k].method;
			w->exp_bci[n] = jframe_bci(&f[k]);
			w->exp_root[n] = 0;
			w->exp_mid[n++] = m_get(w, f[k].method);
			continue;
		}
		c = jvm_agent__pc_chain(a, f[k].pc & ~JP_JFRAME_NATIVE, k == 0 && !at_call, &chain,
					&bci);
		if (c <= 0)
			return -1;
		/* a native method's wrapper: the method alone, as AGCT gives it (bci -3) */
		if ((f[k].pc & JP_JFRAME_NATIVE) || (k == 0 && prologue)) {
			if (n >= JWALK_MAX_EXPANDED)
				return n;
			w->exp_mptr[n] = 0;
			w->exp_bci[n] = (f[k].pc & JP_JFRAME_NATIVE) ? -3 : 0;
			w->exp_root[n] = 1;
			w->exp_mid[n++] = chain[c - 1];
			continue;
		}
		if (k == 0)
			w->leaf_chain = c;
		for (int i = 0; i < c && n < JWALK_MAX_EXPANDED; i++) {
			w->exp_mptr[n] = 0;
			w->exp_bci[n] = bci[i];
			w->exp_root[n] = 0;
			w->exp_mid[n++] = chain[i];
		}
		/* the compiled method itself: its inline chain's last entry */
		if (n > 0)
			w->exp_root[n - 1] = 1;
	}
	return n;
}

static void show_diff(struct jwalk *w, struct jvm_agent *a, const struct java_trace *tr, int n,
		      int at, __u32 flags)
{
	pr_debug("java walk: BPF's stack (%d frames%s%s%s%s) differs from the agent's (%d) at "
		 "frame %d (pc %#llx%s):",
		 n, (flags & JP_SF_STUB_FP) ? ", past a stub's rbp frame" : "",
		 (flags & JP_SF_ANCHOR) ? ", from the frame anchor" : "",
		 (flags & JP_SF_PROLOGUE) ? ", from a prologue"
		 : (flags & JP_SF_C2I)	  ? ", past a C2I adapter"
					  : "",
		 (flags & JP_SF_FP_CHAIN) ? ", from native frame pointers"
		 : (flags & JP_SF_AT_CALL) && !(flags & JP_SF_ANCHOR) ? ", from below a stub"
								      : "",
		 tr->num_frames, at, (unsigned long long)tr->pc,
		 (tr->flags & JP_TRACE_F_FALLBACK) ? ", the agent's fallback walk" : "");
	for (int i = 0; i < n || i < tr->num_frames; i++) {
		const char *b = i < n && w->exp_mid[i]
					? jvm_agent__method_name(a, w->exp_mid[i], 0)
					: (i < n ? "(interpreted, not named yet)" : "-");
		const char *t = i < tr->num_frames
					? jvm_agent__method_name(a, tr->frames[i].method_id, 0)
					: "-";

		pr_debug("  %3d %c %s | %s", i, i == at ? '*' : ' ', b ? b : "?", t ? t : "?");
		if (i > at + 3)
			break;
	}
}

/*
 * The same stack but for the inlined frames at the interrupted pc: one walk has d more
 * of them on top (d below the depth of the leaf's inline chain). HotSpot records pcs
 * without a scope that its CompiledMethodLoad event leaves out, and at some pcs AGCT names
 * a shallower or deeper scope than the table's next recorded pc has.
 */
static bool leaf_inlining_only(const struct jwalk *w, const struct jp_jframe *f, int n,
			       const struct java_trace *tr)
{
	int m = tr->num_frames;

	if (f[0].method || !w->leaf_chain)
		return false;
	for (int d = 1; d <= w->leaf_chain; d++) {
		bool same = true;

		if (n - d == m) { /* BPF's has d more */
			for (int i = d; i < n && same; i++)
				same = !w->exp_mid[i] || w->exp_mid[i] == tr->frames[i - d].method_id;
		} else if (m - d == n) { /* the agent's has d more */
			for (int i = 0; i < n && same; i++)
				same = !w->exp_mid[i] || w->exp_mid[i] == tr->frames[i + d].method_id;
		} else {
			continue;
		}
		if (same)
			return true;
	}
	return false;
}

/*
 * BPF's walk from a prologue against the agent's, which drops the callee (its fallback
 * asks AGCT again from the return address, as a top frame: the scope after the call, maybe
 * a few inlined frames deeper or shallower): the same below the callee, aligned at the
 * bottom, the agent's top within JWALK_PROLOGUE_SLACK frames of BPF's caller frames
 */
#define JWALK_PROLOGUE_SLACK 4
static bool prologue_only(const struct jwalk *w, int n, const struct java_trace *tr)
{
	int m = tr->num_frames, k = n - 1, d = m - k, same = 0;

	if (k < 1 || d > JWALK_PROLOGUE_SLACK || d < -JWALK_PROLOGUE_SLACK)
		return false;
	/* the frames both have, from the bottom up: all but the top few of the shorter */
	while (same < k && same < m &&
	       (!w->exp_mid[n - 1 - same] ||
		w->exp_mid[n - 1 - same] == tr->frames[m - 1 - same].method_id))
		same++;
	return same >= (k < m ? k : m) - JWALK_PROLOGUE_SLACK && same > 0;
}

void jwalk__compare(struct jwalk *w, struct jvm_agent *a, const struct jp_sample *s,
		    const struct jp_jframe *f, const struct java_trace *tr)
{
	int n, m, at = -1, idx = s->jstack_err + JW_END_BIAS;
	bool taught = false;

	if (!w || !s->jstack_err)
		return;
	w->st.walked++;
	if (idx >= 0 && idx < JW_ENDS)
		w->st.ends[idx]++;
	if (s->jstack_err < 0)
		return;
	if (tr->num_frames <= 0) {
		w->st.no_trace++;
		return;
	}
	n = expand(w, a, f, s->jstack_len, s->flags & JP_SF_PROLOGUE, s->flags & JP_SF_AT_CALL);
	if (n < 0) {
		w->st.unnamed++;
		return;
	}
	w->st.compared++;
	w->st.stub_fp += !!(s->flags & JP_SF_STUB_FP);
	w->st.mh += !!(s->flags & JP_SF_MH_INTRINSIC);
	w->st.c2i += !!(s->flags & JP_SF_C2I);
	m = tr->num_frames;
	for (int i = 0; i < n && i < m; i++) {
		if (w->exp_mid[i] && w->exp_mid[i] != tr->frames[i].method_id) {
			at = i;
			break;
		}
	}
	/* a whole walk has the trace's length; one cut at JP_MAX_JFRAMES is a prefix */
	if (at < 0 && (s->jstack_err == JP_JW_ENTRY ? n != m : n > m)) {
		at = n < m ? n : m;
		w->st.differ_length++;
	}
	if (at >= 0 && leaf_inlining_only(w, f, n, tr)) {
		w->st.leaf_inlining++;
		return;
	}
	if (at >= 0 && (s->flags & JP_SF_PROLOGUE) && prologue_only(w, n, tr)) {
		w->st.prologue++;
		return;
	}
	if (at >= 0) {
		w->st.stub_fp_differ += !!(s->flags & JP_SF_STUB_FP);
		w->st.mh_differ += !!(s->flags & JP_SF_MH_INTRINSIC);
		w->st.c2i_differ += !!(s->flags & JP_SF_C2I);
		if (w->st.differ++ < JWALK_SHOW_DIFFS)
			show_diff(w, a, tr, n, at, s->flags);
		/* a Method* named from earlier samples that names another method now */
		if (at < n && w->exp_mptr[at] && w->exp_mid[at]) {
			m_del(w, w->exp_mptr[at]);
			w->st.unlearned++;
		}
		return;
	}
	w->st.agree++;
	for (int i = 0; i < n; i++) {
		if (w->exp_mid[i] || !w->exp_mptr[i])
			continue;
		if (!m_put(w, w->exp_mptr[i], tr->frames[i].method_id))
			w->st.methods = w->n;
		taught = true;
	}
	if (taught)
		w->st.learned++;
}

int jwalk__trace(struct jwalk *w, struct jvm_agent *a, const struct jp_sample *s,
		 const struct jp_jframe *f, struct java_trace *ret)
{
	int n;

	if (!w || s->jstack_err != JP_JW_ENTRY || !s->jstack_len)
		return -EINVAL;
	n = expand(w, a, f, s->jstack_len, s->flags & JP_SF_PROLOGUE, s->flags & JP_SF_AT_CALL);
	if (n <= 0)
		return -ENOENT;
	for (int i = 0; i < n; i++) {
		/* BPF knew the Method*, we no longer do (unlearned since): not named */
		if (!w->exp_mid[i])
			return -ENOENT;
		w->tr[i] = (struct java_frame){
			.method_id = w->exp_mid[i],
			.bci = w->exp_bci[i],
			.kind = jframe_kind(w->exp_bci[i], w->exp_mptr[i], w->exp_root[i]),
		};
	}
	*ret = (struct java_trace){ .time_ns = s->time_ns, .num_frames = n, .frames = w->tr };
	w->st.named++;
	return 0;
}

int jwalk__trace_partial(struct jwalk *w, struct jvm_agent *a, const struct jp_sample *s,
			 const struct jp_jframe *f, struct java_trace *ret, int *ret_unknown)
{
	int n = 0, unknown = 0;

	if (!w || s->jstack_err != JP_JW_ENTRY || !s->jstack_len)
		return -EINVAL;
	for (__u32 k = 0; k < s->jstack_len && n < JWALK_MAX_EXPANDED; k++) {
		const __u64 *chain;
		const __s32 *bci;
		int c = 0;

		if (f[k].method) {
			__u64 mid = m_get(w, f[k].method);

			unknown += !mid;
			w->tr[n++] = (struct java_frame){
				.method_id = mid,
				.bci = !mid ? -2 - (__s32)k : jframe_bci(&f[k]),
				.kind = jframe_kind(jframe_bci(&f[k]), true, false),
			};
			continue;
		}
		if (a)
			c = jvm_agent__pc_chain(a, f[k].pc & ~JP_JFRAME_NATIVE,
						k == 0 && !(s->flags & JP_SF_AT_CALL), &chain, &bci);
		if (c <= 0) {
			unknown++;
			w->tr[n++] = (struct java_frame){
				.bci = -2 - (__s32)k,
				.kind = (f[k].pc & JP_JFRAME_NATIVE) ? JP_FK_NATIVE : JP_FK_JIT,
			};
			continue;
		}
		if (f[k].pc & JP_JFRAME_NATIVE) {
			w->tr[n++] = (struct java_frame){
				.method_id = chain[c - 1],
				.bci = -3,
				.kind = JP_FK_NATIVE,
			};
			continue;
		}
		for (int i = 0; i < c && n < JWALK_MAX_EXPANDED; i++)
			w->tr[n++] = (struct java_frame){
				.method_id = chain[i],
				.bci = bci[i],
				.kind = i == c - 1 ? JP_FK_JIT : JP_FK_INLINED,
			};
	}
	*ret = (struct java_trace){ .time_ns = s->time_ns, .num_frames = n, .frames = w->tr };
	*ret_unknown = unknown;
	return 0;
}

__u64 jwalk__learned(const struct jwalk *w)
{
	return w ? w->st.learned + w->st.unlearned : 0;
}

void jwalk__stats(const struct jwalk *w, struct jwalk_stats *ret)
{
	if (w)
		*ret = w->st;
	else
		memset(ret, 0, sizeof(*ret));
}

const char *jwalk_end_str(int idx)
{
	static const char *const names[JW_ENDS] = {
		[JP_JW_BAD_ANCHOR + JW_END_BIAS] = "frame anchor did not check out",
		[JP_JW_NO_ANCHOR + JW_END_BIAS] = "no last Java frame",
		[JP_JW_IN_JAVA + JW_END_BIAS] = "outside the code cache in Java state",
		[JP_JW_NO_THREAD + JW_END_BIAS] = "thread not known",
		[JP_JW_NO_REGS + JW_END_BIAS] = "no user registers",
		[JP_JW_LOST + JW_END_BIAS] = "return address outside the code",
		[JP_JW_BAD_FRAME + JW_END_BIAS] = "frame did not check out",
		[JP_JW_READ + JW_END_BIAS] = "unreadable",
		[JP_JW_STUB + JW_END_BIAS] = "in a stub",
		[JP_JW_PROLOGUE + JW_END_BIAS] = "in a prologue",
		[JP_JW_NOT_CODE + JW_END_BIAS] = "outside the code cache",
		[JW_END_BIAS] = "?",
		[JP_JW_ENTRY + JW_END_BIAS] = "whole stack",
		[JP_JW_DEPTH + JW_END_BIAS] = "depth limit",
	};

	return idx >= 0 && idx < JW_ENDS && names[idx] ? names[idx] : "?";
}

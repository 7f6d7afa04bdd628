// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vmnames_cmp.c: --java-walk shadow for the names read from a JVM's memory: a sample BPF
 * walked whole and the agent traced, its frames named from memory (each compiled frame
 * with the methods inlined at its pc) against the agent's names of its own trace.
 */
#include <string.h>

#include "jvm/agent_ring.h"
#include "jvm/vmnames_int.h"

/* names[0..n) against the trace's frames from tr[d..]: the same */
static bool same_from(struct jvm_agent *a, const char *const *names, int n,
		      const struct java_trace *tr, int d)
{
	for (int i = 0; i < n; i++) {
		const char *t = jvm_agent__method_name(a, tr->frames[i + d].method_id, 0);

		if (!t || strcmp(t, names[i]))
			return false;
	}
	return true;
}

/*
 * The same but for the inlining at the interrupted pc: one stack has d more frames on top,
 * d within the leaf's inline chain (as jwalk.c's leaf_inlining_only: AGCT may name a
 * shallower or deeper scope there than the next recorded pc has)
 */
static bool leaf_only(struct jvm_agent *a, const char *const *names, int n, int leaf,
		      const struct java_trace *tr)
{
	int m = tr->num_frames;

	for (int d = 1; d <= leaf; d++) {
		if (n - d == m && same_from(a, names + d, m, tr, 0))
			return true;
		if (m - d == n && same_from(a, names, n, tr, d))
			return true;
	}
	return false;
}

/*
 * compiled frame f named from memory (names[0..c)) against the agent's code records: false
 * when they name it otherwise (not when they do not know it)
 */
static bool frame_vs_records(struct vmnames *v, struct jvm_agent *a, const struct jp_jframe *f,
			     enum vmnames_at at, const char *const *names, int c)
{
	__u64 ids[VMNAMES_MAX_CHAIN];
	const __u64 *chain;
	const __s32 *bci;
	int n = jvm_agent__pc_chain(a, f->pc, at == VMN_AT_TOP, &chain, &bci);

	/* code the agent does not know (yet): not compared */
	if (n <= 0 || n > VMNAMES_MAX_CHAIN)
		return true;
	memcpy(ids, chain, (size_t)n * sizeof(*ids)); /* valid until the next call into a */
	v->st.cmp_frames++;
	if (n != c)
		return false;
	for (int i = 0; i < n; i++) {
		const char *t = jvm_agent__method_name(a, ids[i], 0);

		if (!t || strcmp(t, names[i]))
			return false;
	}
	v->st.cmp_frames_same++;
	return true;
}

void vmnames__compare(struct vmnames *v, struct jvm_agent *a, const struct jp_sample *s,
		      const struct jp_jframe *f, const struct java_trace *tr)
{
	const char *chain[VMNAMES_MAX_CHAIN];
	int n = 0, nr = 0, leaf = 0;
	bool rec_same = true;

	/* whole walks only; from a prologue the agent's walk drops the callee (jwalk.c) */
	if (!v || !a || s->jstack_err != JP_JW_ENTRY || !s->jstack_len || tr->num_frames <= 0 ||
	    (s->flags & JP_SF_PROLOGUE))
		return;
	vmnames__sample(v);
	for (__u32 k = 0; k < s->jstack_len; k++) {
		enum vmnames_at at =
			k == 0 && !(s->flags & JP_SF_AT_CALL) ? VMN_AT_TOP : VMN_AT_RET;
		int c = vmnames__frames(v, &f[k], at, chain, VMNAMES_MAX_CHAIN);

		if (c <= 0) {
			v->st.cmp_unnamed++;
			return;
		}
		if (!f[k].method && !(f[k].pc & JP_JFRAME_NATIVE)) {
			rec_same &= frame_vs_records(v, a, &f[k], at, chain, c);
			if (k == 0)
				leaf = c;
		}
		for (int i = 0; i < c && n < VN_CMP_MAX; i++)
			v->cmp_all[n++] = chain[i];
		if (nr < VN_CMP_MAX)
			v->cmp_roots[nr++] = chain[c - 1];
	}
	v->st.cmp++;
	v->st.cmp_rec_same += rec_same;
	if (n == tr->num_frames && same_from(a, v->cmp_all, n, tr, 0))
		v->st.cmp_same++;
	else if (leaf && leaf_only(a, v->cmp_all, n, leaf, tr))
		v->st.cmp_leaf++;
	else
		v->st.cmp_differ++;
	if (nr == tr->num_frames && same_from(a, v->cmp_roots, nr, tr, 0))
		v->st.cmp_roots_same++;
}

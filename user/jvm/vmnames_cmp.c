// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vmnames_cmp.c: --java-walk shadow for the names read from a JVM's memory: a sample BPF
 * walked whole and the agent traced, its frames named from memory (each compiled frame
 * with the methods inlined at its pc) against the agent's names of its own trace.
 */
#include <stdlib.h>
#include <string.h>

#include "jvm/agent_ring.h"
#include "jvm/vmnames_int.h"
#include "ring.h"

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

/*
 * JPROF_SHADOW_DUMP=FILE: every compared stack that is not identical, in full: BPF's
 * frames named from memory and by the agent's code records, the PcDescs around the
 * interrupted pc, and the agent's trace (a debugging aid: how the differences come about)
 */
static FILE *dump_out(void)
{
	static FILE *out;
	static bool opened;

	if (!opened) {
		const char *p = getenv("JPROF_SHADOW_DUMP");

		opened = true;
		if (p && *p)
			out = fopen(p, "we");
	}
	return out;
}

static void dump(struct vmnames *v, struct jvm_agent *a, const struct jp_sample *s,
		 const struct jp_jframe *f, const struct java_trace *tr, const char *verdict)
{
	FILE *out = dump_out();
	const char *names[VMNAMES_MAX_CHAIN];

	if (!out)
		return;
	fprintf(out, "%s pid %u tid %u flags %#x err %d agent pc %#llx%s frames %u/%d\n", verdict,
		s->pid, s->tid, s->flags, s->jstack_err, (unsigned long long)tr->pc,
		(tr->flags & JP_TRACE_F_FALLBACK) ? " fallback" : "", s->jstack_len,
		tr->num_frames);
	for (__u32 k = 0; k < s->jstack_len; k++) {
		enum vmnames_at at =
			k == 0 && !(s->flags & JP_SF_AT_CALL) ? VMN_AT_TOP : VMN_AT_RET;
		__u64 pc = f[k].pc & ~JP_JFRAME_NATIVE, m = 0, ids[VMNAMES_MAX_CHAIN];
		const __u64 *chain;
		const __s32 *bci;
		__s32 bcis[VMNAMES_MAX_CHAIN];
		int c = vmnames__frames(v, &f[k], at, names, VMNAMES_MAX_CHAIN), r;

		if (f[k].method) {
			fprintf(out, "  bpf %2u interpreted bci %llu: %s\n", k,
				(unsigned long long)f[k].pc, c > 0 ? names[0] : "?");
			continue;
		}
		fprintf(out, "  bpf %2u %s%s %#llx memory:", k, at == VMN_AT_TOP ? "top" : "ret",
			(f[k].pc & JP_JFRAME_NATIVE) ? " native" : "", (unsigned long long)pc);
		for (int i = 0; i < c; i++)
			fprintf(out, " %s", names[i]);
		r = jvm_agent__pc_chain(a, pc, at == VMN_AT_TOP, &chain, &bci);
		if (r > VMNAMES_MAX_CHAIN)
			r = VMNAMES_MAX_CHAIN;
		if (r > 0) {
			memcpy(ids, chain, (size_t)r * sizeof(*ids));
			memcpy(bcis, bci, (size_t)r * sizeof(*bcis));
		}
		fprintf(out, " | records:");
		for (int i = 0; i < r; i++) {
			const char *t = jvm_agent__method_name(a, ids[i], 0);

			fprintf(out, " %s@%d", t ? t : "?", bcis[i]);
		}
		fprintf(out, "\n");
		if (at == VMN_AT_TOP) {
			__u8 code[12] = {0};

			vn_pcdesc_show(v, vn_pc_blob(v, pc, &m), pc, out);
			(void)vn_read(v, pc - 8, code, sizeof(code));
			fprintf(out, "    code at pc - 8:");
			for (size_t i = 0; i < sizeof(code); i++)
				fprintf(out, "%s%02x", i == 8 ? " | " : " ", code[i]);
			fprintf(out, "\n");
		}
	}
	for (int i = 0; i < tr->num_frames; i++) {
		const char *t = jvm_agent__method_name(a, tr->frames[i].method_id, 0);

		fprintf(out, "  agent %2d %s@%d kind %d\n", i, t ? t : "?", tr->frames[i].bci,
			(int)tr->frames[i].kind);
	}
	fflush(out);
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
	if (n == tr->num_frames && same_from(a, v->cmp_all, n, tr, 0)) {
		v->st.cmp_same++;
	} else if (leaf && leaf_only(a, v->cmp_all, n, leaf, tr)) {
		v->st.cmp_leaf++;
		dump(v, a, s, f, tr, "LEAF");
	} else {
		v->st.cmp_differ++;
		dump(v, a, s, f, tr, "DIFFER");
	}
	if (nr == tr->num_frames && same_from(a, v->cmp_roots, nr, tr, 0))
		v->st.cmp_roots_same++;
}

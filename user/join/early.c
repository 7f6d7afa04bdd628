// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * early.c: samples BPF walked whole before their JVM's agent came, held until the agent's
 * dictionary names their frames (or the JVM's memory does, for a JVM without one), then
 * joined; within budgets, counted where they are not. Waiting for traces is wait.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "join/join_int.h"

/*
 * Raw frame k of sample s named from the JVM's memory (e->vn), innermost first into
 * names[VMNAMES_MAX_CHAIN] (NULL: read only, for later): a compiled frame with the methods
 * inlined at its pc, as the agent's walk names them (the interrupted pc's scope for the
 * top frame, the method alone in its prologue). How many, 0 none.
 */
static int mem_frames(struct jvm_ent *e, const struct jp_sample *s, const struct jp_jframe *f,
		      __u32 k, const char **names)
{
	const char *tmp[VMNAMES_MAX_CHAIN];
	enum vmnames_at at = VMN_AT_RET;

	if (k == 0 && (s->flags & JP_SF_PROLOGUE))
		at = VMN_ROOT;
	else if (k == 0 && !(s->flags & JP_SF_AT_CALL))
		at = VMN_AT_TOP;
	return vmnames__frames(e->vn, &f[k], at, names ? names : tmp, VMNAMES_MAX_CHAIN);
}

/*
 * A sample BPF walked whole before the JVM's agent came (its walk published from outside,
 * record/early.c): held, its raw frames named once the agent's dictionary can (jn_early_retry).
 * Over the budgets it is counted and goes as a sample without Java stack.
 */
int jn_early_hold(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e)
{
	size_t cost = pend_cost(s);
	struct pend *p;

	if (e->early_bytes + cost > j->o.early_budget_jvm ||
	    j->early_bytes + cost > j->o.early_budget ||
	    !(p = blk_alloc(&j->blk, cost))) {
		e->early_over += join_sample_count(s);
		j->st.jvm_samples += join_sample_count(s);
		return jn_add_missing(j, s, kstack, ustack, e,
				      e->pending ? MISS_PENDING : MISS_NO_AGENT, 0);
	}
	jn_pend_fill(p, s, kstack, ustack, e, cost);
	dl_add_tail(&e->early, &p->jnode);
	e->early_bytes += cost;
	j->early_bytes += cost;
	e->early_held += join_sample_count(s);
	/* names read now, while the JVM lives: it may be gone when they are wanted */
	vmnames__sample(e->vn);
	if (e->vn && !e->a)
		for (__u32 k = 0; k < s->jstack_len; k++)
			(void)mem_frames(e, s, jframes_of(s, ustack), k, NULL);
	if (!e->jw)
		e->jw = jwalk__new(e->pid, jn_jw_method, j);
	return e->jw ? 0 : -ENOMEM;
}

static void early_free(struct join *j, struct jvm_ent *e, struct pend *p)
{
	dl_del(&p->jnode);
	e->early_bytes -= p->cost;
	j->early_bytes -= p->cost;
	blk_free(&j->blk, p);
}

/* a held sample's start, counted as a JVM's Java sample: its native frames; how many */
static size_t early_begin(struct join *j, struct jvm_ent *e, const struct jp_sample *s,
			  const __u64 *kstack, const __u64 *ustack)
{
	__u64 cnt = join_sample_count(s);
	size_t n = 0;

	j->st.jvm_samples += cnt;
	e->samples += cnt;
	e->java_samples += cnt;
	jn_push_native_part(j, &n, s, kstack, ustack);
	j->java_from = n;
	return n;
}

/*
 * A held sample that waits no longer: its Java frames as far as the agent names them, the
 * others by the names read from the JVM's memory if it can (e->vn), each run of frames
 * neither names as one "[unknown Java]": shown, counted, not dropped
 */
static int early_partial(struct join *j, struct jvm_ent *e, const struct jp_sample *s,
			 const __u64 *kstack, const __u64 *ustack, const struct java_trace *tr)
{
	const struct jp_jframe *raw = jframes_of(s, ustack);
	bool in_unknown = false, whole = true, mem = false;
	size_t n = early_begin(j, e, s, kstack, ustack);
	__u64 cnt = join_sample_count(s);

	vmnames__sample(e->vn);
	for (int f = 0; f < tr->num_frames; f++) {
		const struct java_frame *jf = &tr->frames[f];
		__s32 k = -2 - jf->bci;
		const char *chain[VMNAMES_MAX_CHAIN];
		int c = 0;

		if (jf->method_id && e->a) {
			jn_push_java(j, &n, e, jf);
			in_unknown = false;
			continue;
		}
		if (!jf->method_id && k >= 0 && (__u32)k < s->jstack_len)
			c = mem_frames(e, s, raw, (__u32)k, chain);
		if (c > 0) {
			for (int i = 0; i < c; i++)
				jn_push_java_name(j, &n, chain[i],
						  c > 1 && i < c - 1 ? JP_FK_INLINED : jf->kind);
			in_unknown = false;
			mem = true;
			continue;
		}
		whole = false;
		if (!in_unknown)
			jn_push(j, &n, JOIN_UNKNOWN_JAVA, jf->kind);
		in_unknown = true;
	}
	if (whole && tr->num_frames > 0) {
		e->complete += cnt;
		e->early_mem += mem ? cnt : 0;
		e->early_named += mem ? 0 : cnt;
		j->st.java_complete += cnt;
	} else {
		e->early_unknown += cnt;
	}
	jn_tally_cpu(e, s, whole && tr->num_frames > 0, !(whole && tr->num_frames > 0));
	jn_late_done(j, e);
	return jn_commit(j, s, e, n, NULL);
}

/*
 * A held sample of a JVM without agent, named from its memory (e->vn): each frame by its
 * method, a compiled one with the methods inlined at its pc where its debug info can be
 * read; a run of frames it cannot name is one "[unknown Java]". 1 when every frame was
 * named (a whole Java stack), 0 not.
 */
static int early_from_memory(struct join *j, struct jvm_ent *e, const struct jp_sample *s,
			     const __u64 *kstack, const __u64 *ustack, int *ret_err)
{
	const struct jp_jframe *f = jframes_of(s, ustack);
	bool in_unknown = false, whole = true;
	size_t n = early_begin(j, e, s, kstack, ustack);
	__u64 cnt = join_sample_count(s);

	vmnames__sample(e->vn);
	for (__u32 k = 0; k < s->jstack_len; k++) {
		const char *chain[VMNAMES_MAX_CHAIN];
		int c = mem_frames(e, s, f, k, chain);
		/* a native method's frame (jprof.h JP_JFRAME_NATIVE*): as AGCT's, no suffix */
		enum jp_frame_kind kind = (f[k].pc & JP_JFRAME_NATIVE) ||
							  (f[k].method && f[k].pc == JP_JFRAME_NATIVE_BCI)
						  ? JP_FK_NATIVE
					  : f[k].method ? JP_FK_INTERP
							: JP_FK_JIT;

		if (c > 0) {
			/* a compiled frame's inlined methods first, then its own */
			for (int i = 0; i < c; i++)
				jn_push_java_name(j, &n, chain[i],
						  i < c - 1 ? JP_FK_INLINED : kind);
			in_unknown = false;
		} else {
			whole = false;
			if (!in_unknown)
				jn_push(j, &n, JOIN_UNKNOWN_JAVA, kind);
			in_unknown = true;
		}
	}
	if (whole) {
		e->complete += cnt;
		e->early_mem += cnt;
		j->st.java_complete += cnt;
	} else {
		e->early_unknown += cnt;
	}
	jn_tally_cpu(e, s, whole, !whole);
	*ret_err = jn_commit(j, s, e, n, NULL);
	return whole;
}

/*
 * The held samples, tried again when the agent's dictionary or the Method*s learned from
 * agreeing samples grew since the last try; all: the end (or the JVM's), every one goes,
 * named as far as it can be.
 */
int jn_early_retry(struct join *j, struct jvm_ent *e, bool all)
{
	__u64 dict = e->a ? jn_dict_for(e, &e->early) : 0, learned = jwalk__learned(e->jw);
	struct dl *n = e->early.next;
	int err = 0;

	/* no agent is coming (attach disabled, or not asked): nothing to wait for */
	all = all || (!e->a && !e->pending);
	if (dl_empty(&e->early) ||
	    (!all && (!e->a || (dict == e->early_dict && learned == e->early_methods))))
		return 0;
	e->early_dict = dict;
	e->early_methods = learned;
	while (n != &e->early && !err) {
		struct pend *p = dl_entry(n, struct pend, jnode);
		const __u64 *ustack = p->frames + p->s.kstack_len;
		struct java_trace tr;
		int unknown = 0;

		n = n->next;
		if (e->a && !jwalk__trace(e->jw, e->a, &p->s, jframes_of(&p->s, ustack), &tr)) {
			e->early_named += join_sample_count(&p->s);
			err = jn_finish(j, &p->s, p->frames, ustack, e, &tr);
		} else if (all && !e->a && e->vn) {
			(void)early_from_memory(j, e, &p->s, p->frames, ustack, &err);
		} else if (all) {
			if (jwalk__trace_partial(e->jw, e->a, &p->s, jframes_of(&p->s, ustack), &tr,
						 &unknown))
				tr.num_frames = 0;
			err = early_partial(j, e, &p->s, p->frames, ustack, &tr);
		} else {
			continue;
		}
		early_free(j, e, p);
	}
	return err;
}

void join__early_off(struct join *j, __u32 pid)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (!e)
		return;
	e->early_off = true;
	while (!dl_empty(&e->early)) {
		struct pend *p = dl_entry(e->early.next, struct pend, jnode);

		e->early_dropped += join_sample_count(&p->s);
		j->st.jvm_samples += join_sample_count(&p->s);
		(void)jn_add_missing(j, &p->s, p->frames, p->frames + p->s.kstack_len, e,
				     MISS_EARLY_OFF, 0);
		early_free(j, e, p);
	}
}

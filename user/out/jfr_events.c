// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jfr_events.c: the JFR writer's events: one per row of the model and per pause */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_int.h"

static void ev_begin(struct jfr *x, int type)
{
	x->ev.n = 0;
	jb_varint(&x->ev, (__u64)type);
}

static void ev_end(struct jfr *x)
{
	unsigned char sz[9];
	size_t total, k;

	if (x->ev.err) {
		x->err = x->ev.err;
		return;
	}
	total = jw_event_size(x->ev.n);
	x->ev_bytes += total;
	if (!x->f || x->err)
		return;
	k = jw_varint_enc(sz, total);
	if (fwrite(sz, 1, k, x->f) != k || fwrite(x->ev.p, 1, x->ev.n, x->f) != x->ev.n)
		x->err = errno ? -errno : -EIO;
}

const char *jw_nz(const char *s)
{
	return s ? s : "";
}

/* one jdk.GarbageCollection per pause: each is one pause, so sum and longest are its length */
static void gc_events(struct jfr *x)
{
	for (size_t i = 0; i < x->o->n_gc_pauses && !x->err; i++) {
		const struct out_gc_pause *p = &x->o->gc_pauses[i];
		__u64 d = p->duration_ns < (1ull << 62) ? p->duration_ns : 1ull << 62;
		__u64 t = p->start_ns < (1ull << 62) ? p->start_ns : 1ull << 62;

		ev_begin(x, T_EV_GC);
		jb_varint(&x->ev, JFR_START_TICKS + t);
		jb_long(&x->ev, d);
		jb_int(&x->ev, (__s32)p->gc_id);
		jb_str(&x->ev, jw_nz(p->name));
		jb_str(&x->ev, jw_nz(p->cause));
		jb_long(&x->ev, d);
		jb_long(&x->ev, d);
		jb_int(&x->ev, (__s32)p->pid);
		ev_end(x);
	}
}

/* the method key of a stack's first frame that is no marker (a root); 0 none */
static __u32 leaf_method(struct jfr *x, jp_id stack)
{
	size_t n = 0;
	const jp_id *l = stack ? model__get_stack(x->m, stack, &n) : NULL;

	for (size_t i = 0; l && i < n; i++) {
		const struct jp_location *loc = model__get_location(x->m, l[i]);

		if (loc && loc->kind == JP_FK_ROOT)
			continue;
		return loc && loc->func && loc->func <= x->c.funcs ? loc->func : 0;
	}
	return 0;
}

/* one jdk.MethodTrace per traced call, at its time (clamped to the recording) */
static void method_trace_events(struct jfr *x, __u64 dur)
{
	for (size_t i = 0; i < x->o->n_method_traces && !x->err; i++) {
		const struct out_method_trace *t = &x->o->method_traces[i];
		jp_id stack = t->stack <= x->c.stacks ? t->stack : 0;
		jp_id labels = t->labels <= x->c.labels ? t->labels : 0;
		__u64 at = t->start_ns < dur ? t->start_ns : dur;
		__u64 d = t->dur_ns < (1ull << 62) ? t->dur_ns : 1ull << 62;

		x->stack_used[stack] = 1;
		x->labels_used[labels] = 1;
		ev_begin(x, T_EV_METHOD_TRACE);
		jb_varint(&x->ev, JFR_START_TICKS + at);
		jb_long(&x->ev, d);
		jb_varint(&x->ev, labels);
		jb_varint(&x->ev, stack);
		jb_varint(&x->ev, leaf_method(x, stack));
		bytebuf_u8(&x->ev, t->thrown);
		jb_long(&x->ev, t->has_split ? t->cpu_ns : 0);
		jb_long(&x->ev, t->has_split ? t->off_ns : 0);
		jb_long(&x->ev, t->has_split ? t->sc_count : 0);
		jb_long(&x->ev, t->has_split ? t->sc_ns : 0);
		jb_int(&x->ev, (__s32)t->gc_count);
		jb_long(&x->ev, t->gc_ns);
		jb_str(&x->ev, jw_nz(t->split));
		jb_str(&x->ev, jw_nz(t->syscalls));
		jb_str(&x->ev, jw_nz(t->args));
		ev_end(x);
	}
}

/* the class an agent event's leaf frame names ("byte[]_[a]", "pkg.Gate_[l]"); 0 none */
static __u32 leaf_class(struct jfr *x, jp_id stack, const char *suffix)
{
	size_t n = 0, len;
	const jp_id *l = stack ? model__get_stack(x->m, stack, &n) : NULL;
	const struct jp_location *loc = n ? model__get_location(x->m, l[0]) : NULL;
	const struct jp_func *f = loc ? model__get_func(x->m, loc->func) : NULL;

	if (!f || !f->name)
		return 0;
	len = strlen(f->name);
	if (len <= 4 || strcmp(f->name + len - 4, suffix))
		return 0;
	return jw_class_key(x, f->name, len - 4, false);
}

/* the middle of slice j of n equal slices of span ticks from t0 */
static __u64 slice_ticks(__u64 t0, __u64 span, __u64 j, __u64 n)
{
	return t0 + (__u64)((unsigned __int128)(2 * j + 1) * span / (2 * (n ? n : 1)));
}

/* n CPU samples as events: n, or its share of the writer's budget (rounded) */
static __u64 sample_events(const struct jfr *x, __u64 n)
{
	unsigned __int128 t;

	if (!x->smp_den)
		return n;
	t = (unsigned __int128)n * x->smp_num;
	return (__u64)((t + x->smp_den / 2) / x->smp_den);
}

/* the events of vals: how many (samples, and one a blocked, syscall, alloc and lock value) */
static __u64 count_events(const struct jfr *x, const __u64 *vals)
{
	return sample_events(x, vals[JP_VAL_CPU_SAMPLES]) + !!vals[JP_VAL_OFFCPU_NS] +
	       !!(vals[JP_VAL_SYSCALL_CALLS] | vals[JP_VAL_SYSCALL_NS]) +
	       !!vals[JP_VAL_ALLOC_SPACE] + !!vals[JP_VAL_DELAY_NS];
}

/*
 * Row r's events of vals, the j-th of n slices of span ticks from t0 onwards (the samples, then
 * the others, each its own slice, or at t0 when others_at_t0); marks its stack and thread.
 * Returns j past them.
 */
static __u64 row_events(struct jfr *x, const struct jp_sample_row *r, const __u64 *vals, __u64 t0,
			__u64 span, __u64 j, __u64 n, bool others_at_t0)
{
	__u64 ns = sample_events(x, vals[JP_VAL_CPU_SAMPLES]), off = vals[JP_VAL_OFFCPU_NS];
	__u64 calls = vals[JP_VAL_SYSCALL_CALLS], sc_ns = vals[JP_VAL_SYSCALL_NS];
	__u64 alloc = vals[JP_VAL_ALLOC_SPACE], delay = vals[JP_VAL_DELAY_NS];
	/* an id the tables do not hold (none do) is written as null, never dangling */
	jp_id stack = r->stack <= x->c.stacks ? r->stack : 0;
	jp_id labels = r->labels <= x->c.labels ? r->labels : 0;

	if (!count_events(x, vals))
		return j;
	x->stack_used[stack] = 1;
	x->labels_used[labels] = 1;
	for (__u64 k = 0; k < ns && !x->err; k++) {
		ev_begin(x, T_EV_EXECUTION_SAMPLE);
		jb_varint(&x->ev, slice_ticks(t0, span, j++, n));
		jb_varint(&x->ev, labels);
		jb_varint(&x->ev, stack);
		jb_varint(&x->ev, STATE_RUNNABLE);
		ev_end(x);
	}
	if (off) {
		ev_begin(x, T_EV_OFFCPU);
		jb_varint(&x->ev, others_at_t0 ? t0 : slice_ticks(t0, span, j++, n));
		jb_long(&x->ev, off);
		jb_varint(&x->ev, labels);
		jb_varint(&x->ev, stack);
		ev_end(x);
	}
	if (calls || sc_ns) {
		ev_begin(x, T_EV_SYSCALL);
		jb_varint(&x->ev, others_at_t0 ? t0 : slice_ticks(t0, span, j++, n));
		jb_long(&x->ev, sc_ns);
		jb_varint(&x->ev, labels);
		jb_varint(&x->ev, stack);
		jb_long(&x->ev, calls);
		ev_end(x);
	}
	if (alloc) {
		ev_begin(x, T_EV_ALLOC_SAMPLE);
		jb_varint(&x->ev, others_at_t0 ? t0 : slice_ticks(t0, span, j++, n));
		jb_varint(&x->ev, labels);
		jb_varint(&x->ev, stack);
		jb_varint(&x->ev, leaf_class(x, stack, "_[a]"));
		jb_long(&x->ev, alloc);
		ev_end(x);
	}
	if (delay) {
		ev_begin(x, T_EV_MONITOR_ENTER);
		jb_varint(&x->ev, others_at_t0 ? t0 : slice_ticks(t0, span, j++, n));
		jb_long(&x->ev, delay);
		jb_varint(&x->ev, labels);
		jb_varint(&x->ev, stack);
		jb_varint(&x->ev, leaf_class(x, stack, "_[l]"));
		ev_end(x);
	}
	return j;
}

struct slot_ref {
	__u32 slot;
	__u32 k; /* the entry */
};

static int slot_ref_cmp(const void *a, const void *b)
{
	const struct slot_ref *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/*
 * The model's timed samples in time order: slot by slot, each slot's events spread over its
 * slices (samples of several rows take turns, so times never go back), clipped to the
 * recording's window. Then what each row has untimed, spread over the whole recording as
 * before there were times. In both passes the same.
 */
static void timed_events(struct jfr *x, __u64 dur)
{
	struct model_time ti;
	struct slot_ref *refs = NULL;
	struct jp_time_ent eb;
	size_t nref = 0;

	model__time_info(x->m, &ti);
	if (ti.entries) {
		refs = malloc(ti.entries * sizeof(*refs));
		if (!refs) {
			x->err = -ENOMEM;
			return;
		}
	}
	for (size_t k = 0; k < ti.entries; k++)
		if (model__time(x->m, k, &eb) && eb.row != (size_t)-1)
			refs[nref++] = (struct slot_ref){eb.slot, (__u32)k};
	if (nref)
		qsort(refs, nref, sizeof(*refs), slot_ref_cmp);
	for (size_t g = 0; g < nref && !x->err;) {
		__u64 wall = ti.start_unix_ns + (__u64)refs[g].slot * ti.res_ms * 1000000ull;
		__u64 off = wall > x->o->start_unix_ns ? wall - x->o->start_unix_ns : 0, n = 0,
		      j = 0;
		__u64 span = (__u64)ti.res_ms * 1000000ull;
		size_t e;

		if (off > dur)
			off = dur;
		if (off + span > dur)
			span = dur - off;
		for (e = g; e < nref && refs[e].slot == refs[g].slot; e++)
			n += count_events(x, model__time(x->m, refs[e].k, &eb)->values);
		for (; g < e && !x->err; g++) {
			struct jp_sample_row rb;
			const struct jp_time_ent *t = model__time(x->m, refs[g].k, &eb);
			const struct jp_sample_row *r = model__row(x->m, t->row, &rb);

			j = row_events(x, r, t->values, JFR_START_TICKS + off, span, j, n, false);
		}
	}
	free(refs);
}

/* every event; marks the stacks and threads they use */
void jw_events(struct jfr *x)
{
	const struct out_meta *meta = x->o->meta;
	/* a duration past 2^62 ns (146 years) is not real: clamped, ticks stay a Java long */
	__u64 dur = x->o->duration_ns < (1ull << 62) ? x->o->duration_ns : 1ull << 62;

	timed_events(x, dur);
	method_trace_events(x, dur);
	for (size_t i = 0; i < model__rows(x->m) && !x->err; i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(x->m, i, &rb);
		__u64 left[JP_VAL_MAX];
		struct jp_time_ent eb;

		memcpy(left, r->values, sizeof(left));
		for (size_t k = model__time_first(x->m, i); k; k = model__time_next(x->m, k)) {
			model__time(x->m, k - 1, &eb);
			for (int v = 0; v < JP_VAL_MAX; v++)
				left[v] -= eb.values[v] < left[v] ? eb.values[v] : left[v];
		}
		/* untimed: samples over the recording, the rest at its start (no times kept) */
		(void)row_events(x, r, left, JFR_START_TICKS, dur, 0,
				 sample_events(x, left[JP_VAL_CPU_SAMPLES]), true);
	}
	for (jp_id id = 1; id <= x->c.labels && !x->err; id++) {
		const struct jp_labels *l = model__get_labels(x->m, id);

		if (!x->labels_used[id] || !l)
			continue;
		ev_begin(x, T_EV_THREADINFO);
		jb_varint(&x->ev, JFR_START_TICKS);
		jb_varint(&x->ev, id);
		jb_int(&x->ev, (__s32)l->pid);
		jb_str(&x->ev, jw_nz(l->comm));
		jb_str(&x->ev, jw_nz(l->main));
		jb_str(&x->ev, jw_nz(l->container));
		jb_long(&x->ev, l->cgroup);
		ev_end(x);
	}
	if (meta && !x->err) {
		ev_begin(x, T_EV_RECORDING);
		jb_varint(&x->ev, JFR_START_TICKS);
		jb_long(&x->ev, x->o->duration_ns);
		jb_str(&x->ev, meta->title);
		jb_str(&x->ev, meta->host);
		jb_str(&x->ev, meta->command);
		jb_str(&x->ev, meta->events);
		jb_long(&x->ev, x->o->period_ns);
		jb_long(&x->ev, meta->samples);
		jb_long(&x->ev, meta->lost);
		jb_str(&x->ev, meta->losses);
		ev_end(x);
	}
	gc_events(x);
}

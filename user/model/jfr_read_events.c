// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jfr_read_events.c: JFR events into the model: samples, and events saying how to read them */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_read_int.h"

/* "10 ms", "20 ms", "1 s", "999 us", "500000 ns" -> ns; 0 otherwise */
static __u64 parse_period(const char *s)
{
	static const struct {
		const char *unit;
		__u64 ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ull}};
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || v > 1000000000000ull)
		return 0;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			return v * units[i].ns;
	return 0;
}

static __u64 ticks_ns(const struct ctx *c, __u64 ticks)
{
	return (__u64)((unsigned __int128)ticks * 1000000000u / c->tps);
}

/* ---- events ---- */

struct ev {
	__u64 start, duration, thread, stack, cls, weight, alloc_size, tlab_size, calls;
	__u32 thread_ci, stack_ci, cls_ci;
};

/* the fields every sample event has, by role */
static void read_ev(struct ctx *c, struct rd *r, const struct jclass *k, struct ev *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->thread_ci = ev->stack_ci = ev->cls_ci = ~0u;
	for (__u32 i = 0; i < k->nf && !r->err; i++) {
		const struct jfield *f = &c->fld[k->f0 + i];
		__u64 v = 0;

		switch (f->role) {
		case R_START:
		case R_DURATION:
		case R_WEIGHT:
		case R_ALLOC_SIZE:
		case R_TLAB_SIZE:
		case R_CALLS:
		case R_THREAD:
		case R_STACK:
		case R_CLASS:
			if (!jr_rd_num(c, r, f, &v))
				break;
			if (f->role == R_START)
				ev->start = v;
			else if (f->role == R_DURATION)
				ev->duration = v;
			else if (f->role == R_WEIGHT)
				ev->weight = v;
			else if (f->role == R_ALLOC_SIZE)
				ev->alloc_size = v;
			else if (f->role == R_TLAB_SIZE)
				ev->tlab_size = v;
			else if (f->role == R_CALLS)
				ev->calls = v;
			else if (f->cp && f->role == R_THREAD)
				ev->thread = v, ev->thread_ci = f->cls;
			else if (f->cp && f->role == R_STACK)
				ev->stack = v, ev->stack_ci = f->cls;
			else if (f->cp && f->role == R_CLASS)
				ev->cls = v, ev->cls_ci = f->cls;
			break;
		default:
			jr_skip_field(c, r, f, 0);
		}
	}
}

/* the stack of an event with a leaf frame before it ("Class_[a]", "[park]"); 0 and *err */
static jp_id stack_with_leaf(struct ctx *c, const struct ev *ev, const char *fmt, int slot,
			     int *err)
{
	jp_id base = ev->stack_ci != ~0u ? jr_stack_of(c, ev->stack_ci, ev->stack, err) : 0;
	struct cpent *ce = ev->cls_ci != ~0u ? jr_cp_get(c, ev->cls_ci, ev->cls) : NULL;
	const jp_id *locs;
	size_t n = 0;
	jp_id leaf = ce ? ce->cache[slot] : 0, id;

	if (*err)
		return 0;
	if (!leaf) {
		char raw[JFR_MAX_STR], disp[JFR_MAX_STR], name[JFR_MAX_STR + 16];
		struct jp_location loc = {.kind = JP_FK_ROOT};

		if (ev->cls_ci == ~0u ||
		    !jr_resolve_string(c, ev->cls_ci, ev->cls, raw, sizeof(raw), 4))
			snprintf(raw, sizeof(raw), "[unknown class]");
		jr_class_display(raw, disp, sizeof(disp));
		snprintf(name, sizeof(name), fmt, disp);
		loc.func = model__func(c->m, name, "", false);
		leaf = loc.func ? model__location(c->m, &loc) : 0;
		if (!leaf) {
			*err = -ENOMEM;
			return 0;
		}
		if (ce)
			ce->cache[slot] = leaf;
	}
	locs = base ? model__get_stack(c->m, base, &n) : NULL;
	if (n >= JFR_MAX_DEPTH)
		n = JFR_MAX_DEPTH - 1;
	c->stack_buf[0] = leaf;
	if (n)
		memcpy(c->stack_buf + 1, locs, n * sizeof(*locs));
	id = model__stack(c->m, c->stack_buf, n + 1);
	if (!id)
		*err = -ENOMEM;
	return id;
}

/* adds to a row; an event without a stack trace (none recorded, or none in the file) gets one */
static int add(struct ctx *c, jp_id stack, jp_id labels, enum jp_value v, __u64 val)
{
	if (!val)
		return 0;
	if (!stack && !c->no_stack) {
		struct jp_location loc = {.kind = JP_FK_ROOT};
		jp_id id;

		loc.func = model__func(c->m, "[no stack trace]", "", false);
		id = loc.func ? model__location(c->m, &loc) : 0;
		c->no_stack = id ? model__stack(c->m, &id, 1) : 0;
		if (!c->no_stack)
			return -ENOMEM;
	}
	return model__add(c->m, stack ? stack : c->no_stack, labels, v, val);
}

/*
 * the time of an event's adds: its start, on the model's clock (the first chunk's start when
 * it has none); untimed when the event has no start
 */
static void event_time(struct ctx *c, __u64 start)
{
	struct model_time ti;
	__u64 mono;

	if (!start || start < c->start_ticks) {
		model__at(c->m, 0);
		return;
	}
	if (!c->clock_set) { /* once: model__time_info walks the entries */
		model__time_info(c->m, &ti);
		if (!ti.has_clock)
			model__set_clock(c->m, c->start_ns, c->start_ns);
		c->clock_set = true;
	}
	mono = model__mono_of(c->m, c->start_ns + ticks_ns(c, start - c->start_ticks));
	model__at(c->m, mono ? mono : 1);
}

/* a sample event: into the model */
int jr_sample_event(struct ctx *c, struct rd *r, const struct jclass *k, size_t at)
{
	struct ev ev;
	jp_id stack = 0, labels;
	int err = 0;

	read_ev(c, r, k, &ev);
	if (r->err)
		return r->err == -E2BIG ? jr_bad(c, "event values nested over the limits", at)
					: jr_bad(c, "malformed event", at);
	labels = jr_labels_of(c, ev.thread_ci, ev.thread);
	if (!labels)
		return -ENOMEM;
	switch (k->kind) {
	case E_ALLOC:
	case E_ALLOC_TLAB:
	case E_ALLOC_OUTSIDE:
		stack = stack_with_leaf(c, &ev, "%s_[a]", 0, &err);
		break;
	case E_MONITOR:
		stack = stack_with_leaf(c, &ev, "%s_[l]", 1, &err);
		break;
	case E_PARK:
		ev.cls_ci = ~0u; /* the blocker's class, when known, is no frame of jprof's */
		stack = stack_with_leaf(c, &ev, "[park]", 0, &err);
		break;
	default:
		stack = ev.stack_ci != ~0u ? jr_stack_of(c, ev.stack_ci, ev.stack, &err) : 0;
	}
	if (err)
		return err;
	c->info->events++;
	event_time(c, ev.start);
	switch (k->kind) {
	case E_EXEC:
		err = add(c, stack, labels, JP_VAL_CPU_SAMPLES, 1);
		if (!err)
			err = add(c, stack, labels, JP_VAL_CPU_NS, c->period_ns);
		break;
	case E_ALLOC:
	case E_ALLOC_TLAB:
	case E_ALLOC_OUTSIDE:
		err = add(c, stack, labels, JP_VAL_ALLOC_SPACE,
			  k->kind == E_ALLOC			    ? ev.weight
			  : k->kind == E_ALLOC_TLAB && ev.tlab_size ? ev.tlab_size
								    : ev.alloc_size);
		if (!err)
			err = add(c, stack, labels, JP_VAL_ALLOC_OBJECTS, 1);
		break;
	case E_MONITOR:
	case E_PARK:
		err = add(c, stack, labels, JP_VAL_DELAY_NS, ticks_ns(c, ev.duration));
		if (!err)
			err = add(c, stack, labels, JP_VAL_CONTENTIONS, 1);
		break;
	case E_OFFCPU:
		err = add(c, stack, labels, JP_VAL_OFFCPU_NS, ticks_ns(c, ev.duration));
		break;
	case E_SYSCALL:
		err = add(c, stack, labels, JP_VAL_SYSCALL_NS, ticks_ns(c, ev.duration));
		if (!err)
			err = add(c, stack, labels, JP_VAL_SYSCALL_CALLS, ev.calls);
		break;
	default:
		break;
	}
	model__at(c->m, 0);
	return err;
}

static const char *intern(struct ctx *c, const char *s)
{
	return s[0] ? model__str(c->m, s) : NULL;
}

/* an event that says how to read the others, or what the recording was */
int jr_info_event(struct ctx *c, struct rd *r, const struct jclass *k, size_t at, size_t body)
{
	char s[JFR_MAX_STR], name[JFR_MAX_STR] = "", value[JFR_MAX_STR] = "", cause[256] = "";
	struct jfr_read_info *in = c->info;
	__u64 v, thread = 0, id = ~0ull, start = 0, dur = 0, sum = ~0ull, gc_id = 0, pid = 0;
	bool has_thread = false;

	for (__u32 i = 0; i < k->nf && !r->err; i++) {
		const struct jfield *f = &c->fld[k->f0 + i];
		const char **dst = NULL;

		switch (f->role) {
		case R_THREAD:
			if (f->cp)
				has_thread = jr_rd_num(c, r, f, &thread);
			else
				jr_skip_field(c, r, f, 0);
			break;
		case R_START:
		case R_DURATION:
		case R_SUM_PAUSES:
		case R_GC_ID:
		case R_PID:
		case R_ID:
		case R_PERIOD:
		case R_SAMPLES:
		case R_LOST:
			if (!jr_rd_num(c, r, f, &v))
				break;
			if (f->role == R_START)
				start = v;
			else if (f->role == R_DURATION)
				dur = v;
			else if (f->role == R_SUM_PAUSES)
				sum = v;
			else if (f->role == R_GC_ID)
				gc_id = v;
			else if (f->role == R_PID)
				pid = v;
			else if (f->role == R_ID)
				id = v;
			else if (f->role == R_PERIOD && k->kind == E_RECORDING)
				c->period_ns = in->period_ns = v;
			else if (f->role == R_SAMPLES && k->kind == E_RECORDING)
				in->samples = v;
			else if (f->role == R_LOST && k->kind == E_RECORDING)
				in->lost = v;
			break;
		case R_NAME:
			(void)jr_rd_str_field(c, r, f, name, sizeof(name), 4);
			break;
		case R_VALUE:
			(void)jr_rd_str_field(c, r, f, value, sizeof(value), 4);
			break;
		case R_CAUSE:
			(void)jr_rd_str_field(c, r, f, cause, sizeof(cause), 4);
			break;
		case R_TITLE:
		case R_HOST:
		case R_COMMAND:
		case R_EVENTS:
		case R_LOSSES:
			if (!jr_rd_str_field(c, r, f, s, sizeof(s), 4) || k->kind != E_RECORDING)
				break;
			dst = f->role == R_TITLE     ? &in->title
			      : f->role == R_HOST    ? &in->host
			      : f->role == R_COMMAND ? &in->command
			      : f->role == R_EVENTS  ? &in->events_list
						     : &in->losses;
			*dst = intern(c, s);
			if (s[0] && !*dst)
				return -ENOMEM;
			break;
		default:
			jr_skip_field(c, r, f, 0);
		}
	}
	if (r->err)
		return r->err == -E2BIG ? jr_bad(c, "event values nested over the limits", at)
					: jr_bad(c, "malformed event", at);
	switch (k->kind) {
	case E_THREADINFO:
		if (has_thread) {
			int err = jr_cp_add(c, TI_TYPE, thread, body);

			if (err == -E2BIG)
				return jr_bad(c, "more threads than the limit", at);
			if (err)
				return err;
		}
		break;
	case E_SETTING:
		if (c->exec_id != ~0ull && id == c->exec_id && !strcmp(name, "period") &&
		    parse_period(value))
			c->period_ns = in->period_ns = parse_period(value);
		break;
	case E_JVMINFO:
		if (pid && pid <= 0xffffffffu)
			c->pid = in->pid = (__u32)pid;
		break;
	case E_GC:
		if (in->n_gc < JFR_MAX_GC) {
			struct jfr_gc_pause *g;
			__u64 t = start >= c->start_ticks ? ticks_ns(c, start - c->start_ticks) : 0;

			if (in->n_gc == c->gc_cap) {
				size_t nc = c->gc_cap ? c->gc_cap * 2 : 64;

				g = realloc(in->gc, nc * sizeof(*g));
				if (!g)
					return -ENOMEM;
				in->gc = g;
				c->gc_cap = nc;
			}
			g = &in->gc[in->n_gc++];
			t += c->start_ns > c->first_start_ns ? c->start_ns - c->first_start_ns : 0;
			g->start_ns = t;
			g->duration_ns = ticks_ns(c, sum != ~0ull ? sum : dur);
			g->pid = pid && pid <= 0xffffffffu ? (__u32)pid : c->pid;
			g->gc_id = (__u32)gc_id;
			g->name = model__str(c->m, name);
			g->cause = model__str(c->m, cause);
			if (!g->name || !g->cause)
				return -ENOMEM;
		}
		break;
	default:
		break;
	}
	return 0;
}

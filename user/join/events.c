// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * events.c: the agents' events (-e lock, alloc, live) into the model: monitor waits paired
 * with their end and with the blocked samples of their thread, sampled allocations, and
 * objects still live at the end with the age of those freed, in bounded tables.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "join/join_int.h"
#include "clock.h"
#include "log.h"
#include "opts.h"
#include "model/spread.h"
#include "kernel/syscalls.h"
#include "util/cgroup.h"
#include "util/hashkey.h"

#define EV_MIN_CAP 16

/* the event of (k1, k2), NULL when none */
static struct ev_slot *ev_find(const struct ev_tab *t, __u64 k1, __u64 k2)
{
	const __u64 *v = t ? hmap_find2(&t->map, k1, k2) : NULL;

	return v ? &t->evs[*v] : NULL;
}

/* a new event of (k1, k2), zeroed but for its key; NULL when the table has max or no memory */
static struct ev_slot *ev_add(struct ev_tab **tp, size_t max, __u64 k1, __u64 k2)
{
	struct ev_tab *t = *tp;
	struct ev_slot *w;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		hmap_init(&t->map, EV_MIN_CAP, max);
		*tp = t;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : EV_MIN_CAP;

		if (t->n >= max)
			return NULL;
		w = realloc(t->evs, cap * sizeof(*w));
		if (!w)
			return NULL;
		t->evs = w;
		t->cap = cap;
	}
	if (hmap_put2(&t->map, k1, k2, t->n) < 0) /* keys are new: the callers looked first */
		return NULL;
	w = &t->evs[t->n++];
	memset(w, 0, sizeof(*w));
	w->k1 = k1;
	w->k2 = k2;
	return w;
}

/* removes an event: the last one takes its place; the array shrinks under a quarter full */
static void ev_del(struct ev_tab *t, struct ev_slot *w)
{
	size_t i = (size_t)(w - t->evs);

	(void)hmap_del2(&t->map, w->k1, w->k2, NULL);
	if (i != --t->n) {
		*w = t->evs[t->n];
		(void)hmap_put2(&t->map, w->k1, w->k2, i); /* the key is there: no allocation */
	}
	if (t->cap > EV_MIN_CAP && t->n < t->cap / 4) {
		struct ev_slot *s = realloc(t->evs, t->cap / 2 * sizeof(*s));

		if (s) {
			t->evs = s;
			t->cap /= 2;
		}
	}
}

void jn_ev_free(struct ev_tab *t)
{
	if (!t)
		return;
	hmap_free(&t->map);
	free(t->evs);
	free(t);
}

/*
 * Issue 8: a thread blocked entering a contended monitor is in the VM, and AGCT cannot
 * walk it. If the blocked interval [time - weight, time] falls in a wait the agent
 * reported (MonitorContendedEnter .. Entered, Enter's stack from GetStackTrace), that
 * stack is the Java stack of the block: kernel and JVM frames of the wait over it.
 * A CPU sample (a point: its weight is CPU time) in such a wait is the thread spinning
 * for the monitor in the VM (ObjectMonitor's EnterI): the same Java stack.
 */
int jn_add_monitor_wait(struct join *j, const struct jp_sample *s, const __u64 *kstack,
			const __u64 *ustack, struct jvm_ent *e)
{
	__u64 k1 = (__u64)e->pid << 32 | 2;
	__u64 start = s->kind == JP_EV_CPU ? s->time_ns : s->time_ns - s->weight;
	const struct ev_slot *w;
	const jp_id *jl;
	size_t n = 0, nj = 0;

	if ((s->flags & JP_SF_CPU_TAIL) || !e->a || !j->waits || !j->waits->n)
		return 1;
	w = ev_find(j->waits, k1, jn_ns_tid(e, s->tid));
	/* 1 ms slack: the agent's and the kernel's clocks are read at different points */
	if (!w || !w->jstack || w->time_ns > s->time_ns ||
	    (w->end_ns && w->end_ns + 1000000 < start))
		return 1;
	jl = model__get_stack(j->model, w->jstack, &nj);
	if (!jl)
		return 1;
	jn_push_native_part(j, &n, s, kstack, ustack);
	for (size_t i = 0; i < nj && n < JOIN_MAX_FRAMES; i++)
		j->locs[n++] = jl[i];
	e->samples++;
	e->java_samples++;
	e->complete++;
	e->monitor_joined++;
	jn_tally_cpu(e, s, true, false);
	j->st.java_complete++;
	return jn_commit(j, s, e, n, NULL);
}

/*
 * A JNI class signature as a Java name: "Ljava/lang/String;" -> "java.lang.String",
 * "[[I" -> "int[][]". Untrusted: bounded, odd input is kept as it is.
 */
static const char *class_display(struct join *j, const char *sig)
{
	static const char prim[] = "ZBCSIJFD";
	static const char *const pname[] = {"boolean", "byte", "char",	"short",
					    "int",     "long", "float", "double"};
	char buf[300];
	size_t dims = 0, w = 0, n;
	const char *p;

	if (!sig)
		return "[unknown class]";
	while (sig[dims] == '[' && dims < 16)
		dims++;
	p = sig + dims;
	n = strlen(p);
	if (p[0] == 'L' && n >= 2 && p[n - 1] == ';') {
		n -= 2;
		if (n > 255)
			n = 255;
		for (size_t i = 0; i < n; i++)
			buf[w++] = p[1 + i] == '/' ? '.' : p[1 + i];
	} else if (n == 1 && strchr(prim, p[0])) {
		const char *t = pname[strchr(prim, p[0]) - prim];

		w = strlen(t);
		memcpy(buf, t, w);
	} else {
		return jn_pool_fmt(j, "%.255s", sig);
	}
	for (size_t i = 0; i < dims; i++) {
		buf[w++] = '[';
		buf[w++] = ']';
	}
	buf[w] = '\0';
	return jn_pool_fmt(j, "%s", buf);
}

/* the event's stack (class leaf, then its Java frames) and labels as model ids */
static int event_ids(struct join *j, struct jvm_ent *e, const struct java_event *ev,
		     const char *leaf_fmt, jp_id *ret_stack, jp_id *ret_labels, jp_id *ret_jstack)
{
	struct jp_labels l = {.pid = e->pid,
			      .cgroup = e->cgroup,
			      .container = cgroup_names__get(j->o.cgroups, e->cgroup)};
	size_t n = 0;

	j->pool_used = 0;
	l.tid = jn_host_tid(e, ev->tid, j->now_ns);
	l.comm = e->comm;
	l.main = e->name;
	l.thread = jvm_agent__thread_name(e->a, ev->tid);
	if (!l.thread)
		l.thread = jn_pool_fmt(j, "tid-%u", ev->tid);
	if (leaf_fmt) {
		const char *cls = class_display(j, jvm_agent__class_name(e->a, ev->class_id));

		jn_push(j, &n, jn_pool_fmt(j, leaf_fmt, cls), JP_FK_ROOT);
	}
	for (int i = 0; i < ev->num_frames; i++)
		jn_push_java(j, &n, e, &ev->frames[i]);
	jn_late_done(j, e);
	*ret_stack = jn_stack(j, e, n);
	*ret_labels = model__labels(j->model, &l);
	/* the Java stack under the leaf: a suffix of the stack's, its nodes there already */
	if (ret_jstack && *ret_stack)
		*ret_jstack = n > 1 ? model__stack(j->model, j->locs + 1, n - 1) : 0;
	return *ret_stack && *ret_labels ? 0 : -ENOMEM;
}

static void age_add(struct join *j, jp_id stack, __u64 age_ns)
{
	__u64 *n = j->ages_other;
	int b = 0;

	for (__u64 lim = 1000000; b < AGE_BUCKETS - 1 && age_ns >= lim; lim *= 10)
		b++;
	for (size_t i = 0; i < j->nages; i++) {
		if (j->ages[i].stack == stack) {
			n = j->ages[i].n;
			goto add;
		}
	}
	if (j->nages < AGE_SITES) {
		if (!j->ages)
			j->ages = calloc(AGE_SITES, sizeof(*j->ages));
		if (j->ages) {
			j->ages[j->nages].stack = stack;
			n = j->ages[j->nages++].n;
		}
	}
add:
	n[b]++;
}

/* the table of waits is full: forget the waits that ended long enough ago */
static void waits_sweep(struct join *j, __u64 now)
{
	/* from the end: a delete moves the last event into the hole, one already seen */
	for (size_t i = j->waits ? j->waits->n : 0; i--;) {
		struct ev_slot *w = &j->waits->evs[i];

		if (w->end_ns && w->end_ns + WAIT_KEEP_NS < now)
			ev_del(j->waits, w);
	}
}

/*
 * An agent event (jvmagent/events.c). Allocations are samples of their own; a monitor
 * wait is one once its end comes (Entered, paired by thread: a thread waits for one
 * monitor at a time); an object tracked live is one at the end unless freed first.
 */
int jn_on_event(void *ctx, const struct java_event *ev)
{
	struct join *j = ctx;
	struct jvm_ent *e = j->cur_jvm;
	struct ev_slot *w;
	jp_id stack, labels, jstack = 0;
	__u64 k1 = (__u64)e->pid << 32 | 1, objects;
	__u32 want = j->o.joined_events;
	int err = 0;

	j->traces_read++;
	/* only what -e asked for is joined: another kind costs a count, not a stack */
	if (!((ev->kind == JP_AEV_ALLOC && want & (JP_AGENT_EV_ALLOC | JP_AGENT_EV_LIVE)) ||
	      (ev->kind == JP_AEV_FREE && want & JP_AGENT_EV_LIVE) ||
	      ((ev->kind == JP_AEV_MONITOR_ENTER || ev->kind == JP_AEV_MONITOR_ENTERED ||
		ev->kind == JP_AEV_MONITOR_BLOCKED) &&
	       want & JP_AGENT_EV_LOCK))) {
		e->ev_skipped++;
		return jn_round_next(j);
	}
	model__at(j->model, ev->time_ns); /* the event's time in the model's timeline */
	switch (ev->kind) {
	case JP_AEV_ALLOC:
		e->ev_allocs++;
		err = event_ids(j, e, ev, "%s_[a]", &stack, &labels, NULL);
		if (err)
			break;
		/* weight = size / p, so 1/p objects = weight / size (at least the one seen) */
		objects = ev->size ? (ev->weight + ev->size / 2) / ev->size : 1;
		if (!objects)
			objects = 1;
		err = model__add(j->model, stack, labels, JP_VAL_ALLOC_SPACE, ev->weight);
		if (!err)
			err = model__add(j->model, stack, labels, JP_VAL_ALLOC_OBJECTS, objects);
		if (!err && ev->tag) {
			w = ev_add(&j->live, EV_LIVE_MAX, k1, ev->tag);
			if (!w) {
				e->ev_over_budget++;
				break;
			}
			w->stack = stack;
			w->labels = labels;
			w->time_ns = ev->time_ns;
			w->space = ev->weight;
			w->objects = objects;
		}
		break;
	case JP_AEV_FREE:
		e->ev_frees++;
		w = ev_find(j->live, k1, ev->tag);
		if (w) {
			age_add(j, w->stack,
				ev->time_ns > w->time_ns ? ev->time_ns - w->time_ns : 0);
			ev_del(j->live, w);
		}
		break;
	case JP_AEV_MONITOR_BLOCKED:
		/*
		 * Found blocked by the agent's scan after a late attach: a wait since the scan,
		 * unless the thread's wait is known already (its Enter came after the events
		 * were on) or it entered since the scan (its Entered came first).
		 */
		w = ev_find(j->waits, (__u64)e->pid << 32 | 2, ev->tid);
		if (w && (!w->end_ns || w->end_ns >= ev->time_ns || w->time_ns >= ev->time_ns))
			break;
		e->ev_blocked_at_attach++;
		/* fallthrough */
	case JP_AEV_MONITOR_ENTER:
		err = event_ids(j, e, ev, "%s_[l]", &stack, &labels, &jstack);
		if (err)
			break;
		k1 = (__u64)e->pid << 32 | 2;
		w = ev_find(j->waits, k1, ev->tid);
		if (!w)
			w = ev_add(&j->waits, EV_WAITS_MAX, k1, ev->tid);
		if (!w) {
			waits_sweep(j, ev->time_ns);
			w = ev_add(&j->waits, EV_WAITS_MAX, k1, ev->tid);
		}
		if (!w) {
			e->ev_over_budget++;
			break;
		}
		w->stack = stack;
		w->labels = labels;
		w->jstack = jstack;
		w->time_ns = ev->time_ns;
		w->end_ns = 0;
		break;
	case JP_AEV_MONITOR_ENTERED:
		k1 = (__u64)e->pid << 32 | 2;
		w = ev_find(j->waits, k1, ev->tid);
		if (!w || w->end_ns) {
			e->ev_orphan++; /* its Enter was dropped, or came before the recording */
			/* kept: a scan record of this thread older than this is no wait */
			if (!w && (w = ev_add(&j->waits, EV_WAITS_MAX, k1, ev->tid))) {
				w->stack = w->labels = w->jstack = 0;
				w->time_ns = 0;
				w->end_ns = ev->time_ns ? ev->time_ns : 1;
			}
			break;
		}
		if (ev->time_ns >= w->time_ns &&
		    ev->time_ns - w->time_ns >= j->o.lock_threshold_ns) {
			e->ev_locks++;
			err = model__add(j->model, w->stack, w->labels, JP_VAL_CONTENTIONS, 1);
			if (!err)
				err = model__add(j->model, w->stack, w->labels, JP_VAL_DELAY_NS,
						 ev->time_ns - w->time_ns);
		} else {
			e->ev_lock_short++;
		}
		/* kept a while: the off-CPU sample of this wait comes after its end */
		w->end_ns = ev->time_ns ? ev->time_ns : 1;
		break;
	default:
		break;
	}
	err = jn_model_drop(j, e, err);
	if (err)
		return err;
	return jn_round_next(j);
}

/* at the end: what was sampled and never freed is live (inuse_space / inuse_objects) */
int jn_add_live(struct join *j)
{
	int err = 0;

	for (size_t i = 0; j->live && i < j->live->n && !err; i++) {
		struct ev_slot *w = &j->live->evs[i];

		err = model__add(j->model, w->stack, w->labels, JP_VAL_INUSE_SPACE, w->space);
		if (!err)
			err = model__add(j->model, w->stack, w->labels, JP_VAL_INUSE_OBJECTS,
					 w->objects);
		err = jn_model_drop(j, NULL, err);
	}
	return err;
}

/* forgets a pid's entries in an event table (its JVM is gone: nothing of it is alive) */
void jn_ev_drop_pid(struct ev_tab *t, __u32 pid)
{
	/* from the end: a delete moves the last event into the hole, one already seen */
	for (size_t i = t ? t->n : 0; i--;)
		if (t->evs[i].k1 >> 32 == pid)
			ev_del(t, &t->evs[i]);
}

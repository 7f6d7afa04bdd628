// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * triggers.c: the daemon's automatic marks. With --mark-on-pause MS, a GC pause of at least
 * MS in any recorded JVM (its hsperfdata, jvm/pauses.h) makes a mark of the store, as
 * `jprof dump --mark` does: made one interval after the pause, so the mark holds the
 * interval before it, the pause and the interval after it. One mark in TRIGGER_GAP_S at
 * most (a JVM in a GC storm makes one mark, not hundreds); the pauses over the threshold
 * meanwhile are counted and said at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record_int.h"
#include "jvm/pauses.h"
#include "store/store.h"
#include "log.h"

#define TRIGGER_GAP_S	  600 /* seconds between two automatic marks, at least */
#define TRIGGER_LOOK_NS	  (1000ull * 1000 * 1000) /* the pauses looked at once a second */
#define TRIGGER_JVMS	  1024 /* JVMs whose newest pause looked at is remembered */
#define TRIGGER_BEFORE_S  60 /* a mark reaches this far before its pause at least */

struct seen {
	__u32 pid;
	__u64 end_ns; /* the end of its newest GC pause looked at (CLOCK_MONOTONIC) */
};

struct rec_triggers {
	__u64 pause_ns;
	__u64 looked_ns;
	struct seen seen[TRIGGER_JVMS];
	size_t nseen, next_evict;
	/* the pause a mark waits for: made at due_ns */
	bool pending;
	__u64 due_ns, start_ns, dur_ns;
	__u32 pid;
	__u64 last_mark_ns; /* 0: none yet */
	__u64 made, failed, suppressed;
};

struct rec_triggers *rec_triggers_new(__u32 pause_ms)
{
	struct rec_triggers *t;

	if (!pause_ms)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t) {
		pr_warn("--mark-on-pause: no memory: no automatic marks");
		return NULL;
	}
	t->pause_ns = (__u64)pause_ms * 1000000ull;
	return t;
}

static struct seen *seen_of(struct rec_triggers *t, __u32 pid)
{
	struct seen *s;

	for (size_t i = 0; i < t->nseen; i++)
		if (t->seen[i].pid == pid)
			return &t->seen[i];
	/* a new JVM: a free entry, else the oldest taken (a JVM that came back re-looks) */
	s = t->nseen < TRIGGER_JVMS ? &t->seen[t->nseen++] : &t->seen[t->next_evict++ % TRIGGER_JVMS];
	s->pid = pid;
	s->end_ns = 0;
	return s;
}

struct look_ctx {
	struct rec_triggers *t;
	__u64 now_ns;
	unsigned int interval_s;
};

static void look_gc(void *ctx, __u32 pid, __u64 start_mono_ns, const struct hsperf_gc_event *ev)
{
	struct look_ctx *c = ctx;
	struct rec_triggers *t = c->t;
	struct seen *s = seen_of(t, pid);
	__u64 end = start_mono_ns + ev->duration_ns;

	if (!start_mono_ns || end <= s->end_ns)
		return; /* looked at already */
	s->end_ns = end;
	if (ev->duration_ns < t->pause_ns)
		return;
	if (t->pending || (t->last_mark_ns && c->now_ns - t->last_mark_ns <
						      TRIGGER_GAP_S * 1000000000ull)) {
		t->suppressed++;
		return;
	}
	t->pending = true;
	t->pid = pid;
	t->start_ns = start_mono_ns;
	t->dur_ns = ev->duration_ns;
	/* the interval after the pause goes into the mark too */
	t->due_ns = end + (__u64)c->interval_s * 1000000000ull;
}

void rec_triggers_tick(struct rec *r, struct rec_triggers *t, __u64 now_ns)
{
	char name[STORE_MARK_NAME_MAX + 1], dir[160], why[256] = "";
	unsigned int interval_s = r->o->interval_s ? r->o->interval_s : 60;
	__u64 back_s;
	size_t n = 0;
	int err;

	if (!t)
		return;
	if (now_ns - t->looked_ns >= TRIGGER_LOOK_NS) {
		struct look_ctx c = {.t = t, .now_ns = now_ns, .interval_s = interval_s};

		t->looked_ns = now_ns;
		pauses__for_each_gc(r->pauses, look_gc, &c);
	}
	if (!t->pending || now_ns < t->due_ns)
		return;
	t->pending = false;
	t->last_mark_ns = now_ns;
	snprintf(name, sizeof(name), "gc-pause-%u-%llums", t->pid,
		 (unsigned long long)(t->dur_ns / 1000000));
	back_s = (now_ns - t->start_ns) / 1000000000ull + 1;
	back_s += back_s < TRIGGER_BEFORE_S ? TRIGGER_BEFORE_S : interval_s;
	err = rec_interval_mark(r, name, (__u32)back_s, dir, sizeof(dir), &n, why, sizeof(why));
	if (err) {
		t->failed++;
		return; /* rec_interval_mark said why */
	}
	t->made++;
	pr_info("daemon: a GC pause of %llu ms in JVM %u: the %llu s around it kept as %s (%zu "
		"segments), outside the limits",
		(unsigned long long)(t->dur_ns / 1000000), t->pid, (unsigned long long)back_s, dir,
		n);
}

void rec_triggers_free(struct rec_triggers *t)
{
	if (!t)
		return;
	if (t->made || t->failed || t->suppressed)
		pr_info("--mark-on-pause: %llu marks made, %llu failed; %llu more pauses over %llu "
			"ms came within %d s of a mark or while one waited",
			(unsigned long long)t->made, (unsigned long long)t->failed,
			(unsigned long long)t->suppressed,
			(unsigned long long)(t->pause_ns / 1000000), TRIGGER_GAP_S);
	free(t);
}

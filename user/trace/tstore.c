// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tstore.c: per-thread windows of kernel events (circular arrays) within a byte budget. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/tstore.h"
#include "util/hmap.h"

#define EV_MIN	    64u
#define THREADS_MAX 65536u

struct tthr {
	struct tsplit_ev *ev; /* circular: n from head */
	size_t head, n, cap;
	__u64 lost_until;
	__u32 host_tid;
};

struct tstore {
	struct hmap by_key; /* (tgid, ns_tid) -> index in thr */
	struct tthr *thr;
	size_t n_thr, cap_thr;
	size_t budget, bytes, bytes_peak;
	__u64 window_ns, lost_all; /* lost_all: the drops no thread names */
	__u64 events, dropped_budget, pruned;
};

struct tstore *tstore__new(size_t budget_bytes, __u64 window_ns)
{
	struct tstore *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	hmap_init(&s->by_key, 64, THREADS_MAX);
	s->budget = budget_bytes;
	s->window_ns = window_ns;
	return s;
}

void tstore__free(struct tstore *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_thr; i++)
		free(s->thr[i].ev);
	free(s->thr);
	hmap_free(&s->by_key);
	free(s);
}

static struct tthr *thr_get(struct tstore *s, __u32 tgid, __u32 ns_tid, int add)
{
	__u64 *v = hmap_find2(&s->by_key, tgid, ns_tid);
	bool is_new;

	if (v)
		return &s->thr[*v];
	if (!add || s->bytes + sizeof(struct tthr) > s->budget)
		return NULL;
	if (s->n_thr == s->cap_thr) {
		size_t nc = s->cap_thr ? 2 * s->cap_thr : 64;
		struct tthr *t = realloc(s->thr, nc * sizeof(*t));

		if (!t)
			return NULL;
		s->thr = t;
		s->cap_thr = nc;
	}
	v = hmap_get2(&s->by_key, tgid, ns_tid, &is_new);
	if (!v)
		return NULL;
	*v = s->n_thr;
	memset(&s->thr[s->n_thr], 0, sizeof(s->thr[0]));
	s->bytes += sizeof(struct tthr);
	return &s->thr[s->n_thr++];
}

static void drop_front(struct tthr *t)
{
	const struct tsplit_ev *e;

	if (!t->n || !t->cap)
		return;
	e = &t->ev[t->head];
	if (e->end_ns > t->lost_until)
		t->lost_until = e->end_ns;
	t->head = (t->head + 1) % t->cap;
	t->n--;
}

/* room for one more event in t: grown within the budget, else its oldest dropped */
static int make_room(struct tstore *s, struct tthr *t)
{
	size_t nc;
	struct tsplit_ev *ev;

	if (t->n < t->cap)
		return 0;
	nc = t->cap ? 2 * t->cap : EV_MIN;
	if (s->bytes + (nc - t->cap) * sizeof(*ev) > s->budget) {
		if (!t->n)
			return -ENOSPC;
		drop_front(t);
		s->dropped_budget++;
		return 0;
	}
	ev = malloc(nc * sizeof(*ev));
	if (!ev) {
		if (!t->n)
			return -ENOMEM;
		drop_front(t);
		s->dropped_budget++;
		return 0;
	}
	for (size_t i = 0; t->cap && i < t->n; i++)
		ev[i] = t->ev[(t->head + i) % t->cap];
	free(t->ev);
	s->bytes += (nc - t->cap) * sizeof(*ev);
	if (s->bytes > s->bytes_peak)
		s->bytes_peak = s->bytes;
	t->ev = ev;
	t->cap = nc;
	t->head = 0;
	return 0;
}

void tstore__add(struct tstore *s, __u32 tgid, __u32 ns_tid, __u32 tid, const struct tsplit_ev *ev)
{
	struct tthr *t = thr_get(s, tgid, ns_tid, 1);

	s->events++;
	if (!t) {
		s->dropped_budget++;
		if (ev->end_ns > s->lost_all)
			s->lost_all = ev->end_ns; /* a thread not kept: nobody's calls trusted */
		return;
	}
	t->host_tid = tid;
	if (make_room(s, t)) {
		s->dropped_budget++;
		if (ev->end_ns > t->lost_until)
			t->lost_until = ev->end_ns;
		return;
	}
	t->ev[(t->head + t->n) % t->cap] = *ev;
	t->n++;
}

void tstore__prune(struct tstore *s, __u64 now_ns)
{
	__u64 cut = now_ns > s->window_ns ? now_ns - s->window_ns : 0;

	for (size_t i = 0; i < s->n_thr; i++) {
		struct tthr *t = &s->thr[i];

		while (t->n && t->ev[t->head].end_ns < cut) {
			drop_front(t);
			s->pruned++;
		}
	}
}

void tstore__mark_lost(struct tstore *s, __u64 at_ns)
{
	if (at_ns > s->lost_all)
		s->lost_all = at_ns;
}

static const struct tsplit_ev *ev_at(const struct tthr *t, size_t i)
{
	return &t->ev[(t->head + i) % t->cap];
}

void tstore__split(const struct tstore *s, __u32 tgid, __u32 ns_tid, __u64 start_ns, __u64 dur_ns,
		   struct tsplit_res *r)
{
	tstore__split_with(s, tgid, ns_tid, start_ns, dur_ns, NULL, 0, r);
}

int tstore__host_tid(const struct tstore *s, __u32 tgid, __u32 ns_tid, __u32 *ret)
{
	__u64 *v = hmap_find2(&s->by_key, tgid, ns_tid);

	if (!v || !s->thr[*v].host_tid)
		return -ENOENT;
	*ret = s->thr[*v].host_tid;
	return 0;
}

void tstore__split_with(const struct tstore *s, __u32 tgid, __u32 ns_tid, __u64 start_ns,
			__u64 dur_ns, const struct tsplit_ev *extra, size_t n_extra,
			struct tsplit_res *r)
{
	__u64 *v = hmap_find2(&s->by_key, tgid, ns_tid);
	const struct tthr *t = v ? &s->thr[*v] : NULL;
	__u64 lost = s->lost_all;
	size_t lo = 0, hi, p0, n1;

	if (t && t->lost_until > lost)
		lost = t->lost_until;
	if (!t || !t->n) {
		tsplit_compute(extra, n_extra, start_ns, dur_ns, lost, r);
		return;
	}
	/* they are in the order they ended: the first that ended after the call began */
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ev_at(t, mid)->end_ns > start_ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* events lo..n-1: one run up to the array's end, the rest from its start */
	p0 = (t->head + lo) % t->cap;
	n1 = t->cap - p0 < t->n - lo ? t->cap - p0 : t->n - lo;
	tsplit_compute3(&t->ev[p0], n1, t->ev, t->n - lo - n1, extra, n_extra, start_ns, dur_ns,
			lost, r);
}

void tstore__stats(const struct tstore *s, struct tstore_stats *ret)
{
	*ret = (struct tstore_stats){.events = s->events,
				     .dropped_budget = s->dropped_budget,
				     .pruned = s->pruned,
				     .threads = s->n_thr,
				     .bytes = s->bytes,
				     .bytes_peak = s->bytes_peak};
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ptable.c: the process table (ptable.h). Open addressing by pid with linear probing;
 * an entry is taken out by shifting the ones after it back (no tombstones), so a table
 * where processes come and go for months stays as long as the live ones need. Exited
 * processes wait in a FIFO for their linger time, each once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proc/ptable.h"
#include "util/hashkey.h"
#include "util/procfs.h"

#define PT_MIN_CAP 1024

struct pt_gone {
	__u32 pid;
	__u64 at_ns;
};

struct ptable {
	struct pt_proc *ents; /* pid 0: empty */
	size_t cap, n;
	/* exited, oldest first: a ring of gone_cap */
	struct pt_gone *gone;
	size_t gone_cap, gone_head, gone_n;
	size_t sweep_at; /* the next slot ptable__sweep looks at */
	__u64 linger_ns;
	struct {
		pt_drop_fn fn;
		void *ctx;
	} subs[PT_SUBSCRIBERS_MAX];
	size_t nsubs;
	struct ptable_stats st;
};

static size_t home(const struct ptable *t, __u32 pid)
{
	return (size_t)(hash_keyed(pid) >> 17) & (t->cap - 1);
}

struct ptable *ptable__new(__u64 linger_ns)
{
	struct ptable *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ents = calloc(PT_MIN_CAP, sizeof(*t->ents));
	if (!t->ents) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->cap = PT_MIN_CAP;
	t->linger_ns = linger_ns;
	return t;
}

void ptable__free(struct ptable *t)
{
	if (!t)
		return;
	free(t->ents);
	free(t->gone);
	free(t);
}

int ptable__subscribe(struct ptable *t, pt_drop_fn fn, void *ctx)
{
	if (t->nsubs == PT_SUBSCRIBERS_MAX)
		return -ENOSPC;
	t->subs[t->nsubs].fn = fn;
	t->subs[t->nsubs++].ctx = ctx;
	return 0;
}

static size_t slot_of(const struct ptable *t, __u32 pid)
{
	size_t i = home(t, pid);

	while (t->ents[i].pid && t->ents[i].pid != pid)
		i = (i + 1) & (t->cap - 1);
	return i;
}

struct pt_proc *ptable__find(struct ptable *t, __u32 pid)
{
	size_t i;

	if (!pid)
		return NULL;
	i = slot_of(t, pid);
	return t->ents[i].pid ? &t->ents[i] : NULL;
}

static int grow(struct ptable *t, size_t cap)
{
	struct pt_proc *old = t->ents, *ne = calloc(cap, sizeof(*ne));
	size_t ocap = t->cap;

	if (!ne)
		return -ENOMEM;
	t->ents = ne;
	t->cap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].pid)
			t->ents[slot_of(t, old[i].pid)] = old[i];
	free(old);
	t->sweep_at = 0;
	return 0;
}

struct pt_proc *ptable__get(struct ptable *t, __u32 pid, bool *is_new)
{
	size_t i;

	*is_new = false;
	if (!pid)
		return NULL;
	i = slot_of(t, pid);
	if (t->ents[i].pid)
		return &t->ents[i];
	if ((t->n + 1) * 2 > t->cap) {
		if (grow(t, t->cap * 2)) {
			t->st.nomem++;
			return NULL;
		}
		i = slot_of(t, pid);
	}
	memset(&t->ents[i], 0, sizeof(t->ents[i]));
	t->ents[i].pid = pid;
	t->n++;
	t->st.seen++;
	if (t->n > t->st.peak)
		t->st.peak = t->n;
	*is_new = true;
	return &t->ents[i];
}

/* takes slot i out: the entries after it in its run move back where a lookup finds them */
static void remove_slot(struct ptable *t, size_t i)
{
	size_t j = i;

	t->ents[i].pid = 0;
	t->n--;
	for (;;) {
		size_t h;

		j = (j + 1) & (t->cap - 1);
		if (!t->ents[j].pid)
			break;
		h = home(t, t->ents[j].pid);
		/* j stays when its home lies cyclically in (i, j] */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		t->ents[i] = t->ents[j];
		t->ents[j].pid = 0;
		i = j;
	}
	/* shrink a table a burst of processes left mostly empty */
	if (t->cap > PT_MIN_CAP && t->n * 8 < t->cap)
		(void)grow(t, t->cap / 2); /* no memory: it stays as large */
}

static void drop(struct ptable *t, size_t i, enum pt_why why, __u64 now)
{
	struct pt_proc p = t->ents[i];

	remove_slot(t, i);
	for (size_t k = 0; k < t->nsubs; k++)
		t->subs[k].fn(t->subs[k].ctx, &p, why, now);
	if (why == PT_EXITED)
		t->st.exited++;
	else if (why == PT_EXECED)
		t->st.execed++;
}

void ptable__exited(struct ptable *t, __u32 pid, __u64 now_ns)
{
	struct pt_proc *p = ptable__find(t, pid);

	if (!p || p->gone_ns)
		return;
	if (t->gone_n == t->gone_cap) {
		size_t cap = t->gone_cap ? t->gone_cap * 2 : 256;
		struct pt_gone *ng = calloc(cap, sizeof(*ng));

		if (!ng) {
			/* no memory to wait: dropped now, its last samples may miss it */
			drop(t, (size_t)(p - t->ents), PT_EXITED, now_ns);
			return;
		}
		for (size_t k = 0; k < t->gone_n; k++)
			ng[k] = t->gone[(t->gone_head + k) % t->gone_cap];
		free(t->gone);
		t->gone = ng;
		t->gone_cap = cap;
		t->gone_head = 0;
	}
	p->gone_ns = now_ns ? now_ns : 1;
	t->gone[(t->gone_head + t->gone_n++) % t->gone_cap] =
		(struct pt_gone){.pid = pid, .at_ns = p->gone_ns};
}

void ptable__execed(struct ptable *t, __u32 pid, __u64 now_ns)
{
	struct pt_proc *p = ptable__find(t, pid);

	if (p)
		drop(t, (size_t)(p - t->ents), PT_EXECED, now_ns);
}

size_t ptable__tick(struct ptable *t, __u64 now_ns)
{
	size_t n = 0;

	while (t->gone_n) {
		struct pt_gone g = t->gone[t->gone_head];
		struct pt_proc *p;

		if (now_ns < g.at_ns + t->linger_ns)
			break;
		t->gone_head = (t->gone_head + 1) % t->gone_cap;
		t->gone_n--;
		p = ptable__find(t, g.pid);
		/* the same exit: not a process of the pid made since (after an exec) */
		if (p && p->gone_ns == g.at_ns) {
			drop(t, (size_t)(p - t->ents), PT_EXITED, now_ns);
			n++;
		}
	}
	return n;
}

size_t ptable__sweep(struct ptable *t, __u64 now_ns, size_t budget)
{
	size_t marked = 0, looked = 0;

	for (size_t k = 0; k < t->cap && looked < budget; k++) {
		struct pt_proc *p = &t->ents[t->sweep_at];
		__u64 start;

		t->sweep_at = (t->sweep_at + 1) & (t->cap - 1);
		if (!p->pid || p->gone_ns || !p->start_ticks)
			continue;
		looked++;
		if (!proc_start_ticks(p->pid, &start) && start == p->start_ticks)
			continue;
		ptable__exited(t, p->pid, now_ns);
		t->st.swept++;
		marked++;
	}
	return marked;
}

void ptable__for_each(const struct ptable *t, pt_each_fn fn, void *ctx)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->ents[i].pid)
			fn(ctx, &t->ents[i]);
}

void ptable__stats(const struct ptable *t, struct ptable_stats *ret)
{
	*ret = t->st;
	ret->live = t->n;
}

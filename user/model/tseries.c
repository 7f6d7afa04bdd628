// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tseries.c: a model's samples in time: per-row chains of (slot, values), coarsened to fit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tseries.h"

void tseries_init(struct tseries *t)
{
	memset(t, 0, sizeof(*t));
	t->esize = sizeof(struct tseries_ent);
	t->res_ms = TSERIES_RES_MS;
	t->max_bytes = TSERIES_MAX_BYTES;
}

void tseries_free(struct tseries *t)
{
	free(t->ents);
	free(t->head);
	free(t->tail);
	t->ents = NULL;
	t->head = t->tail = NULL;
	t->n = t->cap = t->nrows = t->rows_used = 0;
}

size_t tseries_bytes(const struct tseries *t)
{
	return t->cap * t->esize + t->nrows * 2 * sizeof(__u32);
}

size_t tseries_budget(const struct tseries *t)
{
	size_t floor, b;

	if (!t->target_bytes)
		return t->max_bytes;
	floor = t->rows_used * TSERIES_ROW_FLOOR * t->esize + t->nrows * 2 * sizeof(__u32);
	b = t->target_bytes > floor ? t->target_bytes : floor;
	return b < t->max_bytes ? b : t->max_bytes;
}

static bool fit_budget(struct tseries *t);

int tseries_add_column(struct tseries *t)
{
	size_t old = t->esize, size = old + sizeof(__u64);

	if (t->cap) {
		char *e = realloc(t->ents, t->cap * size);

		if (!e)
			return -ENOMEM;
		t->ents = e;
		/* from the last: each entry moves up, past where the next one down still is */
		for (size_t i = t->n; i-- > 0;) {
			memmove(e + i * size, e + i * old, old);
			memset(e + i * size + old, 0, sizeof(__u64));
		}
	}
	t->esize = size;
	t->ncols++;
	(void)fit_budget(t); /* wider entries: fewer fit */
	return 0;
}

/* head/tail with room for row id row */
static int rows_reserve(struct tseries *t, __u32 row)
{
	size_t n = t->nrows ? t->nrows : 256;
	__u32 *h, *tl;

	if (row < t->nrows)
		return 0;
	while (n <= row)
		n *= 2;
	h = realloc(t->head, n * sizeof(*h));
	if (!h)
		return -ENOMEM;
	t->head = h;
	tl = realloc(t->tail, n * sizeof(*tl));
	if (!tl)
		return -ENOMEM;
	t->tail = tl;
	memset(h + t->nrows, 0, (n - t->nrows) * sizeof(*h));
	memset(tl + t->nrows, 0, (n - t->nrows) * sizeof(*tl));
	t->nrows = n;
	return 0;
}

static __u64 slot_of(const struct tseries *t)
{
	__u64 d = t->now > t->mono0 ? t->now - t->mono0 : 0;

	return d / ((__u64)t->res_ms * 1000000ull);
}

bool tseries_coarsen(struct tseries *t)
{
	__u32 *map;
	size_t k = 0;
	bool any = false;

	for (size_t i = 0; i < t->n && !any; i++)
		any = tseries_at(t, i)->slot != 0;
	if ((!any && slot_of(t) == 0) || t->res_ms > (1u << 30))
		return false;
	t->res_ms *= 2;
	t->coarsened++;
	for (size_t i = 0; i < t->n; i++)
		tseries_at(t, i)->slot >>= 1;
	/* adjacent entries of a chain now in one slot merge into the first; the rest die (row 0) */
	for (size_t r = 1; r < t->nrows; r++) {
		struct tseries_ent *p = NULL;

		for (__u32 e = t->head[r]; e;) {
			struct tseries_ent *c = tseries_at(t, e - 1);
			__u32 next = c->next;

			if (p && p->slot == c->slot) {
				for (unsigned int j = 0; j < t->ncols; j++)
					p->v[j] += c->v[j];
				p->next = next;
				c->row = 0;
				if (t->tail[r] == e)
					t->tail[r] =
						(__u32)((char *)p - t->ents) / (__u32)t->esize + 1;
			} else {
				p = c;
			}
			e = next;
		}
	}
	map = malloc((t->n ? t->n : 1) * sizeof(*map));
	if (!map)
		return true; /* merged, not compacted: the dead entries stay until the next time */
	for (size_t i = 0; i < t->n; i++) {
		struct tseries_ent *c = tseries_at(t, i);

		map[i] = 0;
		if (!c->row)
			continue;
		if (k != i)
			memmove(tseries_at(t, k), c, t->esize);
		map[i] = (__u32)++k;
	}
	for (size_t i = 0; i < k; i++) {
		struct tseries_ent *c = tseries_at(t, i);

		if (c->next)
			c->next = map[c->next - 1];
	}
	for (size_t r = 1; r < t->nrows; r++) {
		if (t->head[r])
			t->head[r] = map[t->head[r] - 1];
		if (t->tail[r])
			t->tail[r] = map[t->tail[r] - 1];
	}
	t->n = k;
	free(map);
	return true;
}

/*
 * The entries' array cut down to the budget (wider entries, more rows), coarsened as much as
 * that takes; false when even that could not fit (the time data dropped)
 */
static bool fit_budget(struct tseries *t)
{
	size_t rows = t->nrows * 2 * sizeof(__u32), cap, budget = tseries_budget(t);
	char *e;

	if (tseries_bytes(t) <= budget)
		return true;
	cap = budget > rows ? (budget - rows) / t->esize : 0;
	while (cap && t->n > cap - cap / 4)
		if (!tseries_coarsen(t))
			break;
	if (!cap || t->n > cap - cap / 4) {
		tseries_free(t);
		t->lost = true;
		return false;
	}
	e = realloc(t->ents, cap * t->esize);
	if (e || !cap) {
		t->ents = e;
		t->cap = cap;
	}
	return true;
}

/* room for one more entry: grown within the budget, else coarsened. 0, 1 (dropped) or -ENOMEM */
static int reserve(struct tseries *t)
{
	size_t cap;
	char *e;

	if (t->n < t->cap)
		return 0;
	cap = t->cap ? t->cap + t->cap / 2 : 256;
	if (cap > TSERIES_MAX_ENTRIES)
		cap = TSERIES_MAX_ENTRIES;
	if (cap > t->cap && cap * t->esize + t->nrows * 2 * sizeof(__u32) <= tseries_budget(t)) {
		e = realloc(t->ents, cap * t->esize);
		if (!e)
			return -ENOMEM;
		t->ents = e;
		t->cap = cap;
		return 0;
	}
	/* full: coarser until a quarter is free (merging adjacent slots drops nothing) */
	while (t->n >= t->cap || t->n > t->cap - t->cap / 4)
		if (!t->cap || !tseries_coarsen(t)) {
			/* one entry per row already and still too many: no time data then */
			tseries_free(t);
			t->lost = true;
			return 1;
		}
	return 0;
}

int tseries_add(struct tseries *t, __u32 row, unsigned int col, __u64 value)
{
	struct tseries_ent *c;
	__u64 slot;
	int err;

	if (!t->now || !t->has_clock || t->lost || !value || col >= t->ncols)
		return 0;
	err = rows_reserve(t, row);
	if (err)
		return err;
	if (row >= t->rows_used)
		t->rows_used = (size_t)row + 1;
	if (!fit_budget(t))
		return 0;
	for (;;) {
		/* with a target, a row holds TSERIES_TARGET_SLOTS entries at most */
		while ((slot = slot_of(t)) >= 0xffffffffull ||
		       (t->target_bytes && slot >= TSERIES_TARGET_SLOTS))
			if (!tseries_coarsen(t))
				return 0;
		if (t->tail[row]) {
			c = tseries_at(t, t->tail[row] - 1);
			if (c->slot == slot) {
				c->v[col] += value;
				return 0;
			}
		}
		if (t->n < t->cap)
			break;
		err = reserve(t);
		if (err)
			return err < 0 ? err : 0;
	}
	c = tseries_at(t, t->n);
	memset(c, 0, t->esize);
	c->row = row;
	c->slot = (__u32)slot;
	c->v[col] = value;
	if (t->tail[row])
		tseries_at(t, t->tail[row] - 1)->next = (__u32)(t->n + 1);
	else
		t->head[row] = (__u32)(t->n + 1);
	t->tail[row] = (__u32)(++t->n);
	return 0;
}

int tseries_remap(struct tseries *t, const __u32 *to, size_t nold, size_t nnew)
{
	size_t nr = nnew + 1 > 256 ? nnew + 1 : 256;
	__u32 *h, *tl;

	if (!t->n)
		return 0;
	h = calloc(nr, sizeof(*h));
	tl = calloc(nr, sizeof(*tl));
	if (!h || !tl) {
		free(h);
		free(tl);
		return -ENOMEM;
	}
	for (size_t r = 1; r < nold && r < t->nrows; r++) {
		__u32 d = to[r];

		if (!t->head[r] || !d || d >= nr)
			continue;
		for (__u32 e = t->head[r]; e; e = tseries_at(t, e - 1)->next)
			tseries_at(t, e - 1)->row = d;
		if (tl[d])
			tseries_at(t, tl[d] - 1)->next = t->head[r];
		else
			h[d] = t->head[r];
		tl[d] = t->tail[r];
	}
	free(t->head);
	free(t->tail);
	t->head = h;
	t->tail = tl;
	t->nrows = nr;
	return 0;
}

void tseries_fit(struct tseries *t, __u32 row, unsigned int col, unsigned int ref, __u64 value,
		 __u64 ref_total)
{
	unsigned __int128 timed;
	__u64 s = 0, done = 0, prev = 0;

	if (row >= t->nrows || col >= t->ncols || ref >= t->ncols)
		return;
	for (__u32 e = t->head[row]; e; e = tseries_at(t, e - 1)->next)
		s += tseries_at(t, e - 1)->v[ref];
	/* the timed share of value: all of it when all the ref is timed */
	timed = s >= ref_total || !ref_total ? value : (unsigned __int128)value * s / ref_total;
	for (__u32 e = t->head[row]; e; e = tseries_at(t, e - 1)->next) {
		struct tseries_ent *c = tseries_at(t, e - 1);
		__u64 at;

		done += c->v[ref];
		at = s ? (__u64)(timed * done / s) : 0;
		c->v[col] = at - prev;
		prev = at;
	}
}

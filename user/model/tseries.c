// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tseries.c: a model's samples in time: (row, slot, values) entries, coarsened to fit. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tseries.h"

void tseries_init(struct tseries *t)
{
	memset(t, 0, sizeof(*t));
	t->esize = sizeof(struct tseries_ent);
	t->res_ms = TSERIES_RES_MS;
	t->max_bytes = TSERIES_MAX_BYTES;
}

static void chains_free(struct tseries *t)
{
	free(t->chain_first);
	free(t->chain_next);
	t->chain_first = t->chain_next = NULL;
	t->chain_rows = t->chain_cap = 0;
	t->chains_ok = false;
}

void tseries_free(struct tseries *t)
{
	free(t->ents);
	free(t->tail);
	free(t->big);
	chains_free(t);
	t->ents = NULL;
	t->tail = NULL;
	t->big = NULL;
	t->n = t->cap = t->nrows = t->rows_used = 0;
	t->nbig = t->big_cap = 0;
}

/* the time data given up (no memory for it): untimed from here on */
static void lose(struct tseries *t)
{
	tseries_free(t);
	t->lost = true;
}

/*
 * Column col of entry e set to x: in the entry when it fits, else in big[] (e's own place
 * there when it has one, so a value that went big stays big). 0 or -ENOMEM
 */
static int val_set(struct tseries *t, struct tseries_ent *e, unsigned int col, __u64 x)
{
	__u64 *b;
	size_t cap;

	if (e->v[col] & TSERIES_BIG) {
		t->big[e->v[col] & ~TSERIES_BIG] = x;
		return 0;
	}
	if (x < TSERIES_BIG) {
		e->v[col] = (__u32)x;
		return 0;
	}
	if (t->nbig == t->big_cap) {
		cap = t->big_cap ? t->big_cap + t->big_cap / 2 : 64;
		if (cap > TSERIES_BIG)
			cap = TSERIES_BIG;
		if (cap <= t->nbig)
			return -ENOMEM;
		b = realloc(t->big, cap * sizeof(*b));
		if (!b)
			return -ENOMEM;
		t->big = b;
		t->big_cap = cap;
	}
	t->big[t->nbig] = x;
	e->v[col] = TSERIES_BIG | (__u32)t->nbig++;
	return 0;
}

/*
 * big[] without the places no entry names (merged or dead entries'), in the entries' order;
 * left as it is when there is no memory for the copy (it is only larger)
 */
static void big_compact(struct tseries *t)
{
	size_t live = 0, k = 0;
	__u64 *b;

	if (!t->nbig)
		return;
	for (size_t i = 0; i < t->n; i++)
		for (unsigned int j = 0; j < t->ncols; j++)
			live += !!(tseries_at(t, i)->v[j] & TSERIES_BIG);
	if (live == t->nbig)
		return;
	b = live ? malloc(live * sizeof(*b)) : NULL;
	if (live && !b)
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct tseries_ent *e = tseries_at(t, i);

		for (unsigned int j = 0; j < t->ncols; j++)
			if (e->v[j] & TSERIES_BIG) {
				b[k] = t->big[e->v[j] & ~TSERIES_BIG];
				e->v[j] = TSERIES_BIG | (__u32)k++;
			}
	}
	free(t->big);
	t->big = b;
	t->nbig = t->big_cap = live;
}

/* the links go with the change that made them stale (they are built again when walked) */
static inline void chains_drop(struct tseries *t)
{
	if (t->chain_first || t->chain_next)
		chains_free(t);
}

/* the per-row array's bytes */
static size_t rows_bytes(const struct tseries *t)
{
	return t->nrows * sizeof(__u32);
}

/* beside the entries: the per-row array and the big values */
static size_t side_bytes(const struct tseries *t)
{
	return rows_bytes(t) + t->big_cap * sizeof(*t->big);
}

/* what the budget holds: the entries and what is beside them (not the walks' links) */
static size_t kept_bytes(const struct tseries *t)
{
	return t->cap * t->esize + side_bytes(t);
}

size_t tseries_bytes(const struct tseries *t)
{
	return kept_bytes(t) + (t->chain_rows + t->chain_cap) * sizeof(__u32);
}

size_t tseries_budget(const struct tseries *t)
{
	size_t floor, b;

	if (!t->target_bytes)
		return t->max_bytes;
	floor = t->rows_used * TSERIES_ROW_FLOOR * t->esize + side_bytes(t);
	b = t->target_bytes > floor ? t->target_bytes : floor;
	return b < t->max_bytes ? b : t->max_bytes;
}

static bool fit_budget(struct tseries *t);

int tseries_add_column(struct tseries *t)
{
	size_t old = t->esize, size = old + sizeof(__u32);

	if (t->cap) {
		char *e = realloc(t->ents, t->cap * size);

		if (!e)
			return -ENOMEM;
		t->ents = e;
		/* from the last: each entry moves up, past where the next one down still is */
		for (size_t i = t->n; i-- > 0;) {
			memmove(e + i * size, e + i * old, old);
			memset(e + i * size + old, 0, sizeof(__u32));
		}
	}
	t->esize = size;
	t->ncols++;
	(void)fit_budget(t); /* wider entries: fewer fit */
	return 0;
}

/* tail with room for row id row */
static int rows_reserve(struct tseries *t, __u32 row)
{
	size_t n = t->nrows ? t->nrows : 256;
	__u32 *tl;

	if (row < t->nrows)
		return 0;
	while (n <= row)
		n *= 2;
	tl = realloc(t->tail, n * sizeof(*tl));
	if (!tl)
		return -ENOMEM;
	t->tail = tl;
	memset(tl + t->nrows, 0, (n - t->nrows) * sizeof(*tl));
	t->nrows = n;
	return 0;
}

static __u64 slot_of(const struct tseries *t)
{
	__u64 d = t->now > t->mono0 ? t->now - t->mono0 : 0;

	return d / ((__u64)t->res_ms * 1000000ull);
}

/*
 * The whole pages past the last entry given back (a coarsening's merges leave them written):
 * resident memory follows the entries held, not the most there ever were. They read as
 * zeros when touched again, and only entries written first are read.
 */
static void release_tail(struct tseries *t)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t from, to;

	if (page <= 0 || !t->ents)
		return;
	from = ((uintptr_t)(t->ents + t->n * t->esize) + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	to = (uintptr_t)(t->ents + t->cap * t->esize) & ~((uintptr_t)page - 1);
	if (to > from && to - from >= TSERIES_RELEASE_MIN)
		(void)madvise((void *)from, to - from, MADV_DONTNEED);
}

bool tseries_coarsen(struct tseries *t)
{
	size_t k = 0;
	bool any = false;

	for (size_t i = 0; i < t->n && !any; i++)
		any = tseries_at(t, i)->slot != 0;
	if ((!any && slot_of(t) == 0) || t->res_ms > (1u << 30))
		return false;
	t->res_ms *= 2;
	t->coarsened++;
	/*
	 * In the array's order (each row's too): an entry now in its row's last kept entry's
	 * slot merges into it, dead ones go, the rest move down; tail follows the kept ones
	 */
	if (t->tail)
		memset(t->tail, 0, rows_bytes(t));
	for (size_t i = 0; i < t->n; i++) {
		struct tseries_ent *c = tseries_at(t, i);
		__u32 r = c->row;

		c->slot >>= 1;
		if (!r || r >= t->nrows)
			continue;
		if (t->tail[r]) {
			struct tseries_ent *p = tseries_at(t, t->tail[r] - 1);

			if (p->slot == c->slot) {
				for (unsigned int j = 0; j < t->ncols; j++) {
					__u64 x = tseries_val(t, p, j) + tseries_val(t, c, j);

					/* c's place in big[] is p's now: c goes */
					if (!(p->v[j] & TSERIES_BIG) && (c->v[j] & TSERIES_BIG))
						p->v[j] = c->v[j];
					if (val_set(t, p, j, x)) {
						lose(t); /* a new big value, no memory for it */
						return false;
					}
				}
				continue;
			}
		}
		if (k != i)
			memmove(tseries_at(t, k), c, t->esize);
		t->tail[r] = (__u32)++k;
	}
	t->n = k;
	big_compact(t);
	chains_drop(t);
	release_tail(t);
	return true;
}

/*
 * The entries' array cut down to the budget (wider entries, more rows), coarsened as much as
 * that takes; false when even that could not fit (the time data dropped)
 */
static bool fit_budget(struct tseries *t)
{
	size_t side = side_bytes(t), cap, budget = tseries_budget(t);
	char *e;

	if (kept_bytes(t) <= budget)
		return true;
	cap = budget > side ? (budget - side) / t->esize : 0;
	while (cap && t->n > cap - cap / 4)
		if (!tseries_coarsen(t))
			break;
	if (t->lost)
		return false;
	if (!cap || t->n > cap - cap / 4) {
		lose(t);
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
	if (cap > t->cap && cap * t->esize + side_bytes(t) <= tseries_budget(t)) {
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
			lose(t);
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
			if (c->slot == slot)
				return val_set(t, c, col, tseries_val(t, c, col) + value);
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
	err = val_set(t, c, col, value);
	if (err)
		return err;
	t->tail[row] = (__u32)(++t->n);
	chains_drop(t);
	return 0;
}

int tseries_remap(struct tseries *t, const __u32 *to, size_t nold, size_t nnew)
{
	size_t nr = nnew + 1 > 256 ? nnew + 1 : 256;
	__u32 *tl;

	if (!t->n)
		return 0;
	tl = calloc(nr, sizeof(*tl));
	if (!tl)
		return -ENOMEM;
	/* a merged row's entries are its old rows' in the order they came */
	for (size_t k = 0; k < t->n; k++) {
		struct tseries_ent *c = tseries_at(t, k);
		__u32 d = c->row && c->row < nold ? to[c->row] : 0;

		if (!d || d >= nr) {
			c->row = 0; /* dead: the next coarsening drops it */
			continue;
		}
		c->row = d;
		tl[d] = (__u32)(k + 1);
	}
	free(t->tail);
	t->tail = tl;
	t->nrows = nr;
	chains_free(t);
	return 0;
}

/* the walks' links, built again after a change (the entries themselves stay as they are) */
static bool chains_build(struct tseries *t)
{
	__u32 *f, *nx;

	if (t->chains_ok)
		return true;
	if (t->chain_rows < t->nrows) {
		f = realloc(t->chain_first, t->nrows * sizeof(*f));
		if (!f)
			return false;
		t->chain_first = f;
		t->chain_rows = t->nrows;
	}
	if (t->chain_cap < t->n) {
		nx = realloc(t->chain_next, t->cap * sizeof(*nx));
		if (!nx)
			return false;
		t->chain_next = nx;
		t->chain_cap = t->cap;
	}
	memset(t->chain_first, 0, t->chain_rows * sizeof(*t->chain_first));
	/* from the last: each entry goes in front of its row's chain */
	for (size_t k = t->n; k-- > 0;) {
		__u32 r = tseries_at(t, k)->row;

		if (!r || r >= t->chain_rows) {
			t->chain_next[k] = 0;
			continue;
		}
		t->chain_next[k] = t->chain_first[r];
		t->chain_first[r] = (__u32)(k + 1);
	}
	t->chains_ok = true;
	return true;
}

/* without links (no memory for them): the row's next entry from index k on, by a scan */
static size_t scan_row(const struct tseries *t, __u32 row, size_t k)
{
	for (; k < t->n; k++)
		if (tseries_at(t, k)->row == row)
			return k + 1;
	return 0;
}

size_t tseries_row_first(const struct tseries *t, __u32 row)
{
	/* building the links is a cache's fill: no entry changes (tseries.h) */
	struct tseries *w = (struct tseries *)t;

	if (!row || row >= t->nrows || !t->tail[row])
		return 0;
	if (chains_build(w))
		return t->chain_first[row];
	return scan_row(t, row, 0);
}

size_t tseries_row_next(const struct tseries *t, size_t k)
{
	if (k >= t->n)
		return 0;
	if (t->chains_ok)
		return t->chain_next[k];
	return scan_row(t, tseries_at(t, k)->row, k + 1);
}

void tseries_fit(struct tseries *t, __u32 row, unsigned int col, unsigned int ref, __u64 value,
		 __u64 ref_total)
{
	unsigned __int128 timed;
	__u64 s = 0, done = 0, prev = 0;

	if (row >= t->nrows || col >= t->ncols || ref >= t->ncols)
		return;
	for (size_t e = tseries_row_first(t, row); e; e = tseries_row_next(t, e - 1))
		s += tseries_val(t, tseries_at(t, e - 1), ref);
	/* the timed share of value: all of it when all the ref is timed */
	timed = s >= ref_total || !ref_total ? value : (unsigned __int128)value * s / ref_total;
	for (size_t e = tseries_row_first(t, row); e; e = tseries_row_next(t, e - 1)) {
		struct tseries_ent *c = tseries_at(t, e - 1);
		__u64 at;

		done += tseries_val(t, c, ref);
		at = s ? (__u64)(timed * done / s) : 0;
		if (val_set(t, c, col, at - prev)) {
			lose(t); /* a new big value, no memory for it */
			return;
		}
		prev = at;
	}
}

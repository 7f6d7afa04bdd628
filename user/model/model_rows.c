// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * model_rows.c: the model's rows, one of values a (stack, labels), in columns added as
 * values first come, and when their samples happened (tseries.c): adding, setting, reading,
 * the clock, rows copied with their times between models. Part of the model (model_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

__u64 row_hash(jp_id stack, jp_id labels)
{
	return mix((__u64)stack << 32 | labels);
}

__u64 row_hash_of(const struct table *t, const void *e)
{
	const struct row_key *k = e;

	(void)t;
	return row_hash(k->stack, k->labels);
}

bool row_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	(void)ctx;
	(void)size;
	return !memcmp(a, b, sizeof(struct row_key));
}

static __u64 *row_vals(const struct model *m, jp_id id)
{
	return (__u64 *)((char *)table_at(&m->rows, id) + sizeof(struct row_key));
}

/* a column for v: the rows are laid out again one value wider */
static int add_column(struct model *m, enum jp_value v)
{
	size_t old = m->rows.elem_size, size = old + sizeof(__u64);
	char *e = NULL;

	if (m->rows.cap) {
		if (model_refuse(m, m->rows.cap * size))
			return -ENOSPC;
		e = malloc(m->rows.cap * size);
		if (!e)
			return -ENOMEM;
	}
	/* the time entries too: a failure there leaves both as they were */
	if (tseries_add_column(&m->ts)) {
		free(e);
		return -ENOMEM;
	}
	if (e) {
		for (size_t id = 0; id < m->rows.n; id++) {
			memcpy(e + id * size, (char *)m->rows.elems + id * old, old);
			memset(e + id * size + old, 0, sizeof(__u64));
		}
		free(m->rows.elems);
		m->rows.elems = e;
	}
	m->rows.elem_size = size;
	m->col[v] = (signed char)m->ncols;
	m->col_val[m->ncols++] = v;
	return 0;
}

int model__add(struct model *m, jp_id stack, jp_id labels, enum jp_value v, __u64 value)
{
	union {
		struct row_key k;
		__u64 all[1 + JP_VAL_MAX];
	} r;
	__u64 over;
	jp_id id;
	int err;

	if (v >= JP_VAL_MAX || !stack || !model__get_labels(m, labels))
		return -EINVAL;
	if (m->col[v] < 0 && (err = add_column(m, v)))
		return err;
	if (m->last_row && m->last_key.stack == stack && m->last_key.labels == labels) {
		id = m->last_row;
	} else {
		memset(&r, 0, sizeof(r));
		r.k.stack = stack;
		r.k.labels = labels;
		over = m->over_budget;
		id = table_intern(&m->rows, &r, row_hash(stack, labels), row_eq, NULL);
		if (!id)
			return m->over_budget != over ? -ENOSPC : -ENOMEM;
		m->last_key = r.k;
		m->last_row = id;
	}
	row_vals(m, id)[m->col[v]] += value;
	m->totals[v] += value;
	/* a time entry that cannot be had (out of memory) leaves the row's time short: not an error */
	(void)tseries_add(&m->ts, id, (unsigned int)m->col[v], value);
	return 0;
}

int model__set(struct model *m, size_t i, enum jp_value v, __u64 value)
{
	__u64 *val;

	if (v >= JP_VAL_MAX || m->col[v] < 0 || i >= model__rows(m))
		return -EINVAL;
	val = &row_vals(m, (jp_id)(i + 1))[m->col[v]];
	/* CPU time goes to a row's slots by their samples (model/spread.c), others keep their shape */
	if (v == JP_VAL_CPU_NS && m->col[JP_VAL_CPU_SAMPLES] >= 0)
		tseries_fit(&m->ts, (__u32)(i + 1), (unsigned int)m->col[v],
			    (unsigned int)m->col[JP_VAL_CPU_SAMPLES], value,
			    row_vals(m, (jp_id)(i + 1))[m->col[JP_VAL_CPU_SAMPLES]]);
	else
		tseries_fit(&m->ts, (__u32)(i + 1), (unsigned int)m->col[v],
			    (unsigned int)m->col[v], value, *val);
	m->totals[v] += value - *val;
	*val = value;
	return 0;
}

void model__reset(struct model *m)
{
	table_free(&m->rows);
	m->last_row = 0;
	tseries_free(&m->ts);
	/* the next rows (a store's next segment) start at 100 ms again */
	m->ts.res_ms = TSERIES_RES_MS;
	m->ts.coarsened = 0;
	m->ts.lost = false;
	memset(m->totals, 0, sizeof(m->totals));
}

size_t model__rows(const struct model *m)
{
	return m->rows.n ? m->rows.n - 1 : 0;
}

const struct jp_sample_row *model__row(const struct model *m, size_t i, struct jp_sample_row *buf)
{
	const struct row_key *k;
	const __u64 *vals;

	if (i >= model__rows(m))
		return NULL;
	k = table_at(&m->rows, (jp_id)(i + 1));
	vals = row_vals(m, (jp_id)(i + 1));
	memset(buf, 0, sizeof(*buf));
	buf->stack = k->stack;
	buf->labels = k->labels;
	for (unsigned int c = 0; c < m->ncols; c++)
		buf->values[m->col_val[c]] = vals[c];
	return buf;
}

__u64 model__total(const struct model *m, enum jp_value v)
{
	return v < JP_VAL_MAX ? m->totals[v] : 0;
}

void model__set_clock(struct model *m, __u64 mono_ns, __u64 wall_ns)
{
	struct tseries *t = &m->ts;
	__u64 res = (__u64)t->res_ms * 1000000ull, d;

	if (t->has_clock && t->n) {
		/*
		 * entries exist: slot 0 moves by whole slots (to the one mono_ns is in), so each
		 * entry keeps its slot's bounds; those before the new start go to slot 0
		 */
		if (mono_ns >= t->mono0) {
			d = (mono_ns - t->mono0) / res;
			for (size_t k = 0; k < t->n; k++)
				tseries_at(t, k)->slot = tseries_at(t, k)->slot > d
								 ? tseries_at(t, k)->slot - (__u32)d
								 : 0;
			/* the wall time at slot d's start */
			wall_ns -= mono_ns - (t->mono0 + d * res);
			mono_ns = t->mono0 + d * res;
		} else {
			return; /* an earlier start with entries: kept as it is */
		}
	}
	t->mono0 = mono_ns;
	t->wall0 = wall_ns;
	t->has_clock = true;
}

void model__set_time_res(struct model *m, __u32 res_ms)
{
	__u32 r = TSERIES_RES_MS;

	if (m->ts.n || !res_ms)
		return;
	while (r < res_ms && r <= (1u << 30))
		r *= 2;
	m->ts.res_ms = r;
	m->ts.coarsened = 0;
	for (__u32 x = TSERIES_RES_MS; x < r; x *= 2)
		m->ts.coarsened++;
}

void model__at(struct model *m, __u64 mono_ns)
{
	m->ts.now = mono_ns;
}

__u64 model__mono_of(const struct model *m, __u64 wall_ns)
{
	const struct tseries *t = &m->ts;

	if (!t->has_clock)
		return 0;
	if (wall_ns >= t->wall0)
		return t->mono0 + (wall_ns - t->wall0);
	/* before the start: slot 0 (and never 0, "untimed") */
	return t->mono0 > t->wall0 - wall_ns ? t->mono0 - (t->wall0 - wall_ns) : 1;
}

void model__time_info(const struct model *m, struct model_time *ret)
{
	const struct tseries *t = &m->ts;

	memset(ret, 0, sizeof(*ret));
	ret->has_clock = t->has_clock;
	ret->start_unix_ns = t->wall0;
	ret->res_ms = t->res_ms;
	ret->coarsened = t->coarsened;
	ret->lost = t->lost;
	ret->entries = t->n;
	ret->bytes = tseries_bytes(t);
	for (size_t k = 0; k < t->n; k++)
		if (tseries_at(t, k)->row && tseries_at(t, k)->slot > ret->max_slot)
			ret->max_slot = tseries_at(t, k)->slot;
}

size_t model__time_first(const struct model *m, size_t i)
{
	return i + 1 < m->ts.nrows ? tseries_row_first(&m->ts, (__u32)(i + 1)) : 0;
}

size_t model__time_next(const struct model *m, size_t k)
{
	return k ? tseries_row_next(&m->ts, k - 1) : 0;
}

const struct jp_time_ent *model__time(const struct model *m, size_t k, struct jp_time_ent *buf)
{
	const struct tseries_ent *e;

	if (k >= m->ts.n)
		return NULL;
	e = tseries_at(&m->ts, k);
	memset(buf, 0, sizeof(*buf));
	buf->row = e->row ? e->row - 1 : (size_t)-1; /* a dead entry (row 0) belongs to no row */
	buf->slot = e->slot;
	for (unsigned int c = 0; c < m->ncols && c < m->ts.ncols; c++)
		buf->values[m->col_val[c]] = tseries_val(&m->ts, e, c);
	return buf;
}

void model__set_time_max_bytes(struct model *m, size_t max_bytes)
{
	m->ts.max_bytes = max_bytes;
}

void model__set_time_target_bytes(struct model *m, size_t target_bytes)
{
	m->ts.target_bytes = target_bytes;
}

static int add_row(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
		   size_t src_i, bool all, __u64 since_ns, __u64 until_ns);

int model__add_row_timed(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
			 size_t src_i)
{
	return add_row(dst, stack, labels, src, src_i, true, 0, 0);
}

int model__add_row_range(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
			 size_t src_i, __u64 since_ns, __u64 until_ns)
{
	return add_row(dst, stack, labels, src, src_i, false, since_ns, until_ns);
}

/* all: every value, the untimed rest too; else the entries of the range only */
static int add_row(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
		   size_t src_i, bool all, __u64 since_ns, __u64 until_ns)
{
	struct jp_sample_row rb;
	const struct jp_sample_row *r = model__row(src, src_i, &rb);
	__u64 left[JP_VAL_MAX], now = dst->ts.now;
	struct jp_time_ent eb;
	int err = 0;

	if (!r)
		return -EINVAL;
	if (!dst->ts.has_clock && src->ts.has_clock) {
		model__set_clock(dst, src->ts.mono0, src->ts.wall0);
		if (!dst->ts.n)
			dst->ts.res_ms = src->ts.res_ms;
	}
	memcpy(left, r->values, sizeof(left));
	for (size_t k = model__time_first(src, src_i); k && !err; k = model__time_next(src, k)) {
		const struct jp_time_ent *e = model__time(src, k - 1, &eb);
		__u64 wall = src->ts.wall0 + (__u64)e->slot * src->ts.res_ms * 1000000ull;

		bool in = all || (wall >= since_ns && wall < until_ns);

		model__at(dst, model__mono_of(dst, wall));
		for (int v = 0; v < JP_VAL_MAX && !err; v++) {
			__u64 x = e->values[v] < left[v] ? e->values[v] : left[v];

			if (x && in)
				err = model__add(dst, stack, labels, (enum jp_value)v, x);
			left[v] -= x;
		}
	}
	model__at(dst, 0);
	for (int v = 0; v < JP_VAL_MAX && !err && all; v++)
		if (left[v])
			err = model__add(dst, stack, labels, (enum jp_value)v, left[v]);
	model__at(dst, now);
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hmap.c: the one hash map (see hmap.h): open addressing, keyed hash, backward shift. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/hashkey.h"
#include "util/hmap.h"

#define HMAP_MIN_CAP 8

static __u64 key_hash(__u64 k1, __u64 k2)
{
	/* a u64 key costs one round; a pair mixes its second half in first */
	return k2 ? hash_keyed(k1 ^ hash_keyed(k2 ^ 0x632be59bd9b4e019ull)) : hash_keyed(k1);
}

/* a key's first slot: the hash's top bits (its best mixed) */
static size_t home(const struct hmap *m, __u64 k1, __u64 k2)
{
	return (size_t)(key_hash(k1, k2) >> m->shift);
}

static bool is_used(const struct hmap *m, size_t i)
{
	return m->used[i / 64] >> (i % 64) & 1;
}

static void set_used(struct hmap *m, size_t i, bool on)
{
	if (on)
		m->used[i / 64] |= 1ull << (i % 64);
	else
		m->used[i / 64] &= ~(1ull << (i % 64));
}

static size_t words_of(size_t cap)
{
	return (cap + 63) / 64;
}

static size_t bytes_of(size_t cap)
{
	return cap ? cap * sizeof(struct hmap_ent) + words_of(cap) * sizeof(__u64) : 0;
}

void hmap_init(struct hmap *m, size_t min_cap, size_t max_n)
{
	size_t c = HMAP_MIN_CAP;

	while (c < min_cap && c <= SIZE_MAX / 4)
		c *= 2;
	*m = (struct hmap){.min_cap = c, .max_n = max_n};
}

void hmap_set_charge(struct hmap *m, hmap_charge_fn fn, void *ctx)
{
	m->charge = fn;
	m->charge_ctx = ctx;
}

void hmap_free(struct hmap *m)
{
	if (!m)
		return;
	free(m->ents);
	free(m->used);
	if (m->cap && m->charge)
		(void)m->charge(m->charge_ctx, -(long)bytes_of(m->cap));
	m->ents = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
	m->shift = 0;
}

/* the slot of the key, or the empty slot that ends its run (there is one: load <= 3/4) */
static size_t slot_of(const struct hmap *m, __u64 k1, __u64 k2)
{
	size_t i = home(m, k1, k2);

	while (is_used(m, i) && (m->ents[i].k1 != k1 || m->ents[i].k2 != k2))
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* the first empty slot of the key's run */
static size_t free_slot(const struct hmap *m, __u64 k1, __u64 k2)
{
	size_t i = home(m, k1, k2);

	while (is_used(m, i))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int resize(struct hmap *m, size_t ncap)
{
	struct hmap_ent *oe = m->ents, *ne;
	__u64 *ou = m->used, *nu;
	size_t ocap = m->cap;
	unsigned int shift = 64;

	if (ncap > SIZE_MAX / 2 / sizeof(*ne) || ncap > LONG_MAX / 2 / sizeof(*ne))
		return -ENOMEM;
	if (m->charge && m->charge(m->charge_ctx, (long)bytes_of(ncap)))
		return -ENOSPC;
	ne = malloc(ncap * sizeof(*ne)); /* a slot is read only when its bit says it is used */
	nu = calloc(words_of(ncap), sizeof(*nu));
	if (!ne || !nu) {
		free(ne);
		free(nu);
		if (m->charge)
			(void)m->charge(m->charge_ctx, -(long)bytes_of(ncap));
		return -ENOMEM;
	}
	for (size_t c = ncap; c > 1; c /= 2)
		shift--;
	m->ents = ne;
	m->used = nu;
	m->cap = ncap;
	m->shift = shift;
	for (size_t i = 0; i < ocap; i++) {
		if (ou[i / 64] >> (i % 64) & 1) {
			size_t j = free_slot(m, oe[i].k1, oe[i].k2);

			ne[j] = oe[i];
			set_used(m, j, true);
		}
	}
	free(oe);
	free(ou);
	if (ocap && m->charge)
		(void)m->charge(m->charge_ctx, -(long)bytes_of(ocap));
	return 0;
}

/* room for one more entry: 0, -ENOSPC (max_n, budget) or -ENOMEM */
static int room(struct hmap *m)
{
	int err;

	if (m->max_n && m->n >= m->max_n)
		return -ENOSPC;
	if ((m->n + 1) * 2 <= m->cap)
		return 0;
	err = resize(m, m->cap ? m->cap * 2 : m->min_cap ? m->min_cap : HMAP_MIN_CAP);
	/* a failed grow: on up to 3/4 full, the probes only get longer */
	if (err && m->cap && (m->n + 1) * 4 <= m->cap * 3)
		return 0;
	return err;
}

/* a map a burst left mostly empty gets smaller (not during hmap_filter) */
static void maybe_shrink(struct hmap *m)
{
	size_t c = m->cap;

	if (m->no_shrink)
		return;
	while (c > m->min_cap && c > HMAP_MIN_CAP && m->n * 8 < c)
		c /= 2;
	if (c != m->cap)
		(void)resize(m, c); /* no memory: it stays as large */
}

/* takes slot i out: the entries after it in its run move back where a lookup finds them */
static void remove_slot(struct hmap *m, size_t i)
{
	size_t j = i, mask = m->cap - 1;

	for (;;) {
		size_t h;

		j = (j + 1) & mask;
		if (!is_used(m, j))
			break;
		h = home(m, m->ents[j].k1, m->ents[j].k2);
		/* j stays when its home lies cyclically in (i, j] */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		m->ents[i] = m->ents[j];
		i = j;
	}
	set_used(m, i, false);
	m->n--;
}

__u64 *hmap_find2(const struct hmap *m, __u64 k1, __u64 k2)
{
	size_t i;

	if (!m->n)
		return NULL;
	i = slot_of(m, k1, k2);
	return is_used(m, i) ? &m->ents[i].val : NULL;
}

__u64 *hmap_get2(struct hmap *m, __u64 k1, __u64 k2, bool *is_new)
{
	size_t i;
	int err;

	*is_new = false;
	if (m->n) {
		i = slot_of(m, k1, k2);
		if (is_used(m, i))
			return &m->ents[i].val;
	}
	err = room(m);
	if (err) {
		errno = -err;
		return NULL;
	}
	i = free_slot(m, k1, k2);
	m->ents[i] = (struct hmap_ent){.k1 = k1, .k2 = k2};
	set_used(m, i, true);
	m->n++;
	*is_new = true;
	return &m->ents[i].val;
}

int hmap_put2(struct hmap *m, __u64 k1, __u64 k2, __u64 val)
{
	bool is_new;
	__u64 *v = hmap_get2(m, k1, k2, &is_new);

	if (!v)
		return -errno;
	*v = val;
	return is_new ? 0 : 1;
}

int hmap_add2(struct hmap *m, __u64 k1, __u64 k2, __u64 val)
{
	size_t i;
	int err = room(m);

	if (err)
		return err;
	i = free_slot(m, k1, k2);
	m->ents[i] = (struct hmap_ent){.k1 = k1, .k2 = k2, .val = val};
	set_used(m, i, true);
	m->n++;
	return 0;
}

__u64 *hmap_find_next2(const struct hmap *m, __u64 k1, __u64 k2, size_t *pos)
{
	size_t i;

	if (!m->n)
		return NULL;
	/* *pos: 1 + the slot to look at next */
	for (i = *pos ? *pos - 1 : home(m, k1, k2); is_used(m, i); i = (i + 1) & (m->cap - 1)) {
		if (m->ents[i].k1 == k1 && m->ents[i].k2 == k2) {
			*pos = ((i + 1) & (m->cap - 1)) + 1;
			return &m->ents[i].val;
		}
	}
	*pos = i + 1;
	return NULL;
}

int hmap_del2(struct hmap *m, __u64 k1, __u64 k2, __u64 *ret_val)
{
	__u64 *v = hmap_find2(m, k1, k2);

	if (!v)
		return -ENOENT;
	if (ret_val)
		*ret_val = *v;
	hmap_del_at(m, v);
	return 0;
}

void hmap_del_at(struct hmap *m, __u64 *val)
{
	struct hmap_ent *e = (struct hmap_ent *)((char *)val - offsetof(struct hmap_ent, val));

	remove_slot(m, (size_t)(e - m->ents));
	maybe_shrink(m);
}

__u64 *hmap_find(const struct hmap *m, __u64 k)
{
	return hmap_find2(m, k, 0);
}

__u64 *hmap_get(struct hmap *m, __u64 k, bool *is_new)
{
	return hmap_get2(m, k, 0, is_new);
}

int hmap_put(struct hmap *m, __u64 k, __u64 val)
{
	return hmap_put2(m, k, 0, val);
}

int hmap_del(struct hmap *m, __u64 k, __u64 *ret_val)
{
	return hmap_del2(m, k, 0, ret_val);
}

__u64 *hmap_next(const struct hmap *m, size_t *pos, __u64 *ret_k1, __u64 *ret_k2)
{
	for (size_t i = *pos; i < m->cap; i++) {
		if (!is_used(m, i))
			continue;
		*pos = i + 1;
		if (ret_k1)
			*ret_k1 = m->ents[i].k1;
		if (ret_k2)
			*ret_k2 = m->ents[i].k2;
		return &m->ents[i].val;
	}
	*pos = m->cap;
	return NULL;
}

void hmap_filter(struct hmap *m, hmap_drop_fn drop, void *ctx)
{
	size_t mask = m->cap - 1, i, left;

	if (!m->n)
		return;
	/*
	 * Walk from just after an empty slot, once around: no run crosses it, so a removal
	 * only moves entries not yet seen back into the slot just looked at, looked at again.
	 */
	for (i = 0; is_used(m, i); i++)
		;
	m->no_shrink = true;
	for (i = (i + 1) & mask, left = m->cap - 1; left;) {
		struct hmap_ent *e = &m->ents[i];

		if (is_used(m, i) && drop(ctx, e->k1, e->k2, e->val)) {
			remove_slot(m, i);
			continue;
		}
		i = (i + 1) & mask;
		left--;
	}
	m->no_shrink = false;
	maybe_shrink(m);
}

size_t hmap_count(const struct hmap *m)
{
	return m->n;
}

size_t hmap_bytes(const struct hmap *m)
{
	return bytes_of(m->cap);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * model_table.c: the interning table each of the model's tables is (elements in an array,
 * an index of their ids by hash: find-or-add in O(1)), and the model's budget, which every
 * table's growth asks (model_refuse). The model's parts (model_int.h) use it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

/* the model's budget over an hmap index's arrays */
static int charge_map(void *ctx, long delta)
{
	return delta > 0 && model_refuse(ctx, (size_t)delta) ? -ENOSPC : 0;
}

void table_init(struct table *t, size_t elem_size, elem_hash_fn hash_of, struct model *m)
{
	memset(t, 0, sizeof(*t));
	t->elem_size = elem_size;
	t->hash_of = hash_of;
	t->m = m;
	hmap_init(&t->map, 64, 0);
	hmap_set_charge(&t->map, charge_map, m);
}

void table_free(struct table *t)
{
	bool (*dead)(const void *elem) = t->dead;
	bool on_hmap = t->on_hmap;

	free(t->elems);
	free(t->slots);
	hmap_free(&t->map);
	table_init(t, t->elem_size, t->hash_of, t->m);
	t->dead = dead;
	t->on_hmap = on_hmap;
}

/* the index again from the live elements (an element's hash changed) */
int table_rehash(struct table *t, size_t nslots)
{
	jp_id *slots;

	if (t->on_hmap) {
		struct hmap old = t->map;
		int err = 0;

		hmap_init(&t->map, 64, 0);
		hmap_set_charge(&t->map, charge_map, t->m);
		for (size_t id = 1; id < t->n && !err; id++)
			if (!t->dead || !t->dead(table_at(t, (jp_id)id)))
				err = hmap_add2(&t->map, t->hash_of(t, table_at(t, (jp_id)id)), 0,
						id);
		if (err) { /* the old index stays: its hashes are off for the changed */
			hmap_free(&t->map);
			t->map = old;
			return err;
		}
		hmap_free(&old);
		return 0;
	}
	if (model_refuse(t->m, nslots * sizeof(*slots)))
		return -ENOSPC;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t id = 1; id < t->n; id++) {
		size_t i;

		if (t->dead && t->dead(table_at(t, (jp_id)id)))
			continue; /* freed: not found, its id waits for reuse */
		i = t->hash_of(t, table_at(t, (jp_id)id)) & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = (jp_id)id;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

static int table_reserve(struct table *t)
{
	if (t->n + 1 > t->cap) {
		/* by half again: the last growth of a large table leaves a third unused, not half */
		size_t cap = t->cap ? t->cap + t->cap / 2 : 64;
		void *e;

		if (model_refuse(t->m, (cap - t->cap) * t->elem_size))
			return -ENOSPC;
		e = realloc(t->elems, cap * t->elem_size);
		if (!e)
			return -ENOMEM;
		t->elems = e;
		t->cap = cap;
		if (!t->n) {
			memset(t->elems, 0, t->elem_size); /* element 0: "none" */
			t->n = 1;
		}
	}
	if (!t->on_hmap && (t->n + 1) * 2 > t->nslots)
		return table_rehash(t, t->nslots ? t->nslots * 2 : 128);
	return 0;
}

/* id of the element equal to e (hash h), 0 when none */
jp_id table_find(const struct table *t, const void *e, __u64 h, elem_eq_fn eq, const void *ctx)
{
	if (t->on_hmap) {
		size_t pos = 0;
		const __u64 *v;

		while ((v = hmap_find_next2(&t->map, h, 0, &pos)))
			if (eq(ctx, table_at(t, (jp_id)*v), e, t->elem_size))
				return (jp_id)*v;
		return 0;
	}
	if (!t->nslots)
		return 0;
	for (size_t i = h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		jp_id id = t->slots[i];

		if (eq(ctx, table_at(t, id), e, t->elem_size))
			return id;
	}
	return 0;
}

/* puts id (its element in place, hash h) into the index; 0, or -ENOMEM/-ENOSPC (hmap) */
int table_index(struct table *t, jp_id id, __u64 h)
{
	size_t i;

	if (t->on_hmap)
		return hmap_add2(&t->map, h, 0, id);
	for (i = h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		;
	t->slots[i] = id;
	return 0;
}

/* id of the element equal to e (hash h), adding a copy when new; 0 when out of memory */
jp_id table_intern(struct table *t, const void *e, __u64 h, elem_eq_fn eq, const void *ctx)
{
	jp_id id = table_find(t, e, h, eq, ctx);

	return id ? id : table_add(t, e, h);
}

/* a copy of e (hash h, known new) added; its id, 0 when out of memory */
jp_id table_add(struct table *t, const void *e, __u64 h)
{
	size_t i;

	if (t->n >= 0xffffffffu || table_reserve(t))
		return 0;
	memcpy(table_at(t, (jp_id)t->n), e, t->elem_size);
	if (t->on_hmap) {
		if (hmap_add2(&t->map, h, 0, t->n) < 0)
			return 0;
		return (jp_id)t->n++;
	}
	for (i = h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		;
	t->slots[i] = (jp_id)t->n;
	return (jp_id)t->n++;
}

/* takes id out of the index (backward shift: no tombstones); its element is still in place */
void table_unindex(struct table *t, jp_id id)
{
	size_t mask = t->nslots - 1, i, j;

	if (t->on_hmap) {
		__u64 h = t->hash_of(t, table_at(t, id)), *v;
		size_t pos = 0;

		while ((v = hmap_find_next2(&t->map, h, 0, &pos)))
			if (*v == id) {
				hmap_del_at(&t->map, v);
				return;
			}
		return;
	}
	i = t->hash_of(t, table_at(t, id)) & mask;

	while (t->slots[i] != id) {
		if (!t->slots[i])
			return;
		i = (i + 1) & mask;
	}
	for (j = i;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!t->slots[j])
			break;
		k = t->hash_of(t, table_at(t, t->slots[j])) & mask;
		/* slots[j] may move to i when its home k is not cyclically within (i, j] */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i] = 0;
}

size_t table_bytes(const struct table *t)
{
	return t->cap * t->elem_size + t->nslots * sizeof(*t->slots) + hmap_bytes(&t->map);
}

size_t model_bytes(const struct model *m)
{
	return m->pool.total + table_bytes(&m->strs) + table_bytes(&m->funcs) +
	       table_bytes(&m->maps) + table_bytes(&m->locs) + table_bytes(&m->labels) +
	       table_bytes(&m->stacks) + table_bytes(&m->nodes) + table_bytes(&m->rows) +
	       m->get_cap * sizeof(*m->get_buf) +
	       m->cap_free_labels * sizeof(*m->free_labels);
}

/* true (counted) when more bytes would take the model past its budget */
bool model_refuse(struct model *m, size_t more)
{
	if (model_bytes(m) + more <= m->max_bytes)
		return false;
	m->over_budget++;
	return true;
}

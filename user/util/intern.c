// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* intern.c: the one string interner (see intern.h): hmap by keyed hash, copies in strpool. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashkey.h"
#include "util/intern.h"

/* strpool refuses strings this long: no name is */
#define INTERN_MAX_LEN (1u << 20)

/* the index's share of the budget: what the map holds (old and new arrays while it grows) */
static int charge_map(void *ctx, long delta)
{
	struct intern *t = ctx;
	size_t other = t->pool.total + t->cap * sizeof(*t->strs);

	if (delta > 0 && t->max_bytes && other + t->map_bytes + (size_t)delta > t->max_bytes)
		return -ENOSPC;
	t->map_bytes += (size_t)delta;
	return 0;
}

void intern_init(struct intern *t, size_t max_bytes)
{
	*t = (struct intern){.max_bytes = max_bytes};
	hmap_init(&t->map, 0, 0);
	hmap_set_charge(&t->map, charge_map, t);
	strpool_init(&t->pool, 0);
}

void intern_free(struct intern *t)
{
	if (!t)
		return;
	hmap_free(&t->map);
	strpool_free(&t->pool);
	free(t->strs);
	t->strs = NULL;
	t->n = t->cap = 0;
}

static size_t index_bytes(const struct intern *t)
{
	return t->cap * sizeof(*t->strs) + t->map_bytes;
}

size_t intern_bytes(const struct intern *t)
{
	return t->pool.total + index_bytes(t);
}

static long find_h(const struct intern *t, __u64 h, const char *s, size_t n)
{
	size_t pos = 0;
	const __u64 *v;

	while ((v = hmap_find_next2(&t->map, h, n, &pos)))
		if (!memcmp(t->strs[*v], s, n))
			return (long)*v;
	return -ENOENT;
}

long intern_find(const struct intern *t, const char *s, size_t n)
{
	if (!t->n)
		return -ENOENT;
	return find_h(t, hash_keyed_bytes(s, n), s, n);
}

long intern_id(struct intern *t, const char *s, size_t n)
{
	__u64 h = hash_keyed_bytes(s, n);
	long id = t->n ? find_h(t, h, s, n) : -ENOENT;
	const char *copy;
	int err;

	if (id >= 0)
		return id;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		const char **ns;

		if (cap > SIZE_MAX / sizeof(*ns) ||
		    (t->max_bytes && intern_bytes(t) + (cap - t->cap) * sizeof(*ns) > t->max_bytes))
			return -ENOSPC;
		ns = realloc(t->strs, cap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		t->strs = ns;
		t->cap = cap;
	}
	/* the copies may have what the index leaves of the budget */
	if (t->max_bytes) {
		if (index_bytes(t) >= t->max_bytes)
			return -ENOSPC;
		t->pool.max_total = t->max_bytes - index_bytes(t);
	}
	copy = strpool_add(&t->pool, s, n);
	if (!copy)
		return n >= INTERN_MAX_LEN || t->max_bytes ? -ENOSPC : -ENOMEM;
	/* on failure the copy stays unused in the pool (it is within the budget) */
	err = hmap_add2(&t->map, h, n, t->n);
	if (err)
		return err;
	t->strs[t->n] = copy;
	return (long)t->n++;
}

const char *intern_str(struct intern *t, const char *s, size_t n)
{
	long id = intern_id(t, s, n);

	return id < 0 ? NULL : t->strs[id];
}

const char *intern_get(const struct intern *t, size_t id)
{
	return id < t->n ? t->strs[id] : NULL;
}

size_t intern_count(const struct intern *t)
{
	return t->n;
}

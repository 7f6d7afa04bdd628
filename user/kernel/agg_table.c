// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* agg_table.c: hash -> a stack's full record, for the counts BPF aggregated (agg_table.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/agg_table.h"
#include "util/hmap.h"

struct agg_rec {
	__u64 used_ns;	    /* last put or get */
	__u64 retired_ns;   /* 0: live */
	size_t bytes;	    /* of this allocation */
	struct jp_sample s; /* the frames follow */
};

struct agg_table {
	struct hmap map; /* hash -> struct agg_rec * */
	size_t max_entries, max_bytes, bytes, live;
};

/* retired records may go over the live bytes by a quarter, until reaped */
static size_t slack(size_t n)
{
	return n / 4 + 1;
}

struct agg_table *agg_table__new(size_t max_entries, size_t max_bytes, size_t max_retired)
{
	struct agg_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	hmap_init(&t->map, 64, max_entries + max_retired);
	t->max_entries = max_entries;
	t->max_bytes = max_bytes;
	return t;
}

static bool drop_all(void *ctx, __u64 k1, __u64 k2, __u64 val)
{
	(void)ctx;
	(void)k1;
	(void)k2;
	free((void *)(uintptr_t)val);
	return true;
}

void agg_table__free(struct agg_table *t)
{
	if (!t)
		return;
	hmap_filter(&t->map, drop_all, NULL);
	hmap_free(&t->map);
	free(t);
}

int agg_table__put(struct agg_table *t, __u64 hash, const struct jp_sample *s, const __u64 *kstack,
		   const __u64 *ustack, __u64 now_ns, bool retired)
{
	size_t k = (size_t)s->kstack_len * sizeof(__u64);
	size_t u = (size_t)s->ustack_len * sizeof(__u64) +
		   (size_t)s->jstack_len * sizeof(struct jp_jframe);
	size_t bytes = sizeof(struct agg_rec) + k + u;
	size_t max_bytes = t->max_bytes + (retired ? slack(t->max_bytes) : 0);
	struct agg_rec *r, *old;
	__u64 *slot;
	bool is_new;

	slot = hmap_find(&t->map, hash);
	old = slot ? (struct agg_rec *)(uintptr_t)*slot : NULL;
	if (t->bytes - (old ? old->bytes : 0) + bytes > max_bytes)
		return -ENOSPC;
	if (!retired && (!old || old->retired_ns) && t->live >= t->max_entries)
		return -ENOSPC;
	r = malloc(bytes);
	if (!r)
		return -ENOMEM;
	r->used_ns = now_ns;
	r->retired_ns = retired ? (now_ns ? now_ns : 1) : 0;
	r->bytes = bytes;
	r->s = *s;
	r->s.stack_hash = 0; /* a replay teaches nothing */
	memcpy(&r->s + 1, kstack, k);
	memcpy((char *)(&r->s + 1) + k, ustack, u);
	if (!old) {
		slot = hmap_get(&t->map, hash, &is_new);
		if (!slot) {
			free(r);
			return errno == ENOSPC ? -ENOSPC : -ENOMEM;
		}
	} else {
		t->bytes -= old->bytes;
		t->live -= !old->retired_ns;
		free(old);
	}
	*slot = (uintptr_t)r;
	t->bytes += bytes;
	t->live += !retired;
	return 0;
}

const struct jp_sample *agg_table__get(struct agg_table *t, __u64 hash, __u64 now_ns)
{
	__u64 *slot = hmap_find(&t->map, hash);
	struct agg_rec *r;

	if (!slot)
		return NULL;
	r = (struct agg_rec *)(uintptr_t)*slot;
	r->used_ns = now_ns;
	return &r->s;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

size_t agg_table__retire(struct agg_table *t, __u64 now_ns, __u64 *out, size_t max)
{
	size_t n = 0, live = 0, pos = 0, want;
	__u64 *times, *v, k, cut;

	times = malloc((hmap_count(&t->map) + 1) * sizeof(*times));
	if (!times)
		return 0;
	while ((v = hmap_next(&t->map, &pos, NULL, NULL))) {
		struct agg_rec *r = (struct agg_rec *)(uintptr_t)*v;

		if (!r->retired_ns)
			times[live++] = r->used_ns;
	}
	want = (live + 3) / 4;
	if (want > max)
		want = max;
	if (!want) {
		free(times);
		return 0;
	}
	qsort(times, live, sizeof(*times), cmp_u64);
	cut = times[want - 1];
	free(times);
	pos = 0;
	while (n < want && (v = hmap_next(&t->map, &pos, &k, NULL))) {
		struct agg_rec *r = (struct agg_rec *)(uintptr_t)*v;

		if (r->retired_ns || r->used_ns > cut)
			continue;
		r->retired_ns = now_ns ? now_ns : 1;
		t->live--;
		out[n++] = k;
	}
	return n;
}

struct reap_ctx {
	struct agg_table *t;
	__u64 until_ns;
	size_t n;
};

static bool reap_one(void *ctx, __u64 k1, __u64 k2, __u64 val)
{
	struct reap_ctx *c = ctx;
	struct agg_rec *r = (struct agg_rec *)(uintptr_t)val;

	(void)k1;
	(void)k2;
	if (!r->retired_ns || r->retired_ns > c->until_ns)
		return false;
	c->t->bytes -= r->bytes;
	free(r);
	c->n++;
	return true;
}

size_t agg_table__reap(struct agg_table *t, __u64 until_ns)
{
	struct reap_ctx c = {.t = t, .until_ns = until_ns};

	hmap_filter(&t->map, reap_one, &c);
	return c.n;
}

size_t agg_table__count(const struct agg_table *t)
{
	return hmap_count(&t->map);
}

size_t agg_table__bytes(const struct agg_table *t)
{
	return t->bytes;
}

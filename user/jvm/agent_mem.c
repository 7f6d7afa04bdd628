/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_mem.c: the agent reader's budgets, (k1, k2) map, bounded record cursor and
 * string interner.
 * Part of the agent channel reader (agent_int.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jvm/agent_int.h"
#include "log.h"
#include "util/procfs.h"
#include "ring.h"
#include "util/hashkey.h"
#include "util/safe_open.h"

__u64 ja_agents_bytes;
__u64 ja_tables_bytes, ja_tables_evicted;

/* budget -------------------------------------------------------------------- */

/* 0, or -ENOSPC (counted) when n more bytes would pass this JVM's or the global budget */
int ja_charge(struct jvm_agent *a, size_t n)
{
	__u64 total;

	if (a->bytes + n > a->max_bytes) {
		a->over_budget++;
		return -ENOSPC;
	}
	total = __atomic_add_fetch(&ja_agents_bytes, n, __ATOMIC_RELAXED);
	if (total > AGENTS_MAX_BYTES) {
		__atomic_sub_fetch(&ja_agents_bytes, n, __ATOMIC_RELAXED);
		a->over_budget++;
		return -ENOSPC;
	}
	a->bytes += n;
	return 0;
}

void ja_uncharge(struct jvm_agent *a, size_t n)
{
	if (n > a->bytes)
		n = a->bytes;
	a->bytes -= n;
	__atomic_sub_fetch(&ja_agents_bytes, n, __ATOMIC_RELAXED);
}

/* kv map ------------------------------------------------------------------- */

size_t ja_kv_hash(__u64 k1, __u64 k2)
{
	/* keyed: thread and class ids, tags, string hashes are the JVM's user's to choose */
	return (size_t)hash_keyed(k1 ^ hash_keyed(k2 + 0x632be59bd9b4e019ull));
}

/* the kv maps are util/hmaps whose arrays are charged to the agent's budget */
static int kv_charge(void *ctx, long delta)
{
	struct jvm_agent *a = ctx;

	if (delta > 0)
		return ja_charge(a, (size_t)delta);
	ja_uncharge(a, (size_t)-delta);
	return 0;
}

int ja_kv_get(const struct hmap *m, __u64 k1, __u64 k2, __u32 *ret)
{
	const __u64 *v = hmap_find2(m, k1, k2);

	if (!v)
		return -ENOENT;
	*ret = (__u32)*v;
	return 0;
}

int ja_kv_put(struct jvm_agent *a, struct hmap *m, __u64 k1, __u64 k2, __u32 val)
{
	int err;

	if (!m->charge) { /* the first put: 256 slots from the start, charged to a */
		hmap_init(m, 256, 0);
		hmap_set_charge(m, kv_charge, a);
	}
	err = hmap_put2(m, k1, k2, val);
	return err < 0 ? err : 0;
}

int ja_grow(struct jvm_agent *a, void **p, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *q;

	if (n < *cap)
		return 0;
	if (c > SIZE_MAX / elem || ja_charge(a, (c - *cap) * elem))
		return -ENOSPC;
	q = realloc(*p, c * elem);
	if (!q) {
		ja_uncharge(a, (c - *cap) * elem);
		return -ENOMEM;
	}
	*p = q;
	*cap = c;
	return 0;
}

static void cur_get(struct cur *c, void *dst, size_t n)
{
	if (c->bad || c->left < n) {
		c->bad = 1;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
}

__u64 ja_cur_u64(struct cur *c)
{
	__u64 v;

	cur_get(c, &v, sizeof(v));
	return v;
}

__u32 ja_cur_u32(struct cur *c)
{
	__u32 v;

	cur_get(c, &v, sizeof(v));
	return v;
}

__u16 ja_cur_u16(struct cur *c)
{
	__u16 v;

	cur_get(c, &v, sizeof(v));
	return v;
}

static void copy_clean(char *dst, const unsigned char *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i] < 0x20 || src[i] == 0x7f ? '?' : (char)src[i];
	dst[n] = '\0';
}

/*
 * A NUL-terminated copy, charged to a; control characters become '?' (names end up in
 * text outputs). Free it with ja_str_free().
 */
char *ja_cur_str(struct jvm_agent *a, struct cur *c, size_t n)
{
	char *s;

	if (c->bad || c->left < n) {
		c->bad = 1;
		return NULL;
	}
	if (ja_charge(a, n + 1)) {
		c->bad = 1;
		return NULL;
	}
	s = malloc(n + 1);
	if (!s) {
		ja_uncharge(a, n + 1);
		c->bad = 1;
		return NULL;
	}
	copy_clean(s, c->p, n);
	c->p += n;
	c->left -= n;
	return s;
}

void ja_str_free(struct jvm_agent *a, char *s)
{
	if (!s)
		return;
	ja_uncharge(a, strlen(s) + 1);
	free(s);
}

static __u64 str_hash(const unsigned char *p, size_t n)
{
	__u64 h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * The interned copy of the n cleaned bytes at s, made once per distinct string for the
 * agent's lifetime; NULL when out of budget.
 */
const char *ja_intern(struct jvm_agent *a, const char *s, size_t n)
{
	__u64 h = str_hash((const unsigned char *)s, n);
	struct jm_str *js = NULL;
	__u32 i;

	if (!ja_kv_get(&a->str_idx, h, n, &i) && i < a->n_strs && a->str_tab[i]->len == n &&
	    !memcmp(a->str_tab[i]->s, s, n))
		return a->str_tab[i]->s;
	if (!ja_grow(a, (void **)&a->str_tab, &a->cap_strs, a->n_strs, sizeof(*a->str_tab)) &&
	    !ja_charge(a, sizeof(*js) + n + 1)) {
		js = malloc(sizeof(*js) + n + 1);
		if (!js)
			ja_uncharge(a, sizeof(*js) + n + 1);
	}
	if (!js)
		return NULL;
	memcpy(js->s, s, n);
	js->s[n] = '\0';
	js->len = n;
	js->next = a->strs;
	a->strs = js;
	/* a hash collision keeps the older entry indexed; the new string is still valid */
	if (ja_kv_get(&a->str_idx, h, n, &i) && !ja_kv_put(a, &a->str_idx, h, n, (__u32)a->n_strs))
		a->str_tab[a->n_strs++] = js;
	return js->s;
}

/*
 * The cleaned copy of the n bytes at the cursor in a malloc'd buffer, the cursor past
 * them; NULL (c->bad set) when they are not there or memory is short.
 */
char *ja_cur_take(struct cur *c, size_t n)
{
	char *tmp;

	if (c->bad || c->left < n || !(tmp = malloc(n + 1))) {
		c->bad = 1;
		return NULL;
	}
	copy_clean(tmp, c->p, n);
	c->p += n;
	c->left -= n;
	return tmp;
}

/* the interned copy of n bytes at the cursor (cleaned as ja_cur_str does); NULL, c->bad set */
const char *ja_cur_istr(struct jvm_agent *a, struct cur *c, size_t n)
{
	char *tmp = ja_cur_take(c, n);
	const char *s = tmp ? ja_intern(a, tmp, n) : NULL;

	free(tmp);
	if (!s)
		c->bad = 1;
	return s;
}

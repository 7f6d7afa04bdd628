// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile_names.c: the trie's interned names: a hash set of strings stored in chunks */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "profile_int.h"

/* FNV-1a, 64 bit */
static __u64 str_hash(const char *s, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int strtab_grow(struct strtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : STRTAB_MIN_SLOTS;
	struct str_slot *ns;

	if (ncap < t->cap || ncap > SIZE_MAX / sizeof(*ns))
		return -ENOMEM;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].s)
			continue;
		for (j = t->slots[i].hash & (ncap - 1); ns[j].s; j = (j + 1) & (ncap - 1))
			;
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

static char *strtab_store(struct strtab *t, const char *s, size_t len)
{
	struct str_chunk *c = t->chunks;
	char *dst;

	if (len >= SIZE_MAX - sizeof(*c) - STR_CHUNK_SIZE)
		return NULL;
	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > STR_CHUNK_SIZE ? len + 1 : STR_CHUNK_SIZE;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		/* a one-off big chunk goes behind the current one, so its free space stays in use */
		if (t->chunks && cap > STR_CHUNK_SIZE) {
			c->next = t->chunks->next;
			t->chunks->next = c;
		} else {
			c->next = t->chunks;
			t->chunks = c;
		}
	}
	dst = c->data + c->used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	c->used += len + 1;
	return dst;
}

/* returns the interned copy of s, or NULL when out of memory */
const char *pf_strtab_intern(struct strtab *t, const char *s)
{
	size_t len = strlen(s), i;
	__u64 h = str_hash(s, len);
	char *copy;

	if ((t->n + 1) * 2 > t->cap && strtab_grow(t))
		return NULL;
	for (i = h & (t->cap - 1); t->slots[i].s; i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].hash == h && !strcmp(t->slots[i].s, s))
			return t->slots[i].s;
	}
	copy = strtab_store(t, s, len);
	if (!copy)
		return NULL;
	t->slots[i].s = copy;
	t->slots[i].hash = h;
	t->n++;
	return copy;
}

void pf_strtab_free(struct strtab *t)
{
	struct str_chunk *c, *next;

	for (c = t->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(t->slots);
}

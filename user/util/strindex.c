// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* strindex.c: strings to dense indexes by content (FNV-1a, linear probing). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strindex.h"

static __u64 hash_mem(const char *s, size_t len)
{
	__u64 h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int grow(struct strindex *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 256;
	__u32 *slots = calloc(ns, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		size_t j = hash_mem(t->strs[i], strlen(t->strs[i])) & (ns - 1);

		while (slots[j])
			j = (j + 1) & (ns - 1);
		slots[j] = (__u32)(i + 1);
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
	return 0;
}

long strindex_get(struct strindex *t, const char *s, size_t len)
{
	const char *nul = memchr(s, 0, len);
	size_t j;

	if (nul) /* a copy ends at its first NUL: index what the copy will hold */
		len = (size_t)(nul - s);
	/* a load factor under one half keeps probe runs short */
	if ((t->n + 1) * 2 > t->nslots && grow(t))
		return -ENOMEM;
	for (j = hash_mem(s, len) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1)) {
		const char *c = t->strs[t->slots[j] - 1];

		if (!strncmp(c, s, len) && !c[len])
			return t->slots[j] - 1;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		char **p = realloc(t->strs, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->strs = p;
		t->cap = cap;
	}
	t->strs[t->n] = strndup(s, len);
	if (!t->strs[t->n])
		return -ENOMEM;
	t->slots[j] = (__u32)(t->n + 1);
	return (long)t->n++;
}

void strindex_free(struct strindex *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->slots);
	*t = (struct strindex){0};
}

__u64 strindex_str(struct strindex *t, const char *s, int *err)
{
	long i;

	if (!s)
		s = "";
	i = strindex_get(t, s, strlen(s));
	if (i < 0) {
		if (!*err)
			*err = (int)i;
		return 0;
	}
	return (__u64)i;
}

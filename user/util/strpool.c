// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* strpool.c: append-only string arena in blocks, so handed-out strings stay valid. */
#include <stdlib.h>
#include <string.h>

#include "util/strpool.h"

#define STRPOOL_BLOCK (64 * 1024)

struct strpool_block {
	struct strpool_block *next;
	size_t size;
	char data[];
};

void strpool_init(struct strpool *p, size_t max_total)
{
	p->head = NULL;
	p->used = 0;
	p->total = 0;
	p->max_total = max_total;
}

void strpool_free(struct strpool *p)
{
	struct strpool_block *b = p->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	strpool_init(p, p->max_total);
}

const char *strpool_add(struct strpool *p, const char *s, size_t n)
{
	struct strpool_block *b = p->head;
	char *dst;

	if (n >= STRPOOL_BLOCK * 16)
		return NULL; /* no legitimate name is this long */
	if (!b || b->size - p->used < n + 1) {
		size_t size = n + 1 > STRPOOL_BLOCK ? n + 1 : STRPOOL_BLOCK;

		if (p->max_total && p->total + size > p->max_total)
			return NULL;
		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->next = p->head;
		p->head = b;
		p->total += size;
		p->used = 0;
	}
	dst = b->data + p->used;
	memcpy(dst, s, n);
	dst[n] = '\0';
	p->used += n + 1;
	return dst;
}

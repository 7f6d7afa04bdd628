// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bytebuf.c: a growable byte buffer whose first error sticks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytebuf.h"

void bytebuf_reserve(struct bytebuf *b, size_t more)
{
	size_t cap;
	unsigned char *p;

	if (b->err || b->n + more <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < b->n + more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void bytebuf_add(struct bytebuf *b, const void *d, size_t n)
{
	if (!n)
		return;
	bytebuf_reserve(b, n);
	if (b->err)
		return;
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

void bytebuf_u8(struct bytebuf *b, unsigned char v)
{
	bytebuf_add(b, &v, 1);
}

void bytebuf_free(struct bytebuf *b)
{
	free(b->p);
	*b = (struct bytebuf){0};
}

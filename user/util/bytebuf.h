/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bytebuf.h: a growable byte buffer whose first error sticks, for the binary writers. */
#ifndef JPROF_UTIL_BYTEBUF_H
#define JPROF_UTIL_BYTEBUF_H

#include <stddef.h>

struct bytebuf {
	unsigned char *p;
	size_t n, cap;
	int err; /* -ENOMEM once an append failed; later appends do nothing */
};

/* appends d[0..n); n 0 is a no-op (d may then be NULL) */
void bytebuf_add(struct bytebuf *b, const void *d, size_t n);
void bytebuf_u8(struct bytebuf *b, unsigned char v);
/* makes room for more bytes without adding them; check b->err */
void bytebuf_reserve(struct bytebuf *b, size_t more);
/* frees the bytes; the buffer is empty and usable again */
void bytebuf_free(struct bytebuf *b);

#endif /* JPROF_UTIL_BYTEBUF_H */

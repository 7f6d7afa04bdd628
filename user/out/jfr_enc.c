// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jfr_enc.c: JFR's encodings: varints, Java longs and ints, strings, an event with its size */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_int.h"

/* JFR's varint: 7 bits a byte, little end first, at most 9 bytes (the 9th carries 8 bits) */
size_t jw_varint_enc(unsigned char *o, __u64 v)
{
	size_t n = 0;

	while (n < 8) {
		if (v < 0x80) {
			o[n++] = (unsigned char)v;
			return n;
		}
		o[n++] = (unsigned char)(v & 0x7f) | 0x80;
		v >>= 7;
	}
	o[n++] = (unsigned char)v;
	return n;
}

static size_t varint_len(__u64 v)
{
	unsigned char tmp[9];

	return jw_varint_enc(tmp, v);
}

void jb_varint(struct bytebuf *b, __u64 v)
{
	unsigned char tmp[9];

	bytebuf_add(b, tmp, jw_varint_enc(tmp, v));
}

/* a Java long that is a count or a time: clamped, so that no reader sees it negative */
void jb_long(struct bytebuf *b, __u64 v)
{
	jb_varint(b, v > (__u64)INT64_MAX ? (__u64)INT64_MAX : v);
}

/* a Java int: negative values travel as their 32-bit pattern */
void jb_int(struct bytebuf *b, __s32 v)
{
	jb_varint(b, (__u32)v);
}

void jb_be(struct bytebuf *b, __u64 v, int bytes)
{
	unsigned char tmp[8];

	for (int i = 0; i < bytes; i++)
		tmp[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
	bytebuf_add(b, tmp, (size_t)bytes);
}

/* string encodings: 0 null, 1 empty, 3 UTF-8 bytes with their length */
void jb_str(struct bytebuf *b, const char *s)
{
	size_t n;

	if (!s) {
		bytebuf_u8(b, 0);
		return;
	}
	n = strlen(s);
	if (!n) {
		bytebuf_u8(b, 1);
		return;
	}
	bytebuf_u8(b, 3);
	jb_varint(b, n);
	bytebuf_add(b, s, n);
}

/* the size of an event counts its own varint */
size_t jw_event_size(size_t body)
{
	size_t k = 1;

	while (varint_len(body + k) != k)
		k++;
	return body + k;
}

/* appends body as one event (size prefix + body) */
void jb_event(struct bytebuf *dst, const struct bytebuf *body)
{
	if (body->err && !dst->err)
		dst->err = body->err;
	jb_varint(dst, jw_event_size(body->n));
	bytebuf_add(dst, body->p, body->n);
}

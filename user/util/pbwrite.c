// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pbwrite.c: protocol buffer fields appended to a bytebuf (pprof and OTLP writers). */
#include "util/pbwrite.h"

void pb_varint(struct bytebuf *b, __u64 v)
{
	unsigned char tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	bytebuf_add(b, tmp, n);
}

void pb_key(struct bytebuf *b, int field, int wt)
{
	pb_varint(b, (__u64)field << 3 | (__u64)wt);
}

void pb_u64(struct bytebuf *b, int field, __u64 v)
{
	if (!v)
		return;
	pb_key(b, field, WT_VARINT);
	pb_varint(b, v);
}

void pb_fixed64(struct bytebuf *b, int field, __u64 v)
{
	unsigned char le[8];

	if (!v)
		return;
	for (int i = 0; i < 8; i++)
		le[i] = (unsigned char)(v >> (8 * i));
	pb_key(b, field, WT_FIXED64);
	bytebuf_add(b, le, sizeof(le));
}

void pb_bytes(struct bytebuf *b, int field, const void *d, size_t n)
{
	pb_key(b, field, WT_LEN);
	pb_varint(b, n);
	bytebuf_add(b, d, n);
}

void pb_msg(struct bytebuf *b, int field, struct bytebuf *sub)
{
	if (sub->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->p, sub->n);
	sub->n = 0;
}

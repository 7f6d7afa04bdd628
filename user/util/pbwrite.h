/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pbwrite.h: protocol buffer fields appended to a bytebuf, for the binary writers of pprof
 * (out/pprof.c) and OTLP profiles (daemon/otlp.c). The first error sticks in the buffer.
 */
#ifndef JPROF_UTIL_PBWRITE_H
#define JPROF_UTIL_PBWRITE_H

#include <linux/types.h>
#include <stddef.h>

#include "util/bytebuf.h"

/* wire types */
#define WT_VARINT  0
#define WT_FIXED64 1
#define WT_LEN	   2

void pb_varint(struct bytebuf *b, __u64 v);
void pb_key(struct bytebuf *b, int field, int wt);
/* proto3: a zero scalar is not written */
void pb_u64(struct bytebuf *b, int field, __u64 v);
void pb_fixed64(struct bytebuf *b, int field, __u64 v);
void pb_bytes(struct bytebuf *b, int field, const void *d, size_t n);
/* appends sub as a nested message (present even when empty) and empties sub for reuse */
void pb_msg(struct bytebuf *b, int field, struct bytebuf *sub);

#endif /* JPROF_UTIL_PBWRITE_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jfr_read_values.c: the JFR reader's bounds-checked reads: integers, strings, values */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_read_int.h"

int jr_bad(struct ctx *c, const char *what, size_t at)
{
	if (c->why && c->why_len)
		snprintf(c->why, c->why_len, "%s (at byte %zu)", what, at);
	return -EINVAL;
}

/* ---- reading: every read is bounds-checked, the first error sticks ---- */

unsigned char jr_rd_u8(struct rd *r)
{
	if (r->err || r->pos >= r->end) {
		r->err = -EINVAL;
		return 0;
	}
	return r->p[r->pos++];
}

__u64 jr_rd_be(struct rd *r, int n)
{
	__u64 v = 0;

	if (r->err || r->end - r->pos < (size_t)n) {
		r->err = -EINVAL;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v = v << 8 | r->p[r->pos++];
	return v;
}

/* LEB128, at most 9 bytes: the 9th carries 8 bits */
static __u64 rd_varint(struct rd *r)
{
	__u64 v = 0;

	for (int i = 0; i < 9; i++) {
		unsigned char b = jr_rd_u8(r);

		if (r->err)
			return 0;
		if (i == 8)
			return v | (__u64)b << 56;
		v |= (__u64)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	return v;
}

__u64 jr_rd_long(struct ctx *c, struct rd *r)
{
	return c->compressed ? rd_varint(r) : jr_rd_be(r, 8);
}

__u32 jr_rd_int(struct ctx *c, struct rd *r)
{
	return c->compressed ? (__u32)rd_varint(r) : (__u32)jr_rd_be(r, 4);
}

static void rd_skip(struct rd *r, __u64 n)
{
	if (r->err || n > r->end - r->pos)
		r->err = -EINVAL;
	else
		r->pos += (size_t)n;
}

/* a count of things that take a byte each at least: no more than the bytes left */
__u32 jr_rd_count(struct ctx *c, struct rd *r)
{
	__u32 n = jr_rd_int(c, r);

	if (!r->err && n > r->end - r->pos)
		r->err = -EINVAL;
	return r->err ? 0 : n;
}

/* appends code point cp as UTF-8 into buf (cut at size - 1) */
static void put_utf8(char *buf, size_t size, size_t *w, unsigned int cp)
{
	unsigned char t[3];
	size_t n;

	if (cp == 0 || (cp >= 0xd800 && cp < 0xe000))
		cp = '?'; /* a NUL would cut the name elsewhere; a lone surrogate is no character */
	if (cp < 0x80) {
		t[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		t[0] = (unsigned char)(0xc0 | cp >> 6);
		t[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else {
		t[0] = (unsigned char)(0xe0 | cp >> 12);
		t[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		t[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	}
	if (*w + n < size) {
		memcpy(buf + *w, t, n);
		*w += n;
	}
}

/*
 * A string value: 0 null, 1 empty, 2 a key of the java.lang.String pool, 3 UTF-8, 4 chars
 * (one varint each), 5 Latin-1. Into buf when given (UTF-8, NUL-terminated, cut); false
 * for null and on error. depth bounds references through pools.
 */
bool jr_rd_string(struct ctx *c, struct rd *r, char *buf, size_t size, int depth)
{
	unsigned char enc = jr_rd_u8(r);
	size_t w = 0;
	__u32 n;

	if (buf)
		buf[0] = '\0';
	switch (enc) {
	case 0:
		return false;
	case 1:
		return !r->err;
	case 2: {
		__u64 key = jr_rd_long(c, r);

		if (r->err || !buf)
			return !r->err;
		return depth > 0 && c->string_cls != ~0u &&
		       jr_resolve_string(c, c->string_cls, key, buf, size, depth - 1);
	}
	case 3:
	case 5:
		n = jr_rd_int(c, r);
		if (r->err || n > r->end - r->pos) {
			r->err = -EINVAL;
			return false;
		}
		for (__u32 i = 0; buf && i < n && w + 1 < size; i++) {
			unsigned char b = r->p[r->pos + i];

			if (enc == 5 && b >= 0x80)
				put_utf8(buf, size, &w, b);
			else
				buf[w++] = b ? (char)b : '?';
		}
		r->pos += n;
		break;
	case 4:
		n = jr_rd_count(c, r);
		for (__u32 i = 0; i < n && !r->err; i++) {
			__u64 ch = c->compressed ? rd_varint(r) : jr_rd_be(r, 2);

			if (buf)
				put_utf8(buf, size, &w, ch > 0xffff ? '?' : (unsigned int)ch);
		}
		break;
	default:
		r->err = -EINVAL;
	}
	if (r->err)
		return false;
	if (buf)
		buf[w] = '\0';
	return true;
}

/* ---- values, as the metadata lays them out ---- */

void jr_skip_field(struct ctx *c, struct rd *r, const struct jfield *f, int depth)
{
	__u32 n = f->array ? jr_rd_count(c, r) : 1;

	for (__u32 i = 0; i < n && !r->err; i++) {
		if (f->cp)
			(void)jr_rd_long(c, r);
		else
			jr_skip_class(c, r, f->cls, depth);
	}
}

void jr_skip_class(struct ctx *c, struct rd *r, __u32 ci, int depth)
{
	const struct jclass *k = &c->cls[ci];

	if (!c->work || depth > JFR_MAX_NEST) {
		r->err = -E2BIG;
		return;
	}
	c->work--;
	switch (k->prim) {
	case P_BOOL:
	case P_BYTE:
		rd_skip(r, 1);
		break;
	case P_CHAR:
	case P_SHORT:
		if (c->compressed)
			(void)rd_varint(r);
		else
			rd_skip(r, 2);
		break;
	case P_INT:
		(void)jr_rd_int(c, r);
		break;
	case P_LONG:
		(void)jr_rd_long(c, r);
		break;
	case P_FLOAT:
		rd_skip(r, 4);
		break;
	case P_DOUBLE:
		rd_skip(r, 8);
		break;
	case P_STRING:
		(void)jr_rd_string(c, r, NULL, 0, 0);
		break;
	case P_STRUCT:
		for (__u32 i = 0; i < k->nf && !r->err; i++)
			jr_skip_field(c, r, &c->fld[k->f0 + i], depth + 1);
		break;
	}
}

/* an integer or a pool key into *v; false (the value skipped) for anything else */
bool jr_rd_num(struct ctx *c, struct rd *r, const struct jfield *f, __u64 *v)
{
	enum prim p = c->cls[f->cls].prim;

	if (f->array || (!f->cp && (p == P_STRUCT || p >= P_FLOAT))) {
		jr_skip_field(c, r, f, 0);
		return false;
	}
	if (f->cp || p == P_LONG || p == P_INT || p == P_SHORT || p == P_CHAR) {
		if (!f->cp && p == P_INT)
			*v = (__u64)(__s64)(__s32)jr_rd_int(c, r); /* a Java int: -1 stays -1 */
		else if (!f->cp && !c->compressed && p != P_LONG)
			*v = jr_rd_be(r, 2);
		else
			*v = jr_rd_long(c, r);
	} else {
		*v = jr_rd_u8(r);
	}
	return !r->err;
}

/* a string field (inline, or through a pool) into buf; false for null, other types, errors */
bool jr_rd_str_field(struct ctx *c, struct rd *r, const struct jfield *f, char *buf, size_t size,
		     int depth)
{
	__u64 key;

	buf[0] = '\0';
	if (!f->array && !f->cp && c->cls[f->cls].prim == P_STRING)
		return jr_rd_string(c, r, buf, size, depth);
	if (!f->array && f->cp) {
		key = jr_rd_long(c, r);
		return !r->err && jr_resolve_string(c, f->cls, key, buf, size, depth);
	}
	jr_skip_field(c, r, f, 0);
	return false;
}

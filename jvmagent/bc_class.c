/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bc_class.c: the rewriter's bounded reader and budgeted writer, the constant pool. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_int.h"

void jpa_bc_put(struct buf *b, const void *src, size_t n)
{
	if (b->err)
		return;
	if (n > OUT_MAX - b->len) {
		b->err = -E2BIG;
		return;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

void jpa_bc_put_u1(struct buf *b, uint32_t v)
{
	uint8_t x = (uint8_t)v;

	jpa_bc_put(b, &x, 1);
}

void jpa_bc_put_u2(struct buf *b, uint32_t v)
{
	uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	jpa_bc_put(b, x, 2);
}

void jpa_bc_put_u4(struct buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	jpa_bc_put(b, x, 4);
}

void jpa_bc_put_utf8(struct buf *b, const char *s)
{
	jpa_bc_put_u1(b, 1);
	jpa_bc_put_u2(b, (uint32_t)strlen(s));
	jpa_bc_put(b, s, strlen(s));
}

void jpa_bc_set_u4(struct buf *b, size_t at, uint32_t v)
{
	if (b->err || at + 4 > b->len)
		return;
	b->p[at] = (uint8_t)(v >> 24);
	b->p[at + 1] = (uint8_t)(v >> 16);
	b->p[at + 2] = (uint8_t)(v >> 8);
	b->p[at + 3] = (uint8_t)v;
}

static int need(struct rd *r, size_t k)
{
	if (r->err || k > r->n - r->off) {
		r->err = 1;
		return 0;
	}
	return 1;
}

uint32_t jpa_bc_rd_u1(struct rd *r)
{
	if (!need(r, 1))
		return 0;
	return r->p[r->off++];
}

uint32_t jpa_bc_rd_u2(struct rd *r)
{
	uint32_t v;

	if (!need(r, 2))
		return 0;
	v = (uint32_t)r->p[r->off] << 8 | r->p[r->off + 1];
	r->off += 2;
	return v;
}

uint32_t jpa_bc_rd_u4(struct rd *r)
{
	uint32_t v;

	if (!need(r, 4))
		return 0;
	v = (uint32_t)r->p[r->off] << 24 | (uint32_t)r->p[r->off + 1] << 16 |
	    (uint32_t)r->p[r->off + 2] << 8 | r->p[r->off + 3];
	r->off += 4;
	return v;
}

void jpa_bc_rd_skip(struct rd *r, size_t k)
{
	if (need(r, k))
		r->off += k;
}

int jpa_bc_cp_tag(const struct cls *c, uint32_t i)
{
	if (i == 0 || i >= c->cp_count || !c->cp_off[i])
		return -1;
	return c->in[c->cp_off[i]];
}

/* Utf8 entry i as bytes; NULL when it is none */
static const uint8_t *cp_utf8(const struct cls *c, uint32_t i, uint32_t *ret_len)
{
	const uint8_t *p;

	if (jpa_bc_cp_tag(c, i) != 1)
		return NULL;
	p = c->in + c->cp_off[i];
	*ret_len = (uint32_t)p[1] << 8 | p[2];
	return p + 3;
}

int jpa_bc_cp_utf8_is(const struct cls *c, uint32_t i, const char *s)
{
	uint32_t n;
	const uint8_t *p = cp_utf8(c, i, &n);

	return p && n == strlen(s) && !memcmp(p, s, n);
}

/* Utf8 entry i as a C string; -1 when it is none, too long or holds a NUL */
int jpa_bc_cp_cstr(const struct cls *c, uint32_t i, char *out, size_t cap)
{
	uint32_t n;
	const uint8_t *p = cp_utf8(c, i, &n);

	if (!p || n >= cap || memchr(p, 0, n))
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

/* the k-th u2 of constant i's body (a Class's name, a Methodref's class or NameAndType...) */
uint32_t jpa_bc_cp_ref(const struct cls *c, uint32_t i, uint32_t k)
{
	const uint8_t *p = c->in + c->cp_off[i] + 1 + 2 * k;

	return (uint32_t)p[0] << 8 | p[1];
}

int jpa_bc_parse_cp(struct cls *c, struct rd *r)
{
	c->cp_count = jpa_bc_rd_u2(r);
	if (r->err || c->cp_count == 0)
		return -EINVAL;
	c->cp_off = calloc(c->cp_count, sizeof(*c->cp_off));
	if (!c->cp_off)
		return -ENOMEM;
	for (uint32_t i = 1; i < c->cp_count; i++) {
		size_t at = r->off;
		uint32_t tag = jpa_bc_rd_u1(r);

		switch (tag) {
		case 1: /* Utf8 */
			jpa_bc_rd_skip(r, jpa_bc_rd_u2(r));
			break;
		case 3:	 /* Integer */
		case 4:	 /* Float */
		case 9:	 /* Fieldref */
		case 10: /* Methodref */
		case 11: /* InterfaceMethodref */
		case 12: /* NameAndType */
		case 17: /* Dynamic */
		case 18: /* InvokeDynamic */
			jpa_bc_rd_skip(r, 4);
			break;
		case 5: /* Long */
		case 6: /* Double: two slots */
			jpa_bc_rd_skip(r, 8);
			c->cp_off[i++] = (uint32_t)at;
			if (r->err || i >= c->cp_count) /* its second slot past the end */
				return -EINVAL;
			continue;
		case 7:	 /* Class */
		case 8:	 /* String */
		case 16: /* MethodType */
		case 19: /* Module */
		case 20: /* Package */
			jpa_bc_rd_skip(r, 2);
			break;
		case 15: /* MethodHandle */
			jpa_bc_rd_skip(r, 3);
			break;
		default:
			return -EINVAL;
		}
		if (r->err)
			return -EINVAL;
		c->cp_off[i] = (uint32_t)at;
	}
	if (r->err)
		return -EINVAL;
	c->cp_end = r->off;
	return 0;
}

/* skips fields or methods' attributes: u2 count, {u2 name, u4 len, body} */
void jpa_bc_skip_attrs(struct rd *r)
{
	uint32_t n = jpa_bc_rd_u2(r);

	for (uint32_t i = 0; i < n && !r->err; i++) {
		jpa_bc_rd_skip(r, 2);
		jpa_bc_rd_skip(r, jpa_bc_rd_u4(r));
	}
}

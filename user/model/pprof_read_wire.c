// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pprof_read_wire.c: protobuf's wire format, read within bounds, and gzip */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof_read_int.h"

__u64 pp_rd_varint(struct rd *r)
{
	__u64 v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		unsigned char b;

		if (r->p >= r->end) {
			r->err = -EINVAL;
			return 0;
		}
		b = *r->p++;
		v |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->err = -EINVAL;
	return 0;
}

/* next field: 0 at the end or on error; *val for varints, *sp for length-delimited */
int pp_rd_field(struct rd *r, int *wt, __u64 *val, struct span *sp)
{
	__u64 key, len;

	if (r->err || r->p >= r->end)
		return 0;
	key = pp_rd_varint(r);
	*wt = (int)(key & 7);
	switch (*wt) {
	case 0:
		*val = pp_rd_varint(r);
		break;
	case 1:
		if (r->end - r->p < 8)
			r->err = -EINVAL;
		else
			r->p += 8;
		break;
	case 5:
		if (r->end - r->p < 4)
			r->err = -EINVAL;
		else
			r->p += 4;
		break;
	case 2:
		len = pp_rd_varint(r);
		if (!r->err && len > (__u64)(r->end - r->p))
			r->err = -EINVAL;
		if (!r->err) {
			sp->p = r->p;
			sp->n = (size_t)len;
			r->p += len;
		}
		break;
	default:
		r->err = -EINVAL;
	}
	if (r->err || key >> 3 == 0 || key >> 3 > 0x1fffffff)
		return r->err = -EINVAL, 0;
	return (int)(key >> 3);
}

/* repeated uint64, packed (wire type 2) or not (0); appends to *v */
int pp_add_u64s(__u64 **v, size_t *n, size_t *cap, int wt, __u64 val, const struct span *sp,
		size_t max)
{
	struct rd r = {sp ? sp->p : NULL, sp ? sp->p + sp->n : NULL, 0};

	for (;;) {
		__u64 x;

		if (wt == 0) {
			x = val;
		} else {
			if (r.p >= r.end)
				break;
			x = pp_rd_varint(&r);
			if (r.err)
				return r.err;
		}
		if (*n >= max)
			return -E2BIG;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			__u64 *nv = realloc(*v, nc * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			*v = nv;
			*cap = nc;
		}
		(*v)[(*n)++] = x;
		if (wt == 0)
			break;
	}
	return 0;
}

int pp_gunzip(const unsigned char *in, size_t n, unsigned char **ret, size_t *ret_len)
{
	size_t cap = n < PPROF_MAX_RAW / 8 ? n * 4 + 4096 : PPROF_MAX_RAW, len = 0;
	unsigned char *out = malloc(cap);
	z_stream z;
	int zr;

	if (!out)
		return -ENOMEM;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 32) != Z_OK) {
		free(out);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = n > 0xffffffffu ? 0xffffffffu : (uInt)n;
	do {
		if (len == cap) {
			unsigned char *no;

			if (cap >= PPROF_MAX_RAW) {
				zr = Z_MEM_ERROR;
				break;
			}
			cap = cap * 2 > PPROF_MAX_RAW ? PPROF_MAX_RAW : cap * 2;
			no = realloc(out, cap);
			if (!no) {
				zr = Z_MEM_ERROR;
				break;
			}
			out = no;
		}
		z.next_out = out + len;
		z.avail_out = (uInt)(cap - len > 0xffffffffu ? 0xffffffffu : cap - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = (size_t)(z.next_out - out);
	} while (zr == Z_OK);
	inflateEnd(&z);
	if (zr != Z_STREAM_END) {
		free(out);
		return zr == Z_MEM_ERROR ? -E2BIG : -EINVAL;
	}
	*ret = out;
	*ret_len = len;
	return 0;
}

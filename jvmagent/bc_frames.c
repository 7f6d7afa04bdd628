/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bc_frames.c: the StackMapTable and the line/variable tables mapped to the new offsets. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_int.h"

/* an old offset that must be an instruction start (or, if end_ok, the code's end) */
int32_t jpa_bc_map_pc(const struct meth *m, uint32_t pc, int end_ok)
{
	if (pc > m->code_len || (pc == m->code_len && !end_ok))
		return -1;
	return m->map[pc];
}

/* one verification_type_info, copied with Uninitialized(offset) mapped; -1 bad */
static int copy_vtype(const struct meth *m, struct rd *r, struct buf *b)
{
	uint32_t tag = jpa_bc_rd_u1(r), v;

	if (r->err || tag > 8)
		return -1;
	jpa_bc_put_u1(b, tag);
	if (tag == 7) {
		jpa_bc_put_u2(b, jpa_bc_rd_u2(r));
	} else if (tag == 8) {
		int32_t pc;

		v = jpa_bc_rd_u2(r);
		pc = jpa_bc_map_pc(m, v, 0);
		if (pc < 0)
			return -1;
		jpa_bc_put_u2(b, (uint32_t)pc);
	}
	return r->err ? -1 : 0;
}

/* the StackMapTable's body re-encoded for the new offsets, plus the handler's frame */
int jpa_bc_emit_smt(const struct meth *m, struct rd *r, struct buf *b)
{
	uint32_t n = jpa_bc_rd_u2(r);
	int64_t prev = -1, nprev = -1;

	if (r->err || n == 0xffff)
		return -1;
	jpa_bc_put_u2(b, n + 1);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t type = jpa_bc_rd_u1(r), delta, k, nd;
		int64_t off;
		int32_t noff;

		if (type < 64)
			delta = type;
		else if (type < 128)
			delta = type - 64;
		else if (type < 247)
			return -1;
		else
			delta = jpa_bc_rd_u2(r);
		if (r->err)
			return -1;
		off = prev + delta + 1;
		noff = off < m->code_len ? jpa_bc_map_pc(m, (uint32_t)off, 0) : -1;
		if (noff < 0)
			return -1;
		nd = (uint32_t)(noff - nprev - 1);
		prev = off;
		nprev = noff;
		if (type < 64 || type == 251) {
			if (nd <= 63) {
				jpa_bc_put_u1(b, nd);
			} else {
				jpa_bc_put_u1(b, 251);
				jpa_bc_put_u2(b, nd);
			}
			continue;
		}
		if (type < 128 || type == 247) {
			if (nd <= 63) {
				jpa_bc_put_u1(b, 64 + nd);
			} else {
				jpa_bc_put_u1(b, 247);
				jpa_bc_put_u2(b, nd);
			}
			if (copy_vtype(m, r, b))
				return -1;
			continue;
		}
		jpa_bc_put_u1(b, type);
		jpa_bc_put_u2(b, nd);
		if (type < 251)
			continue; /* chop */
		if (type < 255) {
			for (k = 0; k < type - 251; k++)
				if (copy_vtype(m, r, b))
					return -1;
			continue;
		}
		for (int part = 0; part < 2; part++) {
			uint32_t cnt = jpa_bc_rd_u2(r);

			if (r->err || cnt > r->n - r->off)
				return -1;
			jpa_bc_put_u2(b, cnt);
			for (k = 0; k < cnt; k++)
				if (copy_vtype(m, r, b))
					return -1;
		}
	}
	/* the handler: full_frame, no locals, stack [java/lang/Throwable] */
	jpa_bc_put_u1(b, 255);
	jpa_bc_put_u2(b, (uint32_t)(m->end - nprev - 1));
	jpa_bc_put_u2(b, 0);
	jpa_bc_put_u2(b, 1);
	jpa_bc_put_u1(b, 7);
	jpa_bc_put_u2(b, m->c->cp_count + NEW_THROWABLE_CLASS);
	return r->err || r->off != r->n ? -1 : 0;
}

/* LineNumberTable (es = 4) or LocalVariable(Type)Table (es = 10) with offsets mapped */
int jpa_bc_emit_pc_table(const struct meth *m, struct rd *r, struct buf *b, int ranges)
{
	uint32_t n = jpa_bc_rd_u2(r), es = ranges ? 10 : 4;

	if (r->err || (uint64_t)n * es != r->n - r->off)
		return -1;
	jpa_bc_put_u2(b, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pc = jpa_bc_rd_u2(r);
		int32_t npc = jpa_bc_map_pc(m, pc, 0), nend;

		if (npc < 0)
			return -1;
		jpa_bc_put_u2(b, (uint32_t)npc);
		if (!ranges) {
			jpa_bc_put_u2(b, jpa_bc_rd_u2(r));
			continue;
		}
		nend = jpa_bc_map_pc(m, pc + jpa_bc_rd_u2(r), 1);
		if (nend < 0)
			return -1;
		jpa_bc_put_u2(b, (uint32_t)(nend - npc));
		jpa_bc_put(b, r->p + r->off, 6); /* name, descriptor or signature, index */
		jpa_bc_rd_skip(r, 6);
	}
	return r->err ? -1 : 0;
}

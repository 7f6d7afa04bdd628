/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bc_code.c: a method's instructions decoded, a constructor's entry found, laid out, emitted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_int.h"

/* the lengths of fixed-size opcodes; 0: variable (switches, wide) or not an opcode */
static const uint8_t op_len[256] = {
	[0x00 ... 0x0f] = 1, [0x10] = 2,	  [0x11] = 3,	       [0x12] = 2,
	[0x13 ... 0x14] = 3, [0x15 ... 0x19] = 2, [0x1a ... 0x35] = 1, [0x36 ... 0x3a] = 2,
	[0x3b ... 0x83] = 1, [0x84] = 3,	  [0x85 ... 0x98] = 1, [0x99 ... 0xa8] = 3,
	[0xa9] = 2,	     [0xac ... 0xb1] = 1, [0xb2 ... 0xb8] = 3, [0xb9 ... 0xba] = 5,
	[0xbb] = 3,	     [0xbc] = 2,	  [0xbd] = 3,	       [0xbe ... 0xbf] = 1,
	[0xc0 ... 0xc1] = 3, [0xc2 ... 0xc3] = 1, [0xc5] = 4,	       [0xc6 ... 0xc7] = 3,
	[0xc8 ... 0xc9] = 5,
};

int jpa_bc_refuse(struct meth *m, const char *why)
{
	m->why = why;
	return -1;
}

int jpa_bc_decode(struct meth *m)
{
	const uint8_t *code = m->code;
	uint32_t cl = m->code_len, pc = 0;

	while (pc < cl) {
		uint32_t op = code[pc], len = op_len[op], pad;
		struct insn *in = &m->ins[m->n_ins];
		uint8_t kind = K_PLAIN;

		if (op == OP_JSR || op == OP_JSR_W || op == OP_RET)
			return jpa_bc_refuse(m, "jsr/ret (code before Java 6) is not relocated");
		if (op == OP_TABLESWITCH || op == OP_LOOKUPSWITCH) {
			int64_t n;
			uint32_t at;

			pad = pad_at(pc);
			at = pc + 1 + pad;
			if ((uint64_t)at + 12 > cl)
				return jpa_bc_refuse(m, "truncated switch");
			if (op == OP_TABLESWITCH) {
				int32_t lo = get_s4(code + at + 4), hi = get_s4(code + at + 8);

				n = (int64_t)hi - lo + 1;
				if (hi < lo || (uint64_t)at + 12 + (uint64_t)n * 4 > cl)
					return jpa_bc_refuse(m, "bad tableswitch");
				len = 1 + pad + 12 + (uint32_t)n * 4;
				kind = K_TABLE;
			} else {
				n = get_s4(code + at + 4);
				if (n < 0 || (uint64_t)at + 8 + (uint64_t)n * 8 > cl)
					return jpa_bc_refuse(m, "bad lookupswitch");
				len = 1 + pad + 8 + (uint32_t)n * 8;
				kind = K_LOOKUP;
			}
		} else if (op == OP_WIDE) {
			uint32_t op2 = pc + 1 < cl ? code[pc + 1] : 0;

			if (op2 == OP_IINC)
				len = 6;
			else if ((op2 >= 0x15 && op2 <= 0x19) || (op2 >= 0x36 && op2 <= 0x3a))
				len = 4;
			else
				return jpa_bc_refuse(m, "bad wide instruction");
		} else if (!len) {
			return jpa_bc_refuse(m, "unknown opcode");
		} else if ((op >= 0x99 && op <= 0xa6) || op == 0xc6 || op == 0xc7) {
			kind = K_BRANCH;
		} else if (op == OP_GOTO) {
			kind = K_GOTO;
		} else if (op == OP_GOTO_W) {
			kind = K_GOTO_W;
		} else if (op >= OP_IRETURN && op <= OP_RETURN) {
			kind = K_RETURN;
		}
		if (len > cl - pc)
			return jpa_bc_refuse(m, "truncated instruction");
		in->old_pc = pc;
		in->old_len = len;
		in->kind = kind;
		in->wide = 0;
		m->map[pc] = 0; /* an instruction starts here */
		m->n_ins++;
		pc += len;
	}
	return 0;
}

/* old target of a branch's or switch's relative offset; -1 when it is no instruction start */
int64_t jpa_bc_target(const struct meth *m, const struct insn *in, int64_t rel)
{
	int64_t t = (int64_t)in->old_pc + rel;

	if (t < 0 || t >= m->code_len || m->map[t] < 0)
		return -1;
	return t;
}

/* every branch and switch target is an instruction start */
int jpa_bc_check_targets(struct meth *m)
{
	for (uint32_t i = 0; i < m->n_ins; i++) {
		const struct insn *in = &m->ins[i];
		const uint8_t *p = m->code + in->old_pc;
		uint32_t at = 1 + pad_at(in->old_pc), n;

		switch (in->kind) {
		case K_BRANCH:
		case K_GOTO:
			if (jpa_bc_target(m, in, get_s2(p + 1)) < 0)
				return jpa_bc_refuse(m, "branch into no instruction");
			break;
		case K_GOTO_W:
			if (jpa_bc_target(m, in, get_s4(p + 1)) < 0)
				return jpa_bc_refuse(m, "branch into no instruction");
			break;
		case K_TABLE:
			n = (in->old_len - at - 12) / 4;
			if (jpa_bc_target(m, in, get_s4(p + at)) < 0)
				return jpa_bc_refuse(m, "switch into no instruction");
			for (uint32_t k = 0; k < n; k++)
				if (jpa_bc_target(m, in, get_s4(p + at + 12 + 4 * k)) < 0)
					return jpa_bc_refuse(m, "switch into no instruction");
			break;
		case K_LOOKUP:
			n = (in->old_len - at - 8) / 8;
			if (jpa_bc_target(m, in, get_s4(p + at)) < 0)
				return jpa_bc_refuse(m, "switch into no instruction");
			for (uint32_t k = 0; k < n; k++)
				if (jpa_bc_target(m, in, get_s4(p + at + 8 + 8 * k + 4)) < 0)
					return jpa_bc_refuse(m, "switch into no instruction");
			break;
		default:
			break;
		}
	}
	return 0;
}

/* is the Methodref at index i an <init> of class `name`? (never when name is "") */
static int is_init_of(const struct cls *c, uint32_t i, const char *name)
{
	uint32_t cl, nat;

	if (jpa_bc_cp_tag(c, i) != 10)
		return 0;
	cl = jpa_bc_cp_ref(c, i, 0);
	nat = jpa_bc_cp_ref(c, i, 1);
	if (jpa_bc_cp_tag(c, cl) != 7 || jpa_bc_cp_tag(c, nat) != 12 ||
	    !jpa_bc_cp_utf8_is(c, jpa_bc_cp_ref(c, nat, 0), "<init>"))
		return 0;
	return !name || (name[0] && jpa_bc_cp_utf8_is(c, jpa_bc_cp_ref(c, cl, 0), name));
}

/*
 * A constructor's entry: the instruction after its super() or this() call (see the top).
 * Every branch stays on its side of the entry.
 */
int jpa_bc_find_entry(struct meth *m)
{
	const struct cls *c = m->c;
	uint32_t pending = 0, i;

	for (i = 0; i < m->n_ins; i++) {
		const uint8_t *p = m->code + m->ins[i].old_pc;
		uint32_t ref;

		if (p[0] == OP_NEW) {
			if (++pending > m->n_ins)
				return jpa_bc_refuse(m, "internal: new count");
			continue;
		}
		if (p[0] != OP_INVOKESPECIAL)
			continue;
		ref = (uint32_t)p[1] << 8 | p[2];
		if (!is_init_of(c, ref, NULL))
			continue;
		if (pending) {
			pending--;
			continue;
		}
		if (!is_init_of(c, ref, c->name) && !is_init_of(c, ref, c->super_name))
			return jpa_bc_refuse(
				m, "a constructor's first <init> call is not super() or this()");
		break;
	}
	if (i + 1 >= m->n_ins)
		return jpa_bc_refuse(
			m, "a constructor without a super() or this() call before its end");
	m->super_pc = m->ins[i].old_pc;
	m->entry = i + 1;
	m->entry_pc = m->ins[i + 1].old_pc;
	for (i = 0; i < m->n_ins; i++) {
		const struct insn *in = &m->ins[i];
		const uint8_t *p = m->code + in->old_pc;
		uint32_t at = 1 + pad_at(in->old_pc), n = 0, j;
		int before = i < m->entry;
		int64_t t = -1;

		if (in->kind == K_TABLE)
			n = (in->old_len - at - 12) / 4;
		else if (in->kind == K_LOOKUP)
			n = (in->old_len - at - 8) / 8;
		for (j = 0; j <= n; j++) {
			switch (in->kind) {
			case K_BRANCH:
			case K_GOTO:
				t = jpa_bc_target(m, in, get_s2(p + 1));
				break;
			case K_GOTO_W:
				t = jpa_bc_target(m, in, get_s4(p + 1));
				break;
			case K_TABLE:
			case K_LOOKUP:
				t = jpa_bc_target(m, in,
						  get_s4(p + at +
							 (j == n		? 0
							  : in->kind == K_TABLE ? 12 + 4 * j
										: 12 + 8 * j)));
				break;
			default:
				continue;
			}
			if ((t < (int64_t)m->entry_pc) != before)
				return jpa_bc_refuse(
					m, "a branch crosses a constructor's super() call");
		}
	}
	return 0;
}

/* a constructor's exception entry (old offsets) lies wholly on one side of its super() call */
int jpa_bc_ctor_exc_ok(const struct meth *m, uint32_t s, uint32_t e, uint32_t h)
{
	if (e <= m->super_pc)
		return h < m->super_pc;
	return s >= m->entry_pc && h >= m->entry_pc;
}

void jpa_bc_plan_args(struct meth *m, const char *desc, int is_static, unsigned int max)
{
	static const uint8_t loads[JPA_BC_ARG_KINDS] = {0x15, 0x16, 0x17, 0x18, 0x19};
	uint32_t slot = is_static ? 0 : 1;
	const char *p = desc + 1;

	m->prologue_len = PROLOGUE_LEN;
	m->n_args = 0;
	if (desc[0] != '(')
		return;
	for (unsigned int pos = 0; *p && *p != ')' && pos < max; pos++) {
		int kind = -1, width = 1;
		const char *t = p;

		while (*p == '[')
			p++;
		if (*p == 'L')
			p = strchr(p, ';');
		if (!p || !*p)
			goto out_none; /* junk: the verifier refuses the class anyway */
		p++;
		if (t + 1 == p) { /* one character: a primitive */
			if (strchr("IZBCS", *t))
				kind = 0;
			else if (*t == 'J')
				kind = 1, width = 2;
			else if (*t == 'F')
				kind = 2;
			else if (*t == 'D')
				kind = 3, width = 2;
			else
				goto out_none; /* V or junk */
		} else if ((size_t)(p - t) == 18 && !memcmp(t, "Ljava/lang/String;", 18)) {
			kind = 4;
		}
		if (kind >= 0 && slot <= 255) {
			m->arg[m->n_args].pos = (uint8_t)pos;
			m->arg[m->n_args].load = loads[kind];
			m->arg[m->n_args].slot = (uint8_t)slot;
			m->arg[m->n_args].kind = (uint8_t)kind;
			m->n_args++;
		}
		slot += (uint32_t)width;
	}
	m->prologue_len = PROLOGUE_LEN + ARG_CALL_LEN * m->n_args;
	return;
out_none:
	m->n_args = 0;
}

int jpa_bc_layout(struct meth *m)
{
	for (int round = 0; round < LAYOUT_ROUNDS; round++) {
		uint32_t pos = 0;
		int grew = 0;

		for (uint32_t i = 0; i < m->n_ins; i++) {
			struct insn *in = &m->ins[i];
			uint32_t at = 1 + pad_at(in->old_pc);

			if (i == m->entry)
				pos += m->prologue_len;
			in->block = pos;
			if (in->kind == K_RETURN)
				pos += LEAVE_LEN;
			in->pc = pos;
			switch (in->kind) {
			case K_GOTO:
				in->len = in->wide ? 5 : 3;
				break;
			case K_TABLE:
			case K_LOOKUP:
				in->len = 1 + pad_at(pos) + (in->old_len - at);
				break;
			default:
				in->len = in->old_len;
			}
			pos += in->len;
			if (pos > CODE_MAX)
				return jpa_bc_refuse(m, "code too long after instrumentation");
			m->map[in->old_pc] = (int32_t)in->block;
		}
		m->end = pos;
		m->map[m->code_len] = (int32_t)pos;
		if ((uint64_t)pos + HANDLER_LEN > CODE_MAX)
			return jpa_bc_refuse(m, "code too long after instrumentation");
		for (uint32_t i = 0; i < m->n_ins; i++) {
			struct insn *in = &m->ins[i];
			int64_t rel;

			if ((in->kind != K_BRANCH && in->kind != K_GOTO) || in->wide)
				continue;
			rel = (int64_t)m->map[jpa_bc_target(m, in,
							    get_s2(m->code + in->old_pc + 1))] -
			      in->pc;
			if (rel >= -32768 && rel <= 32767)
				continue;
			if (in->kind == K_BRANCH)
				return jpa_bc_refuse(
					m, "conditional branch out of range after instrumentation");
			in->wide = 1;
			grew = 1;
		}
		if (!grew)
			return 0;
	}
	return jpa_bc_refuse(m, "layout did not settle");
}

static void put_call(struct buf *b, int id, uint32_t ref)
{
	jpa_bc_put_u1(b, OP_SIPUSH);
	jpa_bc_put_u2(b, (uint32_t)id);
	jpa_bc_put_u1(b, OP_INVOKESTATIC);
	jpa_bc_put_u2(b, ref);
}

static uint32_t rel_of(const struct meth *m, const struct insn *in, int64_t old_rel)
{
	return (uint32_t)((int64_t)m->map[jpa_bc_target(m, in, old_rel)] - in->pc);
}

void jpa_bc_emit_code(const struct meth *m, struct buf *b)
{
	uint32_t base = m->c->cp_count;

	for (uint32_t i = 0; i < m->n_ins; i++) {
		const struct insn *in = &m->ins[i];
		const uint8_t *p = m->code + in->old_pc;
		uint32_t at = 1 + pad_at(in->old_pc), n;

		if (i == m->entry) {
			put_call(b, m->id, base + NEW_ENTER_REF);
			for (unsigned int k = 0; k < m->n_args; k++) {
				jpa_bc_put_u1(b, OP_BIPUSH);
				jpa_bc_put_u1(b, m->arg[k].pos);
				jpa_bc_put_u1(b, m->arg[k].load);
				jpa_bc_put_u1(b, m->arg[k].slot);
				jpa_bc_put_u1(b, OP_INVOKESTATIC);
				jpa_bc_put_u2(b, base + NEW_MAX + 4 * m->arg[k].kind + 3);
			}
		}
		switch (in->kind) {
		case K_RETURN:
			put_call(b, m->id, base + NEW_LEAVE_REF);
			jpa_bc_put_u1(b, p[0]);
			break;
		case K_BRANCH:
		case K_GOTO:
			if (in->wide) {
				jpa_bc_put_u1(b, OP_GOTO_W);
				jpa_bc_put_u4(b, rel_of(m, in, get_s2(p + 1)));
			} else {
				jpa_bc_put_u1(b, p[0]);
				jpa_bc_put_u2(b, rel_of(m, in, get_s2(p + 1)) & 0xffff);
			}
			break;
		case K_GOTO_W:
			jpa_bc_put_u1(b, p[0]);
			jpa_bc_put_u4(b, rel_of(m, in, get_s4(p + 1)));
			break;
		case K_TABLE:
			jpa_bc_put_u1(b, p[0]);
			jpa_bc_put(b, "\0\0\0", pad_at(in->pc));
			jpa_bc_put_u4(b, rel_of(m, in, get_s4(p + at)));
			jpa_bc_put(b, p + at + 4, 8); /* low, high */
			n = (in->old_len - at - 12) / 4;
			for (uint32_t k = 0; k < n; k++)
				jpa_bc_put_u4(b, rel_of(m, in, get_s4(p + at + 12 + 4 * k)));
			break;
		case K_LOOKUP:
			jpa_bc_put_u1(b, p[0]);
			jpa_bc_put(b, "\0\0\0", pad_at(in->pc));
			jpa_bc_put_u4(b, rel_of(m, in, get_s4(p + at)));
			jpa_bc_put(b, p + at + 4, 4); /* npairs */
			n = (in->old_len - at - 8) / 8;
			for (uint32_t k = 0; k < n; k++) {
				jpa_bc_put(b, p + at + 8 + 8 * k, 4);
				jpa_bc_put_u4(b, rel_of(m, in, get_s4(p + at + 8 + 8 * k + 4)));
			}
			break;
		default:
			jpa_bc_put(b, p, in->old_len);
		}
	}
	put_call(b, m->id, base + NEW_THROWN_REF);
	jpa_bc_put_u1(b, OP_ATHROW);
}

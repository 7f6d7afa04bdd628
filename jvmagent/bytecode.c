/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bytecode.c: rewrites class files so matched methods call the trace helper at entry and exits. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytecode.h"

/*
 * A method's code becomes
 *
 *	sipush id; invokestatic jprof/Trace.enter(I)V		(the prologue, new offset 0)
 *	... the original code, relocated; before each xreturn/return:
 *	sipush id; invokestatic jprof/Trace.leave(I)V
 *	sipush id; invokestatic jprof/Trace.thrown(I)V; athrow	(the handler, at the end)
 *
 * with one more exception-table entry, last (so every handler of the method's own comes
 * first): any exception in [the original code] goes to the handler, which records it and
 * rethrows. The inserted code is stack-neutral and needs no local: max_stack grows by one
 * (an int above whatever a return leaves), at least 2 (the handler's Throwable and the id).
 *
 * Relocation: every instruction of the old code keeps its place in order; a return gets its
 * leave call as a prefix, and whatever pointed at the return (a branch, a stack map frame,
 * a handler's range, a line number) now points at that prefix, so a jump to a return is
 * timed too. An old offset's new one is map[old]: the start of its instruction's block
 * (prefix included); map[code_length] is the end of the relocated code. Offsets that are
 * not instruction starts make the method refused. goto that no longer reaches becomes
 * goto_w; a conditional branch that no longer reaches makes the method refused. Switch
 * padding follows the new position. The StackMapTable's frames are re-encoded with new
 * deltas (same_frame and same_locals_1_stack_item widen to their _extended forms when the
 * delta outgrows 63), Uninitialized(offset) types are mapped, and one full_frame is added at
 * the handler: no locals, stack [java/lang/Throwable]. Fewer locals is assignable from any
 * frame of the range, so it fits every instruction before it. LineNumberTable,
 * LocalVariableTable and LocalVariableTypeTable are mapped; any other attribute of Code makes
 * the method refused (they may hold offsets we would not map). jsr/ret (pre-Java 6 code) are
 * refused.
 *
 * Constructors (<init>): the prologue goes after the super() or this() call instead of at 0,
 * as a prefix of the instruction that follows it (the entry), and the catch-all covers only
 * the code from there on. Before that call `this` is uninitializedThis, which a handler's
 * frame cannot hold (and a constructor may not catch its super() call's exception), so the
 * code before it is left uncovered: an exception there is no call begun. The call is the
 * first invokespecial of <init> not paired with an earlier `new` (counted in code order, as
 * javac nests them), and it must name this class or its superclass. Whatever points at the
 * entry (a branch, a frame, a line) points past the prologue, so a loop back to the body's
 * first instruction does not enter again. Shapes this cannot vouch for are refused with a
 * reason: a branch or switch from one side of the entry to the other, an exception entry
 * that covers the super() call or whose handler lies on the other side of it, no such call.
 *
 * Untrusted input: every read is bounds-checked against its enclosing structure, every
 * count is bounded by the bytes that must follow it, and the output is budgeted.
 */

#define PROLOGUE_LEN  6 /* sipush id; invokestatic #enter */
#define LEAVE_LEN     6 /* sipush id; invokestatic #leave */
#define HANDLER_LEN   7 /* sipush id; invokestatic #thrown; athrow */
#define CODE_MAX      65535u
#define LAYOUT_ROUNDS 64
#define OUT_MAX	      (2ull * JPA_BC_CLASS_MAX)

/* new constant pool entries, appended in this order from index cp_count */
enum {
	NEW_HELPER_UTF8,
	NEW_HELPER_CLASS,
	NEW_DESC_UTF8,
	NEW_ENTER_UTF8,
	NEW_ENTER_NAT,
	NEW_ENTER_REF,
	NEW_LEAVE_UTF8,
	NEW_LEAVE_NAT,
	NEW_LEAVE_REF,
	NEW_THROWN_UTF8,
	NEW_THROWN_NAT,
	NEW_THROWN_REF,
	NEW_THROWABLE_UTF8,
	NEW_THROWABLE_CLASS,
	NEW_SMT_UTF8,
	NEW_MAX
};

enum op {
	OP_SIPUSH = 0x11,
	OP_IINC = 0x84,
	OP_GOTO = 0xa7,
	OP_JSR = 0xa8,
	OP_RET = 0xa9,
	OP_TABLESWITCH = 0xaa,
	OP_LOOKUPSWITCH = 0xab,
	OP_IRETURN = 0xac,
	OP_RETURN = 0xb1,
	OP_INVOKESTATIC = 0xb8,
	OP_ATHROW = 0xbf,
	OP_INVOKESPECIAL = 0xb7,
	OP_NEW = 0xbb,
	OP_WIDE = 0xc4,
	OP_GOTO_W = 0xc8,
	OP_JSR_W = 0xc9,
};

enum kind { K_PLAIN, K_BRANCH, K_GOTO, K_GOTO_W, K_TABLE, K_LOOKUP, K_RETURN };

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

/* output buffer with a budget; err sticks */
struct buf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

static void put(struct buf *b, const void *src, size_t n)
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

static void put_u1(struct buf *b, uint32_t v)
{
	uint8_t x = (uint8_t)v;

	put(b, &x, 1);
}

static void put_u2(struct buf *b, uint32_t v)
{
	uint8_t x[2] = {(uint8_t)(v >> 8), (uint8_t)v};

	put(b, x, 2);
}

static void put_u4(struct buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};

	put(b, x, 4);
}

static void put_utf8(struct buf *b, const char *s)
{
	put_u1(b, 1);
	put_u2(b, (uint32_t)strlen(s));
	put(b, s, strlen(s));
}

static void set_u4(struct buf *b, size_t at, uint32_t v)
{
	if (b->err || at + 4 > b->len)
		return;
	b->p[at] = (uint8_t)(v >> 24);
	b->p[at + 1] = (uint8_t)(v >> 16);
	b->p[at + 2] = (uint8_t)(v >> 8);
	b->p[at + 3] = (uint8_t)v;
}

/* bounded reader over [p, p + n); err sticks, reads past the end give 0 */
struct rd {
	const uint8_t *p;
	size_t n, off;
	int err;
};

static int need(struct rd *r, size_t k)
{
	if (r->err || k > r->n - r->off) {
		r->err = 1;
		return 0;
	}
	return 1;
}

static uint32_t rd_u1(struct rd *r)
{
	if (!need(r, 1))
		return 0;
	return r->p[r->off++];
}

static uint32_t rd_u2(struct rd *r)
{
	uint32_t v;

	if (!need(r, 2))
		return 0;
	v = (uint32_t)r->p[r->off] << 8 | r->p[r->off + 1];
	r->off += 2;
	return v;
}

static uint32_t rd_u4(struct rd *r)
{
	uint32_t v;

	if (!need(r, 4))
		return 0;
	v = (uint32_t)r->p[r->off] << 24 | (uint32_t)r->p[r->off + 1] << 16 |
	    (uint32_t)r->p[r->off + 2] << 8 | r->p[r->off + 3];
	r->off += 4;
	return v;
}

static void rd_skip(struct rd *r, size_t k)
{
	if (need(r, k))
		r->off += k;
}

static int32_t get_s4(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static int16_t get_s2(const uint8_t *p)
{
	return (int16_t)((uint16_t)(p[0] << 8 | p[1]));
}

/* the class being rewritten */
struct cls {
	const uint8_t *in;
	size_t len;
	uint32_t major;
	uint32_t cp_count;
	uint32_t *cp_off; /* offset of entry i's tag; 0 for index 0 and the second slot of longs */
	size_t cp_end;
	char name[JPA_BC_NAME_MAX];
	char super_name[JPA_BC_NAME_MAX]; /* "" none or unreadable */
};

static int cp_tag(const struct cls *c, uint32_t i)
{
	if (i == 0 || i >= c->cp_count || !c->cp_off[i])
		return -1;
	return c->in[c->cp_off[i]];
}

/* Utf8 entry i as bytes; NULL when it is none */
static const uint8_t *cp_utf8(const struct cls *c, uint32_t i, uint32_t *ret_len)
{
	const uint8_t *p;

	if (cp_tag(c, i) != 1)
		return NULL;
	p = c->in + c->cp_off[i];
	*ret_len = (uint32_t)p[1] << 8 | p[2];
	return p + 3;
}

static int cp_utf8_is(const struct cls *c, uint32_t i, const char *s)
{
	uint32_t n;
	const uint8_t *p = cp_utf8(c, i, &n);

	return p && n == strlen(s) && !memcmp(p, s, n);
}

/* Utf8 entry i as a C string; -1 when it is none, too long or holds a NUL */
static int cp_cstr(const struct cls *c, uint32_t i, char *out, size_t cap)
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
static uint32_t cp_ref(const struct cls *c, uint32_t i, uint32_t k)
{
	const uint8_t *p = c->in + c->cp_off[i] + 1 + 2 * k;

	return (uint32_t)p[0] << 8 | p[1];
}

static int parse_cp(struct cls *c, struct rd *r)
{
	c->cp_count = rd_u2(r);
	if (r->err || c->cp_count == 0)
		return -EINVAL;
	c->cp_off = calloc(c->cp_count, sizeof(*c->cp_off));
	if (!c->cp_off)
		return -ENOMEM;
	for (uint32_t i = 1; i < c->cp_count; i++) {
		size_t at = r->off;
		uint32_t tag = rd_u1(r);

		switch (tag) {
		case 1: /* Utf8 */
			rd_skip(r, rd_u2(r));
			break;
		case 3:	 /* Integer */
		case 4:	 /* Float */
		case 9:	 /* Fieldref */
		case 10: /* Methodref */
		case 11: /* InterfaceMethodref */
		case 12: /* NameAndType */
		case 17: /* Dynamic */
		case 18: /* InvokeDynamic */
			rd_skip(r, 4);
			break;
		case 5: /* Long */
		case 6: /* Double: two slots */
			rd_skip(r, 8);
			c->cp_off[i++] = (uint32_t)at;
			if (r->err || i >= c->cp_count) /* its second slot past the end */
				return -EINVAL;
			continue;
		case 7:	 /* Class */
		case 8:	 /* String */
		case 16: /* MethodType */
		case 19: /* Module */
		case 20: /* Package */
			rd_skip(r, 2);
			break;
		case 15: /* MethodHandle */
			rd_skip(r, 3);
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
static void skip_attrs(struct rd *r)
{
	uint32_t n = rd_u2(r);

	for (uint32_t i = 0; i < n && !r->err; i++) {
		rd_skip(r, 2);
		rd_skip(r, rd_u4(r));
	}
}

/* one method's code: decode, lay out, emit */
struct insn {
	uint32_t old_pc;
	uint32_t old_len;
	uint32_t pc;	/* new offset of the instruction itself */
	uint32_t block; /* new offset of its block (a return's leave prefix first) */
	uint32_t len;	/* new length */
	uint8_t kind;
	uint8_t wide; /* goto grown to goto_w */
};

struct meth {
	const struct cls *c;
	int id;
	const uint8_t *code;
	uint32_t code_len;
	struct insn *ins;
	uint32_t n_ins;
	int32_t *map;	   /* old offset -> new block offset, -1 not an instruction start */
	uint32_t end;	   /* new offset of the handler */
	uint32_t entry;	   /* index of the instruction the prologue precedes: 0, or a ctor's */
	uint32_t entry_pc; /* its old offset */
	uint32_t super_pc; /* a constructor's super()/this() call's old offset */
	int ctor;
	const char *why;
};

static uint32_t pad_at(uint32_t pc)
{
	return (4 - ((pc + 1) & 3)) & 3;
}

static int refuse(struct meth *m, const char *why)
{
	m->why = why;
	return -1;
}

static int decode(struct meth *m)
{
	const uint8_t *code = m->code;
	uint32_t cl = m->code_len, pc = 0;

	while (pc < cl) {
		uint32_t op = code[pc], len = op_len[op], pad;
		struct insn *in = &m->ins[m->n_ins];
		uint8_t kind = K_PLAIN;

		if (op == OP_JSR || op == OP_JSR_W || op == OP_RET)
			return refuse(m, "jsr/ret (code before Java 6) is not relocated");
		if (op == OP_TABLESWITCH || op == OP_LOOKUPSWITCH) {
			int64_t n;
			uint32_t at;

			pad = pad_at(pc);
			at = pc + 1 + pad;
			if ((uint64_t)at + 12 > cl)
				return refuse(m, "truncated switch");
			if (op == OP_TABLESWITCH) {
				int32_t lo = get_s4(code + at + 4), hi = get_s4(code + at + 8);

				n = (int64_t)hi - lo + 1;
				if (hi < lo || (uint64_t)at + 12 + (uint64_t)n * 4 > cl)
					return refuse(m, "bad tableswitch");
				len = 1 + pad + 12 + (uint32_t)n * 4;
				kind = K_TABLE;
			} else {
				n = get_s4(code + at + 4);
				if (n < 0 || (uint64_t)at + 8 + (uint64_t)n * 8 > cl)
					return refuse(m, "bad lookupswitch");
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
				return refuse(m, "bad wide instruction");
		} else if (!len) {
			return refuse(m, "unknown opcode");
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
			return refuse(m, "truncated instruction");
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
static int64_t target(const struct meth *m, const struct insn *in, int64_t rel)
{
	int64_t t = (int64_t)in->old_pc + rel;

	if (t < 0 || t >= m->code_len || m->map[t] < 0)
		return -1;
	return t;
}

/* every branch and switch target is an instruction start */
static int check_targets(struct meth *m)
{
	for (uint32_t i = 0; i < m->n_ins; i++) {
		const struct insn *in = &m->ins[i];
		const uint8_t *p = m->code + in->old_pc;
		uint32_t at = 1 + pad_at(in->old_pc), n;

		switch (in->kind) {
		case K_BRANCH:
		case K_GOTO:
			if (target(m, in, get_s2(p + 1)) < 0)
				return refuse(m, "branch into no instruction");
			break;
		case K_GOTO_W:
			if (target(m, in, get_s4(p + 1)) < 0)
				return refuse(m, "branch into no instruction");
			break;
		case K_TABLE:
			n = (in->old_len - at - 12) / 4;
			if (target(m, in, get_s4(p + at)) < 0)
				return refuse(m, "switch into no instruction");
			for (uint32_t k = 0; k < n; k++)
				if (target(m, in, get_s4(p + at + 12 + 4 * k)) < 0)
					return refuse(m, "switch into no instruction");
			break;
		case K_LOOKUP:
			n = (in->old_len - at - 8) / 8;
			if (target(m, in, get_s4(p + at)) < 0)
				return refuse(m, "switch into no instruction");
			for (uint32_t k = 0; k < n; k++)
				if (target(m, in, get_s4(p + at + 8 + 8 * k + 4)) < 0)
					return refuse(m, "switch into no instruction");
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

	if (cp_tag(c, i) != 10)
		return 0;
	cl = cp_ref(c, i, 0);
	nat = cp_ref(c, i, 1);
	if (cp_tag(c, cl) != 7 || cp_tag(c, nat) != 12 ||
	    !cp_utf8_is(c, cp_ref(c, nat, 0), "<init>"))
		return 0;
	return !name || (name[0] && cp_utf8_is(c, cp_ref(c, cl, 0), name));
}

/*
 * A constructor's entry: the instruction after its super() or this() call (see the top).
 * Every branch stays on its side of the entry.
 */
static int find_entry(struct meth *m)
{
	const struct cls *c = m->c;
	uint32_t pending = 0, i;

	for (i = 0; i < m->n_ins; i++) {
		const uint8_t *p = m->code + m->ins[i].old_pc;
		uint32_t ref;

		if (p[0] == OP_NEW) {
			if (++pending > m->n_ins)
				return refuse(m, "internal: new count");
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
			return refuse(m,
				      "a constructor's first <init> call is not super() or this()");
		break;
	}
	if (i + 1 >= m->n_ins)
		return refuse(m, "a constructor without a super() or this() call before its end");
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
				t = target(m, in, get_s2(p + 1));
				break;
			case K_GOTO_W:
				t = target(m, in, get_s4(p + 1));
				break;
			case K_TABLE:
			case K_LOOKUP:
				t = target(m, in,
					   get_s4(p + at +
						  (j == n		 ? 0
						   : in->kind == K_TABLE ? 12 + 4 * j
									 : 12 + 8 * j)));
				break;
			default:
				continue;
			}
			if ((t < (int64_t)m->entry_pc) != before)
				return refuse(m, "a branch crosses a constructor's super() call");
		}
	}
	return 0;
}

/* a constructor's exception entry (old offsets) lies wholly on one side of its super() call */
static int ctor_exc_ok(const struct meth *m, uint32_t s, uint32_t e, uint32_t h)
{
	if (e <= m->super_pc)
		return h < m->super_pc;
	return s >= m->entry_pc && h >= m->entry_pc;
}

static int layout(struct meth *m)
{
	for (int round = 0; round < LAYOUT_ROUNDS; round++) {
		uint32_t pos = 0;
		int grew = 0;

		for (uint32_t i = 0; i < m->n_ins; i++) {
			struct insn *in = &m->ins[i];
			uint32_t at = 1 + pad_at(in->old_pc);

			if (i == m->entry)
				pos += PROLOGUE_LEN;
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
				return refuse(m, "code too long after instrumentation");
			m->map[in->old_pc] = (int32_t)in->block;
		}
		m->end = pos;
		m->map[m->code_len] = (int32_t)pos;
		if ((uint64_t)pos + HANDLER_LEN > CODE_MAX)
			return refuse(m, "code too long after instrumentation");
		for (uint32_t i = 0; i < m->n_ins; i++) {
			struct insn *in = &m->ins[i];
			int64_t rel;

			if ((in->kind != K_BRANCH && in->kind != K_GOTO) || in->wide)
				continue;
			rel = (int64_t)m->map[target(m, in, get_s2(m->code + in->old_pc + 1))] -
			      in->pc;
			if (rel >= -32768 && rel <= 32767)
				continue;
			if (in->kind == K_BRANCH)
				return refuse(
					m, "conditional branch out of range after instrumentation");
			in->wide = 1;
			grew = 1;
		}
		if (!grew)
			return 0;
	}
	return refuse(m, "layout did not settle");
}

static void put_call(struct buf *b, int id, uint32_t ref)
{
	put_u1(b, OP_SIPUSH);
	put_u2(b, (uint32_t)id);
	put_u1(b, OP_INVOKESTATIC);
	put_u2(b, ref);
}

static uint32_t rel_of(const struct meth *m, const struct insn *in, int64_t old_rel)
{
	return (uint32_t)((int64_t)m->map[target(m, in, old_rel)] - in->pc);
}

static void emit_code(const struct meth *m, struct buf *b)
{
	uint32_t base = m->c->cp_count;

	for (uint32_t i = 0; i < m->n_ins; i++) {
		const struct insn *in = &m->ins[i];
		const uint8_t *p = m->code + in->old_pc;
		uint32_t at = 1 + pad_at(in->old_pc), n;

		if (i == m->entry)
			put_call(b, m->id, base + NEW_ENTER_REF);
		switch (in->kind) {
		case K_RETURN:
			put_call(b, m->id, base + NEW_LEAVE_REF);
			put_u1(b, p[0]);
			break;
		case K_BRANCH:
		case K_GOTO:
			if (in->wide) {
				put_u1(b, OP_GOTO_W);
				put_u4(b, rel_of(m, in, get_s2(p + 1)));
			} else {
				put_u1(b, p[0]);
				put_u2(b, rel_of(m, in, get_s2(p + 1)) & 0xffff);
			}
			break;
		case K_GOTO_W:
			put_u1(b, p[0]);
			put_u4(b, rel_of(m, in, get_s4(p + 1)));
			break;
		case K_TABLE:
			put_u1(b, p[0]);
			put(b, "\0\0\0", pad_at(in->pc));
			put_u4(b, rel_of(m, in, get_s4(p + at)));
			put(b, p + at + 4, 8); /* low, high */
			n = (in->old_len - at - 12) / 4;
			for (uint32_t k = 0; k < n; k++)
				put_u4(b, rel_of(m, in, get_s4(p + at + 12 + 4 * k)));
			break;
		case K_LOOKUP:
			put_u1(b, p[0]);
			put(b, "\0\0\0", pad_at(in->pc));
			put_u4(b, rel_of(m, in, get_s4(p + at)));
			put(b, p + at + 4, 4); /* npairs */
			n = (in->old_len - at - 8) / 8;
			for (uint32_t k = 0; k < n; k++) {
				put(b, p + at + 8 + 8 * k, 4);
				put_u4(b, rel_of(m, in, get_s4(p + at + 8 + 8 * k + 4)));
			}
			break;
		default:
			put(b, p, in->old_len);
		}
	}
	put_call(b, m->id, base + NEW_THROWN_REF);
	put_u1(b, OP_ATHROW);
}

/* an old offset that must be an instruction start (or, if end_ok, the code's end) */
static int32_t map_pc(const struct meth *m, uint32_t pc, int end_ok)
{
	if (pc > m->code_len || (pc == m->code_len && !end_ok))
		return -1;
	return m->map[pc];
}

/* one verification_type_info, copied with Uninitialized(offset) mapped; -1 bad */
static int copy_vtype(const struct meth *m, struct rd *r, struct buf *b)
{
	uint32_t tag = rd_u1(r), v;

	if (r->err || tag > 8)
		return -1;
	put_u1(b, tag);
	if (tag == 7) {
		put_u2(b, rd_u2(r));
	} else if (tag == 8) {
		int32_t pc;

		v = rd_u2(r);
		pc = map_pc(m, v, 0);
		if (pc < 0)
			return -1;
		put_u2(b, (uint32_t)pc);
	}
	return r->err ? -1 : 0;
}

/* the StackMapTable's body re-encoded for the new offsets, plus the handler's frame */
static int emit_smt(const struct meth *m, struct rd *r, struct buf *b)
{
	uint32_t n = rd_u2(r);
	int64_t prev = -1, nprev = -1;

	if (r->err || n == 0xffff)
		return -1;
	put_u2(b, n + 1);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t type = rd_u1(r), delta, k, nd;
		int64_t off;
		int32_t noff;

		if (type < 64)
			delta = type;
		else if (type < 128)
			delta = type - 64;
		else if (type < 247)
			return -1;
		else
			delta = rd_u2(r);
		if (r->err)
			return -1;
		off = prev + delta + 1;
		noff = off < m->code_len ? map_pc(m, (uint32_t)off, 0) : -1;
		if (noff < 0)
			return -1;
		nd = (uint32_t)(noff - nprev - 1);
		prev = off;
		nprev = noff;
		if (type < 64 || type == 251) {
			if (nd <= 63) {
				put_u1(b, nd);
			} else {
				put_u1(b, 251);
				put_u2(b, nd);
			}
			continue;
		}
		if (type < 128 || type == 247) {
			if (nd <= 63) {
				put_u1(b, 64 + nd);
			} else {
				put_u1(b, 247);
				put_u2(b, nd);
			}
			if (copy_vtype(m, r, b))
				return -1;
			continue;
		}
		put_u1(b, type);
		put_u2(b, nd);
		if (type < 251)
			continue; /* chop */
		if (type < 255) {
			for (k = 0; k < type - 251; k++)
				if (copy_vtype(m, r, b))
					return -1;
			continue;
		}
		for (int part = 0; part < 2; part++) {
			uint32_t cnt = rd_u2(r);

			if (r->err || cnt > r->n - r->off)
				return -1;
			put_u2(b, cnt);
			for (k = 0; k < cnt; k++)
				if (copy_vtype(m, r, b))
					return -1;
		}
	}
	/* the handler: full_frame, no locals, stack [java/lang/Throwable] */
	put_u1(b, 255);
	put_u2(b, (uint32_t)(m->end - nprev - 1));
	put_u2(b, 0);
	put_u2(b, 1);
	put_u1(b, 7);
	put_u2(b, m->c->cp_count + NEW_THROWABLE_CLASS);
	return r->err || r->off != r->n ? -1 : 0;
}

/* LineNumberTable (es = 4) or LocalVariable(Type)Table (es = 10) with offsets mapped */
static int emit_pc_table(const struct meth *m, struct rd *r, struct buf *b, int ranges)
{
	uint32_t n = rd_u2(r), es = ranges ? 10 : 4;

	if (r->err || (uint64_t)n * es != r->n - r->off)
		return -1;
	put_u2(b, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pc = rd_u2(r);
		int32_t npc = map_pc(m, pc, 0), nend;

		if (npc < 0)
			return -1;
		put_u2(b, (uint32_t)npc);
		if (!ranges) {
			put_u2(b, rd_u2(r));
			continue;
		}
		nend = map_pc(m, pc + rd_u2(r), 1);
		if (nend < 0)
			return -1;
		put_u2(b, (uint32_t)(nend - npc));
		put(b, r->p + r->off, 6); /* name, descriptor or signature, index */
		rd_skip(r, 6);
	}
	return r->err ? -1 : 0;
}

/* code attribute body [body, body + n): the rewritten attribute into b; -1 refused (m->why) */
static int rewrite_code(struct meth *m, uint32_t name_idx, const uint8_t *body, uint32_t n,
			struct buf *b)
{
	const struct cls *c = m->c;
	struct rd r = {.p = body, .n = n};
	uint32_t max_stack, max_locals, n_exc, n_attr, new_attrs = 0;
	size_t len_at, code_at, attrs_at;
	int has_smt = 0;

	max_stack = rd_u2(&r);
	max_locals = rd_u2(&r);
	m->code_len = rd_u4(&r);
	if (r.err || m->code_len == 0 || m->code_len > CODE_MAX || m->code_len > r.n - r.off)
		return refuse(m, "malformed Code attribute");
	m->code = body + r.off;
	r.off += m->code_len;
	m->ins = calloc(m->code_len, sizeof(*m->ins));
	m->map = malloc((m->code_len + 1) * sizeof(*m->map));
	if (!m->ins || !m->map)
		return refuse(m, "out of memory");
	memset(m->map, 0xff, (m->code_len + 1) * sizeof(*m->map));
	if (decode(m) || check_targets(m) || (m->ctor && find_entry(m)) || layout(m))
		return -1;
	if (max_stack + 1 > 0xffff)
		return refuse(m, "max_stack too large");

	put_u2(b, name_idx);
	len_at = b->len;
	put_u4(b, 0);
	put_u2(b, max_stack + 1 > 2 ? max_stack + 1 : 2);
	put_u2(b, max_locals);
	code_at = b->len;
	put_u4(b, 0);
	emit_code(m, b);
	if (!b->err && b->len - code_at - 4 != (size_t)m->end + HANDLER_LEN)
		return refuse(m, "internal: code length mismatch");
	set_u4(b, code_at, m->end + HANDLER_LEN);

	n_exc = rd_u2(&r);
	if (r.err || n_exc == 0xffff || (uint64_t)n_exc * 8 > r.n - r.off)
		return refuse(m, "malformed exception table");
	put_u2(b, n_exc + 1);
	for (uint32_t i = 0; i < n_exc; i++) {
		int32_t s = map_pc(m, rd_u2(&r), 0), e = map_pc(m, rd_u2(&r), 1);
		int32_t h = map_pc(m, rd_u2(&r), 0);

		if (s < 0 || e < 0 || h < 0 || s >= e)
			return refuse(m, "exception table entry off instruction starts");
		/* the three just read: start, end, handler */
		if (m->ctor && !ctor_exc_ok(m, get_s2(r.p + r.off - 6) & 0xffff,
					    get_s2(r.p + r.off - 4) & 0xffff,
					    get_s2(r.p + r.off - 2) & 0xffff))
			return refuse(m,
				      "an exception entry covers the super() call or crosses it");
		put_u2(b, (uint32_t)s);
		put_u2(b, (uint32_t)e);
		put_u2(b, (uint32_t)h);
		put_u2(b, rd_u2(&r));
	}
	put_u2(b, (uint32_t)m->map[m->entry_pc]);
	put_u2(b, m->end);
	put_u2(b, m->end);
	put_u2(b, 0); /* any */

	n_attr = rd_u2(&r);
	if (r.err)
		return refuse(m, "malformed Code attribute");
	attrs_at = b->len;
	put_u2(b, n_attr);
	for (uint32_t i = 0; i < n_attr; i++) {
		uint32_t an = rd_u2(&r), alen = rd_u4(&r);
		struct rd a;
		size_t at;
		int bad;

		if (r.err || alen > r.n - r.off)
			return refuse(m, "malformed Code attribute");
		a = (struct rd){.p = body + r.off, .n = alen};
		r.off += alen;
		put_u2(b, an);
		at = b->len;
		put_u4(b, 0);
		if (cp_utf8_is(c, an, "StackMapTable")) {
			bad = has_smt++ || emit_smt(m, &a, b);
		} else if (cp_utf8_is(c, an, "LineNumberTable")) {
			bad = emit_pc_table(m, &a, b, 0);
		} else if (cp_utf8_is(c, an, "LocalVariableTable") ||
			   cp_utf8_is(c, an, "LocalVariableTypeTable")) {
			bad = emit_pc_table(m, &a, b, 1);
		} else {
			return refuse(m, "an attribute of Code this rewriter does not map");
		}
		if (bad)
			return refuse(m, "malformed StackMapTable or line/variable table");
		set_u4(b, at, (uint32_t)(b->len - at - 4));
	}
	if (r.off != r.n)
		return refuse(m, "malformed Code attribute");
	/* class files from Java 6 on are type-checked: the handler needs its frame */
	if (!has_smt && c->major >= 50) {
		struct rd none = {.p = (const uint8_t *)"\0", .n = 2};
		size_t at;

		put_u2(b, c->cp_count + NEW_SMT_UTF8);
		at = b->len;
		put_u4(b, 0);
		(void)emit_smt(m, &none, b);
		set_u4(b, at, (uint32_t)(b->len - at - 4));
		new_attrs = 1;
	}
	if (n_attr + new_attrs > 0xffff)
		return refuse(m, "too many attributes");
	if (!b->err) {
		b->p[attrs_at] = (uint8_t)((n_attr + new_attrs) >> 8);
		b->p[attrs_at + 1] = (uint8_t)(n_attr + new_attrs);
	}
	set_u4(b, len_at, (uint32_t)(b->len - len_at - 4));
	return b->err ? refuse(m, "output over budget") : 0;
}

static void put_new_cp(const struct cls *c, struct buf *b)
{
	uint32_t base = c->cp_count;
	static const char *const names[3] = {JPA_BC_ENTER, JPA_BC_LEAVE, JPA_BC_THROWN};

	put_utf8(b, JPA_BC_HELPER);
	put_u1(b, 7);
	put_u2(b, base + NEW_HELPER_UTF8);
	put_utf8(b, "(I)V");
	for (int i = 0; i < 3; i++) {
		uint32_t utf8 = base + NEW_ENTER_UTF8 + 3 * (uint32_t)i;

		put_utf8(b, names[i]);
		put_u1(b, 12);
		put_u2(b, utf8);
		put_u2(b, base + NEW_DESC_UTF8);
		put_u1(b, 10);
		put_u2(b, base + NEW_HELPER_CLASS);
		put_u2(b, utf8 + 1);
	}
	put_utf8(b, "java/lang/Throwable");
	put_u1(b, 7);
	put_u2(b, base + NEW_THROWABLE_UTF8);
	put_utf8(b, "StackMapTable");
}

/* why a matched method is not rewritten by its flags and name, or NULL */
static const char *refusal(uint32_t access, const char *name)
{
	if (!strcmp(name, "<clinit>"))
		return "static initializers are not traced";
	if (access & 0x0100)
		return "native method";
	if (access & 0x0400)
		return "abstract method";
	if (access & 0x0040)
		return "bridge method";
	if (access & 0x1000)
		return "synthetic method (a lambda body or accessor)";
	return NULL;
}

static void free_meth(struct meth *m)
{
	free(m->ins);
	free(m->map);
	m->ins = NULL;
	m->map = NULL;
}

/* the methods: each matched method's Code attribute rewritten into out, the rest copied */
static int rewrite_methods(const struct cls *c, struct rd *r, const struct jpa_bc_ops *ops,
			   struct buf *out, size_t *copied)
{
	char mname[JPA_BC_NAME_MAX], mdesc[JPA_BC_NAME_MAX];
	uint32_t n = rd_u2(r);
	int done = 0;

	for (uint32_t i = 0; i < n && !r->err; i++) {
		uint32_t access = rd_u2(r), name = rd_u2(r), desc = rd_u2(r), na = rd_u2(r);
		const char *why = NULL;
		int id = -1, matched;

		if (r->err)
			return -EINVAL;
		matched = !cp_cstr(c, name, mname, sizeof(mname)) &&
			  !cp_cstr(c, desc, mdesc, sizeof(mdesc));
		if (matched)
			id = ops->match(ops->ctx, c->name, mname, mdesc, (uint16_t)access);
		if (id > JPA_BC_ID_MAX)
			id = -1;
		if (id >= 0)
			why = refusal(access, mname);
		for (uint32_t k = 0; k < na && !r->err; k++) {
			size_t at = r->off;
			uint32_t an = rd_u2(r), alen = rd_u4(r);
			struct meth m = {.c = c, .id = id, .ctor = !strcmp(mname, "<init>")};
			size_t mark;

			rd_skip(r, alen);
			if (r->err)
				return -EINVAL;
			if (id < 0 || why || !cp_utf8_is(c, an, "Code"))
				continue;
			/* what lies before this attribute, as it was */
			put(out, c->in + *copied, at - *copied);
			mark = out->len;
			if (rewrite_code(&m, an, c->in + at + 6, alen, out)) {
				why = m.why;
				out->len = mark;
				out->err = out->err == -E2BIG ? 0 : out->err;
				put(out, c->in + at, r->off - at);
			} else {
				done++;
			}
			*copied = r->off;
			free_meth(&m);
			if (out->err)
				return out->err;
		}
		if (id >= 0 && why && ops->refuse)
			ops->refuse(ops->ctx, id, c->name, mname, mdesc, why);
	}
	return r->err ? -EINVAL : done;
}

int jpa_bc_rewrite(const uint8_t *in, size_t len, const struct jpa_bc_ops *ops, uint8_t **ret_out,
		   size_t *ret_len)
{
	struct cls c = {.in = in, .len = len};
	struct rd r = {.p = in, .n = len};
	struct buf out = {0};
	uint32_t access, this_class, super_class;
	size_t copied;
	int err, done;

	if (!in || !ops || !ops->match)
		return -EINVAL;
	if (len > JPA_BC_CLASS_MAX)
		return -E2BIG;
	if (rd_u4(&r) != 0xcafebabe)
		return -EINVAL;
	rd_skip(&r, 2); /* minor */
	c.major = rd_u2(&r);
	if (r.err || c.major < 45)
		return -EINVAL;
	err = parse_cp(&c, &r);
	if (err)
		goto out_free;
	err = -EINVAL;
	if (c.cp_count + NEW_MAX > 0xffff) {
		err = -E2BIG;
		goto out_free;
	}
	access = rd_u2(&r);
	this_class = rd_u2(&r);
	super_class = rd_u2(&r);
	rd_skip(&r, 2 * (size_t)rd_u2(&r)); /* interfaces */
	if (r.err || cp_tag(&c, this_class) != 7)
		goto out_free;
	if (cp_cstr(&c, cp_ref(&c, this_class, 0), c.name, sizeof(c.name))) {
		err = 0; /* a name no pattern can match */
		goto out_free;
	}
	if (cp_tag(&c, super_class) != 7 ||
	    cp_cstr(&c, cp_ref(&c, super_class, 0), c.super_name, sizeof(c.super_name)))
		c.super_name[0] = '\0'; /* then no super() call is recognised */
	if ((access & 0x8000) || !strcmp(c.name, JPA_BC_HELPER)) {
		err = 0; /* module-info, or our own helper */
		goto out_free;
	}
	/* fields */
	for (uint32_t n = rd_u2(&r), i = 0; i < n && !r.err; i++) {
		rd_skip(&r, 6);
		skip_attrs(&r);
	}
	if (r.err)
		goto out_free;
	put(&out, in, 8);
	put_u2(&out, c.cp_count + NEW_MAX);
	put(&out, in + 10, c.cp_end - 10);
	put_new_cp(&c, &out);
	copied = c.cp_end;
	done = rewrite_methods(&c, &r, ops, &out, &copied);
	if (done < 0) {
		err = done;
		goto out_free;
	}
	skip_attrs(&r);
	if (r.err || r.off != len)
		goto out_free;
	put(&out, in + copied, len - copied);
	if (out.err) {
		err = out.err;
		goto out_free;
	}
	err = 0;
	if (done > 0) {
		*ret_out = out.p;
		*ret_len = out.len;
		out.p = NULL;
		err = done;
	}
out_free:
	free(out.p);
	free(c.cp_off);
	return err;
}

int jpa_bc_helper_class(uint8_t *buf, size_t cap)
{
	static const char *const names[3] = {JPA_BC_ENTER, JPA_BC_LEAVE, JPA_BC_THROWN};
	struct buf b = {0};
	int len;

	put_u4(&b, 0xcafebabe);
	put_u2(&b, 0);
	put_u2(&b, 52);		     /* Java 8: no code, so no stack maps either way */
	put_u2(&b, 9);		     /* #1..#8 */
	put_utf8(&b, JPA_BC_HELPER); /* #1 */
	put_u1(&b, 7);		     /* #2 Class #1 */
	put_u2(&b, 1);
	put_utf8(&b, "java/lang/Object"); /* #3 */
	put_u1(&b, 7);			  /* #4 Class #3 */
	put_u2(&b, 3);
	put_utf8(&b, "(I)V"); /* #5 */
	for (int i = 0; i < 3; i++)
		put_utf8(&b, names[i]);	      /* #6 #7 #8 */
	put_u2(&b, 0x0001 | 0x0010 | 0x0020); /* public final super */
	put_u2(&b, 2);
	put_u2(&b, 4);
	put_u2(&b, 0); /* interfaces */
	put_u2(&b, 0); /* fields */
	put_u2(&b, 3);
	for (uint32_t i = 0; i < 3; i++) {
		put_u2(&b, 0x0001 | 0x0008 | 0x0100); /* public static native */
		put_u2(&b, 6 + i);
		put_u2(&b, 5);
		put_u2(&b, 0);
	}
	put_u2(&b, 0); /* class attributes */
	if (b.err || b.len > cap) {
		free(b.p);
		return b.err ? b.err : -E2BIG;
	}
	memcpy(buf, b.p, b.len);
	len = (int)b.len;
	free(b.p);
	return len;
}

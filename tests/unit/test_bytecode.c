/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* test_bytecode.c: the trace's class-file rewriter on hand-built and javac-built classes. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

#include "bytecode.c" /* the agent's rewriter, built here without the JVM */
#include "bc_class.c"
#include "bc_code.c"
#include "bc_frames.c"

#ifndef JP_APPS_DIR
#define JP_APPS_DIR "build/tests/apps"
#endif

/* a class file assembler: constant pool of Utf8/Class entries, one class, methods with Code */
struct asm_cls {
	struct buf cp;
	uint32_t n_cp;
	struct buf methods;
	uint32_t n_methods;
};

static uint32_t a_utf8(struct asm_cls *a, const char *s)
{
	jpa_bc_put_utf8(&a->cp, s);
	return ++a->n_cp;
}

static uint32_t a_class(struct asm_cls *a, const char *name)
{
	uint32_t u = a_utf8(a, name);

	jpa_bc_put_u1(&a->cp, 7);
	jpa_bc_put_u2(&a->cp, u);
	return ++a->n_cp;
}

/* a Methodref cls.name:desc (cls a Class entry's index) */
static uint32_t a_methodref(struct asm_cls *a, uint32_t cls, const char *name, const char *desc)
{
	uint32_t n = a_utf8(a, name), d = a_utf8(a, desc);

	jpa_bc_put_u1(&a->cp, 12);
	jpa_bc_put_u2(&a->cp, n);
	jpa_bc_put_u2(&a->cp, d);
	++a->n_cp;
	jpa_bc_put_u1(&a->cp, 10);
	jpa_bc_put_u2(&a->cp, cls);
	jpa_bc_put_u2(&a->cp, a->n_cp);
	return ++a->n_cp;
}

struct code_spec {
	const char *name, *desc;
	uint16_t access;
	const uint8_t *code;
	uint32_t code_len;
	const uint16_t *exc; /* n_exc x {start, end, handler, type} */
	uint32_t n_exc;
	const uint8_t *smt; /* StackMapTable body (count included), or NULL */
	uint32_t smt_len;
	const uint16_t *lines; /* n_lines x {pc, line} */
	uint32_t n_lines;
	int no_code;
};

static void a_method(struct asm_cls *a, const struct code_spec *s)
{
	struct buf *m = &a->methods;
	uint32_t name = a_utf8(a, s->name), desc = a_utf8(a, s->desc), code = a_utf8(a, "Code");
	uint32_t smt = a_utf8(a, "StackMapTable"), lnt = a_utf8(a, "LineNumberTable");
	uint32_t n_attr = (s->smt ? 1 : 0) + (s->lines ? 1 : 0);

	jpa_bc_put_u2(m, s->access);
	jpa_bc_put_u2(m, name);
	jpa_bc_put_u2(m, desc);
	if (s->no_code) {
		jpa_bc_put_u2(m, 0);
		a->n_methods++;
		return;
	}
	jpa_bc_put_u2(m, 1);
	jpa_bc_put_u2(m, code);
	jpa_bc_put_u4(m, 2 + 2 + 4 + s->code_len + 2 + 8 * s->n_exc + 2 +
				 (s->smt ? 6 + s->smt_len : 0) +
				 (s->lines ? 8 + 4 * s->n_lines : 0));
	jpa_bc_put_u2(m, 3); /* max_stack */
	jpa_bc_put_u2(m, 4); /* max_locals */
	jpa_bc_put_u4(m, s->code_len);
	jpa_bc_put(m, s->code, s->code_len);
	jpa_bc_put_u2(m, s->n_exc);
	for (uint32_t i = 0; i < 4 * s->n_exc; i++)
		jpa_bc_put_u2(m, s->exc[i]);
	jpa_bc_put_u2(m, n_attr);
	if (s->smt) {
		jpa_bc_put_u2(m, smt);
		jpa_bc_put_u4(m, s->smt_len);
		jpa_bc_put(m, s->smt, s->smt_len);
	}
	if (s->lines) {
		jpa_bc_put_u2(m, lnt);
		jpa_bc_put_u4(m, 2 + 4 * s->n_lines);
		jpa_bc_put_u2(m, s->n_lines);
		for (uint32_t i = 0; i < 2 * s->n_lines; i++)
			jpa_bc_put_u2(m, s->lines[i]);
	}
	a->n_methods++;
}

/* the class file; free() it */
static uint8_t *a_finish(struct asm_cls *a, size_t *ret_len)
{
	struct buf b = {0};
	uint32_t this_cls = a_class(a, "t/T"), super = a_class(a, "java/lang/Object");

	jpa_bc_put_u4(&b, 0xcafebabe);
	jpa_bc_put_u2(&b, 0);
	jpa_bc_put_u2(&b, 61);
	jpa_bc_put_u2(&b, a->n_cp + 1);
	jpa_bc_put(&b, a->cp.p, a->cp.len);
	jpa_bc_put_u2(&b, 0x21);
	jpa_bc_put_u2(&b, this_cls);
	jpa_bc_put_u2(&b, super);
	jpa_bc_put_u2(&b, 0);
	jpa_bc_put_u2(&b, 0);
	jpa_bc_put_u2(&b, a->n_methods);
	jpa_bc_put(&b, a->methods.p, a->methods.len);
	jpa_bc_put_u2(&b, 0);
	free(a->cp.p);
	free(a->methods.p);
	*ret_len = b.len;
	return b.p;
}

/* the ops: match every method named in want (or all when NULL), ids 1, 2, ... */
struct ctx {
	const char *want;
	int next_id;
	int refused;
	char why[256];
};

static int t_match(void *p, const char *cls, const char *name, const char *desc, uint16_t access)
{
	struct ctx *c = p;

	(void)cls;
	(void)desc;
	(void)access;
	if (c->want && strcmp(c->want, name))
		return -1;
	return ++c->next_id;
}

static void t_refuse(void *p, int id, const char *cls, const char *name, const char *desc,
		     const char *why)
{
	struct ctx *c = p;

	(void)id;
	(void)cls;
	(void)name;
	(void)desc;
	c->refused++;
	snprintf(c->why, sizeof(c->why), "%s", why);
}

static int none_match(void *p, const char *cls, const char *name, const char *desc, uint16_t access)
{
	(void)p;
	(void)cls;
	(void)name;
	(void)desc;
	(void)access;
	return -1;
}

/* one method's Code body in a class file (after the attribute header), found by name */
static const uint8_t *find_code(const uint8_t *in, size_t len, const char *mname, uint32_t *ret_len)
{
	struct cls c = {.in = in, .len = len};
	struct rd r = {.p = in, .n = len};
	const uint8_t *found = NULL;

	jpa_bc_rd_skip(&r, 8);
	if (jpa_bc_parse_cp(&c, &r))
		return NULL;
	jpa_bc_rd_skip(&r, 6);
	jpa_bc_rd_skip(&r, 2 * (size_t)jpa_bc_rd_u2(&r));
	for (uint32_t n = jpa_bc_rd_u2(&r), i = 0; i < n && !r.err; i++) {
		jpa_bc_rd_skip(&r, 6);
		jpa_bc_skip_attrs(&r);
	}
	for (uint32_t n = jpa_bc_rd_u2(&r), i = 0; i < n && !r.err && !found; i++) {
		uint32_t name;

		jpa_bc_rd_skip(&r, 2);
		name = jpa_bc_rd_u2(&r);
		jpa_bc_rd_skip(&r, 2);
		for (uint32_t na = jpa_bc_rd_u2(&r), k = 0; k < na && !r.err; k++) {
			uint32_t an = jpa_bc_rd_u2(&r), alen = jpa_bc_rd_u4(&r);

			if (!r.err && jpa_bc_cp_utf8_is(&c, name, mname) &&
			    jpa_bc_cp_utf8_is(&c, an, "Code")) {
				found = in + r.off;
				*ret_len = alen;
			}
			jpa_bc_rd_skip(&r, alen);
		}
	}
	free(c.cp_off);
	return found;
}

/*
 * Checks a rewritten method's code against the original: the prologue, a leave call before
 * every return, the handler last and its exception entry, every branch landing on an
 * instruction start whose opcode is the old target's (a return's block: its leave call),
 * and the StackMapTable's frames on instruction starts, one more than before. Returns the
 * number of problems (each printed).
 */
static uint32_t g_entry_pc; /* the old offset check_method found the prologue before */

static int check_method(const uint8_t *oldb, uint32_t oldn, const uint8_t *newb, uint32_t newn,
			int id, int ctor, const uint8_t *ncls, size_t nclen)
{
	uint32_t kp = 0, pro_end = 0, entry_pc = 0, enter_ref;
	struct cls nk = {.in = ncls, .len = nclen};
	struct rd cr = {.p = ncls, .n = nclen, .off = 8};

	struct meth o = {0}, n = {0};
	struct cls dummy = {0};
	struct rd r;
	int bad = 0;

#define CHECK(c)                                                     \
	do {                                                         \
		if (!(c)) {                                          \
			fprintf(stderr, "  check_method: %s\n", #c); \
			bad++;                                       \
			goto out;                                    \
		}                                                    \
	} while (0)
	o.c = n.c = &dummy;
	CHECK(!jpa_bc_parse_cp(&nk, &cr));
	o.code_len = get_s4(oldb + 4) & 0xffff;
	n.code_len = (uint32_t)get_s4(newb + 4);
	CHECK(n.code_len <= CODE_MAX && 8 + n.code_len <= newn && 8 + o.code_len <= oldn);
	o.code = oldb + 8;
	n.code = newb + 8;
	o.ins = calloc(o.code_len, sizeof(*o.ins));
	n.ins = calloc(n.code_len, sizeof(*n.ins));
	o.map = malloc((o.code_len + 1) * 4);
	n.map = malloc((n.code_len + 1) * 4);
	CHECK(o.ins && n.ins && o.map && n.map);
	memset(o.map, 0xff, (o.code_len + 1) * 4);
	memset(n.map, 0xff, (n.code_len + 1) * 4);
	CHECK(!jpa_bc_decode(&o) && !jpa_bc_decode(&n));
	CHECK(!jpa_bc_check_targets(&n));
	CHECK(get_s2(newb) >= get_s2(oldb) + 1 && get_s2(newb) >= 2);
	/* the prologue: the first call of enter; at 0, or a constructor's after its super() */
	enter_ref = nk.cp_count - NEW_MAX + NEW_ENTER_REF;
	for (kp = 0; kp + 1 < n.n_ins; kp++) {
		const uint8_t *p = n.code + n.ins[kp].old_pc;

		if (p[0] == OP_SIPUSH && p[3] == OP_INVOKESTATIC &&
		    (uint32_t)(get_s2(p + 4) & 0xffff) == enter_ref)
			break;
	}
	CHECK(kp + 2 < n.n_ins);
	if (id < 0)
		id = get_s2(n.code + n.ins[kp].old_pc + 1);
	CHECK(get_s2(n.code + n.ins[kp].old_pc + 1) == id);
	CHECK(ctor ? kp > 0 && kp < o.n_ins && o.code[o.ins[kp - 1].old_pc] == OP_INVOKESPECIAL
		   : kp == 0);
	pro_end = n.ins[kp + 2].old_pc;
	entry_pc = o.ins[kp].old_pc;
	g_entry_pc = entry_pc;
	CHECK(n.code[n.code_len - 7] == OP_SIPUSH && get_s2(n.code + n.code_len - 6) == id &&
	      n.code[n.code_len - 4] == OP_INVOKESTATIC && n.code[n.code_len - 1] == OP_ATHROW);
	/* the old instructions, in order, after the prologue: with leave calls and wider gotos */
	{
		uint32_t k = 0; /* new instruction index */

		for (uint32_t i = 0; i < o.n_ins; i++, k++) {
			uint8_t op = o.code[o.ins[i].old_pc];

			if (i == kp)
				k += 2; /* the prologue (no return comes before a constructor's) */
			CHECK(k < n.n_ins);
			if (o.ins[i].kind == K_RETURN) {
				const uint8_t *p = n.code + n.ins[k].old_pc;

				CHECK(p[0] == OP_SIPUSH && get_s2(p + 1) == id &&
				      p[3] == OP_INVOKESTATIC);
				k += 2;
				CHECK(k < n.n_ins);
			}
			CHECK(n.code[n.ins[k].old_pc] == op ||
			      (op == OP_GOTO && n.code[n.ins[k].old_pc] == OP_GOTO_W));
			/* branch targets: same instruction as before */
			if (o.ins[i].kind == K_BRANCH || o.ins[i].kind == K_GOTO) {
				int64_t ot = jpa_bc_target(&o, &o.ins[i],
							   get_s2(o.code + o.ins[i].old_pc + 1));
				const uint8_t *np = n.code + n.ins[k].old_pc;
				int64_t nt = jpa_bc_target(&n, &n.ins[k],
							   np[0] == OP_GOTO_W ? get_s4(np + 1)
									      : get_s2(np + 1));
				uint8_t oop = o.code[ot], nop = n.code[nt];

				CHECK(ot >= 0 && nt >= 0);
				if (oop >= OP_IRETURN && oop <= OP_RETURN)
					CHECK(nop == OP_SIPUSH && n.code[nt + 6] == oop);
				else
					CHECK(nop == oop);
				CHECK(ot != entry_pc || nt == pro_end);
			}
		}
		CHECK(k + 3 == n.n_ins); /* the handler's three */
	}
	/* exception table: the old entries, then the catch-all */
	r = (struct rd){.p = newb, .n = newn, .off = 8 + n.code_len};
	{
		uint32_t ne = jpa_bc_rd_u2(&r), oe = get_s2(oldb + 8 + o.code_len) & 0xffff;

		CHECK(ne == oe + 1);
		jpa_bc_rd_skip(&r, 8 * (size_t)oe);
		CHECK(jpa_bc_rd_u2(&r) == pro_end);
		CHECK(jpa_bc_rd_u2(&r) == n.code_len - HANDLER_LEN);
		CHECK(jpa_bc_rd_u2(&r) == n.code_len - HANDLER_LEN);
		CHECK(jpa_bc_rd_u2(&r) == 0);
	}
	/* the StackMapTable's frames: all on instruction starts, the last at the handler */
	for (uint32_t na = jpa_bc_rd_u2(&r), a = 0; a < na && !r.err; a++) {
		uint32_t an = jpa_bc_rd_u2(&r), alen = jpa_bc_rd_u4(&r);
		struct rd s = {.p = newb + r.off, .n = alen};
		int64_t off = -1;
		uint32_t nf;

		jpa_bc_rd_skip(&r, alen);
		if (!jpa_bc_cp_utf8_is(&nk, an, "StackMapTable"))
			continue;
		nf = jpa_bc_rd_u2(&s);
		for (uint32_t f = 0; f < nf && !s.err; f++) {
			uint32_t t = jpa_bc_rd_u1(&s),
				 d = t < 64    ? t
				     : t < 128 ? t - 64
					       : jpa_bc_rd_u2(&s),
				 cnt;

			off += d + 1;
			CHECK(off < n.code_len && n.map[off] >= 0);
			if ((t >= 64 && t < 128) || t == 247)
				cnt = 1;
			else if (t >= 252 && t < 255)
				cnt = t - 251;
			else
				cnt = 0;
			for (int part = 0; part < (t == 255 ? 2 : 1); part++) {
				if (t == 255)
					cnt = jpa_bc_rd_u2(&s);
				for (uint32_t v = 0; v < cnt; v++) {
					uint32_t tag = jpa_bc_rd_u1(&s);

					if (tag == 7)
						jpa_bc_rd_skip(&s, 2);
					if (tag == 8) {
						uint32_t u = jpa_bc_rd_u2(&s);

						CHECK(u < n.code_len && n.map[u] >= 0 &&
						      n.code[u] == 0xbb);
					}
				}
			}
			if (f == nf - 1 && !s.err && s.off == s.n)
				CHECK(t == 255 && off == n.code_len - HANDLER_LEN);
		}
	}
	CHECK(!r.err);
out:
	free(o.ins);
	free(n.ins);
	free(o.map);
	free(n.map);
	free(nk.cp_off);
	return bad;
#undef CHECK
}

static int rewrite(const uint8_t *in, size_t len, struct ctx *c, uint8_t **out, size_t *olen)
{
	struct jpa_bc_ops ops = {.match = t_match, .refuse = t_refuse, .ctx = c};

	return jpa_bc_rewrite(in, len, &ops, out, olen);
}

/* the output parses again, and the method checks against the input */
static void expect_rewritten(const uint8_t *cls, size_t len, const char *mname, int id)
{
	struct jpa_bc_ops none = {.match = none_match};
	struct ctx c = {.want = mname, .next_id = id - 1};
	uint8_t *out = NULL, *again = NULL;
	const uint8_t *oc, *nc;
	uint32_t ol = 0, nl = 0;
	size_t olen = 0, alen = 0;

	EXPECT_EQ(rewrite(cls, len, &c, &out, &olen), 1);
	EXPECT_EQ(c.refused, 0);
	if (c.refused)
		fprintf(stderr, "  refused: %s\n", c.why);
	if (!out)
		return;
	EXPECT_EQ(jpa_bc_rewrite(out, olen, &none, &again, &alen), 0);
	oc = find_code(cls, len, mname, &ol);
	nc = find_code(out, olen, mname, &nl);
	ASSERT_TRUE(oc && nc);
	EXPECT_EQ(check_method(oc, ol, nc, nl, id, !strcmp(mname, "<init>"), out, olen), 0);
	free(out);
}

static uint8_t *one_method(const struct code_spec *s, size_t *len)
{
	struct asm_cls a = {0};

	a_method(&a, s);
	return a_finish(&a, len);
}

TEST(simple_return)
{
	static const uint8_t code[] = {0x04, 0xac}; /* iconst_1; ireturn */
	struct code_spec s = {
		.name = "m", .desc = "()I", .access = 8, .code = code, .code_len = sizeof(code)};
	size_t len;
	uint8_t *cls = one_method(&s, &len);

	expect_rewritten(cls, len, "m", 7);
	free(cls);
}

TEST(branches_and_loop_to_start)
{
	static const uint8_t code[] = {
		0x1a,		  /* 0 iload_0 */
		0x99, 0x00, 0x09, /* 1 ifeq 10 */
		0x84, 0x00, 0xff, /* 4 iinc 0 -1 */
		0xa7, 0xff, 0xf9, /* 7 goto 0 */
		0xb1,		  /* 10 return */
	};
	static const uint8_t smt[] = {0, 2, 0 /* same at 0 */, 9 /* same at 10 */};
	static const uint16_t lines[] = {0, 5, 4, 6, 10, 7};
	struct code_spec s = {.name = "loop",
			      .desc = "(I)V",
			      .access = 8,
			      .code = code,
			      .code_len = sizeof(code),
			      .smt = smt,
			      .smt_len = sizeof(smt),
			      .lines = lines,
			      .n_lines = 3};
	size_t len;
	uint8_t *cls = one_method(&s, &len);

	expect_rewritten(cls, len, "loop", 3);
	free(cls);
}

TEST(switches_repadded)
{
	/* a tableswitch at 1 (pad 2) and a lookupswitch after it: both move by 6 (pad changes) */
	struct buf b = {0};
	uint32_t ts, ls;

	jpa_bc_put_u1(&b, 0x1a); /* 0 iload_0 */
	ts = (uint32_t)b.len;
	jpa_bc_put_u1(&b, 0xaa);
	jpa_bc_put(&b, "\0\0", 2);
	jpa_bc_put_u4(&b, 0); /* default: patched below */
	jpa_bc_put_u4(&b, 0);
	jpa_bc_put_u4(&b, 2);
	jpa_bc_put_u4(&b, 0);
	jpa_bc_put_u4(&b, 0);
	jpa_bc_put_u4(&b, 0);
	ls = (uint32_t)b.len; /* 28: iload_0; lookupswitch at 29 (pad 2) */
	jpa_bc_put_u1(&b, 0x1a);
	jpa_bc_put_u1(&b, 0xab);
	jpa_bc_put(&b, "\0\0", 2);
	jpa_bc_put_u4(&b, 0);
	jpa_bc_put_u4(&b, 2);
	jpa_bc_put_u4(&b, 5);
	jpa_bc_put_u4(&b, 0);
	jpa_bc_put_u4(&b, 100000);
	jpa_bc_put_u4(&b, 0);
	{
		uint32_t r1 = (uint32_t)b.len; /* return */
		uint8_t *p;

		jpa_bc_put_u1(&b, 0xb1);
		p = b.p;
		/* tableswitch: default and cases 0..2 -> ls (the second iload) or the return */
		for (int k = 0; k < 4; k++) {
			uint32_t at = ts + 3 + (k == 0 ? 0 : 8 + 4 * (uint32_t)k);
			uint32_t to = k == 2 ? r1 : ls;

			p[at] = (uint8_t)((to - ts) >> 24);
			p[at + 1] = (uint8_t)((to - ts) >> 16);
			p[at + 2] = (uint8_t)((to - ts) >> 8);
			p[at + 3] = (uint8_t)(to - ts);
		}
		/* lookupswitch at ls+1: default and both pairs -> the return */
		for (int k = 0; k < 3; k++) {
			uint32_t sw = ls + 1, at = sw + 3 + (k == 0 ? 0 : 8 * (uint32_t)k + 4);

			p[at + 3] = (uint8_t)(r1 - sw);
		}
	}
	{
		uint8_t smt[] = {0, 2, (uint8_t)ls, (uint8_t)(b.len - 1 - ls - 1)};
		struct code_spec s = {.name = "sw",
				      .desc = "(I)V",
				      .access = 8,
				      .code = b.p,
				      .code_len = (uint32_t)b.len,
				      .smt = smt,
				      .smt_len = sizeof(smt)};
		size_t len;
		uint8_t *cls = one_method(&s, &len);

		expect_rewritten(cls, len, "sw", 9);
		free(cls);
	}
	free(b.p);
}

TEST(exception_table_and_all_frame_kinds)
{
	/*
	 * 0 new #X; 3 dup; 4 invokespecial; 7 astore_1; 8 aload_1; 9 ifnull 14; 12 aconst_null;
	 * 13 athrow; 14 return; 15 astore_2 (handler of [0,14)); 16 return. The frames cover
	 * same_locals_1 (at 4: uninitialized(0) on the stack, then extended), chop, same_ext,
	 * append and full (with Uninitialized(0)) kinds; their offsets only need to be
	 * instruction starts for the rewriter.
	 */
	static const uint8_t code[] = {0xbb, 0x00, 0x01, 0x59, 0xb7, 0x00, 0x01, 0x4c, 0x2b,
				       0xc6, 0x00, 0x05, 0x01, 0xbf, 0xb1, 0x4d, 0xb1};
	static const uint8_t smt[] = {
		0,	7, 64 + 3, 8, 0, 0, /* 3: same_locals_1 Uninitialized(0) */
		247,	0, 0,	   8, 0, 0, /* 4: same_locals_1_extended Uninitialized(0) */
		252,	0, 3,	   1,	    /* 8: append Integer */
		250,	0, 5,		    /* 14: chop 1 */
		64 + 0, 7, 0,	   1,	    /* 15: same_locals_1 Object #1 */
		251,	0, 0,		    /* 16: same_frame_extended */
		0,			    /* would be 17: past the end: replaced below */
	};
	static const uint16_t exc[] = {0, 14, 15, 0};
	uint8_t smt2[sizeof(smt) - 1];
	struct code_spec s = {.name = "ex",
			      .desc = "()V",
			      .access = 8,
			      .code = code,
			      .code_len = sizeof(code),
			      .exc = exc,
			      .n_exc = 1,
			      .smt = smt2,
			      .smt_len = sizeof(smt2)};
	size_t len;
	uint8_t *cls;

	memcpy(smt2, smt, sizeof(smt2));
	smt2[1] = 6;
	cls = one_method(&s, &len);
	expect_rewritten(cls, len, "ex", 4);
	free(cls);
	/* a full_frame with Uninitialized(0) in its stack */
	{
		static const uint8_t full[] = {0, 1, 255, 0, 3, 0, 1, 1, 0, 2, 8, 0, 0, 8, 0, 0};
		struct code_spec f = s;
		uint8_t *c2;

		f.smt = full;
		f.smt_len = sizeof(full);
		c2 = one_method(&f, &len);
		expect_rewritten(c2, len, "ex", 4);
		free(c2);
	}
	/* a frame off an instruction start: refused, the class unchanged */
	{
		static const uint8_t off[] = {0, 1, 1};
		struct code_spec f = s;
		struct ctx c = {0};
		uint8_t *c2, *out = NULL;
		size_t olen;

		f.smt = off;
		f.smt_len = sizeof(off);
		c2 = one_method(&f, &len);
		EXPECT_EQ(rewrite(c2, len, &c, &out, &olen), 0);
		EXPECT_EQ(c.refused, 1);
		EXPECT_TRUE(out == NULL);
		free(c2);
	}
}

/* n returns after a goto over them: each return grows by its leave call */
/*
 * Constructors: t/T.<init>(I)V, its locals [uninitializedThis, int] until its super() call at
 * 35, with frames of every kind before it (all carrying uninitializedThis: same, append,
 * chop, full, same_locals_1 and its extended form with it on the stack) and after it (full
 * with this as t/T, same_frame_extended, same) and a loop back to the entry at 38.
 */
static uint8_t *ctor_class(uint8_t *code, size_t code_len, const uint8_t *smt, size_t smt_len,
			   const uint16_t *exc, uint32_t n_exc, size_t *len, const char *init_cls)
{
	struct asm_cls a = {0};
	uint32_t obj = a_class(&a, init_cls), tt = a_class(&a, "t/T");
	uint32_t init = a_methodref(&a, obj, "<init>", "()V");
	uint8_t *c = malloc(code_len), *sm = malloc(smt_len), *cls;
	struct code_spec s = {.name = "<init>",
			      .desc = "(I)V",
			      .access = 1,
			      .code = c,
			      .code_len = (uint32_t)code_len,
			      .smt = sm,
			      .smt_len = (uint32_t)smt_len,
			      .exc = exc,
			      .n_exc = n_exc};

	memcpy(c, code, code_len);
	memcpy(sm, smt, smt_len);
	/* patch: 0xee 0xee is the <init> ref, tag 7 0xdd 0xdd is t/T */
	for (size_t i = 0; i + 2 < code_len; i++)
		if (c[i] == 0xb7 && c[i + 1] == 0xee)
			c[i + 1] = (uint8_t)(init >> 8), c[i + 2] = (uint8_t)init;
	for (size_t i = 0; i + 2 < smt_len; i++)
		if (sm[i] == 7 && sm[i + 1] == 0xdd)
			sm[i + 1] = (uint8_t)(tt >> 8), sm[i + 2] = (uint8_t)tt;
	a_method(&a, &s);
	cls = a_finish(&a, len);
	free(c);
	free(sm);
	return cls;
}

static const uint8_t ctor_code[] = {
	0x1b, 0x3d,		      /* 0 iload_1; 1 istore_2 */
	0x1b, 0x99, 0x00, 0x07,	      /* 2 iload_1; 3 ifeq 10 */
	0x84, 0x02, 0x01, 0x00,	      /* 6 iinc 2 1; 9 nop */
	0x1b, 0x99, 0x00, 0x07,	      /* 10 iload_1; 11 ifeq 18 */
	0x84, 0x02, 0x01, 0x00,	      /* 14 iinc 2 1; 17 nop */
	0x1b, 0x99, 0x00, 0x07,	      /* 18 iload_1; 19 ifeq 26 */
	0x84, 0x01, 0x01, 0x00,	      /* 22 iinc 1 1; 25 nop */
	0x2a, 0x1b, 0x99, 0x00, 0x07, /* 26 aload_0; 27 iload_1; 28 ifeq 35 */
	0x84, 0x01, 0x01, 0x00,	      /* 31 iinc 1 1; 34 nop */
	0xb7, 0xee, 0xee,	      /* 35 invokespecial Object.<init>()V */
	0x1b, 0x99, 0x00, 0x07,	      /* 38 iload_1; 39 ifeq 46 */
	0x84, 0x01, 0xff, 0x00,	      /* 42 iinc 1 -1; 45 nop */
	0x1b, 0x9a, 0xff, 0xf7,	      /* 46 iload_1; 47 ifne 38 */
	0xb1,			      /* 50 return */
};

static const uint8_t ctor_smt[] = {
	0,	8, 2,				    /* 2: same (uninitializedThis, int) */
	252,	0, 7, 1,			    /* 10: append int */
	250,	0, 7,				    /* 18: chop 1 */
	255,	0, 7, 0, 2, 6, 1,    0,	   0,	    /* 26: full [uninitializedThis, int] [] */
	64 + 8, 6,				    /* 35: same_locals_1 [uninitializedThis] */
	255,	0, 2, 0, 2, 7, 0xdd, 0xdd, 1, 0, 0, /* 38: full [t/T, int] [] */
	251,	0, 7,				    /* 46: same_frame_extended */
	3,					    /* 50: same */
};

TEST(constructor_after_super_call)
{
	size_t len;
	uint8_t *cls = ctor_class((uint8_t *)ctor_code, sizeof(ctor_code), ctor_smt,
				  sizeof(ctor_smt), NULL, 0, &len, "java/lang/Object");
	uint8_t smt2[sizeof(ctor_smt) + 2];

	expect_rewritten(cls, len, "<init>", 5);
	EXPECT_EQ(g_entry_pc, 38u);
	free(cls);
	/* the same with same_locals_1_stack_item_extended at 35 */
	memcpy(smt2, ctor_smt, 19);
	smt2[19] = 247, smt2[20] = 0, smt2[21] = 8;
	memcpy(smt2 + 22, ctor_smt + 20, sizeof(ctor_smt) - 20);
	EXPECT_EQ(smt2[22], 6);
	cls = ctor_class((uint8_t *)ctor_code, sizeof(ctor_code), smt2, sizeof(smt2), NULL, 0, &len,
			 "java/lang/Object");
	expect_rewritten(cls, len, "<init>", 5);
	EXPECT_EQ(g_entry_pc, 38u);
	free(cls);
	/* an exception entry after the call is kept, one before it too */
	{
		static const uint16_t exc[] = {38, 46, 46, 0, 2, 10, 10, 0};

		cls = ctor_class((uint8_t *)ctor_code, sizeof(ctor_code), ctor_smt,
				 sizeof(ctor_smt), exc, 2, &len, "java/lang/Object");
		expect_rewritten(cls, len, "<init>", 5);
		free(cls);
	}
}

/* a `new X; dup; invokespecial X.<init>` argument first: the entry follows this()/super() */
TEST(constructor_new_before_super)
{
	struct asm_cls a = {0};
	uint32_t x = a_class(&a, "t/X"), obj = a_class(&a, "java/lang/Object");
	uint32_t xi = a_methodref(&a, x, "<init>", "()V"),
		 oi = a_methodref(&a, obj, "<init>", "()V");
	uint8_t code[] = {0x2a, 0xbb, (uint8_t)(x >> 8),  (uint8_t)x,
			  0x59, 0xb7, (uint8_t)(xi >> 8), (uint8_t)xi,
			  0x57, 0xb7, (uint8_t)(oi >> 8), (uint8_t)oi,
			  0xb1};
	/* 0 aload_0; 1 new X; 4 dup; 5 invokespecial X.<init>; 8 pop; 9 invokespecial; 12 return */
	struct code_spec s = {.name = "<init>",
			      .desc = "()V",
			      .access = 1,
			      .code = code,
			      .code_len = sizeof(code)};
	size_t len;
	uint8_t *cls;

	a_method(&a, &s);
	cls = a_finish(&a, &len);
	expect_rewritten(cls, len, "<init>", 2);
	EXPECT_EQ(g_entry_pc, 12u);
	free(cls);
}

/* the shapes refused, one reason each, the class left as it was */
TEST(constructor_refusals)
{
	static const struct {
		uint16_t exc[4];
		uint32_t n_exc;
		int patch_at, patch_val;
		const char *init_cls, *why;
	} cases[] = {
		{{26, 38, 50, 0}, 1, -1, 0, "java/lang/Object", "covers the super() call"},
		{{38, 46, 2, 0},
		 1,
		 -1,
		 0,
		 "java/lang/Object",
		 "covers the super() call or crosses"},
		{{0}, 0, 21, 0x1b, "java/lang/Object", "crosses"},   /* ifeq 26 -> 46 */
		{{0}, 0, 49, 0xe3, "java/lang/Object", "crosses"},   /* ifne 38 -> 18 */
		{{0}, 0, -1, 0, "t/Other", "not super() or this()"}, /* another class's <init> */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t code[sizeof(ctor_code)];
		struct ctx c = {0};
		size_t len, olen;
		uint8_t *cls, *out = NULL;

		memcpy(code, ctor_code, sizeof(code));
		if (cases[i].patch_at >= 0)
			code[cases[i].patch_at] = (uint8_t)cases[i].patch_val;
		cls = ctor_class(code, sizeof(code), ctor_smt, sizeof(ctor_smt), cases[i].exc,
				 cases[i].n_exc, &len, cases[i].init_cls);
		EXPECT_EQ(rewrite(cls, len, &c, &out, &olen), 0);
		EXPECT_EQ(c.refused, 1);
		if (!strstr(c.why, cases[i].why))
			FAIL_AT("case %zu: '%s' lacks '%s'", i, c.why, cases[i].why);
		EXPECT_TRUE(out == NULL);
		free(cls);
	}
}

static uint8_t *far_jump(uint8_t op, uint32_t n, size_t *len)
{
	uint32_t cl = 3 + n + (op == OP_GOTO ? 1 : 2);
	uint8_t *code = malloc(cl), *cls;
	uint8_t smt[6] = {0, 1, 251};
	struct code_spec s = {
		.name = "far", .desc = "(I)V", .access = 8, .smt = smt, .smt_len = sizeof(smt)};
	uint32_t t = 3 + n + (op == OP_GOTO ? 0 : 1);

	if (op != OP_GOTO) {
		code[0] = 0x1a; /* iload_0; ifeq far */
		code[1] = op;
		code[2] = (uint8_t)((t - 1) >> 8);
		code[3] = (uint8_t)(t - 1);
		memset(code + 4, 0xb1, n);
	} else {
		code[0] = op;
		code[1] = (uint8_t)(t >> 8);
		code[2] = (uint8_t)t;
		memset(code + 3, 0xb1, n);
	}
	code[cl - 1] = 0xb1;
	smt[3] = (uint8_t)(t >> 8);
	smt[4] = (uint8_t)t;
	s.smt_len = 5;
	s.code = code;
	s.code_len = cl;
	cls = one_method(&s, len);
	free(code);
	return cls;
}

TEST(goto_widens_conditional_refused)
{
	size_t len, olen;
	uint8_t *cls = far_jump(OP_GOTO, 6000, &len), *out = NULL;
	struct ctx c = {0};
	const uint8_t *nc;
	uint32_t nl;

	expect_rewritten(cls, len, "far", 1);
	EXPECT_EQ(rewrite(cls, len, &c, &out, &olen), 1);
	nc = out ? find_code(out, olen, "far", &nl) : NULL;
	EXPECT_TRUE(nc && nc[8 + PROLOGUE_LEN] == OP_GOTO_W);
	free(out);
	free(cls);
	/* a short one stays a goto */
	cls = far_jump(OP_GOTO, 100, &len);
	out = NULL;
	EXPECT_EQ(rewrite(cls, len, &c, &out, &olen), 1);
	nc = out ? find_code(out, olen, "far", &nl) : NULL;
	EXPECT_TRUE(nc && nc[8 + PROLOGUE_LEN] == OP_GOTO);
	free(out);
	free(cls);
	/* ifeq that no longer reaches: refused with its reason */
	cls = far_jump(0x99, 6000, &len);
	memset(&c, 0, sizeof(c));
	out = NULL;
	EXPECT_EQ(rewrite(cls, len, &c, &out, &olen), 0);
	EXPECT_EQ(c.refused, 1);
	EXPECT_TRUE(strstr(c.why, "out of range") != NULL);
	free(cls);
}

TEST(refusals_one_reason_each)
{
	static const uint8_t code[] = {0xb1};
	static const uint8_t jsr[] = {0xa8, 0x00, 0x03, 0xb1};
	static const struct {
		const char *name;
		uint16_t access;
		const uint8_t *code;
		uint32_t len;
		int no_code;
		const char *why;
	} cases[] = {
		{"<init>", 1, code, 1, 0, "without a super() or this() call"},
		{"<clinit>", 8, code, 1, 0, "static initializers"},
		{"n", 0x0108, NULL, 0, 1, "native"},
		{"a", 0x0401, NULL, 0, 1, "abstract"},
		{"b", 0x1041, code, 1, 0, "bridge"},
		{"lambda$main$0", 0x100a, code, 1, 0, "synthetic"},
		{"j", 8, jsr, 4, 0, "jsr/ret"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct code_spec s = {.name = cases[i].name,
				      .desc = "()V",
				      .access = cases[i].access,
				      .code = cases[i].code,
				      .code_len = cases[i].len,
				      .no_code = cases[i].no_code};
		struct ctx c = {0};
		size_t len, olen;
		uint8_t *cls = one_method(&s, &len), *out = NULL;

		EXPECT_EQ(rewrite(cls, len, &c, &out, &olen), 0);
		EXPECT_EQ(c.refused, 1);
		if (!strstr(c.why, cases[i].why))
			FAIL_AT("%s: '%s' lacks '%s'", cases[i].name, c.why, cases[i].why);
		EXPECT_TRUE(out == NULL);
		free(cls);
	}
}

/* every prefix and every single-byte change of a class: a result or an error, never a fault */
TEST(truncated_and_flipped_never_fault)
{
	static const uint8_t code[] = {0x1a, 0x99, 0x00, 0x04, 0x04, 0xac, 0x03, 0xac};
	static const uint8_t smt[] = {0, 1, 6};
	struct code_spec s = {.name = "m",
			      .desc = "(I)I",
			      .access = 8,
			      .code = code,
			      .code_len = sizeof(code),
			      .smt = smt,
			      .smt_len = sizeof(smt)};
	size_t len, olen;
	uint8_t *cls = one_method(&s, &len), *out;
	int ok = 0;

	for (size_t n = 0; n < len; n++) {
		struct ctx c = {0};

		out = NULL;
		if (rewrite(cls, n, &c, &out, &olen) != -EINVAL)
			FAIL_AT("prefix of %zu bytes not -EINVAL", n);
		free(out);
	}
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			struct ctx c = {0};

			cls[i] ^= (uint8_t)(1 << bit);
			out = NULL;
			if (rewrite(cls, len, &c, &out, &olen) > 0)
				ok++;
			free(out);
			cls[i] ^= (uint8_t)(1 << bit);
		}
	}
	EXPECT_TRUE(ok > 0);
	free(cls);
}

/* javac's own classes (tests/apps): every method rewritten checks against its original */
TEST(javac_classes)
{
	static const char *const names[] = {"TraceApp", "Late",	      "Point",
					    "Regress",	"EvBlockers", "H2Load"};
	int classes = 0, methods = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512];
		struct jpa_bc_ops none = {.match = none_match};
		struct ctx c = {0};
		uint8_t *in, *out = NULL, *again = NULL;
		size_t len, olen, alen;
		FILE *f;
		int n;

		snprintf(path, sizeof(path), "%s/%s.class", JP_APPS_DIR, names[i]);
		f = fopen(path, "rb");
		if (!f) {
			FAIL_AT("%s: missing (make apps)", path);
			continue;
		}
		in = malloc(1 << 20);
		len = fread(in, 1, 1 << 20, f);
		fclose(f);
		n = rewrite(in, len, &c, &out, &olen);
		if (n <= 0) {
			FAIL_AT("%s: rewrite %d", path, n);
			free(in);
			continue;
		}
		classes++;
		EXPECT_EQ(jpa_bc_rewrite(out, olen, &none, &again, &alen), 0);
		/* each method: its code checks (ids in method order, refused ones skipped) */
		{
			struct ctx c2 = {0};
			struct cls k = {.in = in, .len = len};
			struct rd r = {.p = in, .n = len};

			jpa_bc_rd_skip(&r, 8);
			ASSERT_TRUE(!jpa_bc_parse_cp(&k, &r));
			jpa_bc_rd_skip(&r, 6);
			jpa_bc_rd_skip(&r, 2 * (size_t)jpa_bc_rd_u2(&r));
			for (uint32_t nf = jpa_bc_rd_u2(&r), j = 0; j < nf; j++) {
				jpa_bc_rd_skip(&r, 6);
				jpa_bc_skip_attrs(&r);
			}
			for (uint32_t nm = jpa_bc_rd_u2(&r), j = 0; j < nm && !r.err; j++) {
				char mn[256];
				uint32_t acc = jpa_bc_rd_u2(&r), name = jpa_bc_rd_u2(&r);

				jpa_bc_rd_skip(&r, 2);
				jpa_bc_skip_attrs(&r);
				c2.next_id++;
				if (jpa_bc_cp_cstr(&k, name, mn, sizeof(mn)) || refusal(acc, mn))
					continue;
				/* overloads share a name: check the first of each name only */
				{
					const uint8_t *oc, *nc;
					uint32_t ol, nl;

					oc = find_code(in, len, mn, &ol);
					nc = find_code(out, olen, mn, &nl);
					if (!oc || !nc)
						continue;
					EXPECT_EQ(check_method(oc, ol, nc, nl, -1,
							       !strcmp(mn, "<init>"), out, olen),
						  0);
					methods++;
				}
			}
			free(k.cp_off);
		}
		free(out);
		free(in);
	}
	EXPECT_TRUE(classes >= 3);
	EXPECT_TRUE(methods >= 10);
}

/*
 * --args: after the enter call, one call per leading argument of a kind it passes, (position,
 * value) loaded from its local: TraceApp.slowArgs(int, long, String, double) is static, so
 * its locals are 0, 1-2, 3, 4-5; max_stack room for an int and a long
 */
TEST(args_prologue)
{
	static const uint8_t want_loads[4][2] = {{0x15, 0}, {0x16, 1}, {0x19, 3}, {0x18, 4}};
	char path[512];
	struct ctx c = {.want = "slowArgs", .next_id = 6};
	struct jpa_bc_ops ops = {.match = t_match, .refuse = t_refuse, .ctx = &c, .args = 4};
	struct jpa_bc_ops none = {.match = none_match};
	uint8_t *in = malloc(1 << 20), *out = NULL, *again = NULL;
	const uint8_t *code;
	uint32_t cl = 0, acl;
	size_t len = 0, olen = 0, alen = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/TraceApp.class", JP_APPS_DIR);
	f = fopen(path, "rb");
	ASSERT_TRUE(f && in);
	len = fread(in, 1, 1 << 20, f);
	fclose(f);
	EXPECT_EQ(jpa_bc_rewrite(in, len, &ops, &out, &olen), 1);
	ASSERT_TRUE(out != NULL);
	EXPECT_EQ(jpa_bc_rewrite(out, olen, &none, &again, &alen), 0);
	code = find_code(out, olen, "slowArgs", &cl);
	ASSERT_TRUE(code && cl > 8 + PROLOGUE_LEN + 4 * ARG_CALL_LEN);
	EXPECT_TRUE(get_s2(code) >= 3); /* max_stack */
	EXPECT_EQ(code[8], OP_SIPUSH);
	EXPECT_EQ(get_s2(code + 9), 7);
	for (int k = 0; k < 4; k++) {
		const uint8_t *a = code + 8 + PROLOGUE_LEN + k * ARG_CALL_LEN;

		EXPECT_EQ(a[0], OP_BIPUSH);
		EXPECT_EQ(a[1], k);
		EXPECT_EQ(a[2], want_loads[k][0]);
		EXPECT_EQ(a[3], want_loads[k][1]);
		EXPECT_EQ(a[4], OP_INVOKESTATIC);
	}
	/* no args asked: the prologue as ever, the code 4 calls shorter */
	acl = (uint32_t)get_s4(code + 4);
	free(out);
	out = NULL;
	c = (struct ctx){.want = "slowArgs", .next_id = 6};
	ops.args = 0;
	EXPECT_EQ(jpa_bc_rewrite(in, len, &ops, &out, &olen), 1);
	code = out ? find_code(out, olen, "slowArgs", &cl) : NULL;
	ASSERT_TRUE(code != NULL);
	EXPECT_EQ(acl - (uint32_t)get_s4(code + 4), 4 * ARG_CALL_LEN);
	EXPECT_TRUE(code[8 + PROLOGUE_LEN] != OP_BIPUSH || code[8 + PROLOGUE_LEN + 2] != 0x15);
	free(out);
	free(in);
}

TEST(helper_class)
{
	uint8_t buf[1024];
	int n = jpa_bc_helper_class(buf, sizeof(buf));

	EXPECT_TRUE(n > 100);
	EXPECT_EQ(get_s4(buf), (int32_t)0xcafebabe);
	EXPECT_EQ(jpa_bc_helper_class(buf, 10), -E2BIG);
}

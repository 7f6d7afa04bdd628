/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bytecode.c: rewrites class files so matched methods call the trace helper at entry and exits. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bc_int.h"

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

/* code attribute body [body, body + n): the rewritten attribute into b; -1 refused (m->why) */
static int rewrite_code(struct meth *m, uint32_t name_idx, const uint8_t *body, uint32_t n,
			struct buf *b)
{
	const struct cls *c = m->c;
	struct rd r = {.p = body, .n = n};
	uint32_t max_stack, max_locals, n_exc, n_attr, new_attrs = 0;
	size_t len_at, code_at, attrs_at;
	int has_smt = 0;

	max_stack = jpa_bc_rd_u2(&r);
	max_locals = jpa_bc_rd_u2(&r);
	m->code_len = jpa_bc_rd_u4(&r);
	if (r.err || m->code_len == 0 || m->code_len > CODE_MAX || m->code_len > r.n - r.off)
		return jpa_bc_refuse(m, "malformed Code attribute");
	m->code = body + r.off;
	r.off += m->code_len;
	m->ins = calloc(m->code_len, sizeof(*m->ins));
	m->map = malloc((m->code_len + 1) * sizeof(*m->map));
	if (!m->ins || !m->map)
		return jpa_bc_refuse(m, "out of memory");
	memset(m->map, 0xff, (m->code_len + 1) * sizeof(*m->map));
	if (jpa_bc_decode(m) || jpa_bc_check_targets(m) || (m->ctor && jpa_bc_find_entry(m)) ||
	    jpa_bc_layout(m))
		return -1;
	if (max_stack + 1 > 0xffff)
		return jpa_bc_refuse(m, "max_stack too large");

	jpa_bc_put_u2(b, name_idx);
	len_at = b->len;
	jpa_bc_put_u4(b, 0);
	/* the calls push an int above the stack; the arguments' an int and a long at most */
	jpa_bc_put_u2(b, max_stack + 1 > 2 ? max_stack + 1 : m->n_args ? 3 : 2);
	jpa_bc_put_u2(b, max_locals);
	code_at = b->len;
	jpa_bc_put_u4(b, 0);
	jpa_bc_emit_code(m, b);
	if (!b->err && b->len - code_at - 4 != (size_t)m->end + HANDLER_LEN)
		return jpa_bc_refuse(m, "internal: code length mismatch");
	jpa_bc_set_u4(b, code_at, m->end + HANDLER_LEN);

	n_exc = jpa_bc_rd_u2(&r);
	if (r.err || n_exc == 0xffff || (uint64_t)n_exc * 8 > r.n - r.off)
		return jpa_bc_refuse(m, "malformed exception table");
	jpa_bc_put_u2(b, n_exc + 1);
	for (uint32_t i = 0; i < n_exc; i++) {
		int32_t s = jpa_bc_map_pc(m, jpa_bc_rd_u2(&r), 0),
			e = jpa_bc_map_pc(m, jpa_bc_rd_u2(&r), 1);
		int32_t h = jpa_bc_map_pc(m, jpa_bc_rd_u2(&r), 0);

		if (s < 0 || e < 0 || h < 0 || s >= e)
			return jpa_bc_refuse(m, "exception table entry off instruction starts");
		/* the three just read: start, end, handler */
		if (m->ctor && !jpa_bc_ctor_exc_ok(m, get_s2(r.p + r.off - 6) & 0xffff,
						   get_s2(r.p + r.off - 4) & 0xffff,
						   get_s2(r.p + r.off - 2) & 0xffff))
			return jpa_bc_refuse(
				m, "an exception entry covers the super() call or crosses it");
		jpa_bc_put_u2(b, (uint32_t)s);
		jpa_bc_put_u2(b, (uint32_t)e);
		jpa_bc_put_u2(b, (uint32_t)h);
		jpa_bc_put_u2(b, jpa_bc_rd_u2(&r));
	}
	jpa_bc_put_u2(b, (uint32_t)m->map[m->entry_pc]);
	jpa_bc_put_u2(b, m->end);
	jpa_bc_put_u2(b, m->end);
	jpa_bc_put_u2(b, 0); /* any */

	n_attr = jpa_bc_rd_u2(&r);
	if (r.err)
		return jpa_bc_refuse(m, "malformed Code attribute");
	attrs_at = b->len;
	jpa_bc_put_u2(b, n_attr);
	for (uint32_t i = 0; i < n_attr; i++) {
		uint32_t an = jpa_bc_rd_u2(&r), alen = jpa_bc_rd_u4(&r);
		struct rd a;
		size_t at;
		int bad;

		if (r.err || alen > r.n - r.off)
			return jpa_bc_refuse(m, "malformed Code attribute");
		a = (struct rd){.p = body + r.off, .n = alen};
		r.off += alen;
		jpa_bc_put_u2(b, an);
		at = b->len;
		jpa_bc_put_u4(b, 0);
		if (jpa_bc_cp_utf8_is(c, an, "StackMapTable")) {
			bad = has_smt++ || jpa_bc_emit_smt(m, &a, b);
		} else if (jpa_bc_cp_utf8_is(c, an, "LineNumberTable")) {
			bad = jpa_bc_emit_pc_table(m, &a, b, 0);
		} else if (jpa_bc_cp_utf8_is(c, an, "LocalVariableTable") ||
			   jpa_bc_cp_utf8_is(c, an, "LocalVariableTypeTable")) {
			bad = jpa_bc_emit_pc_table(m, &a, b, 1);
		} else {
			return jpa_bc_refuse(m, "an attribute of Code this rewriter does not map");
		}
		if (bad)
			return jpa_bc_refuse(m, "malformed StackMapTable or line/variable table");
		jpa_bc_set_u4(b, at, (uint32_t)(b->len - at - 4));
	}
	if (r.off != r.n)
		return jpa_bc_refuse(m, "malformed Code attribute");
	/* class files from Java 6 on are type-checked: the handler needs its frame */
	if (!has_smt && c->major >= 50) {
		struct rd none = {.p = (const uint8_t *)"\0", .n = 2};
		size_t at;

		jpa_bc_put_u2(b, c->cp_count + NEW_SMT_UTF8);
		at = b->len;
		jpa_bc_put_u4(b, 0);
		(void)jpa_bc_emit_smt(m, &none, b);
		jpa_bc_set_u4(b, at, (uint32_t)(b->len - at - 4));
		new_attrs = 1;
	}
	if (n_attr + new_attrs > 0xffff)
		return jpa_bc_refuse(m, "too many attributes");
	if (!b->err) {
		b->p[attrs_at] = (uint8_t)((n_attr + new_attrs) >> 8);
		b->p[attrs_at + 1] = (uint8_t)(n_attr + new_attrs);
	}
	jpa_bc_set_u4(b, len_at, (uint32_t)(b->len - len_at - 4));
	return b->err ? jpa_bc_refuse(m, "output over budget") : 0;
}

static void put_new_cp(const struct cls *c, struct buf *b)
{
	uint32_t base = c->cp_count;
	static const char *const names[3] = {JPA_BC_ENTER, JPA_BC_LEAVE, JPA_BC_THROWN};

	jpa_bc_put_utf8(b, JPA_BC_HELPER);
	jpa_bc_put_u1(b, 7);
	jpa_bc_put_u2(b, base + NEW_HELPER_UTF8);
	jpa_bc_put_utf8(b, "(I)V");
	for (int i = 0; i < 3; i++) {
		uint32_t utf8 = base + NEW_ENTER_UTF8 + 3 * (uint32_t)i;

		jpa_bc_put_utf8(b, names[i]);
		jpa_bc_put_u1(b, 12);
		jpa_bc_put_u2(b, utf8);
		jpa_bc_put_u2(b, base + NEW_DESC_UTF8);
		jpa_bc_put_u1(b, 10);
		jpa_bc_put_u2(b, base + NEW_HELPER_CLASS);
		jpa_bc_put_u2(b, utf8 + 1);
	}
	jpa_bc_put_utf8(b, "java/lang/Throwable");
	jpa_bc_put_u1(b, 7);
	jpa_bc_put_u2(b, base + NEW_THROWABLE_UTF8);
	jpa_bc_put_utf8(b, "StackMapTable");
	for (uint32_t k = 0; c->args && k < JPA_BC_ARG_KINDS; k++) {
		static const char *const an[] = JPA_BC_ARG_NAMES, *const ad[] = JPA_BC_ARG_DESCS;
		uint32_t at = base + NEW_MAX + 4 * k;

		jpa_bc_put_utf8(b, an[k]);
		jpa_bc_put_utf8(b, ad[k]);
		jpa_bc_put_u1(b, 12);
		jpa_bc_put_u2(b, at);
		jpa_bc_put_u2(b, at + 1);
		jpa_bc_put_u1(b, 10);
		jpa_bc_put_u2(b, base + NEW_HELPER_CLASS);
		jpa_bc_put_u2(b, at + 2);
	}
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
	uint32_t n = jpa_bc_rd_u2(r);
	int done = 0;

	for (uint32_t i = 0; i < n && !r->err; i++) {
		uint32_t access = jpa_bc_rd_u2(r), name = jpa_bc_rd_u2(r), desc = jpa_bc_rd_u2(r),
			 na = jpa_bc_rd_u2(r);
		const char *why = NULL;
		int id = -1, matched;

		if (r->err)
			return -EINVAL;
		matched = !jpa_bc_cp_cstr(c, name, mname, sizeof(mname)) &&
			  !jpa_bc_cp_cstr(c, desc, mdesc, sizeof(mdesc));
		if (matched)
			id = ops->match(ops->ctx, c->name, mname, mdesc, (uint16_t)access);
		if (id > JPA_BC_ID_MAX)
			id = -1;
		if (id >= 0)
			why = refusal(access, mname);
		for (uint32_t k = 0; k < na && !r->err; k++) {
			size_t at = r->off;
			uint32_t an = jpa_bc_rd_u2(r), alen = jpa_bc_rd_u4(r);
			struct meth m = {.c = c, .id = id, .ctor = !strcmp(mname, "<init>")};

			/* a constructor's arguments may be other values by its super() call: none */
			jpa_bc_plan_args(&m, mdesc, access & 0x0008, m.ctor ? 0 : c->args);
			size_t mark;

			jpa_bc_rd_skip(r, alen);
			if (r->err)
				return -EINVAL;
			if (id < 0 || why || !jpa_bc_cp_utf8_is(c, an, "Code"))
				continue;
			/* what lies before this attribute, as it was */
			jpa_bc_put(out, c->in + *copied, at - *copied);
			mark = out->len;
			if (rewrite_code(&m, an, c->in + at + 6, alen, out)) {
				why = m.why;
				out->len = mark;
				out->err = out->err == -E2BIG ? 0 : out->err;
				jpa_bc_put(out, c->in + at, r->off - at);
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
	uint32_t access, this_class, super_class, n_new;
	size_t copied;
	int err, done;

	if (!in || !ops || !ops->match)
		return -EINVAL;
	if (len > JPA_BC_CLASS_MAX)
		return -E2BIG;
	if (jpa_bc_rd_u4(&r) != 0xcafebabe)
		return -EINVAL;
	jpa_bc_rd_skip(&r, 2); /* minor */
	c.major = jpa_bc_rd_u2(&r);
	if (r.err || c.major < 45)
		return -EINVAL;
	err = jpa_bc_parse_cp(&c, &r);
	if (err)
		goto out_free;
	err = -EINVAL;
	c.args = ops->args < JPA_BC_ARGS_MAX ? ops->args : JPA_BC_ARGS_MAX;
	n_new = NEW_MAX + (c.args ? NEW_ARGS_N : 0);
	if (c.cp_count + n_new > 0xffff) {
		err = -E2BIG;
		goto out_free;
	}
	access = jpa_bc_rd_u2(&r);
	this_class = jpa_bc_rd_u2(&r);
	super_class = jpa_bc_rd_u2(&r);
	jpa_bc_rd_skip(&r, 2 * (size_t)jpa_bc_rd_u2(&r)); /* interfaces */
	if (r.err || jpa_bc_cp_tag(&c, this_class) != 7)
		goto out_free;
	if (jpa_bc_cp_cstr(&c, jpa_bc_cp_ref(&c, this_class, 0), c.name, sizeof(c.name))) {
		err = 0; /* a name no pattern can match */
		goto out_free;
	}
	if (jpa_bc_cp_tag(&c, super_class) != 7 ||
	    jpa_bc_cp_cstr(&c, jpa_bc_cp_ref(&c, super_class, 0), c.super_name,
			   sizeof(c.super_name)))
		c.super_name[0] = '\0'; /* then no super() call is recognised */
	if ((access & 0x8000) || !strcmp(c.name, JPA_BC_HELPER)) {
		err = 0; /* module-info, or our own helper */
		goto out_free;
	}
	/* fields */
	for (uint32_t n = jpa_bc_rd_u2(&r), i = 0; i < n && !r.err; i++) {
		jpa_bc_rd_skip(&r, 6);
		jpa_bc_skip_attrs(&r);
	}
	if (r.err)
		goto out_free;
	jpa_bc_put(&out, in, 8);
	jpa_bc_put_u2(&out, c.cp_count + n_new);
	jpa_bc_put(&out, in + 10, c.cp_end - 10);
	put_new_cp(&c, &out);
	copied = c.cp_end;
	done = rewrite_methods(&c, &r, ops, &out, &copied);
	if (done < 0) {
		err = done;
		goto out_free;
	}
	jpa_bc_skip_attrs(&r);
	if (r.err || r.off != len)
		goto out_free;
	jpa_bc_put(&out, in + copied, len - copied);
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
	static const char *const an[] = JPA_BC_ARG_NAMES, *const ad[] = JPA_BC_ARG_DESCS;
	struct buf b = {0};
	int len;

	jpa_bc_put_u4(&b, 0xcafebabe);
	jpa_bc_put_u2(&b, 0);
	jpa_bc_put_u2(&b, 52);		    /* Java 8: no code, so no stack maps either way */
	jpa_bc_put_u2(&b, 9 + 2 * JPA_BC_ARG_KINDS); /* #1..#8, then the args' */
	jpa_bc_put_utf8(&b, JPA_BC_HELPER); /* #1 */
	jpa_bc_put_u1(&b, 7);		    /* #2 Class #1 */
	jpa_bc_put_u2(&b, 1);
	jpa_bc_put_utf8(&b, "java/lang/Object"); /* #3 */
	jpa_bc_put_u1(&b, 7);			 /* #4 Class #3 */
	jpa_bc_put_u2(&b, 3);
	jpa_bc_put_utf8(&b, "(I)V"); /* #5 */
	for (int i = 0; i < 3; i++)
		jpa_bc_put_utf8(&b, names[i]); /* #6 #7 #8 */
	for (int i = 0; i < JPA_BC_ARG_KINDS; i++) {
		jpa_bc_put_utf8(&b, an[i]); /* #9 + 2i */
		jpa_bc_put_utf8(&b, ad[i]); /* #10 + 2i */
	}
	jpa_bc_put_u2(&b, 0x0001 | 0x0010 | 0x0020); /* public final super */
	jpa_bc_put_u2(&b, 2);
	jpa_bc_put_u2(&b, 4);
	jpa_bc_put_u2(&b, 0); /* interfaces */
	jpa_bc_put_u2(&b, 0); /* fields */
	jpa_bc_put_u2(&b, 3 + JPA_BC_ARG_KINDS);
	for (uint32_t i = 0; i < 3 + JPA_BC_ARG_KINDS; i++) {
		jpa_bc_put_u2(&b, 0x0001 | 0x0008 | 0x0100); /* public static native */
		jpa_bc_put_u2(&b, i < 3 ? 6 + i : 9 + 2 * (i - 3));
		jpa_bc_put_u2(&b, i < 3 ? 5 : 10 + 2 * (i - 3));
		jpa_bc_put_u2(&b, 0);
	}
	jpa_bc_put_u2(&b, 0); /* class attributes */
	if (b.err || b.len > cap) {
		free(b.p);
		return b.err ? b.err : -E2BIG;
	}
	memcpy(buf, b.p, b.len);
	len = (int)b.len;
	free(b.p);
	return len;
}

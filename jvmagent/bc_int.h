/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * bc_int.h: between the parts of the class-file rewriter (bytecode.c, the top and the Code
 * attribute; bc_class.c, the bounded reader and writer and the constant pool; bc_code.c, the
 * instructions: decode, constructor entry, layout, emit; bc_frames.c, the stack map frames
 * and the offset tables). Not a module interface: the rewriter's own types and functions.
 */
#ifndef JPROF_BC_INT_H
#define JPROF_BC_INT_H

#include <stddef.h>
#include <stdint.h>

#include "bytecode.h"

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
/* with --args, after those: per arg kind its name, descriptor, NameAndType, Methodref */
#define NEW_ARGS_N   (4 * JPA_BC_ARG_KINDS)
#define ARG_CALL_LEN 7 /* bipush position; xload slot; invokestatic #arg */

enum op {
	OP_BIPUSH = 0x10,
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

/* output buffer with a budget; err sticks */
struct buf {
	uint8_t *p;
	size_t len, cap;
	int err;
};

/* bounded reader over [p, p + n); err sticks, reads past the end give 0 */
struct rd {
	const uint8_t *p;
	size_t n, off;
	int err;
};

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
	unsigned int args;		  /* jpa_bc_ops.args: its new entries are in the pool */
};

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
	uint32_t prologue_len; /* PROLOGUE_LEN and an ARG_CALL_LEN per argument passed */
	unsigned int n_args;
	struct {
		uint8_t pos, load, slot, kind; /* position; xload opcode and local; arg kind */
	} arg[JPA_BC_ARGS_MAX];
};

static inline int32_t get_s4(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static inline int16_t get_s2(const uint8_t *p)
{
	return (int16_t)((uint16_t)(p[0] << 8 | p[1]));
}

/* switch padding after the opcode at pc */
static inline uint32_t pad_at(uint32_t pc)
{
	return (4 - ((pc + 1) & 3)) & 3;
}

/* bc_class.c: the output buffer (budget OUT_MAX; err sticks) */
void jpa_bc_put(struct buf *b, const void *src, size_t n);
void jpa_bc_put_u1(struct buf *b, uint32_t v);
void jpa_bc_put_u2(struct buf *b, uint32_t v);
void jpa_bc_put_u4(struct buf *b, uint32_t v);
void jpa_bc_put_utf8(struct buf *b, const char *s);
void jpa_bc_set_u4(struct buf *b, size_t at, uint32_t v);
/* bc_class.c: the bounded reader (past the end: 0 and err) */
uint32_t jpa_bc_rd_u1(struct rd *r);
uint32_t jpa_bc_rd_u2(struct rd *r);
uint32_t jpa_bc_rd_u4(struct rd *r);
void jpa_bc_rd_skip(struct rd *r, size_t k);
/* bc_class.c: the constant pool */
int jpa_bc_parse_cp(struct cls *c, struct rd *r);
/* entry i's tag; -1 for none */
int jpa_bc_cp_tag(const struct cls *c, uint32_t i);
int jpa_bc_cp_utf8_is(const struct cls *c, uint32_t i, const char *s);
/* Utf8 entry i as a C string; -1 when it is none, too long or holds a NUL */
int jpa_bc_cp_cstr(const struct cls *c, uint32_t i, char *out, size_t cap);
/* the k-th u2 of constant i's body (a Class's name, a Methodref's class or NameAndType...) */
uint32_t jpa_bc_cp_ref(const struct cls *c, uint32_t i, uint32_t k);
/* skips fields or methods' attributes: u2 count, {u2 name, u4 len, body} */
void jpa_bc_skip_attrs(struct rd *r);

/* bc_code.c: one method's instructions; each -1 refused with m->why */
int jpa_bc_refuse(struct meth *m, const char *why);
int jpa_bc_decode(struct meth *m);
/* old target of a branch's or switch's relative offset; -1 when it is no instruction start */
int64_t jpa_bc_target(const struct meth *m, const struct insn *in, int64_t rel);
int jpa_bc_check_targets(struct meth *m);
int jpa_bc_find_entry(struct meth *m);
/* a constructor's exception entry (old offsets) lies wholly on one side of its super() call */
int jpa_bc_ctor_exc_ok(const struct meth *m, uint32_t s, uint32_t e, uint32_t h);
/* the arguments passed (m->arg, m->prologue_len) for a method of descriptor desc */
void jpa_bc_plan_args(struct meth *m, const char *desc, int is_static, unsigned int max);
int jpa_bc_layout(struct meth *m);
void jpa_bc_emit_code(const struct meth *m, struct buf *b);

/* bc_frames.c: offsets mapped; -1 bad */
/* an old offset that must be an instruction start (or, if end_ok, the code's end) */
int32_t jpa_bc_map_pc(const struct meth *m, uint32_t pc, int end_ok);
/* the StackMapTable's body re-encoded for the new offsets, plus the handler's frame */
int jpa_bc_emit_smt(const struct meth *m, struct rd *r, struct buf *b);
/* LineNumberTable (ranges 0) or LocalVariable(Type)Table (ranges 1) with offsets mapped */
int jpa_bc_emit_pc_table(const struct meth *m, struct rd *r, struct buf *b, int ranges);

#endif /* JPROF_BC_INT_H */

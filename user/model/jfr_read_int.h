/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * jfr_read_int.h: the JFR reader's own state and the functions its files share (jfr_read.c,
 * jfr_read_values.c, jfr_read_meta.c, jfr_read_stacks.c, jfr_read_events.c); nothing else
 * includes it. The public interface is jfr_read.h.
 */
#ifndef JPROF_JFR_READ_INT_H
#define JPROF_JFR_READ_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "jfr_read.h"
#define JFR_HEADER     68
#define JFR_MAX_STR    1024 /* bytes of one decoded string (longer ones are cut) */
#define JFR_MAX_NEST   16   /* inline values within values */
#define JFR_META_DEPTH 16   /* the metadata's element tree */
#ifndef JP_FUZZ_BUDGETS
#define JFR_MAX_CLASSES (1u << 14)
#define JFR_MAX_FIELDS	(1u << 18)
#define JFR_MAX_MSTRS	(1u << 18) /* strings of the metadata */
#define JFR_MAX_CP	(1u << 22) /* constant pool entries of a chunk */
#define JFR_MAX_DEPTH	8192	   /* frames kept of a stack trace */
#define JFR_MAX_GC	(1u << 16)
#else /* fuzzing: small enough for a fuzzer's inputs to reach, large enough for a JDK recording */
#define JFR_MAX_CLASSES 1024u
#define JFR_MAX_FIELDS	8192u
#define JFR_MAX_MSTRS	8192u
#define JFR_MAX_CP	16384u
#define JFR_MAX_DEPTH	64
#define JFR_MAX_GC	64u
#endif

/* what a class is made of: a primitive, a string, or fields */
enum prim {
	P_STRUCT = 0,
	P_BOOL,
	P_BYTE,
	P_CHAR,
	P_SHORT,
	P_INT,
	P_LONG,
	P_FLOAT,
	P_DOUBLE,
	P_STRING
};

/* the classes this reader uses, by name */
enum ckind {
	C_OTHER = 0,
	C_THREAD,
	C_STACKTRACE,
	C_METHOD,
	C_CLASS,
	C_FRAMETYPE,
	/* events */
	E_EXEC,
	E_ALLOC,
	E_ALLOC_TLAB,
	E_ALLOC_OUTSIDE,
	E_MONITOR,
	E_PARK,
	E_OFFCPU,
	E_SYSCALL,
	E_THREADINFO,
	E_RECORDING,
	E_GC,
	E_SETTING,
	E_JVMINFO,
};

/* the fields this reader uses, by name (what each means depends on its class) */
enum role {
	R_NONE = 0,
	R_START,
	R_DURATION,
	R_THREAD,
	R_STACK,
	R_CLASS,
	R_WEIGHT,
	R_ALLOC_SIZE,
	R_TLAB_SIZE,
	R_CALLS,
	R_PID,
	R_PROCESS,
	R_CONTAINER,
	R_CGROUP,
	R_NAME,
	R_CAUSE,
	R_SUM_PAUSES,
	R_GC_ID,
	R_TITLE,
	R_HOST,
	R_COMMAND,
	R_EVENTS,
	R_PERIOD,
	R_SAMPLES,
	R_LOST,
	R_LOSSES,
	R_ID,
	R_VALUE,
	R_OS_NAME,
	R_OS_TID,
	R_JAVA_NAME,
	R_FRAMES,
	R_METHOD,
	R_LINE,
	R_TYPE,
	R_DESCRIPTOR,
	R_MODIFIERS,
	R_STRING,
	R_DESCRIPTION,
	R_MAIN,
};

struct jfield {
	const char *name;
	__u64 type; /* class id */
	__u32 cls;  /* index of that class */
	bool cp;    /* the value is a key into the class's pool */
	bool array; /* dimension 1 */
	enum role role;
};

/* a method's access flag in jprof's files: a Java native method, not native code */
#define JR_ACC_NATIVE 0x0100

struct jclass {
	__u64 id;
	const char *name;
	__u32 f0, nf; /* its fields: fields[f0 .. f0 + nf) */
	enum prim prim;
	enum ckind kind;
};

/* a constant pool entry: where its value is (an offset into the file), and what it became */
struct cpent {
	__u64 type, key;
	size_t pos;
	__u32 cache[2]; /* per kind: model ids, 0 not yet */
};

/* pseudo type of the table's jprof.ThreadInfo entries: thread key -> the event's fields */
#define TI_TYPE (~0ull)

struct rd {
	const unsigned char *p;
	size_t pos, end;
	int err;
};

struct ctx {
	struct model *m;
	struct jfr_read_info *info;
	const unsigned char *buf;
	size_t len;
	char *why;
	size_t why_len;
	/* the chunk */
	size_t c0, c_end; /* its offsets in buf */
	bool compressed;
	__u64 start_ns, start_ticks, tps;
	char **mstrs;
	size_t nmstrs;
	struct jclass *cls;
	size_t ncls, cap_cls;
	struct jfield *fld;
	size_t nfld, cap_fld;
	struct cpent *cp;
	size_t ncp, cap_cp;
	__u32 *slots;
	size_t nslots;
	__u64 exec_id;	  /* class id of jdk.ExecutionSample, ~0 none */
	__u32 ti_cls;	  /* index of jprof.ThreadInfo's class, ~0 none */
	__u32 string_cls; /* index of java.lang.String's class, ~0 none */
	__u64 period_ns;
	/* the file */
	bool jprof;
	__u32 pid;
	__u64 work; /* values left to decode: bounds nesting blow-ups */
	__u64 first_start_ns, min_start_ns, max_end_ns;
	size_t gc_cap;
	jp_id *stack_buf;
	jp_id no_stack;		  /* "[no stack trace]" */
	bool clock_set;		  /* the model's clock checked (set from the first chunk) */
	struct jfr_read_info own; /* when the caller passes no info */
};

/* jfr_read_values.c */
int jr_bad(struct ctx *c, const char *what, size_t at);
unsigned char jr_rd_u8(struct rd *r);
__u64 jr_rd_be(struct rd *r, int n);
__u64 jr_rd_long(struct ctx *c, struct rd *r);
__u32 jr_rd_int(struct ctx *c, struct rd *r);
__u32 jr_rd_count(struct ctx *c, struct rd *r);
bool jr_rd_string(struct ctx *c, struct rd *r, char *buf, size_t size, int depth);
void jr_skip_field(struct ctx *c, struct rd *r, const struct jfield *f, int depth);
void jr_skip_class(struct ctx *c, struct rd *r, __u32 ci, int depth);
bool jr_rd_num(struct ctx *c, struct rd *r, const struct jfield *f, __u64 *v);
bool jr_rd_str_field(struct ctx *c, struct rd *r, const struct jfield *f, char *buf, size_t size,
		     int depth);

/* jfr_read_meta.c */
struct cpent *jr_cp_find(struct ctx *c, __u64 type, __u64 key);
int jr_cp_add(struct ctx *c, __u64 type, __u64 key, size_t pos);
struct cpent *jr_cp_get(struct ctx *c, __u32 ci, __u64 key);
bool jr_resolve_string(struct ctx *c, __u32 ci, __u64 key, char *buf, size_t size, int depth);
__u32 jr_class_index(const struct ctx *c, __u64 id);
void jr_meta_free(struct ctx *c);
int jr_read_metadata(struct ctx *c, size_t at);
int jr_read_checkpoint(struct ctx *c, struct rd *r, size_t at);

/* jfr_read_stacks.c */
void jr_class_display(const char *s, char *out, size_t size);
jp_id jr_stack_of(struct ctx *c, __u32 sci, __u64 key, int *err);
jp_id jr_labels_of(struct ctx *c, __u32 tci, __u64 key);

/* jfr_read_events.c */
int jr_sample_event(struct ctx *c, struct rd *r, const struct jclass *k, size_t at);
int jr_info_event(struct ctx *c, struct rd *r, const struct jclass *k, size_t at, size_t body);

#endif /* JPROF_JFR_READ_INT_H */

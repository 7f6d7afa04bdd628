// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jfr_read.c: a JDK Flight Recorder file back into the model, for `jprof report`. A file is
 * chunks; a chunk is a 68-byte header (big endian), then events, each its size and type
 * first. The metadata event describes every type as a class with fields (an element tree
 * over a string table); checkpoint events hold the constant pools (type, key -> value); an
 * event's fields are laid out as its class says. The reader follows the metadata, as the
 * JDK's own parser does, so any writer's layout is read. The file may come from anywhere:
 * every offset, length, count, index and nesting depth is checked, the work spent on values
 * and the tables' sizes are capped, and a malformed file is refused with one reason.
 *
 * Per chunk: the header, the metadata, then three walks over its events: the checkpoints
 * (constant pool entries are kept as offsets, decoded when first used and cached), the
 * events that say how to read the others (threads' processes, the sampling period), then
 * the samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	R_STRING,
	R_DESCRIPTION,
};

static const struct {
	const char *name;
	enum role role;
} roles[] = {
	{"startTime", R_START},
	{"duration", R_DURATION},
	{"eventThread", R_THREAD},
	{"sampledThread", R_THREAD},
	{"stackTrace", R_STACK},
	{"objectClass", R_CLASS},
	{"monitorClass", R_CLASS},
	{"parkedClass", R_CLASS},
	{"weight", R_WEIGHT},
	{"allocationSize", R_ALLOC_SIZE},
	{"tlabSize", R_TLAB_SIZE},
	{"calls", R_CALLS},
	{"pid", R_PID},
	{"processName", R_PROCESS},
	{"container", R_CONTAINER},
	{"cgroupId", R_CGROUP},
	{"name", R_NAME},
	{"cause", R_CAUSE},
	{"sumOfPauses", R_SUM_PAUSES},
	{"gcId", R_GC_ID},
	{"title", R_TITLE},
	{"host", R_HOST},
	{"command", R_COMMAND},
	{"events", R_EVENTS},
	{"samplingPeriod", R_PERIOD},
	{"samples", R_SAMPLES},
	{"lost", R_LOST},
	{"losses", R_LOSSES},
	{"id", R_ID},
	{"value", R_VALUE},
	{"osName", R_OS_NAME},
	{"osThreadId", R_OS_TID},
	{"javaName", R_JAVA_NAME},
	{"frames", R_FRAMES},
	{"method", R_METHOD},
	{"lineNumber", R_LINE},
	{"type", R_TYPE},
	{"descriptor", R_DESCRIPTOR},
	{"string", R_STRING},
	{"description", R_DESCRIPTION},
};

static const struct {
	const char *name;
	enum ckind kind;
} kinds[] = {
	{"java.lang.Thread", C_THREAD},
	{"jdk.types.StackTrace", C_STACKTRACE},
	{"jdk.types.Method", C_METHOD},
	{"java.lang.Class", C_CLASS},
	{"jdk.types.FrameType", C_FRAMETYPE},
	{"jdk.ExecutionSample", E_EXEC},
	{"jdk.ObjectAllocationSample", E_ALLOC},
	{"jdk.ObjectAllocationInNewTLAB", E_ALLOC_TLAB},
	{"jdk.ObjectAllocationOutsideTLAB", E_ALLOC_OUTSIDE},
	{"jdk.JavaMonitorEnter", E_MONITOR},
	{"jdk.ThreadPark", E_PARK},
	{"jprof.OffCPU", E_OFFCPU},
	{"jprof.Syscall", E_SYSCALL},
	{"jprof.ThreadInfo", E_THREADINFO},
	{"jprof.Recording", E_RECORDING},
	{"jdk.GarbageCollection", E_GC},
	{"jdk.ActiveSetting", E_SETTING},
	{"jdk.JVMInformation", E_JVMINFO},
};

struct jfield {
	const char *name;
	__u64 type; /* class id */
	__u32 cls;  /* index of that class */
	bool cp;    /* the value is a key into the class's pool */
	bool array; /* dimension 1 */
	enum role role;
};

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
	struct jfr_read_info own; /* when the caller passes no info */
};

static int bad(struct ctx *c, const char *what, size_t at)
{
	if (c->why && c->why_len)
		snprintf(c->why, c->why_len, "%s (at byte %zu)", what, at);
	return -EINVAL;
}

/* ---- reading: every read is bounds-checked, the first error sticks ---- */

static unsigned char rd_u8(struct rd *r)
{
	if (r->err || r->pos >= r->end) {
		r->err = -EINVAL;
		return 0;
	}
	return r->p[r->pos++];
}

static __u64 rd_be(struct rd *r, int n)
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
		unsigned char b = rd_u8(r);

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

static __u64 rd_long(struct ctx *c, struct rd *r)
{
	return c->compressed ? rd_varint(r) : rd_be(r, 8);
}

static __u32 rd_int(struct ctx *c, struct rd *r)
{
	return c->compressed ? (__u32)rd_varint(r) : (__u32)rd_be(r, 4);
}

static void rd_skip(struct rd *r, __u64 n)
{
	if (r->err || n > r->end - r->pos)
		r->err = -EINVAL;
	else
		r->pos += (size_t)n;
}

/* a count of things that take a byte each at least: no more than the bytes left */
static __u32 rd_count(struct ctx *c, struct rd *r)
{
	__u32 n = rd_int(c, r);

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

static bool resolve_string(struct ctx *c, __u32 cls, __u64 key, char *buf, size_t size, int depth);

/*
 * A string value: 0 null, 1 empty, 2 a key of the java.lang.String pool, 3 UTF-8, 4 chars
 * (one varint each), 5 Latin-1. Into buf when given (UTF-8, NUL-terminated, cut); false
 * for null and on error. depth bounds references through pools.
 */
static bool rd_string(struct ctx *c, struct rd *r, char *buf, size_t size, int depth)
{
	unsigned char enc = rd_u8(r);
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
		__u64 key = rd_long(c, r);

		if (r->err || !buf)
			return !r->err;
		return depth > 0 && c->string_cls != ~0u &&
		       resolve_string(c, c->string_cls, key, buf, size, depth - 1);
	}
	case 3:
	case 5:
		n = rd_int(c, r);
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
		n = rd_count(c, r);
		for (__u32 i = 0; i < n && !r->err; i++) {
			__u64 ch = c->compressed ? rd_varint(r) : rd_be(r, 2);

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

static void skip_class(struct ctx *c, struct rd *r, __u32 ci, int depth);

static void skip_field(struct ctx *c, struct rd *r, const struct jfield *f, int depth)
{
	__u32 n = f->array ? rd_count(c, r) : 1;

	for (__u32 i = 0; i < n && !r->err; i++) {
		if (f->cp)
			(void)rd_long(c, r);
		else
			skip_class(c, r, f->cls, depth);
	}
}

static void skip_class(struct ctx *c, struct rd *r, __u32 ci, int depth)
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
		(void)rd_int(c, r);
		break;
	case P_LONG:
		(void)rd_long(c, r);
		break;
	case P_FLOAT:
		rd_skip(r, 4);
		break;
	case P_DOUBLE:
		rd_skip(r, 8);
		break;
	case P_STRING:
		(void)rd_string(c, r, NULL, 0, 0);
		break;
	case P_STRUCT:
		for (__u32 i = 0; i < k->nf && !r->err; i++)
			skip_field(c, r, &c->fld[k->f0 + i], depth + 1);
		break;
	}
}

/* an integer or a pool key into *v; false (the value skipped) for anything else */
static bool rd_num(struct ctx *c, struct rd *r, const struct jfield *f, __u64 *v)
{
	enum prim p = c->cls[f->cls].prim;

	if (f->array || (!f->cp && (p == P_STRUCT || p >= P_FLOAT))) {
		skip_field(c, r, f, 0);
		return false;
	}
	if (f->cp || p == P_LONG || p == P_INT || p == P_SHORT || p == P_CHAR) {
		if (!f->cp && p == P_INT)
			*v = (__u64)(__s64)(__s32)rd_int(c, r); /* a Java int: -1 stays -1 */
		else if (!f->cp && !c->compressed && p != P_LONG)
			*v = rd_be(r, 2);
		else
			*v = rd_long(c, r);
	} else {
		*v = rd_u8(r);
	}
	return !r->err;
}

/* a string field (inline, or through a pool) into buf; false for null, other types, errors */
static bool rd_str_field(struct ctx *c, struct rd *r, const struct jfield *f, char *buf,
			 size_t size, int depth)
{
	__u64 key;

	buf[0] = '\0';
	if (!f->array && !f->cp && c->cls[f->cls].prim == P_STRING)
		return rd_string(c, r, buf, size, depth);
	if (!f->array && f->cp) {
		key = rd_long(c, r);
		return !r->err && resolve_string(c, f->cls, key, buf, size, depth);
	}
	skip_field(c, r, f, 0);
	return false;
}

/* ---- constant pools: (type, key) -> the value's offset ---- */

static size_t cp_hash(__u64 type, __u64 key)
{
	__u64 h = (type * 0x9e3779b97f4a7c15ull) ^ key;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 29));
}

static struct cpent *cp_find(struct ctx *c, __u64 type, __u64 key)
{
	if (!c->nslots)
		return NULL;
	for (size_t i = cp_hash(type, key) & (c->nslots - 1);; i = (i + 1) & (c->nslots - 1)) {
		__u32 s = c->slots[i];

		if (!s)
			return NULL;
		if (c->cp[s - 1].type == type && c->cp[s - 1].key == key)
			return &c->cp[s - 1];
	}
}

/* adds an entry (a key seen twice keeps its first value); 0, -ENOMEM or -E2BIG */
static int cp_add(struct ctx *c, __u64 type, __u64 key, size_t pos)
{
	size_t i;

	if (cp_find(c, type, key))
		return 0;
	if (c->ncp >= JFR_MAX_CP)
		return -E2BIG;
	if (c->ncp == c->cap_cp) {
		size_t nc = c->cap_cp ? c->cap_cp * 2 : 1024;
		struct cpent *ne = realloc(c->cp, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		c->cp = ne;
		c->cap_cp = nc;
	}
	if ((c->ncp + 1) * 2 > c->nslots) {
		size_t ns = c->nslots ? c->nslots * 2 : 2048;
		__u32 *sl = calloc(ns, sizeof(*sl));

		if (!sl)
			return -ENOMEM;
		free(c->slots);
		c->slots = sl;
		c->nslots = ns;
		for (size_t k = 0; k < c->ncp; k++) {
			for (i = cp_hash(c->cp[k].type, c->cp[k].key) & (ns - 1); sl[i];
			     i = (i + 1) & (ns - 1))
				;
			sl[i] = (__u32)k + 1;
		}
	}
	c->cp[c->ncp] = (struct cpent){.type = type, .key = key, .pos = pos};
	for (i = cp_hash(type, key) & (c->nslots - 1); c->slots[i]; i = (i + 1) & (c->nslots - 1))
		;
	c->slots[i] = (__u32)++c->ncp;
	return 0;
}

/* the entry of a key of class ci's pool; NULL (counted) when the file has none */
static struct cpent *cp_get(struct ctx *c, __u32 ci, __u64 key)
{
	struct cpent *e = cp_find(c, c->cls[ci].id, key);

	if (!e && key)
		c->info->unresolved++;
	return e;
}

/*
 * The string a pool entry stands for: a java.lang.String, or a class whose one field (or
 * whose "name") is a string, inline or through another pool (Symbol, Class, FrameType,
 * GCName ...). depth bounds the chain.
 */
static bool resolve_string(struct ctx *c, __u32 ci, __u64 key, char *buf, size_t size, int depth)
{
	const struct jclass *k = &c->cls[ci];
	struct cpent *e;
	struct rd r;
	__u32 pick = ~0u;

	buf[0] = '\0';
	if (depth <= 0 || !(e = cp_get(c, ci, key)))
		return false;
	r = (struct rd){c->buf, e->pos, c->c_end, 0};
	if (k->prim == P_STRING)
		return rd_string(c, &r, buf, size, depth - 1);
	if (k->prim != P_STRUCT)
		return false;
	for (__u32 i = 0; i < k->nf && pick == ~0u; i++) {
		enum role ro = c->fld[k->f0 + i].role;

		if (k->nf == 1 || ro == R_NAME || ro == R_STRING || ro == R_DESCRIPTION)
			pick = i;
	}
	if (pick == ~0u)
		return false;
	for (__u32 i = 0; i < pick && !r.err; i++)
		skip_field(c, &r, &c->fld[k->f0 + i], 0);
	return !r.err && rd_str_field(c, &r, &c->fld[k->f0 + pick], buf, size, depth - 1);
}

/* ---- the metadata ---- */

static const char *mstr(struct ctx *c, struct rd *r)
{
	__u32 i = rd_int(c, r);

	if (r->err || i >= c->nmstrs || !c->mstrs[i]) {
		r->err = -EINVAL;
		return NULL;
	}
	return c->mstrs[i];
}

/* room for entry i of an array; 0 or -ENOMEM */
static int grow(void **arr, size_t *cap, size_t i, size_t elem)
{
	size_t nc;
	void *p;

	if (i < *cap)
		return 0;
	nc = *cap ? *cap * 2 : 64;
	p = realloc(*arr, nc * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

/* one element and its children; cur is the class being described, ~0 outside one */
static int meta_element(struct ctx *c, struct rd *r, int depth, __u32 cur)
{
	const char *name = mstr(c, r), *a_name = NULL, *a_id = NULL, *a_class = NULL;
	bool cp = false, array = false, is_class, is_field;
	__u32 nattr, nchild, me = cur;

	if (r->err)
		return -EINVAL;
	if (depth > JFR_META_DEPTH)
		return -E2BIG;
	is_class = !strcmp(name, "class");
	is_field = !strcmp(name, "field");
	nattr = rd_count(c, r);
	for (__u32 i = 0; i < nattr && !r->err; i++) {
		const char *k = mstr(c, r), *v = mstr(c, r);

		if (r->err)
			break;
		if (!strcmp(k, "name"))
			a_name = v;
		else if (!strcmp(k, "id"))
			a_id = v;
		else if (!strcmp(k, "class"))
			a_class = v;
		else if (!strcmp(k, "constantPool"))
			cp = !strcmp(v, "true");
		else if (!strcmp(k, "dimension"))
			array = strcmp(v, "0") != 0;
	}
	if (r->err)
		return -EINVAL;
	if (is_class) {
		struct jclass *k;
		char *end;

		if (cur != ~0u || !a_name || !a_id)
			return -EINVAL; /* a class within a class, or one without name or id */
		if (c->ncls >= JFR_MAX_CLASSES)
			return -E2BIG;
		if (grow((void **)&c->cls, &c->cap_cls, c->ncls, sizeof(*c->cls)))
			return -ENOMEM;
		k = &c->cls[c->ncls];
		memset(k, 0, sizeof(*k));
		k->name = a_name;
		errno = 0;
		k->id = strtoull(a_id, &end, 10);
		if (errno || end == a_id || *end)
			return -EINVAL;
		k->f0 = (__u32)c->nfld;
		me = (__u32)c->ncls++;
	} else if (is_field && cur != ~0u) {
		struct jfield *f;
		char *end;

		if (!a_name || !a_class)
			return -EINVAL;
		if (c->nfld >= JFR_MAX_FIELDS)
			return -E2BIG;
		if (grow((void **)&c->fld, &c->cap_fld, c->nfld, sizeof(*c->fld)))
			return -ENOMEM;
		f = &c->fld[c->nfld++];
		memset(f, 0, sizeof(*f));
		f->name = a_name;
		errno = 0;
		f->type = strtoull(a_class, &end, 10);
		if (errno || end == a_class || *end)
			return -EINVAL;
		f->cp = cp;
		f->array = array;
	}
	nchild = rd_count(c, r);
	for (__u32 i = 0; i < nchild && !r->err; i++) {
		int err = meta_element(c, r, depth + 1, me);

		if (err)
			return err;
	}
	if (is_class)
		c->cls[me].nf = (__u32)c->nfld - c->cls[me].f0;
	return r->err ? -EINVAL : 0;
}

static int cmp_cls(const void *a, const void *b)
{
	const struct jclass *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static __u32 class_index(const struct ctx *c, __u64 id)
{
	size_t lo = 0, hi = c->ncls;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->cls[mid].id == id)
			return (__u32)mid;
		if (c->cls[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return ~0u;
}

static void meta_free(struct ctx *c)
{
	for (size_t i = 0; i < c->nmstrs; i++)
		free(c->mstrs[i]);
	free(c->mstrs);
	free(c->cls);
	free(c->fld);
	c->mstrs = NULL;
	c->cls = NULL;
	c->fld = NULL;
	c->nmstrs = c->ncls = c->nfld = c->cap_cls = c->cap_fld = 0;
}

static int read_metadata(struct ctx *c, size_t at)
{
	static const char *const prims[] = {
		[P_BOOL] = "boolean", [P_BYTE] = "byte",     [P_CHAR] = "char",
		[P_SHORT] = "short",  [P_INT] = "int",	     [P_LONG] = "long",
		[P_FLOAT] = "float",  [P_DOUBLE] = "double", [P_STRING] = "java.lang.String",
	};
	struct rd r = {c->buf, at, c->c_end, 0};
	__u64 size = rd_int(c, &r);
	__u32 n;
	int err;

	if (r.err || size < 2 || size > c->c_end - at || rd_long(c, &r) != 0)
		return bad(c, "no metadata event where the chunk header says", at);
	r.end = at + (size_t)size;
	(void)rd_long(c, &r); /* start */
	(void)rd_long(c, &r); /* duration */
	(void)rd_long(c, &r); /* metadata id */
	n = rd_count(c, &r);
	if (r.err)
		return bad(c, "malformed metadata", at);
	if (n > JFR_MAX_MSTRS)
		return bad(c, "more metadata strings than the limit", at);
	c->mstrs = calloc(n ? n : 1, sizeof(*c->mstrs));
	if (!c->mstrs)
		return -ENOMEM;
	c->nmstrs = n;
	for (__u32 i = 0; i < n && !r.err; i++) {
		char tmp[JFR_MAX_STR];

		if (rd_string(c, &r, tmp, sizeof(tmp), 0) && !(c->mstrs[i] = strdup(tmp)))
			return -ENOMEM;
	}
	if (r.err)
		return bad(c, "malformed metadata string", r.pos);
	err = meta_element(c, &r, 0, ~0u);
	if (err == -E2BIG)
		return bad(c, "metadata over the size limits", at);
	if (err || r.err)
		return bad(c, "malformed metadata element tree", r.pos);
	if (c->ncls)
		qsort(c->cls, c->ncls, sizeof(*c->cls), cmp_cls);
	c->exec_id = ~0ull;
	c->ti_cls = c->string_cls = ~0u;
	for (size_t i = 0; i < c->ncls; i++) {
		struct jclass *k = &c->cls[i];

		if (i && k->id == c->cls[i - 1].id)
			return bad(c, "two classes of one id in the metadata", at);
		for (size_t p = 1; p < sizeof(prims) / sizeof(prims[0]); p++)
			if (k->nf == 0 && !strcmp(k->name, prims[p]))
				k->prim = (enum prim)p;
		for (size_t q = 0; q < sizeof(kinds) / sizeof(kinds[0]); q++)
			if (!strcmp(k->name, kinds[q].name))
				k->kind = kinds[q].kind;
		if (!strncmp(k->name, "jprof.", 6))
			c->jprof = true;
		if (k->kind == E_EXEC)
			c->exec_id = k->id;
		if (k->kind == E_THREADINFO)
			c->ti_cls = (__u32)i;
		if (k->prim == P_STRING)
			c->string_cls = (__u32)i;
	}
	for (size_t i = 0; i < c->nfld; i++) {
		struct jfield *f = &c->fld[i];

		f->cls = class_index(c, f->type);
		if (f->cls == ~0u)
			return bad(c, "a field of a class the metadata does not describe", at);
		for (size_t q = 0; q < sizeof(roles) / sizeof(roles[0]); q++)
			if (!strcmp(f->name, roles[q].name))
				f->role = roles[q].role;
	}
	return 0;
}

/* ---- checkpoints ---- */

static int read_checkpoint(struct ctx *c, struct rd *r, size_t at)
{
	__u32 npools;

	(void)rd_long(c, r); /* start */
	(void)rd_long(c, r); /* duration */
	(void)rd_long(c, r); /* delta to the previous checkpoint: every event is walked anyway */
	(void)rd_u8(r);	     /* its kind (flush, chunk header, statics, thread) */
	npools = rd_count(c, r);
	for (__u32 i = 0; i < npools && !r->err; i++) {
		__u32 ci = class_index(c, rd_long(c, r)), n;

		if (r->err)
			break;
		if (ci == ~0u)
			return bad(c, "a constant pool of a type the metadata does not describe",
				   at);
		n = rd_count(c, r);
		for (__u32 k = 0; k < n && !r->err; k++) {
			__u64 key = rd_long(c, r);
			size_t pos = r->pos;
			int err;

			skip_class(c, r, ci, 0);
			if (r->err)
				break;
			err = cp_add(c, c->cls[ci].id, key, pos);
			if (err == -E2BIG)
				return bad(c, "more constant pool entries than the limit", at);
			if (err)
				return err;
		}
	}
	if (r->err == -E2BIG)
		return bad(c, "values nested deeper or more often than the limits", at);
	return r->err ? bad(c, "malformed constant pool", r->pos) : 0;
}

/* ---- frames, stacks, threads ---- */

/* "java/lang/String" -> "java.lang.String", "[B" -> "byte[]", "[Lp/C;" -> "p.C[]" */
static void class_display(const char *s, char *out, size_t size)
{
	static const char prim[] = "ZBCSIJFD";
	static const char *const pname[] = {"boolean", "byte", "char",	"short",
					    "int",     "long", "float", "double"};
	size_t dims = 0, w = 0, n;
	const char *p;

	while (s[dims] == '[' && dims < 16)
		dims++;
	p = s + dims;
	n = strlen(p);
	if (dims && p[0] == 'L' && n >= 2 && p[n - 1] == ';') {
		p++;
		n -= 2;
	} else if (dims && n == 1 && strchr(prim, p[0])) {
		p = pname[strchr(prim, p[0]) - prim];
		n = strlen(p);
	} else if (dims) {
		p = s;
		n = strlen(s);
		dims = 0;
	}
	for (size_t i = 0; i < n && w + 1 < size; i++)
		out[w++] = p[i] == '/' ? '.' : p[i];
	for (size_t i = 0; i < dims && w + 2 < size; i++) {
		out[w++] = '[';
		out[w++] = ']';
	}
	out[w] = '\0';
}

/*
 * A hidden class's name ends in its address in that JVM ("Foo$$Lambda$88+0x00007fc09c007a08/
 * 1790421142" in JDK 17, "Foo$$Lambda/0x000000001b045210" in 25, "LambdaForm$MH+0x..."): as
 * jprof's agent does, the address and a lambda's number go ("Foo$$Lambda", "LambdaForm$MH"),
 * so the same code is one frame in every JVM and run.
 */
static void hidden_class_norm(char *s)
{
	size_t n = strlen(s), k;

	for (size_t i = 1; i + 2 < n; i++) {
		if ((s[i] == '+' || s[i] == '/' || s[i] == '.') && s[i + 1] == '0' &&
		    s[i + 2] == 'x' && i + 3 < n && strchr("0123456789abcdefABCDEF", s[i + 3])) {
			n = i;
			break;
		}
	}
	for (k = n; k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9'; k--)
		;
	if (k < n && k >= 9 && !memcmp(s + k - 9, "$$Lambda$", 9))
		n = k - 1;
	s[n] = '\0';
}

static enum jp_frame_kind frame_kind(struct ctx *c, __u32 ci, __u64 key)
{
	static const struct {
		const char *name;
		enum jp_frame_kind kind;
	} fk[] = {
		{"Interpreted", JP_FK_INTERP}, {"JIT compiled", JP_FK_JIT},
		{"C1 compiled", JP_FK_JIT},    {"Inlined", JP_FK_INLINED},
		{"Native", JP_FK_NATIVE},      {"C++", JP_FK_NATIVE},
		{"Kernel", JP_FK_KERNEL},
	};
	struct cpent *e = cp_find(c, c->cls[ci].id, key);
	char d[64];

	if (e && e->cache[0])
		return (enum jp_frame_kind)(e->cache[0] - 1);
	if (!resolve_string(c, ci, key, d, sizeof(d), 3))
		return JP_FK_NATIVE;
	for (size_t i = 0; i < sizeof(fk) / sizeof(fk[0]); i++) {
		if (!strcmp(d, fk[i].name)) {
			if (e)
				e->cache[0] = fk[i].kind + 1;
			return fk[i].kind;
		}
	}
	return JP_FK_NATIVE;
}

static bool java_kind(enum jp_frame_kind k)
{
	return k == JP_FK_JIT || k == JP_FK_INLINED || k == JP_FK_INTERP;
}

/*
 * The model location of a frame: its method's function (cached on the method's entry, with
 * jprof's pseudo classes of native code: "[kernel]", libjvm.so), line and kind.
 */
static jp_id frame_loc(struct ctx *c, __u32 mci, __u64 mkey, __s64 line, enum jp_frame_kind kind)
{
	struct cpent *e = cp_get(c, mci, mkey);
	const struct jclass *k = &c->cls[mci];
	struct jp_location loc = {.line = line > 0 && line <= 0x7fffffff ? (__s32)line : 0};

	if (e && e->cache[0]) {
		loc.func = e->cache[0];
		if (e->cache[1])
			kind = (enum jp_frame_kind)(e->cache[1] - 1);
	} else {
		char cls[JFR_MAX_STR] = "", name[JFR_MAX_STR] = "", desc[256] = "";
		char full[2 * JFR_MAX_STR + 256];
		enum jp_frame_kind native = JP_FK_MAX;
		bool java;
		struct rd r;

		if (e) {
			r = (struct rd){c->buf, e->pos, c->c_end, 0};
			for (__u32 i = 0; i < k->nf && !r.err; i++) {
				const struct jfield *f = &c->fld[k->f0 + i];
				__u64 ck;

				if (f->role == R_TYPE && f->cp) {
					ck = rd_long(c, &r);
					if (!r.err)
						(void)resolve_string(c, f->cls, ck, cls,
								     sizeof(cls), 4);
				} else if (f->role == R_NAME) {
					(void)rd_str_field(c, &r, f, name, sizeof(name), 3);
				} else if (f->role == R_DESCRIPTOR) {
					(void)rd_str_field(c, &r, f, desc, sizeof(desc), 3);
				} else {
					skip_field(c, &r, f, 0);
				}
			}
			if (r.err)
				name[0] = '\0';
			if (!c->jprof)
				hidden_class_norm(cls);
		}
		if (!name[0])
			snprintf(name, sizeof(name), "[unknown]");
		/* jprof writes native code as Native frames of a pseudo class: where it lives */
		if (c->jprof && !java_kind(kind)) {
			java = false;
			native = !strcmp(cls, "[kernel]")    ? JP_FK_KERNEL
				 : !strcmp(cls, "libjvm.so") ? JP_FK_JVM
							     : JP_FK_NATIVE;
			loc.func =
				model__func(c->m, name, strcmp(cls, "[native]") ? cls : "", false);
		} else {
			java = cls[0] && (java_kind(kind) || kind == JP_FK_NATIVE);
			/* jprof's writer puts "()V" where the model's name had no descriptor */
			if (java)
				snprintf(full, sizeof(full), "%s.%s%s", cls, name,
					 c->jprof && strcmp(desc, "()V") ? desc : "");
			else
				snprintf(full, sizeof(full), "%s", name);
			loc.func = model__func(c->m, full, "", java);
		}
		if (!loc.func)
			return 0;
		if (e) {
			e->cache[0] = loc.func;
			e->cache[1] = native != JP_FK_MAX ? native + 1 : 0;
		}
		if (native != JP_FK_MAX)
			kind = native;
	}
	loc.kind = kind;
	return model__location(c->m, &loc);
}

/* one StackFrame value at r; 0 on error */
static jp_id read_frame(struct ctx *c, struct rd *r, __u32 fci)
{
	const struct jclass *k = &c->cls[fci];
	__u64 mkey = 0, tkey = 0, v;
	__s64 line = 0;
	__u32 mci = ~0u, tci = ~0u;

	if (k->prim != P_STRUCT) {
		r->err = -EINVAL;
		return 0;
	}
	for (__u32 i = 0; i < k->nf && !r->err; i++) {
		const struct jfield *f = &c->fld[k->f0 + i];

		if (f->role == R_METHOD && f->cp && !f->array) {
			mkey = rd_long(c, r);
			mci = f->cls;
		} else if (f->role == R_TYPE && f->cp && !f->array) {
			tkey = rd_long(c, r);
			tci = f->cls;
		} else if (f->role == R_LINE && rd_num(c, r, f, &v)) {
			line = (__s64)v;
		} else if (f->role == R_LINE || f->role == R_METHOD || f->role == R_TYPE) {
			;
		} else {
			skip_field(c, r, f, 0);
		}
	}
	if (!r->err && mci == ~0u)
		r->err = -EINVAL; /* a frame of no method */
	if (r->err)
		return 0;
	return frame_loc(c, mci, mkey, line, tci != ~0u ? frame_kind(c, tci, tkey) : JP_FK_NATIVE);
}

/* the model stack of a stack trace key (cached); 0 for none; -1 in *err on failure */
static jp_id stack_of(struct ctx *c, __u32 sci, __u64 key, int *err)
{
	struct cpent *e = cp_get(c, sci, key);
	const struct jclass *k = &c->cls[sci];
	size_t n = 0;
	struct rd r;
	jp_id id;

	if (!e)
		return 0;
	if (e->cache[0])
		return e->cache[0];
	r = (struct rd){c->buf, e->pos, c->c_end, 0};
	for (__u32 i = 0; i < k->nf && !r.err; i++) {
		const struct jfield *f = &c->fld[k->f0 + i];
		__u32 nf;

		if (f->role != R_FRAMES || !f->array || f->cp) {
			skip_field(c, &r, f, 0);
			continue;
		}
		nf = rd_count(c, &r);
		for (__u32 j = 0; j < nf && !r.err; j++) {
			jp_id loc;

			if (n >= JFR_MAX_DEPTH) {
				c->info->cut_stacks++; /* leaf first: the root end goes */
				break;
			}
			loc = read_frame(c, &r, f->cls);
			if (!loc && !r.err) {
				*err = -ENOMEM;
				return 0;
			}
			c->stack_buf[n++] = loc;
		}
		break; /* nothing after the frames is needed */
	}
	if (r.err) {
		*err = r.err == -E2BIG ? bad(c, "stack trace nested over the limits", e->pos)
				       : bad(c, "malformed stack trace", e->pos);
		return 0;
	}
	id = model__stack(c->m, c->stack_buf, n);
	if (!id && n)
		*err = -ENOMEM;
	e->cache[0] = id;
	return id;
}

/* the labels of a thread key (cached on its entry) */
static jp_id labels_of(struct ctx *c, __u32 tci, __u64 key)
{
	struct cpent *e = tci != ~0u ? cp_get(c, tci, key) : NULL;
	struct cpent *ti = c->ti_cls != ~0u ? cp_find(c, TI_TYPE, key) : NULL;
	char os[256] = "", jn[256] = "", comm[256] = "java", cont[256] = "";
	struct jp_labels l = {.pid = c->pid, .comm = comm, .thread = "", .container = cont};
	struct rd r;
	__u64 v;
	jp_id id;

	if (e && e->cache[0])
		return e->cache[0];
	if (e) {
		const struct jclass *k = &c->cls[tci];

		r = (struct rd){c->buf, e->pos, c->c_end, 0};
		for (__u32 i = 0; i < k->nf && !r.err; i++) {
			const struct jfield *f = &c->fld[k->f0 + i];

			if (f->role == R_OS_NAME)
				(void)rd_str_field(c, &r, f, os, sizeof(os), 3);
			else if (f->role == R_JAVA_NAME)
				(void)rd_str_field(c, &r, f, jn, sizeof(jn), 3);
			else if (f->role == R_OS_TID && rd_num(c, &r, f, &v))
				l.tid = v <= 0xffffffffu ? (__u32)v : 0;
			else if (f->role != R_OS_TID)
				skip_field(c, &r, f, 0);
		}
		/* a JVM's own threads (GC, compiler) have only an OS name in a JDK file */
		l.thread = jn[0] || ti || c->jprof ? jn : os;
	}
	if (c->jprof) {
		comm[0] = '\0';
		l.pid = 0;
	}
	if (ti) {
		const struct jclass *k = &c->cls[c->ti_cls];

		r = (struct rd){c->buf, ti->pos, c->c_end, 0};
		for (__u32 i = 0; i < k->nf && !r.err; i++) {
			const struct jfield *f = &c->fld[k->f0 + i];

			if (f->role == R_PID && rd_num(c, &r, f, &v))
				l.pid = v <= 0xffffffffu ? (__u32)v : 0;
			else if (f->role == R_PROCESS)
				(void)rd_str_field(c, &r, f, comm, sizeof(comm), 3);
			else if (f->role == R_CONTAINER)
				(void)rd_str_field(c, &r, f, cont, sizeof(cont), 3);
			else if (f->role == R_CGROUP && rd_num(c, &r, f, &v))
				l.cgroup = v;
			else if (f->role != R_PID && f->role != R_CGROUP)
				skip_field(c, &r, f, 0);
		}
	}
	id = model__labels(c->m, &l);
	if (e)
		e->cache[0] = id;
	return id;
}

/* "10 ms", "20 ms", "1 s", "999 us", "500000 ns" -> ns; 0 otherwise */
static __u64 parse_period(const char *s)
{
	static const struct {
		const char *unit;
		__u64 ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000ull}};
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || v > 1000000000000ull)
		return 0;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			return v * units[i].ns;
	return 0;
}

static __u64 ticks_ns(const struct ctx *c, __u64 ticks)
{
	return (__u64)((unsigned __int128)ticks * 1000000000u / c->tps);
}

/* ---- events ---- */

struct ev {
	__u64 start, duration, thread, stack, cls, weight, alloc_size, tlab_size, calls;
	__u32 thread_ci, stack_ci, cls_ci;
};

/* the fields every sample event has, by role */
static void read_ev(struct ctx *c, struct rd *r, const struct jclass *k, struct ev *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->thread_ci = ev->stack_ci = ev->cls_ci = ~0u;
	for (__u32 i = 0; i < k->nf && !r->err; i++) {
		const struct jfield *f = &c->fld[k->f0 + i];
		__u64 v = 0;

		switch (f->role) {
		case R_START:
		case R_DURATION:
		case R_WEIGHT:
		case R_ALLOC_SIZE:
		case R_TLAB_SIZE:
		case R_CALLS:
		case R_THREAD:
		case R_STACK:
		case R_CLASS:
			if (!rd_num(c, r, f, &v))
				break;
			if (f->role == R_START)
				ev->start = v;
			else if (f->role == R_DURATION)
				ev->duration = v;
			else if (f->role == R_WEIGHT)
				ev->weight = v;
			else if (f->role == R_ALLOC_SIZE)
				ev->alloc_size = v;
			else if (f->role == R_TLAB_SIZE)
				ev->tlab_size = v;
			else if (f->role == R_CALLS)
				ev->calls = v;
			else if (f->cp && f->role == R_THREAD)
				ev->thread = v, ev->thread_ci = f->cls;
			else if (f->cp && f->role == R_STACK)
				ev->stack = v, ev->stack_ci = f->cls;
			else if (f->cp && f->role == R_CLASS)
				ev->cls = v, ev->cls_ci = f->cls;
			break;
		default:
			skip_field(c, r, f, 0);
		}
	}
}

/* the stack of an event with a leaf frame before it ("Class_[a]", "[park]"); 0 and *err */
static jp_id stack_with_leaf(struct ctx *c, const struct ev *ev, const char *fmt, int slot,
			     int *err)
{
	jp_id base = ev->stack_ci != ~0u ? stack_of(c, ev->stack_ci, ev->stack, err) : 0;
	struct cpent *ce = ev->cls_ci != ~0u ? cp_get(c, ev->cls_ci, ev->cls) : NULL;
	const jp_id *locs;
	size_t n = 0;
	jp_id leaf = ce ? ce->cache[slot] : 0, id;

	if (*err)
		return 0;
	if (!leaf) {
		char raw[JFR_MAX_STR], disp[JFR_MAX_STR], name[JFR_MAX_STR + 16];
		struct jp_location loc = {.kind = JP_FK_ROOT};

		if (ev->cls_ci == ~0u ||
		    !resolve_string(c, ev->cls_ci, ev->cls, raw, sizeof(raw), 4))
			snprintf(raw, sizeof(raw), "[unknown class]");
		class_display(raw, disp, sizeof(disp));
		snprintf(name, sizeof(name), fmt, disp);
		loc.func = model__func(c->m, name, "", false);
		leaf = loc.func ? model__location(c->m, &loc) : 0;
		if (!leaf) {
			*err = -ENOMEM;
			return 0;
		}
		if (ce)
			ce->cache[slot] = leaf;
	}
	locs = base ? model__get_stack(c->m, base, &n) : NULL;
	if (n >= JFR_MAX_DEPTH)
		n = JFR_MAX_DEPTH - 1;
	c->stack_buf[0] = leaf;
	if (n)
		memcpy(c->stack_buf + 1, locs, n * sizeof(*locs));
	id = model__stack(c->m, c->stack_buf, n + 1);
	if (!id)
		*err = -ENOMEM;
	return id;
}

/* adds to a row; an event without a stack trace (none recorded, or none in the file) gets one */
static int add(struct ctx *c, jp_id stack, jp_id labels, enum jp_value v, __u64 val)
{
	if (!val)
		return 0;
	if (!stack && !c->no_stack) {
		struct jp_location loc = {.kind = JP_FK_ROOT};
		jp_id id;

		loc.func = model__func(c->m, "[no stack trace]", "", false);
		id = loc.func ? model__location(c->m, &loc) : 0;
		c->no_stack = id ? model__stack(c->m, &id, 1) : 0;
		if (!c->no_stack)
			return -ENOMEM;
	}
	return model__add(c->m, stack ? stack : c->no_stack, labels, v, val);
}

/* a sample event: into the model */
static int sample_event(struct ctx *c, struct rd *r, const struct jclass *k, size_t at)
{
	struct ev ev;
	jp_id stack = 0, labels;
	int err = 0;

	read_ev(c, r, k, &ev);
	if (r->err)
		return r->err == -E2BIG ? bad(c, "event values nested over the limits", at)
					: bad(c, "malformed event", at);
	labels = labels_of(c, ev.thread_ci, ev.thread);
	if (!labels)
		return -ENOMEM;
	switch (k->kind) {
	case E_ALLOC:
	case E_ALLOC_TLAB:
	case E_ALLOC_OUTSIDE:
		stack = stack_with_leaf(c, &ev, "%s_[a]", 0, &err);
		break;
	case E_MONITOR:
		stack = stack_with_leaf(c, &ev, "%s_[l]", 1, &err);
		break;
	case E_PARK:
		ev.cls_ci = ~0u; /* the blocker's class, when known, is no frame of jprof's */
		stack = stack_with_leaf(c, &ev, "[park]", 0, &err);
		break;
	default:
		stack = ev.stack_ci != ~0u ? stack_of(c, ev.stack_ci, ev.stack, &err) : 0;
	}
	if (err)
		return err;
	c->info->events++;
	switch (k->kind) {
	case E_EXEC:
		err = add(c, stack, labels, JP_VAL_CPU_SAMPLES, 1);
		if (!err)
			err = add(c, stack, labels, JP_VAL_CPU_NS, c->period_ns);
		break;
	case E_ALLOC:
	case E_ALLOC_TLAB:
	case E_ALLOC_OUTSIDE:
		err = add(c, stack, labels, JP_VAL_ALLOC_SPACE,
			  k->kind == E_ALLOC			    ? ev.weight
			  : k->kind == E_ALLOC_TLAB && ev.tlab_size ? ev.tlab_size
								    : ev.alloc_size);
		if (!err)
			err = add(c, stack, labels, JP_VAL_ALLOC_OBJECTS, 1);
		break;
	case E_MONITOR:
	case E_PARK:
		err = add(c, stack, labels, JP_VAL_DELAY_NS, ticks_ns(c, ev.duration));
		if (!err)
			err = add(c, stack, labels, JP_VAL_CONTENTIONS, 1);
		break;
	case E_OFFCPU:
		err = add(c, stack, labels, JP_VAL_OFFCPU_NS, ticks_ns(c, ev.duration));
		break;
	case E_SYSCALL:
		err = add(c, stack, labels, JP_VAL_SYSCALL_NS, ticks_ns(c, ev.duration));
		if (!err)
			err = add(c, stack, labels, JP_VAL_SYSCALL_CALLS, ev.calls);
		break;
	default:
		break;
	}
	return err;
}

static const char *intern(struct ctx *c, const char *s)
{
	return s[0] ? model__str(c->m, s) : NULL;
}

/* an event that says how to read the others, or what the recording was */
static int info_event(struct ctx *c, struct rd *r, const struct jclass *k, size_t at, size_t body)
{
	char s[JFR_MAX_STR], name[JFR_MAX_STR] = "", value[JFR_MAX_STR] = "", cause[256] = "";
	struct jfr_read_info *in = c->info;
	__u64 v, thread = 0, id = ~0ull, start = 0, dur = 0, sum = ~0ull, gc_id = 0, pid = 0;
	bool has_thread = false;

	for (__u32 i = 0; i < k->nf && !r->err; i++) {
		const struct jfield *f = &c->fld[k->f0 + i];
		const char **dst = NULL;

		switch (f->role) {
		case R_THREAD:
			if (f->cp)
				has_thread = rd_num(c, r, f, &thread);
			else
				skip_field(c, r, f, 0);
			break;
		case R_START:
		case R_DURATION:
		case R_SUM_PAUSES:
		case R_GC_ID:
		case R_PID:
		case R_ID:
		case R_PERIOD:
		case R_SAMPLES:
		case R_LOST:
			if (!rd_num(c, r, f, &v))
				break;
			if (f->role == R_START)
				start = v;
			else if (f->role == R_DURATION)
				dur = v;
			else if (f->role == R_SUM_PAUSES)
				sum = v;
			else if (f->role == R_GC_ID)
				gc_id = v;
			else if (f->role == R_PID)
				pid = v;
			else if (f->role == R_ID)
				id = v;
			else if (f->role == R_PERIOD && k->kind == E_RECORDING)
				c->period_ns = in->period_ns = v;
			else if (f->role == R_SAMPLES && k->kind == E_RECORDING)
				in->samples = v;
			else if (f->role == R_LOST && k->kind == E_RECORDING)
				in->lost = v;
			break;
		case R_NAME:
			(void)rd_str_field(c, r, f, name, sizeof(name), 4);
			break;
		case R_VALUE:
			(void)rd_str_field(c, r, f, value, sizeof(value), 4);
			break;
		case R_CAUSE:
			(void)rd_str_field(c, r, f, cause, sizeof(cause), 4);
			break;
		case R_TITLE:
		case R_HOST:
		case R_COMMAND:
		case R_EVENTS:
		case R_LOSSES:
			if (!rd_str_field(c, r, f, s, sizeof(s), 4) || k->kind != E_RECORDING)
				break;
			dst = f->role == R_TITLE     ? &in->title
			      : f->role == R_HOST    ? &in->host
			      : f->role == R_COMMAND ? &in->command
			      : f->role == R_EVENTS  ? &in->events_list
						     : &in->losses;
			*dst = intern(c, s);
			if (s[0] && !*dst)
				return -ENOMEM;
			break;
		default:
			skip_field(c, r, f, 0);
		}
	}
	if (r->err)
		return r->err == -E2BIG ? bad(c, "event values nested over the limits", at)
					: bad(c, "malformed event", at);
	switch (k->kind) {
	case E_THREADINFO:
		if (has_thread) {
			int err = cp_add(c, TI_TYPE, thread, body);

			if (err == -E2BIG)
				return bad(c, "more threads than the limit", at);
			if (err)
				return err;
		}
		break;
	case E_SETTING:
		if (c->exec_id != ~0ull && id == c->exec_id && !strcmp(name, "period") &&
		    parse_period(value))
			c->period_ns = in->period_ns = parse_period(value);
		break;
	case E_JVMINFO:
		if (pid && pid <= 0xffffffffu)
			c->pid = in->pid = (__u32)pid;
		break;
	case E_GC:
		if (in->n_gc < JFR_MAX_GC) {
			struct jfr_gc_pause *g;
			__u64 t = start >= c->start_ticks ? ticks_ns(c, start - c->start_ticks) : 0;

			if (in->n_gc == c->gc_cap) {
				size_t nc = c->gc_cap ? c->gc_cap * 2 : 64;

				g = realloc(in->gc, nc * sizeof(*g));
				if (!g)
					return -ENOMEM;
				in->gc = g;
				c->gc_cap = nc;
			}
			g = &in->gc[in->n_gc++];
			t += c->start_ns > c->first_start_ns ? c->start_ns - c->first_start_ns : 0;
			g->start_ns = t;
			g->duration_ns = ticks_ns(c, sum != ~0ull ? sum : dur);
			g->pid = pid && pid <= 0xffffffffu ? (__u32)pid : c->pid;
			g->gc_id = (__u32)gc_id;
			g->name = model__str(c->m, name);
			g->cause = model__str(c->m, cause);
			if (!g->name || !g->cause)
				return -ENOMEM;
		}
		break;
	default:
		break;
	}
	return 0;
}

enum walk { W_CHECKPOINTS, W_INFO, W_SAMPLES };

static bool is_info(enum ckind k)
{
	return k == E_THREADINFO || k == E_RECORDING || k == E_GC || k == E_SETTING ||
	       k == E_JVMINFO;
}

static bool is_sample(enum ckind k)
{
	return k >= E_EXEC && k <= E_SYSCALL;
}

static int walk_events(struct ctx *c, enum walk w)
{
	size_t pos = c->c0 + JFR_HEADER;
	int err = 0;

	while (!err && pos < c->c_end) {
		struct rd r = {c->buf, pos, c->c_end, 0};
		__u64 size = rd_int(c, &r), type;
		size_t hdr = r.pos - pos;
		__u32 ci;

		if (r.err || size <= hdr || size > c->c_end - pos)
			return bad(c, "an event's size runs past its chunk", pos);
		r.end = pos + (size_t)size;
		type = rd_long(c, &r);
		if (r.err)
			return bad(c, "malformed event header", pos);
		if (type == 1 || type == 0) {
			if (type == 1 && w == W_CHECKPOINTS)
				err = read_checkpoint(c, &r, pos);
		} else if (w != W_CHECKPOINTS) {
			ci = class_index(c, type);
			if (ci == ~0u) {
				if (w == W_SAMPLES)
					c->info->skipped++;
			} else if (w == W_INFO && is_info(c->cls[ci].kind)) {
				err = info_event(c, &r, &c->cls[ci], pos, r.pos);
			} else if (w == W_SAMPLES && is_sample(c->cls[ci].kind)) {
				err = sample_event(c, &r, &c->cls[ci], pos);
			} else if (w == W_SAMPLES && !is_info(c->cls[ci].kind)) {
				c->info->skipped++;
			}
		}
		pos += (size_t)size;
	}
	return err;
}

static int read_chunk(struct ctx *c, size_t at, size_t *ret_size)
{
	struct rd r = {c->buf, at, c->len, 0};
	__u64 major, size, cp_off, meta_off, start_ns, dur_ns, end_ns;
	__u32 flags;
	int err;

	if (c->len - at < JFR_HEADER || memcmp(c->buf + at, "FLR", 4))
		return bad(c, at ? "bytes after the last chunk that are no chunk" : "no JFR chunk",
			   at);
	r.pos += 4;
	major = rd_be(&r, 2);
	(void)rd_be(&r, 2); /* minor */
	size = rd_be(&r, 8);
	cp_off = rd_be(&r, 8);
	meta_off = rd_be(&r, 8);
	start_ns = rd_be(&r, 8);
	dur_ns = rd_be(&r, 8);
	c->start_ticks = rd_be(&r, 8);
	c->tps = rd_be(&r, 8);
	flags = (__u32)rd_be(&r, 4);
	if (major != 2)
		return bad(c, "not JFR format 2 (JDK 11 and later, async-profiler, jprof)", at);
	if (size > c->len - at)
		return bad(c, "truncated: the chunk is larger than the file", at);
	if (size < JFR_HEADER || !cp_off || !meta_off)
		return bad(c, "an unfinished chunk (its recording was not stopped)", at);
	if (meta_off < JFR_HEADER || meta_off >= size || cp_off < JFR_HEADER || cp_off >= size ||
	    !c->tps)
		return bad(c, "malformed chunk header", at);
	c->c0 = at;
	c->c_end = at + (size_t)size;
	c->compressed = flags & 1;
	c->start_ns = start_ns;
	end_ns = start_ns + dur_ns >= start_ns ? start_ns + dur_ns : ~0ull;
	if (!c->info->chunks) {
		c->first_start_ns = c->min_start_ns = start_ns;
		c->max_end_ns = end_ns;
	}
	if (start_ns < c->min_start_ns)
		c->min_start_ns = start_ns;
	if (end_ns > c->max_end_ns)
		c->max_end_ns = end_ns;
	c->info->start_unix_ns = c->min_start_ns;
	c->info->duration_ns = c->max_end_ns - c->min_start_ns;
	c->info->chunks++;
	c->ncp = 0;
	if (c->slots)
		memset(c->slots, 0, c->nslots * sizeof(*c->slots));
	c->period_ns = c->info->period_ns;
	err = read_metadata(c, at + (size_t)meta_off);
	if (!err)
		err = walk_events(c, W_CHECKPOINTS);
	if (!err)
		err = walk_events(c, W_INFO);
	if (!err)
		err = walk_events(c, W_SAMPLES);
	if (c->jprof)
		c->info->jprof = true;
	meta_free(c);
	*ret_size = (size_t)size;
	return err;
}

bool jfr_read_is_jfr(const void *buf, size_t len)
{
	/* 3 bytes are no folded line either: say it is a cut JFR file */
	return len >= 3 && !memcmp(buf, "FLR", len < 4 ? len : 4);
}

int model__read_jfr_info(struct model *m, const void *buf, size_t len, struct jfr_read_info *info,
			 char *why, size_t why_len)
{
	struct ctx c = {.m = m, .buf = buf, .len = len, .why = why, .why_len = why_len};
	size_t at = 0, size = 0;
	int err = 0;

	if (why && why_len)
		why[0] = '\0';
	c.info = info ? info : &c.own;
	memset(c.info, 0, sizeof(*c.info));
	c.work = (__u64)len * 16 + (1u << 20);
	c.stack_buf = malloc(JFR_MAX_DEPTH * sizeof(*c.stack_buf));
	if (!c.stack_buf)
		return -ENOMEM;
	do {
		c.jprof = false;
		err = read_chunk(&c, at, &size);
		at += size;
	} while (!err && at < len);
	free(c.stack_buf);
	free(c.cp);
	free(c.slots);
	if (err || !info) {
		free(c.info->gc);
		c.info->gc = NULL;
		c.info->n_gc = 0;
	}
	return err;
}

int model__read_jfr(struct model *m, const void *buf, size_t len, char *why, size_t why_len)
{
	return model__read_jfr_info(m, buf, len, NULL, why, why_len);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jfr_read_meta.c: a JFR chunk's metadata (classes, fields) and constant pools (checkpoints) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_read_int.h"

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
	{"modifiers", R_MODIFIERS},
	{"string", R_STRING},
	{"description", R_DESCRIPTION},
	{"mainClass", R_MAIN},
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

/* ---- constant pools: (type, key) -> the value's offset ---- */

static size_t cp_hash(__u64 type, __u64 key)
{
	__u64 h = (type * 0x9e3779b97f4a7c15ull) ^ key;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 29));
}

struct cpent *jr_cp_find(struct ctx *c, __u64 type, __u64 key)
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
int jr_cp_add(struct ctx *c, __u64 type, __u64 key, size_t pos)
{
	size_t i;

	if (jr_cp_find(c, type, key))
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
struct cpent *jr_cp_get(struct ctx *c, __u32 ci, __u64 key)
{
	struct cpent *e = jr_cp_find(c, c->cls[ci].id, key);

	if (!e && key)
		c->info->unresolved++;
	return e;
}

/*
 * The string a pool entry stands for: a java.lang.String, or a class whose one field (or
 * whose "name") is a string, inline or through another pool (Symbol, Class, FrameType,
 * GCName ...). depth bounds the chain.
 */
bool jr_resolve_string(struct ctx *c, __u32 ci, __u64 key, char *buf, size_t size, int depth)
{
	const struct jclass *k = &c->cls[ci];
	struct cpent *e;
	struct rd r;
	__u32 pick = ~0u;

	buf[0] = '\0';
	if (depth <= 0 || !(e = jr_cp_get(c, ci, key)))
		return false;
	r = (struct rd){c->buf, e->pos, c->c_end, 0};
	if (k->prim == P_STRING)
		return jr_rd_string(c, &r, buf, size, depth - 1);
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
		jr_skip_field(c, &r, &c->fld[k->f0 + i], 0);
	return !r.err && jr_rd_str_field(c, &r, &c->fld[k->f0 + pick], buf, size, depth - 1);
}

/* ---- the metadata ---- */

static const char *mstr(struct ctx *c, struct rd *r)
{
	__u32 i = jr_rd_int(c, r);

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
	nattr = jr_rd_count(c, r);
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
	nchild = jr_rd_count(c, r);
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

__u32 jr_class_index(const struct ctx *c, __u64 id)
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

void jr_meta_free(struct ctx *c)
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

int jr_read_metadata(struct ctx *c, size_t at)
{
	static const char *const prims[] = {
		[P_BOOL] = "boolean", [P_BYTE] = "byte",     [P_CHAR] = "char",
		[P_SHORT] = "short",  [P_INT] = "int",	     [P_LONG] = "long",
		[P_FLOAT] = "float",  [P_DOUBLE] = "double", [P_STRING] = "java.lang.String",
	};
	struct rd r = {c->buf, at, c->c_end, 0};
	__u64 size = jr_rd_int(c, &r);
	__u32 n;
	int err;

	if (r.err || size < 2 || size > c->c_end - at || jr_rd_long(c, &r) != 0)
		return jr_bad(c, "no metadata event where the chunk header says", at);
	r.end = at + (size_t)size;
	(void)jr_rd_long(c, &r); /* start */
	(void)jr_rd_long(c, &r); /* duration */
	(void)jr_rd_long(c, &r); /* metadata id */
	n = jr_rd_count(c, &r);
	if (r.err)
		return jr_bad(c, "malformed metadata", at);
	if (n > JFR_MAX_MSTRS)
		return jr_bad(c, "more metadata strings than the limit", at);
	c->mstrs = calloc(n ? n : 1, sizeof(*c->mstrs));
	if (!c->mstrs)
		return -ENOMEM;
	c->nmstrs = n;
	for (__u32 i = 0; i < n && !r.err; i++) {
		char tmp[JFR_MAX_STR];

		if (jr_rd_string(c, &r, tmp, sizeof(tmp), 0) && !(c->mstrs[i] = strdup(tmp)))
			return -ENOMEM;
	}
	if (r.err)
		return jr_bad(c, "malformed metadata string", r.pos);
	err = meta_element(c, &r, 0, ~0u);
	if (err == -E2BIG)
		return jr_bad(c, "metadata over the size limits", at);
	if (err || r.err)
		return jr_bad(c, "malformed metadata element tree", r.pos);
	if (c->ncls)
		qsort(c->cls, c->ncls, sizeof(*c->cls), cmp_cls);
	c->exec_id = ~0ull;
	c->ti_cls = c->string_cls = ~0u;
	for (size_t i = 0; i < c->ncls; i++) {
		struct jclass *k = &c->cls[i];

		if (i && k->id == c->cls[i - 1].id)
			return jr_bad(c, "two classes of one id in the metadata", at);
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

		f->cls = jr_class_index(c, f->type);
		if (f->cls == ~0u)
			return jr_bad(c, "a field of a class the metadata does not describe", at);
		for (size_t q = 0; q < sizeof(roles) / sizeof(roles[0]); q++)
			if (!strcmp(f->name, roles[q].name))
				f->role = roles[q].role;
	}
	return 0;
}

/* ---- checkpoints ---- */

int jr_read_checkpoint(struct ctx *c, struct rd *r, size_t at)
{
	__u32 npools;

	(void)jr_rd_long(c, r); /* start */
	(void)jr_rd_long(c, r); /* duration */
	(void)jr_rd_long(c, r); /* delta to the previous checkpoint: every event is walked anyway */
	(void)jr_rd_u8(r);	/* its kind (flush, chunk header, statics, thread) */
	npools = jr_rd_count(c, r);
	for (__u32 i = 0; i < npools && !r->err; i++) {
		__u32 ci = jr_class_index(c, jr_rd_long(c, r)), n;

		if (r->err)
			break;
		if (ci == ~0u)
			return jr_bad(c, "a constant pool of a type the metadata does not describe",
				      at);
		n = jr_rd_count(c, r);
		for (__u32 k = 0; k < n && !r->err; k++) {
			__u64 key = jr_rd_long(c, r);
			size_t pos = r->pos;
			int err;

			jr_skip_class(c, r, ci, 0);
			if (r->err)
				break;
			err = jr_cp_add(c, c->cls[ci].id, key, pos);
			if (err == -E2BIG)
				return jr_bad(c, "more constant pool entries than the limit", at);
			if (err)
				return err;
		}
	}
	if (r->err == -E2BIG)
		return jr_bad(c, "values nested deeper or more often than the limits", at);
	return r->err ? jr_bad(c, "malformed constant pool", r->pos) : 0;
}

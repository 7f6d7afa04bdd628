// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* otlp.c: a profile as an OTLP ExportProfilesServiceRequest (v1development), encoded by hand. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otlp.h"
#include "model/pprof_read.h"
#include "util/strindex.h"
#include "util/pbwrite.h"
#include "util/why.h"

/* field numbers of third_party/opentelemetry-proto's messages */
enum {
	REQ_RESOURCE_PROFILES = 1,
	REQ_DICTIONARY = 2,
	RP_RESOURCE = 1,
	RP_SCOPE_PROFILES = 2,
	RES_ATTRIBUTES = 1,
	KV_KEY = 1,
	KV_VALUE = 2,
	ANY_STRING = 1,
	ANY_INT = 3,
	SP_SCOPE = 1,
	SP_PROFILES = 2,
	SCOPE_NAME = 1,
	PROF_SAMPLE_TYPE = 1,
	PROF_SAMPLES = 2,
	PROF_TIME_UNIX_NANO = 3,
	PROF_DURATION_NANO = 4,
	PROF_PERIOD_TYPE = 5,
	PROF_PERIOD = 6,
	PROF_PROFILE_ID = 7,
	VT_TYPE = 1,
	VT_UNIT = 2,
	SAMPLE_STACK = 1,
	SAMPLE_ATTRS = 2,
	SAMPLE_VALUES = 4,
	DICT_MAPPINGS = 1,
	DICT_LOCATIONS = 2,
	DICT_FUNCTIONS = 3,
	DICT_LINKS = 4,
	DICT_STRINGS = 5,
	DICT_ATTRIBUTES = 6,
	DICT_STACKS = 7,
	MAP_START = 1,
	MAP_LIMIT = 2,
	MAP_OFFSET = 3,
	MAP_FILENAME = 4,
	LOC_MAPPING = 1,
	LOC_ADDRESS = 2,
	LOC_LINES = 3,
	LINE_FUNCTION = 1,
	LINE_LINE = 2,
	FUNC_NAME = 1,
	FUNC_SYSTEM_NAME = 2,
	FUNC_FILENAME = 3,
	LINK_TRACE_ID = 1,
	LINK_SPAN_ID = 2,
	KVU_KEY = 1,
	KVU_VALUE = 2,
	STACK_LOCATIONS = 1,
};

#define LABEL_ATTRS 7 /* attributes a label set gives at most */

struct enc {
	const struct model *m;
	struct strindex st;    /* the dictionary's string_table */
	struct strindex attrs; /* attribute i + 1 by "KIND\x1fkey\x1fvalue" */
	struct bytebuf atab;   /* the attribute_table's entries after the zero one */
	__u32 (*label_attrs)[LABEL_ATTRS +
			     1]; /* a label set's attribute indices, [0] their count */
	unsigned char *label_done;
	char *dotted;
	int err;
};

static __u64 S(struct enc *e, const char *s)
{
	return strindex_str(&e->st, s, &e->err);
}

/* a Java name in internal form (java/lang/Thread.run) dotted, as pprof -dotted renders it */
static const char *func_name(struct enc *e, const struct jp_func *f)
{
	if (!f->java)
		return f->name;
	free(e->dotted);
	e->dotted = strdup(f->name);
	if (!e->dotted) {
		e->err = -ENOMEM;
		return "";
	}
	for (char *p = e->dotted; *p; p++)
		if (*p == '/')
			*p = '.';
	return e->dotted;
}

static const char *kind_name(enum jp_frame_kind k)
{
	static const char *const names[JP_FK_MAX] = {
		[JP_FK_NATIVE] = "native",
		[JP_FK_KERNEL] = "kernel",
		[JP_FK_JVM] = "jvm",
		[JP_FK_JIT] = "java-jit",
		[JP_FK_INLINED] = "java-inlined",
		[JP_FK_INTERP] = "java-interpreted",
		[JP_FK_ROOT] = "marker",
	};

	return k < JP_FK_MAX && names[k] ? names[k] : "native";
}

/* the attribute key=value (an int when num), its index in attribute_table (0: failed) */
static __u32 attr(struct enc *e, const char *key, const char *str, __u64 num, bool is_num)
{
	char id[512];
	struct bytebuf kv = {0}, any = {0};
	int n;
	long i;

	n = is_num ? snprintf(id, sizeof(id), "i\x1f%s\x1f%llu", key, (unsigned long long)num)
		   : snprintf(id, sizeof(id), "s\x1f%s\x1f%s", key, str);
	if (n < 0 || (size_t)n >= sizeof(id))
		n = sizeof(id) - 1; /* a name cut at 500 bytes: still one entry per distinct cut */
	i = strindex_get(&e->attrs, id, (size_t)n);
	if (i < 0) {
		e->err = -ENOMEM;
		return 0;
	}
	if ((size_t)i + 1 == e->attrs.n) { /* new: its entry in the table */
		pb_u64(&kv, KVU_KEY, S(e, key));
		if (is_num) {
			pb_key(&any, ANY_INT,
			       WT_VARINT); /* written even when 0: pid 0 is a value */
			pb_varint(&any, num);
		} else {
			pb_bytes(&any, ANY_STRING, str, strlen(str));
		}
		pb_msg(&kv, KVU_VALUE, &any);
		pb_msg(&e->atab, DICT_ATTRIBUTES, &kv);
		bytebuf_free(&kv);
		bytebuf_free(&any);
	}
	return (__u32)i + 1;
}

/* label set id's attributes, found once per set */
static const __u32 *label_attrs(struct enc *e, jp_id id)
{
	const struct jp_labels *l = model__get_labels(e->m, id);
	__u32 *a = e->label_attrs[id];

	if (e->label_done[id] || !l)
		return a;
	e->label_done[id] = 1;
#define ADD(k, s, num, is_num) (a[++a[0]] = attr(e, k, s, num, is_num))
	if (l->nfolded) { /* exited programs added up: no pid, no thread */
		ADD("jprof.exited_processes", NULL, l->nfolded, true);
	} else {
		ADD("process.pid", NULL, l->pid, true);
		ADD("thread.id", NULL, l->tid, true);
	}
	if (l->comm && l->comm[0])
		ADD("process.executable.name", l->comm, 0, false);
	if (l->thread && l->thread[0])
		ADD("thread.name", l->thread, 0, false);
	if (l->main && l->main[0])
		ADD("jprof.main", l->main, 0, false);
	if (l->container && l->container[0])
		ADD("container.id", l->container, 0, false);
#undef ADD
	return a;
}

static void value_type(struct enc *e, struct bytebuf *b, int field, const char *type,
		       const char *unit)
{
	struct bytebuf vt = {0};

	pb_u64(&vt, VT_TYPE, S(e, type));
	pb_u64(&vt, VT_UNIT, S(e, unit));
	pb_msg(b, field, &vt);
	bytebuf_free(&vt);
}

/* FNV-1a, for a profile id that is the same each time the same segment is sent */
static __u64 fnv(__u64 h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

/* one Profile: column v's samples */
static void profile(struct enc *e, const struct otlp_meta *meta, enum jp_value v,
		    struct bytebuf *out)
{
	struct bytebuf p = {0}, s = {0}, packed = {0};
	unsigned char pid[16];
	__u64 h = 0xcbf29ce484222325ull;

	value_type(e, &p, PROF_SAMPLE_TYPE, jp_value_type(v), jp_value_unit(v));
	for (size_t i = 0; i < model__rows(e->m) && !e->err; i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(e->m, i, &rb);
		const __u32 *a;

		if (!r->values[v])
			continue;
		a = label_attrs(e, r->labels);
		pb_u64(&s, SAMPLE_STACK, r->stack);
		for (__u32 k = 1; k <= a[0]; k++)
			if (a[k])
				pb_varint(&packed, a[k]);
		if (packed.n)
			pb_msg(&s, SAMPLE_ATTRS, &packed);
		pb_varint(&packed, r->values[v]);
		pb_msg(&s, SAMPLE_VALUES, &packed);
		pb_msg(&p, PROF_SAMPLES, &s);
	}
	pb_fixed64(&p, PROF_TIME_UNIX_NANO, meta->time_ns);
	pb_u64(&p, PROF_DURATION_NANO, meta->duration_ns);
	if (meta->period_ns) {
		value_type(e, &p, PROF_PERIOD_TYPE, "cpu", "nanoseconds");
		pb_u64(&p, PROF_PERIOD, meta->period_ns);
	}
	h = fnv(h, meta->host ? meta->host : "", meta->host ? strlen(meta->host) : 0);
	h = fnv(h, &meta->time_ns, sizeof(meta->time_ns));
	h = fnv(h, &meta->duration_ns, sizeof(meta->duration_ns));
	for (int i = 0; i < 8; i++)
		pid[i] = (unsigned char)(h >> (8 * i));
	h = fnv(h, &v, sizeof(v));
	for (int i = 0; i < 8; i++)
		pid[8 + i] = (unsigned char)(h >> (8 * i));
	pb_bytes(&p, PROF_PROFILE_ID, pid, sizeof(pid));
	pb_msg(out, SP_PROFILES, &p);
	bytebuf_free(&p);
	bytebuf_free(&s);
	bytebuf_free(&packed);
}

static void resource_profiles(struct enc *e, const struct otlp_meta *meta, struct bytebuf *out)
{
	struct bytebuf rp = {0}, res = {0}, kv = {0}, any = {0}, sp = {0}, scope = {0};
	int ncols = 0;

	if (meta->host) {
		pb_bytes(&kv, KV_KEY, "host.name", strlen("host.name"));
		pb_bytes(&any, ANY_STRING, meta->host, strlen(meta->host));
		pb_msg(&kv, KV_VALUE, &any);
		pb_msg(&res, RES_ATTRIBUTES, &kv);
	}
	pb_msg(&rp, RP_RESOURCE, &res);
	pb_bytes(&scope, SCOPE_NAME, "jprof", 5);
	pb_msg(&sp, SP_SCOPE, &scope);
	for (int v = 0; v < JP_VAL_MAX; v++)
		if (model__total(e->m, v)) {
			profile(e, meta, v, &sp);
			ncols++;
		}
	if (!ncols) /* nothing recorded: an empty CPU profile still says the interval */
		profile(e, meta, JP_VAL_CPU_SAMPLES, &sp);
	pb_msg(&rp, RP_SCOPE_PROFILES, &sp);
	pb_msg(out, REQ_RESOURCE_PROFILES, &rp);
	bytebuf_free(&rp);
	bytebuf_free(&res);
	bytebuf_free(&kv);
	bytebuf_free(&any);
	bytebuf_free(&sp);
	bytebuf_free(&scope);
}

/* one Function per (model function, kind), as out/pprof.c: system_name carries the kind */
static void dictionary(struct enc *e, struct bytebuf *out)
{
	struct bytebuf d = {0}, sub = {0}, sub2 = {0}, ftab = {0};
	static const unsigned char zero[16];
	struct model_counts c;
	__u32 *fidx, nf = 0;

	model__counts(e->m, &c);
	fidx = calloc((c.funcs + 1) * JP_FK_MAX, sizeof(*fidx));
	if (!fidx) {
		e->err = -ENOMEM;
		return;
	}
	pb_msg(&d, DICT_MAPPINGS, &sub); /* entry 0 of each table: the zero value */
	for (jp_id id = 1; id <= c.mappings; id++) {
		const struct jp_mapping *mp = model__get_mapping(e->m, id);

		pb_u64(&sub, MAP_START, mp->start);
		pb_u64(&sub, MAP_LIMIT, mp->limit);
		pb_u64(&sub, MAP_OFFSET, mp->offset);
		pb_u64(&sub, MAP_FILENAME, S(e, mp->file));
		pb_msg(&d, DICT_MAPPINGS, &sub);
	}
	pb_msg(&d, DICT_LOCATIONS, &sub);
	pb_msg(&ftab, DICT_FUNCTIONS, &sub);
	for (jp_id id = 1; id <= c.locations && !e->err; id++) {
		const struct jp_location *loc = model__get_location(e->m, id);
		const struct jp_func *f = model__get_func(e->m, loc->func);
		size_t k = (size_t)loc->func * JP_FK_MAX + (loc->kind < JP_FK_MAX ? loc->kind : 0);

		if (f && !fidx[k]) {
			fidx[k] = ++nf;
			pb_u64(&sub, FUNC_NAME, S(e, func_name(e, f)));
			pb_u64(&sub, FUNC_SYSTEM_NAME, S(e, kind_name(loc->kind)));
			pb_u64(&sub, FUNC_FILENAME, S(e, f->file));
			pb_msg(&ftab, DICT_FUNCTIONS, &sub);
		}
		pb_u64(&sub, LOC_MAPPING, loc->mapping);
		pb_u64(&sub, LOC_ADDRESS, loc->addr);
		pb_u64(&sub2, LINE_FUNCTION, f ? fidx[k] : 0);
		pb_u64(&sub2, LINE_LINE, loc->line > 0 ? (__u64)loc->line : 0);
		pb_msg(&sub, LOC_LINES, &sub2);
		pb_msg(&d, DICT_LOCATIONS, &sub);
	}
	bytebuf_add(&d, ftab.p, ftab.n);
	if (ftab.err)
		d.err = ftab.err;
	/* link 0: the zero link, with ids of their full lengths (as the schema advises) */
	pb_bytes(&sub, LINK_TRACE_ID, zero, 16);
	pb_bytes(&sub, LINK_SPAN_ID, zero, 8);
	pb_msg(&d, DICT_LINKS, &sub);
	pb_msg(&d, DICT_ATTRIBUTES, &sub);
	bytebuf_add(&d, e->atab.p, e->atab.n);
	if (e->atab.err)
		d.err = e->atab.err;
	pb_msg(&d, DICT_STACKS, &sub);
	for (jp_id id = 1; id <= c.stacks; id++) {
		size_t n;
		const jp_id *locs = model__get_stack(e->m, id, &n);

		for (size_t k = 0; k < n; k++) /* leaf first, as both schemas have it */
			pb_varint(&sub2, locs[k]);
		if (sub2.n)
			pb_msg(&sub, STACK_LOCATIONS, &sub2);
		pb_msg(&d, DICT_STACKS, &sub);
	}
	/* the string table last: every index above is known by now */
	for (size_t i = 0; i < e->st.n; i++)
		pb_bytes(&d, DICT_STRINGS, e->st.strs[i], strlen(e->st.strs[i]));
	if (sub.err || sub2.err)
		d.err = -ENOMEM;
	pb_msg(out, REQ_DICTIONARY, &d);
	free(fidx);
	bytebuf_free(&d);
	bytebuf_free(&sub);
	bytebuf_free(&sub2);
	bytebuf_free(&ftab);
}

int otlp_encode(const struct model *m, const struct otlp_meta *meta, struct bytebuf *out)
{
	struct enc e = {.m = m};
	struct model_counts c;
	int err;

	model__counts(m, &c);
	e.label_attrs = calloc(c.labels + 1, sizeof(*e.label_attrs));
	e.label_done = calloc(c.labels + 1, 1);
	if (!e.label_attrs || !e.label_done) {
		err = -ENOMEM;
		goto out_free;
	}
	S(&e, ""); /* string 0 is "" */
	resource_profiles(&e, meta, out);
	dictionary(&e, out);
	err = e.err ? e.err : e.atab.err ? e.atab.err : out->err;
out_free:
	free(e.label_attrs);
	free(e.label_done);
	free(e.dotted);
	bytebuf_free(&e.atab);
	strindex_free(&e.st);
	strindex_free(&e.attrs);
	return err;
}

int otlp_from_pprof(const void *pprof, size_t len, const char *host, struct bytebuf *out, char *why,
		    size_t why_len)
{
	struct pprof_read_info info = {0};
	struct model *m = model__new();
	int err;

	if (!m)
		return set_why(why, why_len, -ENOMEM, "out of memory");
	err = model__read_pprof_info(m, pprof, len, &info, why, why_len);
	if (!err) {
		struct otlp_meta meta = {
			.host = host,
			.time_ns = info.time_ns,
			.duration_ns = info.duration_ns,
			.period_ns = info.period,
		};

		err = otlp_encode(m, &meta, out);
		if (err)
			set_why(why, why_len, err, "%s", strerror(-err));
	}
	model__free(m);
	return err;
}

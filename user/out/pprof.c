// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof.c: the model as a gzip'ed profile.proto (github.com/google/pprof). Encoded by hand:
 * the format is a handful of messages of varints and length-delimited fields, and writing it
 * directly from the model's tables costs less code than mapping them onto generated structs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof.h"
#include "../util/bytebuf.h"
#include "../util/strindex.h"
#include "util/pbwrite.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	LABEL_NUM_UNIT = 4,
	MAPPING_ID = 1,
	MAPPING_START = 2,
	MAPPING_LIMIT = 3,
	MAPPING_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
};

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

struct enc {
	const struct model *m;
	const struct pprof_opts *o;
	struct strindex st;
	struct bytebuf out, sub, sub2;
	int err;
};

static __u64 S(struct enc *e, const char *s)
{
	return strindex_str(&e->st, s, &e->err);
}

static void value_type(struct enc *e, int field, const char *type, const char *unit)
{
	pb_u64(&e->sub, VALUE_TYPE_TYPE, S(e, type));
	pb_u64(&e->sub, VALUE_TYPE_UNIT, S(e, unit));
	pb_msg(&e->out, field, &e->sub);
}

static void label_str(struct enc *e, const char *key, const char *val)
{
	pb_u64(&e->sub2, LABEL_KEY, S(e, key));
	pb_u64(&e->sub2, LABEL_STR, S(e, val));
	pb_msg(&e->sub, SAMPLE_LABEL, &e->sub2);
}

static void label_num(struct enc *e, const char *key, __u64 val)
{
	pb_u64(&e->sub2, LABEL_KEY, S(e, key));
	pb_u64(&e->sub2, LABEL_NUM, val);
	pb_msg(&e->sub, SAMPLE_LABEL, &e->sub2);
}

/* one Sample: the row's stack and labels, values vals, at time_ms (past the start) unless untimed */
static void sample(struct enc *e, const struct jp_sample_row *r, const __u64 *vals, const int *cols,
		   int ncols, bool timed, __u64 time_ms)
{
	const struct jp_labels *l = model__get_labels(e->m, r->labels);
	const jp_id *locs;
	size_t n;
	bool any = false;

	for (int c = 0; c < ncols; c++)
		any |= vals[cols[c]] != 0;
	if (!any)
		return;
	locs = model__get_stack(e->m, r->stack, &n);
	/* packed repeated fields: location ids (leaf first, as pprof wants), values */
	for (size_t k = 0; k < n; k++)
		pb_varint(&e->sub2, locs[k]);
	pb_msg(&e->sub, SAMPLE_LOCATION_ID, &e->sub2);
	for (int c = 0; c < ncols; c++)
		pb_varint(&e->sub2, vals[cols[c]]);
	pb_msg(&e->sub, SAMPLE_VALUE, &e->sub2);
	if (timed) { /* -tagfocus=time_ms=1000:2000 keeps the second second */
		pb_u64(&e->sub2, LABEL_KEY, S(e, "time_ms"));
		pb_key(&e->sub2, LABEL_NUM, WT_VARINT);
		pb_varint(&e->sub2, time_ms); /* 0 too: it is a time */
		pb_u64(&e->sub2, LABEL_NUM_UNIT, S(e, "ms"));
		pb_msg(&e->sub, SAMPLE_LABEL, &e->sub2);
	}
	if (l) {
		label_num(e, "pid", l->pid);
		label_num(e, "tid", l->tid);
		if (l->nfolded) /* pid 0: this many exited processes of comm, added up */
			label_num(e, "exited_processes", l->nfolded);
		label_str(e, "comm", l->comm);
		if (l->main[0])
			label_str(e, "main", l->main);
		if (l->thread[0])
			label_str(e, "thread", l->thread);
		if (l->container[0])
			label_str(e, "container", l->container);
	}
	pb_msg(&e->out, PROFILE_SAMPLE, &e->sub);
}

/*
 * A row as one Sample per time slot it has (label time_ms: the slot's start, ms past the
 * profile's time_nanos), then one without a time for what of it is untimed; the values add
 * up to the row's. base_ns: time_nanos.
 */
static void samples(struct enc *e, const int *cols, int ncols, __u64 base_ns)
{
	struct model_time ti;

	model__time_info(e->m, &ti);
	for (size_t i = 0; i < model__rows(e->m); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(e->m, i, &rb);
		__u64 left[JP_VAL_MAX], acc[JP_VAL_MAX];
		struct jp_time_ent eb;
		__u32 slot = 0;
		bool have = false;

		memcpy(left, r->values, sizeof(left));
		/* consecutive entries of one slot (rows a fold merged) as one Sample */
		for (size_t k = model__time_first(e->m, i);; k = model__time_next(e->m, k)) {
			const struct jp_time_ent *t = k ? model__time(e->m, k - 1, &eb) : NULL;

			if (have && (!t || t->slot != slot)) {
				__u64 wall =
					ti.start_unix_ns + (__u64)slot * ti.res_ms * 1000000ull;

				sample(e, r, acc, cols, ncols, true,
				       wall > base_ns ? (wall - base_ns) / 1000000ull : 0);
				have = false;
			}
			if (!t)
				break;
			if (!have)
				memset(acc, 0, sizeof(acc));
			for (int v = 0; v < JP_VAL_MAX; v++) {
				__u64 x = t->values[v] < left[v] ? t->values[v] : left[v];

				acc[v] += x;
				left[v] -= x;
			}
			slot = t->slot;
			have = true;
		}
		sample(e, r, left, cols, ncols, false, 0);
	}
}

static void mappings(struct enc *e)
{
	struct model_counts c;

	model__counts(e->m, &c);
	for (jp_id id = 1; id <= c.mappings; id++) {
		const struct jp_mapping *mp = model__get_mapping(e->m, id);

		pb_u64(&e->sub, MAPPING_ID, id);
		pb_u64(&e->sub, MAPPING_START, mp->start);
		pb_u64(&e->sub, MAPPING_LIMIT, mp->limit);
		pb_u64(&e->sub, MAPPING_OFFSET, mp->offset);
		pb_u64(&e->sub, MAPPING_FILENAME, S(e, mp->file));
		pb_u64(&e->sub, MAPPING_BUILD_ID, S(e, mp->build_id));
		pb_u64(&e->sub, MAPPING_HAS_FUNCTIONS, 1); /* symbolized already */
		pb_msg(&e->out, PROFILE_MAPPING, &e->sub);
	}
}

/* one pprof Function per (model function, kind): pprof has no frame kind, system_name carries it */
static __u64 func_id(jp_id func, enum jp_frame_kind kind)
{
	return (__u64)func * JP_FK_MAX + (__u64)kind;
}

static void locations_and_functions(struct enc *e)
{
	struct model_counts c;
	unsigned char *seen;
	char *dotted = NULL;

	model__counts(e->m, &c);
	seen = calloc((c.funcs + 1) * JP_FK_MAX, 1);
	if (!seen) {
		e->err = -ENOMEM;
		return;
	}
	for (jp_id id = 1; id <= c.locations && !e->err; id++) {
		const struct jp_location *loc = model__get_location(e->m, id);
		const struct jp_func *f = model__get_func(e->m, loc->func);
		__u64 fid = func_id(loc->func, loc->kind);

		pb_u64(&e->sub, LOCATION_ID, id);
		pb_u64(&e->sub, LOCATION_MAPPING_ID, loc->mapping);
		pb_u64(&e->sub, LOCATION_ADDRESS, loc->addr);
		pb_u64(&e->sub2, LINE_FUNCTION_ID, fid);
		pb_u64(&e->sub2, LINE_LINE, loc->line > 0 ? (__u64)loc->line : 0);
		pb_msg(&e->sub, LOCATION_LINE, &e->sub2);
		pb_msg(&e->out, PROFILE_LOCATION, &e->sub);
		if (!f || seen[fid])
			continue;
		seen[fid] = 1;
		const char *name = f->name;
		if (f->java && e->o->dotted) {
			free(dotted);
			dotted = strdup(f->name);
			if (!dotted) {
				e->err = -ENOMEM;
				break;
			}
			for (char *p = dotted; *p; p++)
				if (*p == '/')
					*p = '.';
			name = dotted;
		}
		pb_u64(&e->sub, FUNCTION_ID, fid);
		pb_u64(&e->sub, FUNCTION_NAME, S(e, name));
		pb_u64(&e->sub, FUNCTION_SYSTEM_NAME, S(e, kind_name(loc->kind)));
		pb_u64(&e->sub, FUNCTION_FILENAME, S(e, f->file));
		pb_msg(&e->out, PROFILE_FUNCTION, &e->sub);
	}
	free(dotted);
	free(seen);
}

static int gzip_write(const unsigned char *p, size_t n, FILE *f)
{
	unsigned char buf[65536];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16 /* gzip wrapper */, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)p;
	z.avail_in = 0;
	do {
		size_t chunk = n > (1u << 30) ? (1u << 30) : n;

		z.avail_in = (uInt)chunk;
		n -= chunk;
		do {
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			zr = deflate(&z, n ? Z_NO_FLUSH : Z_FINISH);
			if (zr == Z_STREAM_ERROR) {
				deflateEnd(&z);
				return -EIO;
			}
			if (fwrite(buf, 1, sizeof(buf) - z.avail_out, f) !=
			    sizeof(buf) - z.avail_out) {
				deflateEnd(&z);
				return -errno ? -errno : -EIO;
			}
		} while (z.avail_out == 0);
	} while (n);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

int out_pprof_write(const struct model *m, const struct pprof_opts *o, FILE *f)
{
	struct enc e = {.m = m, .o = o};
	int cols[JP_VAL_MAX], ncols = 0, err;
	struct model_time ti;
	__u64 base_ns;
	char res[64];

	S(&e, ""); /* string 0 is always "" */
	for (int v = 0; v < JP_VAL_MAX; v++)
		if (o->values & (1u << v))
			cols[ncols++] = v;
	if (!ncols)
		cols[ncols++] = JP_VAL_CPU_SAMPLES;
	for (int c = 0; c < ncols; c++)
		value_type(&e, PROFILE_SAMPLE_TYPE, jp_value_type(cols[c]), jp_value_unit(cols[c]));
	model__time_info(m, &ti);
	/* timed: time_nanos is the start of the model's slot 0, so every time_ms is a whole slot */
	base_ns = ti.has_clock && ti.entries ? ti.start_unix_ns : o->time_ns;
	samples(&e, cols, ncols, base_ns);
	mappings(&e);
	locations_and_functions(&e);
	pb_u64(&e.out, PROFILE_TIME_NANOS, base_ns);
	pb_u64(&e.out, PROFILE_DURATION_NANOS, o->duration_ns);
	if (o->period_ns) {
		value_type(&e, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
		pb_u64(&e.out, PROFILE_PERIOD, o->period_ns);
	}
	if (o->comment)
		pb_u64(&e.out, PROFILE_COMMENT, S(&e, o->comment));
	if (ti.has_clock && ti.entries) { /* the time_ms labels' resolution, for jprof report */
		snprintf(res, sizeof(res), "jprof:time_res_ms=%u", ti.res_ms);
		pb_u64(&e.out, PROFILE_COMMENT, S(&e, res));
	}
	for (size_t i = 0; i < o->nnotes; i++)
		pb_u64(&e.out, PROFILE_COMMENT, S(&e, o->notes[i]));
	/* CPU time where the samples carry it, as Go's CPU profiles are shown; else the first */
	pb_u64(&e.out, PROFILE_DEFAULT_SAMPLE_TYPE,
	       S(&e, jp_value_type(o->values & (1u << JP_VAL_CPU_NS) ? JP_VAL_CPU_NS : cols[0])));
	/* the string table last: every index above is known by now */
	for (size_t i = 0; i < e.st.n; i++)
		pb_bytes(&e.out, PROFILE_STRING_TABLE, e.st.strs[i], strlen(e.st.strs[i]));
	err = e.err ? e.err : e.out.err ? e.out.err : e.sub.err ? e.sub.err : e.sub2.err;
	if (!err)
		err = gzip_write(e.out.p, e.out.n, f);
	bytebuf_free(&e.out);
	bytebuf_free(&e.sub);
	bytebuf_free(&e.sub2);
	strindex_free(&e.st);
	return err;
}

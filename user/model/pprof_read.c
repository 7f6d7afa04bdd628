// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof_read.c: a saved profile (pprof's profile.proto, gzip'ed or not) back into the model,
 * for `jprof report`. The file may come from anywhere: every length, index and id is checked,
 * sizes are capped, and a malformed file is refused with one reason, never half-trusted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof_read.h"

/*
 * Budgets: the file may come from another user (report is often run as root), so what it makes
 * us hold is bounded by these, whatever its size after decompression. Crossing one refuses the
 * file with a reason naming the budget and its limit. Fuzz builds lower them so that small
 * inputs reach them.
 */
#ifndef JP_FUZZ_BUDGETS
#define PPROF_MAX_RAW	    (256ull << 20) /* decompressed bytes */
#define PPROF_MAX_STRS	    (2u << 20)	   /* string table entries */
#define PPROF_MAX_SAMPLES   (4u << 20)
#define PPROF_MAX_LOCS	    (2u << 20)
#define PPROF_MAX_FUNCS	    (2u << 20)
#define PPROF_MAX_MAPS	    (64u << 10)
#define PPROF_MAX_TYPES	    64
#define PPROF_MAX_ALL_LINES (4u << 20) /* lines of all locations */
#else
#define PPROF_MAX_RAW	    (1ull << 20)
#define PPROF_MAX_STRS	    4096
#define PPROF_MAX_SAMPLES   4096
#define PPROF_MAX_LOCS	    4096
#define PPROF_MAX_FUNCS	    4096
#define PPROF_MAX_MAPS	    256
#define PPROF_MAX_TYPES	    64
#define PPROF_MAX_ALL_LINES 4096
#endif
#define PPROF_MAX_LINES 64   /* inline frames in one pprof location */
#define PPROF_MAX_DEPTH 8192 /* frames in one sample */

struct span {
	const unsigned char *p;
	size_t n;
};

struct rd {
	const unsigned char *p, *end;
	int err;
};

static __u64 rd_varint(struct rd *r)
{
	__u64 v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		unsigned char b;

		if (r->p >= r->end) {
			r->err = -EINVAL;
			return 0;
		}
		b = *r->p++;
		v |= (__u64)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->err = -EINVAL;
	return 0;
}

/* next field: 0 at the end or on error; *val for varints, *sp for length-delimited */
static int rd_field(struct rd *r, int *wt, __u64 *val, struct span *sp)
{
	__u64 key, len;

	if (r->err || r->p >= r->end)
		return 0;
	key = rd_varint(r);
	*wt = (int)(key & 7);
	switch (*wt) {
	case 0:
		*val = rd_varint(r);
		break;
	case 1:
		if (r->end - r->p < 8)
			r->err = -EINVAL;
		else
			r->p += 8;
		break;
	case 5:
		if (r->end - r->p < 4)
			r->err = -EINVAL;
		else
			r->p += 4;
		break;
	case 2:
		len = rd_varint(r);
		if (!r->err && len > (__u64)(r->end - r->p))
			r->err = -EINVAL;
		if (!r->err) {
			sp->p = r->p;
			sp->n = (size_t)len;
			r->p += len;
		}
		break;
	default:
		r->err = -EINVAL;
	}
	if (r->err || key >> 3 == 0 || key >> 3 > 0x1fffffff)
		return r->err = -EINVAL, 0;
	return (int)(key >> 3);
}

/* repeated uint64, packed (wire type 2) or not (0); appends to *v */
static int add_u64s(__u64 **v, size_t *n, size_t *cap, int wt, __u64 val, const struct span *sp,
		    size_t max)
{
	struct rd r = {sp ? sp->p : NULL, sp ? sp->p + sp->n : NULL, 0};

	for (;;) {
		__u64 x;

		if (wt == 0) {
			x = val;
		} else {
			if (r.p >= r.end)
				break;
			x = rd_varint(&r);
			if (r.err)
				return r.err;
		}
		if (*n >= max)
			return -E2BIG;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			__u64 *nv = realloc(*v, nc * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			*v = nv;
			*cap = nc;
		}
		(*v)[(*n)++] = x;
		if (wt == 0)
			break;
	}
	return 0;
}

struct pfunc {
	__u64 id, name, sys, file;
};
struct pmap {
	__u64 id, start, limit, offset, file, build_id;
};
struct pline {
	__u64 func, line;
};
struct ploc {
	__u64 id, mapping, addr;
	size_t line0, nlines; /* into lines[] */
	jp_id *model_ids;     /* one per line, made on first use */
};

struct parse {
	struct model *m;
	struct span *strs;
	size_t nstrs, cap_strs;
	struct span *samples, *maps_raw, *locs_raw, *funcs_raw, *types_raw;
	size_t nsamples, nmaps_raw, nlocs_raw, nfuncs_raw, ntypes_raw;
	size_t cap_samples, cap_maps_raw, cap_locs_raw, cap_funcs_raw, cap_types_raw;
	struct pfunc *funcs;
	struct pmap *maps;
	struct ploc *locs;
	struct pline *lines;
	size_t nlines, cap_lines;
	int col[64]; /* sample value index -> enum jp_value, -1 ignored */
	size_t ncols;
	char *why;
	size_t why_len;
	struct pprof_read_info *info; /* NULL: not asked */
	__u64 comments[PPROF_INFO_COMMENTS]; /* string indices; more are left out */
	size_t ncomments;
};

static int bad(struct parse *ps, const char *what)
{
	if (ps->why && ps->why_len)
		snprintf(ps->why, ps->why_len, "%s", what);
	return -EINVAL;
}

/* the file crossed a budget: one reason that names it and its limit */
static int over(struct parse *ps, const char *what, unsigned long long limit)
{
	if (ps->why && ps->why_len)
		snprintf(ps->why, ps->why_len, "more than %llu %s (a budget of jprof report)",
			 limit, what);
	return -EINVAL;
}

static int push_span(struct span **v, size_t *n, size_t *cap, const struct span *sp)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct span *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = *sp;
	return 0;
}

/* a string of the table as a NUL-terminated copy in buf (cut at len - 1); NULL when out of range */
static const char *str_at(const struct parse *ps, __u64 i, char *buf, size_t len)
{
	size_t n;

	if (i >= ps->nstrs)
		return NULL;
	n = ps->strs[i].n < len - 1 ? ps->strs[i].n : len - 1;
	memcpy(buf, ps->strs[i].p, n);
	buf[n] = '\0';
	/* a NUL inside a name would cut it silently elsewhere: make it visible */
	for (size_t k = 0; k < n; k++)
		if (!buf[k])
			buf[k] = '?';
	return buf;
}

static int cmp_id(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* every struct above starts with its u64 id: binary search by it */
static void *find_id(void *base, size_t n, size_t size, __u64 id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		__u64 x = *(const __u64 *)((const char *)base + mid * size);

		if (x == id)
			return (char *)base + mid * size;
		if (x < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* comment = 13, repeated int64 string indices, one a field or packed: the first few */
static void keep_comments(struct parse *ps, int wt, __u64 val, const struct span *sp)
{
	struct rd r;

	if (wt == 0) {
		if (ps->ncomments < PPROF_INFO_COMMENTS)
			ps->comments[ps->ncomments++] = val;
		return;
	}
	if (wt != 2)
		return;
	r = (struct rd){sp->p, sp->p + sp->n, 0};
	while (!r.err && r.p < r.end && ps->ncomments < PPROF_INFO_COMMENTS) {
		val = rd_varint(&r);
		if (!r.err)
			ps->comments[ps->ncomments++] = val;
	}
}

static int top_level(struct parse *ps, const unsigned char *p, size_t n)
{
	struct rd r = {p, p + n, 0};
	struct span sp;
	__u64 val;
	int f, wt, err = 0;

	static const struct {
		const char *what;
		size_t max;
	} budget[7] = {
		[1] = {"sample types", PPROF_MAX_TYPES}, [2] = {"samples", PPROF_MAX_SAMPLES},
		[3] = {"mappings", PPROF_MAX_MAPS},	 [4] = {"locations", PPROF_MAX_LOCS},
		[5] = {"functions", PPROF_MAX_FUNCS},	 [6] = {"strings", PPROF_MAX_STRS},
	};
	const size_t *count[7] = {NULL,		  &ps->ntypes_raw, &ps->nsamples, &ps->nmaps_raw,
				  &ps->nlocs_raw, &ps->nfuncs_raw, &ps->nstrs};

	while (!err && (f = rd_field(&r, &wt, &val, &sp))) {
		if (f == 13) {
			keep_comments(ps, wt, val, &sp);
			continue;
		}
		if (wt == 0 && ps->info) {
			/* time_nanos, duration_nanos, period: the recording's own account */
			if (f == 9)
				ps->info->time_ns = val;
			else if (f == 10)
				ps->info->duration_ns = val;
			else if (f == 12)
				ps->info->period = val;
		}
		if (wt != 2)
			continue;
		if (f >= 1 && f <= 6 && *count[f] >= budget[f].max)
			return over(ps, budget[f].what, budget[f].max);
		switch (f) {
		case 1:
			err = push_span(&ps->types_raw, &ps->ntypes_raw, &ps->cap_types_raw, &sp);
			break;
		case 2:
			err = push_span(&ps->samples, &ps->nsamples, &ps->cap_samples, &sp);
			break;
		case 3:
			err = push_span(&ps->maps_raw, &ps->nmaps_raw, &ps->cap_maps_raw, &sp);
			break;
		case 4:
			err = push_span(&ps->locs_raw, &ps->nlocs_raw, &ps->cap_locs_raw, &sp);
			break;
		case 5:
			err = push_span(&ps->funcs_raw, &ps->nfuncs_raw, &ps->cap_funcs_raw, &sp);
			break;
		case 6:
			err = push_span(&ps->strs, &ps->nstrs, &ps->cap_strs, &sp);
			break;
		}
	}
	if (r.err)
		return bad(ps, "malformed protobuf");
	if (!err && (!ps->nstrs || ps->strs[0].n))
		return bad(ps, "no string table (string 0 must be empty)");
	return err;
}

static int parse_types(struct parse *ps)
{
	char buf[64], ubuf[64];

	ps->ncols = 0;
	for (size_t i = 0; i < ps->ntypes_raw && i < 64; i++) {
		struct rd r = {ps->types_raw[i].p, ps->types_raw[i].p + ps->types_raw[i].n, 0};
		__u64 type = 0, unit = 0, val;
		struct span sp;
		const char *t, *u;
		int f, wt;

		while ((f = rd_field(&r, &wt, &val, &sp)))
			if (wt == 0 && f == 1)
				type = val;
			else if (wt == 0 && f == 2)
				unit = val;
		t = str_at(ps, type, buf, sizeof(buf));
		u = str_at(ps, unit, ubuf, sizeof(ubuf));
		if (r.err || !t || !u)
			return bad(ps, "malformed sample type");
		ps->col[i] = -1;
		for (int v = 0; v < JP_VAL_MAX; v++)
			if (!strcmp(t, jp_value_type(v)) && !strcmp(u, jp_value_unit(v)))
				ps->col[i] = v;
		ps->ncols = i + 1;
	}
	/* another tool's profile: its first column counts as samples */
	if (ps->ncols) {
		bool any = false;

		for (size_t i = 0; i < ps->ncols; i++)
			any |= ps->col[i] >= 0;
		if (!any)
			ps->col[0] = JP_VAL_CPU_SAMPLES;
	}
	return 0;
}

static int parse_funcs(struct parse *ps)
{
	ps->funcs = calloc(ps->nfuncs_raw + 1, sizeof(*ps->funcs));
	if (!ps->funcs)
		return -ENOMEM;
	for (size_t i = 0; i < ps->nfuncs_raw; i++) {
		struct rd r = {ps->funcs_raw[i].p, ps->funcs_raw[i].p + ps->funcs_raw[i].n, 0};
		struct pfunc *f = &ps->funcs[i];
		struct span sp;
		__u64 val;
		int fld, wt;

		while ((fld = rd_field(&r, &wt, &val, &sp))) {
			if (wt != 0)
				continue;
			if (fld == 1)
				f->id = val;
			else if (fld == 2)
				f->name = val;
			else if (fld == 3)
				f->sys = val;
			else if (fld == 4)
				f->file = val;
		}
		if (r.err || !f->id || f->name >= ps->nstrs || f->sys >= ps->nstrs ||
		    f->file >= ps->nstrs)
			return bad(ps, "malformed function");
	}
	qsort(ps->funcs, ps->nfuncs_raw, sizeof(*ps->funcs), cmp_id);
	return 0;
}

static int parse_maps(struct parse *ps)
{
	ps->maps = calloc(ps->nmaps_raw + 1, sizeof(*ps->maps));
	if (!ps->maps)
		return -ENOMEM;
	for (size_t i = 0; i < ps->nmaps_raw; i++) {
		struct rd r = {ps->maps_raw[i].p, ps->maps_raw[i].p + ps->maps_raw[i].n, 0};
		struct pmap *mp = &ps->maps[i];
		struct span sp;
		__u64 val;
		int f, wt;

		while ((f = rd_field(&r, &wt, &val, &sp))) {
			if (wt != 0)
				continue;
			if (f == 1)
				mp->id = val;
			else if (f == 2)
				mp->start = val;
			else if (f == 3)
				mp->limit = val;
			else if (f == 4)
				mp->offset = val;
			else if (f == 5)
				mp->file = val;
			else if (f == 6)
				mp->build_id = val;
		}
		if (r.err || !mp->id || mp->file >= ps->nstrs || mp->build_id >= ps->nstrs)
			return bad(ps, "malformed mapping");
	}
	qsort(ps->maps, ps->nmaps_raw, sizeof(*ps->maps), cmp_id);
	return 0;
}

static int parse_locs(struct parse *ps)
{
	ps->locs = calloc(ps->nlocs_raw + 1, sizeof(*ps->locs));
	if (!ps->locs)
		return -ENOMEM;
	for (size_t i = 0; i < ps->nlocs_raw; i++) {
		struct rd r = {ps->locs_raw[i].p, ps->locs_raw[i].p + ps->locs_raw[i].n, 0};
		struct ploc *l = &ps->locs[i];
		struct span sp;
		__u64 val;
		int f, wt;

		l->line0 = ps->nlines;
		while ((f = rd_field(&r, &wt, &val, &sp))) {
			if (wt == 0 && f == 1) {
				l->id = val;
			} else if (wt == 0 && f == 2) {
				l->mapping = val;
			} else if (wt == 0 && f == 3) {
				l->addr = val;
			} else if (wt == 2 && f == 4) {
				struct rd lr = {sp.p, sp.p + sp.n, 0};
				struct pline ln = {0};
				struct span lsp;
				__u64 lv;
				int lf, lwt;

				while ((lf = rd_field(&lr, &lwt, &lv, &lsp))) {
					if (lwt == 0 && lf == 1)
						ln.func = lv;
					else if (lwt == 0 && lf == 2)
						ln.line = lv;
				}
				if (lr.err || l->nlines >= PPROF_MAX_LINES)
					return bad(ps, "malformed location line");
				if (ps->nlines >= PPROF_MAX_ALL_LINES)
					return over(ps, "location lines", PPROF_MAX_ALL_LINES);
				if (ps->nlines == ps->cap_lines) {
					size_t nc = ps->cap_lines ? ps->cap_lines * 2 : 256;
					struct pline *nl = realloc(ps->lines, nc * sizeof(*nl));

					if (!nl)
						return -ENOMEM;
					ps->lines = nl;
					ps->cap_lines = nc;
				}
				ps->lines[ps->nlines++] = ln;
				l->nlines++;
			}
		}
		if (r.err || !l->id)
			return bad(ps, "malformed location");
	}
	qsort(ps->locs, ps->nlocs_raw, sizeof(*ps->locs), cmp_id);
	return 0;
}

static enum jp_frame_kind kind_of(const char *sys)
{
	static const struct {
		const char *name;
		enum jp_frame_kind kind;
	} kinds[] = {
		{"native", JP_FK_NATIVE},
		{"kernel", JP_FK_KERNEL},
		{"jvm", JP_FK_JVM},
		{"java-jit", JP_FK_JIT},
		{"java-inlined", JP_FK_INLINED},
		{"java-interpreted", JP_FK_INTERP},
		{"marker", JP_FK_ROOT},
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(sys, kinds[i].name))
			return kinds[i].kind;
	return JP_FK_NATIVE;
}

/* model locations of one pprof location, leaf first (its lines: innermost first) */
static int model_locs(struct parse *ps, struct ploc *l)
{
	char name[1024], sys[64], file[1024], mfile[1024], bid[256];

	if (l->model_ids)
		return 0;
	l->model_ids = calloc(l->nlines ? l->nlines : 1, sizeof(*l->model_ids));
	if (!l->model_ids)
		return -ENOMEM;
	for (size_t k = 0; k < (l->nlines ? l->nlines : 1); k++) {
		struct jp_location loc = {.addr = l->addr};
		const struct pfunc *f = NULL;
		enum jp_frame_kind kind = JP_FK_NATIVE;

		if (l->nlines) {
			f = find_id(ps->funcs, ps->nfuncs_raw, sizeof(*ps->funcs),
				    ps->lines[l->line0 + k].func);
			if (!f)
				return bad(ps, "a location names an unknown function");
			loc.line = ps->lines[l->line0 + k].line <= 0x7fffffff
					   ? (__s32)ps->lines[l->line0 + k].line
					   : 0;
		}
		if (f) {
			kind = kind_of(str_at(ps, f->sys, sys, sizeof(sys)));
			loc.func = model__func(ps->m, str_at(ps, f->name, name, sizeof(name)),
					       str_at(ps, f->file, file, sizeof(file)),
					       kind == JP_FK_JIT || kind == JP_FK_INLINED ||
						       kind == JP_FK_INTERP);
		} else {
			snprintf(name, sizeof(name), "0x%llx", (unsigned long long)l->addr);
			loc.func = model__func(ps->m, name, "", false);
		}
		loc.kind = kind;
		if (l->mapping) {
			const struct pmap *mp =
				find_id(ps->maps, ps->nmaps_raw, sizeof(*ps->maps), l->mapping);
			struct jp_mapping jm;

			if (!mp)
				return bad(ps, "a location names an unknown mapping");
			jm.start = mp->start;
			jm.limit = mp->limit;
			jm.offset = mp->offset;
			jm.file = str_at(ps, mp->file, mfile, sizeof(mfile));
			jm.build_id = str_at(ps, mp->build_id, bid, sizeof(bid));
			loc.mapping = model__mapping(ps->m, &jm);
			if (!loc.mapping)
				return -ENOMEM;
		}
		l->model_ids[k] = loc.func ? model__location(ps->m, &loc) : 0;
		if (!l->model_ids[k])
			return -ENOMEM;
	}
	return 0;
}

static int parse_sample(struct parse *ps, const struct span *s, jp_id *stack_buf)
{
	struct rd r = {s->p, s->p + s->n, 0};
	__u64 *loc_ids = NULL, *vals = NULL, val;
	size_t nloc = 0, cap_loc = 0, nval = 0, cap_val = 0, depth = 0;
	struct jp_labels lab = {.comm = "", .thread = "", .container = ""};
	char comm[256] = "", thread[256] = "", cont[256] = "", main[256] = "", key[32];
	struct span sp;
	jp_id stack, labels;
	int f, wt, err = 0;

	while (!err && (f = rd_field(&r, &wt, &val, &sp))) {
		if (f == 1 && (wt == 0 || wt == 2))
			err = add_u64s(&loc_ids, &nloc, &cap_loc, wt, val, &sp, PPROF_MAX_DEPTH);
		else if (f == 2 && (wt == 0 || wt == 2))
			err = add_u64s(&vals, &nval, &cap_val, wt, val, &sp, 64);
		else if (f == 3 && wt == 2) {
			struct rd lr = {sp.p, sp.p + sp.n, 0};
			__u64 k = 0, str = 0, num = 0, lv;
			struct span lsp;
			int lf, lwt;

			while ((lf = rd_field(&lr, &lwt, &lv, &lsp))) {
				if (lwt != 0)
					continue;
				if (lf == 1)
					k = lv;
				else if (lf == 2)
					str = lv;
				else if (lf == 3)
					num = lv;
			}
			if (lr.err || !str_at(ps, k, key, sizeof(key)) || str >= ps->nstrs) {
				err = bad(ps, "malformed label");
				break;
			}
			if (!strcmp(key, "pid"))
				lab.pid = (__u32)num;
			else if (!strcmp(key, "tid"))
				lab.tid = (__u32)num;
			else if (!strcmp(key, "comm"))
				str_at(ps, str, comm, sizeof(comm));
			else if (!strcmp(key, "thread"))
				str_at(ps, str, thread, sizeof(thread));
			else if (!strcmp(key, "container"))
				str_at(ps, str, cont, sizeof(cont));
			else if (!strcmp(key, "main"))
				str_at(ps, str, main, sizeof(main));
		}
	}
	if (!err && r.err)
		err = bad(ps, "malformed sample");
	if (err == -E2BIG)
		err = bad(ps, "a sample is deeper than 8192 frames");
	for (size_t i = 0; !err && i < nloc; i++) {
		struct ploc *l = find_id(ps->locs, ps->nlocs_raw, sizeof(*ps->locs), loc_ids[i]);

		if (!l) {
			err = bad(ps, "a sample names an unknown location");
			break;
		}
		err = model_locs(ps, l);
		for (size_t k = 0; !err && k < (l->nlines ? l->nlines : 1); k++) {
			if (depth >= PPROF_MAX_DEPTH) {
				err = bad(ps, "a sample is deeper than 8192 frames");
				break;
			}
			stack_buf[depth++] = l->model_ids[k];
		}
	}
	if (!err) {
		lab.comm = comm;
		lab.thread = thread;
		lab.container = cont;
		lab.main = main;
		stack = model__stack(ps->m, stack_buf, depth);
		labels = model__labels(ps->m, &lab);
		if (!labels || (!stack && depth))
			err = -ENOMEM;
		for (size_t i = 0; !err && i < nval && i < ps->ncols; i++)
			if (ps->col[i] >= 0 && vals[i])
				err = model__add(ps->m, stack, labels, ps->col[i], vals[i]);
	}
	free(loc_ids);
	free(vals);
	return err;
}

static int gunzip(const unsigned char *in, size_t n, unsigned char **ret, size_t *ret_len)
{
	size_t cap = n < PPROF_MAX_RAW / 8 ? n * 4 + 4096 : PPROF_MAX_RAW, len = 0;
	unsigned char *out = malloc(cap);
	z_stream z;
	int zr;

	if (!out)
		return -ENOMEM;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 32) != Z_OK) {
		free(out);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = n > 0xffffffffu ? 0xffffffffu : (uInt)n;
	do {
		if (len == cap) {
			unsigned char *no;

			if (cap >= PPROF_MAX_RAW) {
				zr = Z_MEM_ERROR;
				break;
			}
			cap = cap * 2 > PPROF_MAX_RAW ? PPROF_MAX_RAW : cap * 2;
			no = realloc(out, cap);
			if (!no) {
				zr = Z_MEM_ERROR;
				break;
			}
			out = no;
		}
		z.next_out = out + len;
		z.avail_out = (uInt)(cap - len > 0xffffffffu ? 0xffffffffu : cap - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = (size_t)(z.next_out - out);
	} while (zr == Z_OK);
	inflateEnd(&z);
	if (zr != Z_STREAM_END) {
		free(out);
		return zr == Z_MEM_ERROR ? -E2BIG : -EINVAL;
	}
	*ret = out;
	*ret_len = len;
	return 0;
}

/* the comments, as strings of the model (they live as long as it) */
static void info_comments(struct parse *ps)
{
	char buf[1024];
	const char *s;

	for (size_t i = 0; i < ps->ncomments; i++) {
		s = str_at(ps, ps->comments[i], buf, sizeof(buf));
		s = s ? model__str(ps->m, s) : NULL;
		if (s)
			ps->info->comments[ps->info->ncomments++] = s;
	}
}

int model__read_pprof(struct model *m, const void *buf, size_t len, char *why, size_t why_len)
{
	return model__read_pprof_info(m, buf, len, NULL, why, why_len);
}

int model__read_pprof_info(struct model *m, const void *buf, size_t len,
			   struct pprof_read_info *info, char *why, size_t why_len)
{
	struct parse ps = {.m = m, .why = why, .why_len = why_len, .info = info};
	const unsigned char *p = buf;
	unsigned char *raw = NULL;
	jp_id *stack_buf = NULL;
	int err;

	if (why && why_len)
		why[0] = '\0';
	if (info)
		memset(info, 0, sizeof(*info));
	if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
		err = gunzip(p, len, &raw, &len);
		if (err)
			return err == -E2BIG	? over(&ps, "bytes uncompressed", PPROF_MAX_RAW)
			       : err == -EINVAL ? bad(&ps, "not valid gzip data")
						: err;
		p = raw;
	}
	if (len > PPROF_MAX_RAW)
		err = over(&ps, "bytes uncompressed", PPROF_MAX_RAW);
	else
		err = top_level(&ps, p, len);
	if (!err)
		err = parse_types(&ps);
	if (!err && !ps.ncols)
		err = bad(&ps, "no sample types");
	if (!err)
		err = parse_funcs(&ps);
	if (!err)
		err = parse_maps(&ps);
	if (!err)
		err = parse_locs(&ps);
	if (!err) {
		stack_buf = malloc(PPROF_MAX_DEPTH * sizeof(*stack_buf));
		if (!stack_buf)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < ps.nsamples; i++)
		err = parse_sample(&ps, &ps.samples[i], stack_buf);
	if (!err && info)
		info_comments(&ps);
	for (size_t i = 0; ps.locs && i < ps.nlocs_raw; i++)
		free(ps.locs[i].model_ids);
	free(stack_buf);
	free(ps.locs);
	free(ps.lines);
	free(ps.maps);
	free(ps.funcs);
	free(ps.strs);
	free(ps.samples);
	free(ps.maps_raw);
	free(ps.locs_raw);
	free(ps.funcs_raw);
	free(ps.types_raw);
	free(raw);
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof_read_samples.c: a profile's samples, decoded (ids and string indices), checked, and
 * added to the model: each function, mapping and location of the file made once, label sets
 * found again by their string indices.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_read_int.h"

#define PP_MAX_LABEL_MEMO (64u << 10) /* label sets found by index; more are made by name */

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

/* the frame kind of f's system name */
int pp_kind_of_func(const struct parse *ps, const struct pfunc *f)
{
	char sys[64];

	return (int)kind_of(pp_str_at(ps, f->sys, sys, sizeof(sys)));
}

/* f's model function, made on first use (f->kind set); 0 when out of memory */
static jp_id func_id(struct parse *ps, struct pfunc *f)
{
	char name[1024], file[1024];
	bool java;

	if (f->model_id)
		return f->model_id;
	java = f->kind == JP_FK_JIT || f->kind == JP_FK_INLINED || f->kind == JP_FK_INTERP;
	if (ps->pm)
		f->model_id = pp_merge_func(ps->pm, ps, f, java);
	else
		f->model_id = model__func(ps->m, pp_str_at(ps, f->name, name, sizeof(name)),
					  pp_str_at(ps, f->file, file, sizeof(file)), java);
	return f->model_id;
}

/* mp's model mapping, made on first use; 0 when out of memory */
static jp_id map_id(struct parse *ps, struct pmap *mp)
{
	char mfile[1024], bid[256];
	struct jp_mapping jm;

	if (mp->model_id)
		return mp->model_id;
	jm.start = mp->start;
	jm.limit = mp->limit;
	jm.offset = mp->offset;
	jm.file = pp_str_at(ps, mp->file, mfile, sizeof(mfile));
	jm.build_id = pp_str_at(ps, mp->build_id, bid, sizeof(bid));
	mp->model_id = model__mapping(ps->m, &jm);
	return mp->model_id;
}

static struct pfunc *find_func(struct parse *ps, __u64 id)
{
	if (ps->func_at)
		return id < ps->nfunc_at && ps->func_at[id] ? &ps->funcs[ps->func_at[id] - 1]
							    : NULL;
	return pp_find_id_dense(ps->funcs, ps->nfuncs_raw, sizeof(*ps->funcs), id, ps->funcs_dense);
}

struct pmap *pp_find_map(struct parse *ps, __u64 id)
{
	return pp_find_id_dense(ps->maps, ps->nmaps_raw, sizeof(*ps->maps), id, ps->maps_dense);
}

static struct ploc *find_loc(struct parse *ps, __u64 id)
{
	return pp_find_id_dense(ps->locs, ps->nlocs_raw, sizeof(*ps->locs), id, ps->locs_dense);
}

/* what model_locs would refuse in l, found without making anything */
static int check_loc(struct parse *ps, struct ploc *l)
{
	if (l->checked)
		return 0;
	for (size_t k = 0; k < (l->nlines ? l->nlines : 1); k++) {
		/* no lines: ps->lines may be NULL, and no pointer is made from it */
		struct pline *ln = l->nlines ? &ps->lines[l->line0 + k] : NULL;

		if (ln && !(ln->fn = find_func(ps, ln->func)))
			return pp_bad(ps, "a location names an unknown function");
		if (l->mapping && !pp_find_map(ps, l->mapping))
			return pp_bad(ps, "a location names an unknown mapping");
	}
	l->checked = true;
	return 0;
}

/* the model location of line k of l (f its function, NULL: l has no line); 0 out of memory */
jp_id pp_make_loc(struct parse *ps, const struct ploc *l, size_t k, struct pfunc *f,
		  struct pmap *mp)
{
	struct jp_location loc = {.addr = l->addr};
	char name[64];

	if (f) {
		loc.line = ps->lines[l->line0 + k].line <= 0x7fffffff
				   ? (__s32)ps->lines[l->line0 + k].line
				   : 0;
		loc.func = func_id(ps, f);
		loc.kind = (enum jp_frame_kind)f->kind;
	} else {
		snprintf(name, sizeof(name), "0x%llx", (unsigned long long)l->addr);
		loc.func = model__func(ps->m, name, "", false);
		loc.kind = JP_FK_NATIVE;
	}
	if (mp) {
		loc.mapping = map_id(ps, mp);
		if (!loc.mapping)
			return 0;
	}
	return loc.func ? model__location(ps->m, &loc) : 0;
}

/* model locations of one pprof location, leaf first (its lines: innermost first) */
static int model_locs(struct parse *ps, struct ploc *l)
{
	jp_id id;

	if (l->made)
		return 0;
	for (size_t k = 0; k < (l->nlines ? l->nlines : 1); k++) {
		struct pfunc *f = NULL;
		struct pmap *mp = NULL;

		if (l->nlines) {
			f = ps->lines[l->line0 + k].fn;
			if (!f)
				f = find_func(ps, ps->lines[l->line0 + k].func);
			if (!f)
				return pp_bad(ps, "a location names an unknown function");
			if (!f->has_kind) { /* java or not, and how it is shown */
				f->kind = pp_kind_of_func(ps, f);
				f->has_kind = true;
			}
		}
		if (l->mapping) {
			mp = pp_find_map(ps, l->mapping);
			if (!mp)
				return pp_bad(ps, "a location names an unknown mapping");
		}
		id = ps->pm ? pp_merge_loc(ps->pm, ps, l, k, f, mp) : pp_make_loc(ps, l, k, f, mp);
		if (!id)
			return -ENOMEM;
		if (l->nlines)
			ps->lines[l->line0 + k].model_id = id;
		else
			l->model_id0 = id;
	}
	l->made = true;
	return 0;
}

/*
 * the time of the sample's adds: time_nanos + time_ms on the model's clock (set from the
 * first timed file when it has none: its wall clock, its resolution), else untimed
 */
static void sample_time(struct parse *ps, bool timed, __u64 time_ms)
{
	struct model_time ti;
	__u64 mono;

	if (!timed) {
		model__at(ps->m, 0);
		return;
	}
	if (!ps->clock_set) {
		model__time_info(ps->m, &ti);
		if (!ti.has_clock) {
			model__set_clock(ps->m, ps->time_ns, ps->time_ns);
			if (ps->time_res_ms)
				model__set_time_res(ps->m, ps->time_res_ms);
		}
		ps->clock_set = true;
	}
	mono = model__mono_of(ps->m, ps->time_ns + time_ms * 1000000ull);
	model__at(ps->m, mono ? mono : 1);
}

/* string i is exactly s (as the label keys are matched: a copy would be cut at 31 bytes) */
static bool str_is(const struct parse *ps, __u64 i, const char *s, size_t n)
{
	return i < ps->nstrs && ps->strs[i].n == n && !memcmp(ps->strs[i].p, s, n);
}
#define STR_IS(ps, i, lit) str_is(ps, i, lit, sizeof(lit) - 1)

int pp_decode_sample(struct parse *ps, const struct span *s, struct psample *ret)
{
	struct rd r = {s->p, s->p + s->n, 0};
	struct span sp = {0};
	__u64 val;
	int f, wt, err = 0;

	memset(ret, 0, sizeof(*ret));
	while (!err && (f = pp_rd_field(&r, &wt, &val, &sp))) {
		if (f == 1 && (wt == 0 || wt == 2))
			err = pp_add_u64s(&ps->sloc, &ret->nloc, &ps->cap_sloc, wt, val,
					  wt == 2 ? &sp : NULL, PPROF_MAX_DEPTH);
		else if (f == 2 && (wt == 0 || wt == 2))
			err = pp_add_u64s(&ps->sval, &ret->nval, &ps->cap_sval, wt, val,
					  wt == 2 ? &sp : NULL, 64);
		else if (f == 3 && wt == 2) {
			struct rd lr = {sp.p, sp.p + sp.n, 0};
			__u64 k = 0, str = 0, num = 0, lv;
			struct span lsp;
			int lf, lwt;

			while ((lf = pp_rd_field(&lr, &lwt, &lv, &lsp))) {
				if (lwt != 0)
					continue;
				if (lf == 1)
					k = lv;
				else if (lf == 2)
					str = lv;
				else if (lf == 3)
					num = lv;
			}
			if (lr.err || k >= ps->nstrs || str >= ps->nstrs) {
				err = pp_bad(ps, "malformed label");
				break;
			}
			if (STR_IS(ps, k, "pid"))
				ret->pid = (__u32)num;
			else if (STR_IS(ps, k, "tid"))
				ret->tid = (__u32)num;
			else if (STR_IS(ps, k, "comm"))
				ret->comm = str;
			else if (STR_IS(ps, k, "thread"))
				ret->thread = str;
			else if (STR_IS(ps, k, "container"))
				ret->cont = str;
			else if (STR_IS(ps, k, "main"))
				ret->main = str;
			else if (STR_IS(ps, k, "exited_processes")) /* pid 0: added up */
				ret->nfolded = num > UINT32_MAX ? UINT32_MAX : (__u32)num;
			else if (STR_IS(ps, k, "time_ms") && num < (1ull << 40)) {
				ret->timed = true; /* jprof's: ms past time_nanos */
				ret->time_ms = num;
			}
		}
	}
	ret->locs = ps->sloc;
	ret->vals = ps->sval;
	if (!err && r.err)
		err = pp_bad(ps, "malformed sample");
	if (err == -E2BIG)
		err = pp_bad(ps, "a sample is deeper than 8192 frames");
	return err;
}

int pp_check_sample(struct parse *ps, const struct span *s)
{
	struct psample d;
	size_t depth = 0;
	int err = pp_decode_sample(ps, s, &d);

	for (size_t i = 0; !err && i < d.nloc; i++) {
		struct ploc *l = find_loc(ps, d.locs[i]);

		if (!l)
			return pp_bad(ps, "a sample names an unknown location");
		err = check_loc(ps, l);
		depth += l->nlines ? l->nlines : 1;
		if (!err && depth > PPROF_MAX_DEPTH)
			err = pp_bad(ps, "a sample is deeper than 8192 frames");
	}
	return err;
}

static bool labels_same(const struct plabels *a, const struct psample *d)
{
	return a->pid == d->pid && a->tid == d->tid && a->nfolded == d->nfolded &&
	       a->comm == d->comm && a->thread == d->thread && a->cont == d->cont &&
	       a->main == d->main;
}

/* the sample's labels as indices, and their set's id */
static struct plabels plabels_of(const struct psample *d, jp_id id)
{
	return (struct plabels){.pid = d->pid,
				.tid = d->tid,
				.nfolded = d->nfolded,
				.comm = d->comm,
				.thread = d->thread,
				.cont = d->cont,
				.main = d->main,
				.id = id};
}

/* the sample's label set: found by its string indices when made before; 0 out of memory */
static jp_id labels_id(struct parse *ps, const struct psample *d)
{
	char comm[256], thread[256], cont[256], main[256];
	__u64 k1 = (__u64)d->pid << 32 | d->tid;
	__u64 k2 =
		d->comm ^ d->thread << 21 ^ d->cont << 42 ^ d->main << 11 ^ (__u64)d->nfolded << 32;
	__u64 *v = hmap_find2(&ps->lab_index, k1, k2);
	struct jp_labels lab = {.pid = d->pid, .tid = d->tid, .nfolded = d->nfolded};
	jp_id id;

	if (v && *v < ps->nlabs && labels_same(&ps->labs[*v], d))
		return ps->labs[*v].id;
	lab.comm = pp_str_at(ps, d->comm, comm, sizeof(comm));
	lab.thread = pp_str_at(ps, d->thread, thread, sizeof(thread));
	lab.container = pp_str_at(ps, d->cont, cont, sizeof(cont));
	lab.main = pp_str_at(ps, d->main, main, sizeof(main));
	id = model__labels(ps->m, &lab);
	if (!id || v || ps->nlabs >= PP_MAX_LABEL_MEMO)
		return id; /* a set of colliding indices, or past the memo's budget: by name */
	if (ps->nlabs == ps->cap_labs) {
		size_t nc = ps->cap_labs ? ps->cap_labs * 2 : 64;
		struct plabels *nl = realloc(ps->labs, nc * sizeof(*nl));

		if (!nl)
			return id; /* not remembered: found by name the next time */
		ps->labs = nl;
		ps->cap_labs = nc;
	}
	if (hmap_put2(&ps->lab_index, k1, k2, ps->nlabs) < 0)
		return id;
	ps->labs[ps->nlabs++] = plabels_of(d, id);
	return id;
}

/* any value the model keeps */
static bool has_value(const struct parse *ps, const struct psample *d)
{
	for (size_t i = 0; i < d->nval && i < ps->ncols; i++)
		if (ps->col[i] >= 0 && d->vals[i])
			return true;
	return false;
}

/* the sample's locations are the last one's: its stack */
static bool same_locs(const struct parse *ps, const struct psample *d)
{
	return ps->last_stack && d->nloc == ps->nlast_locs &&
	       (!d->nloc || !memcmp(d->locs, ps->last_locs, d->nloc * sizeof(*d->locs)));
}

/* the sample's locations and stack kept for the next (not kept: looked up again) */
static void keep_last(struct parse *ps, const struct psample *d, jp_id stack)
{
	ps->last_stack = 0;
	if (d->nloc > ps->cap_last_locs) {
		__u64 *n = realloc(ps->last_locs, d->nloc * sizeof(*n));

		if (!n)
			return;
		ps->last_locs = n;
		ps->cap_last_locs = d->nloc;
	}
	if (d->nloc)
		memcpy(ps->last_locs, d->locs, d->nloc * sizeof(*d->locs));
	ps->nlast_locs = d->nloc;
	ps->last_stack = stack;
}

/* the sample's stack, its locations made first (the last sample's when they are its) */
static int sample_stack(struct parse *ps, const struct psample *d, jp_id *stack_buf, jp_id *ret)
{
	size_t depth = 0;
	jp_id stack;
	int err = 0;

	if (same_locs(ps, d)) {
		*ret = ps->last_stack;
		return 0;
	}
	for (size_t i = 0; !err && i < d->nloc; i++) {
		struct ploc *l = find_loc(ps, d->locs[i]);

		if (!l)
			return pp_bad(ps, "a sample names an unknown location");
		err = model_locs(ps, l);
		for (size_t k = 0; !err && k < (l->nlines ? l->nlines : 1); k++) {
			if (depth >= PPROF_MAX_DEPTH)
				return pp_bad(ps, "a sample is deeper than 8192 frames");
			stack_buf[depth++] = pp_loc_id(ps, l, k);
		}
	}
	if (err)
		return err;
	stack = model__stack(ps->m, stack_buf, depth);
	if (!stack && depth)
		return -ENOMEM;
	keep_last(ps, d, stack);
	*ret = stack;
	return 0;
}

/* the sample's label set (the last sample's when it is its) */
static jp_id sample_labels(struct parse *ps, const struct psample *d)
{
	jp_id id;

	if (ps->last_lab.id && labels_same(&ps->last_lab, d))
		return ps->last_lab.id;
	id = labels_id(ps, d);
	if (id)
		ps->last_lab = plabels_of(d, id);
	return id;
}

int pp_add_sample(struct parse *ps, const struct span *s, jp_id *stack_buf)
{
	struct psample d;
	jp_id stack = 0, labels;
	int err = pp_decode_sample(ps, s, &d);

	/* a merge takes the rows of the file: a sample of no value makes none */
	if (err || (ps->whole && !has_value(ps, &d)))
		return err;
	err = sample_stack(ps, &d, stack_buf, &stack);
	if (err)
		return err;
	labels = sample_labels(ps, &d);
	if (!labels)
		return -ENOMEM;
	sample_time(ps, d.timed, d.time_ms);
	for (size_t i = 0; !err && i < d.nval && i < ps->ncols; i++)
		if (ps->col[i] >= 0 && d.vals[i])
			err = model__add(ps->m, stack, labels, ps->col[i], d.vals[i]);
	model__at(ps->m, 0);
	return err;
}

void pp_samples_free(struct parse *ps)
{
	free(ps->func_at);
	free(ps->lkeys);
	free(ps->sloc);
	free(ps->sval);
	free(ps->labs);
	free(ps->last_locs);
	hmap_free(&ps->lab_index);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pprof_read_tables.c: a profile's tables (types, functions, mappings, locations), its samples */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof_read_int.h"

int pp_parse_types(struct parse *ps)
{
	char buf[64], ubuf[64];

	ps->ncols = 0;
	for (size_t i = 0; i < ps->ntypes_raw && i < 64; i++) {
		struct rd r = {ps->types_raw[i].p, ps->types_raw[i].p + ps->types_raw[i].n, 0};
		__u64 type = 0, unit = 0, val;
		struct span sp;
		const char *t, *u;
		int f, wt;

		while ((f = pp_rd_field(&r, &wt, &val, &sp)))
			if (wt == 0 && f == 1)
				type = val;
			else if (wt == 0 && f == 2)
				unit = val;
		t = pp_str_at(ps, type, buf, sizeof(buf));
		u = pp_str_at(ps, unit, ubuf, sizeof(ubuf));
		if (r.err || !t || !u)
			return pp_bad(ps, "malformed sample type");
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

int pp_parse_funcs(struct parse *ps)
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

		while ((fld = pp_rd_field(&r, &wt, &val, &sp))) {
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
			return pp_bad(ps, "malformed function");
	}
	qsort(ps->funcs, ps->nfuncs_raw, sizeof(*ps->funcs), pp_cmp_id);
	return 0;
}

int pp_parse_maps(struct parse *ps)
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

		while ((f = pp_rd_field(&r, &wt, &val, &sp))) {
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
			return pp_bad(ps, "malformed mapping");
	}
	qsort(ps->maps, ps->nmaps_raw, sizeof(*ps->maps), pp_cmp_id);
	return 0;
}

int pp_parse_locs(struct parse *ps)
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
		while ((f = pp_rd_field(&r, &wt, &val, &sp))) {
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

				while ((lf = pp_rd_field(&lr, &lwt, &lv, &lsp))) {
					if (lwt == 0 && lf == 1)
						ln.func = lv;
					else if (lwt == 0 && lf == 2)
						ln.line = lv;
				}
				if (lr.err || l->nlines >= PPROF_MAX_LINES)
					return pp_bad(ps, "malformed location line");
				if (ps->nlines >= PPROF_MAX_ALL_LINES)
					return pp_over(ps, "location lines", PPROF_MAX_ALL_LINES);
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
			return pp_bad(ps, "malformed location");
	}
	qsort(ps->locs, ps->nlocs_raw, sizeof(*ps->locs), pp_cmp_id);
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
			f = pp_find_id(ps->funcs, ps->nfuncs_raw, sizeof(*ps->funcs),
				       ps->lines[l->line0 + k].func);
			if (!f)
				return pp_bad(ps, "a location names an unknown function");
			loc.line = ps->lines[l->line0 + k].line <= 0x7fffffff
					   ? (__s32)ps->lines[l->line0 + k].line
					   : 0;
		}
		if (f) {
			kind = kind_of(pp_str_at(ps, f->sys, sys, sizeof(sys)));
			loc.func = model__func(ps->m, pp_str_at(ps, f->name, name, sizeof(name)),
					       pp_str_at(ps, f->file, file, sizeof(file)),
					       kind == JP_FK_JIT || kind == JP_FK_INLINED ||
						       kind == JP_FK_INTERP);
		} else {
			snprintf(name, sizeof(name), "0x%llx", (unsigned long long)l->addr);
			loc.func = model__func(ps->m, name, "", false);
		}
		loc.kind = kind;
		if (l->mapping) {
			const struct pmap *mp =
				pp_find_id(ps->maps, ps->nmaps_raw, sizeof(*ps->maps), l->mapping);
			struct jp_mapping jm;

			if (!mp)
				return pp_bad(ps, "a location names an unknown mapping");
			jm.start = mp->start;
			jm.limit = mp->limit;
			jm.offset = mp->offset;
			jm.file = pp_str_at(ps, mp->file, mfile, sizeof(mfile));
			jm.build_id = pp_str_at(ps, mp->build_id, bid, sizeof(bid));
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

int pp_parse_sample(struct parse *ps, const struct span *s, jp_id *stack_buf)
{
	struct rd r = {s->p, s->p + s->n, 0};
	__u64 *loc_ids = NULL, *vals = NULL, val;
	size_t nloc = 0, cap_loc = 0, nval = 0, cap_val = 0, depth = 0;
	struct jp_labels lab = {.comm = "", .thread = "", .container = ""};
	char comm[256] = "", thread[256] = "", cont[256] = "", main[256] = "", key[32];
	struct span sp;
	jp_id stack, labels;
	bool timed = false;
	__u64 time_ms = 0;
	int f, wt, err = 0;

	while (!err && (f = pp_rd_field(&r, &wt, &val, &sp))) {
		if (f == 1 && (wt == 0 || wt == 2))
			err = pp_add_u64s(&loc_ids, &nloc, &cap_loc, wt, val, &sp, PPROF_MAX_DEPTH);
		else if (f == 2 && (wt == 0 || wt == 2))
			err = pp_add_u64s(&vals, &nval, &cap_val, wt, val, &sp, 64);
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
			if (lr.err || !pp_str_at(ps, k, key, sizeof(key)) || str >= ps->nstrs) {
				err = pp_bad(ps, "malformed label");
				break;
			}
			if (!strcmp(key, "pid"))
				lab.pid = (__u32)num;
			else if (!strcmp(key, "tid"))
				lab.tid = (__u32)num;
			else if (!strcmp(key, "comm"))
				pp_str_at(ps, str, comm, sizeof(comm));
			else if (!strcmp(key, "thread"))
				pp_str_at(ps, str, thread, sizeof(thread));
			else if (!strcmp(key, "container"))
				pp_str_at(ps, str, cont, sizeof(cont));
			else if (!strcmp(key, "main"))
				pp_str_at(ps, str, main, sizeof(main));
			else if (!strcmp(key, "exited_processes")) /* pid 0: added up */
				lab.nfolded = num > UINT32_MAX ? UINT32_MAX : (__u32)num;
			else if (!strcmp(key, "time_ms") && num < (1ull << 40)) {
				timed = true; /* jprof's: ms past time_nanos */
				time_ms = num;
			}
		}
	}
	if (!err && r.err)
		err = pp_bad(ps, "malformed sample");
	if (err == -E2BIG)
		err = pp_bad(ps, "a sample is deeper than 8192 frames");
	for (size_t i = 0; !err && i < nloc; i++) {
		struct ploc *l = pp_find_id(ps->locs, ps->nlocs_raw, sizeof(*ps->locs), loc_ids[i]);

		if (!l) {
			err = pp_bad(ps, "a sample names an unknown location");
			break;
		}
		err = model_locs(ps, l);
		for (size_t k = 0; !err && k < (l->nlines ? l->nlines : 1); k++) {
			if (depth >= PPROF_MAX_DEPTH) {
				err = pp_bad(ps, "a sample is deeper than 8192 frames");
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
		sample_time(ps, timed, time_ms);
		for (size_t i = 0; !err && i < nval && i < ps->ncols; i++)
			if (ps->col[i] >= 0 && vals[i])
				err = model__add(ps->m, stack, labels, ps->col[i], vals[i]);
		model__at(ps->m, 0);
	}
	free(loc_ids);
	free(vals);
	return err;
}

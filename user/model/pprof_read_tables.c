// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pprof_read_tables.c: a profile's tables (types, functions, mappings, locations) */
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

/*
 * ps->func_at when the ids are distinct and at most PP_FUNC_AT_SPREAD times as many as the
 * functions (16 MiB at most): 1 made (the table need not be sorted), 0 not (then sort and
 * search), -ENOMEM
 */
#define PP_FUNC_AT_SPREAD 8
#define PP_FUNC_AT_MAX	  (4u << 20)
static int func_index(struct parse *ps)
{
	size_t n = ps->nfuncs_raw;
	__u64 max = 0;

	for (size_t i = 0; i < n; i++)
		max = ps->funcs[i].id > max ? ps->funcs[i].id : max;
	if (!n || max >= PP_FUNC_AT_MAX || max > (__u64)n * PP_FUNC_AT_SPREAD + 1024)
		return 0;
	ps->func_at = calloc(max + 1, sizeof(*ps->func_at));
	if (!ps->func_at)
		return -ENOMEM;
	ps->nfunc_at = max + 1;
	for (size_t i = 0; i < n; i++) {
		if (ps->func_at[ps->funcs[i].id]) {
			/* equal ids: which one a search finds is the search's own matter */
			free(ps->func_at);
			ps->func_at = NULL;
			ps->nfunc_at = 0;
			return 0;
		}
		ps->func_at[ps->funcs[i].id] = (__u32)i + 1;
	}
	return 1;
}

int pp_parse_funcs(struct parse *ps)
{
	int err;

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
	/* jprof's ids (function * kinds) come in the order of first use: indexed, not sorted */
	err = func_index(ps);
	if (err)
		return err < 0 ? err : 0;
	pp_sort_ids(ps->funcs, ps->nfuncs_raw, sizeof(*ps->funcs));
	ps->funcs_dense = pp_ids_dense(ps->funcs, ps->nfuncs_raw, sizeof(*ps->funcs));
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
	pp_sort_ids(ps->maps, ps->nmaps_raw, sizeof(*ps->maps));
	ps->maps_dense = pp_ids_dense(ps->maps, ps->nmaps_raw, sizeof(*ps->maps));
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
	pp_sort_ids(ps->locs, ps->nlocs_raw, sizeof(*ps->locs));
	ps->locs_dense = pp_ids_dense(ps->locs, ps->nlocs_raw, sizeof(*ps->locs));
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof_read.c: a saved profile (pprof's profile.proto, gzip'ed or not) back into the model,
 * for `jprof report`. The file may come from anywhere: every length, index and id is checked,
 * sizes are capped, and a malformed file is refused with one reason, never half-trusted.
 * This file reads the top level and puts it together; pprof_read_wire.c reads protobuf's
 * wire format (and gunzips), pprof_read_tables.c the profile's tables and samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pprof_read_int.h"

int pp_bad(struct parse *ps, const char *what)
{
	if (ps->why && ps->why_len)
		snprintf(ps->why, ps->why_len, "%s", what);
	return -EINVAL;
}

/* the file crossed a budget: one reason that names it and its limit */
int pp_over(struct parse *ps, const char *what, unsigned long long limit)
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
const char *pp_str_at(const struct parse *ps, __u64 i, char *buf, size_t len)
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

int pp_cmp_id(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* ids 1, 2 ... n in order (a sorted table as jprof writes it): id i is element i - 1 */
bool pp_ids_dense(const void *base, size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++)
		if (*(const __u64 *)((const char *)base + i * size) != i + 1)
			return false;
	return true;
}

void pp_sort_ids(void *base, size_t n, size_t size)
{
	for (size_t i = 1; i < n; i++)
		if (*(const __u64 *)((const char *)base + (i - 1) * size) >=
		    *(const __u64 *)((const char *)base + i * size)) {
			qsort(base, n, size, pp_cmp_id);
			return;
		}
}

/* every struct above starts with its u64 id: binary search by it */
void *pp_find_id(void *base, size_t n, size_t size, __u64 id)
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
		val = pp_rd_varint(&r);
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

	while (!err && (f = pp_rd_field(&r, &wt, &val, &sp))) {
		if (f == 13) {
			keep_comments(ps, wt, val, &sp);
			continue;
		}
		if (wt == 0 && f == 9)
			ps->time_ns = val;
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
			return pp_over(ps, budget[f].what, budget[f].max);
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
		return pp_bad(ps, "malformed protobuf");
	if (!err && (!ps->nstrs || ps->strs[0].n))
		return pp_bad(ps, "no string table (string 0 must be empty)");
	return err;
}

/* the comments, as strings of the model (they live as long as it), or of the merge */
static void info_comments(struct parse *ps)
{
	char buf[1024];
	const char *s;

	for (size_t i = 0; i < ps->ncomments; i++) {
		s = pp_str_at(ps, ps->comments[i], buf, sizeof(buf));
		if (s)
			s = ps->pm ? pp_merge_keep(ps->pm, ps->info->ncomments, s)
				   : model__str(ps->m, s);
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

	return pp_read(&ps, buf, len);
}

int pp_prepare(struct parse *ps, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	int err;

	if (ps->why && ps->why_len)
		ps->why[0] = '\0';
	if (ps->info)
		memset(ps->info, 0, sizeof(*ps->info));
	if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
		err = pp_gunzip(p, len, &ps->raw, &len);
		if (err)
			return err == -E2BIG	? pp_over(ps, "bytes uncompressed", PPROF_MAX_RAW)
			       : err == -EINVAL ? pp_bad(ps, "not valid gzip data")
						: err;
		p = ps->raw;
	}
	if (len > PPROF_MAX_RAW)
		err = pp_over(ps, "bytes uncompressed", PPROF_MAX_RAW);
	else
		err = top_level(ps, p, len);
	if (!err)
		err = pp_parse_types(ps);
	if (!err && !ps->ncols)
		err = pp_bad(ps, "no sample types");
	if (!err)
		err = pp_parse_funcs(ps);
	if (!err)
		err = pp_parse_maps(ps);
	if (!err)
		err = pp_parse_locs(ps);
	for (size_t i = 0; !err && i < ps->ncomments; i++) {
		char cb[64];
		const char *c = pp_str_at(ps, ps->comments[i], cb, sizeof(cb));

		if (c && !strncmp(c, "jprof:time_res_ms=", 18))
			ps->time_res_ms = (__u32)strtoul(c + 18, NULL, 10);
	}
	/* whole: the file checked first, so that a bad one adds nothing */
	for (size_t i = 0; ps->whole && !err && i < ps->nsamples; i++)
		err = pp_check_sample(ps, &ps->samples[i]);
	if (!err && ps->whole) /* the merge's keys of its locations, here: maybe another thread */
		err = pp_merge_keys(ps);
	if (!err) {
		ps->stack_buf = malloc(PPROF_MAX_DEPTH * sizeof(*ps->stack_buf));
		if (!ps->stack_buf)
			err = -ENOMEM;
	}
	return err;
}

int pp_commit(struct parse *ps)
{
	int err = 0;

	for (size_t i = 0; !err && i < ps->nsamples; i++)
		err = pp_add_sample(ps, &ps->samples[i], ps->stack_buf);
	if (!err && ps->info)
		info_comments(ps);
	return err;
}

void pp_parse_free(struct parse *ps)
{
	pp_samples_free(ps);
	free(ps->stack_buf);
	free(ps->locs);
	free(ps->lines);
	free(ps->maps);
	free(ps->funcs);
	free(ps->strs);
	free(ps->samples);
	free(ps->maps_raw);
	free(ps->locs_raw);
	free(ps->funcs_raw);
	free(ps->types_raw);
	free(ps->raw);
	memset(ps, 0, sizeof(*ps));
}

int pp_read(struct parse *ps, const void *buf, size_t len)
{
	int err = pp_prepare(ps, buf, len);

	if (!err)
		err = pp_commit(ps);
	pp_parse_free(ps);
	return err;
}

const char *pprof_info_str(const struct pprof_read_info *info, const char *key)
{
	size_t k = strlen(key);

	for (size_t i = 0; i < info->ncomments; i++) {
		const char *c = info->comments[i];

		if (c && !strncmp(c, "jprof:", 6) && !strncmp(c + 6, key, k) && c[6 + k] == '=')
			return c + 7 + k;
	}
	return NULL;
}

__u64 pprof_info_u64(const struct pprof_read_info *info, const char *key)
{
	const char *v = pprof_info_str(info, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

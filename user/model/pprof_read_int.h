/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pprof_read_int.h: the pprof reader's own state and the functions its files share
 * (pprof_read.c, pprof_read_wire.c, pprof_read_tables.c); nothing else includes it. The
 * public interface is pprof_read.h.
 */
#ifndef JPROF_PPROF_READ_INT_H
#define JPROF_PPROF_READ_INT_H

#include <stdbool.h>
#include <stddef.h>

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
	struct pprof_read_info *info;	     /* NULL: not asked */
	__u64 comments[PPROF_INFO_COMMENTS]; /* string indices; more are left out */
	size_t ncomments;
	__u64 time_ns;	   /* time_nanos: what the samples' time_ms labels count from */
	__u32 time_res_ms; /* jprof:time_res_ms, 0 none */
	bool clock_set;	   /* the model's clock checked (set from time_ns if it had none) */
};

/* pprof_read_wire.c */
__u64 pp_rd_varint(struct rd *r);
int pp_rd_field(struct rd *r, int *wt, __u64 *val, struct span *sp);
int pp_add_u64s(__u64 **v, size_t *n, size_t *cap, int wt, __u64 val, const struct span *sp,
		size_t max);
int pp_gunzip(const unsigned char *in, size_t n, unsigned char **ret, size_t *ret_len);

/* pprof_read_tables.c */
int pp_parse_types(struct parse *ps);
int pp_parse_funcs(struct parse *ps);
int pp_parse_maps(struct parse *ps);
int pp_parse_locs(struct parse *ps);
int pp_parse_sample(struct parse *ps, const struct span *s, jp_id *stack_buf);

/* pprof_read.c */
int pp_bad(struct parse *ps, const char *what);
int pp_over(struct parse *ps, const char *what, unsigned long long limit);
const char *pp_str_at(const struct parse *ps, __u64 i, char *buf, size_t len);
int pp_cmp_id(const void *a, const void *b);
void *pp_find_id(void *base, size_t n, size_t size, __u64 id);

#endif /* JPROF_PPROF_READ_INT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pprof_read_int.h: the pprof reader's own state and the functions its files share
 * (pprof_read.c, pprof_read_wire.c, pprof_read_tables.c, pprof_read_samples.c, pprof_merge.c);
 * nothing else includes it. The public interfaces are pprof_read.h and pprof_merge.h.
 */
#ifndef JPROF_PPROF_READ_INT_H
#define JPROF_PPROF_READ_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "pprof_read.h"
#include "util/hmap.h"
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
	jp_id model_id; /* its model function, made on first use (0: not yet) */
	int kind;	/* enum jp_frame_kind of sys, once has_kind */
	bool has_kind;
};
struct pmap {
	__u64 id, start, limit, offset, file, build_id;
	jp_id model_id; /* its model mapping, made on first use */
};
/* a location line's key for the merge's index, made by pp_merge_keys (len 0: none) */
struct pp_lkey {
	__u64 h;
	__u32 off, len; /* into parse.lkeys */
};
struct pline {
	__u64 func, line;
	struct pfunc *fn; /* func found (pp_check_sample), NULL: not yet */
	jp_id model_id;	  /* the model location of this line of its location, once made */
	struct pp_lkey key;
};
struct ploc {
	__u64 id, mapping, addr;
	size_t line0, nlines; /* into lines[] */
	jp_id model_id0;      /* the model location of a location without lines */
	bool made;	      /* its model locations made (model_id0, its lines' model_id) */
	struct pp_lkey key0;  /* of a location without lines */
	bool checked;	      /* its functions and mapping found (pp_check_samples) */
};

/* one sample as the file has it: ids and string indices, nothing of the model yet */
struct psample {
	__u64 *locs, *vals; /* the parse's buffers, valid until the next decode */
	size_t nloc, nval;
	__u32 pid, tid, nfolded;
	__u64 comm, thread, cont, main; /* string indices (0: "") */
	bool timed;
	__u64 time_ms;
};

/* a label set made from string indices, so that the next sample with them skips the strings */
struct plabels {
	__u32 pid, tid, nfolded;
	__u64 comm, thread, cont, main;
	jp_id id;
};

struct pprof_merge;

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
	/* ids 1..n in order after sorting: found by index, not searched */
	bool funcs_dense, maps_dense, locs_dense;
	/*
	 * functions by id when not dense but not far from it (jprof's ids are function * kinds):
	 * func_at[id] is the index + 1 in funcs, 0 none; NULL: searched
	 */
	__u32 *func_at;
	size_t nfunc_at;
	__u64 *sloc, *sval; /* psample's buffers */
	size_t cap_sloc, cap_sval;
	struct plabels *labs; /* label sets made, found through lab_index */
	size_t nlabs, cap_labs;
	struct hmap lab_index; /* (pid << 32 | tid, hash of the rest) -> index into labs */
	/*
	 * the last sample added: its location ids (a copy), stack and label set (id 0: none), so
	 * that the next of the same row (a row's slots are Samples one after another) takes them
	 * without looking them up
	 */
	__u64 *last_locs;
	size_t nlast_locs, cap_last_locs;
	jp_id last_stack;
	struct plabels last_lab;
	/*
	 * whole (a merge's): every sample is checked before any goes into m (a file is added
	 * whole or not at all), and the samples of no value add nothing to m (not even their
	 * stack). pm: functions and locations are found through the merge's own indexes (set
	 * for pp_commit only: pp_prepare touches neither m nor pm)
	 */
	bool whole;
	struct pprof_merge *pm;
	unsigned char *raw; /* the file gunzip'ed */
	unsigned char *lkeys; /* the location keys pp_merge_keys made */
	size_t nlkeys, cap_lkeys;
	jp_id *stack_buf;   /* PPROF_MAX_DEPTH */
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

/* pprof_read_samples.c */
int pp_decode_sample(struct parse *ps, const struct span *s, struct psample *ret);
int pp_check_sample(struct parse *ps, const struct span *s);
int pp_add_sample(struct parse *ps, const struct span *s, jp_id *stack_buf);
void pp_samples_free(struct parse *ps);
struct pmap *pp_find_map(struct parse *ps, __u64 id);
int pp_kind_of_func(const struct parse *ps, const struct pfunc *f);
/* the model location of line k of l (f its function or NULL, mp its mapping or NULL), made */
jp_id pp_make_loc(struct parse *ps, const struct ploc *l, size_t k, struct pfunc *f,
		  struct pmap *mp);
/* pprof_merge.c: pfunc's model function through the merge's index */
jp_id pp_merge_func(struct pprof_merge *pm, struct parse *ps, const struct pfunc *f, bool java);
/* the keys of every location line a sample names, for pp_merge_loc (any thread); 0, -ENOMEM */
int pp_merge_keys(struct parse *ps);
/* pp_make_loc through the merge's index of locations by their content */
jp_id pp_merge_loc(struct pprof_merge *pm, struct parse *ps, const struct ploc *l, size_t k,
		   struct pfunc *f, struct pmap *mp);
/* a copy of comment i that lives until the merge's next profile; NULL past its room */
const char *pp_merge_keep(struct pprof_merge *pm, size_t i, const char *s);

/*
 * pprof_read.c: the whole file into ps->m (ps: m, why, info, whole, pm set, the rest zero):
 * pp_prepare (read, tables, checked if whole; nothing of m, thread-safe against other
 * parses), pp_commit (the samples into m), pp_parse_free (ps zeroed; buf no longer read)
 */
int pp_read(struct parse *ps, const void *buf, size_t len);
int pp_prepare(struct parse *ps, const void *buf, size_t len);
int pp_commit(struct parse *ps);
void pp_parse_free(struct parse *ps);
int pp_bad(struct parse *ps, const char *what);
int pp_over(struct parse *ps, const char *what, unsigned long long limit);
const char *pp_str_at(const struct parse *ps, __u64 i, char *buf, size_t len);
int pp_cmp_id(const void *a, const void *b);
void *pp_find_id(void *base, size_t n, size_t size, __u64 id);
bool pp_ids_dense(const void *base, size_t n, size_t size);
/* the model location of line k of location l (made) */
static inline jp_id pp_loc_id(const struct parse *ps, const struct ploc *l, size_t k)
{
	return l->nlines ? ps->lines[l->line0 + k].model_id : l->model_id0;
}
/* sorts a table by id (unless it is in order already: jprof's own files) */
void pp_sort_ids(void *base, size_t n, size_t size);
/* pp_find_id with a table found dense */
static inline void *pp_find_id_dense(void *base, size_t n, size_t size, __u64 id, bool dense)
{
	if (dense)
		return id >= 1 && id <= n ? (char *)base + (id - 1) * size : NULL;
	return pp_find_id(base, n, size, id);
}

#endif /* JPROF_PPROF_READ_INT_H */

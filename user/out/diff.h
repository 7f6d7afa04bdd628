/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * diff.h: a differential profile of two flame-graph tries, BASE and NEW (`jprof report --diff`):
 * the functions whose share grew or shrank, folded `stack base new` lines, and the HTML page.
 * Shares are of each trie's own total unless absolute (raw weights compared). Not thread-safe.
 */
#ifndef JPROF_OUT_DIFF_H
#define JPROF_OUT_DIFF_H

#include <stdbool.h>
#include <stdio.h>

#include "out.h"

/* one function (name and kind) in both tries: self weight, and total counted once per stack */
struct diff_ent {
	const char *name; /* owned by the table */
	enum jp_frame_kind kind;
	__u64 base_self, base_total, new_self, new_total;
	/* NEW - BASE: in percentage points of each total, or in raw weight when absolute */
	double d_self, d_total;
	/* NEW / BASE of the same measure (share or weight); INFINITY when only in NEW */
	double f_self, f_total;
};

struct diff_table;

/*
 * The table of base and new, every function of either; ordered by change: d_total (then d_self)
 * descending, so the grown come first and the shrunk last. 0 or -ENOMEM/-ENOSPC.
 */
int diff_table__new(const struct profile *base, const struct profile *new, bool absolute,
		    struct diff_table **ret_t);
void diff_table__free(struct diff_table *t); /* NULL-safe */
/* the entries in order and their count */
const struct diff_ent *diff_table__ents(const struct diff_table *t, size_t *ret_n);
/* an entry grew (> 0), shrank (< 0) or did not change (0): its d_total, else its d_self */
int diff_ent__sign(const struct diff_ent *e);

/* The limit most grown and most shrunk functions as a text table (--top N). 0 or -errno. */
int out_diff_top_write(const struct diff_table *t, size_t limit, FILE *f);

/*
 * Folded `stack base new` lines (FlameGraph difffolded.pl's), sorted by stack; base's weights
 * scaled to new's total unless absolute or new is empty (difffolded.pl -n). 0 or -errno.
 */
int out_diff_folded_write(const struct profile *base, const struct profile *new, bool absolute,
			  FILE *f);

/*
 * The HTML page: new's flame graph, coloured by change against base, with both recordings'
 * headers (metas may be NULL) and the table's most changed functions. 0 or -errno.
 */
int out_diff_html_write(const struct profile *base, const struct profile *new,
			const struct diff_table *t, const struct out_meta *base_meta,
			const struct out_meta *new_meta, bool absolute, FILE *f);

#endif /* JPROF_OUT_DIFF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * view.h: a flame-graph view of the model: the stack trie (profile.h) that the folded and
 * HTML writers read, for chosen value columns, with labels turned into root frames on demand
 * and names rendered once per location (dotted Java names, source lines).
 */
#ifndef JPROF_MODEL_VIEW_H
#define JPROF_MODEL_VIEW_H

#include <stdbool.h>

#include "model.h"

struct profile;

struct model_view {
	__u32 values;	 /* bit (1u << JP_VAL_*) for each column summed into the weight */
	bool per_pid;	 /* root frame "comm [pid]" instead of "comm" */
	bool per_thread; /* and "thread [tid]" below it */
	bool dotted;	 /* java.lang.String.hashCode */
	bool lines;	 /* Class.method:42 */
	bool reverse;	 /* callers of the leaves: each stack leaf first (below any root frames) */
	double min_percent; /* leave out frames, and all above them, under this % of the total */
	bool per_container; /* root frame "[container ID]" or "[host]" above the process */
};

/* Adds the model's rows to dst (an empty or compatible trie). 0 or -ENOMEM. */
int model__to_profile(const struct model *m, const struct model_view *v, struct profile *dst);

/*
 * For each row i of m, the preorder index (the root 0, then profile__walk's order: as the HTML
 * writer numbers nodes) of the trie node p, built by model__to_profile(m, v, p), put its weight
 * on, into row_node[i] (model__rows(m) of them); SIZE_MAX when the view left it out. 0 or -ENOMEM.
 */
int model__profile_nodes(const struct model *m, const struct model_view *v, struct profile *p,
			 size_t *row_node);
/*
 * model__to_profile into an empty dst and model__profile_nodes of it in one pass (each row's
 * node kept as its weight is added): v->min_percent 0 only (-EINVAL). 0 or -ENOMEM.
 */
int model__to_profile_nodes(const struct model *m, const struct model_view *v, struct profile *dst,
			    size_t *row_node);

/*
 * The other way, for `jprof report` of a folded file: every trie path with self weight becomes
 * a row of column v; frames become functions of their name (Java kinds marked java) and
 * locations of their kind; the label set is empty. 0 or -ENOMEM.
 */
int model__from_profile(struct model *m, const struct profile *p, enum jp_value v);

#endif /* JPROF_MODEL_VIEW_H */

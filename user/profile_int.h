/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * profile_int.h: the trie's nodes and the functions its files share (profile.c,
 * profile_names.c, profile_merge.c, profile_folded.c); nothing else includes it. The
 * public interface is profile.h.
 */
#ifndef JPROF_PROFILE_INT_H
#define JPROF_PROFILE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"
#include "util/intern.h"

#define NODES_PER_SLAB 1024

/*
 * 48 bytes: most nodes of a Java profile sit on a chain (one child), so the only child is
 * held in the node and an array is allocated from the second on; siblings are found through
 * the parent's sorted array, not a link. A new child is appended (a child is found through
 * the profile's hash, not the array) and the array sorted when it is next read: inserting
 * into the sorted array made 2 million distinct roots in random order quadratic (issue 26).
 */
struct profile_node {
	const char *name; /* interned in profile->strs */
	struct profile_node *parent;
	union {
		struct profile_node *one;  /* nkids == 1 */
		struct profile_node **arr; /* nkids >= 2, sorted by (name, kind) */
	} kids;
	__u64 self;
	__u64 total;
	__u32 nkids;
	__u32 kind : 8;	    /* enum jp_frame_kind */
	__u32 unsorted : 1; /* kids.arr is not sorted yet */
};

struct node_slab {
	struct node_slab *next;
	size_t used;
	struct profile_node nodes[NODES_PER_SLAB];
};

struct profile {
	char *title;
	char *unit;
	struct profile_node root;
	size_t nnodes;
	struct node_slab *slabs;
	struct intern strs;	      /* the nodes' names */
	struct profile_node **kidtab; /* open addressing, by (parent, name, kind); cap power of 2 */
	size_t kidcap;
};

/* profile_names.c: the names of a profile's nodes, copied once (util/intern) */
void pf_names_init(struct intern *t);
const char *pf_names_intern(struct intern *t, const char *s); /* NULL: out of memory */
void pf_names_free(struct intern *t);

/* profile.c */
__u64 pf_sat_add(__u64 a, __u64 b);
void pf_kids_sort(const struct profile_node *cn);
struct profile_node *pf_kid_find(const struct profile_node *parent, const char *name,
				 enum jp_frame_kind kind, __u32 *ret_pos);
struct profile_node *pf_kid_get(struct profile *p, struct profile_node *parent, const char *name,
				enum jp_frame_kind kind);
enum jp_frame_kind pf_kind_valid(enum jp_frame_kind k);

#endif /* JPROF_PROFILE_INT_H */

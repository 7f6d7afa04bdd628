/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* profile.h: the aggregate: a trie of frames (root first) with weights. Writers read only this. */
#ifndef JPROF_PROFILE_H
#define JPROF_PROFILE_H

#include <linux/types.h>
#include <stddef.h>
#include <stdio.h>

#include "frame.h"

struct prof_frame {
	const char *name; /* copied (interned) by profile__add */
	enum jp_frame_kind kind;
};

struct profile;
struct profile_node;

/* unit: what weights count ("samples", "ns"); title: shown by writers. NULL + errno on failure. */
struct profile *profile__new(const char *title, const char *unit);
void profile__free(struct profile *p); /* NULL-safe */

/* Adds one stack, frames[0] is the root. Returns 0 or -ENOMEM. n == 0 adds to the root. */
int profile__add(struct profile *p, const struct prof_frame *frames, size_t n, __u64 weight);
/* profile__add, and the node the weight went on in *ret_leaf (stable until profile__free) */
int profile__add_leaf(struct profile *p, const struct prof_frame *frames, size_t n, __u64 weight,
		      const struct profile_node **ret_leaf);
/* s interned in the profile's names (stable until profile__free); NULL when out of memory */
const char *profile__intern(struct profile *p, const char *s);

const char *profile__title(const struct profile *p);
const char *profile__unit(const struct profile *p);
__u64 profile__total(const struct profile *p);	     /* sum of all weights */
size_t profile__node_count(const struct profile *p); /* nodes, root excluded */

/* Tree walk. The root has name "all" and kind JP_FK_ROOT. Children are sorted by name, then kind. */
const struct profile_node *profile__root(const struct profile *p);
const struct profile_node *profile_node__child(const struct profile_node *n);	/* first, or NULL */
const struct profile_node *profile_node__next(const struct profile_node *n);	/* sibling, or NULL */
const char *profile_node__name(const struct profile_node *n);
enum jp_frame_kind profile_node__kind(const struct profile_node *n);
__u64 profile_node__total(const struct profile_node *n); /* self + children */
__u64 profile_node__self(const struct profile_node *n);
/* the parent (NULL for the root) and the number of children */
const struct profile_node *profile_node__parent(const struct profile_node *n);
size_t profile_node__child_count(const struct profile_node *n);

/*
 * Depth first over every node below the root, parents before children, in child order.
 * fn gets the node's path from the root: path[0] is a child of the root, path[depth - 1]
 * the node. It returns 0 to go on, 1 to skip the node's children, < 0 to stop (returned).
 * 0, -ENOMEM, or fn's stop value.
 */
typedef int (*profile_walk_fn)(void *ctx, const struct profile_node *const *path, size_t depth);
int profile__walk(const struct profile *p, profile_walk_fn fn, void *ctx);

/*
 * Adds every stack of src to dst (dst != src, else -EINVAL). Returns 0 or -ENOMEM; on failure
 * dst's weights are unchanged (it may hold new zero-weight nodes).
 */
int profile__merge(struct profile *dst, const struct profile *src);

/*
 * Like profile__merge, but each src frame is first mapped by map(ctx, name, kind, &out), which
 * fills out (out->name may point into a buffer reused across calls: dst copies it) and returns
 * 0 or -errno (passed up). Frames that map to the same (name, kind) merge. map is called twice
 * per src node.
 */
typedef int (*profile_map_fn)(void *ctx, const char *name, enum jp_frame_kind kind,
			      struct prof_frame *out);
int profile__merge_mapped(struct profile *dst, const struct profile *src, profile_map_fn map,
			  void *ctx);

/*
 * Adds FlameGraph folded stacks ("a;b;c 12" per line) from f. Suffixes _[k] _[j] _[i] _[0] map
 * back to kinds; leading "[...]" frames without a suffix (except "[unknown]") become JP_FK_ROOT
 * markers, every other frame JP_FK_NATIVE. Blank lines are skipped; an empty stack (" 5") is
 * the root's own weight. Returns 0, -ENOMEM, -errno on read errors, or -EINVAL at the first
 * malformed line (no integer weight, NUL byte), whose 1-based number goes to *ret_bad_line
 * when that is not NULL. Lines before it stay added.
 */
int profile__read_folded(struct profile *p, FILE *f, size_t *ret_bad_line);
/*
 * Same, and the reader's budgets (the input may be another user's): 256 MiB read, frame names
 * of 64 KiB, stacks of 8192 frames, 1Mi distinct nodes in the trie. Crossing one returns
 * -E2BIG with its line in *ret_bad_line and a reason naming the budget in why_buf.
 */
int profile__read_folded_why(struct profile *p, FILE *f, size_t *ret_bad_line, char *why_buf,
			     size_t why_len);

#endif /* JPROF_PROFILE_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile_merge.c: one trie merged into another, its names mapped on the way if asked */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "profile_int.h"

/*
 * Walks src depth first, keeping d as the dst node matching s's parent. Pass 0 creates the
 * missing nodes (so running out of memory leaves dst's weights as they were), pass 1 adds.
 */
static int merge_pass(struct profile *dst, const struct profile *src, profile_map_fn map, void *ctx,
		      int adding)
{
	const struct profile_node *s = profile_node__child(&src->root), *next;
	struct profile_node *d = &dst->root, *dc;
	struct prof_frame f;
	__u32 pos;
	int err;

	while (s) {
		f.name = s->name;
		f.kind = s->kind;
		if (map) {
			err = map(ctx, s->name, s->kind, &f);
			if (err)
				return err;
			f.kind = pf_kind_valid(f.kind);
		}
		if (adding) {
			pf_kids_sort(d);
			dc = pf_kid_find(d, f.name, f.kind, &pos);
			if (!dc) /* pass 0 created it */
				return -EFAULT;
			dc->self = pf_sat_add(dc->self, s->self);
			dc->total = pf_sat_add(dc->total, s->total);
		} else {
			dc = pf_kid_get(dst, d, f.name, f.kind);
			if (!dc)
				return -ENOMEM;
		}
		if (s->nkids) {
			s = profile_node__child(s);
			d = dc;
			continue;
		}
		/* the next sibling of s or of its nearest ancestor below the root */
		for (next = profile_node__next(s); !next && s->parent != &src->root;
		     next = profile_node__next(s)) {
			s = s->parent;
			d = d->parent;
		}
		s = next;
	}
	if (adding) {
		dst->root.self = pf_sat_add(dst->root.self, src->root.self);
		dst->root.total = pf_sat_add(dst->root.total, src->root.total);
	}
	return 0;
}

int profile__merge_mapped(struct profile *dst, const struct profile *src, profile_map_fn map,
			  void *ctx)
{
	int err;

	if (dst == src)
		return -EINVAL;
	err = merge_pass(dst, src, map, ctx, 0);
	if (err)
		return err;
	return merge_pass(dst, src, map, ctx, 1);
}

int profile__merge(struct profile *dst, const struct profile *src)
{
	return profile__merge_mapped(dst, src, NULL, NULL);
}

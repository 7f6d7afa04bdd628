// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profile.c: the aggregate trie (child arrays sorted when read, a hash of (parent, name, kind) to
 * find a child, interned names), merge and folded reader. This file is the trie; its names
 * are interned by profile_names.c, tries merged by profile_merge.c, folded stacks read by
 * profile_folded.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "profile_int.h"

__u64 pf_sat_add(__u64 a, __u64 b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

const char *profile__intern(struct profile *p, const char *s)
{
	return pf_names_intern(&p->strs, s);
}

struct profile *profile__new(const char *title, const char *unit)
{
	struct profile *p;

	p = calloc(1, sizeof(*p));
	if (!p)
		goto out_nomem;
	pf_names_init(&p->strs);
	p->title = strdup(title ? title : "");
	p->unit = strdup(unit ? unit : "samples");
	if (!p->title || !p->unit)
		goto out_free;
	p->root.name = "all";
	p->root.kind = JP_FK_ROOT;
	return p;
out_free:
	profile__free(p);
out_nomem:
	errno = ENOMEM;
	return NULL;
}

static void node_free_kids(struct profile_node *n)
{
	if (n->nkids >= 2)
		free(n->kids.arr);
}

/* child i of n (i < n->nkids) */
static struct profile_node *kid_at(const struct profile_node *n, __u32 i)
{
	return n->nkids == 1 ? n->kids.one : n->kids.arr[i];
}

void profile__free(struct profile *p)
{
	struct node_slab *s, *next;

	if (!p)
		return;
	node_free_kids(&p->root);
	for (s = p->slabs; s; s = next) {
		next = s->next;
		for (size_t i = 0; i < s->used; i++)
			node_free_kids(&s->nodes[i]);
		free(s);
	}
	pf_names_free(&p->strs);
	free(p->kidtab);
	free(p->title);
	free(p->unit);
	free(p);
}

static struct profile_node *node_alloc(struct profile *p)
{
	struct node_slab *s = p->slabs;

	if (!s || s->used == NODES_PER_SLAB) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->next = p->slabs;
		p->slabs = s;
	}
	return &s->nodes[s->used++];
}

static int frame_cmp(const char *name, enum jp_frame_kind kind, const struct profile_node *n)
{
	int c;

	if (name != n->name) {
		c = strcmp(name, n->name);
		if (c)
			return c;
	}
	return (int)kind - (int)n->kind;
}

static size_t kid_hash(const struct profile_node *parent, const char *name, __u32 kind)
{
	__u64 h = (__u64)(uintptr_t)parent * 0x9e3779b97f4a7c15ULL;

	h ^= (__u64)(uintptr_t)name * 0xc2b2ae3d27d4eb4fULL + kind;
	h ^= h >> 29;
	return (size_t)h;
}

/* the slot of child (parent, interned name, kind) in the hash, or of the empty slot to fill */
static size_t kid_slot(const struct profile *p, const struct profile_node *parent, const char *name,
		       __u32 kind)
{
	size_t i = kid_hash(parent, name, kind) & (p->kidcap - 1);

	for (; p->kidtab[i]; i = (i + 1) & (p->kidcap - 1)) {
		const struct profile_node *n = p->kidtab[i];

		if (n->parent == parent && n->name == name && n->kind == kind)
			break;
	}
	return i;
}

/* room for one more node in the hash */
static int kidtab_reserve(struct profile *p)
{
	struct profile_node **nt;
	size_t ncap;

	if ((p->nnodes + 1) * 2 <= p->kidcap)
		return 0;
	ncap = p->kidcap ? p->kidcap * 2 : 1024;
	if (ncap < p->kidcap || ncap > SIZE_MAX / sizeof(*nt))
		return -ENOMEM;
	nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < p->kidcap; i++) {
		struct profile_node *n = p->kidtab[i];
		size_t j;

		if (!n)
			continue;
		for (j = kid_hash(n->parent, n->name, n->kind) & (ncap - 1); nt[j];
		     j = (j + 1) & (ncap - 1))
			;
		nt[j] = n;
	}
	free(p->kidtab);
	p->kidtab = nt;
	p->kidcap = ncap;
	return 0;
}

static int kid_ptr_cmp(const void *a, const void *b)
{
	const struct profile_node *x = *(struct profile_node *const *)a;
	const struct profile_node *y = *(struct profile_node *const *)b;

	return frame_cmp(x->name, x->kind, y);
}

/* sorts n's children if some came out of order; a reader's view, so n may be const there */
void pf_kids_sort(const struct profile_node *cn)
{
	struct profile_node *n = (struct profile_node *)cn;

	if (!n->unsorted)
		return;
	qsort(n->kids.arr, n->nkids, sizeof(*n->kids.arr), kid_ptr_cmp);
	n->unsorted = 0;
}

/* binary search among parent's children: true and its place, or false and the insertion point */
static bool kid_index(const struct profile_node *parent, const char *name, enum jp_frame_kind kind,
		      __u32 *ret_pos)
{
	__u32 lo = 0, hi = parent->nkids;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;
		int c = frame_cmp(name, kind, kid_at(parent, mid));

		if (!c) {
			*ret_pos = mid;
			return true;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*ret_pos = lo;
	return false;
}

/* the child (name, kind) of parent, or NULL with *ret_pos its insertion point */
struct profile_node *pf_kid_find(const struct profile_node *parent, const char *name,
				 enum jp_frame_kind kind, __u32 *ret_pos)
{
	return kid_index(parent, name, kind, ret_pos) ? kid_at(parent, *ret_pos) : NULL;
}

struct profile_node *pf_kid_get(struct profile *p, struct profile_node *parent, const char *name,
				enum jp_frame_kind kind)
{
	struct profile_node *n;
	size_t slot;

	name = pf_names_intern(&p->strs, name);
	if (!name || kidtab_reserve(p))
		return NULL;
	slot = kid_slot(p, parent, name, kind);
	if (p->kidtab[slot])
		return p->kidtab[slot];
	/* arrays hold 2, 4, 8 ... children: one grows when its count is a power of two */
	if (parent->nkids >= 2 && !(parent->nkids & (parent->nkids - 1))) {
		struct profile_node **nk;
		size_t sz;

		if (parent->nkids > UINT32_MAX / 2 ||
		    __builtin_mul_overflow((size_t)parent->nkids * 2, sizeof(*nk), &sz))
			return NULL;
		nk = realloc(parent->kids.arr, sz);
		if (!nk)
			return NULL;
		parent->kids.arr = nk;
	} else if (parent->nkids == 1) {
		struct profile_node **nk = malloc(2 * sizeof(*nk));

		if (!nk)
			return NULL;
		nk[0] = parent->kids.one;
		parent->kids.arr = nk;
	}
	n = node_alloc(p);
	if (!n) {
		/* the array may have been made for this child: back to the one it had */
		if (parent->nkids == 1) {
			struct profile_node *one = parent->kids.arr[0];

			free(parent->kids.arr);
			parent->kids.one = one;
		}
		return NULL;
	}
	n->name = name;
	n->kind = kind;
	n->parent = parent;
	if (!parent->nkids) {
		parent->kids.one = n;
	} else {
		parent->kids.arr[parent->nkids] = n;
		if (!parent->unsorted &&
		    frame_cmp(name, kind, parent->kids.arr[parent->nkids - 1]) < 0)
			parent->unsorted = 1;
	}
	p->kidtab[slot] = n;
	parent->nkids++;
	p->nnodes++;
	return n;
}

enum jp_frame_kind pf_kind_valid(enum jp_frame_kind k)
{
	return (unsigned int)k < JP_FK_MAX ? k : JP_FK_NATIVE;
}

/* adds w to n's self weight and to the totals of n and its ancestors */
static void weigh_path(struct profile_node *n, __u64 w)
{
	n->self = pf_sat_add(n->self, w);
	for (; n; n = n->parent)
		n->total = pf_sat_add(n->total, w);
}

int profile__add_leaf(struct profile *p, const struct prof_frame *frames, size_t n, __u64 weight,
		      const struct profile_node **ret_leaf)
{
	struct profile_node *cur = &p->root;

	/* create the whole path first, so a failure leaves every weight untouched */
	for (size_t i = 0; i < n; i++) {
		const char *name = frames[i].name ? frames[i].name : "";

		cur = pf_kid_get(p, cur, name, pf_kind_valid(frames[i].kind));
		if (!cur)
			return -ENOMEM;
	}
	weigh_path(cur, weight);
	if (ret_leaf)
		*ret_leaf = cur;
	return 0;
}

int profile__add(struct profile *p, const struct prof_frame *frames, size_t n, __u64 weight)
{
	return profile__add_leaf(p, frames, n, weight, NULL);
}

const char *profile__title(const struct profile *p)
{
	return p->title;
}

const char *profile__unit(const struct profile *p)
{
	return p->unit;
}

__u64 profile__total(const struct profile *p)
{
	return p->root.total;
}

size_t profile__node_count(const struct profile *p)
{
	return p->nnodes;
}

const struct profile_node *profile__root(const struct profile *p)
{
	return &p->root;
}

int profile__walk(const struct profile *p, profile_walk_fn fn, void *ctx)
{
	const struct profile_node **path = NULL, *n = profile_node__child(&p->root);
	size_t depth = 0, cap = 0;
	int ret = 0;

	while (n) {
		if (depth == cap) {
			size_t nc = cap ? cap * 2 : 256;
			const struct profile_node **np = realloc(path, nc * sizeof(*np));

			if (!np) {
				ret = -ENOMEM;
				break;
			}
			path = np;
			cap = nc;
		}
		path[depth++] = n;
		ret = fn(ctx, path, depth);
		if (ret < 0)
			break;
		if (ret == 0 && profile_node__child(n)) {
			n = profile_node__child(n);
			continue;
		}
		ret = 0;
		/* the next sibling of the node or of its nearest ancestor that has one */
		for (n = NULL; depth && !n; depth--)
			n = profile_node__next(path[depth - 1]);
	}
	free(path);
	return ret;
}

const struct profile_node *profile_node__child(const struct profile_node *n)
{
	if (!n->nkids)
		return NULL;
	pf_kids_sort(n);
	return kid_at(n, 0);
}

/* the sibling after n: found by n's key in its parent's sorted array */
const struct profile_node *profile_node__next(const struct profile_node *n)
{
	const struct profile_node *p = n->parent;
	__u32 pos;

	if (!p || p->nkids < 2)
		return NULL;
	pf_kids_sort(p);
	if (!kid_index(p, n->name, n->kind, &pos) || pos + 1 == p->nkids)
		return NULL;
	return p->kids.arr[pos + 1];
}

const struct profile_node *profile_node__parent(const struct profile_node *n)
{
	return n->parent;
}

size_t profile_node__child_count(const struct profile_node *n)
{
	return n->nkids;
}

const char *profile_node__name(const struct profile_node *n)
{
	return n->name;
}

enum jp_frame_kind profile_node__kind(const struct profile_node *n)
{
	return n->kind;
}

__u64 profile_node__total(const struct profile_node *n)
{
	return n->total;
}

__u64 profile_node__self(const struct profile_node *n)
{
	return n->self;
}

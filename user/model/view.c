// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* view.c: model -> stack trie for the flame-graph writers; one name rendering per location. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "profile.h"
#include "util/hmap.h"

#define VIEW_MAX_FRAMES 8192
#define VIEW_ROOT_LEN	160

struct view_ctx {
	const struct model *m;
	const struct model_view *v;
	struct profile *dst;
	const char **names; /* by location id, rendered on first use (in dst's names) */
	size_t nnames;
	char proc[VIEW_ROOT_LEN], thread[VIEW_ROOT_LEN], container[VIEW_ROOT_LEN];
	struct prof_frame frames[VIEW_MAX_FRAMES];
	size_t nroots; /* of the frames row_frames made, the roots (process, thread, container) */
	char *buf; /* a name being rendered */
	size_t cap;
};

/* a location's name, interned in the profile being built: each is rendered once */
static const char *render(struct view_ctx *c, const struct jp_location *loc)
{
	const struct jp_func *f = model__get_func(c->m, loc->func);
	const char *name = f ? f->name : "[unknown]";
	bool line = f && f->java && c->v->lines && loc->line > 0;
	size_t need = strlen(name) + 16;
	char *b;

	if (need > c->cap) {
		b = realloc(c->buf, need);
		if (!b)
			return NULL;
		c->buf = b;
		c->cap = need;
	}
	if (line)
		snprintf(c->buf, c->cap, "%s:%d", name, loc->line);
	else
		memcpy(c->buf, name, need - 15);
	if (f && f->java && c->v->dotted) {
		/* internal class names use '/', which no method name may contain */
		for (char *p = c->buf; *p && *p != ':'; p++)
			if (*p == '/')
				*p = '.';
	}
	return profile__intern(c->dst, c->buf);
}

static const char *loc_name(struct view_ctx *c, jp_id id, enum jp_frame_kind *kind)
{
	const struct jp_location *loc = model__get_location(c->m, id);

	*kind = loc ? loc->kind : JP_FK_NATIVE;
	if (!loc || id >= c->nnames)
		return "[unknown]";
	if (!c->names[id])
		c->names[id] = render(c, loc);
	return c->names[id] ? c->names[id] : "[?]";
}

/* row r's frames, root first, into c->frames: how many */
static size_t row_frames(struct view_ctx *c, const struct jp_sample_row *r)
{
	const struct jp_labels *l = model__get_labels(c->m, r->labels);
	const jp_id *locs;
	size_t n, k = 0;

	if (l && (l->comm[0] || l->pid)) { /* a folded file's model has its roots in the stacks */
		if (c->v->per_container) {
			if (l->container[0])
				snprintf(c->container, sizeof(c->container), "[container %s]",
					 l->container);
			else
				snprintf(c->container, sizeof(c->container), "[host]");
			c->frames[k++] = (struct prof_frame){c->container, JP_FK_ROOT};
		}
		if (c->v->per_pid && l->nfolded) /* exited processes, added up (model__fold_pids) */
			snprintf(c->proc, sizeof(c->proc), "%s [%u exited processes]%s%s", l->comm,
				 l->nfolded, l->main && l->main[0] ? " " : "",
				 l->main ? l->main : "");
		else if (c->v->per_pid && l->main &&
			 l->main[0]) /* as a person knows it (issue 25) */
			snprintf(c->proc, sizeof(c->proc), "%s [%u] %s", l->comm, l->pid, l->main);
		else if (c->v->per_pid)
			snprintf(c->proc, sizeof(c->proc), "%s [%u]", l->comm, l->pid);
		else
			snprintf(c->proc, sizeof(c->proc), "%s", l->comm);
		c->frames[k++] = (struct prof_frame){c->proc, JP_FK_ROOT};
		/* a sample of the whole process (tid 0: the wall view's pause band) is no thread */
		if (c->v->per_thread && !l->nfolded && (l->tid || !l->pid)) {
			snprintf(c->thread, sizeof(c->thread), "%s [%u]",
				 l->thread[0] ? l->thread : l->comm, l->tid);
			c->frames[k++] = (struct prof_frame){c->thread, JP_FK_ROOT};
		}
	}
	c->nroots = k;
	locs = model__get_stack(c->m, r->stack, &n);
	for (size_t i = 0; i < n && k < VIEW_MAX_FRAMES; i++) {
		size_t at = c->v->reverse ? i : n - 1 - i; /* the trie wants its root first */
		enum jp_frame_kind kind;
		const char *name = loc_name(c, locs[at], &kind);

		c->frames[k++] = (struct prof_frame){name, kind};
	}
	return k;
}

static __u64 row_weight(const struct view_ctx *c, const struct jp_sample_row *r)
{
	__u64 w = 0;

	for (int v = 0; v < JP_VAL_MAX; v++)
		if (c->v->values & (1u << v))
			w += r->values[v];
	return w;
}

/* a row into the trie; its node in *leaf (NULL: none, no weight or no frame) */
static int add_row(struct view_ctx *c, const struct jp_sample_row *r,
		   const struct profile_node **leaf)
{
	__u64 w = row_weight(c, r);
	size_t k;

	*leaf = NULL;
	if (!w)
		return 0;
	k = row_frames(c, r);
	return profile__add_leaf(c->dst, c->frames, k, w, k ? leaf : NULL);
}

struct prune_ctx {
	struct profile *dst;
	__u64 min;
	struct prof_frame *frames;
	size_t cap;
};

/* keeps a node (and its self weight) only while it and all above it weigh at least min */
static int prune_node(void *vctx, const struct profile_node *const *path, size_t depth)
{
	struct prune_ctx *c = vctx;
	const struct profile_node *n = path[depth - 1];

	if (profile_node__total(n) < c->min)
		return 1; /* left out, with everything above it */
	if (depth > c->cap) {
		size_t nc = depth * 2;
		struct prof_frame *nf = realloc(c->frames, nc * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		c->frames = nf;
		c->cap = nc;
	}
	c->frames[depth - 1].name = profile_node__name(n);
	c->frames[depth - 1].kind = profile_node__kind(n);
	return profile_node__self(n) ? profile__add(c->dst, c->frames, depth, profile_node__self(n)) :
				       0;
}

static int prune_into(const struct profile *src, __u64 min, struct profile *dst)
{
	struct prune_ctx c = { .dst = dst, .min = min };
	int err = profile__walk(src, prune_node, &c);

	free(c.frames);
	return err;
}

/* the rows into dst; leaf_of (min_percent 0): each row's node, NULL where none */
static int to_profile(const struct model *m, const struct model_view *v, struct profile *dst,
		      const struct profile_node **leaf_of)
{
	struct model_counts cnt;
	struct profile *tmp = NULL;
	struct view_ctx *c;
	int err = 0;

	if (v->min_percent > 0) {
		struct model_view all = *v;

		all.min_percent = 0;
		tmp = profile__new(profile__title(dst), profile__unit(dst));
		if (!tmp)
			return -ENOMEM;
		err = leaf_of ? -EINVAL : model__to_profile(m, &all, tmp);
		if (!err)
			err = prune_into(
				tmp, (__u64)(v->min_percent / 100.0 * (double)profile__total(tmp)),
				dst);
		profile__free(tmp);
		return err;
	}

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	model__counts(m, &cnt);
	c->m = m;
	c->v = v;
	c->dst = dst;
	c->nnames = cnt.locations + 1;
	c->names = calloc(c->nnames, sizeof(*c->names));
	if (!c->names)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < model__rows(m); i++) {
		struct jp_sample_row rb;
		const struct profile_node *leaf;

		err = add_row(c, model__row(m, i, &rb), leaf_of ? &leaf_of[i] : &leaf);
	}
	free(c->names);
	free(c->buf);
	free(c);
	return err;
}

int model__to_profile(const struct model *m, const struct model_view *v, struct profile *dst)
{
	return to_profile(m, v, dst, NULL);
}

static bool kind_is_java(enum jp_frame_kind k)
{
	return k == JP_FK_JIT || k == JP_FK_INLINED || k == JP_FK_INTERP;
}

struct from_ctx {
	struct model *m;
	jp_id labels, *locs;
	size_t cap;
	enum jp_value v;
};

/* every node with self weight: a row of its path, leaf first */
static int from_node(void *vctx, const struct profile_node *const *path, size_t depth)
{
	struct from_ctx *c = vctx;
	const struct profile_node *n = path[depth - 1];

	if (!profile_node__self(n))
		return 0;
	if (depth > c->cap) {
		size_t nc = depth * 2;
		jp_id *nl = realloc(c->locs, nc * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		c->locs = nl;
		c->cap = nc;
	}
	for (size_t i = 0; i < depth; i++) {
		const struct profile_node *f = path[depth - 1 - i];
		enum jp_frame_kind k = profile_node__kind(f);
		struct jp_location loc = {
			.func = model__func(c->m, profile_node__name(f), "", kind_is_java(k)),
			.kind = k,
		};

		c->locs[i] = loc.func ? model__location(c->m, &loc) : 0;
		if (!c->locs[i])
			return -ENOMEM;
	}
	return model__add(c->m, model__stack(c->m, c->locs, depth), c->labels, c->v,
			  profile_node__self(n));
}

int model__from_profile(struct model *m, const struct profile *p, enum jp_value v)
{
	struct jp_labels none = { .comm = "", .thread = "", .container = "" };
	struct from_ctx c = { .m = m, .labels = model__labels(m, &none), .v = v };
	int err = c.labels ? profile__walk(p, from_node, &c) : -ENOMEM;

	free(c.locs);
	return err;
}

struct index_ctx {
	struct hmap idx;   /* node -> preorder index */
	struct hmap edges; /* (parent index << 8 | kind, name) -> child index */
	size_t n;
};

/* preorder indices as the HTML writer numbers nodes: the root 0, then the walk's order */
static int index_node(void *vctx, const struct profile_node *const *path, size_t depth)
{
	struct index_ctx *c = vctx;
	const struct profile_node *n = path[depth - 1];
	__u64 *pi = depth > 1 ? hmap_find(&c->idx, (__u64)(uintptr_t)path[depth - 2]) : NULL;
	__u64 parent = pi ? *pi : 0, me = ++c->n;

	if (hmap_put(&c->idx, (__u64)(uintptr_t)n, me) < 0 ||
	    hmap_put2(&c->edges, parent << 8 | profile_node__kind(n),
		      (__u64)(uintptr_t)profile_node__name(n), me) < 0)
		return -ENOMEM;
	return 0;
}

int model__profile_nodes(const struct model *m, const struct model_view *v, struct profile *p,
			 size_t *row_node)
{
	struct index_ctx ic = {0};
	struct model_counts cnt;
	struct view_ctx *c = calloc(1, sizeof(*c));
	int err = 0;

	if (!c)
		return -ENOMEM;
	model__counts(m, &cnt);
	c->m = m;
	c->v = v;
	c->dst = p;
	c->nnames = cnt.locations + 1;
	c->names = calloc(c->nnames, sizeof(*c->names));
	err = c->names ? profile__walk(p, index_node, &ic) : -ENOMEM;
	for (size_t i = 0; !err && i < model__rows(m); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(m, i, &rb);
		size_t k = row_weight(c, r) ? row_frames(c, r) : 0, at = 0, d;

		row_node[i] = SIZE_MAX;
		if (!k)
			continue;
		for (d = 0; d < k; d++) {
			/*
			 * every name is the profile's own (interned): compared by pointer; a frame's
			 * is already (render), but for loc_name's "[unknown]" and "[?]"
			 */
			const char *name = d < c->nroots || c->frames[d].name[0] == '['
						   ? profile__intern(p, c->frames[d].name)
						   : c->frames[d].name;
			__u64 *e = name ? hmap_find2(&ic.edges, (__u64)at << 8 | c->frames[d].kind,
						     (__u64)(uintptr_t)name)
					: NULL;

			if (!name) {
				err = -ENOMEM;
				break;
			}
			if (!e)
				break; /* cut by min_percent */
			at = (size_t)*e;
		}
		if (d == k)
			row_node[i] = at;
	}
	hmap_free(&ic.idx);
	hmap_free(&ic.edges);
	free(c->names);
	free(c->buf);
	free(c);
	return err;
}

/* preorder indices of the nodes, by node (as index_node numbers them, without the edges) */
static int number_node(void *vctx, const struct profile_node *const *path, size_t depth)
{
	struct index_ctx *c = vctx;

	return hmap_put(&c->idx, (__u64)(uintptr_t)path[depth - 1], ++c->n) < 0 ? -ENOMEM : 0;
}

int model__to_profile_nodes(const struct model *m, const struct model_view *v, struct profile *dst,
			    size_t *row_node)
{
	const struct profile_node **leaf;
	struct index_ctx ic = {0};
	size_t n = model__rows(m);
	int err;

	if (v->min_percent > 0)
		return -EINVAL;
	leaf = calloc(n ? n : 1, sizeof(*leaf));
	if (!leaf)
		return -ENOMEM;
	err = to_profile(m, v, dst, leaf);
	if (!err)
		err = profile__walk(dst, number_node, &ic);
	for (size_t i = 0; !err && i < n; i++) {
		__u64 *at = leaf[i] ? hmap_find(&ic.idx, (__u64)(uintptr_t)leaf[i]) : NULL;

		row_node[i] = at ? (size_t)*at : SIZE_MAX;
	}
	hmap_free(&ic.idx);
	free(leaf);
	return err;
}

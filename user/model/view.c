// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* view.c: model -> stack trie for the flame-graph writers; one name rendering per location. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "profile.h"

#define VIEW_MAX_FRAMES 8192
#define VIEW_ROOT_LEN	128

struct view_ctx {
	const struct model *m;
	const struct model_view *v;
	struct profile *dst;
	char **names; /* by location id, rendered on first use */
	size_t nnames;
	char proc[VIEW_ROOT_LEN], thread[VIEW_ROOT_LEN];
	struct jp_frame frames[VIEW_MAX_FRAMES];
};

static char *render(const struct view_ctx *c, const struct jp_location *loc)
{
	const struct jp_func *f = model__get_func(c->m, loc->func);
	const char *name = f ? f->name : "[unknown]";
	char *s;
	int n;

	if (f && f->java && c->v->lines && loc->line > 0)
		n = asprintf(&s, "%s:%d", name, loc->line);
	else
		n = asprintf(&s, "%s", name);
	if (n < 0)
		return NULL;
	if (f && f->java && c->v->dotted) {
		/* internal class names use '/', which no method name may contain */
		for (char *p = s; *p && *p != ':'; p++)
			if (*p == '/')
				*p = '.';
	}
	return s;
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

static int add_row(struct view_ctx *c, const struct jp_sample_row *r)
{
	const struct jp_labels *l = model__get_labels(c->m, r->labels);
	const jp_id *locs;
	__u64 w = 0;
	size_t n, k = 0;

	for (int v = 0; v < JP_VAL_MAX; v++)
		if (c->v->values & (1u << v))
			w += r->values[v];
	if (!w)
		return 0;
	if (l && (l->comm[0] || l->pid)) { /* a folded file's model has its roots in the stacks */
		if (c->v->per_pid)
			snprintf(c->proc, sizeof(c->proc), "%s [%u]", l->comm, l->pid);
		else
			snprintf(c->proc, sizeof(c->proc), "%s", l->comm);
		c->frames[k++] = (struct jp_frame){c->proc, JP_FK_ROOT};
		if (c->v->per_thread) {
			snprintf(c->thread, sizeof(c->thread), "%s [%u]",
				 l->thread[0] ? l->thread : l->comm, l->tid);
			c->frames[k++] = (struct jp_frame){c->thread, JP_FK_ROOT};
		}
	}
	locs = model__get_stack(c->m, r->stack, &n);
	for (size_t i = 0; i < n && k < VIEW_MAX_FRAMES; i++) {
		size_t at = c->v->reverse ? i : n - 1 - i; /* the trie wants its root first */
		enum jp_frame_kind kind;
		const char *name = loc_name(c, locs[at], &kind);

		c->frames[k++] = (struct jp_frame){name, kind};
	}
	return profile__add(c->dst, c->frames, k, w);
}

/* adds to dst the paths of src whose every node weighs at least min (the rest is left out) */
static int prune_into(const struct profile *src, __u64 min, struct profile *dst)
{
	const struct profile_node **path = NULL, *n;
	struct jp_frame *frames = NULL;
	size_t depth = 0, cap = 0;
	int err = 0;

	for (n = profile_node__child(profile__root(src)); n && !err;) {
		bool keep = profile_node__total(n) >= min;

		if (keep) {
			if (depth == cap) {
				size_t nc = cap ? cap * 2 : 256;
				const struct profile_node **np = realloc(path, nc * sizeof(*np));
				struct jp_frame *nf = np ? realloc(frames, nc * sizeof(*nf)) : NULL;

				if (np)
					path = np;
				if (!np || !nf) {
					err = -ENOMEM;
					break;
				}
				frames = nf;
				cap = nc;
			}
			path[depth] = n;
			frames[depth].name = profile_node__name(n);
			frames[depth].kind = profile_node__kind(n);
			depth++;
			if (profile_node__self(n))
				err = profile__add(dst, frames, depth, profile_node__self(n));
			if (profile_node__child(n)) {
				n = profile_node__child(n);
				continue;
			}
		} else if (profile_node__next(n)) {
			n = profile_node__next(n);
			continue;
		}
		while (depth && !profile_node__next(path[depth - 1]))
			depth--;
		if (!depth)
			break;
		n = profile_node__next(path[--depth]);
	}
	free(path);
	free(frames);
	return err;
}

int model__to_profile(const struct model *m, const struct model_view *v, struct profile *dst)
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
		err = model__to_profile(m, &all, tmp);
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
	for (size_t i = 0; !err && i < model__rows(m); i++)
		err = add_row(c, model__row(m, i));
	for (size_t i = 0; c->names && i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c);
	return err;
}

static bool kind_is_java(enum jp_frame_kind k)
{
	return k == JP_FK_JIT || k == JP_FK_INLINED || k == JP_FK_INTERP;
}

int model__from_profile(struct model *m, const struct profile *p, enum jp_value v)
{
	struct jp_labels none = {.comm = "", .thread = "", .container = ""};
	const struct profile_node **path = NULL, *n;
	jp_id *locs = NULL, labels = model__labels(m, &none);
	size_t depth = 0, cap = 0;
	int err = labels ? 0 : -ENOMEM;

	for (n = profile_node__child(profile__root(p)); n && !err;) {
		if (depth == cap) {
			size_t nc = cap ? cap * 2 : 256;
			const struct profile_node **np = realloc(path, nc * sizeof(*np));
			jp_id *nl = np ? realloc(locs, nc * sizeof(*nl)) : NULL;

			if (np)
				path = np;
			if (!np || !nl) {
				err = -ENOMEM;
				break;
			}
			locs = nl;
			cap = nc;
		}
		path[depth++] = n;
		if (profile_node__self(n)) {
			/* the model's stacks are leaf first */
			for (size_t i = 0; i < depth && !err; i++) {
				enum jp_frame_kind k = profile_node__kind(path[depth - 1 - i]);
				struct jp_location loc = {
					.func = model__func(m,
							    profile_node__name(path[depth - 1 - i]),
							    "", kind_is_java(k)),
					.kind = k,
				};

				locs[i] = loc.func ? model__location(m, &loc) : 0;
				if (!locs[i])
					err = -ENOMEM;
			}
			if (!err)
				err = model__add(m, model__stack(m, locs, depth), labels, v,
						 profile_node__self(n));
		}
		if (profile_node__child(n)) {
			n = profile_node__child(n);
			continue;
		}
		while (depth && !profile_node__next(path[depth - 1]))
			depth--;
		if (!depth)
			break;
		n = profile_node__next(path[--depth]);
	}
	free(path);
	free(locs);
	return err;
}

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
	if (l) {
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
	for (size_t i = n; i > 0 && k < VIEW_MAX_FRAMES; i--) {
		enum jp_frame_kind kind;
		const char *name = loc_name(c, locs[i - 1], &kind);

		c->frames[k++] = (struct jp_frame){name, kind};
	}
	return profile__add(c->dst, c->frames, k, w);
}

int model__to_profile(const struct model *m, const struct model_view *v, struct profile *dst)
{
	struct model_counts cnt;
	struct view_ctx *c;
	int err = 0;

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

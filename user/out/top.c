// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* top.c: the hottest functions of the model by self and total weight, as a text table. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

struct top_ent {
	jp_id func;
	enum jp_frame_kind kind;
	__u64 self, total;
	size_t stamp; /* the last row that counted it in total: once per stack */
};

static int cmp_self(const void *a, const void *b)
{
	const struct top_ent *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

static const char *kind_label(enum jp_frame_kind k)
{
	switch (k) {
	case JP_FK_KERNEL:
		return "kernel";
	case JP_FK_JIT:
		return "jit";
	case JP_FK_INLINED:
		return "inlined";
	case JP_FK_INTERP:
		return "interpreted";
	case JP_FK_JVM:
		return "jvm";
	case JP_FK_ROOT:
		return "marker";
	default:
		return "native";
	}
}

int out_top_write(const struct model *m, const struct model_view *v, size_t limit, FILE *f)
{
	struct model_counts c;
	struct top_ent *ents;
	size_t nents, shown = 0;
	__u64 all = 0;

	model__counts(m, &c);
	/* one entry per (function, kind): index func * JP_FK_MAX + kind */
	nents = (c.funcs + 1) * JP_FK_MAX;
	ents = calloc(nents, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (size_t i = 0; i < model__rows(m); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(m, i, &rb);
		const jp_id *locs;
		__u64 w = 0;
		size_t n;

		for (int k = 0; k < JP_VAL_MAX; k++)
			if (v->values & (1u << k))
				w += r->values[k];
		if (!w)
			continue;
		all += w;
		locs = model__get_stack(m, r->stack, &n);
		for (size_t k = 0; k < n; k++) {
			const struct jp_location *l = model__get_location(m, locs[k]);
			struct top_ent *e;

			if (!l || l->func > c.funcs)
				continue;
			e = &ents[(size_t)l->func * JP_FK_MAX + l->kind];
			e->func = l->func;
			e->kind = l->kind;
			if (k == 0)
				e->self += w;
			if (e->stamp != i + 1) {
				e->stamp = i + 1;
				e->total += w;
			}
		}
	}
	qsort(ents, nents, sizeof(*ents), cmp_self);
	errno = 0;
	fprintf(f, "%8s %14s %8s %14s  %s\n", "self%", "self", "total%", "total", "function");
	for (size_t i = 0; i < nents && shown < limit && ents[i].total; i++) {
		const struct jp_func *fn = model__get_func(m, ents[i].func);
		char name[1024];

		if (!fn)
			continue;
		snprintf(name, sizeof(name), "%s", fn->name);
		if (fn->java && v->dotted)
			for (char *p = name; *p; p++)
				if (*p == '/')
					*p = '.';
		fprintf(f, "%7.2f%% %14" PRIu64 " %7.2f%% %14" PRIu64 "  %s [%s]\n",
			all ? 100.0 * ents[i].self / all : 0.0, (uint64_t)ents[i].self,
			all ? 100.0 * ents[i].total / all : 0.0, (uint64_t)ents[i].total, name,
			kind_label(ents[i].kind));
		shown++;
	}
	free(ents);
	return ferror(f) ? (errno ? -errno : -EIO) : 0;
}

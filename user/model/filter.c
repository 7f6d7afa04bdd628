// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* filter.c: copies the rows of a model that pass a report's filters into another model. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

static bool in_list(const __u32 *v, size_t n, __u32 x)
{
	if (!n)
		return true;
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool name_matches(const regex_t *re, const struct jp_func *f)
{
	char dotted[1024];
	size_t n;

	if (!regexec(re, f->name, 0, NULL, 0))
		return true;
	if (!f->java)
		return false;
	n = strlen(f->name);
	if (n >= sizeof(dotted))
		return false;
	for (size_t i = 0; i <= n; i++)
		dotted[i] = f->name[i] == '/' ? '.' : f->name[i];
	return !regexec(re, dotted, 0, NULL, 0);
}

/* 1 match, 0 none; per function, cached in memo (0 unknown, 1 no, 2 yes) */
static bool stack_has(const struct model *m, const jp_id *locs, size_t n, const regex_t *re,
		      unsigned char *memo, size_t nmemo)
{
	for (size_t i = 0; i < n; i++) {
		const struct jp_location *l = model__get_location(m, locs[i]);
		const struct jp_func *f = l ? model__get_func(m, l->func) : NULL;

		if (!f)
			continue;
		if (l->func < nmemo && !memo[l->func])
			memo[l->func] = name_matches(re, f) ? 2 : 1;
		if (l->func < nmemo ? memo[l->func] == 2 : name_matches(re, f))
			return true;
	}
	return false;
}

/*
 * The label is the container's short id (12 hex) or a pod's name: it matches the name, a
 * prefix of it, or a longer id that starts with it (a full 64-hex id given by the user).
 */
static bool container_matches(const char *want, const char *label)
{
	size_t wl = strlen(want), ll = strlen(label);

	if (!ll)
		return false;
	if (wl <= ll)
		return !strncmp(want, label, wl);
	return ll == 12 && !strncmp(want, label, ll);
}

static bool labels_pass(const struct jp_labels *l, const struct model_filter *f)
{
	if (!in_list(f->pids, f->npids, l->pid) || !in_list(f->tids, f->ntids, l->tid))
		return false;
	if (f->comm && strcmp(f->comm, l->comm))
		return false;
	if (f->container && !container_matches(f->container, l->container))
		return false;
	return true;
}

/* the dst location of a src location, made once */
static jp_id copy_loc(const struct model *src, struct model *dst, jp_id id, jp_id *map)
{
	const struct jp_location *l;
	const struct jp_func *f;
	struct jp_location c;

	if (map[id])
		return map[id];
	l = model__get_location(src, id);
	f = l ? model__get_func(src, l->func) : NULL;
	if (!f)
		return 0;
	c = *l;
	c.func = model__func(dst, f->name, f->file, f->java);
	if (l->mapping) {
		const struct jp_mapping *mp = model__get_mapping(src, l->mapping);

		c.mapping = mp ? model__mapping(dst, mp) : 0;
	}
	if (!c.func || (l->mapping && !c.mapping))
		return 0;
	return map[id] = model__location(dst, &c);
}

int model__filter(const struct model *src, const struct model_filter *f, struct model *dst)
{
	struct model_counts c;
	unsigned char *inc_memo, *exc_memo;
	jp_id *map, *buf = NULL;
	size_t cap = 0;
	int err = 0;

	model__counts(src, &c);
	map = calloc(c.locations + 1, sizeof(*map));
	inc_memo = calloc(c.funcs + 1, 1);
	exc_memo = calloc(c.funcs + 1, 1);
	if (!map || !inc_memo || !exc_memo)
		err = -ENOMEM;
	for (size_t i = 0; !err && i < model__rows(src); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(src, i, &rb);
		const struct jp_labels *l = model__get_labels(src, r->labels);
		const jp_id *locs;
		jp_id stack, labels;
		size_t n;

		if (!l || !labels_pass(l, f))
			continue;
		locs = model__get_stack(src, r->stack, &n);
		if (f->include && !stack_has(src, locs, n, f->include, inc_memo, c.funcs + 1))
			continue;
		if (f->exclude && stack_has(src, locs, n, f->exclude, exc_memo, c.funcs + 1))
			continue;
		if (n > cap) {
			jp_id *nb = realloc(buf, n * sizeof(*nb));

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = n;
		}
		for (size_t k = 0; k < n && !err; k++)
			if (!(buf[k] = copy_loc(src, dst, locs[k], map)))
				err = -ENOMEM;
		if (err)
			break;
		stack = model__stack(dst, buf, n);
		labels = model__labels(dst, l);
		if (!stack || !labels) {
			err = -ENOMEM;
			break;
		}
		/* its times too; only those of the range when there is one */
		if (f->since_ns || f->until_ns)
			err = model__add_row_range(dst, stack, labels, src, i, f->since_ns,
						   f->until_ns ? f->until_ns : ~0ull);
		else
			err = model__add_row_timed(dst, stack, labels, src, i);
	}
	free(buf);
	free(map);
	free(inc_memo);
	free(exc_memo);
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * model_fold.c: label sets after they were made: a process named by its main class once its
 * JVM is known (model__name_process), and the sets of ended programs folded into one per
 * name (model__fold), their rows merged. Part of the model (model_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

int model__name_process(struct model *m, __u32 pid, const char *main)
{
	const char *s;
	bool changed = false;

	if (!main || !*main)
		return 0;
	s = model__str(m, main);
	if (!s)
		return -ENOSPC;
	for (size_t id = 1; id < m->labels.n; id++) {
		struct jp_labels *l = table_at(&m->labels, (jp_id)id);

		if (l->comm && !l->nfolded && l->pid == pid && !l->main[0]) {
			l->main = s;
			changed = true;
		}
	}
	/* same labels twice now (named and unnamed before) are two ids of one content: harmless */
	return changed ? table_rehash(&m->labels, m->labels.nslots) : 0;
}

/* the rows again, with labels mapped by to[] (0: kept), equal keys merged; 0 or -errno */
static int rows_remap(struct model *m, const jp_id *to, size_t nto)
{
	struct table nr;
	char *buf;
	__u32 *rto;
	int err = 0;

	if (!m->rows.n)
		return 0;
	buf = malloc(m->rows.elem_size);
	rto = calloc(m->rows.n, sizeof(*rto));
	if (!buf || !rto) {
		free(buf);
		free(rto);
		return -ENOMEM;
	}
	table_init(&nr, m->rows.elem_size, row_hash_of, m);
	for (size_t id = 1; id < m->rows.n; id++) {
		struct row_key *k = (struct row_key *)buf;
		__u64 *v = (__u64 *)(buf + sizeof(*k)), *dv;
		jp_id nid;

		memcpy(buf, table_at(&m->rows, (jp_id)id), m->rows.elem_size);
		if (k->labels < nto && to[k->labels])
			k->labels = to[k->labels];
		nid = table_find(&nr, buf, row_hash(k->stack, k->labels), row_eq, NULL);
		if (nid) {
			dv = (__u64 *)((char *)table_at(&nr, nid) + sizeof(*k));
			for (unsigned int c = 0; c < m->ncols; c++)
				dv[c] += v[c];
			rto[id] = nid;
			continue;
		}
		nid = table_intern(&nr, buf, row_hash(k->stack, k->labels), row_eq, NULL);
		if (!nid) {
			err = -ENOMEM; /* or -ENOSPC: the caller knows by the budget's count */
			break;
		}
		rto[id] = nid;
	}
	free(buf);
	/* the merged rows' times join (last: nothing fails after it) */
	if (!err)
		err = tseries_remap(&m->ts, rto, m->rows.n, nr.n);
	free(rto);
	if (err) {
		table_free(&nr);
		return err;
	}
	table_free(&m->rows);
	m->rows = nr;
	m->last_row = 0;
	return 0;
}

#define FOLD_NEW    (1ull << 63)
#define SEEN_EXITED 2 /* in seen: one of the pid's entries that matched is an exit */

/*
 * the entry of ends[] (values of pid in set) that ends label set l, NULL when none: the exec
 * that left its name (counted as such), else the pid's exit
 */
static const struct model_end *end_of(const struct hmap *set, const struct model_end *ends,
				      const struct jp_labels *l)
{
	const struct model_end *exited = NULL;
	size_t pos = 0;
	__u64 *v;

	while ((v = hmap_find_next2(set, l->pid, 0, &pos))) {
		const struct model_end *e = &ends[*v];

		if (!e->comm)
			exited = e;
		else if (!strcmp(e->comm, l->comm))
			return e;
	}
	return exited;
}

int model__fold(struct model *m, const struct model_end *ends, size_t n)
{
	struct hmap set = {0}, seen = {0}, add = {0};
	size_t nl = m->labels.n, nfree = 0, pos = 0;
	const char *empty = model__str(m, "");
	jp_id *to = NULL;
	__u64 *v, k1;
	__u64 over = m->over_budget;
	int err = -ENOMEM;

	if (!empty)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (hmap_add2(&set, ends[i].pid, 0, i) < 0)
			goto out;
	to = calloc(nl ? nl : 1, sizeof(*to));
	if (!to)
		goto out;
	/*
	 * each set a program's end ends: the folded set of its name, found or added (with count
	 * 1, flagged in add: FOLD_NEW); add counts the processes that fold into each
	 */
	for (size_t id = 1; id < nl; id++) {
		const struct jp_labels *l = table_at(&m->labels, (jp_id)id);
		const struct model_end *e;
		struct jp_labels f;
		__u32 pid = l->pid;
		bool is_new;

		if (!l->comm || l->nfolded || !hmap_find(&set, pid))
			continue;
		e = end_of(&set, ends, l);
		if (!e)
			continue;
		memset(&f, 0, sizeof(f));
		f.comm = l->comm;
		f.thread = empty;
		f.container = l->container;
		f.main = l->main;
		f.nfolded = 1;
		to[id] =
			table_find(&m->labels, &f, labels_hash_of(&m->labels, &f), labels_eq, NULL);
		if (!to[id]) {
			/*
			 * a new folded set, perhaps in an id an earlier fold freed (below nl:
			 * the walk skips it, as a folded set)
			 */
			to[id] = labels_intern(m, &f);
			if (!to[id] || hmap_put(&add, to[id], FOLD_NEW) < 0)
				goto out_fail;
		}
		nfree++;
		v = hmap_get2(&seen, to[id], pid, &is_new);
		if (!v)
			goto out_fail;
		if (!e->comm)
			*v |= SEEN_EXITED;
		if (is_new) {
			v = hmap_get(&add, to[id], &is_new);
			if (!v)
				goto out_fail;
			++*v;
		}
	}
	if (!nfree) {
		err = 0;
		goto out;
	}
	if (m->nfree_labels + nfree > m->cap_free_labels) {
		size_t cap = m->nfree_labels + nfree + 64;
		jp_id *p;

		if (model_refuse(m, (cap - m->cap_free_labels) * sizeof(*p))) {
			err = -ENOSPC;
			goto out_fail;
		}
		p = realloc(m->free_labels, cap * sizeof(*p));
		if (!p)
			goto out_fail;
		m->free_labels = p;
		m->cap_free_labels = cap;
	}
	err = rows_remap(m, to, nl);
	if (err)
		goto out_fail;
	/* from here nothing fails: the counts, then the dropped sets freed */
	while ((v = hmap_next(&add, &pos, &k1, NULL))) {
		struct jp_labels *f = table_at(&m->labels, (jp_id)k1);

		f->nfolded += (__u32)(*v & ~FOLD_NEW) - (*v & FOLD_NEW ? 1 : 0);
	}
	for (size_t id = 1; id < nl; id++) {
		if (!to[id])
			continue;
		table_unindex(&m->labels, (jp_id)id);
		memset(table_at(&m->labels, (jp_id)id), 0, sizeof(struct jp_labels));
		m->free_labels[m->nfree_labels++] = (jp_id)id;
	}
	for (pos = 0; (v = hmap_next(&seen, &pos, NULL, NULL));)
		if (*v & SEEN_EXITED)
			m->folded++;
		else
			m->folded_execs++;
	err = 0;
	goto out;
out_fail:
	/* a folded set added here stays, with no row yet: harmless */
	if (err != -ENOSPC)
		err = m->over_budget != over ? -ENOSPC : -ENOMEM;
out:
	free(to);
	hmap_free(&set);
	hmap_free(&seen);
	hmap_free(&add);
	return err;
}

int model__fold_pids(struct model *m, const __u32 *pids, size_t n)
{
	struct model_end *ends = calloc(n ? n : 1, sizeof(*ends));
	int err;

	if (!ends)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ends[i].pid = pids[i];
	err = model__fold(m, ends, n);
	free(ends);
	return err;
}

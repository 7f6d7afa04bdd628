// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* speedscope.c: the stack trie as a speedscope "sampled" profile (https://www.speedscope.app). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "../model/view.h"

/* frames are (interned name, kind): map them to indices of the shared frame table */
struct frame_map {
	const char **names;
	__u8 *kinds;
	__u32 *idx; /* index + 1, 0 empty */
	size_t cap, n;
	const char **order_names;
	__u8 *order_kinds;
};

static size_t fm_hash(const char *name, __u8 kind)
{
	uintptr_t x = (uintptr_t)name ^ ((uintptr_t)kind << 3);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	return (size_t)(x ^ (x >> 33));
}

static int fm_grow(struct frame_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	const char **names = calloc(cap, sizeof(*names));
	__u8 *kinds = calloc(cap, 1);
	__u32 *idx = calloc(cap, sizeof(*idx));
	const char **on = realloc(m->order_names, cap * sizeof(*on));
	__u8 *ok = on ? realloc(m->order_kinds, cap) : NULL;

	if (on)
		m->order_names = on;
	if (ok)
		m->order_kinds = ok;
	if (!names || !kinds || !idx || !on || !ok) {
		free(names);
		free(kinds);
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->idx[i])
			continue;
		for (j = fm_hash(m->names[i], m->kinds[i]) & (cap - 1); idx[j];
		     j = (j + 1) & (cap - 1))
			;
		names[j] = m->names[i];
		kinds[j] = m->kinds[i];
		idx[j] = m->idx[i];
	}
	free(m->names);
	free(m->kinds);
	free(m->idx);
	m->names = names;
	m->kinds = kinds;
	m->idx = idx;
	m->cap = cap;
	return 0;
}

static long fm_get(struct frame_map *m, const char *name, enum jp_frame_kind kind)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && fm_grow(m))
		return -ENOMEM;
	for (j = fm_hash(name, (__u8)kind) & (m->cap - 1); m->idx[j]; j = (j + 1) & (m->cap - 1))
		if (m->names[j] == name && m->kinds[j] == (__u8)kind)
			return m->idx[j] - 1;
	m->names[j] = name;
	m->kinds[j] = (__u8)kind;
	m->idx[j] = (__u32)(m->n + 1);
	m->order_names[m->n] = name;
	m->order_kinds[m->n] = (__u8)kind;
	return (long)m->n++;
}

static void fm_free(struct frame_map *m)
{
	free(m->names);
	free(m->kinds);
	free(m->idx);
	free(m->order_names);
	free(m->order_kinds);
}

static void json_str(FILE *f, const char *s, const char *suffix)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputs(suffix, f);
	fputc('"', f);
}

static const char *unit_of(const char *unit)
{
	if (!unit || !strcmp(unit, "samples"))
		return "none";
	if (!strcmp(unit, "ns"))
		return "nanoseconds";
	return !strcmp(unit, "bytes") ? "bytes" : "none";
}

struct samples_ctx {
	struct frame_map *fm;
	FILE *f, *wf;
	size_t n;
};

/* one sample per trie node with self weight: its path from the root, root first */
static int sample_node(void *vctx, const struct profile_node *const *path, size_t depth)
{
	struct samples_ctx *c = vctx;
	const struct profile_node *n = path[depth - 1];

	if (!profile_node__self(n))
		return 0;
	fprintf(c->f, "%s[", c->n ? "," : "");
	fprintf(c->wf, "%s%" PRIu64, c->n ? "," : "", (uint64_t)profile_node__self(n));
	for (size_t i = 0; i < depth; i++) {
		long idx = fm_get(c->fm, profile_node__name(path[i]), profile_node__kind(path[i]));

		if (idx < 0)
			return (int)idx;
		fprintf(c->f, "%s%ld", i ? "," : "", idx);
	}
	fputc(']', c->f);
	c->n++;
	return 0;
}

static int write_samples(const struct profile *p, struct frame_map *fm, FILE *f, FILE *wf)
{
	struct samples_ctx c = { .fm = fm, .f = f, .wf = wf };

	return profile__walk(p, sample_node, &c);
}

int out_speedscope_write(const struct profile *p, const struct out_meta *meta, FILE *f)
{
	struct frame_map fm = {0};
	char *weights = NULL, *samples = NULL;
	size_t wlen = 0, slen = 0;
	FILE *wf = open_memstream(&weights, &wlen), *sf = open_memstream(&samples, &slen);
	const char *name = meta && meta->title ? meta->title : profile__title(p);
	int err = -ENOMEM;

	if (!wf || !sf)
		goto out;
	err = write_samples(p, &fm, sf, wf);
	if (fclose(wf) || fclose(sf))
		err = err ? err : -ENOMEM;
	wf = sf = NULL;
	if (err)
		goto out;
	errno = 0;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"jprof\",\"name\":",
	      f);
	json_str(f, name, "");
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < fm.n; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		json_str(f, fm.order_names[i], jp_frame_kind_suffix(fm.order_kinds[i]));
		fputc('}', f);
	}
	fputs("]},\"profiles\":[{\"type\":\"sampled\",\"name\":", f);
	json_str(f, name, "");
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
		unit_of(meta && meta->unit ? meta->unit : profile__unit(p)),
		(uint64_t)profile__total(p));
	fwrite(samples, 1, slen, f);
	fputs("],\"weights\":[", f);
	fwrite(weights, 1, wlen, f);
	fputs("]}]}\n", f);
	err = ferror(f) ? (errno ? -errno : -EIO) : 0;
out:
	if (wf)
		fclose(wf);
	if (sf)
		fclose(sf);
	free(weights);
	free(samples);
	fm_free(&fm);
	return err;
}

/* ---- one profile per thread, its samples in time order (a model with times) ---- */

struct tref {
	__u32 labels, slot; /* slot ~0: the row's untimed rest, after its times */
	size_t k;	    /* the time entry, or the row (untimed) */
};

static int tref_cmp(const void *a, const void *b)
{
	const struct tref *x = a, *y = b;

	if (x->labels != y->labels)
		return x->labels < y->labels ? -1 : 1;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* the weight of vals in the view's columns */
static __u64 view_weight(const struct model_view *v, const __u64 *vals)
{
	__u64 w = 0;

	for (int c = 0; c < JP_VAL_MAX; c++)
		if (v->values & (1u << c))
			w += vals[c];
	return w;
}

/* speedscope's unit of the view's first column */
static const char *view_unit(const struct model_view *v)
{
	for (int c = 0; c < JP_VAL_MAX; c++) {
		if (!(v->values & (1u << c)))
			continue;
		if (!strcmp(jp_value_unit(c), "nanoseconds"))
			return "nanoseconds";
		return !strcmp(jp_value_unit(c), "bytes") ? "bytes" : "none";
	}
	return "none";
}

#define FM_JAVA 0x80 /* in a frame_map kind: the name is a Java method's (dotted on output) */

/* the row's stack as frame indices, root first, into sf; 0 or -ENOMEM */
static int stack_out(const struct model *m, jp_id stack, struct frame_map *fm, FILE *sf)
{
	size_t n;
	const jp_id *locs = model__get_stack(m, stack, &n);

	fputc('[', sf);
	for (size_t i = n; i-- > 0;) {
		const struct jp_location *loc = model__get_location(m, locs[i]);
		const struct jp_func *fn = loc ? model__get_func(m, loc->func) : NULL;
		long idx;

		if (!fn)
			continue;
		idx = fm_get(fm, fn->name,
			     (enum jp_frame_kind)(loc->kind | (fn->java ? FM_JAVA : 0)));
		if (idx < 0)
			return (int)idx;
		fprintf(sf, "%s%ld", i + 1 == n ? "" : ",", idx);
	}
	fputc(']', sf);
	return 0;
}

static void frame_out(FILE *f, const char *name, __u8 kind, bool dotted)
{
	char *d = NULL;

	if ((kind & FM_JAVA) && dotted && (d = strdup(name))) {
		for (char *p = d; *p; p++)
			if (*p == '/')
				*p = '.';
		name = d;
	}
	json_str(f, name, jp_frame_kind_suffix((enum jp_frame_kind)(kind & ~FM_JAVA)));
	free(d);
}

/* the refs of the model: every live time entry, and each row's untimed rest; NULL + *n 0 */
static struct tref *collect_refs(const struct model *m, const struct model_view *v, size_t *ret_n)
{
	struct model_time ti;
	struct jp_time_ent eb;
	struct jp_sample_row rb;
	struct tref *r;
	size_t n = 0;

	model__time_info(m, &ti);
	r = malloc((ti.entries + model__rows(m) + 1) * sizeof(*r));
	if (!r)
		return NULL;
	for (size_t k = 0; k < ti.entries; k++) {
		const struct jp_time_ent *t = model__time(m, k, &eb);
		const struct jp_sample_row *row =
			t && t->row != (size_t)-1 ? model__row(m, t->row, &rb) : NULL;

		if (row && view_weight(v, t->values))
			r[n++] = (struct tref){row->labels, t->slot, k};
	}
	for (size_t i = 0; i < model__rows(m); i++) {
		const struct jp_sample_row *row = model__row(m, i, &rb);
		__u64 left[JP_VAL_MAX];

		memcpy(left, row->values, sizeof(left));
		for (size_t k = model__time_first(m, i); k; k = model__time_next(m, k)) {
			model__time(m, k - 1, &eb);
			for (int c = 0; c < JP_VAL_MAX; c++)
				left[c] -= eb.values[c] < left[c] ? eb.values[c] : left[c];
		}
		if (view_weight(v, left))
			r[n++] = (struct tref){row->labels, ~0u, i};
	}
	*ret_n = n;
	return r;
}

int out_speedscope_write_model(const struct model *m, const struct model_view *v,
			       const struct out_meta *meta, FILE *f)
{
	struct frame_map fm = {0};
	char *body = NULL;
	size_t blen = 0, n = 0, nprof = 0;
	FILE *bf = open_memstream(&body, &blen);
	const char *name = meta && meta->title ? meta->title : "jprof";
	struct tref *refs = collect_refs(m, v, &n);
	int err = -ENOMEM;

	if (!bf || !refs)
		goto out;
	if (n)
		qsort(refs, n, sizeof(*refs), tref_cmp);
	err = 0;
	for (size_t g = 0; g < n && !err;) {
		const struct jp_labels *l = model__get_labels(m, refs[g].labels);
		char title[512];
		size_t e;
		__u64 total = 0;

		if (l && l->nfolded)
			snprintf(title, sizeof(title), "%s (%u exited)", l->comm, l->nfolded);
		else if (l)
			snprintf(title, sizeof(title), "%s [%u] %s [%u]", l->comm, l->pid,
				 l->thread, l->tid);
		else
			snprintf(title, sizeof(title), "[no thread]");
		fprintf(bf, "%s{\"type\":\"sampled\",\"name\":", nprof++ ? "," : "");
		json_str(bf, title, "");
		fprintf(bf, ",\"unit\":\"%s\",\"startValue\":0,\"samples\":[", view_unit(v));
		for (e = g; e < n && refs[e].labels == refs[g].labels && !err; e++) {
			struct jp_time_ent eb;
			struct jp_sample_row rb;
			const struct jp_time_ent *t =
				refs[e].slot != ~0u ? model__time(m, refs[e].k, &eb) : NULL;
			const struct jp_sample_row *row =
				model__row(m, t ? t->row : refs[e].k, &rb);

			if (e != g)
				fputc(',', bf);
			err = stack_out(m, row->stack, &fm, bf);
		}
		fputs("],\"weights\":[", bf);
		for (size_t k = g; k < e; k++) {
			struct jp_time_ent eb;
			struct jp_sample_row rb;
			__u64 w, left[JP_VAL_MAX];

			if (refs[k].slot != ~0u) {
				w = view_weight(v, model__time(m, refs[k].k, &eb)->values);
			} else { /* the untimed rest, as collect_refs found it */
				const struct jp_sample_row *row = model__row(m, refs[k].k, &rb);

				memcpy(left, row->values, sizeof(left));
				for (size_t x = model__time_first(m, refs[k].k); x;
				     x = model__time_next(m, x)) {
					model__time(m, x - 1, &eb);
					for (int c = 0; c < JP_VAL_MAX; c++)
						left[c] -= eb.values[c] < left[c] ? eb.values[c]
										  : left[c];
				}
				w = view_weight(v, left);
			}
			fprintf(bf, "%s%" PRIu64, k != g ? "," : "", (uint64_t)w);
			total += w;
		}
		fprintf(bf, "],\"endValue\":%" PRIu64 "}", (uint64_t)total);
		g = e;
	}
	if (fclose(bf))
		err = err ? err : -ENOMEM;
	bf = NULL;
	if (err)
		goto out;
	errno = 0;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"jprof\",\"name\":",
	      f);
	json_str(f, name, "");
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < fm.n; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		frame_out(f, fm.order_names[i], fm.order_kinds[i], v->dotted);
		fputc('}', f);
	}
	fputs("]},\"profiles\":[", f);
	fwrite(body, 1, blen, f);
	fputs("]}\n", f);
	err = ferror(f) ? (errno ? -errno : -EIO) : 0;
out:
	if (bf)
		fclose(bf);
	free(body);
	free(refs);
	fm_free(&fm);
	return err;
}

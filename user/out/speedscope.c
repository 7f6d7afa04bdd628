// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* speedscope.c: the stack trie as a speedscope "sampled" profile (https://www.speedscope.app). */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* format.c: the writer table: format names, file extensions, and which writer reads what. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "out.h"
#include "jfr.h"
#include "pprof.h"

static int write_folded(const struct profile *p, const struct out_meta *meta, FILE *f)
{
	(void)meta;
	return out_folded_write(p, f);
}

#define NOTES_MAX 9

/* out_meta as pprof comments "jprof:KEY=VALUE" after the command: what jprof report reads back */
static size_t meta_notes(const struct out_meta *mt, char (*buf)[1024], const char **notes)
{
	const struct {
		const char *key, *val;
	} strs[] = { { "title", mt->title },   { "unit", mt->unit },	 { "host", mt->host },
		     { "events", mt->events }, { "losses", mt->losses }, { "filters", mt->filters } };
	const struct {
		const char *key;
		__u64 val;
	} nums[] = { { "freq_hz", mt->freq_hz }, { "samples", mt->samples }, { "lost", mt->lost } };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]) && n < NOTES_MAX; i++) {
		if (!strs[i].val || !*strs[i].val)
			continue;
		snprintf(buf[n], sizeof(buf[n]), "jprof:%s=%s", strs[i].key, strs[i].val);
		notes[n] = buf[n];
		n++;
	}
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]) && n < NOTES_MAX; i++) {
		snprintf(buf[n], sizeof(buf[n]), "jprof:%s=%llu", nums[i].key,
			 (unsigned long long)nums[i].val);
		notes[n] = buf[n];
		n++;
	}
	return n;
}

static int write_pprof(const struct model *m, const struct out_input *in, FILE *f)
{
	struct pprof_opts o = {
		.values = in->view.values,
		.dotted = in->view.dotted,
	};
	char buf[NOTES_MAX][1024];
	const char *notes[NOTES_MAX];

	if (in->meta) {
		o.time_ns = in->meta->start_unix_ns;
		o.duration_ns = in->meta->duration_ns;
		o.period_ns = in->meta->freq_hz ? 1000000000ull / in->meta->freq_hz : 0;
		o.comment = in->meta->command ? in->meta->command : "";
		o.notes = notes;
		o.nnotes = meta_notes(in->meta, buf, notes);
	}
	return out_pprof_write(m, &o, f);
}

static int write_jfr(const struct model *m, const struct out_input *in, FILE *f)
{
	struct jfr_opts o = { .meta = in->meta };

	if (in->meta) {
		o.start_unix_ns = in->meta->start_unix_ns;
		o.duration_ns = in->meta->duration_ns;
		o.period_ns = in->meta->freq_hz ? 1000000000ull / in->meta->freq_hz : 0;
		o.gc_pauses = in->meta->gc_pauses;
		o.n_gc_pauses = in->meta->n_gc_pauses;
	}
	return out_jfr_write(m, &o, f);
}

static const struct writer {
	const char *name;
	const char *const *names; /* other names for -f */
	const char *const *exts;  /* file name endings, longest match wins */
	/* exactly one of the two: a writer of the flame-graph trie, or of the model */
	int (*trie)(const struct profile *p, const struct out_meta *meta, FILE *f);
	int (*model)(const struct model *m, const struct out_input *in, FILE *f);
} writers[OUT_FORMAT_MAX] = {
	[OUT_FOLDED] = {"folded", (const char *const[]){"collapsed", "txt", NULL},
			(const char *const[]){".folded", ".collapsed", ".txt", NULL}, write_folded,
			NULL},
	[OUT_HTML] = {"html", (const char *const[]){NULL},
		      (const char *const[]){".html", ".htm", NULL}, out_html_write_meta, NULL},
	[OUT_PPROF] = {"pprof", (const char *const[]){NULL},
		       (const char *const[]){".pb.gz", ".pprof", NULL}, NULL, write_pprof},
	[OUT_SPEEDSCOPE] = {"speedscope", (const char *const[]){NULL},
			    (const char *const[]){".speedscope.json", NULL}, out_speedscope_write,
			    NULL},
	[OUT_JFR] = {"jfr", (const char *const[]){NULL}, (const char *const[]){".jfr", NULL}, NULL,
		     write_jfr},
};

int out_format_parse(const char *name)
{
	if (!name)
		return -EINVAL;
	for (int i = 0; i < OUT_FORMAT_MAX; i++) {
		if (!strcasecmp(name, writers[i].name))
			return i;
		for (const char *const *n = writers[i].names; *n; n++)
			if (!strcasecmp(name, *n))
				return i;
	}
	return -EINVAL;
}

const char *out_format_name(enum out_format fmt)
{
	return fmt < OUT_FORMAT_MAX ? writers[fmt].name : "?";
}

int out_format_from_path(const char *path)
{
	const char *base, *dot;
	size_t blen, best_len = 0;
	int best = -EINVAL;

	if (!path)
		return -EINVAL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		return -ENOENT; /* no extension (a leading dot makes a hidden file, not one) */
	blen = strlen(base);
	for (int i = 0; i < OUT_FORMAT_MAX; i++) {
		for (const char *const *e = writers[i].exts; *e; e++) {
			size_t elen = strlen(*e);

			if (elen < blen && elen > best_len && !strcasecmp(base + blen - elen, *e)) {
				best = i;
				best_len = elen;
			}
		}
	}
	return best;
}

/* the model knows when its samples happened */
static bool model_timed(const struct model *m)
{
	struct model_time ti;

	model__time_info(m, &ti);
	return ti.has_clock && ti.entries;
}

int out_write(enum out_format fmt, const struct out_input *in, FILE *f)
{
	const struct writer *w;
	struct profile *p;
	int err;

	if (fmt >= OUT_FORMAT_MAX)
		return -EINVAL;
	w = &writers[fmt];
	if (w->model)
		return in->model ? w->model(in->model, in, f) : -ENOTSUP;
	if (fmt == OUT_SPEEDSCOPE && !in->trie && in->model && model_timed(in->model))
		return out_speedscope_write_model(in->model, &in->view, in->meta, f);
	if (fmt == OUT_HTML && !in->trie && in->model && model_timed(in->model))
		return out_html_write_model(in->model, &in->view, in->meta, f);
	if (in->trie)
		return w->trie(in->trie, in->meta, f);
	if (!in->model)
		return -EINVAL;
	p = profile__new(in->meta && in->meta->title ? in->meta->title : "jprof",
			 in->meta && in->meta->unit ? in->meta->unit : "samples");
	if (!p)
		return -ENOMEM;
	err = model__to_profile(in->model, &in->view, p);
	if (!err)
		err = w->trie(p, in->meta, f);
	profile__free(p);
	return err;
}

int out_pprof_memfd(const struct model *m, const struct out_meta *meta, int *ret_fd)
{
	struct out_input in = {.model = m, .meta = meta};
	int fd = memfd_create("jprof-pprof", MFD_CLOEXEC), dfd, err;
	FILE *f;

	if (fd < 0)
		return -errno;
	for (int c = 0; c < JP_VAL_MAX; c++) /* every column recorded, as the segments have */
		if (model__total(m, c))
			in.view.values |= 1u << c;
	dfd = dup(fd);
	f = dfd >= 0 ? fdopen(dfd, "w") : NULL;
	if (!f) {
		err = -errno;
		if (dfd >= 0)
			close(dfd);
		close(fd);
		return err;
	}
	err = out_write(OUT_PPROF, &in, f);
	if (fclose(f) && !err)
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	*ret_fd = fd;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_pprof.c: jprof report's pprof reader on arbitrary bytes (raw and gzip'ed). Whatever it
 * accepts must write back as pprof and read back to the same totals. The same bytes merged
 * into a model that holds a sample already (pprof_merge, a store's range), then again in two
 * steps (read and checked, then added): refused exactly when the reader refuses them, and then
 * the model unchanged; else the model the reader and model__filter would have made (tables,
 * totals, times). Built with
 * JP_FUZZ_BUDGETS, whose small budgets (1 MiB uncompressed, 4096 strings, samples, locations,
 * functions and location lines) seeds of the corpus reach (budget_*).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "model/filter.h"
#include "model/model.h"
#include "model/pprof_merge.h"
#include "model/pprof_read.h"
#include "model/view.h"
#include "out/jfr.h"
#include "out/out.h"
#include "out/pprof.h"
#include "profile.h"

/* the values of m's time entries, all rows, into sum; abort() when a row's pass its values */
static void timed(const struct model *m, __u64 *sum)
{
	memset(sum, 0, JP_VAL_MAX * sizeof(*sum));
	for (size_t i = 0; i < model__rows(m); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(m, i, &rb);
		struct jp_time_ent eb;
		__u64 row[JP_VAL_MAX] = {0};

		for (size_t k = model__time_first(m, i); k; k = model__time_next(m, k)) {
			if (!model__time(m, k - 1, &eb) || eb.row != i)
				abort();
			for (int v = 0; v < JP_VAL_MAX; v++)
				row[v] += eb.values[v];
		}
		for (int v = 0; v < JP_VAL_MAX; v++) {
			if (row[v] > r->values[v])
				abort();
			sum[v] += row[v];
		}
	}
}

static void roundtrip(const struct model *m)
{
	__u64 t1[JP_VAL_MAX], t2[JP_VAL_MAX];
	struct pprof_opts o = {.values = (1u << JP_VAL_MAX) - 1};
	struct model *back = model__new();
	char *buf = NULL, why[128];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f || !back)
		abort();
	if (out_pprof_write(m, &o, f))
		abort();
	fclose(f);
	if (model__read_pprof(back, buf, len, why, sizeof(why))) {
		/* the writer may make more locations than the file had (one per inline line) */
		if (strstr(why, "(a budget of jprof report)"))
			goto out;
		abort();
	}
	for (int v = 0; v < JP_VAL_MAX; v++)
		if (model__total(back, v) != model__total(m, v))
			abort();
	/* what was timed is timed again (at whatever times) */
	timed(m, t1);
	timed(back, t2);
	if (memcmp(t1, t2, sizeof(t1)))
		abort();
out:
	free(buf);
	model__free(back);
}

/* the writers that read the times: HTML (its timeline), speedscope (a profile a thread), JFR */
static void timed_writers(const struct model *m, const struct model_view *v)
{
	struct out_input in = {.model = m, .view = *v};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	(void)out_write(OUT_HTML, &in, f);
	(void)out_write(OUT_SPEEDSCOPE, &in, f);
	/*
	 * a file's sample counts are its own claims: the JFR writer's budget of events bounds
	 * the work (OUT_JFR_MAX_SAMPLES; smaller here, so that an input runs in milliseconds
	 * and the scaled path is what a large claim takes)
	 */
	(void)out_jfr_max_samples(1u << 12);
	(void)out_write(OUT_JFR, &in, f);
	fclose(f);
	free(buf);
}

/* a model with one timed sample in it, as a range's first segment leaves it */
static struct model *seeded(void)
{
	struct jp_labels lab = {.pid = 1, .tid = 1, .comm = "java", .thread = "main", .container = ""};
	struct model *m = model__new();
	struct jp_location l = {.kind = JP_FK_JIT};
	jp_id id;

	if (!m)
		abort();
	model__set_clock(m, 1000000000ull, 1700000000000000000ull);
	l.func = model__func(m, "A.run", "A.java", true);
	id = model__location(m, &l);
	model__at(m, 1300000000ull);
	if (model__add(m, model__stack(m, &id, 1), model__labels(m, &lab), JP_VAL_CPU_SAMPLES, 2))
		abort();
	model__at(m, 0);
	return m;
}

static bool same_counts(const struct model *a, const struct model *b)
{
	struct model_counts ca, cb;
	__u64 ta[JP_VAL_MAX], tb[JP_VAL_MAX];

	model__counts(a, &ca);
	model__counts(b, &cb);
	timed(a, ta);
	timed(b, tb);
	for (int v = 0; v < JP_VAL_MAX; v++)
		if (model__total(a, v) != model__total(b, v))
			return false;
	return !memcmp(&ca, &cb, sizeof(ca)) && !memcmp(ta, tb, sizeof(ta));
}

/* the bytes merged (read_err: the reader's verdict on them alone) */
static void merged(const uint8_t *data, size_t size, int read_err)
{
	struct model *before = seeded(), *old = seeded(), *cur = seeded(), *own = model__new();
	struct pprof_merge *pm = pprof_merge__new(cur);
	struct model_filter all = {0};
	struct pprof_read_info info;
	char why[128];
	int err;

	if (!own || !pm)
		abort();
	err = pprof_merge__add(pm, data, size, &info, why, sizeof(why));
	if ((err == -EINVAL && !read_err) || (!err && read_err == -EINVAL))
		abort();
	if (err == -EINVAL && !same_counts(cur, before))
		abort(); /* refused: nothing of it stays */
	if (!err && !model__read_pprof(own, data, size, why, sizeof(why)) &&
	    !model__filter(own, &all, old)) {
		if (!same_counts(cur, old))
			abort();
		/*
		 * again, in two steps (read and checked, then added: store__load's reader
		 * thread): now every location is found by its key (the next segment's case)
		 */
		struct pprof_merge_file *pf = NULL;
		void *copy = malloc(size ? size : 1);

		if (!copy)
			abort();
		memcpy(copy, data, size);
		if (pprof_merge_file__prepare(copy, size, &pf, why, sizeof(why)) == -EINVAL)
			abort(); /* accepted the first time */
		if (pf && !pprof_merge__add_file(pm, pf, &info) && !model__filter(own, &all, old) &&
		    !same_counts(cur, old))
			abort();
	}
	pprof_merge__free(pm);
	model__free(before);
	model__free(old);
	model__free(cur);
	model__free(own);
}

static void one(const uint8_t *data, size_t size)
{
	struct model *m = model__new();
	struct model_view v = {.values = (1u << JP_VAL_MAX) - 1, .dotted = true, .lines = true};
	struct profile *p = profile__new("f", "samples");
	char why[128];
	int err;

	if (!m || !p)
		abort();
	err = model__read_pprof(m, data, size, why, sizeof(why));
	if (!err) {
		(void)model__to_profile(m, &v, p);
		timed_writers(m, &v);
		roundtrip(m);
	}
	merged(data, size, err);
	profile__free(p);
	model__free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *gz;
	uLongf gzlen;

	one(data, size);
	/* the same bytes behind a gzip header, so the decompressor's bounds are reached too */
	if (size > (1u << 20))
		return 0;
	gzlen = compressBound(size) + 32;
	gz = malloc(gzlen);
	if (gz) {
		z_stream z = {0};

		if (deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
			z.next_in = (unsigned char *)data;
			z.avail_in = (uInt)size;
			z.next_out = gz;
			z.avail_out = (uInt)gzlen;
			if (deflate(&z, Z_FINISH) == Z_STREAM_END)
				one(gz, z.total_out);
			deflateEnd(&z);
		}
		free(gz);
	}
	return 0;
}

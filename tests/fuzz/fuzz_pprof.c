// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_pprof.c: jprof report's pprof reader on arbitrary bytes (raw and gzip'ed). Whatever it
 * accepts must write back as pprof and read back to the same totals. Built with
 * JP_FUZZ_BUDGETS, whose small budgets (1 MiB uncompressed, 4096 strings, samples, locations,
 * functions and location lines) seeds of the corpus reach (budget_*).
 */
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "model/model.h"
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

		for (size_t k = model__time_first(m, i); k; k = eb.next) {
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

static void one(const uint8_t *data, size_t size)
{
	struct model *m = model__new();
	struct model_view v = {.values = (1u << JP_VAL_MAX) - 1, .dotted = true, .lines = true};
	struct profile *p = profile__new("f", "samples");
	char why[128];

	if (!m || !p)
		abort();
	if (!model__read_pprof(m, data, size, why, sizeof(why))) {
		(void)model__to_profile(m, &v, p);
		timed_writers(m, &v);
		roundtrip(m);
	}
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

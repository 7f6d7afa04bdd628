// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_jfr_read.c: jprof report's JFR reader on arbitrary bytes. Whatever it accepts must
 * render as a profile, write back as JFR, and read back with the same CPU samples (unless
 * the written file is over the reader's fuzzing budgets, which are small).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/jfr_read.h"
#include "model/model.h"
#include "model/view.h"
#include "out/jfr.h"
#include "out/out.h"
#include "profile.h"

/* a row's time entries never add up to more than its values */
static void check_times(const struct model *m)
{
	for (size_t i = 0; i < model__rows(m); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(m, i, &rb);
		struct jp_time_ent eb;
		__u64 sum[JP_VAL_MAX] = {0};

		for (size_t k = model__time_first(m, i); k; k = model__time_next(m, k)) {
			if (!model__time(m, k - 1, &eb) || eb.row != i)
				abort();
			for (int v = 0; v < JP_VAL_MAX; v++)
				sum[v] += eb.values[v];
		}
		for (int v = 0; v < JP_VAL_MAX; v++)
			if (sum[v] > r->values[v])
				abort();
	}
}

/* the writers that read the times: HTML (its timeline) and speedscope (a profile a thread) */
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
	fclose(f);
	free(buf);
}

static void roundtrip(const struct model *m)
{
	struct jfr_opts o = {.duration_ns = 1000000};
	struct model *back = model__new();
	char *buf = NULL, why[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f || !back)
		abort();
	if (out_jfr_write(m, &o, f))
		abort();
	fclose(f);
	err = model__read_jfr(back, buf, len, why, sizeof(why));
	if (err && !(err == -EINVAL && strstr(why, "limit")))
		abort();
	if (!err && model__total(back, JP_VAL_CPU_SAMPLES) != model__total(m, JP_VAL_CPU_SAMPLES))
		abort();
	free(buf);
	model__free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m = model__new();
	struct model_view v = {.values = (1u << JP_VAL_MAX) - 1, .dotted = true, .lines = true};
	struct profile *p = profile__new("f", "samples");
	struct jfr_read_info info;
	char why[256];

	if (!m || !p)
		abort();
	if (!model__read_jfr_info(m, data, size, &info, why, sizeof(why))) {
		(void)model__to_profile(m, &v, p);
		check_times(m);
		timed_writers(m, &v);
		roundtrip(m);
		free(info.gc);
	} else if (!why[0]) {
		abort(); /* a refusal always says why */
	}
	profile__free(p);
	model__free(m);
	return 0;
}

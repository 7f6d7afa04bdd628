// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_otlp.c: --push-otlp's conversion of a segment (otlp_from_pprof) on arbitrary bytes.
 * Whatever the pprof reader accepts must come out as a request that an independent walker
 * (tests/common/otlp_check.h) reads, with every index in its table and the samples' totals
 * those of the profile.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../common/otlp_check.h"
#include "daemon/otlp.h"
#include "model/model.h"
#include "model/pprof_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m = model__new();
	struct otlp_summary s;
	struct bytebuf out = {0};
	char why[128];

	if (!m)
		abort();
	if (!otlp_from_pprof(data, size, "host", &out, why, sizeof(why))) {
		if (otlp_check(out.p, out.n, &s))
			abort();
		/* the same profile through the model directly: the same totals, column by column */
		if (model__read_pprof(m, data, size, why, sizeof(why)))
			abort();
		for (size_t k = 0, v = 0; v < JP_VAL_MAX; v++)
			if (model__total(m, v) && s.totals[k++] != model__total(m, v))
				abort();
	}
	bytebuf_free(&out);
	model__free(m);
	return 0;
}

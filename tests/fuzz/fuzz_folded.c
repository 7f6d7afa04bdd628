// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_folded.c: folded reader on arbitrary bytes; written output must read back to itself.
 * Built with JP_FUZZ_BUDGETS, whose small budgets (1 MiB, 1 KiB names, 256 frames, 4096
 * nodes) inputs of the corpus reach: crossing one must give its line and a reason.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "out/out.h"

static char *write_folded(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (out_folded_write(p, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static struct profile *read_folded(const void *data, size_t size)
{
	struct profile *p = profile__new("fuzz", "samples");
	FILE *f = size ? fmemopen((void *)data, size, "r") : NULL;
	size_t line = 0;
	char why[128];
	int err;

	if (!p || !f) {
		if (f)
			fclose(f);
		return p;
	}
	err = profile__read_folded_why(p, f, &line, why, sizeof(why));
	if (err == -E2BIG && (!line || !why[0] || !strstr(why, "budget"))) {
		fprintf(stderr, "a budget crossed without its line or reason: %zu '%s'\n", line,
			why);
		abort();
	}
	fclose(f);
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = read_folded(data, size), *q = NULL, *r = NULL;
	char *a = NULL, *b = NULL, *h = NULL;
	size_t hlen = 0, bad = 0;
	bool over = false;
	FILE *f;

	if (!p)
		return 0;
	/* everything the writer prints must parse back, cleanly, to the same text */
	a = write_folded(p);
	if (a) {
		q = profile__new("fuzz", "samples");
		f = *a ? fmemopen(a, strlen(a), "r") : NULL;
		if (q && f) {
			int err = profile__read_folded(q, f, &bad);

			if (err == -EINVAL && bad) {
				fprintf(stderr, "writer output line %zu does not parse\n", bad);
				abort();
			}
			/* p stopped one line past its node budget: q stops there too */
			over = err == -E2BIG;
		}
		if (f)
			fclose(f);
		b = q && !over ? write_folded(q) : NULL;
		if (b && strcmp(a, b)) {
			fprintf(stderr, "round trip differs:\n%s---\n%s", a, b);
			abort();
		}
		if (q && !over && profile__total(q) != profile__total(p))
			abort();
	}
	/* merging doubles, and the HTML writer copes with whatever was read */
	r = profile__new("fuzz", "samples");
	if (r && !profile__merge(r, p) && !profile__merge(r, p) &&
	    profile__total(r) != 2 * profile__total(p) && profile__total(p) < UINT64_MAX / 2)
		abort();
	f = open_memstream(&h, &hlen);
	if (f) {
		(void)out_html_write(p, f);
		fclose(f);
	}
	free(h);
	free(a);
	free(b);
	profile__free(p);
	profile__free(q);
	profile__free(r);
	return 0;
}

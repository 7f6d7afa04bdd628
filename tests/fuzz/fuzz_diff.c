// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_diff.c: report --diff on two arbitrary folded inputs (the bytes before and after the
 * first "\n--\n", or both halves): the table, the folded `stack base new` lines and the HTML
 * page. Checks: a side against itself has no change; with raw weights the folded columns add
 * up to each side's total. Built with JP_FUZZ_BUDGETS (the folded reader's small budgets).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "out/diff.h"

static struct profile *read_folded(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new("fuzz", "samples");
	FILE *f = size ? fmemopen((void *)data, size, "r") : NULL;
	size_t line = 0;
	char why[128];

	if (p && f)
		(void)profile__read_folded_why(p, f, &line, why, sizeof(why));
	if (f)
		fclose(f);
	return p;
}

static void check_self(const struct profile *p)
{
	struct diff_table *t = NULL;
	const struct diff_ent *e;
	size_t n;

	for (int absolute = 0; absolute < 2; absolute++) {
		if (diff_table__new(p, p, absolute, &t))
			continue;
		e = diff_table__ents(t, &n);
		for (size_t i = 0; i < n; i++)
			if (diff_ent__sign(&e[i]) || e[i].base_total != e[i].new_total ||
			    e[i].base_self != e[i].new_self)
				abort();
		diff_table__free(t);
	}
}

/* raw weights: the base column adds up to base's total, the new one to new's */
static void check_folded_sums(const struct profile *b, const struct profile *n)
{
	char *buf = NULL, *s;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	__u64 sb = 0, sn = 0;

	if (!f)
		return;
	if (out_diff_folded_write(b, n, true, f)) {
		fclose(f);
		free(buf);
		return;
	}
	fclose(f);
	for (s = buf; s && *s;) {
		char *eol = strchr(s, '\n'), *a, *c;

		if (!eol)
			abort(); /* every line ends */
		*eol = '\0';
		c = strrchr(s, ' ');
		if (!c)
			abort();
		*c = '\0';
		a = strrchr(s, ' ');
		if (!a)
			abort();
		sb += strtoull(a + 1, NULL, 10);
		sn += strtoull(c + 1, NULL, 10);
		s = eol + 1;
	}
	if (sb != profile__total(b) || sn != profile__total(n)) {
		fprintf(stderr,
			"folded sums %" PRIu64 " %" PRIu64 ", totals %" PRIu64 " %" PRIu64 "\n",
			(uint64_t)sb, (uint64_t)sn, (uint64_t)profile__total(b),
			(uint64_t)profile__total(n));
		abort();
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memmem(data, size, "\n--\n", 4);
	size_t cut = sep ? (size_t)(sep - data) : size / 2, rest = sep ? cut + 4 : cut;
	struct profile *b = read_folded(data, cut), *n = read_folded(data + rest, size - rest);
	struct diff_table *t = NULL;
	char *h = NULL;
	size_t hlen = 0;
	FILE *f;

	if (!b || !n)
		goto out;
	check_self(b);
	/* the sums stay exact below 2^62 (the fuzzer's weights can be anything) */
	if (profile__total(b) < (1ull << 62) && profile__total(n) < (1ull << 62))
		check_folded_sums(b, n);
	if (!diff_table__new(b, n, false, &t)) {
		f = open_memstream(&h, &hlen);
		if (f) {
			(void)out_diff_top_write(t, 5, f);
			(void)out_diff_html_write(b, n, t, NULL, NULL, false, f);
			fclose(f);
		}
	}
out:
	diff_table__free(t);
	free(h);
	profile__free(b);
	profile__free(n);
	return 0;
}

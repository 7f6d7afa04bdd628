// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_serve_query.c: jprof serve's request parameters on any bytes (whoever reaches the port
 * sends them): NUL-separated "name=value" pairs, parsed as a profile and as a diff request,
 * each accepted one turned into its report command line; an accepted recording name is never
 * a path.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct pairs {
	const char *kv[32];
	size_t n;
};

static const char *lookup(void *ctx, const char *name)
{
	const struct pairs *p = ctx;
	size_t n = strlen(name);

	for (size_t i = 0; i < p->n; i++)
		if (!strncmp(p->kv[i], name, n) && p->kv[i][n] == '=')
			return p->kv[i] + n + 1;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char bufs[8][SQ_ARG_LEN], *argv[SQ_MAX_ARGS + 12], why[128];
	struct sq_request *r;
	struct pairs p = {0};
	char *s;

	if (size > 16384)
		return 0;
	s = malloc(size + 1);
	r = malloc(sizeof(*r));
	if (!s || !r)
		goto out;
	memcpy(s, data, size);
	s[size] = '\0';
	for (size_t i = 0; i <= size && p.n < 32;) {
		p.kv[p.n++] = s + i;
		i += strlen(s + i) + 1;
	}
	for (int k = SQ_PROFILE; k <= SQ_DIFF; k++) {
		if (sq_parse((enum sq_kind)k, lookup, &p, r, why, sizeof(why)))
			continue;
		/* a recording accepted is a name of the directory, never a path */
		if ((r->rec[0] && (!sq_rec_name_ok(r->rec) || strchr(r->rec, '/'))) ||
		    (r->base_rec[0] && (!sq_rec_name_ok(r->base_rec) || strchr(r->base_rec, '/'))))
			abort();
		(void)sq_report_argv(r, "/jprof", "/store", r->since_s, r->until_s, -1, bufs, 8, argv,
				     SQ_MAX_ARGS + 12);
	}
	(void)sq_token_equal(p.kv[0], "0123456789abcdef0123456789abcdef");
out:
	free(s);
	free(r);
	return 0;
}

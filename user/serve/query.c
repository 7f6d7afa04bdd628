// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* query.c: a request's parameters checked and turned into a `jprof report` command line. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "serve/query.h"

static int bad(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* unix seconds: digits only, no sign, no spaces, below SQ_MAX_TIME */
static int parse_time(const char *s, __u64 *ret)
{
	__u64 v = 0;

	if (!*s || strlen(s) > 13)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (__u64)(*s - '0');
	}
	if (v >= SQ_MAX_TIME)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* a range: both ends given, since < until */
static int parse_range(sq_lookup_fn lookup, void *ctx, const char *sname, const char *uname,
		       __u64 *since, __u64 *until, char *why, size_t why_len)
{
	const char *s = lookup(ctx, sname), *u = lookup(ctx, uname);

	if (!s || !u)
		return bad(why, why_len, "'%s' and '%s' are needed (unix seconds)", sname, uname);
	if (parse_time(s, since))
		return bad(why, why_len, "'%s' is not unix seconds", sname);
	if (parse_time(u, until))
		return bad(why, why_len, "'%s' is not unix seconds", uname);
	if (*since >= *until)
		return bad(why, why_len, "'%s' must be before '%s'", sname, uname);
	return 0;
}

static const struct {
	const char *name, *report, *type, *ext;
} formats[] = {
	[SQ_HTML] = {"html", "html", "text/html; charset=utf-8", "html"},
	[SQ_FOLDED] = {"folded", "folded", "text/plain; charset=utf-8", "folded"},
	[SQ_PPROF] = {"pprof", "pprof", "application/octet-stream", "pb.gz"},
	[SQ_JFR] = {"jfr", "jfr", "application/octet-stream", "jfr"},
	[SQ_SPEEDSCOPE] = {"speedscope", "speedscope", "application/json", "speedscope.json"},
	[SQ_TOP] = {"top", "folded", "text/plain; charset=utf-8", "txt"},
};

const char *sq_content_type(enum sq_format f)
{
	return formats[f].type;
}

const char *sq_extension(enum sq_format f)
{
	return formats[f].ext;
}

/* digits and commas, a number first and last: "12,345" */
static bool id_list(const char *v)
{
	bool digit = false;

	for (const char *s = v; *s; s++) {
		if (*s >= '0' && *s <= '9')
			digit = true;
		else if (*s == ',' && digit && s[1])
			digit = false;
		else
			return false;
	}
	return digit;
}

/* printable ASCII, no control byte (a regex, a process or container name) */
static bool printable(const char *v)
{
	if (!*v)
		return false;
	for (const unsigned char *s = (const unsigned char *)v; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

static const struct {
	const char *name;
	bool (*ok)(const char *v);
	const char *what;
} filters[] = {
	{"pid", id_list, "process ids and commas"},
	{"tid", id_list, "thread ids and commas"},
	{"comm", printable, "a process name"},
	{"container", printable, "a container id or name"},
	{"include", printable, "a regular expression"},
	{"exclude", printable, "a regular expression"},
};

static const char *const views[] = {"per-pid", "per-thread", "per-container", "reverse",
				    "dotted",  "lines",      "samples"};

static bool ends_with(const char *s, size_t n, const char *end)
{
	size_t k = strlen(end);

	return n > k && !memcmp(s + n - k, end, k);
}

bool sq_rec_name_ok(const char *name)
{
	static const char *const exts[] = {".pb.gz", ".pprof", ".jfr", ".folded", ".collapsed",
					   ".txt"};
	size_t n = strlen(name);

	if (!n || n >= SQ_REC_LEN || name[0] == '.' || name[0] == '-')
		return false;
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
		return false;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (ends_with(name, n, exts[i]))
			return true;
	return false;
}

/* rec (and a diff's base_rec): saved recordings by name */
static int parse_recs(enum sq_kind kind, sq_lookup_fn lookup, void *ctx, struct sq_request *ret,
		      char *why, size_t why_len)
{
	const char *r = lookup(ctx, "rec"), *b = lookup(ctx, "base_rec");

	if (!sq_rec_name_ok(r))
		return bad(why, why_len, "'rec' must name a recording of the list (letters, digits, "
					 "'.', '_', '-'; .pb.gz, .pprof, .jfr, .folded, .collapsed, .txt)");
	snprintf(ret->rec, sizeof(ret->rec), "%s", r);
	if (kind != SQ_DIFF)
		return 0;
	if (!b)
		return bad(why, why_len, "a diff of 'rec' needs 'base_rec'");
	if (!sq_rec_name_ok(b))
		return bad(why, why_len, "'base_rec' must name a recording of the list");
	snprintf(ret->base_rec, sizeof(ret->base_rec), "%s", b);
	return 0;
}

int sq_parse(enum sq_kind kind, sq_lookup_fn lookup, void *ctx, struct sq_request *ret, char *why,
	     size_t why_len)
{
	const char *f = lookup(ctx, "format");
	int err;

	memset(ret, 0, sizeof(*ret));
	ret->kind = kind;
	if (why_len)
		why[0] = '\0';
	if (lookup(ctx, "rec")) {
		err = parse_recs(kind, lookup, ctx, ret, why, why_len);
		if (err)
			return err;
	} else {
		err = parse_range(lookup, ctx, "since", "until", &ret->since_s, &ret->until_s,
				  why, why_len);
	}
	if (err)
		return err;
	if (kind == SQ_DIFF && !ret->rec[0]) {
		err = parse_range(lookup, ctx, "base_since", "base_until", &ret->base_since_s,
				  &ret->base_until_s, why, why_len);
		if (err)
			return err;
	}
	ret->format = SQ_HTML;
	if (f) {
		size_t i;

		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			if (!strcmp(f, formats[i].name))
				break;
		if (i == sizeof(formats) / sizeof(formats[0]))
			return bad(why, why_len,
				   "'format' is html, folded, pprof, jfr, speedscope or top");
		ret->format = (enum sq_format)i;
		/* a diff is HTML, folded `stack base new` or the table of what grew and shrank */
		if (kind == SQ_DIFF && ret->format != SQ_HTML && ret->format != SQ_FOLDED &&
		    ret->format != SQ_TOP)
			return bad(why, why_len, "a diff's 'format' is html, folded or top");
	}
	for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++) {
		const char *v = lookup(ctx, filters[i].name);

		if (!v)
			continue;
		if (strlen(v) > SQ_MAX_VALUE || !filters[i].ok(v))
			return bad(why, why_len, "'%s' must be %s (at most %d bytes)",
				   filters[i].name, filters[i].what, SQ_MAX_VALUE);
		snprintf(ret->args[ret->nargs++], SQ_ARG_LEN, "--%s=%s", filters[i].name, v);
	}
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		const char *v = lookup(ctx, views[i]);

		if (!v || !strcmp(v, "0"))
			continue;
		if (strcmp(v, "1"))
			return bad(why, why_len, "'%s' is 1 or 0", views[i]);
		snprintf(ret->args[ret->nargs++], SQ_ARG_LEN, "--%s", views[i]);
	}
	return 0;
}

int sq_report_argv(const struct sq_request *r, const char *exe, const char *store, __u64 since_s,
		   __u64 until_s, int format, char bufs[][SQ_ARG_LEN], size_t nbufs, char **argv,
		   size_t argv_len)
{
	enum sq_format f = format >= 0 ? (enum sq_format)format : r->format;
	size_t n = 0, b = 0;

	if (argv_len < r->nargs + 9 || nbufs < 4 ||
	    strlen(store) + 9 + (r->rec[0] ? SQ_REC_LEN : 0) > SQ_ARG_LEN)
		return -E2BIG;
	argv[n++] = (char *)exe;
	argv[n++] = (char *)"report";
	if (r->rec[0]) {
		if (r->kind == SQ_DIFF) {
			snprintf(bufs[b], SQ_ARG_LEN, "--diff=%s/%s", store, r->base_rec);
			argv[n++] = bufs[b++];
		}
		snprintf(bufs[b], SQ_ARG_LEN, "%s/%s", store, r->rec);
		argv[n++] = bufs[b++];
		goto format;
	}
	snprintf(bufs[b], SQ_ARG_LEN, "--store=%s", store);
	argv[n++] = bufs[b++];
	snprintf(bufs[b], SQ_ARG_LEN, "--since=@%llu", (unsigned long long)since_s);
	argv[n++] = bufs[b++];
	snprintf(bufs[b], SQ_ARG_LEN, "--until=@%llu", (unsigned long long)until_s);
	argv[n++] = bufs[b++];
format:
	snprintf(bufs[b], SQ_ARG_LEN, "--format=%s", formats[f].report);
	argv[n++] = bufs[b++];
	if (f == SQ_TOP)
		argv[n++] = (char *)"--top=50";
	for (size_t i = 0; i < r->nargs; i++)
		argv[n++] = (char *)r->args[i];
	argv[n] = NULL;
	return (int)n;
}

bool sq_token_equal(const char *tok, const char *want)
{
	size_t n = strlen(want), m = strlen(tok);
	unsigned char d = n != m;

	for (size_t i = 0; i < n; i++)
		d |= (unsigned char)(want[i] ^ (i < m ? tok[i] : 0));
	return !d;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * query.h: `jprof serve`'s requests as `jprof report` command lines. A request's query
 * parameters come from whoever can reach the port: each is checked against what it may be
 * (digits, a known format, a bounded printable name) and goes into the command line as one
 * `--option=value` argument, so no value is ever read as an option or a path. Nothing here
 * touches a file.
 */
#ifndef JPROF_SERVE_QUERY_H
#define JPROF_SERVE_QUERY_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#define SQ_MAX_VALUE 256 /* bytes of one parameter's value */
#define SQ_MAX_ARGS  24	 /* arguments of one report command line */
#define SQ_ARG_LEN   (SQ_MAX_VALUE + 32)
#define SQ_MAX_TIME  (1ull << 40) /* unix seconds: far beyond any store */
#define SQ_REC_LEN   129	  /* a saved recording's name (serve --recordings), NUL included */

/* a parameter's value by name, NULL when absent (libmicrohttpd's lookup, or a test's) */
typedef const char *(*sq_lookup_fn)(void *ctx, const char *name);

enum sq_kind {
	SQ_PROFILE, /* one range of the store (report --store DIR --since --until), or rec */
	SQ_DIFF,    /* two ranges (report --store's base range), or rec against base_rec */
};

/* what the request's output is */
enum sq_format {
	SQ_HTML,
	SQ_FOLDED,
	SQ_PPROF,
	SQ_JFR,
	SQ_SPEEDSCOPE,
	SQ_TOP, /* --top 50: a text table */
};

struct sq_request {
	enum sq_kind kind;
	enum sq_format format;
	__u64 since_s, until_s;		/* the range (SQ_DIFF: the new one) */
	__u64 base_since_s, base_until_s; /* SQ_DIFF: the base range */
	/* a saved recording instead of a range (and SQ_DIFF's base): names in --recordings */
	char rec[SQ_REC_LEN], base_rec[SQ_REC_LEN];
	/* the filters and views, as report options, "--comm=java" ... */
	char args[SQ_MAX_ARGS][SQ_ARG_LEN];
	size_t nargs;
};

/*
 * A saved recording's name as serve lists and reads it: 1 to 128 bytes of letters, digits,
 * '.', '_' and '-', not starting with '.' or '-', ending in .pb.gz, .pprof, .jfr, .folded,
 * .collapsed or .txt (what report reads). No '/': a name is never a path.
 */
bool sq_rec_name_ok(const char *name);

/*
 * Reads a request's parameters: rec (a saved recording, SQ_DIFF also base_rec) or since,
 * until (unix seconds; SQ_DIFF also base_since and base_until), format (html, folded, pprof, jfr, speedscope, top), the filters pid and tid
 * (digits and commas), comm, container, include and exclude (printable ASCII), and the
 * views per-pid, per-thread, per-container, reverse, dotted, lines ("1"). Unknown names are
 * ignored (the token, a cache-buster). 0, or -EINVAL with the reason in why (one line,
 * naming the parameter).
 */
int sq_parse(enum sq_kind kind, sq_lookup_fn lookup, void *ctx, struct sq_request *ret, char *why,
	     size_t why_len);

/* the content type of a format */
const char *sq_content_type(enum sq_format f);
/* a file name extension for the format (for Content-Disposition) */
const char *sq_extension(enum sq_format f);

/*
 * The report command line of one range into argv (argv[0] is exe; NULL-terminated; the
 * strings live in bufs, SQ_MAX_ARGS + 12 of them): `report --store=DIR --since=@S
 * --until=@U --format=F [filters]`; with r->rec, `report [--diff=DIR/BASE_REC] DIR/REC
 * --format=F [filters]` (store is then the recordings' directory). format overrides
 * r->format when >= 0. The number of arguments, or -E2BIG.
 */
int sq_report_argv(const struct sq_request *r, const char *exe, const char *store, __u64 since_s,
		   __u64 until_s, int format, char bufs[][SQ_ARG_LEN], size_t nbufs, char **argv,
		   size_t argv_len);

/* true when tok equals want, in time independent of where they differ */
bool sq_token_equal(const char *tok, const char *want);

#endif /* JPROF_SERVE_QUERY_H */

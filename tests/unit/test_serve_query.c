// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_serve_query.c: jprof serve's request parameters into report command lines; what is refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "serve/query.h"

/* "name=value" pairs, NULL-terminated: the lookup libmicrohttpd would answer */
static const char *lookup(void *ctx, const char *name)
{
	const char *const *kv = ctx;
	size_t n = strlen(name);

	for (; *kv; kv++)
		if (!strncmp(*kv, name, n) && (*kv)[n] == '=')
			return *kv + n + 1;
	return NULL;
}

static int parse(enum sq_kind k, struct sq_request *r, char *why, const char *const *kv)
{
	return sq_parse(k, lookup, (void *)kv, r, why, 256);
}

TEST(profile_argv)
{
	const char *kv[] = {"since=1795777130", "until=1795777140", "format=pprof", "comm=java",
			    "pid=12,345",	"reverse=1",	    "dotted=0",	    "token=abc",
			    NULL};
	char why[256], bufs[8][SQ_ARG_LEN], *argv[SQ_MAX_ARGS + 12];
	struct sq_request r;
	int n;

	EXPECT_EQ(parse(SQ_PROFILE, &r, why, kv), 0);
	EXPECT_EQ(r.since_s, 1795777130);
	EXPECT_EQ(r.until_s, 1795777140);
	EXPECT_EQ(r.format, SQ_PPROF);
	n = sq_report_argv(&r, "/x/jprof", "/var/lib/jprof", r.since_s, r.until_s, -1, bufs, 8, argv,
			   SQ_MAX_ARGS + 12);
	EXPECT_EQ(n, 9);
	EXPECT_STREQ(argv[0], "/x/jprof");
	EXPECT_STREQ(argv[1], "report");
	EXPECT_STREQ(argv[2], "--store=/var/lib/jprof");
	EXPECT_STREQ(argv[3], "--since=@1795777130");
	EXPECT_STREQ(argv[4], "--until=@1795777140");
	EXPECT_STREQ(argv[5], "--format=pprof");
	EXPECT_STREQ(argv[6], "--pid=12,345");
	EXPECT_STREQ(argv[7], "--comm=java");
	EXPECT_STREQ(argv[8], "--reverse");
	EXPECT_TRUE(argv[9] == NULL);
	EXPECT_STREQ(sq_extension(r.format), "pb.gz");
	/* a value that looks like an option stays the option's value */
	{
		const char *kv2[] = {"since=1", "until=2", "include=--output=/etc/passwd", NULL};

		EXPECT_EQ(parse(SQ_PROFILE, &r, why, kv2), 0);
		EXPECT_STREQ(r.args[0], "--include=--output=/etc/passwd");
	}
	/* samples counted, not CPU time: --samples */
	{
		const char *kv4[] = {"since=1", "until=2", "samples=1", NULL};

		EXPECT_EQ(parse(SQ_PROFILE, &r, why, kv4), 0);
		EXPECT_STREQ(r.args[0], "--samples");
	}
	/* top: the table of report --top */
	{
		const char *kv3[] = {"since=1", "until=2", "format=top", NULL};

		EXPECT_EQ(parse(SQ_PROFILE, &r, why, kv3), 0);
		n = sq_report_argv(&r, "j", "/s", 1, 2, -1, bufs, 8, argv, SQ_MAX_ARGS + 12);
		EXPECT_EQ(n, 7);
		EXPECT_STREQ(argv[5], "--format=folded");
		EXPECT_STREQ(argv[6], "--top=50");
	}
}

TEST(diff)
{
	const char *kv[] = {"since=200", "until=300", "base_since=100", "base_until=200", NULL};
	const char *bad[] = {"since=200", "until=300", "base_since=100", NULL};
	const char *pprof[] = {"since=200",	 "until=300",	 "base_since=100",
			       "base_until=200", "format=pprof", NULL};
	struct sq_request r;
	char why[256];

	EXPECT_EQ(parse(SQ_DIFF, &r, why, kv), 0);
	EXPECT_EQ(r.base_since_s, 100);
	EXPECT_EQ(r.base_until_s, 200);
	EXPECT_EQ(r.format, SQ_HTML);
	EXPECT_EQ(parse(SQ_DIFF, &r, why, bad), -EINVAL);
	EXPECT_STREQ(why, "'base_since' and 'base_until' are needed (unix seconds)");
	EXPECT_EQ(parse(SQ_DIFF, &r, why, pprof), -EINVAL);
	EXPECT_STREQ(why, "a diff's 'format' is html, folded or top");
}

/* serve --recordings: a recording by name instead of a range; a diff of two */
TEST(recordings)
{
	const char *kv[] = {"rec=h2-before.pb.gz", "comm=java", "since=1", NULL};
	const char *dkv[] = {"rec=after.jfr", "base_rec=before.folded", "format=top", NULL};
	const char *nobase[] = {"rec=after.jfr", NULL};
	char why[256], bufs[8][SQ_ARG_LEN], *argv[SQ_MAX_ARGS + 12];
	struct sq_request r;
	int n;

	EXPECT_EQ(parse(SQ_PROFILE, &r, why, kv), 0);
	EXPECT_STREQ(r.rec, "h2-before.pb.gz");
	n = sq_report_argv(&r, "j", "/proc/7/fd/3", 0, 0, -1, bufs, 8, argv, SQ_MAX_ARGS + 12);
	EXPECT_EQ(n, 5);
	EXPECT_STREQ(argv[1], "report");
	EXPECT_STREQ(argv[2], "/proc/7/fd/3/h2-before.pb.gz");
	EXPECT_STREQ(argv[3], "--format=html");
	EXPECT_STREQ(argv[4], "--comm=java");
	EXPECT_EQ(parse(SQ_DIFF, &r, why, dkv), 0);
	n = sq_report_argv(&r, "j", "/proc/7/fd/3", 0, 0, -1, bufs, 8, argv, SQ_MAX_ARGS + 12);
	EXPECT_EQ(n, 6);
	EXPECT_STREQ(argv[2], "--diff=/proc/7/fd/3/before.folded");
	EXPECT_STREQ(argv[3], "/proc/7/fd/3/after.jfr");
	EXPECT_STREQ(argv[4], "--format=folded");
	EXPECT_STREQ(argv[5], "--top=50");
	EXPECT_EQ(parse(SQ_DIFF, &r, why, nobase), -EINVAL);
	EXPECT_STREQ(why, "a diff of 'rec' needs 'base_rec'");
	/* names, never paths or options; only what report reads */
	EXPECT_TRUE(sq_rec_name_ok("a.pb.gz") && sq_rec_name_ok("x_1-2.pprof") &&
		    sq_rec_name_ok("c.collapsed") && sq_rec_name_ok("t.txt"));
	EXPECT_TRUE(!sq_rec_name_ok("") && !sq_rec_name_ok(".pb.gz") && !sq_rec_name_ok(".x.jfr") &&
		    !sq_rec_name_ok("-x.jfr") && !sq_rec_name_ok("../x.jfr") &&
		    !sq_rec_name_ok("a/b.jfr") && !sq_rec_name_ok("a.jfr ") &&
		    !sq_rec_name_ok("a.exe") && !sq_rec_name_ok("jfr") && !sq_rec_name_ok("a\nb.jfr"));
	{
		char longname[SQ_REC_LEN + 8];

		memset(longname, 'a', sizeof(longname));
		memcpy(longname + SQ_REC_LEN - 5, ".jfr", 5); /* 128 bytes: the most */
		EXPECT_TRUE(sq_rec_name_ok(longname));
		memset(longname, 'a', sizeof(longname));
		memcpy(longname + SQ_REC_LEN - 4, ".jfr", 5);
		EXPECT_TRUE(!sq_rec_name_ok(longname));
	}
	{
		const char *badrec[] = {"rec=../../etc/shadow.txt", NULL};

		EXPECT_EQ(parse(SQ_PROFILE, &r, why, badrec), -EINVAL);
	}
}

TEST(refused)
{
	static const char *const cases[][6] = {
		{"until=2", NULL},
		{"since=1", "until=1", NULL},
		{"since=2", "until=1", NULL},
		{"since=-1", "until=2", NULL},
		{"since=+1", "until=2", NULL},
		{"since= 1", "until=2", NULL},
		{"since=1", "until=99999999999999", NULL},
		{"since=1", "until=2", "format=exe", NULL},
		{"since=1", "until=2", "pid=1,", NULL},
		{"since=1", "until=2", "pid=,1", NULL},
		{"since=1", "until=2", "pid=1;2", NULL},
		{"since=1", "until=2", "tid=", NULL},
		{"since=1", "until=2", "comm=a\nb", NULL},
		{"since=1", "until=2", "comm=", NULL},
		{"since=1", "until=2", "reverse=yes", NULL},
		{"since=1", "until=2", "include=caf\xc3\xa9", NULL},
	};
	struct sq_request r;
	char why[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		EXPECT_EQ(parse(SQ_PROFILE, &r, why, cases[i]), -EINVAL);
		EXPECT_TRUE(why[0] != '\0');
	}
	/* a value over SQ_MAX_VALUE */
	{
		static char big[SQ_MAX_VALUE + 16] = "comm=";
		const char *kv[] = {"since=1", "until=2", big, NULL};

		memset(big + 5, 'a', SQ_MAX_VALUE + 1);
		EXPECT_EQ(parse(SQ_PROFILE, &r, why, kv), -EINVAL);
		EXPECT_STREQ(why, "'comm' must be a process name (at most 256 bytes)");
	}
}

TEST(token)
{
	EXPECT_TRUE(sq_token_equal("0123456789abcdef", "0123456789abcdef"));
	EXPECT_TRUE(!sq_token_equal("0123456789abcdeg", "0123456789abcdef"));
	EXPECT_TRUE(!sq_token_equal("0123456789abcde", "0123456789abcdef"));
	EXPECT_TRUE(!sq_token_equal("0123456789abcdef0", "0123456789abcdef"));
	EXPECT_TRUE(!sq_token_equal("", "0123456789abcdef"));
}


// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_folded.c: folded writer: golden output, sanitizing, order, round trip, write errors. */
#include <errno.h>
#include <stdlib.h>

#include "capture.h"
#include "harness.h"
#include "out/out.h"

#define F(n, k) ((struct prof_frame){ (n), (k) })
#define GOLDEN	"tests/golden/small.folded"

/* out_folded_write into a string; NULL on error (*ret_err says which) */
static char *folded(const struct profile *p, int *ret_err)
{
	return capture(out_folded_write, p, ret_err);
}

static struct profile *parse(const char *s)
{
	struct profile *p = profile__new("t", "samples");
	FILE *f = fmemopen((void *)s, strlen(s), "r");
	size_t line = 0;
	int err = f && p ? profile__read_folded(p, f, &line) : -ENOMEM;

	if (f)
		fclose(f);
	if (err) {
		fprintf(stderr, "  parse failed: %d at line %zu\n", err, line);
		profile__free(p);
		return NULL;
	}
	return p;
}

static int lines_sorted(const char *s)
{
	const char *prev = NULL, *cur = s;

	while (*cur) {
		const char *nl = strchr(cur, '\n');

		if (!nl)
			return 0; /* every line ends in '\n' */
		if (prev) {
			size_t a = (size_t)(cur - 1 - prev), b = (size_t)(nl - cur);
			int c = memcmp(prev, cur, a < b ? a : b);

			if (c > 0 || (!c && a >= b))
				return 0;
		}
		prev = cur;
		cur = nl + 1;
	}
	return 1;
}

/* a small JVM-ish profile with every kind */
static struct profile *small_profile(void)
{
	struct profile *p = profile__new("golden", "samples");
	struct prof_frame a[] = { F("[process 4242 java]", JP_FK_ROOT), F("[thread main]", JP_FK_ROOT),
				F("start_thread", JP_FK_NATIVE), F("JavaMain", JP_FK_JVM),
				F("App.main", JP_FK_INTERP), F("App.loop", JP_FK_JIT),
				F("App.hash", JP_FK_INLINED) };
	struct prof_frame b[] = { F("[process 4242 java]", JP_FK_ROOT), F("[thread main]", JP_FK_ROOT),
				F("start_thread", JP_FK_NATIVE), F("JavaMain", JP_FK_JVM),
				F("App.main", JP_FK_INTERP), F("App.loop", JP_FK_JIT),
				F("write", JP_FK_NATIVE), F("entry_SYSCALL_64", JP_FK_KERNEL),
				F("ksys_write", JP_FK_KERNEL) };
	struct prof_frame c[] = { F("[process 4242 java]", JP_FK_ROOT), F("[thread GC Thread#0]", JP_FK_ROOT),
				F("GangWorker::loop", JP_FK_JVM) };
	struct prof_frame d[] = { F("[process 7 sh]", JP_FK_ROOT), F("main", JP_FK_NATIVE) };

	if (!p)
		return NULL;
	if (profile__add(p, a, 7, 40) || profile__add(p, a, 6, 12) || profile__add(p, b, 9, 5) ||
	    profile__add(p, c, 3, 9) || profile__add(p, d, 2, 1) || profile__add(p, a, 5, 2)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

TEST(golden_small)
{
	struct profile *p = small_profile();
	char *out, *want = NULL;
	size_t cap = 0;
	ssize_t n;
	int err;
	FILE *g;

	ASSERT_TRUE(p);
	out = folded(p, &err);
	EXPECT_EQ(err, 0);
	ASSERT_TRUE(out);
	if (getenv("JPROF_UPDATE_GOLDEN")) {
		g = fopen(GOLDEN, "w");
		ASSERT_TRUE(g);
		fputs(out, g);
		EXPECT_EQ(fclose(g), 0);
		fprintf(stderr, "  wrote %s\n", GOLDEN);
	}
	g = fopen(GOLDEN, "r");
	ASSERT_TRUE(g);
	n = getdelim(&want, &cap, '\0', g);
	fclose(g);
	ASSERT_TRUE(n > 0);
	EXPECT_STREQ(out, want);
	EXPECT_TRUE(lines_sorted(out));
	free(want);
	free(out);
	profile__free(p);
}

TEST(only_self_weight_and_root_line)
{
	struct profile *p = profile__new("t", "samples");
	struct prof_frame s[] = { F("a", JP_FK_NATIVE), F("b", JP_FK_JIT) };
	char *out;
	int err;

	ASSERT_TRUE(p);
	EXPECT_EQ(profile__add(p, s, 2, 3), 0);
	EXPECT_EQ(profile__add(p, NULL, 0, 2), 0);
	EXPECT_EQ(profile__add(p, s, 1, 0), 0); /* zero self weight: no line */
	out = folded(p, &err);
	EXPECT_EQ(err, 0);
	EXPECT_STREQ(out, " 2\na;b_[j] 3\n");
	free(out);
	profile__free(p);
	/* empty profile: empty output */
	p = profile__new("t", "samples");
	out = folded(p, &err);
	EXPECT_STREQ(out, "");
	free(out);
	profile__free(p);
}

TEST(sanitized_names)
{
	struct profile *p = profile__new("t", "samples");
	struct prof_frame s1[] = { F("ns;Cls.m", JP_FK_JIT), F("two\nlines\r", JP_FK_NATIVE) };
	struct prof_frame s2[] = { F(" pad ", JP_FK_NATIVE), F("", JP_FK_KERNEL) };
	/* renders the same as s1's first frame: one merged line */
	struct prof_frame s3[] = { F("ns:Cls.m", JP_FK_JIT), F("two\nlines\r", JP_FK_NATIVE) };
	char *out;
	int err;

	ASSERT_TRUE(p);
	EXPECT_EQ(profile__add(p, s1, 2, 1), 0);
	EXPECT_EQ(profile__add(p, s2, 2, 2), 0);
	EXPECT_EQ(profile__add(p, s3, 2, 4), 0);
	out = folded(p, &err);
	EXPECT_EQ(err, 0);
	EXPECT_STREQ(out, "_pad_;[unknown]_[k] 2\nns:Cls.m_[j];two?lines? 5\n");
	free(out);
	profile__free(p);
}

TEST(frames_that_print_alike_share_a_line)
{
	/* native, JVM and root markers print without a suffix; "x_[j]" native reads as JIT x */
	struct profile *p = profile__new("t", "samples");
	struct prof_frame s1[] = { F("r", JP_FK_ROOT), F("[unknown]", JP_FK_JVM) };
	struct prof_frame s2[] = { F("r", JP_FK_ROOT), F("[unknown]", JP_FK_NATIVE) };
	struct prof_frame s3[] = { F("r", JP_FK_NATIVE), F("x_[j]", JP_FK_NATIVE) };
	struct prof_frame s4[] = { F("r", JP_FK_ROOT), F("x", JP_FK_JIT) };
	char *out;
	int err;

	ASSERT_TRUE(p);
	EXPECT_EQ(profile__add(p, s1, 2, 1), 0);
	EXPECT_EQ(profile__add(p, s2, 2, 2), 0);
	out = folded(p, &err);
	EXPECT_EQ(err, 0);
	EXPECT_STREQ(out, "r;[unknown] 3\n");
	free(out);
	EXPECT_EQ(profile__add(p, s3, 2, 4), 0);
	EXPECT_EQ(profile__add(p, s4, 2, 8), 0);
	out = folded(p, &err);
	EXPECT_EQ(err, 0);
	EXPECT_STREQ(out, "r;[unknown] 3\nr;x_[j] 12\n");
	free(out);
	profile__free(p);
}

TEST(order_is_by_line_not_by_name)
{
	/* "a" < "a b" by name, but the line "a 7" sorts after "a b 3" (' ' then '7' > 'b') */
	struct profile *p = profile__new("t", "samples");
	struct prof_frame s1[] = { F("a", JP_FK_NATIVE), F("z", JP_FK_NATIVE) };
	struct prof_frame s2[] = { F("a b", JP_FK_NATIVE) };
	struct prof_frame s3[] = { F("a 9", JP_FK_NATIVE) };
	struct prof_frame s4[] = { F("a:", JP_FK_NATIVE) };
	char *out;
	int err;

	ASSERT_TRUE(p);
	EXPECT_EQ(profile__add(p, s1, 1, 7), 0);
	EXPECT_EQ(profile__add(p, s1, 2, 1), 0);
	EXPECT_EQ(profile__add(p, s2, 1, 3), 0);
	EXPECT_EQ(profile__add(p, s3, 1, 2), 0);
	EXPECT_EQ(profile__add(p, s4, 1, 2), 0);
	out = folded(p, &err);
	EXPECT_EQ(err, 0);
	EXPECT_STREQ(out, "a 7\na 9 2\na b 3\na: 2\na;z 1\n");
	EXPECT_TRUE(lines_sorted(out));
	free(out);
	profile__free(p);
}

TEST(round_trip)
{
	struct profile *p = small_profile(), *q;
	char *a, *b;
	int err;

	ASSERT_TRUE(p);
	a = folded(p, &err);
	ASSERT_TRUE(a);
	q = parse(a);
	ASSERT_TRUE(q);
	EXPECT_EQ(profile__total(q), profile__total(p));
	EXPECT_EQ(profile__node_count(q), profile__node_count(p) - 0);
	b = folded(q, &err);
	EXPECT_STREQ(a, b);
	free(a);
	free(b);
	profile__free(p);
	profile__free(q);
}

TEST(enospc_surfaces)
{
	struct profile *p = small_profile();
	FILE *f = fopen("/dev/full", "w");

	ASSERT_TRUE(p && f);
	EXPECT_EQ(out_folded_write(p, f), -ENOSPC);
	fclose(f);
	profile__free(p);
}

TEST(format_names)
{
	EXPECT_EQ(out_format_parse("folded"), OUT_FOLDED);
	EXPECT_EQ(out_format_parse("collapsed"), OUT_FOLDED);
	EXPECT_EQ(out_format_parse("txt"), OUT_FOLDED);
	EXPECT_EQ(out_format_parse("html"), OUT_HTML);
	EXPECT_EQ(out_format_parse("pdf"), -EINVAL);
	EXPECT_EQ(out_format_parse(NULL), -EINVAL);
	EXPECT_EQ(out_format_from_path("/tmp/x.folded"), OUT_FOLDED);
	EXPECT_EQ(out_format_from_path("out.collapsed"), OUT_FOLDED);
	EXPECT_EQ(out_format_from_path("a.b/out.TXT"), OUT_FOLDED);
	EXPECT_EQ(out_format_from_path("flame.html"), OUT_HTML);
	EXPECT_EQ(out_format_from_path("flame.htm"), OUT_HTML);
	EXPECT_EQ(out_format_from_path("a.html/noext"), -ENOENT);
	EXPECT_EQ(out_format_from_path(".html"), -ENOENT);
	EXPECT_EQ(out_format_from_path("x.pprof"), OUT_PPROF);
	EXPECT_EQ(out_format_from_path("/a/x.pb.gz"), OUT_PPROF);
	EXPECT_EQ(out_format_from_path("x.gz"), -EINVAL);
	EXPECT_EQ(out_format_from_path("x.speedscope.json"), OUT_SPEEDSCOPE);
	EXPECT_EQ(out_format_from_path("x.json"), -EINVAL);
	EXPECT_EQ(out_format_parse("pprof"), OUT_PPROF);
	EXPECT_STREQ(out_format_name(OUT_SPEEDSCOPE), "speedscope");
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* test_trace.c: jprof trace's command line and statistics (user/trace/). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "opts.h"
#include "profile.h"
#include "trace/tfile.h"
#include "trace/trace.h"
#include "trace/tstats.h"

static int parse(struct trace_opts *o, char *err, size_t n, int argc, const char **argv)
{
	return trace_parse(argc, (char **)argv, o, err, n);
}

TEST(parse_good)
{
	const char *argv[] = {"trace",	"-p",	"42",	 "a.B.c", "x.*.get*(I)V", "-d",	   "3",
			      "--slow", "10ms", "--top", "5",	  "-o",		  "t.json"};
	struct trace_opts o;
	char err[256] = "";

	EXPECT_EQ(parse(&o, err, sizeof(err), 13, argv), 0);
	EXPECT_EQ(o.pid, 42);
	EXPECT_EQ(o.npatterns, 2);
	EXPECT_STREQ(o.patterns[1], "x.*.get*(I)V");
	EXPECT_EQ(o.duration_s, 3);
	EXPECT_EQ(o.slow_ns, 10000000);
	EXPECT_EQ(o.top, 5);
	EXPECT_EQ(o.json, 1);
	EXPECT_EQ(o.npids, 1);
}

TEST(parse_pids)
{
	const char *argv[] = {"trace", "-p", "42,7,1000", "a.B.c"};
	struct trace_opts o;
	char err[256] = "";

	EXPECT_EQ(parse(&o, err, sizeof(err), 4, argv), 0);
	EXPECT_EQ(o.npids, 3);
	EXPECT_EQ(o.pid, 42);
	EXPECT_EQ(o.pids[1], 7);
	EXPECT_EQ(o.pids[2], 1000);
	argv[2] = "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17";
	EXPECT_EQ(parse(&o, err, sizeof(err), 4, argv), JP_EXIT_USAGE);
}

TEST(parse_no_kernel)
{
	const char *argv[] = {"trace", "-p", "42", "a.B.c", "--no-kernel"};
	struct trace_opts o;
	char err[256] = "";

	EXPECT_EQ(parse(&o, err, sizeof(err), 4, argv), 0);
	EXPECT_EQ(o.no_kernel, 0); /* the split on by default */
	EXPECT_EQ(parse(&o, err, sizeof(err), 5, argv), 0);
	EXPECT_EQ(o.no_kernel, 1);
	EXPECT_EQ(o.npatterns, 1);
}

TEST(parse_errors_one_line)
{
	static struct {
		int argc;
		const char *argv[6];
		const char *want;
	} cases[] = {
		{3, {"trace", "-p", "42"}, "at least one"},
		{2, {"trace", "a.B.c"}, "needs -p PID"},
		{4, {"trace", "-p", "x", "a.B.c"}, "distinct pids"},
		{4, {"trace", "-p", "4,4", "a.B.c"}, "distinct pids"},
		{4, {"trace", "-p", "4,", "a.B.c"}, "distinct pids"},
		{4, {"trace", "-p", "42", "method"}, "bad pattern 'method'"},
		{4, {"trace", "-p", "42", ".m"}, "bad pattern"},
		{4, {"trace", "-p", "42", "a.B."}, "bad pattern"},
		{4, {"trace", "-p", "42", "a.B.c|d"}, "bad pattern"},
		{4, {"trace", "-p", "42", "a.B.c(I"}, "lacks its ')'"},
		{6, {"trace", "-p", "42", "a.B.c", "--slow", "fast"}, "bad --slow"},
		{6, {"trace", "-p", "42", "a.B.c", "-d", "0"}, "bad duration"},
		{6, {"trace", "-p", "42", "a.B.c", "-f", "xml"}, "text, json"},
		{5, {"trace", "-p", "42", "a.B.c", "--nope"}, "unknown option"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_opts o;
		char err[256] = "";

		EXPECT_EQ(parse(&o, err, sizeof(err), cases[i].argc, cases[i].argv), JP_EXIT_USAGE);
		if (!strstr(err, cases[i].want) || strchr(err, '\n'))
			FAIL_AT("case %zu: '%s' lacks '%s'", i, err, cases[i].want);
	}
}

TEST(quantiles_within_a_bucket)
{
	struct tstats *s = tstats__new(3);
	__u64 q;

	ASSERT_TRUE(s);
	/* 1..1000 us: p50 = 500 us, p90 = 900 us, p99 = 990 us, within 1/128 */
	for (__u64 i = 1; i <= 1000; i++)
		EXPECT_EQ(tstats__add(s, 7, 100 + (__u32)(i % 3), i * 1000, i * 1000, i % 10 == 0),
			  0);
	EXPECT_EQ(tstats__calls(s, 7), 1000);
	q = tstats__quantile(s, 7, 0.5);
	EXPECT_TRUE(q >= 500000 - 500000 / 128 && q <= 500000 + 500000 / 128);
	q = tstats__quantile(s, 7, 0.9);
	EXPECT_TRUE(q >= 900000 - 900000 / 128 && q <= 900000 + 900000 / 128);
	q = tstats__quantile(s, 7, 0.99);
	EXPECT_TRUE(q >= 990000 - 990000 / 128 && q <= 990000 + 990000 / 128);
	EXPECT_EQ(tstats__quantile(s, 7, 0), 1000);
	EXPECT_EQ(tstats__quantile(s, 7, 1), 1000000);
	/* small values are exact */
	EXPECT_EQ(tstats__add(s, 8, 1, 0, 42, 0), 0);
	EXPECT_EQ(tstats__quantile(s, 8, 0.5), 42);
	/* out of range ids are refused */
	EXPECT_EQ(tstats__add(s, TSTATS_METHODS_MAX, 1, 0, 1, 0), -EINVAL);
	tstats__free(s);
}

TEST(slowest_sorted_and_thresholded)
{
	struct tstats *s = tstats__new(3);
	__u32 tid;

	ASSERT_TRUE(s);
	tstats__set_slow(s, 50);
	EXPECT_EQ(tstats__add(s, 1, 11, 0, 40, 0), 0); /* under --slow */
	EXPECT_EQ(tstats__add(s, 1, 12, 0, 60, 0), 0);
	EXPECT_EQ(tstats__add(s, 1, 13, 0, 90, 0), 0);
	EXPECT_EQ(tstats__add(s, 1, 14, 0, 70, 0), 0);
	EXPECT_EQ(tstats__add(s, 1, 15, 0, 80, 0), 0);
	EXPECT_EQ(tstats__slow_tid(s, 0, &tid), 0);
	EXPECT_EQ(tid, 13);
	EXPECT_EQ(tstats__slow_tid(s, 1, &tid), 0);
	EXPECT_EQ(tid, 15);
	EXPECT_EQ(tstats__slow_tid(s, 2, &tid), 0);
	EXPECT_EQ(tid, 14);
	EXPECT_EQ(tstats__slow_tid(s, 3, &tid), -ENOENT);
	{
		const char *st[] = {"a.B.c", "a.B.main"};

		EXPECT_EQ(tstats__set_stack(s, 1, 13, 0, st, 2), 1);
		EXPECT_EQ(tstats__set_stack(s, 1, 11, 0, st, 2), 0); /* not kept */
		/* a slower call pushes out the last kept, and its stack goes with it (ASAN) */
		EXPECT_EQ(tstats__set_stack(s, 1, 14, 0, st, 1), 1);
		EXPECT_EQ(tstats__add(s, 1, 16, 0, 95, 0), 0);
		EXPECT_EQ(tstats__slow_tid(s, 0, &tid), 0);
		EXPECT_EQ(tid, 16);
	}
	tstats__free(s);
}

/* the slowest calls as a flame graph: root, thread, main .. method, weighted by duration */
TEST(slow_stacks_as_a_profile)
{
	struct tstats *s = tstats__new(5);
	struct profile *p = profile__new("t", "ns");
	const char *st[] = {"a.B.c", "a.B.main"};
	const struct profile_node *n;

	ASSERT_TRUE(s && p);
	EXPECT_EQ(tstats__name(s, 1, "a.B.c()V", NULL), 0);
	EXPECT_EQ(tstats__add(s, 1, 7, 0, 300, 0), 0);
	EXPECT_EQ(tstats__add(s, 1, 8, 5, 200, 0), 0);
	EXPECT_EQ(tstats__set_stack(s, 1, 7, 0, st, 2), 1);
	EXPECT_EQ(tstats__thread(s, 7, "worker-1"), 0);
	EXPECT_EQ(tstats__add_slow_stacks(s, "JVM 42", p), 0);
	n = profile_node__child(profile__root(p));
	ASSERT_TRUE(n);
	EXPECT_STREQ(profile_node__name(n), "JVM 42");
	EXPECT_EQ(profile_node__total(n), 500);
	EXPECT_TRUE(profile_node__next(n) == NULL);
	/* the thread with its stack: worker-1 > a.B.main > a.B.c (300); tid 8 > a.B.c()V (200) */
	for (n = profile_node__child(n); n; n = profile_node__next(n)) {
		const struct profile_node *k = profile_node__child(n);

		ASSERT_TRUE(k);
		if (!strcmp(profile_node__name(n), "worker-1")) {
			EXPECT_STREQ(profile_node__name(k), "a.B.main");
			EXPECT_STREQ(profile_node__name(profile_node__child(k)), "a.B.c");
			EXPECT_EQ(profile_node__self(profile_node__child(k)), 300);
		} else {
			EXPECT_STREQ(profile_node__name(n), "tid 8");
			EXPECT_STREQ(profile_node__name(k), "a.B.c()V");
			EXPECT_EQ(profile_node__self(k), 200);
		}
	}
	profile__free(p);
	tstats__free(s);
}

TEST(outputs_name_every_method)
{
	struct tstats *s = tstats__new(2);
	struct tstats_totals t = {.stopped = "stopped by jprof", .seconds = 1.5};
	char *buf = NULL;
	size_t n = 0;
	FILE *f;

	ASSERT_TRUE(s);
	EXPECT_EQ(tstats__name(s, 0, "a.B.c()V", NULL), 0);
	EXPECT_EQ(tstats__name(s, 1, "a.B.<init>()V", "constructors are not traced yet"), 0);
	EXPECT_EQ(tstats__name(s, 2, "a.B.\"q\"()V", NULL), 0);
	EXPECT_EQ(tstats__add(s, 0, 5, 10, 5000000, 1), 0);
	EXPECT_EQ(tstats__thread(s, 5, "main"), 0);
	f = open_memstream(&buf, &n);
	ASSERT_TRUE(f);
	tstats__write_json(s, &t, f);
	fclose(f);
	EXPECT_TRUE(strstr(buf, "{\"method\":\"a.B.c()V\",\"calls\":1,\"thrown\":1,") != NULL);
	EXPECT_TRUE(strstr(buf, "\"refused\":\"constructors are not traced yet\"") != NULL);
	EXPECT_TRUE(strstr(buf, "a.B.\\\"q\\\"()V") != NULL);
	EXPECT_TRUE(strstr(buf, "\"thread\":\"main\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"hist\":[[4194304,1]]") != NULL); /* 5 ms in [2^22, 2^23) */
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &n);
	ASSERT_TRUE(f);
	tstats__write_text(s, &t, f);
	fclose(f);
	EXPECT_TRUE(strstr(buf, "refused: a.B.<init>()V: constructors") != NULL);
	EXPECT_TRUE(strstr(buf, "5.00 ms") != NULL);
	EXPECT_TRUE(strstr(buf, "main") != NULL);
	free(buf);
	tstats__free(s);
}

/* a trace file as the agent writes it: 3 records (one not committed), 2 methods, a stack */
TEST(tfile_reads_records_methods_stacks)
{
	const size_t slots = 64, stacks_off = JP_MT_DATA_OFF + slots * 32;
	const size_t names_off = stacks_off + 2 * sizeof(struct jp_mt_stack);
	const size_t size = names_off + 4 * sizeof(struct jp_mt_name);
	uint8_t *f = calloc(1, size);
	struct jp_mt_hdr *h = (struct jp_mt_hdr *)f, out;
	struct jp_mt_method *m = (struct jp_mt_method *)(f + JP_MT_HDR_SIZE);
	struct jp_mt_rec *r = (struct jp_mt_rec *)(f + JP_MT_DATA_OFF);
	struct jp_mt_stack *st = (struct jp_mt_stack *)(f + stacks_off);
	struct jp_mt_name *nm = (struct jp_mt_name *)(f + names_off);
	struct tstats_totals tot = {.stopped = "stopped by jprof"};
	struct tstats *s = tstats__new(3);
	struct tfile *t = NULL;
	char *buf = NULL;
	size_t bn = 0;
	FILE *mf;
	int fd;

	ASSERT_TRUE(f && s);
	*h = (struct jp_mt_hdr){.magic = JP_MT_MAGIC,
				.version = JP_MT_VERSION,
				.hdr_size = JP_MT_HDR_SIZE,
				.n_slots = (__u32)slots,
				.state = JP_MT_STOPPED,
				.n_methods = 2,
				.head = 4,
				.stacks_off = (__u32)stacks_off,
				.n_stacks = 2,
				.names_off = (__u32)names_off,
				.n_names = 4,
				.slow_ns = 1,
				.stacks_used = 1,
				.names_used = 2,
				.dropped = 9};
	memcpy(m[0].name, "a.B.c()V", 8);
	m[0].name_len = 8;
	m[0].flags = JP_MT_M_TRACED;
	memcpy(m[1].name, "a.B.<init>()V", 13);
	m[1].name_len = 13;
	memcpy(m[1].why, "constructors", 12);
	m[1].why_len = 12;
	m[1].flags = JP_MT_M_REFUSED;
	for (int k = 0; k < 3; k++)
		r[k] = (struct jp_mt_rec){.seq = (__u64)k + 1,
					  .start_ns = 1000u * (__u64)k,
					  .dur_ns = 5000000u + (__u64)k,
					  .tid = 77,
					  .thrown = k == 2};
	r[3] = (struct jp_mt_rec){.seq = 0, .dur_ns = 1}; /* reserved, not committed */
	st[0] = (struct jp_mt_stack){
		.start_ns = 2000, .tid = 77, .method = 0, .n_frames = 2, .ready = 1};
	st[0].frames[0].method_id = 0x1234;
	st[0].frames[1].method_id = 0x5678;
	/* --args as the JVM user may write them: kinds and positions checked, chars printable */
	st[0].n_args = 99; /* more than there are: JP_MT_ARGS read */
	st[0].args[0] = (struct jp_mt_arg){.pos = 0, .kind = 1, .val = 0xffffffffu};
	st[0].args[1] = (struct jp_mt_arg){.pos = 1, .kind = 5, .val = 1u << 30};
	memcpy(st[0].args[1].str, "ab\"c\001defghijklmnop", 16);
	st[0].args[2] = (struct jp_mt_arg){.pos = 2, .kind = 77, .val = 5}; /* no such kind */
	st[0].args[3] = (struct jp_mt_arg){.pos = 3, .kind = 4, .val = 0x4004000000000000ull};
	nm[0] = (struct jp_mt_name){.method_id = 0x1234, .len = 5};
	memcpy(nm[0].name, "a.B.c", 5);
	nm[1] = (struct jp_mt_name){.method_id = 0x5678, .len = 9};
	memcpy(nm[1].name, "a.B.ma\nin", 9); /* a control byte: printed as '?' */
	fd = memfd_create("t", MFD_CLOEXEC);
	ASSERT_TRUE(fd >= 0 && write(fd, f, size) == (ssize_t)size);
	EXPECT_EQ(tfile__open_fd(fd, size, &t), 0);
	ASSERT_TRUE(t);
	tfile__drain(t, s);
	EXPECT_EQ(tstats__calls(s, 0), 3);
	EXPECT_EQ(tfile__finish(t, s, &out), 2);
	EXPECT_EQ(out.dropped, 9);
	EXPECT_EQ(tfile__state(t), JP_MT_STOPPED);
	mf = open_memstream(&buf, &bn);
	ASSERT_TRUE(mf);
	tstats__write_json(s, &tot, mf);
	fclose(mf);
	EXPECT_TRUE(strstr(buf, "\"calls\":3,\"thrown\":1") != NULL);
	EXPECT_TRUE(strstr(buf, "\"refused\":\"constructors\"") != NULL);
	EXPECT_TRUE(strstr(buf, "\"stack\":[\"a.B.c\",\"a.B.ma?in\"]") != NULL);
	EXPECT_TRUE(strstr(buf, "\"args\":\"#0 -1, #1 \\\"ab\\\"c?defghijklmn...\\\", #3 2.5\"") !=
		    NULL);
	free(buf);
	tfile__free(t);
	/* a header this jprof does not read: refused, the fd closed */
	fd = memfd_create("t", MFD_CLOEXEC);
	h->n_slots = 48;
	ASSERT_TRUE(fd >= 0 && write(fd, f, size) == (ssize_t)size);
	t = NULL;
	EXPECT_EQ(tfile__open_fd(fd, size, &t), -EPROTO);
	tstats__free(s);
	free(f);
}

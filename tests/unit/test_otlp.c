// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_otlp.c: the OTLP profiles request (daemon/otlp.h), read back by an independent walker. */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "../common/otlp_check.h"
#include "daemon/otlp.h"
#include "model/model.h"
#include "out/pprof.h"

static struct model *two_threads(void)
{
	struct model *m = model__new();
	struct jp_location a = {.func = model__func(m, "com/acme/App.work", "App.java", true),
				.line = 12,
				.kind = JP_FK_JIT};
	struct jp_location b = {.func = model__func(m, "main", "/bin/app", false),
				.addr = 0x1234,
				.kind = JP_FK_NATIVE};
	jp_id locs[2] = {model__location(m, &a), model__location(m, &b)};
	jp_id s1 = model__stack(m, locs, 2), s2 = model__stack(m, locs + 1, 1);
	struct jp_labels l1 = {.pid = 10,
			       .tid = 11,
			       .comm = "java",
			       .thread = "worker-1",
			       .container = "",
			       .main = "com.acme.App"};
	struct jp_labels l2 = {.pid = 10,
			       .tid = 12,
			       .comm = "java",
			       .thread = "worker-2",
			       .container = "abc123",
			       .main = ""};
	jp_id L1 = model__labels(m, &l1), L2 = model__labels(m, &l2);

	model__add(m, s1, L1, JP_VAL_CPU_SAMPLES, 7);
	model__add(m, s1, L1, JP_VAL_CPU_NS, 70000000);
	model__add(m, s2, L2, JP_VAL_CPU_SAMPLES, 3);
	model__add(m, s2, L2, JP_VAL_CPU_NS, 30000000);
	model__add(m, s2, L1, JP_VAL_OFFCPU_NS, 5000);
	return m;
}

TEST(request_reads_back)
{
	struct model *m = two_threads();
	struct otlp_meta meta = {.host = "db1",
				 .time_ns = 1700000000000000000ull,
				 .duration_ns = 60000000000ull,
				 .period_ns = 10101010};
	struct otlp_summary s;
	struct bytebuf out = {0};

	EXPECT_EQ(otlp_encode(m, &meta, &out), 0);
	EXPECT_EQ(otlp_check(out.p, out.n, &s), 0);
	EXPECT_STREQ(s.host, "db1");
	/* one profile per column that holds anything */
	EXPECT_EQ(s.nprofiles, 3);
	EXPECT_STREQ(s.types[0], "samples");
	EXPECT_EQ(s.totals[0], 10);
	EXPECT_STREQ(s.types[1], "cpu");
	EXPECT_EQ(s.totals[1], 100000000);
	EXPECT_STREQ(s.types[2], "offcpu");
	EXPECT_EQ(s.totals[2], 5000);
	EXPECT_EQ(s.nsamples, 5);
	/* zero entries + 2 locations, 2 functions, 2 stacks */
	EXPECT_EQ(s.nlocs, 3);
	EXPECT_EQ(s.nfuncs, 3);
	EXPECT_EQ(s.nstacks, 3);
	/* zero + pid 10, tid 11, tid 12, java, worker-1, worker-2, main, container */
	EXPECT_EQ(s.nattrs, 9);
	bytebuf_free(&out);
	model__free(m);
}

TEST(from_pprof)
{
	struct model *m = two_threads();
	struct pprof_opts o = {.values = (1u << JP_VAL_MAX) - 1,
			       .time_ns = 5000000000ull,
			       .duration_ns = 1000000000ull,
			       .period_ns = 10101010};
	struct otlp_summary s;
	struct bytebuf out = {0};
	char *buf = NULL, why[128] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	EXPECT_EQ(out_pprof_write(m, &o, f), 0);
	fclose(f);
	EXPECT_EQ(otlp_from_pprof(buf, len, "h", &out, why, sizeof(why)), 0);
	EXPECT_EQ(otlp_check(out.p, out.n, &s), 0);
	EXPECT_EQ(s.nprofiles, 3);
	EXPECT_EQ(s.totals[0], 10);
	bytebuf_free(&out);
	/* not a profile: refused with a reason, nothing sent */
	EXPECT_EQ(otlp_from_pprof("garbage", 7, "h", &out, why, sizeof(why)), -EINVAL);
	EXPECT_TRUE(why[0] != '\0');
	bytebuf_free(&out);
	free(buf);
	model__free(m);
}

TEST(empty_model)
{
	struct model *m = model__new();
	struct otlp_meta meta = {.time_ns = 1};
	struct otlp_summary s;
	struct bytebuf out = {0};

	EXPECT_EQ(otlp_encode(m, &meta, &out), 0);
	EXPECT_EQ(otlp_check(out.p, out.n, &s), 0);
	EXPECT_EQ(s.nprofiles, 1); /* an empty CPU profile says the interval */
	EXPECT_EQ(s.nsamples, 0);
	bytebuf_free(&out);
	model__free(m);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sctable.c: syscall table building, percentiles, errno names, text and JSON writers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "out/sctable.h"
#include "jprof.h" /* JP_SC_HIST_BUCKETS: the histograms the BPF side fills */

/* write to memory; returns the writer's result, *out the NUL-terminated text */
static int capture(int (*fn)(const struct sc_table *, FILE *), const struct sc_table *t, char **out)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	int err;

	if (!f)
		return -errno;
	err = fn(t, f);
	fclose(f);
	return err;
}

static struct sc_table *sample_table(void)
{
	struct sc_table *t = sc_table_new();
	struct sc_row *r;

	if (!t)
		return NULL;
	r = sc_table_row(t, 100, 0, "small", 1, "write");
	r->calls = 10;
	r->total_ns = 1000;
	r->max_ns = 400;
	r = sc_table_row(t, 200, 0, "big\"one\\\n", 257, "openat");
	r->calls = 4;
	r->errors = 3;
	r->total_ns = 9000000;
	r->max_ns = 5000000;
	sc_row_add_errno(r, ENOENT, 1);
	sc_row_add_errno(r, EACCES, 2);
	r = sc_table_row(t, 200, 0, "ignored", 0, "read");
	r->calls = 1;
	r->total_ns = 10000000;
	r->max_ns = 10000000;
	sc_table_finish(t);
	return t;
}

TEST(rows_are_found_again_and_sorted_by_total_time)
{
	struct sc_table *t = sample_table();

	ASSERT_TRUE(t);
	EXPECT_EQ(t->nprocs, 2);
	EXPECT_EQ(t->procs[0].pid, 200); /* 19 ms before 1 µs */
	EXPECT_STREQ(t->procs[0].comm, "big\"one\\\n");
	EXPECT_EQ(t->procs[0].nrows, 2);
	EXPECT_STREQ(t->procs[0].rows[0].name, "read");
	EXPECT_STREQ(t->procs[0].rows[1].name, "openat");
	EXPECT_EQ(t->procs[0].calls, 5);
	EXPECT_EQ(t->procs[0].errors, 3);
	EXPECT_EQ(t->procs[0].total_ns, 19000000);
	/* errnos by count, descending */
	EXPECT_EQ(t->procs[0].rows[1].errnos[0].err, EACCES);
	EXPECT_EQ(t->procs[0].rows[1].errnos[1].err, ENOENT);
	EXPECT_TRUE(sc_table_row(t, 100, 0, "x", 1, "write") == &t->procs[1].rows[0]);
	sc_table_free(t);
	sc_table_free(NULL);
}

TEST(errno_counts_accumulate)
{
	struct sc_table *t = sc_table_new();
	struct sc_row *r;

	ASSERT_TRUE(t);
	r = sc_table_row(t, 1, 2, "c", 3, "x");
	ASSERT_TRUE(r);
	EXPECT_EQ(sc_row_add_errno(r, ENOENT, 2), 0);
	EXPECT_EQ(sc_row_add_errno(r, ENOENT, 3), 0);
	EXPECT_EQ(r->nerrnos, 1);
	EXPECT_EQ(r->errnos[0].count, 5);
	sc_table_free(t);
}

TEST(quantiles_interpolate_inside_log2_buckets)
{
	__u64 h[JP_SC_HIST_BUCKETS] = {0};

	EXPECT_EQ(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.5, 0), 0);
	/* 100 calls in [1024, 2048): the median is halfway through the bucket */
	h[10] = 100;
	EXPECT_EQ(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.5, 5000), 1536);
	EXPECT_EQ(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.9, 5000), 1945);
	/* capped at the exact max */
	EXPECT_EQ(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.99, 1500), 1500);
	/* 90 fast, 10 slow: p50 in the fast bucket, p99 in the slow one */
	memset(h, 0, sizeof(h));
	h[3] = 90;  /* [8, 16) */
	h[20] = 10; /* [1048576, 2097152) */
	EXPECT_TRUE(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.5, 0) < 16);
	EXPECT_TRUE(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.5, 0) >= 8);
	EXPECT_EQ(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.90, 0), 16);
	EXPECT_TRUE(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.99, 0) >= 1048576);
	/* bucket 0 covers [0, 2) */
	memset(h, 0, sizeof(h));
	h[0] = 2;
	EXPECT_EQ(sc_hist_quantile(h, JP_SC_HIST_BUCKETS, 0.5, 0), 1);
}

TEST(errno_names)
{
	char buf[16];

	EXPECT_STREQ(sc_errno_name(ENOENT, buf, sizeof(buf)), "ENOENT");
	EXPECT_STREQ(sc_errno_name(EACCES, buf, sizeof(buf)), "EACCES");
	EXPECT_STREQ(sc_errno_name(512, buf, sizeof(buf)), "ERESTARTSYS");
	EXPECT_STREQ(sc_errno_name(4000, buf, sizeof(buf)), "E4000");
}

TEST(text_has_one_block_per_process_and_errno_lines)
{
	struct sc_table *t = sample_table();
	char *out = NULL;

	ASSERT_TRUE(t);
	EXPECT_EQ(capture(sctable_write_text, t, &out), 0);
	ASSERT_TRUE(out);
	EXPECT_TRUE(strstr(out, "interpolated within log2") != NULL);
	EXPECT_TRUE(strstr(out, " small (100), 10 calls, 0 errors") != NULL);
	EXPECT_TRUE(strstr(out, "  EACCES\n") != NULL);
	EXPECT_TRUE(strstr(out, "  ENOENT\n") != NULL);
	/* the bigger process comes first */
	EXPECT_TRUE(strstr(out, "(200)") < strstr(out, "(100)"));
	EXPECT_TRUE(strstr(out, "   read ") < strstr(out, "   openat "));
	free(out);
	sc_table_free(t);
}

TEST(json_escapes_comm_and_lists_errnos)
{
	struct sc_table *t = sample_table();
	char *out = NULL;

	ASSERT_TRUE(t);
	t->procs[1].comm[0] = (char)0xe9; /* not UTF-8 on its own */
	EXPECT_EQ(capture(sctable_write_json, t, &out), 0);
	ASSERT_TRUE(out);
	EXPECT_TRUE(strstr(out, "\"comm\":\"big\\\"one\\\\\\u000a\"") != NULL);
	EXPECT_TRUE(strstr(out, "\"comm\":\"\\u00e9mall\"") != NULL);
	EXPECT_TRUE(strstr(out, "\"errnos\":{\"EACCES\":2,\"ENOENT\":1}") != NULL);
	EXPECT_TRUE(strstr(out, "\"name\":\"write\",\"calls\":10,\"errors\":0,\"total_ns\":1000,"
				"\"avg_ns\":100") != NULL);
	for (const char *p = out; *p; p++)
		EXPECT_TRUE((unsigned char)*p >= 0x20 || *p == '\n');
	free(out);
	sc_table_free(t);
}

TEST(write_errors_propagate)
{
	struct sc_table *t = sample_table();
	FILE *f;

	ASSERT_TRUE(t);
	f = fopen("/dev/full", "w");
	if (f) {
		EXPECT_TRUE(sctable_write_text(t, f) < 0);
		fclose(f);
		f = fopen("/dev/full", "w");
		ASSERT_TRUE(f);
		EXPECT_TRUE(sctable_write_json(t, f) < 0);
		fclose(f);
	}
	sc_table_free(t);
}

TEST(jprof_rows_are_apart_and_out_of_the_totals)
{
	struct sc_table *t = sc_table_new();
	struct sc_row *r;
	char *out = NULL;

	ASSERT_TRUE(t);
	r = sc_table_row(t, 300, 0, "java", 18, "pwrite64");
	r->calls = 2000;
	r->total_ns = 4000000;
	r = sc_table_row(t, 300, 0, "java", 15 | JP_SC_NR_JPROF, "rt_sigreturn");
	r->calls = 1700;
	r->total_ns = 9000000; /* more than pwrite64: jprof's rows still come after */
	sc_table_finish(t);
	EXPECT_EQ(t->procs[0].calls, 2000);
	EXPECT_EQ(t->procs[0].total_ns, 4000000);
	ASSERT_TRUE(capture(sctable_write_text, t, &out) == 0);
	EXPECT_TRUE(strstr(out, "pwrite64") < strstr(out, "caused by jprof"));
	EXPECT_TRUE(strstr(out, "caused by jprof") < strstr(out, "rt_sigreturn"));
	free(out);
	out = NULL;
	ASSERT_TRUE(capture(sctable_write_json, t, &out) == 0);
	EXPECT_TRUE(strstr(out, "\"syscalls\":[\n {\"nr\":18,\"name\":\"pwrite64\""));
	EXPECT_TRUE(strstr(out, "\"caused_by_jprof\":[\n {\"nr\":15,\"name\":\"rt_sigreturn\""));
	free(out);
	sc_table_free(t);
}

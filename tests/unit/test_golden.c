// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_golden.c: every output format of one fixed recording, byte for byte against
 * tests/golden/ (folded, HTML, speedscope, pprof, JFR, the syscall table as text and JSON).
 * The recording is tests/out/jfr_model.h's model with fixed metadata (time, host, command), so
 * nothing depends on the clock or the machine. A diff fails and names the file;
 * `make golden-update` (JPROF_UPDATE_GOLDEN=1) rewrites the files from the writers.
 * Run from the tree's top (make test does).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model/model.h"
#include "out/jfr.h"
#include "out/out.h"
#include "out/sctable.h"
#include "../out/jfr_model.h"

#define GOLDEN_DIR "tests/golden/"

static const struct out_gc_pause gc_pauses[] = {
	{ .start_ns = 1000000000ull, .duration_ns = 4000000ull, .pid = 4242, .gc_id = 1,
	  .name = "G1 young collection pauses", .cause = "G1 Evacuation Pause" },
};

static const struct out_meta meta = {
	.title = "jprof: CPU (samples)",
	.unit = "samples",
	.host = "golden-host",
	.command = "jprof record -e cpu,offcpu,syscalls -o out",
	.events = "cpu,offcpu,syscalls",
	.freq_hz = 99,
	.start_unix_ns = 1700000000000000000ull,
	.duration_ns = 5000000000ull,
	.samples = 100,
	.lost = 2,
	.losses = "2 samples lost: ring buffer full",
	.filters = "--pid 4242",
	.gc_pauses = gc_pauses,
	.n_gc_pauses = 1,
};

/* compares got[0..len) with the golden file, or rewrites it under JPROF_UPDATE_GOLDEN */
static int golden(const char *name, const char *got, size_t len)
{
	char path[256], *want = NULL;
	size_t cap = 0, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (getenv("JPROF_UPDATE_GOLDEN")) {
		f = fopen(path, "w");
		if (!f || fwrite(got, 1, len, f) != len || fclose(f)) {
			fprintf(stderr, "  cannot write %s: %s\n", path, strerror(errno));
			return -1;
		}
		fprintf(stderr, "  wrote %s (%zu bytes)\n", path, len);
	}
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "  GOLDEN: %s missing (make golden-update writes it)\n", path);
		return -1;
	}
	for (;;) {
		if (n == cap) {
			char *p = realloc(want, cap = cap ? cap * 2 : 65536);

			if (!p) {
				free(want);
				fclose(f);
				return -1;
			}
			want = p;
		}
		size_t r = fread(want + n, 1, cap - n, f);

		if (!r)
			break;
		n += r;
	}
	fclose(f);
	if (n != len || memcmp(want, got, len)) {
		size_t i = 0;

		while (i < n && i < len && want[i] == got[i])
			i++;
		fprintf(stderr,
			"  GOLDEN DIFF: %s: %zu bytes written, %zu in the file, first difference at byte %zu\n"
			"  (a wanted change of output: make golden-update, and commit the diff)\n",
			path, len, n, i);
		free(want);
		return -1;
	}
	free(want);
	return 0;
}

static int check_format(enum out_format fmt, const char *name, const struct model *m)
{
	struct out_input in = {
		.model = m,
		/* the graph formats show CPU samples; pprof and JFR keep every column */
		.view = { .values = 1u << JP_VAL_CPU_SAMPLES,
			  .per_pid = true,
			  .per_thread = true },
		.meta = &meta,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err, ret;

	if (!f)
		return -errno;
	err = out_write(fmt, &in, f);
	fclose(f);
	if (err) {
		fprintf(stderr, "  %s: writer failed: %d\n", name, err);
		free(buf);
		return err;
	}
	ret = golden(name, buf, len);
	free(buf);
	return ret;
}

static struct model *known(void)
{
	struct model *m = model__new();

	if (m && jfr_known_model(m)) {
		model__free(m);
		return NULL;
	}
	return m;
}

TEST(folded)
{
	struct model *m = known();

	ASSERT_TRUE(m);
	EXPECT_EQ(check_format(OUT_FOLDED, "known.folded", m), 0);
	model__free(m);
}

TEST(html)
{
	struct model *m = known();

	ASSERT_TRUE(m);
	EXPECT_EQ(check_format(OUT_HTML, "known.html", m), 0);
	model__free(m);
}

TEST(speedscope)
{
	struct model *m = known();

	ASSERT_TRUE(m);
	EXPECT_EQ(check_format(OUT_SPEEDSCOPE, "known.speedscope.json", m), 0);
	model__free(m);
}

TEST(pprof)
{
	struct model *m = known();

	ASSERT_TRUE(m);
	EXPECT_EQ(check_format(OUT_PPROF, "known.pb", m), 0);
	model__free(m);
}

TEST(jfr)
{
	struct model *m = known();

	ASSERT_TRUE(m);
	EXPECT_EQ(check_format(OUT_JFR, "known.jfr", m), 0);
	model__free(m);
}

static struct sc_table *known_table(void)
{
	struct sc_table *t = sc_table_new();
	struct sc_row *r;

	if (!t)
		return NULL;
	r = sc_table_row(t, 4242, 0, "java", 1, "write");
	r->calls = 10;
	r->total_ns = 1000;
	r->max_ns = 400;
	r = sc_table_row(t, 7, 0, "sh\"x\\\n", 257, "openat");
	r->calls = 4;
	r->errors = 3;
	r->total_ns = 9000000;
	r->max_ns = 5000000;
	sc_row_add_errno(r, ENOENT, 1);
	sc_row_add_errno(r, EACCES, 2);
	r = sc_table_row(t, 7, 0, "ignored", 0, "read");
	r->calls = 1;
	r->total_ns = 10000000;
	r->max_ns = 10000000;
	sc_table_finish(t);
	return t;
}

static int check_table(int (*fn)(const struct sc_table *, FILE *), const char *name)
{
	struct sc_table *t = known_table();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!t || !f) {
		if (f)
			fclose(f);
		sc_table_free(t);
		return -ENOMEM;
	}
	err = fn(t, f);
	fclose(f);
	sc_table_free(t);
	if (!err)
		err = golden(name, buf, len);
	free(buf);
	return err;
}

TEST(syscall_table)
{
	EXPECT_EQ(check_table(sctable_write_text, "known.syscalls.txt"), 0);
	EXPECT_EQ(check_table(sctable_write_json, "known.syscalls.json"), 0);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_pprof_merge.c: a range read straight into one model (pprof_merge, what store__load
 * does) equals the range read the old way, each file into a model of its own and copied
 * over with model__filter: the same pprof bytes, folded lines, tables and time entries; a
 * bad file adds nothing either way (in one step or two: read and checked, then added). Over
 * made-up segments and over the pprof fuzzer's corpus. A store's range read with roll-ups
 * equals its segments read one by one.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "harness.h"
#include "model/filter.h"
#include "model/model.h"
#include "model/pprof_merge.h"
#include "model/pprof_read.h"
#include "model/view.h"
#include "out/out.h"
#include "out/pprof.h"
#include "profile.h"
#include "store/store.h"
#include "store/store_load.h"
#include "daemon/rollups.h"

#define MS 1000000ull
#define W0 1795752000000000000ull /* 2026-11-27T04:00:00Z */

/* the old store__load, one file: into a model of its own, then copied (bad: skipped) */
static int read_old(struct model *dst, const void *buf, size_t len)
{
	struct model_filter all = {0};
	struct pprof_read_info info;
	struct model *m = model__new();
	char why[256];
	int err;

	if (!m)
		return -ENOMEM;
	err = model__read_pprof_info(m, buf, len, &info, why, sizeof(why));
	if (!err)
		err = model__filter(m, &all, dst);
	model__free(m);
	return err;
}

/* the model written as pprof (every column) and as folded lines (per thread, lines) */
static char *dump(const struct model *m, size_t *ret_len)
{
	struct pprof_opts po = {.values = (1u << JP_VAL_MAX) - 1};
	struct model_view v = {.values = 1u << JP_VAL_CPU_SAMPLES | 1u << JP_VAL_CPU_NS,
			       .per_pid = true, .per_thread = true, .lines = true};
	struct model_counts c;
	struct model_time ti;
	struct profile *p = profile__new("t", "samples");
	char *buf = NULL, *folded;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err = -ENOMEM;

	if (!f || !p)
		return NULL;
	err = out_pprof_write(m, &po, f);
	if (!err)
		err = model__to_profile(m, &v, p);
	folded = err ? NULL : capture(out_folded_write, p, &err);
	model__counts(m, &c);
	model__time_info(m, &ti);
	fprintf(f, "\n%s\ncounts %zu %zu %zu %zu %zu %zu %zu time %d %llu %u %zu %u\n",
		folded ? folded : "(none)", c.strings, c.funcs, c.mappings, c.locations, c.labels,
		c.stacks, c.rows, ti.has_clock, (unsigned long long)ti.start_unix_ns, ti.res_ms,
		ti.entries, ti.max_slot);
	/* each row's time entries, in the order they came */
	for (size_t i = 0; i < model__rows(m); i++) {
		struct jp_time_ent eb;

		for (size_t k = model__time_first(m, i); k; k = model__time_next(m, k)) {
			if (!model__time(m, k - 1, &eb))
				break;
			fprintf(f, "%zu:%u:%llu:%llu ", i, eb.slot,
				(unsigned long long)eb.values[JP_VAL_CPU_SAMPLES],
				(unsigned long long)eb.values[JP_VAL_CPU_NS]);
		}
	}
	free(folded);
	profile__free(p);
	fclose(f);
	*ret_len = len;
	return err ? (free(buf), NULL) : buf;
}

/* the same dumps (and both made) */
static bool same_models(const struct model *a, const struct model *b)
{
	size_t na, nb;
	char *da = dump(a, &na), *db = dump(b, &nb);
	bool same = da && db && na == nb && !memcmp(da, db, na);

	if (!same && da && db)
		fprintf(stderr, "old: %.600s\nnew: %.600s\n", da + (na > 600 ? na - 600 : 0),
			db + (nb > 600 ? nb - 600 : 0));
	free(da);
	free(db);
	return same;
}

static jp_id loc(struct model *m, const char *name, enum jp_frame_kind kind, jp_id map,
		 __u64 addr, __s32 line)
{
	struct jp_location l = {.func = model__func(m, name, kind >= JP_FK_JIT ? "A.java" : "",
						    kind >= JP_FK_JIT && kind <= JP_FK_INTERP),
				.mapping = map, .addr = addr, .line = line, .kind = kind};

	return model__location(m, &l);
}

/*
 * segment k of a made-up host: two JVM threads and a native process, Java, native (with a
 * mapping), kernel frames; timed CPU samples at 100 ms slots and untimed CPU time; what
 * each segment has varies with k (some stacks, threads and names only in some)
 */
static char *segment(int k, size_t *ret_len)
{
	struct jp_mapping mp = {.start = 0x400000, .limit = 0x500000, .file = "/usr/bin/app",
				.build_id = "abcd"};
	struct jp_labels l1 = {.pid = 100, .tid = 101, .comm = "java", .thread = "main",
			       .container = "", .main = "App"};
	struct jp_labels l2 = {.pid = 100, .tid = 102 + (k % 2), .comm = "java",
			       .thread = k % 2 ? "worker-2" : "worker-1", .container = "c0ffee",
			       .main = "App"};
	struct jp_labels l3 = {.pid = 200 + (__u32)k, .tid = 200 + (__u32)k, .comm = "app",
			       .thread = "app", .container = ""};
	struct pprof_opts po = {.values = 1u << JP_VAL_CPU_SAMPLES | 1u << JP_VAL_CPU_NS,
				.time_ns = W0 + (__u64)k * 30000 * MS, .comment = "jprof daemon"};
	struct model *m = model__new();
	char *buf = NULL, name[64];
	size_t len = 0;
	jp_id map, s[4], lab[3], frames[4];
	FILE *f;

	if (!m)
		return NULL;
	model__set_clock(m, 1000 * MS, W0 + (__u64)k * 30000 * MS);
	map = model__mapping(m, &mp);
	frames[0] = loc(m, "App.run", JP_FK_INTERP, 0, 0, 12);
	frames[1] = loc(m, "App.hot", JP_FK_JIT, 0, 0, 40 + k % 3);
	frames[2] = loc(m, "memcpy", JP_FK_NATIVE, map, 0x401000 + (__u64)k % 2 * 16, 0);
	snprintf(name, sizeof(name), "App.phase%d", k % 4);
	frames[3] = loc(m, name, JP_FK_INLINED, 0, 0, 7);
	s[0] = model__stack(m, (jp_id[]){frames[1], frames[0]}, 2);
	s[1] = model__stack(m, (jp_id[]){frames[2], frames[1], frames[0]}, 3);
	s[2] = model__stack(m, (jp_id[]){frames[3], frames[1], frames[0]}, 3);
	s[3] = model__stack(m, (jp_id[]){loc(m, "do_syscall_64", JP_FK_KERNEL, 0, 0, 0),
					 frames[2]},
			    2);
	lab[0] = model__labels(m, &l1);
	lab[1] = model__labels(m, &l2);
	lab[2] = model__labels(m, &l3);
	for (int i = 0; i < 200; i++) {
		int st = (i * 7 + k) % (k % 3 ? 4 : 3), lb = (i + k) % 3;

		model__at(m, 1000 * MS + (__u64)(i * 149 % 30000) * MS);
		(void)model__add(m, s[lb == 2 ? 3 : st], lab[lb], JP_VAL_CPU_SAMPLES, 1);
		(void)model__add(m, s[lb == 2 ? 3 : st], lab[lb], JP_VAL_CPU_NS, 10101010);
	}
	model__at(m, 0);
	(void)model__add(m, s[0], lab[0], JP_VAL_CPU_NS, 777 + (__u64)k);
	f = open_memstream(&buf, &len);
	if (!f || out_pprof_write(m, &po, f))
		len = 0;
	if (f)
		fclose(f);
	model__free(m);
	*ret_len = len;
	return buf;
}

/* protobuf by hand: a varint, a field of one */
static size_t pb_varint(unsigned char *p, __u64 v)
{
	size_t n = 0;

	do {
		p[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static size_t pb_field(unsigned char *p, int field, const void *data, size_t len)
{
	size_t n = pb_varint(p, (__u64)field << 3 | 2);

	n += pb_varint(p + n, len);
	memcpy(p + n, data, len);
	return n + len;
}

/*
 * An uncompressed profile whose first sample is good (location 1, function 1 "good") and
 * whose second names location 9, which it does not have: read alone it is refused; a model
 * of its own would have made the first sample's row before finding that out
 */
static size_t bad_second_sample(unsigned char *p)
{
	static const char *strs[] = {"", "samples", "count", "good"};
	static const unsigned char type[] = {0x08, 1, 0x10, 2};
	static const unsigned char func[] = {0x08, 1, 0x10, 3};
	static const unsigned char loc[] = {0x08, 1, 0x22, 2, 0x08, 1};
	static const unsigned char s1[] = {0x08, 1, 0x10, 5};
	static const unsigned char s2[] = {0x08, 9, 0x10, 5};
	size_t n = 0;

	n += pb_field(p + n, 1, type, sizeof(type));
	n += pb_field(p + n, 2, s1, sizeof(s1));
	n += pb_field(p + n, 2, s2, sizeof(s2));
	n += pb_field(p + n, 4, loc, sizeof(loc));
	n += pb_field(p + n, 5, func, sizeof(func));
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		n += pb_field(p + n, 6, strs[i], strlen(strs[i]));
	return n;
}

TEST(a_range_read_straight_equals_each_segment_copied)
{
	struct model *old = model__new(), *cur = model__new();
	struct pprof_merge *pm = pprof_merge__new(cur);
	struct pprof_read_info info;
	unsigned char bad[256];
	size_t nbad = bad_second_sample(bad);
	char why[256];

	ASSERT_TRUE(old && cur && pm);
	for (int k = 0; k < 12; k++) {
		size_t len;
		char *seg = segment(k, &len);

		ASSERT_TRUE(seg && len);
		if (k == 5) /* cut short (a crash): skipped both ways */
			len /= 2;
		EXPECT_EQ(read_old(old, seg, len), k == 5 ? -EINVAL : 0);
		if (k % 2) { /* in two steps, as store__load's reader thread does */
			struct pprof_merge_file *pf = NULL;
			char *copy = malloc(len);

			ASSERT_TRUE(copy != NULL);
			memcpy(copy, seg, len);
			EXPECT_EQ(pprof_merge_file__prepare(copy, len, &pf, why, sizeof(why)),
				  k == 5 ? -EINVAL : 0);
			if (pf)
				EXPECT_EQ(pprof_merge__add_file(pm, pf, &info), 0);
		} else {
			EXPECT_EQ(pprof_merge__add(pm, seg, len, &info, why, sizeof(why)), 0);
		}
		if (k != 5) {
			EXPECT_EQ(info.time_ns, W0 + (__u64)k * 30000 * MS);
			EXPECT_TRUE(info.ncomments == 2 && !strcmp(info.comments[0], "jprof daemon"));
			EXPECT_STREQ(pprof_info_str(&info, "time_res_ms"), "100");
		}
		free(seg);
		if (k == 7) { /* a good sample, then a bad one: nothing of it either way */
			EXPECT_EQ(read_old(old, bad, nbad), -EINVAL);
			EXPECT_EQ(pprof_merge__add(pm, bad, nbad, &info, why, sizeof(why)), -EINVAL);
			EXPECT_STREQ(why, "a sample names an unknown location");
		}
	}
	EXPECT_EQ(model__total(cur, JP_VAL_CPU_SAMPLES), 11 * 200);
	EXPECT_TRUE(same_models(old, cur));
	pprof_merge__free(pm);
	model__free(old);
	model__free(cur);
}

/* the bad file alone: refused, the model as it was (empty), though its first sample was good */
TEST(a_bad_file_adds_nothing)
{
	struct model *m = model__new(), *alone = model__new();
	struct pprof_merge *pm = pprof_merge__new(m);
	struct model_counts c;
	unsigned char bad[256];
	size_t nbad = bad_second_sample(bad);
	char why[256];

	ASSERT_TRUE(m && alone && pm);
	EXPECT_EQ(pprof_merge__add(pm, bad, nbad, NULL, why, sizeof(why)), -EINVAL);
	model__counts(m, &c);
	EXPECT_EQ(c.funcs + c.locations + c.stacks + c.labels + c.rows + c.strings, 0);
	/* read alone, it gets as far as the good sample's row */
	EXPECT_EQ(model__read_pprof(alone, bad, nbad, why, sizeof(why)), -EINVAL);
	EXPECT_EQ(model__rows(alone), 1);
	pprof_merge__free(pm);
	model__free(m);
	model__free(alone);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* every file of the pprof fuzzer's corpus (good, bad, another tool's) in turn, both ways */
TEST(the_fuzz_corpus_read_straight_equals_each_file_copied)
{
	struct model *old = model__new(), *cur = model__new();
	struct pprof_merge *pm = pprof_merge__new(cur);
	DIR *d = opendir(JP_PPROF_CORPUS);
	char **names = NULL, path[512], why[256];
	size_t n = 0, cap = 0, good = 0;
	struct dirent *e;

	ASSERT_TRUE(old && cur && pm && d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			names = realloc(names, cap * sizeof(*names));
			ASSERT_TRUE(names != NULL);
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		FILE *f;
		char buf[1 << 16];
		size_t len;
		int a, b;

		snprintf(path, sizeof(path), "%s/%s", JP_PPROF_CORPUS, names[i]);
		f = fopen(path, "rb");
		ASSERT_TRUE(f != NULL);
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		EXPECT_TRUE(len < sizeof(buf));
		a = read_old(old, buf, len);
		b = pprof_merge__add(pm, buf, len, NULL, why, sizeof(why));
		EXPECT_EQ(a, b);
		good += !b;
		free(names[i]);
	}
	EXPECT_TRUE(n > 100 && good > 20);
	EXPECT_TRUE(same_models(old, cur));
	free(names);
	pprof_merge__free(pm);
	model__free(old);
	model__free(cur);
}

struct bytes {
	const char *p;
	size_t n;
};

static int write_bytes(void *ctx, FILE *f)
{
	const struct bytes *b = ctx;

	return fwrite(b->p, 1, b->n, f) == b->n ? 0 : -EIO;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* store__load (its reader thread, each segment added while the next is read) as the old way */
TEST(a_store_range_equals_each_segment_copied)
{
	struct model *old = model__new(), *cur = model__new();
	struct store_load_result res;
	struct store *st = NULL;
	char dir[64] = "/tmp/jprof-test-merge-XXXXXX", path[128], why[256];
	__u64 t0 = W0 / 1000000000ull;

	ASSERT_TRUE(old && cur && mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/store", dir);
	ASSERT_TRUE(store__open_writer(path, NULL, t0, &st, why, sizeof(why)) == 0);
	for (int k = 0; k < 9; k++) {
		struct bytes b;
		char *seg = segment(k, &b.n);

		ASSERT_TRUE(seg != NULL);
		b.p = seg;
		if (k == 3) /* cut short */
			b.n /= 3;
		EXPECT_EQ(store__write(st, t0 + 30 * (__u64)k, t0 + 30 * (__u64)k + 30, t0,
				       write_bytes, &b),
			  0);
		/* the range below leaves out the first segment */
		if (k)
			EXPECT_EQ(read_old(old, seg, b.n), k == 3 ? -EINVAL : 0);
		free(seg);
	}
	store__free(st);
	ASSERT_TRUE(store__open_reader(path, &st, why, sizeof(why)) == 0);
	EXPECT_EQ(store__load(st, t0 + 30, t0 + 1000, cur, NULL, NULL, &res), 0);
	EXPECT_EQ(res.in_range, 8);
	EXPECT_EQ(res.loaded, 7);
	EXPECT_EQ(res.skipped, 1);
	EXPECT_TRUE(same_models(old, cur));
	store__free(st);
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	model__free(old);
	model__free(cur);
}

/* roll-ups (store.h) ------------------------------------------------------------------- */

/* what store__load was told of: segments and roll-ups read (by name), skipped */
struct told {
	size_t rollups, segs, skipped;
	__u64 samples;
};

static void on_told(void *ctx, const struct store_seg *seg, const struct pprof_read_info *info,
		    int err, const char *why)
{
	struct told *t = ctx;
	struct store_seg sg;

	(void)why;
	if (err)
		t->skipped++;
	else if (store_seg_parse(seg->name, &sg))
		t->rollups++;
	else
		t->segs++;
	if (info)
		t->samples += pprof_info_u64(info, "samples");
}

/* the range [since, until) with its roll-ups equals its segments read one by one: folded too */
static bool same_both_ways(const struct store *st, __u64 since, __u64 until, struct told *t)
{
	struct model *a = model__new(), *b = model__new();
	struct store_load_result ra, rb;
	const struct store_seg *segs;
	size_t n, first = SIZE_MAX, cnt = 0;
	bool same;

	memset(t, 0, sizeof(*t));
	segs = store__segments(st, &n);
	for (size_t i = 0; i < n; i++)
		if (segs[i].end_s > since && segs[i].start_s < until) {
			if (first == SIZE_MAX)
				first = i;
			cnt++;
		}
	if (!a || !b || first == SIZE_MAX ||
	    store__load(st, since, until, a, on_told, t, &ra) ||
	    store__load_segs(st, first, cnt, b, NULL, NULL, NULL, &rb)) {
		model__free(a);
		model__free(b);
		return false;
	}
	same = same_models(b, a) && ra.in_range == rb.in_range && ra.loaded == rb.loaded &&
	       ra.skipped == rb.skipped && ra.start_s == rb.start_s && ra.end_s == rb.end_s;
	if (!same)
		fprintf(stderr, "range %llu..%llu: in %zu/%zu loaded %zu/%zu skipped %zu/%zu\n",
			(unsigned long long)since, (unsigned long long)until, ra.in_range,
			rb.in_range, ra.loaded, rb.loaded, ra.skipped, rb.skipped);
	model__free(a);
	model__free(b);
	return same;
}

static bool is_file(const char *dir, const char *sub, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/store/%s/%s", dir, sub, name);
	return !access(p, F_OK);
}

/* made by a reader of the store (as the daemon's thread), put in place by the writer */
static int rollup(struct store *w, const char *path, __u64 a, __u64 b, struct store_rollup *ret)
{
	struct store *rd = NULL;
	char why[256];
	int err = store__open_reader(path, &rd, why, sizeof(why));

	if (!err)
		err = store_rollup_build(rd, a, b, NULL, ret);
	store__free(rd);
	return err ? err : store__add_rollup(w, ret, a);
}

/*
 * 12 segments of 30 s, roll-ups of 120 s (4 segments): a range read with them is what its
 * segments give, whole periods or cut ones, a roll-up stale (a segment after it, one cut
 * since) or damaged; the limits remove a roll-up with its oldest segment, a reopened writer
 * the stale ones
 */
TEST(a_range_read_with_rollups_equals_its_segments)
{
	char dir[64] = "/tmp/jprof-test-rollup-XXXXXX", path[128], p2[256], why[256];
	__u64 t0 = W0 / 1000000000ull;
	struct store_rollup r[3], bad;
	struct store_limits lim = {0};
	struct store *st = NULL, *rd = NULL;
	struct store_stats ss;
	struct told t;
	size_t n;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/store", dir);
	ASSERT_TRUE(store__open_writer(path, NULL, t0, &st, why, sizeof(why)) == 0);
	for (int k = 0; k < 12; k++) {
		struct bytes b;
		char *seg = segment(k, &b.n);

		ASSERT_TRUE(seg != NULL);
		b.p = seg;
		EXPECT_EQ(store__write(st, t0 + 30 * (__u64)k, t0 + 30 * (__u64)k + 30, t0,
				       write_bytes, &b),
			  0);
		free(seg);
		if (k == 10) /* the last period's roll-up made before its 4th segment: stale */
			EXPECT_EQ(rollup(st, path, t0 + 240, t0 + 360, &r[2]), 0);
	}
	EXPECT_EQ(rollup(st, path, t0, t0 + 120, &r[0]), 0);
	EXPECT_EQ(rollup(st, path, t0 + 120, t0 + 240, &r[1]), 0);
	/* one segment: no roll-up; none of a range crossing a segment */
	EXPECT_EQ(rollup(st, path, t0 + 300, t0 + 330, &bad), -ENODATA);
	(void)store__rollups(st, &n);
	EXPECT_EQ(n, 3);
	EXPECT_TRUE(r[0].bytes > 0 && is_file(dir, "rollups", r[0].name));
	store__free(st);
	st = NULL;

	ASSERT_TRUE(store__open_reader(path, &rd, why, sizeof(why)) == 0);
	/* everything: two roll-ups and the 4 segments of the stale one */
	EXPECT_TRUE(same_both_ways(rd, t0, t0 + 1000, &t));
	EXPECT_EQ(t.rollups, 2);
	EXPECT_EQ(t.segs, 4);
	/* a range that cuts the first and the last period: the second's roll-up */
	EXPECT_TRUE(same_both_ways(rd, t0 + 60, t0 + 300, &t));
	EXPECT_EQ(t.rollups, 1);
	EXPECT_EQ(t.segs, 4);
	/* cut inside a segment: its period's segments all in range, the roll-up stands */
	EXPECT_TRUE(same_both_ways(rd, t0 + 10, t0 + 130, &t));
	EXPECT_EQ(t.rollups, 1);
	EXPECT_EQ(t.segs, 1);
	store__free(rd);

	/* the second period's 6th segment cut short after its roll-up: stale, segments read */
	snprintf(p2, sizeof(p2), "%s/segments/", path);
	{
		struct store_seg sg;
		char seg[256];

		ASSERT_TRUE(store_seg_name(t0 + 150, t0 + 180, sg.name, sizeof(sg.name)) == 0);
		snprintf(seg, sizeof(seg), "%.200s%.47s", p2, sg.name);
		ASSERT_TRUE(truncate(seg, 100) == 0);
	}
	ASSERT_TRUE(store__open_reader(path, &rd, why, sizeof(why)) == 0);
	EXPECT_TRUE(same_both_ways(rd, t0, t0 + 1000, &t));
	EXPECT_EQ(t.rollups, 1);
	EXPECT_EQ(t.segs, 7);
	EXPECT_EQ(t.skipped, 1);
	store__free(rd);

	/* the first roll-up damaged: its segments instead */
	snprintf(p2, sizeof(p2), "%s/rollups/%s", path, r[0].name);
	ASSERT_TRUE(truncate(p2, (off_t)r[0].bytes / 2) == 0);
	ASSERT_TRUE(store__open_reader(path, &rd, why, sizeof(why)) == 0);
	EXPECT_TRUE(same_both_ways(rd, t0, t0 + 1000, &t));
	EXPECT_EQ(t.rollups, 0);
	EXPECT_EQ(t.segs, 11);
	store__free(rd);

	/* a writer's open removes the stale roll-ups (the 2nd and 3rd), keeps the damaged 1st */
	ASSERT_TRUE(store__open_writer(path, NULL, t0, &st, why, sizeof(why)) == 0);
	(void)store__rollups(st, &n);
	EXPECT_EQ(n, 1);
	EXPECT_TRUE(!is_file(dir, "rollups", r[1].name) && !is_file(dir, "rollups", r[2].name));
	/* with a segment unreadable, no roll-up of its period */
	EXPECT_EQ(rollup(st, path, t0 + 120, t0 + 240, &bad), -ENODATA);
	/* the store's bytes count the roll-up's; the age limit takes it with its first segment */
	{
		const struct store_seg *segs = store__segments(st, &n);
		__u64 sum = 0;

		for (size_t i = 0; i < n; i++)
			sum += segs[i].bytes;
		EXPECT_EQ(store__bytes(st), sum + r[0].bytes / 2);
	}
	lim.max_age_s = 1000;
	store__set_limits(st, &lim);
	EXPECT_EQ(store__rotate(st, t0 + 30 + 1001), 1);
	(void)store__rollups(st, &n);
	EXPECT_EQ(n, 0);
	EXPECT_TRUE(!is_file(dir, "rollups", r[0].name));
	store__stats(st, &ss);
	EXPECT_EQ(ss.rollups_removed, 3); /* the two stale ones at the open too */
	/* a new one of the third period; the size limit counts its bytes, removes it first */
	EXPECT_EQ(rollup(st, path, t0 + 240, t0 + 360, &r[2]), 0);
	{
		const struct store_seg *segs = store__segments(st, &n);
		__u64 keep = r[2].bytes;

		for (size_t i = 0; i < n; i++)
			if (segs[i].start_s >= t0 + 240)
				keep += segs[i].bytes;
		lim.max_age_s = 0;
		lim.max_size = keep;
		store__set_limits(st, &lim);
		EXPECT_EQ(store__rotate(st, t0), 7); /* the 2nd to the 8th segment */
		(void)store__rollups(st, &n);
		EXPECT_EQ(n, 1);
		EXPECT_EQ(store__bytes(st), keep);
		lim.max_size = keep - 1;
		store__set_limits(st, &lim);
		EXPECT_EQ(store__rotate(st, t0), 1);
		(void)store__rollups(st, &n);
		EXPECT_EQ(n, 0);
		EXPECT_TRUE(!is_file(dir, "rollups", r[2].name));
	}
	store__free(st);
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* segments from..to - 1 of 30 s each (segment(k)) into the writer's store; 0 or -errno */
static int write_segments(struct store *st, __u64 t0, int from, int to)
{
	int err = 0;

	for (int k = from; k < to && !err; k++) {
		struct bytes b;
		char *seg = segment(k, &b.n);

		if (!seg)
			return -ENOMEM;
		b.p = seg;
		err = store__write(st, t0 + 30 * (__u64)k, t0 + 30 * (__u64)k + 30, t0, write_bytes,
				   &b);
		free(seg);
	}
	return err;
}

/* the roll-ups of the store as "start-end" offsets from t0, oldest first, one a line */
static void rollup_list(const struct store *st, __u64 t0, char *buf, size_t len)
{
	const struct store_rollup *rs;
	size_t n, off = 0;

	buf[0] = '\0';
	rs = store__rollups(st, &n);
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%llu-%llu ",
					(unsigned long long)(rs[i].start_s - t0),
					(unsigned long long)(rs[i].end_s - t0));
}

/*
 * Roll-ups nest: 12 segments of 30 s, parts of 60 s (2 segments), periods of 180 s made of
 * the parts. A range reads the fewest files (whole periods, parts at its ends, then
 * segments) and what its segments give; a period stale (a segment cut since) leaves its
 * valid parts; a crash while one was written (its temporary file) changes no read and the
 * next writer removes it
 */
TEST(rollups_nest_and_a_range_reads_the_fewest_files)
{
	char dir[64] = "/tmp/jprof-test-nest-XXXXXX", path[128], p2[256], why[256];
	__u64 t0 = W0 / 1000000000ull;
	struct store_rollup r, per[2];
	struct store_load_result res;
	struct store *st = NULL, *rd = NULL;
	struct store_stats ss;
	struct model *m;
	struct told t;
	size_t n;
	FILE *f;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/store", dir);
	ASSERT_TRUE(store__open_writer(path, NULL, t0, &st, why, sizeof(why)) == 0);
	ASSERT_TRUE(write_segments(st, t0, 0, 12) == 0);
	for (__u64 a = 0; a < 360; a += 60)
		EXPECT_EQ(rollup(st, path, t0 + a, t0 + a + 60, &r), 0);
	/* a period's roll-up is made of its parts' roll-ups: 3 files, not 6 */
	ASSERT_TRUE(store__open_reader(path, &rd, why, sizeof(why)) == 0);
	m = model__new();
	memset(&t, 0, sizeof(t));
	EXPECT_EQ(store__load_span(rd, 0, 6, m, on_told, &t, NULL, &res), 0);
	EXPECT_TRUE(t.rollups == 3 && t.segs == 0 && res.loaded == 6 && res.in_range == 6);
	model__free(m);
	store__free(rd);
	EXPECT_EQ(rollup(st, path, t0, t0 + 180, &per[0]), 0);
	EXPECT_EQ(rollup(st, path, t0 + 180, t0 + 360, &per[1]), 0);
	store__free(st);

	ASSERT_TRUE(store__open_reader(path, &rd, why, sizeof(why)) == 0);
	/* all: the two periods */
	EXPECT_TRUE(same_both_ways(rd, t0, t0 + 360, &t));
	EXPECT_TRUE(t.rollups == 2 && t.segs == 0);
	/* cut at both ends: a segment, two parts, two parts, a segment */
	EXPECT_TRUE(same_both_ways(rd, t0 + 30, t0 + 330, &t));
	EXPECT_TRUE(t.rollups == 4 && t.segs == 2);
	/* cut at one end: two parts and the second period */
	EXPECT_TRUE(same_both_ways(rd, t0 + 60, t0 + 360, &t));
	EXPECT_TRUE(t.rollups == 3 && t.segs == 0);
	/* inside a period, cutting segments: the part they lie in whole, and a segment */
	EXPECT_TRUE(same_both_ways(rd, t0 + 190, t0 + 250, &t));
	EXPECT_TRUE(t.rollups == 1 && t.segs == 1);
	store__free(rd);

	/* a segment of the second period cut short: that period and its part stale */
	{
		struct store_seg sg;

		ASSERT_TRUE(store_seg_name(t0 + 210, t0 + 240, sg.name, sizeof(sg.name)) == 0);
		snprintf(p2, sizeof(p2), "%s/segments/%.47s", path, sg.name);
		ASSERT_TRUE(truncate(p2, 100) == 0);
	}
	ASSERT_TRUE(store__open_reader(path, &rd, why, sizeof(why)) == 0);
	EXPECT_TRUE(same_both_ways(rd, t0, t0 + 360, &t));
	EXPECT_TRUE(t.rollups == 3 && t.segs == 1 && t.skipped == 1);
	store__free(rd);

	/* killed while a roll-up was written: its temporary file, half of one */
	snprintf(p2, sizeof(p2), "%s/rollups/.tmp-%s", path, per[0].name);
	f = fopen(p2, "w");
	ASSERT_TRUE(f != NULL);
	fputs("\x1f\x8b half a roll-up", f);
	fclose(f);
	ASSERT_TRUE(store__open_reader(path, &rd, why, sizeof(why)) == 0);
	(void)store__rollups(rd, &n);
	EXPECT_EQ(n, 8);
	EXPECT_TRUE(same_both_ways(rd, t0, t0 + 360, &t));
	EXPECT_TRUE(t.rollups == 3 && t.segs == 1 && t.skipped == 1);
	store__free(rd);
	ASSERT_TRUE(store__open_writer(path, NULL, t0, &st, why, sizeof(why)) == 0);
	store__stats(st, &ss);
	EXPECT_EQ(ss.swept, 1);
	EXPECT_EQ(ss.rollups_removed, 2); /* the stale ones */
	EXPECT_TRUE(access(p2, F_OK) && errno == ENOENT);
	store__free(st);
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * The daemon's roll-ups (daemon/rollups.c) of a period of 360 s: its parts of 60 s and the
 * periods, from the newest completed one back to the oldest segment; none of one segment,
 * none again of the same segments (an hour of one part's)
 */
TEST(the_daemon_rolls_up_parts_then_their_periods)
{
	char dir[64] = "/tmp/jprof-test-ticks-XXXXXX", path[128], why[256], list[512];
	/* the open interval's start, the segments by then, the roll-ups to be had */
	static const struct {
		__u64 open;
		int segs;
		size_t rolls;
	} steps[] = {{480, 16, 9}, {720, 17, 10}, {1080, 26, 11}};
	__u64 t0 = W0 / 1000000000ull, w, f;
	struct store *st = NULL;
	struct rollups *ru;
	size_t n = 0;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/store", dir);
	ASSERT_TRUE(store__open_writer(path, NULL, t0, &st, why, sizeof(why)) == 0);
	ru = rollups__new(path, 360);
	ASSERT_TRUE(ru != NULL);
	for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		/* the daemon down from 510 to 720, and from 780 on: [720, 1080) has one part */
		int from = k == 2 ? 24 : k == 1 ? 16 : 0;

		ASSERT_TRUE(write_segments(st, t0, from, steps[k].segs) == 0);
		/* the roll-up thread runs at nice 19: a loaded host gives it little CPU */
		for (int i = 0; i < 12000 && n < steps[k].rolls; i++) {
			rollups__tick(ru, st, t0 + steps[k].open, t0);
			(void)store__rollups(st, &n);
			usleep(10000);
		}
		for (int i = 0; i < 20; i++) { /* and no more */
			rollups__tick(ru, st, t0 + steps[k].open, t0);
			usleep(10000);
		}
		(void)store__rollups(st, &n);
		EXPECT_EQ(n, steps[k].rolls);
	}
	rollups__counts(ru, &w, &f);
	rollup_list(st, t0, list, sizeof(list));
	printf("roll-ups: %s(%llu written, %llu failed)\n", list, (unsigned long long)w,
	       (unsigned long long)f);
	/*
	 * at 480: the parts [360, 480), then back: [0, 360)'s parts and itself; at 720 the
	 * period [360, 720) (the part [480, 540) has one segment); at 1080 the part [720, 780)
	 */
	EXPECT_STREQ(list, "0-60 0-360 60-120 120-180 180-240 240-300 300-360 360-420 "
			   "360-720 420-480 720-780 ");
	EXPECT_TRUE(w == 11 && f == 0);
	rollups__free(ru, st, t0);
	store__free(st);
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TEST(rollup_names_and_parsing)
{
	struct store_rollup r;
	char name[STORE_ROLLUP_NAME_LEN];
	__u64 t0 = W0 / 1000000000ull;

	EXPECT_EQ(store_rollup_name(t0, t0 + 3600, 0x0123456789abcdefull, name, sizeof(name)), 0);
	EXPECT_STREQ(name, "20261127T040000Z-20261127T050000Z.0123456789abcdef.pb.gz");
	EXPECT_EQ(store_rollup_parse(name, &r), 0);
	EXPECT_TRUE(r.start_s == t0 && r.end_s == t0 + 3600 && r.hash == 0x0123456789abcdefull);
	EXPECT_EQ(store_rollup_parse("20261127T040000Z-20261127T050000Z.0123456789ABCDEF.pb.gz",
				     &r),
		  -EINVAL);
	EXPECT_EQ(store_rollup_parse("20261127T050000Z-20261127T040000Z.0123456789abcdef.pb.gz",
				     &r),
		  -EINVAL);
	EXPECT_EQ(store_rollup_parse("20261127T040000Z-20261127T050000Z.pb.gz", &r), -EINVAL);
	EXPECT_EQ(store_rollup_parse(".tmp-20261127T040000Z-20261127T050000Z.0123456789abcdef.pb.gz",
				     &r),
		  -EINVAL);
	EXPECT_EQ(store_rollup_name(t0, t0, 0, name, sizeof(name)), -EINVAL);
}

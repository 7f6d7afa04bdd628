// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_model.c: the profile model: interning, rows per (stack, labels), reset, the flame view. */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "capture.h"
#include "model/model.h"
#include "model/view.h"
#include "out/out.h"
#include "out/pprof.h"
#include "model/pprof_read.h"
#include "model/filter.h"
#include "model/spread.h"
#include "profile.h"
#include <zlib.h>

/* a JVM stack (leaf first): kernel write, libc write, then two Java frames */
static jp_id java_stack(struct model *m, __u64 libc_addr)
{
	struct jp_mapping libc = {0x7f0000000000, 0x7f0000200000, 0, "/usr/lib/libc.so.6", "ab12"};
	struct jp_location l[4] = {
		{.func = model__func(m, "vfs_write", "[kernel]", false),
		 .addr = 0xffffffff81000000,
		 .kind = JP_FK_KERNEL},
		{.func = model__func(m, "__libc_write", "/usr/lib/libc.so.6", false),
		 .mapping = model__mapping(m, &libc),
		 .addr = libc_addr,
		 .kind = JP_FK_NATIVE},
		{.func = model__func(m, "java/io/FileOutputStream.write", "FileOutputStream.java",
				     true),
		 .line = 42,
		 .kind = JP_FK_JIT},
		{.func = model__func(m, "com/acme/App.main", "App.java", true),
		 .line = 7,
		 .kind = JP_FK_INTERP},
	};
	jp_id ids[4];

	for (int i = 0; i < 4; i++)
		ids[i] = model__location(m, &l[i]);
	return model__stack(m, ids, 4);
}

TEST(interning_and_rows)
{
	struct model *m = model__new();
	struct jp_labels lab = {
		.pid = 10, .tid = 11, .comm = "java", .thread = "main", .container = ""};
	struct model_counts c;
	struct jp_sample_row rb;
	jp_id s1, s2, s3, l1, l2;

	EXPECT_TRUE(m != NULL);
	EXPECT_TRUE(model__str(m, "abc") == model__str(m, "abc"));
	EXPECT_TRUE(model__func(m, "f", "x.c", false) == model__func(m, "f", "x.c", false));
	EXPECT_TRUE(model__func(m, "f", "x.c", false) != model__func(m, "f", "x.c", true));
	s1 = java_stack(m, 0x7f0000001234);
	s2 = java_stack(m, 0x7f0000001234);
	s3 = java_stack(m, 0x7f0000001240); /* another PC in the same function */
	EXPECT_TRUE(s1 && s1 == s2);
	EXPECT_TRUE(s3 && s3 != s1);
	l1 = model__labels(m, &lab);
	lab.tid = 12;
	l2 = model__labels(m, &lab);
	EXPECT_TRUE(l1 && l2 && l1 != l2);
	lab.tid = 11;
	EXPECT_EQ(model__labels(m, &lab), l1);

	EXPECT_EQ(model__add(m, s1, l1, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__add(m, s1, l1, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__add(m, s1, l1, JP_VAL_CPU_NS, 10101010), 0);
	EXPECT_EQ(model__add(m, s1, l2, JP_VAL_OFFCPU_NS, 500), 0);
	EXPECT_EQ(model__add(m, s3, l1, JP_VAL_CPU_SAMPLES, 3), 0);
	EXPECT_EQ(model__add(m, 0, l1, JP_VAL_CPU_SAMPLES, 3), -EINVAL);
	EXPECT_EQ(model__rows(m), 3);
	EXPECT_EQ(model__row(m, 0, &rb)->values[JP_VAL_CPU_SAMPLES], 2);
	EXPECT_EQ(model__row(m, 0, &rb)->values[JP_VAL_CPU_NS], 10101010);
	EXPECT_EQ(model__row(m, 1, &rb)->values[JP_VAL_OFFCPU_NS], 500);
	EXPECT_EQ(model__row(m, 1, &rb)->values[JP_VAL_CPU_SAMPLES], 0);
	EXPECT_EQ(model__row(m, 2, &rb)->values[JP_VAL_CPU_SAMPLES], 3);
	EXPECT_TRUE(!model__row(m, 3, &rb));
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 5);
	EXPECT_EQ(model__total(m, JP_VAL_OFFCPU_NS), 500);

	model__counts(m, &c);
	EXPECT_EQ(c.stacks, 2);
	EXPECT_EQ(c.locations, 5);
	EXPECT_EQ(c.mappings, 1);
	EXPECT_EQ(c.labels, 2);

	/* reset drops the rows, keeps the tables */
	model__reset(m);
	EXPECT_EQ(model__rows(m), 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 0);
	EXPECT_EQ(java_stack(m, 0x7f0000001234), s1);
	EXPECT_EQ(model__add(m, s1, l1, JP_VAL_CPU_SAMPLES, 4), 0);
	EXPECT_EQ(model__rows(m), 1);
	model__free(m);
}

/*
 * A sample's values go to its row one after the other: the row found for one is kept for
 * the next with the same stack and labels (model_rows.c), never after the rows are laid
 * out again (reset, a fold of exited processes) or for another key
 */
TEST(a_row_found_is_kept_for_the_next_value_only_while_it_stands)
{
	struct model *m = model__new();
	struct jp_labels lab = {.pid = 1, .tid = 1, .comm = "c", .thread = "t", .container = ""};
	jp_id l1 = model__labels(m, &lab), l2, s1 = java_stack(m, 0x7f0000001234),
	      s2 = java_stack(m, 0x7f0000005678);
	struct jp_sample_row rb;
	__u32 pid = 1;

	lab.pid = 2;
	l2 = model__labels(m, &lab);
	EXPECT_EQ(model__add(m, s1, l1, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__add(m, s1, l2, JP_VAL_CPU_SAMPLES, 2), 0);
	EXPECT_EQ(model__add(m, s2, l2, JP_VAL_CPU_SAMPLES, 4), 0);
	EXPECT_EQ(model__add(m, s2, l2, JP_VAL_CPU_NS, 40), 0);
	EXPECT_EQ(model__add(m, s1, l1, JP_VAL_CPU_NS, 10), 0);
	EXPECT_EQ(model__rows(m), 3);
	EXPECT_EQ(model__row(m, 0, &rb)->values[JP_VAL_CPU_NS], 10);
	EXPECT_EQ(model__row(m, 1, &rb)->values[JP_VAL_CPU_NS], 0);
	EXPECT_EQ(model__row(m, 2, &rb)->values[JP_VAL_CPU_NS], 40);
	/* the same key as the last add, after the rows are gone */
	model__reset(m);
	EXPECT_EQ(model__add(m, s1, l1, JP_VAL_CPU_SAMPLES, 5), 0);
	EXPECT_EQ(model__rows(m), 1);
	EXPECT_EQ(model__row(m, 0, &rb)->values[JP_VAL_CPU_SAMPLES], 5);
	/* and after a fold made the rows anew: pid 1's two threads' rows into one, before */
	lab.pid = 1;
	lab.tid = 2;
	EXPECT_EQ(model__add(m, s1, model__labels(m, &lab), JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__add(m, s2, l2, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__rows(m), 3);
	EXPECT_EQ(model__fold_pids(m, &pid, 1), 0);
	EXPECT_EQ(model__rows(m), 2);
	EXPECT_EQ(model__add(m, s1, l1, JP_VAL_CPU_SAMPLES, 7), -EINVAL); /* l1 freed */
	EXPECT_EQ(model__add(m, s2, l2, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__rows(m), 2);
	EXPECT_EQ(model__row(m, 0, &rb)->values[JP_VAL_CPU_SAMPLES], 6);
	EXPECT_EQ(model__row(m, 1, &rb)->values[JP_VAL_CPU_SAMPLES], 2);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 8);
	model__free(m);
}

/* a sample whose walks both failed has an empty stack: interned once, before any other */
TEST(empty_stack_interned_once)
{
	struct model *m = model__new();
	jp_id a = model__stack(m, NULL, 0), b = model__stack(m, NULL, 0);

	EXPECT_TRUE(a != 0);
	EXPECT_EQ(a, b);
	model__free(m);
}

TEST(many_stacks_grow_the_tables)
{
	struct model *m = model__new();
	struct jp_labels lab = {.pid = 1, .tid = 1, .comm = "c", .thread = "t", .container = ""};
	jp_id l = model__labels(m, &lab), f = model__func(m, "f", "", false);
	int ok = 1;

	for (__u64 i = 0; i < 20000; i++) {
		struct jp_location loc = {.func = f, .addr = i, .kind = JP_FK_NATIVE};
		jp_id ids[2] = {model__location(m, &loc), 0};
		struct jp_location root = {.func = f, .addr = i % 7, .kind = JP_FK_NATIVE};

		ids[1] = model__location(m, &root);
		ok &= model__add(m, model__stack(m, ids, 2), l, JP_VAL_CPU_SAMPLES, 1) == 0;
	}
	EXPECT_TRUE(ok);
	EXPECT_EQ(model__rows(m), 20000);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 20000);
	model__free(m);
}

/*
 * Stacks are a trie (issue 27): 30,000 stacks of 16 frames that share their 14 callers cost
 * their two leaf frames each, not 16; each is found again (same id, after the index grew)
 * and reads back frame by frame, leaf first; a prefix is a stack of its own
 */
TEST(stacks_share_their_callers)
{
	struct model *m = model__new();
	jp_id f = model__func(m, "f", "", false), ids[16], got;
	struct model_mem mm;
	size_t n;
	int ok = 1;
	jp_id first = 0;

	for (__u32 i = 0; i < 30000; i++) {
		for (int k = 0; k < 16; k++) {
			struct jp_location loc = {.func = f, .kind = JP_FK_NATIVE,
						  .addr = k >= 2 ? 1000 + (__u64)k : (__u64)i * 2 + (__u64)k + 1};

			ids[k] = model__location(m, &loc);
		}
		got = model__stack(m, ids, 16);
		ok &= got != 0;
		if (!first)
			first = got;
	}
	EXPECT_TRUE(ok);
	model__mem(m, &mm);
	EXPECT_EQ(mm.stacks, 30000 + 1);
	/* 14 shared nodes and two for each stack */
	EXPECT_EQ(mm.stack_nodes, 14 + 2 * 30000);
	/* under 60 bytes a stack in all (16 frames as an array: 64 bytes and the ref alone) */
	EXPECT_TRUE(mm.stack_bytes < 30000 * 60);
	for (__u32 i = 0; i < 30000; i += 997) {
		const jp_id *l;

		for (int k = 0; k < 16; k++) {
			struct jp_location loc = {.func = f, .kind = JP_FK_NATIVE,
						  .addr = k >= 2 ? 1000 + (__u64)k : (__u64)i * 2 + (__u64)k + 1};

			ids[k] = model__location(m, &loc);
		}
		EXPECT_EQ(model__stack(m, ids, 16), first + i);
		l = model__get_stack(m, first + i, &n);
		EXPECT_EQ(n, 16);
		EXPECT_TRUE(l && !memcmp(l, ids, sizeof(ids)));
	}
	model__mem(m, &mm);
	EXPECT_EQ(mm.stacks, 30000 + 1);
	/* the shared callers alone: a stack too, and a new id */
	got = model__stack(m, ids + 2, 14);
	EXPECT_TRUE(got > first + 29999);
	EXPECT_TRUE(model__get_stack(m, got, &n) != NULL && n == 14);
	model__free(m);
}

/* row (stack, labels) with samples and CPU ns */
static void cpu_row(struct model *m, jp_id stack, jp_id labels, __u64 samples, __u64 ns)
{
	if (samples)
		EXPECT_EQ(model__add(m, stack, labels, JP_VAL_CPU_SAMPLES, samples), 0);
	if (ns)
		EXPECT_EQ(model__add(m, stack, labels, JP_VAL_CPU_NS, ns), 0);
}

static __u64 row_ns(struct model *m, jp_id stack, jp_id labels)
{
	struct jp_sample_row buf;
	const struct jp_sample_row *r;

	for (size_t i = 0; (r = model__row(m, i, &buf)); i++)
		if (r->stack == stack && r->labels == labels)
			return r->values[JP_VAL_CPU_NS];
	return ~0ull;
}

TEST(cpu_time_spread_over_a_threads_stacks_by_samples)
{
	struct model *m = model__new();
	struct jp_labels t1 = { .pid = 10, .tid = 11, .comm = "app", .thread = "w", .container = "" },
			 t1b = t1, t2 = t1;
	jp_id s1, s2, s3, l1, l1b, l2;

	ASSERT_TRUE(m != NULL);
	EXPECT_EQ(model__spread_cpu(m), 0); /* empty */
	t1b.thread = "worker-1";	    /* renamed: the same thread */
	t2.tid = 12;
	s1 = java_stack(m, 0x7f0000001000);
	s2 = java_stack(m, 0x7f0000002000);
	s3 = java_stack(m, 0x7f0000003000);
	l1 = model__labels(m, &t1);
	l1b = model__labels(m, &t1b);
	l2 = model__labels(m, &t2);
	/* thread 11: 1 + 2 + 1 samples that share 9000 + 100 + 700 + 200 ns */
	cpu_row(m, s1, l1, 1, 9000);
	cpu_row(m, s2, l1, 2, 100);
	cpu_row(m, s3, l1b, 1, 700);
	cpu_row(m, s3, l1, 0, 200); /* no sample: kept */
	cpu_row(m, s2, l1b, 3, 0);  /* time passed on: kept at 0 */
	/* thread 12: one stack, kept */
	cpu_row(m, s1, l2, 5, 333);
	ASSERT_TRUE(model__spread_cpu(m) == 0);
	EXPECT_EQ(row_ns(m, s1, l1), 2450);
	EXPECT_EQ(row_ns(m, s2, l1), 4900);
	EXPECT_EQ(row_ns(m, s3, l1b), 2450);
	EXPECT_EQ(row_ns(m, s3, l1), 200);
	EXPECT_EQ(row_ns(m, s2, l1b), 0);
	EXPECT_EQ(row_ns(m, s1, l2), 333);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_NS), 9000 + 100 + 700 + 200 + 333);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 1 + 2 + 1 + 3 + 5);
	/* shares that do not divide: rounded so that they still add up */
	t2.tid = 13;
	l2 = model__labels(m, &t2);
	cpu_row(m, s1, l2, 1, 1);
	cpu_row(m, s2, l2, 1, 1);
	cpu_row(m, s3, l2, 1, 8);
	ASSERT_TRUE(model__spread_cpu(m) == 0);
	EXPECT_EQ(row_ns(m, s1, l2), 3);
	EXPECT_EQ(row_ns(m, s2, l2), 3);
	EXPECT_EQ(row_ns(m, s3, l2), 4);
	EXPECT_EQ(row_ns(m, s1, l1), 2450);			     /* spread again: the same */
	EXPECT_EQ(model__set(m, 0, JP_VAL_ALLOC_SPACE, 1), -EINVAL); /* no such column */
	model__free(m);
}

TEST(view_renders_names_and_roots)
{
	struct model *m = model__new();
	struct jp_labels lab = {
		.pid = 10, .tid = 11, .comm = "java", .thread = "main", .container = ""};
	struct model_view v = {.values = 1u << JP_VAL_CPU_SAMPLES};
	struct profile *p;
	jp_id s = java_stack(m, 0x7f0000001234), l = model__labels(m, &lab);
	char *out;
	int err;

	EXPECT_EQ(model__add(m, s, l, JP_VAL_CPU_SAMPLES, 3), 0);
	EXPECT_EQ(model__add(m, s, l, JP_VAL_OFFCPU_NS, 999), 0);

	p = profile__new("t", "samples");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_STREQ(out, "java;com/acme/App.main_[0];java/io/FileOutputStream.write_[j];"
			  "__libc_write;vfs_write_[k] 3\n");
	free(out);
	profile__free(p);

	v.per_thread = v.per_pid = v.dotted = v.lines = true;
	v.values |= 1u << JP_VAL_OFFCPU_NS;
	p = profile__new("t", "ns");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_STREQ(out,
		     "java [10];main [11];com.acme.App.main:7_[0];"
		     "java.io.FileOutputStream.write:42_[j];__libc_write;vfs_write_[k] 1002\n");
	free(out);
	profile__free(p);
	model__free(m);
}

/* a JVM's samples before its main class was known join its named root (issue 25) */
TEST(process_root_named_by_main_class)
{
	struct model *m = model__new();
	struct jp_labels lab = {
		.pid = 10, .tid = 11, .comm = "java", .thread = "main", .container = ""};
	struct jp_labels other = {
		.pid = 12, .tid = 12, .comm = "java", .thread = "main", .container = ""};
	struct model_view v = {.values = 1u << JP_VAL_CPU_SAMPLES, .per_pid = true};
	struct profile *p;
	jp_id s = java_stack(m, 0x7f0000001234), l = model__labels(m, &lab), lo;
	char *out;
	int err;

	lo = model__labels(m, &other);
	EXPECT_EQ(model__add(m, s, l, JP_VAL_CPU_SAMPLES, 3), 0);
	EXPECT_EQ(model__add(m, s, lo, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__name_process(m, 10, "org.h2.tools.Server"), 0);
	lab.main = "org.h2.tools.Server";
	EXPECT_EQ(model__labels(m, &lab), l); /* found again by its new content */
	EXPECT_EQ(model__add(m, s, model__labels(m, &lab), JP_VAL_CPU_SAMPLES, 2), 0);
	p = profile__new("t", "samples");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_STREQ(out, "java [10] org.h2.tools.Server;com/acme/App.main_[0];"
			  "java/io/FileOutputStream.write_[j];__libc_write;vfs_write_[k] 5\n"
			  "java [12];com/acme/App.main_[0];java/io/FileOutputStream.write_[j];"
			  "__libc_write;vfs_write_[k] 1\n");
	free(out);
	profile__free(p);
	model__free(m);
}

/* top-level fields of a protobuf message: counts per field number, string-table entries */
static int pb_walk(const unsigned char *p, size_t n, int counts[32], char strs[][64], int *nstrs)
{
	size_t i = 0;

	while (i < n) {
		__u64 key = 0, len = 0;
		int shift = 0;

		do {
			key |= (__u64)(p[i] & 0x7f) << shift;
			shift += 7;
		} while (p[i++] & 0x80 && i < n);
		if ((key & 7) == 0) {
			while (i < n && (p[i++] & 0x80))
				;
		} else if ((key & 7) == 2) {
			shift = 0;
			do {
				len |= (__u64)(p[i] & 0x7f) << shift;
				shift += 7;
			} while (p[i++] & 0x80 && i < n);
			if (i + len > n)
				return -1;
			if ((key >> 3) == 6 && *nstrs < 64)
				snprintf(strs[(*nstrs)++], 64, "%.*s", (int)len,
					 (const char *)p + i);
			i += len;
		} else {
			return -1;
		}
		if ((key >> 3) < 32)
			counts[key >> 3]++;
	}
	return i == n ? 0 : -1;
}

TEST(pprof_encodes_tables_and_types)
{
	struct model *m = model__new();
	struct jp_labels lab = {
		.pid = 10, .tid = 11, .comm = "java", .thread = "main", .container = ""};
	struct pprof_opts po = {.values = 1u << JP_VAL_CPU_SAMPLES | 1u << JP_VAL_CPU_NS,
				.dotted = true,
				.duration_ns = 1000,
				.period_ns = 10101010};
	jp_id s = java_stack(m, 0x7f0000001234), l = model__labels(m, &lab);
	char *buf = NULL, strs[64][64];
	size_t len = 0;
	unsigned char raw[1 << 16];
	uLongf rawlen = sizeof(raw);
	int counts[32] = {0}, nstrs = 0, found = 0;
	FILE *f;
	z_stream z;

	EXPECT_EQ(model__add(m, s, l, JP_VAL_CPU_SAMPLES, 3), 0);
	EXPECT_EQ(model__add(m, s, l, JP_VAL_CPU_NS, 30303030), 0);
	f = open_memstream(&buf, &len);
	EXPECT_EQ(out_pprof_write(m, &po, f), 0);
	fclose(f);
	EXPECT_TRUE(len > 20 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b);
	memset(&z, 0, sizeof(z));
	EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = (uInt)rawlen;
	EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
	rawlen = z.total_out;
	inflateEnd(&z);
	EXPECT_EQ(pb_walk(raw, rawlen, counts, strs, &nstrs), 0);
	EXPECT_EQ(counts[1], 2); /* sample types */
	EXPECT_EQ(counts[2], 1); /* one sample row */
	EXPECT_EQ(counts[3], 1); /* libc's mapping */
	EXPECT_EQ(counts[4], 4); /* locations */
	EXPECT_EQ(counts[5], 4); /* functions */
	EXPECT_STREQ(strs[0], "");
	for (int i = 0; i < nstrs; i++)
		found += !strcmp(strs[i], "java.io.FileOutputStream.write") ||
			 !strcmp(strs[i], "java-jit") || !strcmp(strs[i], "nanoseconds");
	EXPECT_EQ(found, 3);
	free(buf);
	model__free(m);
}

TEST(pprof_reads_back_what_it_wrote)
{
	struct model *m = model__new(), *back = model__new();
	struct jp_labels a = { .pid = 10, .tid = 11, .comm = "java", .thread = "main",
			       .container = "", .main = "org.acme.App" },
			 b = { .pid = 20, .tid = 21, .comm = "sh", .thread = "sh", .container = "c1" };
	struct pprof_opts po = { .values = (1u << JP_VAL_MAX) - 1 };
	struct model_view v = { .values = 1u << JP_VAL_CPU_SAMPLES | 1u << JP_VAL_OFFCPU_NS,
				.per_thread = true, .per_pid = true, .lines = true };
	jp_id s = java_stack(m, 0x7f0000001234), la = model__labels(m, &a), lb = model__labels(m, &b);
	char *buf = NULL, why[128], *x, *y;
	size_t len = 0;
	struct profile *p, *q;
	FILE *f;
	int err;

	EXPECT_EQ(model__add(m, s, la, JP_VAL_CPU_SAMPLES, 3), 0);
	EXPECT_EQ(model__add(m, s, lb, JP_VAL_OFFCPU_NS, 7000), 0);
	f = open_memstream(&buf, &len);
	EXPECT_EQ(out_pprof_write(m, &po, f), 0);
	fclose(f);
	EXPECT_EQ(model__read_pprof(back, buf, len, why, sizeof(why)), 0);
	EXPECT_EQ(model__rows(back), 2);
	EXPECT_EQ(model__total(back, JP_VAL_CPU_SAMPLES), 3);
	EXPECT_EQ(model__total(back, JP_VAL_OFFCPU_NS), 7000);
	/* the same flame graph from both, labels, kinds and lines included */
	p = profile__new("t", "x");
	q = profile__new("t", "x");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	EXPECT_EQ(model__to_profile(back, &v, q), 0);
	x = capture(out_folded_write, p, &err);
	y = capture(out_folded_write, q, &err);
	EXPECT_STREQ(x, y);
	EXPECT_TRUE(strstr(y, "sh [20];sh [21];") != NULL);
	EXPECT_TRUE(strstr(y, "java [10] org.acme.App;main [11];") != NULL);
	free(x);
	free(y);
	profile__free(p);
	profile__free(q);
	/* a truncated file is refused with a reason */
	model__free(back);
	back = model__new();
	EXPECT_EQ(model__read_pprof(back, buf, len / 2, why, sizeof(why)), -EINVAL);
	EXPECT_TRUE(why[0] != '\0');
	free(buf);
	model__free(back);
	model__free(m);
}

TEST(filter_top_and_reverse)
{
	struct model *m = model__new(), *sel = model__new();
	struct jp_labels a = { .pid = 10, .tid = 11, .comm = "java", .thread = "main",
			       .container = "" },
			 b = { .pid = 20, .tid = 21, .comm = "sh", .thread = "sh", .container = "" };
	struct model_view v = { .values = 1u << JP_VAL_CPU_SAMPLES, .dotted = true };
	__u32 pids[] = { 10 };
	struct model_filter fl = { .pids = pids, .npids = 1 };
	jp_id s = java_stack(m, 0x7f0000001234), la = model__labels(m, &a), lb = model__labels(m, &b);
	regex_t re;
	char *out = NULL;
	size_t len = 0;
	struct profile *p;
	FILE *f;
	int err;

	EXPECT_EQ(model__add(m, s, la, JP_VAL_CPU_SAMPLES, 3), 0);
	EXPECT_EQ(model__add(m, s, lb, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__filter(m, &fl, sel), 0);
	EXPECT_EQ(model__rows(sel), 1);
	EXPECT_EQ(model__total(sel, JP_VAL_CPU_SAMPLES), 3);
	model__free(sel);
	/* include matches Java names dotted too; exclude drops */
	EXPECT_EQ(regcomp(&re, "^java\\.io\\.FileOutputStream", REG_EXTENDED | REG_NOSUB), 0);
	fl = (struct model_filter){ .include = &re };
	sel = model__new();
	EXPECT_EQ(model__filter(m, &fl, sel), 0);
	EXPECT_EQ(model__total(sel, JP_VAL_CPU_SAMPLES), 4);
	model__free(sel);
	fl = (struct model_filter){ .exclude = &re };
	sel = model__new();
	EXPECT_EQ(model__filter(m, &fl, sel), 0);
	EXPECT_EQ(model__total(sel, JP_VAL_CPU_SAMPLES), 0);
	model__free(sel);
	regfree(&re);

	f = open_memstream(&out, &len);
	EXPECT_EQ(out_top_write(m, &v, 4, f), 0);
	fclose(f);
	EXPECT_TRUE(strstr(out, "100.00%              4  100.00%              4  vfs_write [kernel]") !=
		    NULL);
	EXPECT_TRUE(strstr(out, "java.io.FileOutputStream.write [jit]") != NULL);
	free(out);

	v.reverse = true;
	p = profile__new("t", "samples");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_STREQ(out, "java;vfs_write_[k];__libc_write;java.io.FileOutputStream.write_[j];"
			  "com.acme.App.main_[0] 3\n"
			  "sh;vfs_write_[k];__libc_write;java.io.FileOutputStream.write_[j];"
			  "com.acme.App.main_[0] 1\n");
	free(out);
	profile__free(p);
	model__free(m);
}

/* --container: a prefix of the short label, or a longer id starting with it; --per-container roots */
TEST(container_filter_and_view)
{
	struct model *m = model__new(), *sel;
	struct jp_labels a = { .pid = 10, .tid = 11, .comm = "java", .thread = "main",
			       .container = "0123456789ab" },
			 b = { .pid = 20, .tid = 21, .comm = "sh", .thread = "sh", .container = "" };
	struct model_view v = { .values = 1u << JP_VAL_CPU_SAMPLES, .per_container = true,
				.per_pid = true };
	jp_id s = java_stack(m, 0x7f0000001234), la = model__labels(m, &a), lb = model__labels(m, &b);
	static const char *const match[] = {
		"0123", "0123456789ab",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" };
	static const char *const nomatch[] = { "1", "0123456789ac", "1123456789ab0123" };
	struct model_filter fl;
	struct profile *p;
	char *out;
	int err;

	EXPECT_EQ(model__add(m, s, la, JP_VAL_CPU_SAMPLES, 3), 0);
	EXPECT_EQ(model__add(m, s, lb, JP_VAL_CPU_SAMPLES, 1), 0);
	for (size_t i = 0; i < 3; i++) {
		fl = (struct model_filter){ .container = match[i] };
		sel = model__new();
		EXPECT_EQ(model__filter(m, &fl, sel), 0);
		EXPECT_EQ(model__total(sel, JP_VAL_CPU_SAMPLES), 3);
		model__free(sel);
		fl = (struct model_filter){ .container = nomatch[i] };
		sel = model__new();
		EXPECT_EQ(model__filter(m, &fl, sel), 0);
		EXPECT_EQ(model__total(sel, JP_VAL_CPU_SAMPLES), 0);
		model__free(sel);
	}
	p = profile__new("t", "samples");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_TRUE(strncmp(out, "[container 0123456789ab];java [10];", 35) == 0);
	EXPECT_TRUE(strstr(out, "\n[host];sh [20];") != NULL);
	free(out);
	profile__free(p);
	model__free(m);
}

/*
 * The model's budget: stacks, labels, strings past it are refused (0, -ENOSPC) and counted;
 * what was interned before stays and is still found
 */
TEST(budget_refuses_and_counts)
{
	struct model *m = model__new();
	struct jp_labels lab = { .pid = 1, .tid = 2, .comm = "c", .thread = "t", .container = "" };
	struct model_mem mem;
	char name[32];
	jp_id locs[64], first, l0;
	size_t refused = 0, added = 0;

	ASSERT_TRUE(m != NULL);
	first = java_stack(m, 0x7f0000001234);
	l0 = model__labels(m, &lab);
	ASSERT_TRUE(first && l0);
	EXPECT_EQ(model__add(m, first, l0, JP_VAL_CPU_SAMPLES, 1), 0);
	size_t budget;

	model__mem(m, &mem);
	budget = mem.bytes + (1u << 20);
	model__set_max_bytes(m, budget);
	for (int i = 0; i < 100000; i++) {
		jp_id s, l;

		snprintf(name, sizeof(name), "f%d", i);
		for (int k = 0; k < 64; k++) {
			struct jp_location loc = { .func = model__func(m, name, "", false),
						   .addr = (__u64)k, .kind = JP_FK_NATIVE };

			locs[k] = loc.func ? model__location(m, &loc) : 0;
		}
		lab.tid = 100 + (__u32)i;
		s = model__stack(m, locs, 64);
		l = model__labels(m, &lab);
		if (!s || !l || model__add(m, s, l, JP_VAL_CPU_SAMPLES, 1)) {
			refused++;
			continue;
		}
		added++;
	}
	model__mem(m, &mem);
	EXPECT_TRUE(refused > 0);
	EXPECT_TRUE(added > 100);
	EXPECT_TRUE(model__over_budget(m) > 0);
	EXPECT_EQ(mem.over_budget, model__over_budget(m));
	EXPECT_TRUE(mem.bytes <= budget);
	/* what came before is still found, and adding to an existing row still works */
	EXPECT_EQ(java_stack(m, 0x7f0000001234), first);
	lab.tid = 2;
	EXPECT_EQ(model__labels(m, &lab), l0);
	EXPECT_EQ(model__add(m, first, l0, JP_VAL_CPU_SAMPLES, 1), 0);
	model__free(m);
}

/* a process's sample: one of two stacks, labels (pid, pid + 1) named comm */
static void proc_sample(struct model *m, __u32 pid, const char *comm, jp_id stack, __u64 n)
{
	struct jp_labels lab = {.pid = pid, .tid = pid + 1, .comm = comm, .thread = comm};
	jp_id l = model__labels(m, &lab);

	EXPECT_TRUE(l != 0);
	EXPECT_EQ(model__add(m, stack, l, JP_VAL_CPU_SAMPLES, n), 0);
	EXPECT_EQ(model__add(m, stack, l, JP_VAL_CPU_NS, n * 1000), 0);
}

/* exited processes fold into one label set per name: rows merge, totals stay, ids are reused */
TEST(fold_exited_processes_by_name)
{
	struct model *m = model__new();
	struct model_view v = {
		.values = 1u << JP_VAL_CPU_SAMPLES, .per_pid = true, .per_thread = true};
	struct jp_labels live = {.pid = 9, .tid = 9, .comm = "sh", .thread = "sh"};
	__u32 pids[3] = {100, 200, 300};
	struct model_mem mm;
	struct profile *p;
	jp_id s1 = java_stack(m, 0x1234), s2 = java_stack(m, 0x1240), lv, l100;
	char *out;
	int err;

	lv = model__labels(m, &live);
	EXPECT_EQ(model__add(m, s1, lv, JP_VAL_CPU_SAMPLES, 7), 0);
	proc_sample(m, 100, "sh", s1, 1);
	proc_sample(m, 200, "sh", s1, 2);
	proc_sample(m, 200, "sh", s2, 4);
	proc_sample(m, 300, "cc1", s2, 8);
	l100 = model__labels(
		m, &(struct jp_labels){.pid = 100, .tid = 101, .comm = "sh", .thread = "sh"});
	EXPECT_EQ(model__rows(m), 5);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 22);

	EXPECT_EQ(model__fold_pids(m, pids, 3), 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 22);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_NS), 15000);
	/* live sh (s1), folded sh (s1: 1 + 2, s2: 4), folded cc1 (s2) */
	EXPECT_EQ(model__rows(m), 4);
	EXPECT_TRUE(model__get_labels(m, l100) == NULL);
	EXPECT_TRUE(model__get_labels(m, lv) != NULL);
	EXPECT_EQ(model__add(m, s1, l100, JP_VAL_CPU_SAMPLES, 1), -EINVAL);
	model__mem(m, &mm);
	EXPECT_EQ(mm.folded, 3);
	EXPECT_EQ(mm.labels_free, 3);
	EXPECT_EQ(mm.labels, 3); /* live sh, folded sh, folded cc1 */

	p = profile__new("t", "samples");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_STREQ(out, "cc1 [1 exited processes];com/acme/App.main_[0];"
			  "java/io/FileOutputStream.write_[j];__libc_write;vfs_write_[k] 8\n"
			  "sh [2 exited processes];com/acme/App.main_[0];"
			  "java/io/FileOutputStream.write_[j];__libc_write;vfs_write_[k] 7\n"
			  "sh [9];sh [9];com/acme/App.main_[0];java/io/FileOutputStream.write_[j];"
			  "__libc_write;vfs_write_[k] 7\n");
	free(out);
	profile__free(p);

	/* a new process takes a freed id; folding it later counts it into the same set */
	proc_sample(m, 400, "sh", s2, 16);
	model__mem(m, &mm);
	EXPECT_EQ(mm.labels_free, 2);
	pids[0] = 400;
	EXPECT_EQ(model__fold_pids(m, pids, 1), 0);
	EXPECT_EQ(model__rows(m), 4);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 38);
	p = profile__new("t", "samples");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_TRUE(strstr(out, "sh [3 exited processes];") != NULL);
	free(out);
	profile__free(p);
	/* pprof keeps the fold (label exited_processes): report shows the same roots */
	{
		struct pprof_opts po = {.values = (1u << JP_VAL_MAX) - 1};
		struct model *back = model__new();
		char *buf = NULL, why[128], *y;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		EXPECT_EQ(out_pprof_write(m, &po, f), 0);
		fclose(f);
		EXPECT_EQ(model__read_pprof(back, buf, len, why, sizeof(why)), 0);
		p = profile__new("t", "samples");
		EXPECT_EQ(model__to_profile(back, &v, p), 0);
		y = capture(out_folded_write, p, &err);
		EXPECT_TRUE(y && strstr(y, "sh [3 exited processes];") != NULL);
		EXPECT_TRUE(y && strstr(y, "cc1 [1 exited processes];") != NULL);
		EXPECT_TRUE(y && !strstr(y, "sh [0]") && !strstr(y, "cc1 [0]"));
		free(y);
		profile__free(p);
		free(buf);
		model__free(back);
	}
	/* the CPU time of folded processes is spread within their set, totals exact */
	EXPECT_EQ(model__spread_cpu(m), 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_NS), 31000);
	model__free(m);
}

/*
 * An exec'd process's label sets of its old name fold by that name; its new program's sets
 * stay its own until it exits. nfolded counts programs: the process counts once under each
 * name; totals stay.
 */
TEST(fold_execed_program_by_old_name)
{
	struct model *m = model__new();
	struct model_view v = {.values = 1u << JP_VAL_CPU_SAMPLES, .per_pid = true};
	struct model_end ends[2] = {{.pid = 100, .comm = "sh"}, {.pid = 200, .comm = "sh"}};
	struct model_mem mm;
	struct profile *p;
	jp_id s1 = java_stack(m, 0x1234), s2 = java_stack(m, 0x1240);
	char *out;
	int err;

	proc_sample(m, 100, "sh", s1, 1);   /* the fork, under its parent's name */
	proc_sample(m, 100, "true", s2, 2); /* after its exec */
	proc_sample(m, 200, "sh", s1, 4);
	proc_sample(m, 200, "sed", s2, 8);
	proc_sample(m, 300, "sh", s1, 16); /* a shell that did not exec */
	EXPECT_EQ(model__fold(m, ends, 2), 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 31);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_NS), 31000);
	model__mem(m, &mm);
	EXPECT_EQ(mm.folded, 0);
	EXPECT_EQ(mm.folded_execs, 2);
	EXPECT_EQ(mm.labels, 4); /* sh [2], true [100], sed [200], sh [300] */
	p = profile__new("t", "samples");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_STREQ(out, "sed [200];com/acme/App.main_[0];java/io/FileOutputStream.write_[j];"
			  "__libc_write;vfs_write_[k] 8\n"
			  "sh [2 exited processes];com/acme/App.main_[0];java/io/FileOutputStream."
			  "write_[j];__libc_write;vfs_write_[k] 5\n"
			  "sh [300];com/acme/App.main_[0];java/io/FileOutputStream.write_[j];"
			  "__libc_write;vfs_write_[k] 16\n"
			  "true [100];com/acme/App.main_[0];java/io/FileOutputStream.write_[j];"
			  "__libc_write;vfs_write_[k] 2\n");
	free(out);
	profile__free(p);
	/* the exec'd process exits: its new name folds, counted as an exited process */
	EXPECT_EQ(model__fold_pids(m, (const __u32[]){100}, 1), 0);
	model__mem(m, &mm);
	EXPECT_EQ(mm.folded, 1);
	EXPECT_EQ(mm.folded_execs, 2);
	EXPECT_EQ(mm.labels, 4); /* sh [2], true [1], sed [200], sh [300] */
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 31);
	p = profile__new("t", "samples");
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	out = capture(out_folded_write, p, &err);
	EXPECT_TRUE(out && strstr(out, "true [1 exited processes];") != NULL);
	EXPECT_TRUE(out && strstr(out, "sh [2 exited processes];") != NULL);
	free(out);
	profile__free(p);
	model__free(m);
}

/*
 * 200,000 forks of a shell that exec'd, the newest 2,048 ends kept: each runs as "sh" and
 * (two in three) as its program's name; its old name's sets fold at the exec, its new
 * one's when it exits (a third are not sampled after the exec: the process table never
 * holds them again, and no exit of theirs comes). Bounded tables, ids recycled.
 */
TEST(fold_execs_keeps_memory_bounded)
{
	static const char *const names[] = {"cc1", "ld", "sed", "true", "cat"};
	struct model *m = model__new();
	jp_id s[2] = {java_stack(m, 0x1234), java_stack(m, 0x1240)};
	struct model_end ring[2048], batch[512];
	size_t nr = 0, nb = 0, mid_bytes = 0;
	__u64 want = 0, ends = 0;
	struct model_mem mm;

	for (__u32 pid = 1000; pid < 201000; pid++) {
		const char *name = names[pid % 5];

		proc_sample(m, pid, "sh", s[pid % 2], 1);
		want += 1;
		if (pid % 3) {
			proc_sample(m, pid, name, s[(pid + 1) % 2], 2);
			want += 2;
		}
		/* the exec, then (two in three) the exit: each an end, folded 2,048 ends later */
		for (int k = 0; k < (pid % 3 ? 2 : 1); k++) {
			struct model_end e = {.pid = pid, .comm = k ? NULL : "sh"};

			if (++ends > 2048) {
				batch[nb++] = ring[nr];
				if (nb == 512) {
					EXPECT_EQ(model__fold(m, batch, nb), 0);
					nb = 0;
				}
			}
			ring[nr] = e;
			nr = (nr + 1) % 2048;
		}
		if (pid == 101000) {
			model__mem(m, &mm);
			mid_bytes = mm.bytes;
		}
	}
	model__mem(m, &mm);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), want);
	/* live: at most the newest 2,048 + 512 ends' processes, two names each; folded 6 */
	EXPECT_TRUE(mm.labels + mm.labels_free <= 2 * (2048 + 512) + 6 + 8);
	EXPECT_TRUE(mm.rows <= 2 * (2048 + 512) + 12 + 8);
	EXPECT_TRUE(mm.bytes == mid_bytes);
	EXPECT_TRUE(mm.folded_execs >= 200000 - 2048 - 512);
	EXPECT_TRUE(mm.folded >= 200000 * 2 / 3 - 2048 - 512);
	model__free(m);
}

/* 200,000 short processes through the model, the newest 2,048 kept: bounded tables */
TEST(fold_keeps_memory_bounded)
{
	static const char *const names[] = {"sh", "cc1", "ld", "make", "sed"};
	struct model *m = model__new();
	jp_id s[2] = {java_stack(m, 0x1234), java_stack(m, 0x1240)};
	__u32 batch[512];
	size_t nb = 0, mid_bytes = 0;
	__u64 want = 0;
	struct model_mem mm;

	for (__u32 pid = 1000; pid < 201000; pid++) {
		proc_sample(m, pid, names[pid % 5], s[pid % 2], 1 + pid % 3);
		want += 1 + pid % 3;
		/* exited 2,048 processes ago: folded 512 at a time, as the join does */
		if (pid >= 1000 + 2048) {
			batch[nb++] = pid - 2048;
			if (nb == 512) {
				EXPECT_EQ(model__fold_pids(m, batch, nb), 0);
				nb = 0;
			}
		}
		if (pid == 101000) {
			model__mem(m, &mm);
			mid_bytes = mm.bytes;
		}
	}
	model__mem(m, &mm);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), want);
	EXPECT_TRUE(mm.labels + mm.labels_free <= 2048 + 512 + 5 + 8);
	EXPECT_TRUE(mm.rows <= 2048 + 512 + 10 + 8);
	EXPECT_TRUE(mm.bytes == mid_bytes);
	EXPECT_TRUE(mm.folded >= 200000 - 2048 - 512);
	model__free(m);
}

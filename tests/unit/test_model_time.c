// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_model_time.c: when samples happened: slots per row, coarsening, folds, spread, filters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "model/model.h"
#include "model/filter.h"
#include "model/spread.h"
#include "model/pprof_read.h"
#include "out/pprof.h"
#include "out/jfr.h"
#include "out/out.h"
#include "model/jfr_read.h"
#include "model/view.h"
#include "model/tseries.h"
#include "profile.h"
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define MS 1000000ull
#define T0 5000000000ull	  /* the recording's start, monotonic */
#define W0 1700000000000000000ull /* ... by the wall clock */

static jp_id one_stack(struct model *m, const char *name)
{
	struct jp_location l = {.func = model__func(m, name, "", true), .kind = JP_FK_JIT};
	jp_id id = model__location(m, &l);

	return model__stack(m, &id, 1);
}

static jp_id labels_of(struct model *m, __u32 pid, __u32 tid, const char *comm)
{
	struct jp_labels l = {.pid = pid, .tid = tid, .comm = comm, .thread = "t", .container = ""};

	return model__labels(m, &l);
}

/* stacks S0.run .. S7.run into s, and the one label set their samples take */
static jp_id eight_stacks(struct model *m, jp_id s[8])
{
	char name[32];

	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "S%d.run", i);
		s[i] = one_stack(m, name);
	}
	return labels_of(m, 1, 1, "java");
}

/* every row's entries add up to its values: 0, or the first row where not + 1 */
static size_t sums_differ(const struct model *m)
{
	for (size_t i = 0; i < model__rows(m); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(m, i, &rb);
		struct jp_time_ent eb;
		__u64 sum[JP_VAL_MAX] = {0};

		for (size_t k = model__time_first(m, i); k; k = model__time_next(m, k)) {
			if (!model__time(m, k - 1, &eb) || eb.row != i)
				return i + 1;
			for (int v = 0; v < JP_VAL_MAX; v++)
				sum[v] += eb.values[v];
		}
		for (int v = 0; v < JP_VAL_MAX; v++)
			if (sum[v] != r->values[v])
				return i + 1;
	}
	return 0;
}

/* slot of row i's sample of value v that came k-th (entries of one slot merged) */
static __u32 nth_slot(const struct model *m, size_t i, size_t nth)
{
	struct jp_time_ent eb;

	for (size_t k = model__time_first(m, i); k; k = model__time_next(m, k)) {
		model__time(m, k - 1, &eb);
		if (!nth--)
			return eb.slot;
	}
	return 0xffffffffu;
}

TEST(samples_keep_their_slots)
{
	struct model *m = model__new();
	struct model_time ti;
	jp_id a, b, lab;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "A.run");
	b = one_stack(m, "B.run");
	lab = labels_of(m, 1, 1, "java");
	/* A at 0.05 s and 0.07 s (one slot), 1.5 s; B at 2.05 s; untimed CPU time of A */
	model__at(m, T0 + 50 * MS);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_NS, 10), 0);
	model__at(m, T0 + 70 * MS);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	model__at(m, T0 + 1500 * MS);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	model__at(m, T0 + 2050 * MS);
	EXPECT_EQ(model__add(m, b, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	model__time_info(m, &ti);
	EXPECT_TRUE(ti.has_clock);
	EXPECT_EQ(ti.res_ms, 100);
	EXPECT_EQ(ti.start_unix_ns, W0);
	EXPECT_EQ(ti.entries, 3);
	EXPECT_EQ(ti.max_slot, 20);
	EXPECT_EQ(nth_slot(m, 0, 0), 0);
	EXPECT_EQ(nth_slot(m, 0, 1), 15);
	EXPECT_EQ(nth_slot(m, 1, 0), 20);
	EXPECT_EQ(sums_differ(m), 0);
	/* a time before the start is slot 0; untimed adds leave the row's time short */
	model__at(m, T0 - 10 * MS);
	EXPECT_EQ(model__add(m, b, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(nth_slot(m, 1, 1), 0);
	EXPECT_EQ(sums_differ(m), 0);
	model__at(m, 0);
	EXPECT_EQ(model__add(m, b, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(sums_differ(m), 2);
	/* reset drops the times with the rows, keeps the clock */
	model__reset(m);
	model__time_info(m, &ti);
	EXPECT_EQ(ti.entries, 0);
	EXPECT_TRUE(ti.has_clock);
	model__free(m);
}

TEST(budget_coarsens_and_keeps_totals)
{
	struct model *m = model__new();
	struct model_time ti;
	struct model_mem mm;
	jp_id s[8], lab;

	model__set_clock(m, T0, W0);
	model__set_time_max_bytes(m, 16 << 10);
	lab = eight_stacks(m, s);
	/* 8 stacks, a sample each every 10 ms for 60 s: 600 slots of 100 ms each */
	for (__u64 t = 0; t < 60000; t += 10) {
		model__at(m, T0 + t * MS);
		EXPECT_EQ(model__add(m, s[(t / 10) % 8], lab, JP_VAL_CPU_SAMPLES, 1), 0);
		EXPECT_EQ(model__add(m, s[(t / 10) % 8], lab, JP_VAL_CPU_NS, 7), 0);
		if (t == 30000) /* a column added on the way: the entries widen */
			EXPECT_EQ(model__add(m, s[0], lab, JP_VAL_OFFCPU_NS, 3), 0);
	}
	model__time_info(m, &ti);
	model__mem(m, &mm);
	EXPECT_TRUE(mm.time_bytes <= 16 << 10);
	EXPECT_TRUE(ti.res_ms > 100);
	EXPECT_EQ(ti.res_ms, 100u << ti.coarsened);
	EXPECT_TRUE(!ti.lost);
	EXPECT_EQ(ti.max_slot, 59999 / ti.res_ms);
	EXPECT_EQ(sums_differ(m), 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 6000);
	/* a row's entries stay in time order */
	for (size_t i = 0; i < model__rows(m); i++)
		for (size_t k = 1; nth_slot(m, i, k) != 0xffffffffu; k++)
			EXPECT_TRUE(nth_slot(m, i, k) > nth_slot(m, i, k - 1));
	model__free(m);
}

/*
 * A recording's target (rec_model_new): its times stop growing with its length, and many
 * rows raise it (TSERIES_ROW_FLOOR entries each) rather than lose the time data
 */
TEST(target_stops_growth_and_grows_with_rows)
{
	struct model *m = model__new();
	struct model_time ti;
	struct model_mem mm;
	jp_id s[8], lab;
	size_t at_half = 0;
	char name[32];

	model__set_clock(m, T0, W0);
	model__set_time_target_bytes(m, 16 << 10);
	lab = eight_stacks(m, s);
	/* 8 stacks, a sample every 10 ms for 20 minutes */
	for (__u64 t = 0; t < 1200000; t += 10) {
		model__at(m, T0 + t * MS);
		EXPECT_EQ(model__add(m, s[(t / 10) % 8], lab, JP_VAL_CPU_SAMPLES, 1), 0);
		if (t == 600000) {
			model__mem(m, &mm);
			at_half = mm.time_bytes;
		}
	}
	model__mem(m, &mm);
	model__time_info(m, &ti);
	EXPECT_TRUE(mm.time_bytes <= 16 << 10);
	EXPECT_TRUE(mm.time_bytes <= at_half);
	EXPECT_TRUE(!ti.lost && ti.coarsened > 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 120000);
	EXPECT_EQ(sums_differ(m), 0);
	/* 2,000 rows: more than the target holds, one entry each; their times are kept */
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "R%d.run", i);
		model__at(m, T0 + 1200000 * MS + (__u64)i * MS);
		EXPECT_EQ(model__add(m, one_stack(m, name), lab, JP_VAL_CPU_SAMPLES, 1), 0);
	}
	model__time_info(m, &ti);
	model__mem(m, &mm);
	EXPECT_TRUE(!ti.lost);
	EXPECT_TRUE(mm.time_bytes > 16 << 10);
	EXPECT_EQ(sums_differ(m), 0);
	model__free(m);
}

/*
 * With a target, however large, a recording's span is TSERIES_TARGET_SLOTS slots at most: an
 * hour of 8 stacks sampled every 10 ms holds 4,096 entries a row at most (36,000 at 100 ms),
 * at 1.6 s slots; every sample still counted and each row's entries add up to it
 */
TEST(target_bounds_the_slots_of_a_long_recording)
{
	struct model *m = model__new();
	struct model_time ti;
	jp_id s[8], lab;

	model__set_clock(m, T0, W0);
	model__set_time_target_bytes(m, 64 << 20);
	lab = eight_stacks(m, s);
	for (__u64 t = 0; t < 3600000; t += 10) {
		model__at(m, T0 + t * MS);
		EXPECT_EQ(model__add(m, s[(t / 10) % 8], lab, JP_VAL_CPU_SAMPLES, 1), 0);
	}
	model__time_info(m, &ti);
	EXPECT_TRUE(!ti.lost);
	EXPECT_EQ(ti.res_ms, 1600);
	EXPECT_TRUE(ti.max_slot < 4096);
	EXPECT_TRUE(ti.entries <= 8 * 4096);
	EXPECT_TRUE(ti.entries >= 8 * 2048);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 360000);
	EXPECT_EQ(sums_differ(m), 0);
	model__free(m);
}

TEST(budget_too_small_for_a_row_each_drops_time_not_samples)
{
	struct model *m = model__new();
	struct model_time ti;
	jp_id lab;
	char name[32];

	model__set_clock(m, T0, W0);
	model__set_time_max_bytes(m, 1024);
	lab = labels_of(m, 1, 1, "java");
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "S%d.run", i);
		model__at(m, T0 + (__u64)i * 10 * MS);
		EXPECT_EQ(model__add(m, one_stack(m, name), lab, JP_VAL_CPU_SAMPLES, 1), 0);
	}
	model__time_info(m, &ti);
	EXPECT_TRUE(ti.lost);
	EXPECT_EQ(ti.entries, 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 200);
	/* a reset (the store's next segment) starts over at 100 ms, with times */
	model__reset(m);
	model__set_time_max_bytes(m, 64 << 10);
	model__at(m, T0 + 250 * MS);
	EXPECT_EQ(model__add(m, one_stack(m, "S0.run"), lab, JP_VAL_CPU_SAMPLES, 1), 0);
	model__time_info(m, &ti);
	EXPECT_TRUE(!ti.lost);
	EXPECT_EQ(ti.res_ms, 100);
	EXPECT_EQ(ti.entries, 1);
	EXPECT_EQ(ti.max_slot, 2);
	model__free(m);
}

TEST(fold_merges_series_of_merged_rows)
{
	struct model *m = model__new();
	struct model_time ti;
	jp_id a, l1, l2, l3;
	__u32 pids[] = {1, 2};

	model__set_clock(m, T0, W0);
	a = one_stack(m, "A.run");
	l1 = labels_of(m, 1, 1, "sh");
	l2 = labels_of(m, 2, 2, "sh");
	l3 = labels_of(m, 3, 3, "sh");
	for (int i = 0; i < 30; i++) {
		model__at(m, T0 + (__u64)i * 100 * MS);
		EXPECT_EQ(model__add(m, a,
				     i % 3 == 0	  ? l1
				     : i % 3 == 1 ? l2
						  : l3,
				     JP_VAL_CPU_SAMPLES, 1),
			  0);
	}
	EXPECT_EQ(model__rows(m), 3);
	EXPECT_EQ(model__fold_pids(m, pids, 2), 0);
	EXPECT_EQ(model__rows(m), 2);
	EXPECT_EQ(sums_differ(m), 0);
	/* the folded row's entries are its old rows' in time order: slots 0 1 3 4 6 7 ... */
	for (size_t i = 0; i < model__rows(m); i++) {
		size_t k = 1;

		for (; nth_slot(m, i, k) != 0xffffffffu; k++)
			EXPECT_TRUE(nth_slot(m, i, k) > nth_slot(m, i, k - 1));
		EXPECT_TRUE(k == 20 || k == 10);
	}
	/* a time added after the fold goes on the folded row's chain */
	model__at(m, T0 + 4000 * MS);
	EXPECT_EQ(model__add(m, a, l3, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(sums_differ(m), 0);
	/* coarsened: the merged row's entries of one slot merge, each row stays in time order */
	model__set_time_max_bytes(m, 1024 + 32 * 12); /* the row array and 32 entries */
	model__at(m, T0 + 4100 * MS);
	EXPECT_EQ(model__add(m, a, l3, JP_VAL_CPU_SAMPLES, 1), 0);
	model__time_info(m, &ti);
	EXPECT_TRUE(ti.coarsened >= 1 && !ti.lost && ti.entries < 31);
	EXPECT_EQ(sums_differ(m), 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 32);
	for (size_t i = 0; i < model__rows(m); i++)
		for (size_t k = 1; nth_slot(m, i, k) != 0xffffffffu; k++)
			EXPECT_TRUE(nth_slot(m, i, k) > nth_slot(m, i, k - 1));
	model__free(m);
}

TEST(spread_and_set_keep_times_equal_to_totals)
{
	struct model *m = model__new();
	jp_id a, b, lab;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "A.run");
	b = one_stack(m, "B.run");
	lab = labels_of(m, 1, 1, "java");
	for (int i = 0; i < 50; i++) {
		model__at(m, T0 + (__u64)i * 37 * MS);
		EXPECT_EQ(model__add(m, i % 4 ? a : b, lab, JP_VAL_CPU_SAMPLES, 1), 0);
		EXPECT_EQ(model__add(m, i % 4 ? a : b, lab, JP_VAL_CPU_NS, 1000 + i * 13), 0);
	}
	EXPECT_EQ(model__spread_cpu(m), 0);
	EXPECT_EQ(sums_differ(m), 0);
	EXPECT_EQ(model__set(m, 0, JP_VAL_CPU_SAMPLES, 7), 0);
	EXPECT_EQ(sums_differ(m), 0);
	model__free(m);
}

TEST(filter_copies_times)
{
	struct model *m = model__new(), *d = model__new();
	struct model_filter f = {0};
	struct model_time ti;
	jp_id a, lab;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "A.run");
	lab = labels_of(m, 1, 1, "java");
	model__at(m, T0 + 300 * MS);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 2), 0);
	model__at(m, T0 + 900 * MS);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	model__at(m, 0);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 4), 0);
	EXPECT_EQ(model__filter(m, &f, d), 0);
	model__time_info(d, &ti);
	EXPECT_EQ(ti.start_unix_ns, W0);
	EXPECT_EQ(ti.entries, 2);
	EXPECT_EQ(nth_slot(d, 0, 0), 3);
	EXPECT_EQ(nth_slot(d, 0, 1), 9);
	EXPECT_EQ(model__total(d, JP_VAL_CPU_SAMPLES), 7);
	model__free(m);
	model__free(d);
}

/* (slot, CPU samples) of every entry, summed per slot, into per_slot[0..n) */
static void per_slot(const struct model *m, __u64 *out, size_t n)
{
	struct jp_time_ent eb;

	memset(out, 0, n * sizeof(*out));
	for (size_t k = 0; model__time(m, k, &eb); k++)
		if (eb.slot < n && eb.row != (size_t)-1)
			out[eb.slot] += eb.values[JP_VAL_CPU_SAMPLES];
}

TEST(pprof_round_trip_keeps_times)
{
	struct model *m = model__new(), *back = model__new(), *again = model__new();
	struct pprof_opts po = {.values = 1u << JP_VAL_CPU_SAMPLES | 1u << JP_VAL_CPU_NS,
				.time_ns = W0 + 3 * MS};
	struct model_time ti, tb;
	__u64 a1[64], a2[64];
	char *buf = NULL, *buf2 = NULL, why[128];
	size_t len = 0, len2 = 0;
	jp_id a, b, lab;
	FILE *f;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "A.run");
	b = one_stack(m, "B.run");
	lab = labels_of(m, 1, 1, "java");
	for (int i = 0; i < 40; i++) { /* A for 2 s, then B for 2 s, 20 ms apart */
		model__at(m, T0 + (__u64)i * 100 * MS + 20 * MS);
		EXPECT_EQ(model__add(m, i < 20 ? a : b, lab, JP_VAL_CPU_SAMPLES, 1), 0);
		EXPECT_EQ(model__add(m, i < 20 ? a : b, lab, JP_VAL_CPU_NS, 10000 + i), 0);
	}
	model__at(m, 0); /* and some CPU time with no time */
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_NS, 55), 0);
	f = open_memstream(&buf, &len);
	EXPECT_EQ(out_pprof_write(m, &po, f), 0);
	fclose(f);
	EXPECT_EQ(model__read_pprof(back, buf, len, why, sizeof(why)), 0);
	EXPECT_EQ(model__total(back, JP_VAL_CPU_SAMPLES), 40);
	EXPECT_EQ(model__total(back, JP_VAL_CPU_NS), model__total(m, JP_VAL_CPU_NS));
	model__time_info(m, &ti);
	model__time_info(back, &tb);
	EXPECT_TRUE(tb.has_clock);
	EXPECT_EQ(tb.start_unix_ns, W0);
	EXPECT_EQ(tb.res_ms, 100);
	EXPECT_EQ(tb.max_slot, 39);
	per_slot(m, a1, 64);
	per_slot(back, a2, 64);
	EXPECT_TRUE(!memcmp(a1, a2, sizeof(a1)));
	/* A's row has its times in the first 2 s only */
	for (size_t i = 0; i < model__rows(back); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(back, i, &rb);
		size_t n;
		const jp_id *locs = model__get_stack(back, r->stack, &n);
		const char *name =
			model__get_func(back, model__get_location(back, locs[0])->func)->name;
		struct jp_time_ent eb;

		for (size_t k = model__time_first(back, i); k; k = model__time_next(back, k)) {
			model__time(back, k - 1, &eb);
			EXPECT_TRUE(!strcmp(name, "A.run") ? eb.slot < 20 : eb.slot >= 20);
		}
	}
	/* coarsened slots survive a second round trip with their resolution */
	model__set_time_max_bytes(back, 4096);
	for (int i = 0; i < 300; i++) {
		model__at(back, model__mono_of(back, W0 + (__u64)i * 100 * MS));
		EXPECT_EQ(model__add(back, a, 1, JP_VAL_CPU_SAMPLES, 1), 0);
	}
	model__time_info(back, &tb);
	EXPECT_TRUE(tb.res_ms > 100);
	po.values = 1u << JP_VAL_CPU_SAMPLES;
	f = open_memstream(&buf2, &len2);
	EXPECT_EQ(out_pprof_write(back, &po, f), 0);
	fclose(f);
	EXPECT_EQ(model__read_pprof(again, buf2, len2, why, sizeof(why)), 0);
	model__time_info(again, &ti);
	EXPECT_EQ(ti.res_ms, tb.res_ms);
	EXPECT_EQ(ti.max_slot, tb.max_slot);
	EXPECT_EQ(model__total(again, JP_VAL_CPU_SAMPLES), 340);
	per_slot(back, a1, 64);
	per_slot(again, a2, 64);
	EXPECT_TRUE(!memcmp(a1, a2, sizeof(a1)));
	EXPECT_EQ(sums_differ(again), 0);
	free(buf);
	free(buf2);
	model__free(m);
	model__free(back);
	model__free(again);
}

TEST(clock_set_again_moves_slots_by_whole_slots)
{
	struct model *m = model__new();
	struct model_time ti;
	jp_id a, lab;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "A.run");
	lab = labels_of(m, 1, 1, "java");
	model__at(m, T0 + 550 * MS);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	model__at(m, T0 + 2550 * MS);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	/* the recording's t0 came 1.05 s after the first clock: slot 0 is at 1.0 s now */
	model__set_clock(m, T0 + 1050 * MS, W0 + 1050 * MS);
	model__time_info(m, &ti);
	EXPECT_EQ(ti.start_unix_ns, W0 + 1000 * MS);
	EXPECT_EQ(nth_slot(m, 0, 0), 0);
	EXPECT_EQ(nth_slot(m, 0, 1), 15);
	model__at(m, T0 + 2650 * MS);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(nth_slot(m, 0, 2), 16);
	EXPECT_EQ(sums_differ(m), 0);
	model__free(m);
}

TEST(jfr_events_at_their_times_read_back)
{
	struct model *m = model__new(), *back = model__new();
	struct jfr_opts jo = {.start_unix_ns = W0, .duration_ns = 4000 * MS};
	struct model_time tb;
	__u64 a1[64], a2[64];
	char *buf = NULL, why[128];
	size_t len = 0;
	jp_id a, b, lab;
	FILE *f;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "A.run");
	b = one_stack(m, "B.run");
	lab = labels_of(m, 1, 1, "java");
	for (int i = 0; i < 40; i++) {
		model__at(m, T0 + (__u64)i * 100 * MS + 20 * MS);
		EXPECT_EQ(model__add(m, i < 20 ? a : b, lab, JP_VAL_CPU_SAMPLES, 1 + i % 3), 0);
		EXPECT_EQ(model__add(m, i < 20 ? b : a, lab, JP_VAL_OFFCPU_NS, 5000), 0);
	}
	f = open_memstream(&buf, &len);
	EXPECT_EQ(out_jfr_write(m, &jo, f), 0);
	fclose(f);
	EXPECT_EQ(model__read_jfr(back, buf, len, why, sizeof(why)), 0);
	EXPECT_EQ(model__total(back, JP_VAL_CPU_SAMPLES), model__total(m, JP_VAL_CPU_SAMPLES));
	EXPECT_EQ(model__total(back, JP_VAL_OFFCPU_NS), model__total(m, JP_VAL_OFFCPU_NS));
	model__time_info(back, &tb);
	EXPECT_EQ(tb.start_unix_ns, W0);
	EXPECT_EQ(tb.max_slot, 39);
	per_slot(m, a1, 64);
	per_slot(back, a2, 64);
	EXPECT_TRUE(!memcmp(a1, a2, sizeof(a1)));
	EXPECT_EQ(sums_differ(back), 0);
	free(buf);
	model__free(m);
	model__free(back);
}

TEST(speedscope_one_profile_per_thread_in_time_order)
{
	struct model *m = model__new();
	struct model_view v = {.values = 1u << JP_VAL_CPU_NS, .dotted = true};
	char *buf = NULL;
	size_t len = 0;
	jp_id a, b, l1, l2;
	FILE *f;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "p/A.run");
	b = one_stack(m, "p/B.run");
	l1 = labels_of(m, 7, 8, "java");
	l2 = labels_of(m, 7, 9, "java");
	/* thread 8: B then A (B's row comes first in the model), thread 9: A only; one untimed */
	model__at(m, T0 + 100 * MS);
	EXPECT_EQ(model__add(m, b, l1, JP_VAL_CPU_NS, 30), 0);
	model__at(m, T0 + 900 * MS);
	EXPECT_EQ(model__add(m, a, l1, JP_VAL_CPU_NS, 20), 0);
	model__at(m, T0 + 1900 * MS);
	EXPECT_EQ(model__add(m, b, l1, JP_VAL_CPU_NS, 10), 0);
	EXPECT_EQ(model__add(m, a, l2, JP_VAL_CPU_NS, 5), 0);
	model__at(m, 0);
	EXPECT_EQ(model__add(m, a, l2, JP_VAL_CPU_NS, 4), 0);
	f = open_memstream(&buf, &len);
	EXPECT_EQ(out_speedscope_write_model(m, &v, NULL, f), 0);
	fclose(f);
	EXPECT_TRUE(
		strstr(buf, "\"frames\":[{\"name\":\"p.B.run_[j]\"},{\"name\":\"p.A.run_[j]\"}]") !=
		NULL);
	EXPECT_TRUE(strstr(buf, "{\"type\":\"sampled\",\"name\":\"java [7] t [8]\",\"unit\":"
				"\"nanoseconds\",\"startValue\":0,\"samples\":[[0],[1],[0]],"
				"\"weights\":[30,20,10],\"endValue\":60}") != NULL);
	EXPECT_TRUE(strstr(buf, "\"samples\":[[1],[1]],\"weights\":[5,4],\"endValue\":9}") != NULL);
	free(buf);
	model__free(m);
}

TEST(filter_keeps_a_time_range)
{
	struct model *m = model__new(), *d = model__new();
	struct model_filter f = {.since_ns = W0 + 1000 * MS, .until_ns = W0 + 2000 * MS};
	jp_id a, b, lab;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "A.run");
	b = one_stack(m, "B.run");
	lab = labels_of(m, 1, 1, "java");
	for (int i = 0; i < 30; i++) {
		model__at(m, T0 + (__u64)i * 100 * MS + 50 * MS);
		EXPECT_EQ(model__add(m, i < 15 ? a : b, lab, JP_VAL_CPU_SAMPLES, 1), 0);
	}
	model__at(m, 0);
	EXPECT_EQ(model__add(m, a, lab, JP_VAL_CPU_SAMPLES, 100), 0); /* untimed: left out */
	EXPECT_EQ(model__filter(m, &f, d), 0);
	/* slots 10..19: A's 10-14, B's 15-19 */
	EXPECT_EQ(model__total(d, JP_VAL_CPU_SAMPLES), 10);
	EXPECT_EQ(model__rows(d), 2);
	EXPECT_EQ(sums_differ(d), 0);
	model__free(m);
	model__free(d);
}

struct names_ctx {
	const char *names[64];
	size_t n;
};

static int collect_name(void *vctx, const struct profile_node *const *path, size_t depth)
{
	struct names_ctx *c = vctx;

	if (c->n < 64)
		c->names[c->n++] = profile_node__name(path[depth - 1]);
	return 0;
}

TEST(html_nodes_of_rows_are_their_leaves_in_preorder)
{
	struct model *m = model__new();
	struct model_view v = {.values = 1u << JP_VAL_CPU_SAMPLES, .per_pid = true,
			       .per_thread = true, .dotted = true};
	struct profile *p = profile__new("t", "samples");
	struct names_ctx c = {.names = {"all"}, .n = 1};
	size_t node[8];
	jp_id a, b, l1, l2;

	model__set_clock(m, T0, W0);
	a = one_stack(m, "p/A.run");
	b = one_stack(m, "p/B.run");
	l1 = labels_of(m, 7, 8, "java");
	l2 = labels_of(m, 9, 9, "sh");
	model__at(m, T0 + 100 * MS);
	EXPECT_EQ(model__add(m, b, l1, JP_VAL_CPU_SAMPLES, 3), 0);
	EXPECT_EQ(model__add(m, a, l2, JP_VAL_CPU_SAMPLES, 2), 0);
	EXPECT_EQ(model__add(m, a, l1, JP_VAL_CPU_SAMPLES, 1), 0);
	EXPECT_EQ(model__add(m, a, l1, JP_VAL_OFFCPU_NS, 9), 0); /* not in the view */
	EXPECT_EQ(model__add(m, b, l2, JP_VAL_OFFCPU_NS, 9), 0);
	EXPECT_EQ(model__to_profile(m, &v, p), 0);
	EXPECT_EQ(model__profile_nodes(m, &v, p, node), 0);
	EXPECT_EQ(profile__walk(p, collect_name, &c), 0);
	EXPECT_EQ(model__rows(m), 4);
	for (size_t i = 0; i < model__rows(m); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(m, i, &rb);

		if (!r->values[JP_VAL_CPU_SAMPLES]) {
			EXPECT_EQ(node[i], SIZE_MAX);
			continue;
		}
		EXPECT_TRUE(node[i] < c.n);
		EXPECT_STREQ(c.names[node[i]], r->stack == a ? "p.A.run" : "p.B.run");
	}
	/* the two p.A.run leaves are two nodes: under java [7]'s thread and under sh [9]'s */
	EXPECT_TRUE(node[1] != node[2]);
	profile__free(p);
	model__free(m);
}

/* pages of [from, to) resident (mincore), of those wholly inside */
static size_t resident_pages(const char *from, const char *to)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)from + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	uintptr_t b = (uintptr_t)to & ~((uintptr_t)page - 1);
	unsigned char vec[4096];
	size_t n = 0;

	if (b <= a || (b - a) / (uintptr_t)page > sizeof(vec))
		return 0;
	if (mincore((void *)a, b - a, vec))
		return SIZE_MAX;
	for (size_t i = 0; i < (b - a) / (uintptr_t)page; i++)
		n += vec[i] & 1;
	return n;
}

/*
 * The entries (16 bytes with one column) after a coarsening: the pages past the last entry
 * held are given back (issue 27: a long recording's RSS followed the most entries there
 * ever were), the rows' entries still add up and walk in time order
 */
TEST(coarsening_gives_back_the_pages_past_the_last_entry)
{
	struct tseries t;
	__u64 sum = 0, want = 0;
	size_t before, after, n0;

	tseries_init(&t);
	EXPECT_EQ(tseries_add_column(&t), 0);
	EXPECT_EQ(t.esize, 12);
	t.has_clock = true;
	t.mono0 = T0;
	/* 2 rows sampled every 100 ms for 2,000 s: 40,000 entries, each pair of slots merges */
	for (__u64 i = 0; i < 20000; i++) {
		t.now = T0 + i * 100 * MS;
		EXPECT_EQ(tseries_add(&t, 1, 0, 1), 0);
		EXPECT_EQ(tseries_add(&t, 2, 0, 2), 0);
		want += 3;
	}
	n0 = t.n;
	EXPECT_EQ(n0, 40000);
	before = resident_pages(t.ents + n0 / 2 * t.esize, t.ents + n0 * t.esize);
	EXPECT_TRUE(before > 50); /* 234 kB */
	EXPECT_TRUE(tseries_coarsen(&t));
	EXPECT_EQ(t.n, 20000);
	after = resident_pages(t.ents + n0 / 2 * t.esize, t.ents + n0 * t.esize);
	EXPECT_EQ(after, 0);
	/* the entries held are as they were merged, the walk has them in order */
	for (__u32 row = 1; row <= 2; row++) {
		__u32 last = 0;
		size_t n = 0;

		for (size_t k = tseries_row_first(&t, row); k; k = tseries_row_next(&t, k - 1)) {
			const struct tseries_ent *e = tseries_at(&t, k - 1);

			EXPECT_EQ(e->row, row);
			EXPECT_TRUE(!n || e->slot == last + 1);
			EXPECT_EQ(tseries_val(&t, e, 0), 2 * row);
			last = e->slot;
			sum += tseries_val(&t, e, 0);
			n++;
		}
		EXPECT_EQ(n, 10000);
	}
	EXPECT_EQ(sum, want);
	/* and the array fills again past the given-back pages */
	t.now = T0 + 20000 * 100 * MS;
	EXPECT_EQ(tseries_add(&t, 3, 0, 5), 0);
	EXPECT_EQ(tseries_val(&t, tseries_at(&t, t.n - 1), 0), 5);
	tseries_free(&t);
}

/* the sum of column col over the entries of row */
static __u64 row_sum(const struct tseries *t, __u32 row, unsigned int col)
{
	__u64 s = 0;

	for (size_t k = tseries_row_first(t, row); k; k = tseries_row_next(t, k - 1))
		s += tseries_val(t, tseries_at(t, k - 1), col);
	return s;
}

TEST(values_past_four_bytes_are_kept_whole)
{
	struct tseries t;
	__u64 big = 3000000000ull, huge = 5ull << 40;

	tseries_init(&t);
	EXPECT_EQ(tseries_add_column(&t), 0);
	EXPECT_EQ(tseries_add_column(&t), 0);
	EXPECT_EQ(t.esize, 16); /* two columns: a third less than two u64 */
	t.has_clock = true;
	t.mono0 = T0;
	/* row 1: a big value at once, and one made big by adds to its slot */
	t.now = T0;
	EXPECT_EQ(tseries_add(&t, 1, 1, big), 0);
	EXPECT_EQ(tseries_add(&t, 1, 0, 1), 0);
	t.now = T0 + 100 * MS;
	EXPECT_EQ(tseries_add(&t, 1, 1, 0x7fffffffull), 0);
	EXPECT_EQ(tseries_add(&t, 1, 1, 2), 0);
	EXPECT_EQ(t.nbig, 2);
	/* row 2: two small values whose slots merge past 2^31 at a coarsening */
	t.now = T0 + 200 * MS;
	EXPECT_EQ(tseries_add(&t, 2, 1, 0x60000000ull), 0);
	t.now = T0 + 300 * MS;
	EXPECT_EQ(tseries_add(&t, 2, 1, 0x60000000ull), 0);
	/* row 3: a small one merging into a big one, a big one into a small one */
	t.now = T0 + 400 * MS;
	EXPECT_EQ(tseries_add(&t, 3, 1, 7), 0);
	t.now = T0 + 500 * MS;
	EXPECT_EQ(tseries_add(&t, 3, 1, huge), 0);
	EXPECT_EQ(t.nbig, 3);
	EXPECT_EQ(row_sum(&t, 1, 1), big + 0x7fffffffull + 2);
	EXPECT_TRUE(tseries_coarsen(&t));
	EXPECT_EQ(t.n, 3);
	EXPECT_EQ(row_sum(&t, 1, 1), big + 0x7fffffffull + 2);
	EXPECT_EQ(row_sum(&t, 1, 0), 1);
	EXPECT_EQ(row_sum(&t, 2, 1), 0xc0000000ull);
	EXPECT_EQ(row_sum(&t, 3, 1), huge + 7);
	/* row 1's two merged into one place, row 2's is new: the dropped place is gone */
	EXPECT_EQ(t.nbig, 3);
	/* a third column after big values: they keep their values, the new column is 0 */
	EXPECT_EQ(tseries_add_column(&t), 0);
	EXPECT_EQ(t.esize, 20);
	EXPECT_EQ(row_sum(&t, 3, 1), huge + 7);
	EXPECT_EQ(row_sum(&t, 3, 2), 0);
	/* fit sets a column by another's shape: big values both ways */
	tseries_fit(&t, 1, 2, 1, 4ull << 32, big + 0x7fffffffull + 2);
	EXPECT_EQ(row_sum(&t, 1, 2), 4ull << 32);
	tseries_fit(&t, 1, 1, 1, 10, big + 0x7fffffffull + 2);
	EXPECT_EQ(row_sum(&t, 1, 1), 10);
	EXPECT_TRUE(!t.lost);
	tseries_free(&t);
	EXPECT_EQ(t.nbig, 0);
}

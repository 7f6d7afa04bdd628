/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* test_tsplit.c: jprof trace's split of a slow call (user/trace/tsplit.c) and its event windows (tstore.c). */
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "harness.h"
#include "trace/tsplit.h"
#include "trace/tstore.h"

#define MS 1000000ull

static struct tsplit_ev off(__u64 s, __u64 e, __u8 state, __s32 nr)
{
	return (struct tsplit_ev){
		.start_ns = s, .end_ns = e, .nr = nr, .kind = TSPLIT_OFF, .state = state};
}

static struct tsplit_ev sc(__u64 s, __u64 e, __s32 nr)
{
	return (struct tsplit_ev){.start_ns = s, .end_ns = e, .nr = nr, .kind = TSPLIT_SC};
}

TEST(overlap)
{
	EXPECT_EQ(tsplit_overlap(0, 10, 5, 20), 5);
	EXPECT_EQ(tsplit_overlap(5, 20, 0, 10), 5);
	EXPECT_EQ(tsplit_overlap(0, 10, 10, 20), 0); /* half-open: touching is no overlap */
	EXPECT_EQ(tsplit_overlap(0, 100, 10, 20), 10);
	EXPECT_EQ(tsplit_overlap(12, 15, 10, 20), 3);
	EXPECT_EQ(tsplit_overlap(30, 40, 10, 20), 0);
	EXPECT_EQ(tsplit_overlap(10, 10, 0, 20), 0);
}

/* a call [100, 140) ms: intervals cut at its bounds, the rest on CPU, totals add up */
TEST(cut_by_the_call_bounds)
{
	struct tsplit_ev ev[] = {
		off(90 * MS, 110 * MS, TSPLIT_SLEEP, __NR_futex),  /* 10 ms inside */
		sc(89 * MS, 110 * MS, __NR_futex),		   /* 10 ms inside */
		off(115 * MS, 117 * MS, TSPLIT_RUNNABLE, -1),	   /* 2 */
		sc(120 * MS, 125 * MS, __NR_fsync),		   /* 5 */
		off(120 * MS, 125 * MS, TSPLIT_DISK, __NR_fsync),  /* 5 */
		off(138 * MS, 150 * MS, TSPLIT_SLEEP, __NR_read),  /* 2 (cannot happen: cut) */
		off(150 * MS, 160 * MS, TSPLIT_SLEEP, __NR_futex), /* after: out */
		off(10 * MS, 20 * MS, TSPLIT_SLEEP, __NR_futex),   /* before: out */
	};
	struct tsplit_res r;

	tsplit_compute(ev, sizeof(ev) / sizeof(ev[0]), 100 * MS, 40 * MS, 0, &r);
	EXPECT_EQ(r.has_kernel, 1);
	EXPECT_EQ(r.incomplete, 0);
	EXPECT_EQ(r.dur_ns, 40 * MS);
	EXPECT_EQ(r.off_ns, 19 * MS);
	EXPECT_EQ(r.cpu_ns, 21 * MS);
	EXPECT_EQ(r.cpu_ns + r.off_ns, r.dur_ns);
	EXPECT_EQ(r.runnable_ns, 2 * MS);
	EXPECT_EQ(r.disk_ns, 5 * MS);
	EXPECT_EQ(r.sleep_ns, 12 * MS);
	ASSERT_TRUE(r.n_off == 4);
	EXPECT_STREQ(r.off[0].name, "futex");
	EXPECT_EQ(r.off[0].ns, 10 * MS);
	EXPECT_STREQ(r.off[0].cls, "lock/park/wait");
	EXPECT_STREQ(r.off[1].name, "fsync");
	EXPECT_STREQ(r.off[1].cls, "file I/O");
	EXPECT_STREQ(r.off[2].name, "runnable");
	EXPECT_STREQ(r.off[3].name, "read");
	EXPECT_STREQ(r.off[3].cls, "pipe/socket I/O");
	EXPECT_EQ(r.sc_count, 2);
	EXPECT_EQ(r.sc_ns, 15 * MS);
	ASSERT_TRUE(r.n_sc == 2);
	EXPECT_STREQ(r.sc[0].name, "futex");
	EXPECT_EQ(r.sc[1].count, 1);
}

TEST(no_events_all_on_cpu_and_lost_is_incomplete)
{
	struct tsplit_res r;

	tsplit_compute(NULL, 0, 100, 50, 0, &r);
	EXPECT_EQ(r.cpu_ns, 50);
	EXPECT_EQ(r.off_ns, 0);
	EXPECT_EQ(r.incomplete, 0);
	tsplit_compute(NULL, 0, 100, 50, 101, &r); /* events up to 101 may be missing */
	EXPECT_EQ(r.incomplete, 1);
	tsplit_compute(NULL, 0, 100, 50, 100, &r); /* lost before the call: not this one */
	EXPECT_EQ(r.incomplete, 0);
}

/*
 * A span the kernel side could not vouch for (a switch-in not seen, mtrace.bpf.c close_unseen):
 * the calls it overlaps are incomplete, never all on the CPU; the others on the thread are not
 */
TEST(unsure_span_marks_the_calls_it_overlaps)
{
	struct tstore *s = tstore__new(1 << 20, 1000 * MS);
	struct tsplit_ev ev[] = {
		off(40 * MS, 80 * MS, TSPLIT_SLEEP, __NR_futex), /* a call before, seen whole */
		sc(39 * MS, 80 * MS, __NR_futex),
		sc(100 * MS, 141 * MS, __NR_futex), /* the wait whose switch-in was lost */
		{.start_ns = 101 * MS, .end_ns = 150 * MS, .nr = -1, .kind = TSPLIT_LOST},
		sc(160 * MS, 161 * MS, __NR_write), /* a call after it */
	};
	struct tsplit_res r;

	ASSERT_TRUE(s);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		tstore__add(s, 7, 70, 70, &ev[i]);
	tstore__split(s, 7, 70, 99 * MS, 42 * MS, &r);
	EXPECT_EQ(r.incomplete, 1);
	EXPECT_EQ(r.off_ns, 0);
	EXPECT_EQ(r.sc_count, 1);
	tstore__split(s, 7, 70, 145 * MS, 10 * MS, &r); /* inside the span's tail */
	EXPECT_EQ(r.incomplete, 1);
	tstore__split(s, 7, 70, 38 * MS, 43 * MS, &r); /* before it: as it was */
	EXPECT_EQ(r.incomplete, 0);
	EXPECT_EQ(r.off_ns, 40 * MS);
	tstore__split(s, 7, 70, 155 * MS, 10 * MS, &r); /* after it */
	EXPECT_EQ(r.incomplete, 0);
	EXPECT_EQ(r.sc_count, 1);
	tstore__split(s, 7, 71, 99 * MS, 42 * MS, &r); /* another thread: not its span */
	EXPECT_EQ(r.incomplete, 0);
	tstore__free(s);
}

/* a thread is off the CPU once at a time: overlapping intervals (bad input) are capped */
TEST(overlapping_input_capped)
{
	struct tsplit_ev ev[] = {off(0, 100, TSPLIT_SLEEP, -1), off(0, 100, TSPLIT_DISK, -1)};
	struct tsplit_res r;

	tsplit_compute(ev, 2, 10, 50, 0, &r);
	EXPECT_EQ(r.off_ns, 50);
	EXPECT_EQ(r.cpu_ns, 0);
	EXPECT_STREQ(r.off[0].name, "sleep");
	EXPECT_STREQ(r.off[1].name, "fault");
	EXPECT_STREQ(r.off[1].cls, "page fault or I/O");
}

/* more kinds of calls than the top: the totals count them all */
TEST(top_syscalls_and_zero_length)
{
	static const int nrs[] = {__NR_read,  __NR_write, __NR_openat, __NR_close,
				  __NR_fstat, __NR_futex, __NR_mmap};
	struct tsplit_ev ev[8];
	struct tsplit_res r;

	for (int i = 0; i < 7; i++)
		ev[i] = sc(1000 + i * 100, 1000 + i * 100 + 10 * (i + 1), nrs[i]);
	ev[7] = sc(1900, 1900, __NR_getpid); /* 0 ns, inside */
	tsplit_compute(ev, 8, 1000, 1000, 0, &r);
	EXPECT_EQ(r.sc_count, 8);
	EXPECT_EQ(r.sc_ns, 10 + 20 + 30 + 40 + 50 + 60 + 70);
	EXPECT_EQ(r.n_sc, TSPLIT_TOP);
	EXPECT_STREQ(r.sc[0].name, "mmap");
	EXPECT_STREQ(r.sc[3].name, "close");
	EXPECT_EQ(r.cpu_ns, 1000);
}

static struct tsplit_ev scb(__u64 s, __u64 e, __s32 nr, __u32 count, __u64 ns)
{
	return (struct tsplit_ev){.start_ns = s,
				  .end_ns = e,
				  .nr = nr,
				  .kind = TSPLIT_SCB,
				  .count = count,
				  .sc_ns = ns};
}

/* short calls in batches: whole inside, cut by the call (in proportion), of mixed calls */
TEST(batches_of_short_calls)
{
	struct tsplit_ev ev[] = {
		scb(100, 200, __NR_read, 10, 50),   /* inside: 10 calls, 50 ns */
		scb(0, 200, __NR_write, 100, 100),  /* half inside: ~50 calls, 50 ns */
		scb(300, 300, __NR_getpid, 1, 0),   /* 0 ns span, inside */
		scb(350, 360, TSPLIT_MIXED, 4, 8),  /* mixed */
		scb(1000, 1100, __NR_read, 10, 50), /* after: out */
	};
	struct tsplit_res r;

	tsplit_compute(ev, 5, 100, 400, 0, &r);
	EXPECT_EQ(r.sc_count, 10 + 50 + 1 + 4);
	EXPECT_EQ(r.sc_ns, 50 + 50 + 0 + 8);
	ASSERT_TRUE(r.n_sc == 4);
	EXPECT_STREQ(r.sc[0].name, "read");
	EXPECT_EQ(r.sc[0].count, 10);
	EXPECT_STREQ(r.sc[1].name, "write");
	EXPECT_EQ(r.sc[1].count, 50);
	EXPECT_STREQ(r.sc[2].name, "(short, mixed)");
	EXPECT_EQ(r.cpu_ns, 400);
}

/* the kernel's batch still open counts with the stored events; the host tid is kept */
TEST(store_open_batch)
{
	struct tstore *s = tstore__new(1 << 20, 1000 * MS);
	struct tsplit_ev e = sc(100, 150, __NR_fsync), open = scb(200, 300, __NR_read, 5, 20);
	struct tsplit_res r;
	__u32 tid = 0;

	ASSERT_TRUE(s);
	EXPECT_EQ(tstore__host_tid(s, 9, 90, &tid), -ENOENT);
	tstore__add(s, 9, 90, 12345, &e);
	EXPECT_EQ(tstore__host_tid(s, 9, 90, &tid), 0);
	EXPECT_EQ(tid, 12345);
	tstore__split_with(s, 9, 90, 0, 1000, &open, 1, &r);
	EXPECT_EQ(r.sc_count, 6);
	EXPECT_EQ(r.sc_ns, 70);
	tstore__split_with(s, 9, 91, 0, 1000, &open, 1, &r); /* a thread with no events */
	EXPECT_EQ(r.sc_count, 5);
	tstore__free(s);
}

TEST(gc_pauses)
{
	struct tsplit_res r;

	tsplit_compute(NULL, 0, 100, 100, 0, &r);
	tsplit_add_pause(&r, 100, 50, 60);  /* 10 inside */
	tsplit_add_pause(&r, 100, 150, 10); /* 10 */
	tsplit_add_pause(&r, 100, 300, 10); /* after */
	EXPECT_EQ(r.has_gc, 1);
	EXPECT_EQ(r.gc_count, 2);
	EXPECT_EQ(r.gc_ns, 20);
}

TEST(format)
{
	struct tsplit_ev ev[] = {
		off(0, 21 * MS, TSPLIT_SLEEP, __NR_futex), sc(0, 21 * MS, __NR_futex),
		off(22 * MS, 34 * MS, TSPLIT_DISK, __NR_fsync), sc(22 * MS, 34 * MS, __NR_fsync)};
	struct tsplit_res r;
	char line[512];
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	tsplit_compute(ev, 4, 0, 38 * MS, 0, &r);
	snprintf(r.off[0].kfunc, sizeof(r.off[0].kfunc), "futex_do_wait");
	tsplit_format(&r, 0, line, sizeof(line));
	EXPECT_STREQ(line, "cpu 5.00 ms, off-cpu 33.00 ms: futex 21.00 (lock/park/wait; "
			   "futex_do_wait), fsync 12.00 (file I/O)");
	tsplit_format(&r, 1, line, sizeof(line));
	EXPECT_STREQ(line, "syscalls 2, 33.00 ms: futex 1 21.00 ms, fsync 1 12.00 ms");
	tsplit_format(&r, 0, line, 10); /* cut, terminated */
	EXPECT_EQ(strlen(line), 9);
	f = open_memstream(&buf, &len);
	ASSERT_TRUE(f);
	tsplit_write_json(&r, f);
	fclose(f);
	EXPECT_TRUE(strstr(buf, "\"cpu_ns\":5000000,\"offcpu_ns\":33000000") != NULL);
	EXPECT_TRUE(strstr(buf, "{\"name\":\"fsync\",\"count\":1,\"ns\":12000000}") != NULL);
	free(buf);
}

/* the store: a thread's window, wrap-around, pruning and the budget */
TEST(store_window_and_wrap)
{
	struct tstore *s = tstore__new(1 << 20, 1000 * MS);
	struct tsplit_res r;
	struct tstore_stats st;

	ASSERT_TRUE(s);
	/* 1000 intervals of 1 ms every 2 ms on thread (7, 70), in the order they end */
	for (__u64 i = 0; i < 1000; i++) {
		struct tsplit_ev e = off(i * 2 * MS, i * 2 * MS + MS, TSPLIT_SLEEP, __NR_futex);

		tstore__add(s, 7, 70, 7070, &e);
	}
	tstore__split(s, 7, 70, 100 * MS, 100 * MS, &r); /* 50 of them */
	EXPECT_EQ(r.off_ns, 50 * MS);
	EXPECT_EQ(r.incomplete, 0);
	tstore__split(s, 7, 71, 100 * MS, 100 * MS, &r); /* another thread: none */
	EXPECT_EQ(r.off_ns, 0);
	tstore__split(s, 8, 70, 100 * MS, 100 * MS, &r); /* the same tid in another JVM */
	EXPECT_EQ(r.off_ns, 0);
	/* out of the window: pruned, and a call that began then is incomplete */
	tstore__prune(s, 1500 * MS);
	tstore__split(s, 7, 70, 100 * MS, 100 * MS, &r);
	EXPECT_EQ(r.incomplete, 1);
	tstore__split(s, 7, 70, 1600 * MS, 100 * MS, &r);
	EXPECT_EQ(r.incomplete, 0);
	EXPECT_EQ(r.off_ns, 50 * MS);
	/* more after the pruning: the array wraps around */
	for (__u64 i = 1000; i < 1300; i++) {
		struct tsplit_ev e = off(i * 2 * MS, i * 2 * MS + MS, TSPLIT_SLEEP, __NR_futex);

		tstore__add(s, 7, 70, 7070, &e);
	}
	tstore__split(s, 7, 70, 1900 * MS, 400 * MS, &r);
	EXPECT_EQ(r.off_ns, 200 * MS);
	tstore__stats(s, &st);
	EXPECT_EQ(st.events, 1300);
	EXPECT_EQ(st.threads, 1);
	EXPECT_EQ(st.dropped_budget, 0);
	/* the kernel's drops: every call begun before them */
	tstore__mark_lost(s, 2000 * MS);
	tstore__split(s, 7, 70, 1900 * MS, 400 * MS, &r);
	EXPECT_EQ(r.incomplete, 1);
	tstore__free(s);
}

TEST(store_budget)
{
	struct tstore *s = tstore__new(8192, 1000 * MS); /* a few hundred events */
	struct tstore_stats st;
	struct tsplit_res r;

	ASSERT_TRUE(s);
	for (__u64 i = 0; i < 10000; i++) {
		struct tsplit_ev e = sc(i * 10, i * 10 + 5, __NR_write);

		tstore__add(s, 1, 1, 11, &e);
	}
	tstore__stats(s, &st);
	EXPECT_TRUE(st.bytes <= 8192);
	EXPECT_TRUE(st.dropped_budget > 9000);
	/* the newest are kept, the call over the dropped ones says so */
	tstore__split(s, 1, 1, 99900, 100, &r);
	EXPECT_EQ(r.sc_count, 10);
	EXPECT_EQ(r.incomplete, 0);
	tstore__split(s, 1, 1, 100, 100, &r);
	EXPECT_EQ(r.incomplete, 1);
	/* a new thread over the budget: its events lost, everyone's calls up to them marked */
	for (__u32 t = 2; t < 200; t++) {
		struct tsplit_ev e = sc(200000, 200005, __NR_write);

		tstore__add(s, 1, t, 100 + t, &e);
	}
	tstore__split(s, 1, 1, 199000, 2000, &r);
	EXPECT_EQ(r.incomplete, 1);
	tstore__free(s);
	tstore__free(NULL);
}

/*
 * Whatever the events (any order, overlapping, past the call, huge): the split's parts add
 * up to the duration, nothing exceeds it, and the store stays in its budget. Nothing here
 * is parsed from outside (the records are our BPF program's), so a seeded loop, not a fuzzer.
 */
TEST(random_events_invariants)
{
	__u64 x = 0x9e3779b97f4a7c15ull;
	struct tstore *s = tstore__new(16384, 5000);
	struct tstore_stats st;

	ASSERT_TRUE(s);
	for (int round = 0; round < 20000; round++) {
		struct tsplit_ev e;
		struct tsplit_res r;
		__u64 a, b, start, dur;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		a = x % 10000;
		b = a + (x >> 20) % 3000;
		e = (x >> 40) & 1   ? off(a, b, 1 + (x >> 41) % 3, (int)((x >> 44) % 400) - 1)
		    : (x >> 39) & 1 ? sc(a, b, (int)((x >> 44) % 400))
				    : scb(a, b, (int)((x >> 44) % 400) - 2, (x >> 45) % 1000,
					  (x >> 46) % 100000);
		if ((x >> 50) % 97 == 0)
			e.end_ns = ~0ull; /* an absurd end */
		tstore__add(s, 1 + (x >> 52) % 3, 1 + (x >> 54) % 50, 5, &e);
		if (round % 1000 == 999)
			tstore__prune(s, a + 4000);
		start = (x >> 8) % 10000;
		dur = (x >> 24) % 5000;
		tstore__split(s, 1 + (x >> 30) % 3, 1 + (x >> 32) % 50, start, dur, &r);
		if (r.cpu_ns + r.off_ns != dur || r.off_ns > dur || r.n_off > TSPLIT_TOP ||
		    r.n_sc > TSPLIT_TOP) {
			FAIL_AT("round %d: dur %llu cpu %llu off %llu", round,
				(unsigned long long)dur, (unsigned long long)r.cpu_ns,
				(unsigned long long)r.off_ns);
			break;
		}
	}
	tstore__stats(s, &st);
	EXPECT_TRUE(st.bytes <= 16384);
	EXPECT_TRUE(st.bytes_peak <= 16384);
	tstore__free(s);
}

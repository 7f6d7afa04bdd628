// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_hsperf.c: the PerfData parser on built files (both byte orders, malformed) and pause derivation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jvm/hsperf.h"

/* a PerfData v2 file under construction */
struct pd {
	unsigned char b[8192];
	size_t len;
	unsigned int n;
	int big;
};

static void put32(unsigned char *p, unsigned int v, int big)
{
	for (int i = 0; i < 4; i++)
		p[big ? i : 3 - i] = (unsigned char)(v >> (24 - 8 * i));
}

static void put64(unsigned char *p, unsigned long long v, int big)
{
	put32(p + (big ? 0 : 4), (unsigned int)(v >> 32), big);
	put32(p + (big ? 4 : 0), (unsigned int)v, big);
}

static void pd_init(struct pd *d, int big)
{
	memset(d, 0, sizeof(*d));
	d->big = big;
	d->b[0] = 0xca, d->b[1] = 0xfe, d->b[2] = 0xc0, d->b[3] = 0xc0;
	d->b[4] = big ? 0 : 1;
	d->b[5] = 2;
	d->b[7] = 1;
	put32(d->b + 24, 32, big);
	d->len = 32;
}

/* an entry: name, then the data 8-aligned as HotSpot lays it out */
static unsigned char *pd_add(struct pd *d, const char *name, char type, const void *data,
			     unsigned int dlen, unsigned int vlen)
{
	unsigned char *e = d->b + d->len;
	unsigned int noff = 20, doff = (unsigned int)(noff + strlen(name) + 1 + 7) & ~7u;
	unsigned int elen = (doff + dlen + 7) & ~7u;

	put32(e, elen, d->big);
	put32(e + 4, noff, d->big);
	put32(e + 8, vlen, d->big);
	e[12] = (unsigned char)type;
	e[14] = 1;
	e[15] = 3;
	put32(e + 16, doff, d->big);
	memcpy(e + noff, name, strlen(name) + 1);
	memcpy(e + doff, data, dlen);
	d->len += elen;
	put32(d->b + 28, ++d->n, d->big);
	return e;
}

static void pd_long(struct pd *d, const char *name, unsigned long long v)
{
	unsigned char raw[8];

	put64(raw, v, d->big);
	pd_add(d, name, 'J', raw, 8, 0);
}

static void pd_str(struct pd *d, const char *name, const char *v)
{
	pd_add(d, name, 'B', v, (unsigned int)strlen(v) + 1, (unsigned int)strlen(v) + 1);
}

/* a JVM's counters: collector 0 ran `inv` pauses, the last from entry to exit */
static void pd_jvm(struct pd *d, int big, unsigned long long inv, unsigned long long time,
		   unsigned long long entry, unsigned long long exit_, unsigned long long sp,
		   unsigned long long sp_time)
{
	pd_init(d, big);
	pd_long(d, "sun.os.hrt.frequency", 1000000000ull);
	pd_str(d, "sun.gc.collector.0.name", "G1 young collection pauses");
	pd_long(d, "sun.gc.collector.0.invocations", inv);
	pd_long(d, "sun.gc.collector.0.time", time);
	pd_long(d, "sun.gc.collector.0.lastEntryTime", entry);
	pd_long(d, "sun.gc.collector.0.lastExitTime", exit_);
	pd_str(d, "sun.gc.cause", "No GC");
	pd_str(d, "sun.gc.lastCause", "System.gc()");
	pd_long(d, "sun.rt.safepoints", sp);
	pd_long(d, "sun.rt.safepointTime", sp_time);
	pd_long(d, "sun.rt.safepointSyncTime", 7);
}

TEST(parse_both_byte_orders)
{
	for (int big = 0; big < 2; big++) {
		struct hsperf_snap s;
		struct pd d;

		pd_jvm(&d, big, 5, 12345, 1000, 3000, 9, 4444);
		EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
		EXPECT_EQ(s.freq_hz, 1000000000ull);
		EXPECT_EQ(s.ncollectors, 1u);
		EXPECT_STREQ(s.coll[0].name, "G1 young collection pauses");
		EXPECT_EQ(s.coll[0].invocations, 5ull);
		EXPECT_EQ(s.coll[0].time_ticks, 12345ull);
		EXPECT_EQ(s.coll[0].last_entry, 1000ull);
		EXPECT_EQ(s.coll[0].last_exit, 3000ull);
		EXPECT_EQ(s.safepoints, 9ull);
		EXPECT_EQ(s.safepoint_ticks, 4444ull);
		EXPECT_EQ(s.safepoint_sync_ticks, 7ull);
		EXPECT_STREQ(s.last_cause, "System.gc()");
		EXPECT_STREQ(s.cause, "No GC");
		EXPECT_EQ(s.entries, 11u);
		EXPECT_EQ(s.bad_entries, 0u);
	}
}

/* a layout reads the values in place while the prologue stays; an added entry ends it */
TEST(layout_reads_values_in_place)
{
	for (int big = 0; big < 2; big++) {
		struct hsperf_snap s, again;
		struct hsperf_layout lay;
		struct pd d;

		pd_jvm(&d, big, 5, 12345, 1000, 3000, 9, 4444);
		EXPECT_EQ(hsperf_parse_layout(d.b, d.len, &s, &lay), 0);
		EXPECT_EQ(lay.n, 11u);
		EXPECT_EQ(hsperf_layout_end(&lay), d.len); /* up to the last entry's value */
		/* the same file with new counters, as the JVM writes them */
		pd_jvm(&d, big, 6, 22222, 5000, 5100, 12, 5555);
		EXPECT_EQ(hsperf_read_layout(d.b, d.len, &lay, &again), 0);
		EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
		EXPECT_TRUE(!memcmp(&s, &again, sizeof(s)));
		EXPECT_EQ(again.coll[0].invocations, 6ull);
		EXPECT_EQ(again.safepoint_ticks, 5555ull);
		EXPECT_STREQ(again.coll[0].name, "G1 young collection pauses");
		/* an entry added: the prologue changed, the file is parsed again */
		pd_long(&d, "sun.gc.collector.1.invocations", 3);
		EXPECT_EQ(hsperf_read_layout(d.b, d.len, &lay, &again), -ESTALE);
		/* a file cut short under the layout: refused, not read past its end */
		pd_jvm(&d, big, 5, 12345, 1000, 3000, 9, 4444);
		EXPECT_EQ(hsperf_parse_layout(d.b, d.len, &s, &lay), 0);
		EXPECT_EQ(hsperf_read_layout(d.b, d.len - 16, &lay, &again), -ESTALE);
		/* a malformed entry: no layout, every read parses */
		put32(d.b + d.len - 8 * 4, 0, big);
		memset(d.b + 32, 0xff, 4);
		EXPECT_EQ(hsperf_parse_layout(d.b, d.len, &s, &lay), 0);
		EXPECT_TRUE(s.bad_entries > 0);
		EXPECT_EQ(lay.n, 0u);
		EXPECT_EQ(hsperf_read_layout(d.b, d.len, &lay, &again), -ESTALE);
	}
}

TEST(parse_refuses_what_is_not_perfdata)
{
	struct hsperf_snap s;
	struct pd d;

	pd_jvm(&d, 0, 1, 1, 1, 1, 1, 1);
	EXPECT_EQ(hsperf_parse(d.b, 31, &s), -ENODATA);
	EXPECT_EQ(hsperf_parse(NULL, 0, &s), -ENODATA);
	d.b[0] = 0xc0; /* the magic is big-endian in every file */
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), -EINVAL);
	d.b[0] = 0xca;
	d.b[5] = 1; /* version 1 */
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), -EINVAL);
	d.b[5] = 2;
	d.b[4] = 7; /* no such byte order */
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), -EINVAL);
}

TEST(parse_malformed_entries)
{
	struct hsperf_snap s;
	struct pd d;
	unsigned char *e;

	/* a name without its NUL inside the entry: skipped, the walk goes on */
	pd_init(&d, 0);
	e = pd_add(&d, "sun.rt.safepoints", 'J', "\1\0\0\0\0\0\0\0", 8, 0);
	put32(e + 4, 40, 0); /* name offset past the name, into the data */
	put32(e + 16, 20, 0);
	memset(e + 20, 'x', (size_t)(d.b + d.len - e) - 20);
	pd_long(&d, "sun.rt.safepointTime", 77);
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
	EXPECT_EQ(s.bad_entries, 1u);
	EXPECT_EQ(s.safepoint_ticks, 77ull);

	/* data past the entry's end; an entry longer than the file ends the walk */
	pd_init(&d, 1);
	e = pd_add(&d, "sun.rt.safepoints", 'J', "\0\0\0\0\0\0\0\1", 8, 0);
	put32(e + 16, 1000, 1);
	pd_long(&d, "sun.rt.safepointTime", 5);
	e = pd_add(&d, "sun.rt.safepointSyncTime", 'J', "\0\0\0\0\0\0\0\1", 8, 0);
	put32(e, 1u << 30, 1);
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
	EXPECT_EQ(s.bad_entries, 2u);
	EXPECT_EQ(s.safepoints, 0ull);
	EXPECT_EQ(s.safepoint_ticks, 5ull);
	EXPECT_EQ(s.safepoint_sync_ticks, 0ull);

	/* more entries announced than there are; an entry offset into the prologue */
	pd_jvm(&d, 0, 1, 2, 3, 4, 5, 6);
	put32(d.b + 28, 1000000, 0);
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
	EXPECT_EQ(s.entries, 11u);
	EXPECT_EQ(s.bad_entries, 1u);
	put32(d.b + 24, 8, 0);
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
	EXPECT_EQ(s.entries, 0u);

	/* an entry length of 0 cannot loop; a string with control bytes is made printable */
	pd_init(&d, 0);
	pd_str(&d, "sun.gc.lastCause", "a\nb\"c");
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
	EXPECT_STREQ(s.last_cause, "a?b\"c");
	put32(d.b + 32, 0, 0);
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
	EXPECT_EQ(s.bad_entries, 1u);

	/* a collector index past the table and a negative counter */
	pd_init(&d, 0);
	pd_long(&d, "sun.gc.collector.7.invocations", 3);
	pd_long(&d, "sun.gc.collector.1.invocations", (unsigned long long)-5);
	EXPECT_EQ(hsperf_parse(d.b, d.len, &s), 0);
	EXPECT_EQ(s.ncollectors, 2u);
	EXPECT_EQ(s.coll[1].invocations, 0ull);
}

/* writes the file fd refers to */
static void rewrite(int fd, const struct pd *d)
{
	EXPECT_EQ(pwrite(fd, d->b, d->len, 0), (ssize_t)d->len);
}

TEST(pauses_from_counter_changes)
{
	char path[] = "/tmp/test_hsperf.XXXXXX", *txt = NULL;
	struct hsperf_kind_stats st[HSPERF_COLLECTORS + 1];
	const struct hsperf_gc_event *ev;
	struct hsperf_counters c;
	struct hsperf *h;
	struct pd d;
	size_t n = 0, len = 0;
	FILE *m;
	int fd = mkstemp(path);

	EXPECT_TRUE(fd >= 0);
	unlink(path);
	/* started during the recording: from zero, so the first read's 2 pauses count */
	pd_jvm(&d, 0, 2, 3000000, 10000000, 12000000, 3, 5000000);
	rewrite(fd, &d);
	h = hsperf__open_fd(fd, true);
	EXPECT_TRUE(h != NULL);
	EXPECT_EQ(hsperf__poll(h, 1000000000ull), 0);
	/* one pause (4 ms) and one safepoint (1 ms) since */
	pd_jvm(&d, 0, 3, 7000000, 20000000, 24000000, 4, 6000000);
	rewrite(fd, &d);
	EXPECT_EQ(hsperf__poll(h, 1100000000ull), 0);
	/* a pause in progress is not counted yet */
	pd_jvm(&d, 0, 4, 7000000, 30000000, 24000000, 4, 6000000);
	rewrite(fd, &d);
	EXPECT_EQ(hsperf__poll(h, 1200000000ull), 0);
	/* it ended (8 ms) and two more ran between the reads (last one 2 ms) */
	pd_jvm(&d, 0, 6, 19000000, 40000000, 42000000, 4, 6000000);
	rewrite(fd, &d);
	EXPECT_EQ(hsperf__poll(h, 1300000000ull), 0);

	EXPECT_EQ(hsperf__stats(h, st, HSPERF_COLLECTORS + 1), 2u);
	EXPECT_STREQ(st[0].name, "G1 young collection pauses");
	EXPECT_EQ(st[0].count, 6ull);
	EXPECT_EQ(st[0].total_ns, 19000000ull);
	EXPECT_EQ(st[0].observed, 3ull); /* 2 ms, 4 ms, 2 ms */
	EXPECT_EQ(st[0].p50_ns, 2000000ull);
	EXPECT_EQ(st[0].max_ns, 4000000ull);
	EXPECT_STREQ(st[1].name, "safepoints");
	EXPECT_EQ(st[1].count, 4ull);
	EXPECT_EQ(st[1].total_ns, 6000000ull);
	EXPECT_EQ(st[1].observed, 1ull);
	EXPECT_EQ(st[1].max_ns, 1000000ull);
	hsperf__counters(h, &c);
	EXPECT_EQ(c.reads, 4ull);
	EXPECT_EQ(c.gc_missed, 3ull); /* 1 of the first read's 2, then 2 of the last 3 */
	EXPECT_EQ(c.sp_merged, 3ull);
	ev = hsperf__gc_events(h, &n);
	EXPECT_EQ(n, 3u);
	EXPECT_EQ(ev[1].start_rel_ns, 20000000ull);
	EXPECT_EQ(ev[1].duration_ns, 4000000ull);
	EXPECT_STREQ(ev[1].cause, "System.gc()");
	EXPECT_STREQ(ev[1].collector, "G1 young collection pauses");

	m = open_memstream(&txt, &len);
	hsperf__report(h, 42, "Main", m);
	hsperf__report_json(h, 42, "M\"x", m);
	fclose(m);
	EXPECT_TRUE(strstr(txt, "JVM 42 (Main) pauses") != NULL);
	EXPECT_TRUE(strstr(txt, "G1 young collection pauses              6       19.000") != NULL);
	EXPECT_TRUE(strstr(txt, "\"main\":\"M\\\"x\"") != NULL);
	EXPECT_TRUE(strstr(txt, "\"count\":6,\"total_ns\":19000000,\"observed\":3") != NULL);
	free(txt);
	hsperf__free(h);
	hsperf__free(NULL);
}

TEST(pauses_before_the_first_read_do_not_count_for_an_old_jvm)
{
	char path[] = "/tmp/test_hsperf.XXXXXX";
	struct hsperf_kind_stats st[HSPERF_COLLECTORS + 1];
	struct hsperf *h;
	struct pd d;
	int fd = mkstemp(path);

	EXPECT_TRUE(fd >= 0);
	unlink(path);
	pd_jvm(&d, 1, 50, 90000000, 10, 20, 70, 5000000);
	rewrite(fd, &d);
	h = hsperf__open_fd(fd, false);
	EXPECT_EQ(hsperf__poll(h, 1), 0);
	pd_jvm(&d, 1, 51, 91000000, 30, 1000030, 71, 5000000);
	rewrite(fd, &d);
	EXPECT_EQ(hsperf__poll(h, 2), 0);
	/* counters going backwards (not a JVM's): ignored */
	pd_jvm(&d, 1, 3, 5, 40, 50, 2, 1);
	rewrite(fd, &d);
	EXPECT_EQ(hsperf__poll(h, 3), 0);
	/* garbage: counted, no change */
	EXPECT_EQ(pwrite(fd, "garbage garbage garbage garbage garbage", 39, 0), 39);
	EXPECT_EQ(hsperf__poll(h, 4), -EINVAL);
	EXPECT_EQ(hsperf__stats(h, st, HSPERF_COLLECTORS + 1), 2u);
	EXPECT_EQ(st[0].count, 1ull);
	EXPECT_EQ(st[0].total_ns, 1000000ull);
	EXPECT_EQ(st[1].count, 1ull);
	hsperf__free(h);
}

TEST(cause_goes_to_the_collector_that_ended_last)
{
	char path[] = "/tmp/test_hsperf.XXXXXX";
	const struct hsperf_gc_event *ev;
	struct hsperf *h;
	struct pd d;
	size_t n = 0;
	int fd = mkstemp(path);

	EXPECT_TRUE(fd >= 0);
	unlink(path);
	h = hsperf__open_fd(fd, true);
	/* a young pause (10..20) then a full one (30..50) between two reads */
	pd_jvm(&d, 0, 1, 10, 10, 20, 0, 0);
	pd_str(&d, "sun.gc.collector.1.name", "full");
	pd_long(&d, "sun.gc.collector.1.invocations", 1);
	pd_long(&d, "sun.gc.collector.1.time", 20);
	pd_long(&d, "sun.gc.collector.1.lastEntryTime", 30);
	pd_long(&d, "sun.gc.collector.1.lastExitTime", 50);
	rewrite(fd, &d);
	EXPECT_EQ(hsperf__poll(h, 1), 0);
	/* another young one, read while a GC with another cause runs */
	pd_jvm(&d, 0, 2, 20, 60, 70, 0, 0);
	pd_str(&d, "sun.gc.cause", "Allocation Failure");
	rewrite(fd, &d);
	EXPECT_EQ(hsperf__poll(h, 2), 0);
	ev = hsperf__gc_events(h, &n);
	EXPECT_EQ(n, 3u);
	EXPECT_STREQ(ev[0].collector, "G1 young collection pauses");
	EXPECT_STREQ(ev[0].cause, "unknown");
	EXPECT_STREQ(ev[1].collector, "full");
	EXPECT_STREQ(ev[1].cause, "System.gc()");
	EXPECT_STREQ(ev[2].cause, "unknown");
	hsperf__free(h);
}

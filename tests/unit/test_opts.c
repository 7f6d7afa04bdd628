// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_opts.c: command-line parsing: defaults, strict numbers, conflicts, formats. */
#include <errno.h>

#include "harness.h"
#include "opts.h"
#include "out/out.h"

static struct jp_opts o;
static char err[256];

#define PARSE(...)                                                                                 \
	({                                                                                         \
		char *argv[] = { "jprof", __VA_ARGS__, NULL };                                     \
		opts_parse((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv, &o, err, sizeof(err)); \
	})

TEST(defaults)
{
	EXPECT_EQ(PARSE("record"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_RECORD);
	EXPECT_TRUE(o.all);
	EXPECT_EQ(o.freq_hz, 99);
	EXPECT_EQ(o.duration_s, 0);
	EXPECT_EQ(o.format, OUT_FOLDED);
	EXPECT_EQ(o.events, 1u << JP_EV_CPU);
	EXPECT_TRUE(o.output == NULL);
	EXPECT_TRUE(!o.no_boost);
	EXPECT_EQ(PARSE("record", "--no-boost"), 0);
	EXPECT_TRUE(o.no_boost);
	EXPECT_TRUE(!o.aggregate); /* off by default */
	EXPECT_EQ(PARSE("record", "--aggregate"), 0);
	EXPECT_TRUE(o.aggregate);
	EXPECT_EQ(PARSE("record", "--aggregate", "--no-aggregate"), 0);
	EXPECT_TRUE(!o.aggregate);
}

TEST(pids_and_flags)
{
	EXPECT_EQ(PARSE("record", "-p", "12,34", "-F", "999", "-d", "5", "-o", "x.html", "--per-thread"),
		  0);
	EXPECT_EQ(o.npids, 2);
	EXPECT_EQ(o.pids[0], 12);
	EXPECT_EQ(o.pids[1], 34);
	EXPECT_TRUE(!o.all);
	EXPECT_EQ(o.freq_hz, 999);
	EXPECT_EQ(o.duration_s, 5);
	EXPECT_EQ(o.format, OUT_HTML);
	EXPECT_TRUE(o.per_thread && o.per_pid);
}

TEST(format_overrides_extension)
{
	EXPECT_EQ(PARSE("record", "-o", "x.html", "-f", "folded"), 0);
	EXPECT_EQ(o.format, OUT_FOLDED);
	EXPECT_EQ(PARSE("record", "-o", "x.unknown"), JP_EXIT_USAGE);
}

TEST(strict_numbers)
{
	unsigned int v;

	EXPECT_EQ(opts_parse_u32("12", 1, 100, &v), 0);
	EXPECT_EQ(v, 12);
	EXPECT_EQ(opts_parse_u32("12abc", 1, 100, &v), -EINVAL);
	EXPECT_EQ(opts_parse_u32("", 1, 100, &v), -EINVAL);
	EXPECT_EQ(opts_parse_u32("-1", 0, 100, &v), -EINVAL);
	EXPECT_EQ(opts_parse_u32(" 5", 0, 100, &v), -EINVAL);
	EXPECT_EQ(opts_parse_u32("101", 1, 100, &v), -ERANGE);
	EXPECT_EQ(opts_parse_u32("99999999999999999999", 0, 100, &v), -ERANGE);
	EXPECT_EQ(PARSE("record", "-F", "0"), JP_EXIT_USAGE);
	EXPECT_TRUE(strstr(err, "-F") != NULL);
	EXPECT_EQ(PARSE("record", "-F", "10001"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "-d", "3s"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "-p", "1,,x"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "-p", "0"), JP_EXIT_USAGE);
}

TEST(conflicts_and_unknowns)
{
	EXPECT_EQ(PARSE("record", "-a", "-p", "1"), JP_EXIT_USAGE);
	EXPECT_TRUE(strstr(err, "-a and -p") != NULL);
	EXPECT_EQ(PARSE("record", "--bogus"), JP_EXIT_USAGE);
	EXPECT_TRUE(strstr(err, "--bogus") != NULL);
	EXPECT_EQ(PARSE("record", "-F"), JP_EXIT_USAGE);
	EXPECT_TRUE(strstr(err, "needs a value") != NULL);
	EXPECT_EQ(PARSE("record", "-e", "nope"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "-f", "pdf"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "stray"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dance"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("list", "-p", "3"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report"), JP_EXIT_USAGE);
}

TEST(report_and_help)
{
	EXPECT_EQ(PARSE("report", "in.folded", "-o", "out.html"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_REPORT);
	EXPECT_STREQ(o.input, "in.folded");
	EXPECT_EQ(o.format, OUT_HTML);
	EXPECT_EQ(PARSE("--help"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_HELP);
	EXPECT_EQ(PARSE("record", "-h"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_HELP);
	EXPECT_EQ(PARSE("--version"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_VERSION);
}

TEST(output_extension)
{
	EXPECT_EQ(PARSE("record", "-o", "/dev/null"), 0); /* no extension: folded */
	EXPECT_EQ(o.format, OUT_FOLDED);
	EXPECT_EQ(PARSE("record", "-o", "x.pb.gz"), 0);
	EXPECT_EQ(o.format, OUT_PPROF);
	EXPECT_EQ(PARSE("record", "-o", "x.bin"), JP_EXIT_USAGE);
	EXPECT_TRUE(strstr(err, "unknown file extension") != NULL);
	EXPECT_EQ(PARSE("record", "-o", "x.bogus", "-f", "html"), 0); /* -f decides */
	EXPECT_EQ(o.format, OUT_HTML);
}

TEST(containers)
{
	EXPECT_EQ(PARSE("record", "--cgroup", "/system.slice/x.scope", "--per-container"), 0);
	EXPECT_STREQ(o.cgroup, "/system.slice/x.scope");
	EXPECT_TRUE(o.per_container);
	EXPECT_TRUE(o.all);
	EXPECT_EQ(PARSE("record", "--container", "3f2a", "-p", "7"), 0);
	EXPECT_STREQ(o.container, "3f2a");
	EXPECT_EQ(o.npids, 1);
	EXPECT_EQ(PARSE("record", "--container", ""), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--cgroup", ""), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "in.pb.gz", "--cgroup", "/x"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "in.pb.gz", "--container", "ab", "--per-container"), 0);
	EXPECT_TRUE(o.per_container);
	EXPECT_EQ(PARSE("list", "--containers"), 0);
	EXPECT_TRUE(o.list_containers);
	EXPECT_EQ(PARSE("record", "--containers"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("list", "--container", "ab"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("list", "--per-container"), JP_EXIT_USAGE);
}

TEST(wall_and_cpu_time)
{
	EXPECT_EQ(PARSE("record", "-e", "wall"), 0);
	EXPECT_EQ(o.events, 1u << JP_EV_CPU | 1u << JP_EV_OFFCPU);
	EXPECT_TRUE(o.wall && o.per_thread && o.per_pid);
	EXPECT_EQ(o.min_block_us, 0); /* every block, unless asked otherwise */
	EXPECT_EQ(PARSE("record", "-e", "wall", "--min-block", "50"), 0);
	EXPECT_EQ(o.min_block_us, 50);
	EXPECT_EQ(PARSE("record", "-e", "offcpu"), 0);
	EXPECT_TRUE(!o.wall && !o.per_thread);
	EXPECT_EQ(o.min_block_us, 100);
	EXPECT_TRUE(o.cpu_time); /* the default: CPU samples weigh their CPU time */
	EXPECT_EQ(PARSE("record", "--samples"), 0);
	EXPECT_TRUE(!o.cpu_time);
	EXPECT_EQ(PARSE("report", "--samples", "x.pb.gz"), 0);
	EXPECT_TRUE(!o.cpu_time);
	EXPECT_EQ(PARSE("record", "--cpu-time"), 0);
	EXPECT_TRUE(o.cpu_time);
	EXPECT_EQ(PARSE("record", "--samples", "--cpu-time"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--cpu-time", "--samples"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--samples", "--samples"), 0);
	EXPECT_EQ(PARSE("record", "-e", "walls"), JP_EXIT_USAGE);
}

/* one unit per graph: events of different units only into formats that keep each */
TEST(units_per_graph)
{
	EXPECT_EQ(PARSE("record", "-e", "lock,alloc", "-o", "x.html"), JP_EXIT_USAGE);
	EXPECT_TRUE(strstr(err, "lock (nanoseconds waited) and alloc (bytes allocated)") != NULL);
	EXPECT_EQ(PARSE("record", "-e", "lock,alloc"), JP_EXIT_USAGE); /* folded on stdout */
	EXPECT_EQ(PARSE("record", "-e", "cpu,alloc", "-o", "x.folded"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "-e", "alloc,live", "-o", "x.speedscope.json"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "-e", "lock,alloc", "-o", "x.pb.gz", "-o", "x.html"),
		  JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "-e", "lock,alloc", "-o", "x.pb.gz", "-o", "x.jfr"), 0);
	EXPECT_EQ(PARSE("record", "-e", "cpu,lock", "-o", "x.html"), 0);
	EXPECT_EQ(PARSE("record", "-e", "offcpu,lock", "-o", "x.folded"), 0);
	EXPECT_EQ(PARSE("record", "-e", "alloc", "-o", "x.html"), 0);
	EXPECT_EQ(PARSE("record", "-e", "live"), 0);
}

/* jprof daemon and report --store: defaults, what goes with which, strict values */
TEST(daemon_and_store)
{
	EXPECT_EQ(PARSE("daemon"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_DAEMON);
	EXPECT_TRUE(o.all);
	EXPECT_STREQ(o.store, JP_STORE_DIR);
	EXPECT_EQ(o.interval_s, 60);
	EXPECT_EQ(o.max_age_s, 24 * 3600);
	EXPECT_EQ(o.max_size, 1ull << 30);
	EXPECT_EQ(o.events, 1u << JP_EV_CPU);
	EXPECT_EQ(PARSE("daemon", "--store", "/s", "--interval", "2", "--max-age", "10m",
			"--max-size", "64K", "-p", "5", "-e", "cpu,offcpu"),
		  0);
	EXPECT_STREQ(o.store, "/s");
	EXPECT_EQ(o.interval_s, 2);
	EXPECT_EQ(o.max_age_s, 600);
	EXPECT_EQ(o.max_size, 65536);
	EXPECT_EQ(o.npids, 1);
	EXPECT_EQ(PARSE("daemon", "--max-age", "0", "--max-size", "0"), 0);
	EXPECT_EQ(o.max_age_s, 0);
	EXPECT_EQ(o.max_size, 0);
	EXPECT_EQ(PARSE("daemon", "-o", "x.html"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "-e", "wall"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "-e", "syscalls"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--interval", "0"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--max-size", "1Q"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--since", "10m"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--interval", "5"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--store", "/s"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "--store", "/s", "--since", "10m", "--until", "now", "-o", "x.html"),
		  0);
	EXPECT_STREQ(o.since, "10m");
	EXPECT_STREQ(o.until, "now");
	EXPECT_EQ(o.format, OUT_HTML);
	EXPECT_EQ(PARSE("report", "--store", "/s", "--since", "2026-11-27T04:00:00Z"), 0);
	EXPECT_EQ(PARSE("report", "--store", "/s", "--since", "yesterday"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "x.pb.gz", "--store", "/s"), JP_EXIT_USAGE);
	/* a recording's own range: +OFFSET from its start, or a time as --store takes it */
	EXPECT_EQ(PARSE("report", "x.pb.gz", "--since", "10m"), 0);
	EXPECT_EQ(PARSE("report", "x.pb.gz", "--since", "+5s", "--until", "+7500ms"), 0);
	EXPECT_STREQ(o.since, "+5s");
	EXPECT_STREQ(o.until, "+7500ms");
	EXPECT_EQ(PARSE("report", "x.pb.gz", "--since", "+5x"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "x.pb.gz", "--since", "+"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "--store", "/s", "--since", "+5s"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "--store", "/s", "--base-since", "+5s", "--base-until", "1h"),
		  JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "--diff", "a.pb.gz", "b.pb.gz", "--since", "+1s"), JP_EXIT_USAGE);
	{
		__u64 ns = 0;

		EXPECT_EQ(opts_parse_offset_ns("+2500ms", &ns), 0);
		EXPECT_EQ(ns, 2500000000ull);
		EXPECT_EQ(opts_parse_offset_ns("+2m", &ns), 0);
		EXPECT_EQ(ns, 120000000000ull);
		EXPECT_TRUE(opts_parse_offset_ns("5s", &ns) < 0);
		EXPECT_TRUE(opts_parse_offset_ns("+99999999999999999999s", &ns) < 0);
	}
	EXPECT_EQ(PARSE("report", "--store", "/s", "--max-age", "1h"), JP_EXIT_USAGE);
	/* report --diff BASE NEW: the positional argument is NEW */
	EXPECT_EQ(PARSE("report", "--diff", "a.pb.gz", "b.pb.gz", "-o", "d.html"), 0);
	EXPECT_STREQ(o.diff_base, "a.pb.gz");
	EXPECT_STREQ(o.input, "b.pb.gz");
	EXPECT_EQ(o.diff_absolute, false);
	EXPECT_EQ(PARSE("report", "--diff", "a.folded", "b.folded", "--diff-absolute", "--top", "5"),
		  0);
	EXPECT_EQ(o.diff_absolute, true);
	EXPECT_EQ(o.format, OUT_FOLDED);
	EXPECT_EQ(PARSE("report", "--diff", "a.pb.gz"), JP_EXIT_USAGE);
	EXPECT_TRUE(strstr(err, "--diff BASE needs the NEW recording") != NULL);
	EXPECT_EQ(PARSE("report", "--diff", "", "b.pb.gz"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "b.pb.gz", "--diff-absolute"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "--diff", "a.pb.gz", "--store", "/s"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--diff", "a.pb.gz"), JP_EXIT_USAGE);
}

/* jprof dump: the daemon's store, --last (a bad range is a usage error), report's options */
TEST(dump)
{
	EXPECT_EQ(PARSE("dump"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_DUMP);
	EXPECT_STREQ(o.store, JP_STORE_DIR);
	EXPECT_EQ(o.last_s, 300);
	EXPECT_EQ(o.format, OUT_FOLDED);
	EXPECT_EQ(PARSE("dump", "--store", "/s", "--last", "2h", "-o", "x.html", "--pid", "7",
			"--include", "Foo", "--top", "5"),
		  0);
	EXPECT_STREQ(o.store, "/s");
	EXPECT_EQ(o.last_s, 7200);
	EXPECT_EQ(o.format, OUT_HTML);
	EXPECT_EQ(o.npids, 1);
	EXPECT_EQ(PARSE("dump", "--last", "0"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--last", "soon"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--last", "367d"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--last", "-5m"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--since", "10m"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "x.pb.gz"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "-d", "5"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--interval", "5"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "--store", "/s", "--last", "5m"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--last", "5m"), JP_EXIT_USAGE);
}

/* jprof serve: the store (default the daemon's), --listen, --token-file; nothing of record's */
TEST(serve)
{
	EXPECT_EQ(PARSE("serve"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_SERVE);
	EXPECT_STREQ(o.store, JP_STORE_DIR);
	EXPECT_TRUE(o.listen == NULL && o.token_file == NULL);
	EXPECT_EQ(PARSE("serve", "--store", "/s", "--listen", "[::1]:8080", "--token-file", "/t"), 0);
	EXPECT_STREQ(o.store, "/s");
	EXPECT_STREQ(o.listen, "[::1]:8080");
	EXPECT_STREQ(o.token_file, "/t");
	EXPECT_EQ(PARSE("serve", "--listen", "host:80"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("serve", "--listen", "99999"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("serve", "-p", "1"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("serve", "-o", "x.html"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("serve", "x.pb.gz"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("serve", "-d", "5"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--listen", "7070"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--token-file", "/t"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("bogus"), JP_EXIT_USAGE);
}

/* dump --mark NAME and jprof marks */
TEST(marks)
{
	EXPECT_EQ(PARSE("dump", "--mark", "deploy-v2", "--last", "10m"), 0);
	EXPECT_STREQ(o.mark, "deploy-v2");
	EXPECT_EQ(o.last_s, 600);
	EXPECT_EQ(PARSE("dump", "--mark", "../x"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--mark", ""), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--mark", "x", "-o", "x.html"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--mark", "x", "--top", "5"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "--mark", "x", "in.pb.gz"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("marks"), 0);
	EXPECT_EQ(o.cmd, JP_CMD_MARKS);
	EXPECT_STREQ(o.store, JP_STORE_DIR);
	EXPECT_EQ(PARSE("marks", "--store", "/s"), 0);
	EXPECT_STREQ(o.store, "/s");
	EXPECT_EQ(PARSE("marks", "-p", "1"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--mark-on-pause", "200"), 0);
	EXPECT_EQ(o.mark_pause_ms, 200);
	EXPECT_EQ(PARSE("daemon", "--mark-on-pause", "0"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--mark-on-pause", "1s"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--mark-on-pause", "200"), JP_EXIT_USAGE);
	/* report --store with a base range: the store's own diff */
	EXPECT_EQ(PARSE("report", "--store", "/s", "--base-since", "1d", "--base-until", "23h",
			"--since", "1h"),
		  0);
	EXPECT_STREQ(o.base_since, "1d");
	EXPECT_STREQ(o.base_until, "23h");
	EXPECT_EQ(PARSE("report", "x.pb.gz", "--base-since", "1d"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("report", "--store", "/s", "--base-since", "soon"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("dump", "--base-since", "1d"), JP_EXIT_USAGE);
	/* the daemon's push */
	EXPECT_EQ(PARSE("daemon", "--push-pyroscope", "http://p:4040", "--push-name",
			"web{env=prod}"),
		  0);
	EXPECT_STREQ(o.push_url, "http://p:4040");
	EXPECT_STREQ(o.push_name, "web{env=prod}");
	EXPECT_EQ(PARSE("daemon", "--push-pyroscope", "p:4040"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--push-name", "x"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--push-pyroscope", "http://p", "--push-name", "a b"),
		  JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--push-pyroscope", "http://p"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--push-otlp", "http://c:4318"), 0);
	EXPECT_STREQ(o.push_otlp, "http://c:4318");
	EXPECT_TRUE(o.push_url == NULL);
	EXPECT_EQ(PARSE("daemon", "--push-otlp", "grpc://c:4317"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--push-otlp", "http://c"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--push-parca", "http://p:7070", "--push-name", "web{a=b}"), 0);
	EXPECT_STREQ(o.push_parca, "http://p:7070");
	EXPECT_EQ(PARSE("daemon", "--push-parca", "p:7070"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--push-otlp", "http://c", "--push-name", "x"), JP_EXIT_USAGE);
	/* the other triggers */
	EXPECT_EQ(PARSE("daemon", "--mark-on-oom", "--mark-on-cpu", "90:30"), 0);
	EXPECT_TRUE(o.mark_oom);
	EXPECT_EQ(o.mark_cpu_pct, 90);
	EXPECT_EQ(o.mark_cpu_s, 30);
	EXPECT_EQ(PARSE("daemon", "--mark-on-cpu", "250:5"), 0); /* several cores */
	EXPECT_EQ(o.mark_cpu_pct, 250);
	EXPECT_EQ(PARSE("daemon", "--mark-on-cpu", "90"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--mark-on-cpu", "90:"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--mark-on-cpu", ":30"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--mark-on-cpu", "0:30"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--mark-on-cpu", "90:0"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("daemon", "--mark-on-cpu", "12345678901234567:1"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--mark-on-oom"), JP_EXIT_USAGE);
	EXPECT_EQ(PARSE("record", "--mark-on-cpu", "90:30"), JP_EXIT_USAGE);
}

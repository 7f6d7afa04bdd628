// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_dconf.c: the daemon's config file: keys, values, comments, errors by line, the file's owner and mode. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "daemon/config.h"
#include "opts.h"

#define PARSE(s) dconf_parse(s, strlen(s), &c, why, sizeof(why))

TEST(parse)
{
	struct daemon_config c;
	char why[256];

	EXPECT_EQ(PARSE("# jprof\n\ninterval = 10\nmax-age=2h  # two hours\n\tmax-size = 512M\r\n"
			"events = cpu,offcpu\nrate = 49"),
		  0);
	EXPECT_TRUE(c.has_interval && c.has_max_age && c.has_max_size && c.has_events && c.has_rate);
	EXPECT_EQ(c.interval_s, 10);
	EXPECT_EQ(c.max_age_s, 7200);
	EXPECT_EQ(c.max_size, 512ull << 20);
	EXPECT_STREQ(c.events, "cpu,offcpu");
	EXPECT_EQ(c.rate_hz, 49);
	EXPECT_EQ(PARSE(""), 0);
	EXPECT_TRUE(!c.has_interval && !c.has_events);
	EXPECT_EQ(PARSE("interval = 0\n"), -EINVAL);
	EXPECT_STREQ(why, "line 1: interval: '0' is not seconds from 1 to 3600");
	EXPECT_EQ(PARSE("\n\nbogus = 1\n"), -EINVAL);
	EXPECT_TRUE(!strncmp(why, "line 3: unknown key 'bogus'", 27));
	EXPECT_EQ(PARSE("interval 10\n"), -EINVAL);
	EXPECT_EQ(PARSE("interval =\n"), -EINVAL);
	EXPECT_EQ(PARSE("= 10\n"), -EINVAL);
	EXPECT_EQ(PARSE("events = wall\n"), -EINVAL);
	EXPECT_EQ(PARSE("events = cpu,\n"), -EINVAL);
	EXPECT_EQ(PARSE("events = cpu,,lock\n"), -EINVAL);
	EXPECT_EQ(PARSE("rate = 10001\n"), -EINVAL);
	EXPECT_EQ(PARSE("max-size = 1Q\n"), -EINVAL);
	EXPECT_EQ(dconf_parse("interval = 1\0\n", 14, &c, why, sizeof(why)), -EINVAL);
}

TEST(read_file)
{
	struct daemon_config c;
	char path[] = "/tmp/jprof-test-dconf-XXXXXX", why[256];
	int fd = mkstemp(path);

	ASSERT_TRUE(fd >= 0);
	EXPECT_EQ(write(fd, "interval = 5\n", 13), 13);
	close(fd);
	EXPECT_EQ(chmod(path, 0644), 0);
	EXPECT_EQ(dconf_read(path, &c, why, sizeof(why)), 0);
	EXPECT_EQ(c.interval_s, 5);
	/* writable by others: it would steer a root daemon */
	EXPECT_EQ(chmod(path, 0666), 0);
	EXPECT_EQ(dconf_read(path, &c, why, sizeof(why)), -EPERM);
	unlink(path);
	EXPECT_EQ(dconf_read(path, &c, why, sizeof(why)), -ENOENT);
}

/* the file's keys as options after the command line's: they win, the rest stays */
TEST(apply)
{
	static struct jp_opts o;
	struct daemon_config c;
	char why[256], err[256];
	char *argv[] = {"jprof", "daemon", "--store", "/s", "--interval", "2", "--max-size", "5M",
			"-F", "99", NULL};

	EXPECT_EQ(PARSE("interval = 30\nrate = 49\nevents = cpu,lock\n"), 0);
	EXPECT_EQ(dconf_apply(&c, 10, argv, &o, err, sizeof(err)), 0);
	EXPECT_EQ(o.cmd, JP_CMD_DAEMON);
	EXPECT_STREQ(o.store, "/s");
	EXPECT_EQ(o.interval_s, 30);
	EXPECT_EQ(o.max_size, 5ull << 20);
	EXPECT_EQ(o.freq_hz, 49);
	EXPECT_EQ(o.events, 1u << JP_EV_CPU);
	EXPECT_EQ(o.agent_events, JP_AGENT_EV_LOCK);
	/* a daemon cannot keep wall: the same check as on the command line */
	EXPECT_EQ(PARSE("max-age = 1h\n"), 0);
	EXPECT_EQ(dconf_apply(&c, 10, argv, &o, err, sizeof(err)), 0);
	EXPECT_EQ(o.max_age_s, 3600);
	EXPECT_EQ(o.interval_s, 2);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * config.h: `jprof daemon --config FILE`: `key = value` lines that mirror the daemon's long
 * options (interval, max-age, max-size, events, rate), read at the start and again on
 * SIGHUP. '#' starts a comment; blank lines are skipped; an unknown key or a bad value is
 * an error naming its line.
 */
#ifndef JPROF_DAEMON_CONFIG_H
#define JPROF_DAEMON_CONFIG_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#define DCONF_MAX_BYTES 65536 /* a config file larger than this is refused */

struct daemon_config {
	bool has_interval, has_max_age, has_max_size, has_events, has_rate;
	unsigned int interval_s; /* 1 .. 3600 */
	__u64 max_age_s, max_size;
	char events[64];      /* as -e takes them: "cpu", "cpu,offcpu" */
	unsigned int rate_hz; /* -F: 1 .. 10000 */
};

/* buf[0..len) into *ret (zeroed first). 0, or -EINVAL with "line N: why" in why. */
int dconf_parse(const char *buf, size_t len, struct daemon_config *ret, char *why, size_t why_len);

/*
 * path read and parsed: a regular file of root's or jprof's own user, writable by nobody
 * else (the daemon runs as root), at most DCONF_MAX_BYTES. 0 or -errno with why.
 */
int dconf_read(const char *path, struct daemon_config *ret, char *why, size_t why_len);

struct jp_opts;

/*
 * The daemon's command line argv[0..argc) parsed again with c's keys after it, as the options
 * they mirror: the file's values win over the command line's, keys it lacks keep them.
 * 0 or JP_EXIT_USAGE with err (opts_parse).
 */
int dconf_apply(const struct daemon_config *c, int argc, char **argv, struct jp_opts *o, char *err,
		size_t errlen);

#endif /* JPROF_DAEMON_CONFIG_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* units.h: durations, sizes and points in time as a person writes them on a command line. */
#ifndef JPROF_UTIL_UNITS_H
#define JPROF_UTIL_UNITS_H

#include <linux/types.h>
#include <stddef.h>

/*
 * "90" or "90s", "10m", "24h", "7d" (a whole number and one suffix) into seconds.
 * 0 or -EINVAL (not a duration), -ERANGE (past 100 years).
 */
int units_parse_duration(const char *arg, __u64 *ret_s);

/*
 * "1048576", "512K", "100M", "1G", "2T" (powers of 1024; "KiB", "MB" and the like too) into
 * bytes. 0 or -EINVAL, -ERANGE (past 2^62).
 */
int units_parse_size(const char *arg, __u64 *ret_bytes);

/*
 * A point in time, in seconds since the epoch: a duration back from now_s ("10m": ten
 * minutes ago), a UTC time ("2026-11-27T04:00:00Z", "2026-11-27T04:00Z", the store's
 * "20261127T040000Z"), or "@SECONDS" since the epoch. "now" is now_s. 0 or -EINVAL/-ERANGE.
 */
int units_parse_time(const char *arg, __u64 now_s, __u64 *ret_s);

/* t (seconds since the epoch) as "20261127T040000Z" into buf (at least 17 bytes); -EINVAL */
int units_format_utc(__u64 t, char *buf, size_t len);

#endif /* JPROF_UTIL_UNITS_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* units.c: durations, sizes and points in time from the command line, strictly parsed. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "units.h"

#define DURATION_MAX_S (100ull * 366 * 24 * 3600)
#define SIZE_MAX_BYTES (1ull << 62)

/* leading decimal digits of arg into *ret; the rest in *ret_end. 0, -EINVAL or -ERANGE */
static int leading_number(const char *arg, __u64 *ret, const char **ret_end)
{
	__u64 v = 0;
	const char *p = arg;

	if (!p || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (~0ull - 9) / 10)
			return -ERANGE;
		v = v * 10 + (__u64)(*p - '0');
	}
	*ret = v;
	*ret_end = p;
	return 0;
}

int units_parse_duration(const char *arg, __u64 *ret_s)
{
	const char *end;
	__u64 v, mul;
	int err = leading_number(arg, &v, &end);

	if (err)
		return err;
	if (!*end || !strcmp(end, "s"))
		mul = 1;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mul = 60;
	else if (!strcmp(end, "h"))
		mul = 3600;
	else if (!strcmp(end, "d"))
		mul = 86400;
	else
		return -EINVAL;
	if (v > DURATION_MAX_S / mul)
		return -ERANGE;
	*ret_s = v * mul;
	return 0;
}

int units_parse_size(const char *arg, __u64 *ret_bytes)
{
	static const char *const suffixes = "KMGT";
	const char *end, *at;
	__u64 v, mul = 1;
	int err = leading_number(arg, &v, &end);

	if (err)
		return err;
	if (*end) {
		at = strchr(suffixes, toupper((unsigned char)*end));
		if (!at)
			return -EINVAL;
		for (const char *s = suffixes; s <= at; s++)
			mul <<= 10;
		end++;
		/* "K", "KB", "KiB": all powers of 1024 here */
		if (*end && strcasecmp(end, "b") && strcasecmp(end, "ib"))
			return -EINVAL;
	}
	if (v > SIZE_MAX_BYTES / mul)
		return -ERANGE;
	*ret_bytes = v * mul;
	return 0;
}

/* the fields of "2026-11-27T04:00:00Z", "2026-11-27T04:00Z" or "20261127T040000Z" */
static bool scan_utc(const char *arg, struct tm *tm, int *sec)
{
	int n = -1;

	*sec = 0;
	if (sscanf(arg, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm->tm_year, &tm->tm_mon, &tm->tm_mday,
		   &tm->tm_hour, &tm->tm_min, sec, &n) == 6 &&
	    n > 0 && !arg[n])
		return true;
	n = -1;
	*sec = 0;
	if (sscanf(arg, "%4d-%2d-%2dT%2d:%2dZ%n", &tm->tm_year, &tm->tm_mon, &tm->tm_mday,
		   &tm->tm_hour, &tm->tm_min, &n) == 5 &&
	    n > 0 && !arg[n])
		return true;
	n = -1;
	return strlen(arg) == 16 && arg[8] == 'T' &&
	       sscanf(arg, "%4d%2d%2dT%2d%2d%2dZ%n", &tm->tm_year, &tm->tm_mon, &tm->tm_mday,
		      &tm->tm_hour, &tm->tm_min, sec, &n) == 6 &&
	       n == 16;
}

/* a UTC time (scan_utc's forms) into seconds since the epoch */
static int parse_utc(const char *arg, __u64 *ret_s)
{
	struct tm tm = {0};
	int sec;
	time_t t;

	for (const char *p = arg; *p; p++)
		if (!isdigit((unsigned char)*p) && !strchr("-T:Z", *p))
			return -EINVAL;
	if (!scan_utc(arg, &tm, &sec))
		return -EINVAL;
	if (tm.tm_year < 1970 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 ||
	    tm.tm_min > 59 || sec < 0 || sec > 60)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_sec = sec;
	t = timegm(&tm);
	if (t < 0)
		return -ERANGE;
	*ret_s = (__u64)t;
	return 0;
}

int units_parse_time(const char *arg, __u64 now_s, __u64 *ret_s)
{
	const char *end;
	__u64 v;
	int err;

	if (!arg || !*arg)
		return -EINVAL;
	if (!strcmp(arg, "now")) {
		*ret_s = now_s;
		return 0;
	}
	if (arg[0] == '@') {
		err = leading_number(arg + 1, &v, &end);
		if (err)
			return err;
		if (*end)
			return -EINVAL;
		*ret_s = v;
		return 0;
	}
	if (strchr(arg, 'T'))
		return parse_utc(arg, ret_s);
	err = units_parse_duration(arg, &v);
	if (err)
		return err;
	*ret_s = v < now_s ? now_s - v : 0;
	return 0;
}

int units_format_utc(__u64 t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	return 0;
}

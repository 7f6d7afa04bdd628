// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* config.c: the daemon's config file: key = value lines, checked as the options are. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "opts.h"
#include "util/units.h"

static int set_why(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		(void)vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* s[0..n) without blanks on either side */
static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t'))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

/* the events as -e checks them: every one a daemon keeps (cpu, offcpu, lock, alloc) */
static bool events_ok(const char *v)
{
	static const char *const ok[] = {"cpu", "offcpu", "lock", "alloc"};
	const char *p = v;

	if (!*v)
		return false;
	while (*p) {
		size_t n = strcspn(p, ",");
		bool found = false;

		for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			found |= n == strlen(ok[i]) && !strncmp(p, ok[i], n);
		if (!found)
			return false;
		p += n;
		if (*p == ',' && !*++p)
			return false;
	}
	return true;
}

static int set_key(struct daemon_config *c, const char *key, const char *val, size_t line,
		   char *why, size_t why_len)
{
	if (!strcmp(key, "interval")) {
		if (opts_parse_u32(val, 1, 3600, &c->interval_s))
			return set_why(why, why_len,
				       "line %zu: interval: '%s' is not seconds from 1 to 3600",
				       line, val);
		c->has_interval = true;
	} else if (!strcmp(key, "max-age")) {
		if (units_parse_duration(val, &c->max_age_s))
			return set_why(why, why_len, "line %zu: max-age: '%s' is not a duration",
				       line, val);
		c->has_max_age = true;
	} else if (!strcmp(key, "max-size")) {
		if (units_parse_size(val, &c->max_size))
			return set_why(why, why_len, "line %zu: max-size: '%s' is not a size", line,
				       val);
		c->has_max_size = true;
	} else if (!strcmp(key, "events")) {
		if (strlen(val) >= sizeof(c->events) || !events_ok(val))
			return set_why(
				why, why_len,
				"line %zu: events: '%s' is not a list of cpu, offcpu, lock, alloc",
				line, val);
		memcpy(c->events, val, strlen(val) + 1); /* shorter than it: checked above */
		c->has_events = true;
	} else if (!strcmp(key, "rate")) {
		if (opts_parse_u32(val, 1, 10000, &c->rate_hz))
			return set_why(why, why_len,
				       "line %zu: rate: '%s' is not Hz from 1 to 10000", line, val);
		c->has_rate = true;
	} else {
		return set_why(
			why, why_len,
			"line %zu: unknown key '%s' (interval, max-age, max-size, events, rate)",
			line, key);
	}
	return 0;
}

int dconf_parse(const char *buf, size_t len, struct daemon_config *ret, char *why, size_t why_len)
{
	struct daemon_config c = {0};
	const char *p = buf, *end = buf + len;
	size_t line = 0;

	if (why && why_len)
		why[0] = '\0';
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *eq, *k, *v;
		const char *next = nl ? nl + 1 : end;
		size_t n = (size_t)((nl ? nl : end) - p), kn, vn;
		char key[32], val[128];
		const char *hash;
		int err;

		line++;
		if (memchr(p, '\0', n))
			return set_why(why, why_len, "line %zu: a NUL byte", line);
		hash = memchr(p, '#', n);
		if (hash)
			n = (size_t)(hash - p);
		k = p;
		kn = n;
		trim(&k, &kn);
		p = next;
		if (!kn)
			continue;
		eq = memchr(k, '=', kn);
		if (!eq)
			return set_why(why, why_len, "line %zu: not 'key = value'", line);
		v = eq + 1;
		vn = kn - (size_t)(v - k);
		kn = (size_t)(eq - k);
		trim(&k, &kn);
		trim(&v, &vn);
		if (!kn || !vn || kn >= sizeof(key) || vn >= sizeof(val))
			return set_why(why, why_len, "line %zu: not 'key = value'", line);
		memcpy(key, k, kn);
		key[kn] = '\0';
		memcpy(val, v, vn);
		val[vn] = '\0';
		err = set_key(&c, key, val, line, why, why_len);
		if (err)
			return err;
	}
	*ret = c;
	return 0;
}

int dconf_read(const char *path, struct daemon_config *ret, char *why, size_t why_len)
{
	char *buf;
	struct stat st;
	ssize_t n;
	size_t len = 0;
	int fd, err;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		set_why(why, why_len, "cannot open %s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* the daemon runs as root: a file another user can change would steer it */
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & 022) || st.st_size > DCONF_MAX_BYTES) {
		close(fd);
		set_why(why, why_len,
			"%s: not a regular file of root's (or jprof's user), writable by it alone, "
			"under %d bytes",
			path, DCONF_MAX_BYTES);
		return -EPERM;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size && (n = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)n;
	close(fd);
	err = dconf_parse(buf, len, ret, why, why_len);
	free(buf);
	return err;
}

int dconf_apply(const struct daemon_config *c, int argc, char **argv, struct jp_opts *o, char *err,
		size_t errlen)
{
	/* the values as option arguments: o keeps no pointer into them once parsed */
	static char interval[16], age[32], size[32], rate[16], events[64];
	char *av[256];
	int n = 0;

	if (argc < 2 || argc > 240)
		return JP_EXIT_USAGE;
	for (int i = 0; i < argc; i++)
		av[n++] = argv[i];
	if (c->has_interval) {
		snprintf(interval, sizeof(interval), "%u", c->interval_s);
		av[n++] = "--interval";
		av[n++] = interval;
	}
	if (c->has_max_age) {
		snprintf(age, sizeof(age), "%llus", (unsigned long long)c->max_age_s);
		av[n++] = "--max-age";
		av[n++] = age;
	}
	if (c->has_max_size) {
		snprintf(size, sizeof(size), "%llu", (unsigned long long)c->max_size);
		av[n++] = "--max-size";
		av[n++] = size;
	}
	if (c->has_events) {
		memcpy(events, c->events, sizeof(events));
		av[n++] = "-e";
		av[n++] = events;
	}
	if (c->has_rate) {
		snprintf(rate, sizeof(rate), "%u", c->rate_hz);
		av[n++] = "-F";
		av[n++] = rate;
	}
	av[n] = NULL;
	return opts_parse(n, av, o, err, errlen);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * opts_values.c: the values options take: numbers in a range, offsets, id lists,
 * percentages and -e's events, parsed strictly. opts.c's getopt loop calls them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "opts_int.h"
#include "util/units.h"

int opts_parse_u32(const char *arg, unsigned int min, unsigned int max, unsigned int *ret)
{
	unsigned long v;
	char *end;

	if (!arg || *arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno == ERANGE || v > 0xffffffffUL)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = (unsigned int)v;
	return 0;
}

int opts_parse_offset_ns(const char *arg, __u64 *ret_ns)
{
	__u64 v = 0, s;
	size_t n = 0;

	if (!arg || arg[0] != '+')
		return -EINVAL;
	arg++;
	while (arg[n] >= '0' && arg[n] <= '9') {
		if (v > (~0ull >> 4) / 10)
			return -ERANGE;
		v = v * 10 + (__u64)(arg[n++] - '0');
	}
	if (!n)
		return -EINVAL;
	if (!strcmp(arg + n, "ms")) {
		*ret_ns = v * 1000000ull;
		return 0;
	}
	if (units_parse_duration(arg, &s) || s > (~0ull >> 2) / 1000000000ull)
		return -EINVAL;
	*ret_ns = s * 1000000000ull;
	return 0;
}

int opts_parse_ids(const char *arg, __u32 *ids, size_t *n, const char *flag, const char *what,
		   char *err, size_t errlen)
{
	char buf[4096], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return fail(err, errlen, "%s: list too long", flag);
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int id;

		if (opts_parse_u32(tok, 1, 0x3fffffff, &id))
			return fail(err, errlen, "%s: '%s' is not a %s id", flag, tok, what);
		if (*n >= JP_MAX_PIDS)
			return fail(err, errlen, "%s: at most %d ids", flag, JP_MAX_PIDS);
		ids[(*n)++] = id;
	}
	if (!*n)
		return fail(err, errlen, "%s: no %s id given", flag, what);
	return 0;
}

int opts_parse_pids(const char *arg, struct jp_opts *o, char *err, size_t errlen)
{
	return opts_parse_ids(arg, o->pids, &o->npids, "-p", "process", err, errlen);
}

int opts_parse_percent(const char *arg, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0 && v <= 100))
		return -EINVAL;
	*ret = v;
	return 0;
}

int opts_parse_events(const char *arg, struct jp_opts *o, char *err, size_t errlen)
{
	char buf[256], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return fail(err, errlen, "-e: list too long");
	strcpy(buf, arg);
	o->events = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "cpu"))
			o->events |= 1u << JP_EV_CPU;
		else if (!strcmp(tok, "offcpu"))
			o->events |= 1u << JP_EV_OFFCPU;
		else if (!strcmp(tok, "syscalls"))
			o->events |= 1u << JP_EV_SYSCALL;
		else if (!strcmp(tok, "wall")) {
			o->events |= 1u << JP_EV_CPU | 1u << JP_EV_OFFCPU;
			o->wall = true;
		} else if (!strcmp(tok, "lock"))
			o->agent_events |= JP_AGENT_EV_LOCK;
		else if (!strcmp(tok, "alloc"))
			o->agent_events |= JP_AGENT_EV_ALLOC;
		else if (!strcmp(tok, "live"))
			o->agent_events |= JP_AGENT_EV_LIVE;
		else
			return fail(err, errlen,
				    "-e: unknown event '%s' (cpu, offcpu, syscalls, wall, lock, alloc, "
				    "live)",
				    tok);
	}
	if (!o->events && !o->agent_events)
		return fail(err, errlen, "-e: no event given");
	/*
	 * Agent events alone: the CPU sampler still runs (it finds the JVMs and carries their
	 * thread names), but only the agent events' columns are shown.
	 */
	o->cpu_hidden = !o->events;
	if (!o->events)
		o->events = 1u << JP_EV_CPU;
	return 0;
}

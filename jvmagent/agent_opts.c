// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* agent_opts.c: the agent's option string parsed (agent_opts.h); nothing here runs in a handler */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "agent_opts.h"
#include "bytecode.h"

static int parse_u32(const char *s, size_t n, __u32 min, __u32 max, __u32 *ret)
{
	unsigned long v = 0;

	if (n == 0 || n > 9)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v < min || v > max)
		return -ERANGE;
	*ret = (__u32)v;
	return 0;
}

int jpa_parse_options(const char *s, struct jpa_opts *o)
{
	__u32 kb = JP_RING_DATA_DEFAULT >> 10, v;

	memset(o, 0, sizeof(*o));
	o->depth = JP_DEPTH_DEFAULT;
	snprintf(o->dir, sizeof(o->dir), "/tmp");
	while (s && *s) {
		const char *end = strchr(s, ','), *eq;
		size_t len = end ? (size_t)(end - s) : strlen(s);
		int err = 0;

		eq = memchr(s, '=', len);
		if (len == 9 && !strncmp(s, "recompile", 9)) {
			o->recompile = 1;
		} else if (len == 4 && !strncmp(s, "lock", 4)) {
			o->events |= JPA_EV_LOCK;
		} else if (len == 4 && !strncmp(s, "live", 4)) {
			o->events |= JPA_EV_ALLOC | JPA_EV_LIVE;
		} else if (len == 5 && !strncmp(s, "alloc", 5)) {
			o->events |= JPA_EV_ALLOC;
		} else if (eq && !strncmp(s, "alloc=", 6)) {
			o->events |= JPA_EV_ALLOC;
			err = parse_u32(eq + 1, len - 6, 1, 1u << 30, &o->alloc_interval);
		} else if (len == 10 && !strncmp(s, "nofallback", 10)) {
			o->nofallback = 1;
		} else if (len == 7 && !strncmp(s, "perfmap", 7)) {
			o->perfmap = 1;
		} else if (!eq) {
			err = -EINVAL;
		} else if (!strncmp(s, "signo=", 6)) {
			err = parse_u32(eq + 1, len - 6, 1, 128, &v);
			o->signo = (int)v;
		} else if (!strncmp(s, "depth=", 6)) {
			err = parse_u32(eq + 1, len - 6, 1, JP_DEPTH_MAX, &o->depth);
		} else if (!strncmp(s, "ring=", 5)) {
			err = parse_u32(eq + 1, len - 5, JP_RING_DATA_MIN >> 10, JP_RING_DATA_MAX >> 10,
					&kb);
		} else if (!strncmp(s, "testfault=", 10)) {
			err = parse_u32(eq + 1, len - 10, 1, 1000000000, &o->testfault);
		} else if (!strncmp(s, "traceargs=", 10)) {
			err = parse_u32(eq + 1, len - 10, 1, JPA_BC_ARGS_MAX, &o->trace_args);
		} else if (!strncmp(s, "traceslow=", 10)) {
			err = parse_u32(eq + 1, len - 10, 1, 1000000000, &o->trace_slow_us);
		} else if (!strncmp(s, "trace=", 6)) {
			if (len - 6 == 0 || len - 6 >= sizeof(o->trace))
				err = -E2BIG;
			else
				snprintf(o->trace, sizeof(o->trace), "%.*s", (int)(len - 6), s + 6);
		} else if (!strncmp(s, "dir=", 4)) {
			if (len - 4 == 0 || len - 4 >= sizeof(o->dir))
				err = -ENAMETOOLONG;
			else
				snprintf(o->dir, sizeof(o->dir), "%.*s", (int)(len - 4), s + 4);
		} else {
			err = -EINVAL;
		}
		if (err) {
			jpa_log("bad option '%.*s' (signo=N,depth=N,ring=KB,dir=PATH,recompile,"
				"lock,alloc[=BYTES],live,nofallback,perfmap,testfault=N,trace=P|P,"
				"traceslow=US,traceargs=N), not starting",
				(int)len, s);
			return err;
		}
		s = end ? end + 1 : NULL;
	}
	o->ring_bytes = JP_RING_DATA_MIN;
	while (o->ring_bytes < (kb << 10))
		o->ring_bytes <<= 1;
	return 0;
}

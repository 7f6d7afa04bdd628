/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* clock.h: CLOCK_MONOTONIC in ns, the clock of bpf_ktime_get_ns() and the agent's traces. */
#ifndef JPROF_CLOCK_H
#define JPROF_CLOCK_H

#include <linux/types.h>
#include <time.h>

static inline __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* CLOCK_REALTIME in ns (unix time): what a monotonic time is shown as */
static inline __u64 wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

#endif /* JPROF_CLOCK_H */

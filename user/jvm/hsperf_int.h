/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hsperf_int.h: the hsperfdata reader's own state and the functions its files share
 * (hsperf.c, hsperf_file.c, hsperf_pauses.c); nothing else includes it. The public
 * interface is hsperf.h.
 */
#ifndef JPROF_HSPERF_INT_H
#define JPROF_HSPERF_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "hsperf.h"
#define PROLOGUE_LEN   32
#define ENTRY_HDR_LEN  20
#define PERFDATA_MAGIC 0xcafec0c0u
#define ENTRIES_MAX    65536 /* HotSpot has about 600 */
#define NAME_MAX_LEN   256   /* longer names are none we read */
#define EVENTS_MAX     65536 /* observed pauses kept per JVM for percentiles and JFR */
#define CAUSES_MAX     32    /* distinct cause strings interned per JVM */
#define DIR_SCAN_NAMES 4096
#define DIR_SCAN_TRIES 64
struct kind {
	char name[HSPERF_STR_LEN];
	__u64 count, total_ticks, observed;
	__u64 *durs; /* observed durations, ticks */
	size_t ndurs, cap;
};

struct hsperf {
	int fd;
	unsigned char *buf;
	bool have_prev, from_zero, vm_created;
	struct hsperf_snap prev;
	struct hsperf_layout lay; /* where the last full parse found the fields read */
	__u64 freq_hz;
	__u64 t0_mono_ns;    /* the JVM's tick 0 on CLOCK_MONOTONIC; 0 unknown */
	__u64 start_mono_ns; /* the process's start (10 ms ticks), when the JVM has no hrt.ticks */
	struct kind kinds[HSPERF_COLLECTORS + 1]; /* collectors, then safepoints */
	struct hsperf_gc_event *events;
	size_t nevents, cap_events;
	char causes[CAUSES_MAX][HSPERF_STR_LEN];
	unsigned int ncauses;
	struct hsperf_counters ctr;
};

/* hsperf.c */
__u32 hp_rd32(const unsigned char *p, bool big);

#endif /* JPROF_HSPERF_INT_H */

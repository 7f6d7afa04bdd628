/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* hsperf.h: reads a HotSpot JVM's hsperfdata file (untrusted) and turns its GC and safepoint counters into pauses. */
#ifndef JPROF_JVM_HSPERF_H
#define JPROF_JVM_HSPERF_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define HSPERF_COLLECTORS 4	     /* sun.gc.collector.0..3: HotSpot has at most 3 */
#define HSPERF_STR_LEN	  64	     /* collector names and GC causes are cut here */
#define HSPERF_FILE_MAX	  (256u << 10) /* bytes read per poll; HotSpot's default file is 64 KiB */

/* what one read of the file holds (only the counters jprof uses) */
struct hsperf_collector {
	char name[HSPERF_STR_LEN];
	__u64 invocations;
	__u64 time_ticks; /* sum of its pauses */
	__u64 last_entry; /* ticks since the JVM's start */
	__u64 last_exit;
	bool present; /* invocations and time were found */
};

struct hsperf_snap {
	__u64 freq_hz;		  /* sun.os.hrt.frequency: ticks per second (0: not found) */
	unsigned int ncollectors; /* highest collector index found + 1 */
	struct hsperf_collector coll[HSPERF_COLLECTORS];
	__u64 safepoints, safepoint_ticks, safepoint_sync_ticks;
	bool has_safepoints;
	bool vm_created; /* sun.rt.createVmEndTime set: JNI_CreateJavaVM returned, JVMTI is live */
	char cause[HSPERF_STR_LEN], last_cause[HSPERF_STR_LEN];
	__u64 hrt_ticks;   /* sun.os.hrt.ticks: the tick clock, sampled every 50 ms by the JVM */
	__u32 entries;	   /* entries parsed */
	__u32 bad_entries; /* malformed entries skipped */
};

/*
 * Parses the PerfData bytes of one read (prologue: magic 0xcafec0c0, byte order,
 * version 2, entry offset and count; then entries). Untrusted: every offset and length
 * is checked against len; a malformed entry is counted and, when the walk cannot go on
 * from it, ends the walk. Returns 0 (fields not found stay 0), -EINVAL when the
 * prologue is not PerfData v2, -ENODATA when shorter than the prologue.
 */
int hsperf_parse(const void *buf, size_t len, struct hsperf_snap *ret);

/*
 * Where a parse found the fields it read, and the prologue it found them under. HotSpot
 * only appends entries, and a value's place never moves: while the prologue's used
 * bytes, entry offset and count stay the same, a read needs only the values at these
 * offsets (hsperf_read_layout), not a walk over 600 entry names.
 */
#define HSPERF_LAYOUT_MAX 64
struct hsperf_field {
	__u32 off, len; /* of the value in the file */
	int id;
};
struct hsperf_layout {
	bool big;
	__u32 used, entry_off, n_entries; /* n_entries 0: none */
	unsigned int n;
	struct hsperf_field f[HSPERF_LAYOUT_MAX];
};
/* hsperf_parse, and the layout of what it read (none when any entry was malformed) */
int hsperf_parse_layout(const void *buf, size_t len, struct hsperf_snap *ret,
			struct hsperf_layout *lay);
/* the bytes a read under the layout needs: the prologue and up to the last value */
size_t hsperf_layout_end(const struct hsperf_layout *lay);
/* the values at a layout's places: 0, or -ESTALE when the prologue changed (parse again) */
int hsperf_read_layout(const void *buf, size_t len, const struct hsperf_layout *lay,
		       struct hsperf_snap *ret);

/* pause statistics of one kind (a collector, or safepoints) over the recording */
struct hsperf_kind_stats {
	const char *name;
	__u64 count;		      /* pauses (from the JVM's counter: exact) */
	__u64 total_ns;		      /* their total (from the JVM's counter: exact) */
	__u64 observed;		      /* pauses seen one by one (durations known) */
	__u64 p50_ns, p99_ns, max_ns; /* over the observed ones */
};

struct hsperf;

/*
 * Finds and opens the hsperfdata file of a JVM: /tmp/hsperfdata_<user>/<nspid> inside
 * /proc/<pid>/root, without symlinks or mount crossings, only a regular file owned by
 * uid with one link. user may be NULL or wrong (a container's passwd): then the
 * hsperfdata_* directories of its /tmp are tried (at most 64 of the first 4096 names).
 * from_zero: the JVM started during the recording, so all its pauses count (else only
 * those after the first read). NULL + errno: ENOENT no file (yet), EPERM not the JVM's.
 */
struct hsperf *hsperf__open(__u32 pid, __u32 nspid, uid_t uid, const char *user, bool from_zero);
/* the same over an fd already open (taken over, also on failure): for tests */
struct hsperf *hsperf__open_fd(int fd, bool from_zero);
void hsperf__free(struct hsperf *h); /* NULL-safe */
/*
 * Closes the file (the JVM exited, or the file is not PerfData): what was counted stays
 * for the reports, polls return -EBADF from now on. Idempotent.
 */
void hsperf__close_file(struct hsperf *h);
/* the file is still open */
bool hsperf__is_open(const struct hsperf *h);

/*
 * Reads the file again (one bounded pread) and records what changed since the last read:
 * each pause whose entry/exit times changed, and pauses that happened between two reads
 * as missed (counted, in the totals). Returns 0 or -errno (the file is not PerfData).
 * now_ns: CLOCK_MONOTONIC of the read, to place pause times.
 */
int hsperf__poll(struct hsperf *h, __u64 now_ns);

/* the last read saw sun.rt.createVmEndTime set: the JVM is initialised (agents may load) */
bool hsperf__vm_created(const struct hsperf *h);
/* pauses counted so far, of every kind: changes when a poll saw a GC or a safepoint */
__u64 hsperf__pause_count(const struct hsperf *h);

/* kinds: collectors, then safepoints last; returns how many (at most HSPERF_COLLECTORS + 1) */
unsigned int hsperf__stats(const struct hsperf *h, struct hsperf_kind_stats *ret, unsigned int max);

/* one observed GC pause, for JFR */
struct hsperf_gc_event {
	__u64 start_rel_ns; /* since the JVM's tick clock's 0 (see hsperf__clock_origin_ns) */
	__u64 duration_ns;
	const char *collector;
	const char *cause;
	__u32 gc_id; /* the collector's invocation number, across collectors made unique */
};

/* observed GC pauses, oldest first; *ret_n their count (the array stays owned by h) */
const struct hsperf_gc_event *hsperf__gc_events(const struct hsperf *h, size_t *ret_n);

/*
 * The JVM's tick 0 on CLOCK_MONOTONIC, estimated from sun.os.hrt.ticks (which JDK 17
 * updates every 50 ms: within that of the truth), else the process's start time (JDK 25
 * has no hrt.ticks: a few ms early); 0 when not known.
 */
__u64 hsperf__clock_origin_ns(const struct hsperf *h);

/* counters of the reader: reads, bad reads, pauses missed between reads, events dropped */
struct hsperf_counters {
	__u64 reads, bad_reads, gc_missed, sp_merged, events_dropped, bad_entries;
	__u64 bytes_read;  /* over all reads */
	__u64 bad_in_a_row; /* reads in a row that were not PerfData (0 after a good one) */
};
void hsperf__counters(const struct hsperf *h, struct hsperf_counters *ret);

/*
 * The pause table of one JVM (text; nothing when no pause was counted),
 * and the same as one JSON object (always written, "pid" and "kinds").
 */
void hsperf__report(const struct hsperf *h, __u32 pid, const char *main, FILE *f);
void hsperf__report_json(const struct hsperf *h, __u32 pid, const char *main, FILE *f);

#endif /* JPROF_JVM_HSPERF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* jfr.h: writes the profile model as a JDK Flight Recorder file (.jfr), for `jfr` and JMC. */
#ifndef JPROF_OUT_JFR_H
#define JPROF_OUT_JFR_H

#include <stdbool.h>
#include <stdio.h>

#include "../model/model.h"
#include "out.h"

/*
 * One call of a traced method (jprof trace --slow/--top: a slow call) as a jdk.MethodTrace
 * event: its stack and thread are the model's (stack leaf first, the traced method first
 * among its frames that are not markers: that method is the event's method), and jprof's
 * split of its time.
 */
struct out_method_trace {
	__u64 start_ns; /* since the recording's start */
	__u64 dur_ns;
	jp_id stack, labels;
	bool thrown;	/* it ended by an exception */
	bool has_split; /* the kernel's split below was made (else zeros) */
	__u64 cpu_ns, off_ns, sc_ns, gc_ns;
	__u32 sc_count, gc_count;
	const char *split, *syscalls; /* the split in words, one line each; NULL none */
	const char *args;	      /* its arguments in words (jprof trace --args), NULL none */
};

struct jfr_opts {
	__u64 start_unix_ns;	     /* wall-clock start of the recording (ns since the epoch) */
	__u64 duration_ns;	     /* its length; 0 puts every event at the start */
	__u64 period_ns;	     /* CPU sampling period, 0 when unknown or no CPU samples */
	const struct out_meta *meta; /* what was recorded, NULL for none */
	/* one jdk.GarbageCollection each (may be NULL) */
	const struct out_gc_pause *gc_pauses;
	size_t n_gc_pauses;
	/* one jdk.MethodTrace each (may be NULL) */
	const struct out_method_trace *method_traces;
	size_t n_method_traces;
};

/*
 * One finished chunk, version 2.1, with our own metadata (the JDK's type names and field
 * layouts for the types its tools know) and one constant pool. Events, by model column:
 *   JP_VAL_CPU_SAMPLES  n jdk.ExecutionSample per row (state STATE_RUNNABLE), since the JDK's
 *                       readers count events and have no weight field for them;
 *   JP_VAL_OFFCPU_NS    one jprof.OffCPU per row, duration = the row's blocked time;
 *   JP_VAL_SYSCALL_*    one jprof.Syscall per row, duration = its time, calls = its count;
 *   labels              one jprof.ThreadInfo per thread (pid, process name, container, cgroup);
 *   meta (when given)   one jprof.Recording (host, command, events, period, samples, lost);
 *   gc_pauses           one jdk.GarbageCollection each (gcId, name, cause, sumOfPauses and
 *                       longestPause: the pause itself, and the JVM's pid), at its own time;
 *   method_traces       one jdk.MethodTrace each (JDK 25's fields: method, thread, stack, at
 *                       its own time and duration; then jprof's: thrown, cpuTime, offCpuTime,
 *                       syscalls, syscallTime, gcPauses, gcTime, split, syscallsByName, arguments).
 * Events are at their time: the model's time slots in order, each slot's events (a sample
 * each, one off-CPU, syscall, alloc or lock event an entry) spread over its slices so that
 * times never go back, within [start, start + duration]. What a row has untimed (a file read
 * without times) is spread over the whole recording after them.
 * Frames: Interpreted, JIT compiled, Inlined for Java; Native for native, JVM and kernel code,
 * whose pseudo class is the DSO's base name or "[kernel]". Marker frames (JP_FK_ROOT: process,
 * thread, event) are left out: the event's type and thread carry them. Methods keep
 * their descriptor when the model's name has one, "()V" otherwise. Threads: osName is the
 * thread's name (the process name when it has none), osThreadId the tid; javaThreadId is 0
 * since the JVM's own thread id is not known. Returns 0 or -errno (write errors included).
 */
int out_jfr_write(const struct model *m, const struct jfr_opts *o, FILE *f);

/*
 * jdk.ExecutionSample events a chunk holds at most (default OUT_JFR_MAX_SAMPLES): one event a
 * sample, so a recording (or a file read) of more CPU samples has each row's written in
 * proportion, the shares kept (the jprof.Recording event has the true count). The number
 * of events written is bounded by this, not by a file's claims. Returns the previous value.
 */
#define OUT_JFR_MAX_SAMPLES (1ull << 24)
__u64 out_jfr_max_samples(__u64 max);
/* after out_jfr_write: the CPU samples it wrote as fewer events (0: all as they were) */
__u64 out_jfr_samples_scaled(void);

#endif /* JPROF_OUT_JFR_H */

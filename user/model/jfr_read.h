/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* jfr_read.h: reads a JDK Flight Recorder file (jprof's, the JDK's, async-profiler's) into the model. */
#ifndef JPROF_JFR_READ_H
#define JPROF_JFR_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* one GC of a JVM (jdk.GarbageCollection), as struct out_gc_pause has it */
struct jfr_gc_pause {
	__u64 start_ns;	   /* since the recording's start */
	__u64 duration_ns; /* its pauses (sumOfPauses; the event's duration when none) */
	__u32 pid;	   /* the JVM's (jprof writes it; a JDK file's jdk.JVMInformation) */
	__u32 gc_id;
	const char *name, *cause; /* interned in the model: valid until model__free */
};

/* what the recording says about itself, beside its samples */
struct jfr_read_info {
	__u64 start_unix_ns; /* the earliest chunk's start, ns since the epoch */
	__u64 duration_ns;   /* from it to the latest chunk's end */
	__u64 period_ns;     /* CPU sampling period the file states, 0 unknown */
	__u32 chunks;
	__u32 pid;	  /* the JVM's pid (jdk.JVMInformation), 0 unknown */
	bool jprof;	  /* written by jprof (it has jprof.* event types) */
	__u64 events;	  /* events read into the model */
	__u64 skipped;	  /* events of other types, left out */
	__u64 unresolved; /* references to constant pool entries the file does not have */
	__u64 cut_stacks; /* stack traces deeper than the limit: their root end left out */
	/* jprof.Recording, when the file has one; interned in the model, NULL when absent */
	const char *title, *host, *command, *events_list, *losses;
	__u64 samples, lost;
	struct jfr_gc_pause *gc; /* malloc'ed (free() it); at most a budget of them */
	size_t n_gc;
};

/*
 * Adds the recording in buf (one or more chunks, format 2.x) to m. Events, by type:
 *   jdk.ExecutionSample        JP_VAL_CPU_SAMPLES 1, JP_VAL_CPU_NS the sampling period when
 *                              the file states it (jprof.Recording, jdk.ActiveSetting)
 *   jdk.ObjectAllocationSample JP_VAL_ALLOC_SPACE weight, JP_VAL_ALLOC_OBJECTS 1; leaf frame
 *                              "Class_[a]" as record makes it (also ...InNewTLAB: tlabSize,
 *                              ...OutsideTLAB: allocationSize, as async-profiler writes them)
 *   jdk.JavaMonitorEnter       JP_VAL_DELAY_NS duration, JP_VAL_CONTENTIONS 1, leaf "Class_[l]"
 *   jdk.ThreadPark             the same, leaf "[park]"
 *   jprof.OffCPU               JP_VAL_OFFCPU_NS duration
 *   jprof.Syscall              JP_VAL_SYSCALL_NS duration, JP_VAL_SYSCALL_CALLS calls
 *   jprof.ThreadInfo           the pid, process name, container and cgroup of its thread
 *   jprof.Recording, jdk.GarbageCollection, jdk.JVMInformation, jdk.ActiveSetting: into info
 * Others are counted (info->skipped) and left out. Labels: tid = the thread's osThreadId,
 * thread = its Java name (its OS name for a JVM thread of a JDK file), pid and comm from
 * jprof.ThreadInfo or, for other files, the JVM's pid and "java". Java frames are
 * "pkg/Class.method" with their line and kind (Interpreted, JIT compiled, Inlined).
 * info may be NULL. Returns 0, -ENOMEM, or -EINVAL with the reason in why (malformed,
 * truncated, over a size limit): nothing of a refused file is trusted, but samples of
 * its earlier chunks may be in m already.
 */
int model__read_jfr_info(struct model *m, const void *buf, size_t len, struct jfr_read_info *info,
			 char *why, size_t why_len);
int model__read_jfr(struct model *m, const void *buf, size_t len, char *why, size_t why_len);

/* buf starts like a JFR chunk ("FLR\0"; "FLR" alone too: a cut one) */
bool jfr_read_is_jfr(const void *buf, size_t len);

#endif /* JPROF_JFR_READ_H */

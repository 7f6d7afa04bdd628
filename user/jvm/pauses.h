/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pauses.h: GC and safepoint pauses of every recorded JVM, read from their hsperfdata files. */
#ifndef JPROF_JVM_PAUSES_H
#define JPROF_JVM_PAUSES_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

#include "discover.h"
#include "hsperf.h"

struct pauses;

struct pauses *pauses__new(void);    /* NULL + errno */
void pauses__free(struct pauses *p); /* NULL-safe */

/*
 * A JVM to watch (idempotent per pid). started_during: it started after the recording
 * did, so all its pauses count. Returns 1 when new, 0 when known, -ENOSPC over the
 * budget (JP_MAX_JVMS JVMs; counted).
 */
int pauses__add(struct pauses *p, const struct jvm_info *jvm, bool started_during);

/*
 * Looks at the JVM's hsperfdata file now (opens it the first time, for pauses__add's
 * later use, and reads it): 1 when the JVM is initialised (sun.rt.createVmEndTime set:
 * an agent can be loaded), 0 when the file says it is still starting, -ENOENT when there
 * is no file (yet, or -XX:-UsePerfData), -errno.
 */
int pauses__probe(struct pauses *p, const struct jvm_info *jvm, bool started_during, __u64 now_ns);

/*
 * Reads due files (each JVM every 100 ms; files not found yet are looked for every
 * 200 ms for 10 s). Never blocks on a JVM: one pread per file. final: read every file now.
 * A JVM that exited (pid + start time, checked once a second) has its file read a last
 * time and closed; what it counted stays for the report only when it counted a pause
 * (256 such JVMs). A round has a budget (2 ms, 2 MiB; 50 times that when final): the next
 * round goes on where it stopped. Rounds cut short, files dropped (not PerfData) and files
 * not opened for want of fds are counted and reported by pauses__report.
 */
void pauses__poll(struct pauses *p, __u64 now_ns, bool final);

/* the table per JVM with pauses; JSON: an array of hsperf__report_json objects */
void pauses__report(const struct pauses *p, FILE *f);
void pauses__report_json(const struct pauses *p, FILE *f);

/* visit every observed GC pause of every JVM (for JFR); start in CLOCK_MONOTONIC ns */
typedef void (*pauses_gc_fn)(void *ctx, __u32 pid, __u64 start_mono_ns,
			     const struct hsperf_gc_event *ev);
void pauses__for_each_gc(const struct pauses *p, pauses_gc_fn fn, void *ctx);

/* visit every JVM whose hsperfdata file was read (for the -e wall pause band) */
typedef void (*pauses_jvm_fn)(void *ctx, const struct jvm_info *jvm, const struct hsperf *h);
void pauses__for_each_jvm(const struct pauses *p, pauses_jvm_fn fn, void *ctx);

#endif /* JPROF_JVM_PAUSES_H */

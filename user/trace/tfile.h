/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tfile.h: reads the agent's trace file (jvmagent/ring.h JP_MT_*), written by the JVM: untrusted. */
#ifndef JPROF_TRACE_TFILE_H
#define JPROF_TRACE_TFILE_H

#include <linux/types.h>

#include "ring.h"
#include "trace/tstats.h"

struct tfile;

/*
 * Takes over fd (the trace file, opened read-write; size its size) once its header checks:
 * 0 and *ret, -EPROTO (not a trace file this jprof reads; fd closed), -ENOMEM. Never maps
 * it: pread/pwrite only (the JVM's user could shrink a mapping under jprof).
 */
int tfile__open_fd(int fd, __u64 size, struct tfile **ret);
void tfile__free(struct tfile *t); /* NULL-safe; closes the fd */
/* jprof lives: reader_ns stamped */
void tfile__stamp(struct tfile *t, __u64 now_ns);
/* asks the agent to end the trace (stop_req) */
void tfile__stop(struct tfile *t);
/* the agent's state (JP_MT_*), 0 when unreadable */
__u32 tfile__state(struct tfile *t);
/* every record committed since the last call into s (bounded by the slots), tail written back */
void tfile__drain(struct tfile *t, struct tstats *s);
/*
 * After the end: the method table's names and refusals and the slow calls' stacks into s,
 * the header (zeros when unreadable) into *ret_hdr. The number of methods matched.
 */
unsigned int tfile__finish(struct tfile *t, struct tstats *s, struct jp_mt_hdr *ret_hdr);
/* records and stacks rejected */
__u64 tfile__malformed(const struct tfile *t);

#endif /* JPROF_TRACE_TFILE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stacks_int.h: what the parts of the stack requests share (agent.h has what the rest of
 * the agent calls): ring_file.c makes the trace ring, stacks_start.c installs the handler,
 * stacks.c is the handler, its walk and the ring's writers. Each setter here runs before
 * the handler is installed and nothing changes what it set after.
 */
#ifndef JPROF_STACKS_INT_H
#define JPROF_STACKS_INT_H

#include <signal.h>

#include "agent.h"

/* HotSpot's AsyncGetCallTrace ABI (prims/forte.cpp); frames are struct jp_frame */
struct jpa_call_trace {
	JNIEnv *env;
	jint num_frames;
	struct jp_frame *frames;
};
typedef void (*jpa_agct_fn)(struct jpa_call_trace *trace, jint depth, void *ucontext);

#define TRACE_BYTES(n) ((__u32)sizeof(struct jp_trace_rec) + (__u32)(n) * (__u32)sizeof(struct jp_frame))

/* ring_file.c: the ring's header as mapped, NULL before jpa_ring_open */
struct jp_ring_hdr *jpa_ring_hdr(void);

/* stacks.c: the ring mapped at hdr (data_size bytes of data after its header) for the writers */
void jpa_stacks_set_ring(struct jp_ring_hdr *hdr, __u32 data_size, __u32 max_depth);
/* the AsyncGetCallTrace the handler calls */
void jpa_stacks_set_agct(jpa_agct_fn fn);
/*
 * installs the SIGSEGV/SIGBUS guard of the walks, chained to the handlers before it (the
 * JVM's); 0 or -errno
 */
int jpa_stacks_catch_faults(void);
/* the stack-request handler, to install */
typedef void (*jpa_sigaction_fn)(int signo, siginfo_t *si, void *uc);
jpa_sigaction_fn jpa_stacks_handler(void);

#endif /* JPROF_STACKS_INT_H */

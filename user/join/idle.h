/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* idle.h: is a blocked thread an idle pool worker waiting for a task (not contention)? */
#ifndef JPROF_JOIN_IDLE_H
#define JPROF_JOIN_IDLE_H

#include <stdbool.h>
#include <stddef.h>

/* frames of a stack looked at from the leaf: the waits of the table are near it */
#define JOIN_IDLE_DEPTH 48

/*
 * names: a blocked interval's Java frames, leaf first ("pkg/Class.method" or dotted, NULL
 * for an unknown one), n of them. true when they show a worker waiting for work: a pool's
 * task queue (ThreadPoolExecutor.getTask, ForkJoinPool.awaitWork, Tomcat's TaskQueue), an
 * event loop's select (Netty), a timer or reference thread with nothing to do.
 */
bool join_idle__is_idle(const char *const *names, size_t n);

struct jvm_agent;
struct java_trace;
/* join_idle__is_idle over a trace's frames, named by the JVM's agent */
bool join_idle__trace(struct jvm_agent *a, const struct java_trace *t);

#endif /* JPROF_JOIN_IDLE_H */

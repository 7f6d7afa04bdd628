/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* attach.h: loads the jprof agent into a running HotSpot JVM (dynamic attach protocol). */
#ifndef JPROF_ATTACH_H
#define JPROF_ATTACH_H

#include <stddef.h>

#include "discover.h"

/*
 * Loads agent_path (a file jprof can read) into the JVM with options (may be NULL).
 * Copies the library into the JVM's mount namespace (/proc/<pid>/root/tmp) under a
 * content-derived name, so it is readable by the target and never overwritten while
 * mapped. Talks the HotSpot attach protocol (.attach_pid + SIGQUIT when the
 * .java_pid socket is absent), as the target's uid/gid, bounded by timeout_ms.
 * Idempotent: returns 1 without attaching when the agent is already loaded,
 * 0 when loaded now, -errno on failure with a one-line reason in err.
 */
int jvm_attach_agent(const struct jvm_info *jvm, const char *agent_path, const char *options,
		     int timeout_ms, char *err, size_t errlen);

#endif /* JPROF_ATTACH_H */

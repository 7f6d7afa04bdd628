/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* hswatch.h: learns of new JVMs the moment they create their hsperfdata file in the host's /tmp (inotify). */
#ifndef JPROF_JVM_HSWATCH_H
#define JPROF_JVM_HSWATCH_H

#include <linux/types.h>
#include <stddef.h>

struct hswatch;

/*
 * Watches /tmp and its hsperfdata_* directories (at most 256; never through a symlink)
 * for new files named by a pid. A JVM creates its file in its first milliseconds, long
 * before it can be attached. Only the host's /tmp: JVMs in other mount namespaces are
 * found through their samples. NULL + errno when inotify cannot be used.
 */
struct hswatch *hswatch__new(void);
void hswatch__free(struct hswatch *w); /* NULL-safe */

/*
 * Non-blocking: reads pending events (at most 64 KiB of them per call) and returns how
 * many pids it wrote to pids (at most max; more are left for the next call only if the
 * kernel still holds them), or -errno.
 */
int hswatch__read(struct hswatch *w, __u32 *pids, size_t max);

/* directories not watched (budget), and times the kernel's event queue overflowed */
void hswatch__counters(const struct hswatch *w, __u64 *ret_dirs_skipped, __u64 *ret_overflows);

/*
 * pid files not handed out: no such process while the file stays (a killed JVM's, or
 * anyone's name), or a pid beyond kernel.pid_max
 */
__u64 hswatch__phantoms(const struct hswatch *w);

#endif /* JPROF_JVM_HSWATCH_H */

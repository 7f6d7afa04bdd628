/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* procfs.h: small readers of /proc/<pid> files that several modules need. */
#ifndef JPROF_UTIL_PROCFS_H
#define JPROF_UTIL_PROCFS_H

#include <linux/types.h>

/* field 22 of /proc/<pid>/stat: the start time in clock ticks. 0, or -errno (-EIO: unparsable) */
int proc_start_ticks(__u32 pid, __u64 *ret);

#endif /* JPROF_UTIL_PROCFS_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * discover_int.h: the limits and functions the files of JVM discovery share (discover.c,
 * discover_proc.c, discover_cmdline.c); nothing else includes it. The public interface is
 * discover.h.
 */
#ifndef JPROF_DISCOVER_INT_H
#define JPROF_DISCOVER_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "discover.h"
/* size limits for files other users' processes control (or whose size they control) */
#define STATUS_MAX	 (16 * 1024)
#define CMDLINE_MAX	 (128 * 1024)
#define ENVIRON_MAX	 (128 * 1024)
#define CGROUP_MAX	 (16 * 1024)
#define RELEASE_MAX	 (16 * 1024)
#define MAPS_LINE_MAX	 (PATH_MAX + 256)
#define MAPS_LINES_MAX	 (1 << 20)
#define CONTAINER_ID_LEN 64
#define CONTAINER_SHORT	 12

/* tri-state of -XX:[+-]DisableAttachMechanism while scanning options in JVM order */
enum { ATTACH_FLAG_UNSET = -1, ATTACH_FLAG_OFF = 0, ATTACH_FLAG_ON = 1 };

/* discover_proc.c */
ssize_t dc_read_bounded_fd(int fd, char *buf, size_t cap);
ssize_t dc_read_bounded(int dir_fd, const char *name, char *buf, size_t cap);
void dc_copy_clean(char *dst, size_t dst_len, const char *src, size_t len);
int dc_status_uint(const char *buf, const char *key, int n, unsigned long *ret);

/* discover_cmdline.c */
void dc_read_cmdline_env(int dfd, struct jvm_info *info);

#endif /* JPROF_DISCOVER_INT_H */

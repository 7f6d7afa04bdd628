/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fdlimit.h: the open-file limit: raised at start, watched while running, never run into silently. */
#ifndef JPROF_UTIL_FDLIMIT_H
#define JPROF_UTIL_FDLIMIT_H

#include <linux/types.h>
#include <stdbool.h>

/*
 * Raises RLIMIT_NOFILE's soft limit to its hard limit (at most 1 << 20), where allowed.
 * Returns the soft limit now in force (0 when unknown).
 */
unsigned long fdlimit_raise(void);

/* the soft limit (cached; fdlimit_raise() refreshes it) */
unsigned long fdlimit_soft(void);

/*
 * Counts jprof's open fds (/proc/self/fd) at most every 2 s, and warns once when more
 * than 3/4 of the soft limit are in use. Returns the last count.
 */
unsigned long fdlimit_check(__u64 now_ns);

/*
 * A budget for fds held per watched process (hsperfdata readers): true while fewer than
 * half of the soft limit were in use at the last check, so attaching JVMs and reading
 * their rings always keep the other half.
 */
bool fdlimit_room(void);

/*
 * err (-errno) from an open: -EMFILE or -ENFILE is counted and warned about once (what:
 * what was being opened), with the limit and the way to raise it.
 */
void fdlimit_note(int err, const char *what);

/* opens refused for want of fds so far */
__u64 fdlimit_exhausted(void);

#endif /* JPROF_UTIL_FDLIMIT_H */

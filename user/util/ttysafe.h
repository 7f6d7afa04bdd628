/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ttysafe.h: names other users chose (cgroups, threads, processes, classes), made safe to print. */
#ifndef JPROF_UTIL_TTYSAFE_H
#define JPROF_UTIL_TTYSAFE_H

#include <stddef.h>

/*
 * s with every control character (below 0x20 and 0x7f: ESC starts a terminal's escape
 * sequences) written as \xNN, and '\' as "\\", into buf (cut to len - 1 bytes, never
 * inside an escape). Returns buf. keep_nl: '\n' and '\t' are kept (whole messages).
 */
char *tty_escape(const char *s, char *buf, size_t len, int keep_nl);

#endif /* JPROF_UTIL_TTYSAFE_H */

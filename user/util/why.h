/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* why.h: an error's reason written into a caller's buffer, the error returned. */
#ifndef JPROF_UTIL_WHY_H
#define JPROF_UTIL_WHY_H

#include <stddef.h>

/* formats into why (len bytes; NULL or 0: nothing) and returns err */
int set_why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* JPROF_UTIL_WHY_H */

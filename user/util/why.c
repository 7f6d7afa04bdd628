// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* why.c: why.h */
#include <stdarg.h>
#include <stdio.h>

#include "why.h"

int set_why(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		(void)vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

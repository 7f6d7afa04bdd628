// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* log.c: the one logger: "jprof: " prefix, one line per message, stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "util/ttysafe.h"

static enum log_level level = LOG_INFO;

void log_set_level(enum log_level lvl)
{
	level = lvl;
}

enum log_level log_get_level(void)
{
	return level;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const prefix[] = { "error: ", "warning: ", "", "debug: " };
	char buf[1024], safe[1024];
	va_list ap;
	size_t n;

	if (lvl > level)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	/*
	 * Messages name threads, processes, classes and cgroups that other users chose: no
	 * control character of theirs reaches the terminal raw (ESC sequences could rewrite
	 * what root sees, or worse). The one place every diagnostic goes through.
	 */
	fprintf(stderr, "jprof: %s%s\n", prefix[lvl], tty_escape(buf, safe, sizeof(safe), 1));
}

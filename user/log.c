// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* log.c: the one logger: "jprof: " prefix, one line per message, stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "util/ttysafe.h"

static enum log_level level = LOG_INFO;
static char status[256]; /* the status line shown, "" none */
static int tty = -1;

int log_is_tty(void)
{
	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	return tty;
}

void log_status(const char *text)
{
	if (!log_is_tty() || (!status[0] && (!text || !*text)))
		return;
	snprintf(status, sizeof(status), "%s", text ? text : "");
	/* back to the line's start, erase it, the new text without a newline */
	fprintf(stderr, "\r\033[K%s", status);
	fflush(stderr);
}

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
	if (status[0])
		fputs("\r\033[K", stderr);
	fprintf(stderr, "jprof: %s%s\n", prefix[lvl], tty_escape(buf, safe, sizeof(safe), 1));
	if (status[0]) {
		fputs(status, stderr);
		fflush(stderr);
	}
}

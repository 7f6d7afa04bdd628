/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* log.h: diagnostics to stderr; profile data never goes through here. */
#ifndef JPROF_LOG_H
#define JPROF_LOG_H

enum log_level { LOG_ERR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* messages above this level are dropped; LOG_INFO by default, LOG_DEBUG with -v */
void log_set_level(enum log_level lvl);
enum log_level log_get_level(void);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A status line at the bottom of a terminal: only when stderr is one, replaced at each call
 * (NULL or "" removes it); messages print above it. Never a line in a file or a pipe.
 */
void log_status(const char *text);
/* stderr is a terminal (the status line shows) */
int log_is_tty(void);

#define pr_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define pr_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* JPROF_LOG_H */

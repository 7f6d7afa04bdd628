/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * opts_int.h: what the parts of the command line's parsing share (the API is opts.h):
 * opts.c the option table, usage and the getopt loop; opts_values.c the values of options
 * (ids, percentages, events); opts_check.c the checks of options against each other.
 */
#ifndef JPROF_OPTS_INT_H
#define JPROF_OPTS_INT_H

#include <stdarg.h>
#include <stdio.h>

#include "opts.h"

/* the message into err[errlen]; JP_EXIT_USAGE */
static inline int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return JP_EXIT_USAGE;
}

/* opts_values.c; 0, or JP_EXIT_USAGE with the message in err */
/* "1,2,3" into ids[] (at most JP_MAX_PIDS); flag and what name the option in messages */
int opts_parse_ids(const char *arg, __u32 *ids, size_t *n, const char *flag, const char *what,
		   char *err, size_t errlen);
int opts_parse_pids(const char *arg, struct jp_opts *o, char *err, size_t errlen);
/* -e's list into o's events */
int opts_parse_events(const char *arg, struct jp_opts *o, char *err, size_t errlen);
/* 0 .. 100; 0 or -EINVAL */
int opts_parse_percent(const char *arg, double *ret);

/* opts_check.c: the options against each other once all are read, defaults that follow */
int opts_validate(struct jp_opts *o, char *err, size_t errlen);

#endif /* JPROF_OPTS_INT_H */

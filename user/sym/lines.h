/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* lines.h: bounded line splitting for the text parsers (kallsyms, maps, perf maps). */
#ifndef JPROF_SYM_LINES_H
#define JPROF_SYM_LINES_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* longest line handed to a callback; longer lines are reported as line == NULL */
#define JP_LINE_MAX 4096

/*
 * Called once per line with a NUL-terminated copy (no '\n', embedded NULs
 * truncate it) of at most JP_LINE_MAX - 1 bytes, or with line == NULL for a line
 * that was too long. lineno counts from 1. A negative return stops the split
 * and is passed up.
 */
typedef int (*lines_cb)(const char *line, size_t len, unsigned long lineno, void *ctx);

/* carried across lines_split() calls when a file is read in pieces */
struct lines_state {
	unsigned long lineno; /* lines seen so far */
	bool skipping;	      /* inside an overlong line, dropping until '\n' */
};

/*
 * Feeds the complete lines of buf[0..len) to cb. The unterminated tail is fed
 * only when final (end of input); otherwise it is left unconsumed. Returns the
 * number of bytes consumed (>= 0), or the callback's negative value.
 */
long lines_split(struct lines_state *st, const char *buf, size_t len, bool final, lines_cb cb,
		 void *ctx);

/*
 * Reads f to its end in bounded chunks, feeding lines to cb; at most max_bytes
 * are read (-EFBIG beyond). Returns the number of bytes read, or -errno.
 */
long lines_read_file(FILE *f, size_t max_bytes, lines_cb cb, void *ctx);

/*
 * Parses 1..max_digits hex digits at p (after an optional "0x" when allow_0x) into
 * *ret. Returns the first byte after them, or NULL (no digit, or too many).
 */
const char *lines_parse_hex(const char *p, bool allow_0x, int max_digits, __u64 *ret);

#endif /* JPROF_SYM_LINES_H */

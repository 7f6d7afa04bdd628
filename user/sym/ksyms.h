/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ksyms.h: kernel text symbols from /proc/kallsyms, sorted for binary search. */
#ifndef JPROF_SYM_KSYMS_H
#define JPROF_SYM_KSYMS_H

#include <linux/types.h>
#include <stddef.h>
#include <stdio.h>

struct ksyms;

/* Parses a kallsyms file (NULL: /proc/kallsyms). NULL + errno on failure. */
struct ksyms *ksyms__load_file(const char *path);
/* Same, from an open stream or a buffer (tests, fuzzing). NULL + errno on failure. */
struct ksyms *ksyms__load_stream(FILE *f);
struct ksyms *ksyms__load_buf(const char *buf, size_t len);
void ksyms__free(struct ksyms *k); /* NULL-safe */

/*
 * Finds the text symbol covering addr. Returns 0 and sets *ret_name, *ret_module
 * (NULL for the core kernel) and *ret_offset; -ENOENT when none. Strings live
 * as long as k. Thread-safe for concurrent readers.
 */
int ksyms__find(const struct ksyms *k, __u64 addr, const char **ret_name, const char **ret_module,
		__u64 *ret_offset);

/* number of symbols kept, and lines skipped as malformed */
size_t ksyms__count(const struct ksyms *k);
size_t ksyms__bad_lines(const struct ksyms *k);

#endif /* JPROF_SYM_KSYMS_H */

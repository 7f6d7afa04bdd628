/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * strindex.h: strings to dense indexes 0, 1, 2... by content, in first-seen order; for the
 * writers' string tables and constant pools. Keeps its own copies.
 */
#ifndef JPROF_UTIL_STRINDEX_H
#define JPROF_UTIL_STRINDEX_H

#include <linux/types.h>
#include <stddef.h>

struct strindex {
	char **strs; /* strs[i]: the string of index i */
	size_t n, cap;
	__u32 *slots; /* open addressing: index + 1, 0 empty */
	size_t nslots;
};

/* index of s[0..len) (added when new; s need not be NUL-terminated), or -ENOMEM */
long strindex_get(struct strindex *t, const char *s, size_t len);
void strindex_free(struct strindex *t); /* the table is empty and usable again */

/*
 * index of the C string s (NULL: ""), for an encoder that keeps its first error: on
 * failure *err is set to -ENOMEM (when it holds no error yet) and 0 returned, so a writer
 * can go on and check *err once at the end
 */
__u64 strindex_str(struct strindex *t, const char *s, int *err);

#endif /* JPROF_UTIL_STRINDEX_H */

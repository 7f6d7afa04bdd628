/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* strpool.h: an append-only string arena; strings never move until strpool_free(). */
#ifndef JPROF_SYM_STRPOOL_H
#define JPROF_SYM_STRPOOL_H

#include <stddef.h>

struct strpool_block;

struct strpool {
	struct strpool_block *head; /* newest block first */
	size_t used, total;	    /* bytes used in head, bytes in all blocks */
	size_t max_total;	    /* 0: no limit */
};

void strpool_init(struct strpool *p, size_t max_total);
void strpool_free(struct strpool *p);
/* Copies s[0..n) plus a NUL; the copy is stable. NULL when out of memory or over max_total. */
const char *strpool_add(struct strpool *p, const char *s, size_t n);

#endif /* JPROF_SYM_STRPOOL_H */

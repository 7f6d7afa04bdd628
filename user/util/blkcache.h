/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * blkcache.h: freed blocks kept for reuse, so that a steady state of allocations and frees
 * of similar sizes (the join's waiting samples and traces, its thread slots) calls malloc
 * only while it grows. Size classes are powers of two from 64 bytes to 64 KiB; at most
 * max_bytes are kept in all (past that, and for larger blocks, free()). Not thread-safe.
 */
#ifndef JPROF_UTIL_BLKCACHE_H
#define JPROF_UTIL_BLKCACHE_H

#include <stddef.h>

#define BLK_CLASSES 11 /* 64 B .. 64 KiB */

struct blkcache {
	void *free[BLK_CLASSES]; /* a list of free blocks per class */
	size_t kept, max_bytes;	 /* bytes on the lists; their cap (0: BLK_KEEP_DEFAULT) */
	unsigned long long reused, allocated;
};

#define BLK_KEEP_DEFAULT (4u << 20)

/* a block of at least n bytes, 16-byte aligned (NULL + errno: out of memory) */
void *blk_alloc(struct blkcache *c, size_t n);
/* blk_alloc, zeroed */
void *blk_zalloc(struct blkcache *c, size_t n);
/* gives p (from blk_alloc of c, or NULL) back */
void blk_free(struct blkcache *c, void *p);
/* frees every kept block; c stays usable */
void blk_release(struct blkcache *c);

#endif /* JPROF_UTIL_BLKCACHE_H */

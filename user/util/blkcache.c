// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* blkcache.c: see blkcache.h. Each block starts with a 16-byte header holding its class. */
#include <stdlib.h>
#include <string.h>

#include "util/blkcache.h"

#define BLK_HDR	 16u
#define BLK_MIN	 64u
#define BLK_BIG	 0xffu /* a block past the largest class: malloc'd and freed as it is */

struct blk_hdr {
	void *next;	   /* on a free list */
	unsigned int cls; /* its size class, or BLK_BIG */
};

_Static_assert(sizeof(struct blk_hdr) <= BLK_HDR, "block header");

static unsigned int blk_class(size_t n)
{
	size_t sz = BLK_MIN;
	unsigned int c = 0;

	while (sz < n && c < BLK_CLASSES) {
		sz <<= 1;
		c++;
	}
	return c < BLK_CLASSES ? c : BLK_BIG;
}

void *blk_alloc(struct blkcache *c, size_t n)
{
	unsigned int cls = n <= ((size_t)BLK_MIN << (BLK_CLASSES - 1)) - BLK_HDR ?
				   blk_class(n + BLK_HDR) :
				   BLK_BIG;
	struct blk_hdr *h;

	if (cls != BLK_BIG && c->free[cls]) {
		h = c->free[cls];
		c->free[cls] = h->next;
		c->kept -= (size_t)BLK_MIN << cls;
		c->reused++;
	} else {
		if (n > (size_t)-1 - BLK_HDR)
			return NULL;
		h = malloc(cls == BLK_BIG ? n + BLK_HDR : (size_t)BLK_MIN << cls);
		if (!h)
			return NULL;
		c->allocated++;
	}
	h->cls = cls;
	return (unsigned char *)h + BLK_HDR;
}

void *blk_zalloc(struct blkcache *c, size_t n)
{
	void *p = blk_alloc(c, n);

	if (p)
		memset(p, 0, n);
	return p;
}

void blk_free(struct blkcache *c, void *p)
{
	struct blk_hdr *h;
	unsigned int cls;
	size_t max = c->max_bytes ? c->max_bytes : BLK_KEEP_DEFAULT;

	if (!p)
		return;
	h = (struct blk_hdr *)((unsigned char *)p - BLK_HDR);
	cls = h->cls;
	if (cls >= BLK_CLASSES || c->kept + ((size_t)BLK_MIN << cls) > max) {
		free(h);
		return;
	}
	h->next = c->free[cls];
	c->free[cls] = h;
	c->kept += (size_t)BLK_MIN << cls;
}

void blk_release(struct blkcache *c)
{
	for (unsigned int i = 0; i < BLK_CLASSES; i++) {
		while (c->free[i]) {
			struct blk_hdr *h = c->free[i];

			c->free[i] = h->next;
			free(h);
		}
	}
	c->kept = 0;
}

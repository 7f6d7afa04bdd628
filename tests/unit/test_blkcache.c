// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_blkcache.c: blocks are reused by size class, kept up to the cap, and aligned */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/blkcache.h"

TEST(freed_blocks_are_reused_by_class)
{
	struct blkcache c = { 0 };
	void *a = blk_alloc(&c, 100), *b;

	ASSERT_TRUE(a);
	EXPECT_EQ((uintptr_t)a % 16, 0);
	memset(a, 0xab, 100);
	blk_free(&c, a);
	b = blk_alloc(&c, 90); /* the same class (128 with its header) */
	EXPECT_TRUE(b == a);
	EXPECT_EQ(c.reused, 1);
	EXPECT_EQ(c.allocated, 1);
	blk_free(&c, b);
	b = blk_alloc(&c, 300); /* another class: a new block */
	EXPECT_TRUE(b && b != a);
	EXPECT_EQ(c.allocated, 2);
	blk_free(&c, b);
	blk_free(&c, NULL);
	blk_release(&c);
	EXPECT_EQ(c.kept, 0);
}

TEST(zeroed_large_and_capped)
{
	struct blkcache c = { .max_bytes = 4096 };
	unsigned char *z, *big;
	void *v[8];

	z = blk_zalloc(&c, 200);
	ASSERT_TRUE(z);
	for (int i = 0; i < 200; i++)
		EXPECT_EQ(z[i], 0);
	blk_free(&c, z);
	/* past the largest class: malloc'd and freed as it is, never kept */
	big = blk_alloc(&c, 1u << 20);
	ASSERT_TRUE(big);
	memset(big, 1, 1u << 20);
	blk_free(&c, big);
	EXPECT_TRUE(c.kept <= 4096);
	/* eight 1 KiB blocks freed: only what fits under the cap stays */
	for (int i = 0; i < 8; i++)
		v[i] = blk_alloc(&c, 1000);
	for (int i = 0; i < 8; i++)
		blk_free(&c, v[i]);
	EXPECT_TRUE(c.kept <= 4096);
	EXPECT_TRUE(c.kept >= 2048);
	blk_release(&c);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_agg_table.c: the records the in-kernel counts are replayed with (--aggregate): a
 * record comes back whole (header, kernel, user and Java frames), without its hash; the
 * budgets refuse; the least used quarter is retired, still found until reaped; a retired
 * stack sent again lives again; one kept retired at once goes within the retired budget.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "kernel/agg_table.h"

/* a record of k kernel, u user frames and j Java frames, its words from seed */
static void make(struct jp_sample *s, __u64 *k, __u64 *u, __u32 nk, __u32 nu, __u16 nj, __u64 seed)
{
	memset(s, 0, sizeof(*s));
	s->pid = 100;
	s->tid = 101 + (__u32)seed;
	s->kind = JP_EV_CPU;
	s->flags = JP_SF_JWALK;
	s->kstack_len = nk;
	s->ustack_len = nu;
	s->jstack_len = nj;
	s->stack_hash = seed + 1;
	memcpy(s->comm, "worker", 7);
	for (__u32 i = 0; i < nk; i++)
		k[i] = seed * 1000 + i;
	for (__u32 i = 0; i < nu + 2u * nj; i++)
		u[i] = seed * 100000 + i;
}

TEST(record_comes_back_whole)
{
	struct agg_table *t = agg_table__new(16, 1 << 20, 4);
	__u64 k[64], u[127 + 256];
	const struct jp_sample *r;
	const __u64 *f;
	struct jp_sample s;

	ASSERT_TRUE(t);
	make(&s, k, u, 3, 5, 4, 7);
	EXPECT_EQ(agg_table__put(t, 42, &s, k, u, 10, false), 0);
	r = agg_table__get(t, 42, 11);
	ASSERT_TRUE(r);
	EXPECT_EQ(r->tid, s.tid);
	EXPECT_EQ(r->jstack_len, 4);
	EXPECT_EQ(r->stack_hash, 0); /* replays teach nothing */
	EXPECT_STREQ(r->comm, "worker");
	f = (const __u64 *)(r + 1);
	EXPECT_TRUE(!memcmp(f, k, 3 * sizeof(__u64)));
	/* the user stack, then the Java walk's two words a frame */
	EXPECT_TRUE(!memcmp(f + 3, u, (5 + 8) * sizeof(__u64)));
	EXPECT_TRUE(!agg_table__get(t, 43, 11));
	/* the same hash again replaces its record */
	make(&s, k, u, 1, 1, 0, 8);
	EXPECT_EQ(agg_table__put(t, 42, &s, k, u, 12, false), 0);
	EXPECT_EQ(agg_table__count(t), 1);
	EXPECT_EQ(agg_table__get(t, 42, 13)->kstack_len, 1);
	agg_table__free(t);
}

TEST(budgets_refuse)
{
	struct agg_table *t = agg_table__new(4, 1 << 20, 0);
	__u64 k[64], u[127 + 256];
	struct jp_sample s;

	ASSERT_TRUE(t);
	make(&s, k, u, 2, 2, 0, 1);
	for (__u64 h = 1; h <= 4; h++)
		EXPECT_EQ(agg_table__put(t, h, &s, k, u, h, false), 0);
	EXPECT_EQ(agg_table__put(t, 5, &s, k, u, 5, false), -ENOSPC);
	EXPECT_EQ(agg_table__count(t), 4);
	agg_table__free(t);
	/* bytes: a record of 64 + 127 frames does not fit in 1 KiB */
	t = agg_table__new(100, 1024, 10);
	ASSERT_TRUE(t);
	make(&s, k, u, 64, 127, 0, 2);
	EXPECT_EQ(agg_table__put(t, 9, &s, k, u, 1, false), -ENOSPC);
	EXPECT_EQ(agg_table__count(t), 0);
	EXPECT_EQ(agg_table__bytes(t), 0);
	agg_table__free(t);
}

TEST(least_used_quarter_retired_then_reaped)
{
	struct agg_table *t = agg_table__new(8, 1 << 20, 3);
	__u64 k[64], u[127 + 256], out[8];
	struct jp_sample s;
	size_t n;

	ASSERT_TRUE(t);
	make(&s, k, u, 2, 3, 1, 3);
	for (__u64 h = 1; h <= 8; h++)
		EXPECT_EQ(agg_table__put(t, h, &s, k, u, 100 + h, false), 0);
	/* 1 and 2 were used last: 3 and 4 are the least used now */
	(void)agg_table__get(t, 1, 200);
	(void)agg_table__get(t, 2, 201);
	n = agg_table__retire(t, 300, out, 8);
	EXPECT_EQ(n, 2);
	EXPECT_TRUE((out[0] == 3 && out[1] == 4) || (out[0] == 4 && out[1] == 3));
	/* retired: still found (their counts may still come), room for a live one */
	EXPECT_TRUE(agg_table__get(t, 3, 301) != NULL);
	EXPECT_EQ(agg_table__count(t), 8);
	EXPECT_EQ(agg_table__put(t, 9, &s, k, u, 302, false), 0);
	/* sent again: lives again (8 live now: no room for another), and is not reaped */
	EXPECT_EQ(agg_table__put(t, 4, &s, k, u, 303, false), 0);
	EXPECT_EQ(agg_table__put(t, 10, &s, k, u, 304, false), -ENOSPC);
	EXPECT_EQ(agg_table__reap(t, 299), 0);
	EXPECT_EQ(agg_table__reap(t, 300), 1);
	EXPECT_TRUE(!agg_table__get(t, 3, 400));
	EXPECT_TRUE(agg_table__get(t, 4, 400) != NULL);
	EXPECT_EQ(agg_table__count(t), 8);
	agg_table__free(t);
}

TEST(retired_at_once_within_their_budget)
{
	struct agg_table *t = agg_table__new(4, 1 << 20, 2);
	__u64 k[64], u[127 + 256];
	struct jp_sample s;

	ASSERT_TRUE(t);
	make(&s, k, u, 2, 2, 0, 1);
	for (__u64 h = 1; h <= 4; h++)
		EXPECT_EQ(agg_table__put(t, h, &s, k, u, h, false), 0);
	EXPECT_EQ(agg_table__put(t, 5, &s, k, u, 5, false), -ENOSPC);
	/* 2 more, retired: found until reaped */
	EXPECT_EQ(agg_table__put(t, 5, &s, k, u, 5, true), 0);
	EXPECT_EQ(agg_table__put(t, 6, &s, k, u, 6, true), 0);
	EXPECT_EQ(agg_table__put(t, 7, &s, k, u, 7, true), -ENOSPC);
	EXPECT_TRUE(agg_table__get(t, 6, 8) != NULL);
	EXPECT_EQ(agg_table__reap(t, 6), 2);
	EXPECT_TRUE(!agg_table__get(t, 5, 9));
	EXPECT_EQ(agg_table__count(t), 4);
	agg_table__free(t);
}

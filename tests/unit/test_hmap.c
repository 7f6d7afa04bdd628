// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_hmap.c: the one hash map: a million random operations checked against a plain
 * array, deletions in runs that wrap around the end, growth and shrinking, duplicate keys,
 * the filter walk, budgets, and keys an unkeyed hash would put in one slot.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/hashkey.h"
#include "util/hmap.h"

/* white box: the slot a u64 key starts from in a map of cap slots (as hmap.c places it) */
static size_t home_of(__u64 k, size_t cap)
{
	unsigned int bits = 0;

	while (((size_t)1 << bits) < cap)
		bits++;
	return (size_t)(hash_keyed(k) >> (64 - bits));
}

static size_t slot_of(const struct hmap *m, const __u64 *v)
{
	return (size_t)((const struct hmap_ent *)((const char *)v -
						  offsetof(struct hmap_ent, val)) -
			m->ents);
}

/* every entry is found by its key, and the iteration sees each once */
static int check_all(const struct hmap *m)
{
	size_t pos = 0, n = 0;
	__u64 k1, k2, *v;

	while ((v = hmap_next(m, &pos, &k1, &k2))) {
		if (hmap_find2(m, k1, k2) != v)
			return -1;
		n++;
	}
	return n == hmap_count(m) ? 0 : -2;
}

TEST(zeroed_struct_is_an_empty_map)
{
	struct hmap m = {0};

	EXPECT_TRUE(hmap_find(&m, 1) == NULL);
	for (__u64 k = 0; k < 100; k++)
		EXPECT_EQ(hmap_put(&m, k, k), 0);
	EXPECT_EQ(m.cap, 256);
	for (__u64 k = 0; k < 100; k++)
		EXPECT_EQ(hmap_del(&m, k, NULL), 0);
	EXPECT_EQ(m.cap, 8);
	hmap_free(&m);
}

TEST(basic_u64_and_pairs)
{
	struct hmap m;
	bool is_new;
	__u64 *v, val = 0;

	hmap_init(&m, 0, 0);
	EXPECT_TRUE(hmap_find(&m, 0) == NULL);
	EXPECT_EQ(hmap_put(&m, 0, 10), 0); /* key 0 is a key like any other */
	EXPECT_EQ(hmap_put(&m, 7, 70), 0);
	EXPECT_EQ(hmap_put(&m, 7, 71), 1);
	EXPECT_EQ(hmap_put2(&m, 7, 1, 700), 0); /* (7, 1) is not (7, 0) */
	EXPECT_EQ(*hmap_find(&m, 0), 10);
	EXPECT_EQ(*hmap_find(&m, 7), 71);
	EXPECT_EQ(*hmap_find2(&m, 7, 1), 700);
	EXPECT_TRUE(hmap_find2(&m, 7, 2) == NULL);
	EXPECT_EQ(hmap_count(&m), 3);
	v = hmap_get2(&m, 9, 9, &is_new);
	EXPECT_TRUE(v && is_new && *v == 0);
	*v = 99;
	v = hmap_get2(&m, 9, 9, &is_new);
	EXPECT_TRUE(v && !is_new && *v == 99);
	EXPECT_EQ(hmap_del(&m, 7, &val), 0);
	EXPECT_EQ(val, 71);
	EXPECT_EQ(hmap_del(&m, 7, NULL), -ENOENT);
	EXPECT_EQ(*hmap_find2(&m, 7, 1), 700);
	EXPECT_EQ(hmap_count(&m), 3);
	EXPECT_EQ(check_all(&m), 0);
	hmap_free(&m);
	EXPECT_EQ(hmap_count(&m), 0);
	EXPECT_TRUE(hmap_find(&m, 0) == NULL);
	EXPECT_EQ(hmap_put(&m, 1, 1), 0); /* usable again */
	hmap_free(&m);
}

/* xorshift: the same sequence every run */
static __u64 rnd(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define REF_KEYS 5000

TEST(churn_against_reference)
{
	static __u64 ref[REF_KEYS];
	static bool in[REF_KEYS];
	struct hmap m;
	__u64 s = 0x1234567, val;
	size_t n = 0, bad = 0;

	memset(in, 0, sizeof(in));
	hmap_init(&m, 0, 0);
	for (long op = 0; op < 1000000; op++) {
		__u64 r = rnd(&s);
		size_t k = (size_t)(r % REF_KEYS);
		/* keys of both shapes; a quarter share their first half */
		__u64 k1 = k % 4 ? k * 0x10001ull : 77, k2 = k % 4 ? (k % 2 ? k : 0) : k + 1;
		__u64 *v;

		/* phases: mostly adds, mostly deletes, mixed (growth and shrinking both run) */
		switch ((op / 100000) % 3 == 0	 ? r % 4
			: (op / 100000) % 3 == 1 ? r % 2 + 2
						 : r % 3) {
		case 0:
		case 1: {
			int ret = hmap_put2(&m, k1, k2, r);

			if (ret != (in[k] ? 1 : 0))
				bad++;
			if (!in[k])
				n++;
			in[k] = true;
			ref[k] = r;
			break;
		}
		case 2:
		case 3:
			if (hmap_del2(&m, k1, k2, &val) != (in[k] ? 0 : -ENOENT) ||
			    (in[k] && val != ref[k]))
				bad++;
			if (in[k])
				n--;
			in[k] = false;
			break;
		}
		v = hmap_find2(&m, k1, k2);
		if (in[k] ? !v || *v != ref[k] : v != NULL)
			bad++;
		if (hmap_count(&m) != n)
			bad++;
		if (op % 50000 == 0 && check_all(&m))
			bad++;
	}
	for (size_t k = 0; k < REF_KEYS; k++) {
		__u64 k1 = k % 4 ? k * 0x10001ull : 77, k2 = k % 4 ? (k % 2 ? k : 0) : k + 1;
		__u64 *v = hmap_find2(&m, k1, k2);

		if (in[k] ? !v || *v != ref[k] : v != NULL)
			bad++;
	}
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(check_all(&m), 0);
	hmap_free(&m);
}

TEST(deletion_runs_wrap_around_the_end)
{
	struct hmap m;
	__u64 keys[6], k = 1;
	size_t nk = 0, at_end = 0;

	hmap_init(&m, 16, 0);
	/* four keys whose home is the last slot and two whose home is slot 0: a run that wraps */
	while (nk < 6) {
		size_t h = home_of(k, 16);

		if ((h == 15 && at_end < 4) || (h == 0 && nk - at_end < 2 && at_end == 4)) {
			keys[nk++] = k;
			at_end += h == 15;
		}
		k++;
	}
	for (size_t i = 0; i < 6; i++)
		EXPECT_EQ(hmap_put(&m, keys[i], i), 0);
	EXPECT_EQ(m.cap, 16);
	/* slots 15, 0, 1, 2 for the first four, 3 and 4 for the two of home 0 */
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[0])), 15);
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[3])), 2);
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[5])), 4);
	/* take out the one in the last slot: all after it move back, across the end */
	EXPECT_EQ(hmap_del(&m, keys[0], NULL), 0);
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[1])), 15);
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[3])), 1);
	/* the home-0 keys move back to slot 2 and 3, not past their home */
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[4])), 2);
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[5])), 3);
	/* a home-0 key in slot 0's run: removing key 2 (slot 0) moves key 3 back to 0 */
	EXPECT_EQ(hmap_del(&m, keys[2], NULL), 0);
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[3])), 0);
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[4])), 1);
	EXPECT_EQ(slot_of(&m, hmap_find(&m, keys[5])), 2);
	for (size_t i = 1; i < 6; i++)
		EXPECT_TRUE(i == 2 || (hmap_find(&m, keys[i]) && *hmap_find(&m, keys[i]) == i));
	EXPECT_EQ(check_all(&m), 0);
	hmap_free(&m);
}

TEST(grows_at_half_and_shrinks_when_mostly_empty)
{
	struct hmap m;
	size_t min_bytes;

	hmap_init(&m, 64, 0);
	EXPECT_EQ(hmap_bytes(&m), 0); /* nothing allocated before the first add */
	EXPECT_EQ(hmap_put(&m, 1, 1), 0);
	EXPECT_EQ(m.cap, 64);
	min_bytes = hmap_bytes(&m);
	for (__u64 k = 2; k <= 32; k++)
		EXPECT_EQ(hmap_put(&m, k, k), 0);
	EXPECT_EQ(m.cap, 64); /* 32 in 64: at half */
	EXPECT_EQ(hmap_put(&m, 33, 33), 0);
	EXPECT_EQ(m.cap, 128);
	for (__u64 k = 34; k <= 100000; k++)
		(void)hmap_put(&m, k, k);
	EXPECT_EQ(hmap_count(&m), 100000);
	EXPECT_EQ(m.cap, 262144);
	for (__u64 k = 1; k <= 99990; k++)
		EXPECT_EQ(hmap_del(&m, k, NULL), 0);
	EXPECT_EQ(hmap_count(&m), 10);
	EXPECT_EQ(m.cap, 64); /* never under min_cap */
	EXPECT_EQ(hmap_bytes(&m), min_bytes);
	for (__u64 k = 99991; k <= 100000; k++)
		EXPECT_EQ(*hmap_find(&m, k), k);
	EXPECT_EQ(check_all(&m), 0);
	hmap_free(&m);
}

static long charged;
static long charge_limit;

static int charge(void *ctx, long delta)
{
	(void)ctx;
	if (delta > 0 && charged + delta > charge_limit)
		return -1;
	charged += delta;
	return 0;
}

TEST(budgets_max_entries_and_charge)
{
	struct hmap m;
	bool is_new;

	hmap_init(&m, 8, 5);
	for (__u64 k = 0; k < 5; k++)
		EXPECT_EQ(hmap_put(&m, k, k), 0);
	EXPECT_EQ(hmap_put(&m, 5, 5), -ENOSPC);
	EXPECT_EQ(hmap_put(&m, 4, 44), 1); /* a present key still changes */
	errno = 0;
	EXPECT_TRUE(hmap_get(&m, 6, &is_new) == NULL);
	EXPECT_EQ(errno, ENOSPC);
	hmap_free(&m);

	charged = 0;
	charge_limit = 4096;
	hmap_init(&m, 8, 0);
	hmap_set_charge(&m, charge, NULL);
	for (__u64 k = 0; k < 1000; k++)
		if (hmap_put(&m, k, k) < 0)
			break;
	EXPECT_TRUE(hmap_count(&m) < 1000);
	EXPECT_TRUE(hmap_count(&m) >= 32);
	EXPECT_EQ((size_t)charged, hmap_bytes(&m));
	EXPECT_EQ(check_all(&m), 0);
	hmap_free(&m);
	EXPECT_EQ(charged, 0);
}

TEST(duplicates_for_interners)
{
	struct hmap m;
	size_t pos = 0, seen = 0;
	__u64 *v, sum = 0;

	hmap_init(&m, 0, 0);
	for (__u64 i = 1; i <= 5; i++)
		EXPECT_EQ(hmap_add2(&m, 42, 3, i), 0);
	EXPECT_EQ(hmap_add2(&m, 43, 3, 100), 0);
	while ((v = hmap_find_next2(&m, 42, 3, &pos))) {
		sum += *v;
		seen++;
	}
	EXPECT_EQ(seen, 5);
	EXPECT_EQ(sum, 15);
	/* one of them removed through its address */
	pos = 0;
	v = hmap_find_next2(&m, 42, 3, &pos);
	v = hmap_find_next2(&m, 42, 3, &pos);
	hmap_del_at(&m, v);
	for (pos = 0, seen = 0; hmap_find_next2(&m, 42, 3, &pos);)
		seen++;
	EXPECT_EQ(seen, 4);
	EXPECT_EQ(*hmap_find2(&m, 43, 3), 100);
	hmap_free(&m);
}

static bool drop_odd(void *ctx, __u64 k1, __u64 k2, __u64 val)
{
	size_t *calls = ctx;

	(void)k2;
	(void)val;
	calls[k1]++;
	return k1 % 2;
}

TEST(filter_sees_each_once)
{
	static size_t calls[4096];
	struct hmap m;
	size_t twice = 0;

	memset(calls, 0, sizeof(calls));
	hmap_init(&m, 4096, 0);
	/* 2,000 in 4,096 slots: long runs, some wrapping around the end */
	for (__u64 k = 0; k < 2000; k++)
		EXPECT_EQ(hmap_put(&m, k, k), 0);
	hmap_filter(&m, drop_odd, calls);
	for (size_t k = 0; k < 2000; k++)
		twice += calls[k] != 1;
	EXPECT_EQ(twice, 0);
	EXPECT_EQ(hmap_count(&m), 1000);
	for (__u64 k = 0; k < 2000; k++)
		EXPECT_TRUE((hmap_find(&m, k) != NULL) == !(k % 2));
	EXPECT_EQ(check_all(&m), 0);
	hmap_free(&m);
}

TEST(adversarial_keys_spread)
{
	struct hmap m;
	size_t worst = 0;
	size_t pos = 0;
	__u64 k1, *v;

	/* keys an identity or multiplicative hash sends to one slot: multiples of a power of 2 */
	hmap_init(&m, 0, 0);
	for (__u64 i = 0; i < 100000; i++)
		EXPECT_EQ(hmap_put(&m, i << 32, i), 0);
	while ((v = hmap_next(&m, &pos, &k1, NULL))) {
		size_t d = (slot_of(&m, v) - home_of(k1, m.cap)) & (m.cap - 1);

		if (d > worst)
			worst = d;
	}
	/* under 1/2 load, the longest probe of 100,000 random placements is a few dozen */
	EXPECT_TRUE(worst < 100);
	hmap_free(&m);
}

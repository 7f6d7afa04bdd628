// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_intern.c: the one string interner: one stable copy and id per distinct string,
 * bytes that are no C string, many strings through growth, and the byte budget.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/intern.h"

TEST(one_copy_per_string)
{
	struct intern t;
	const char *a, *b;
	char buf[] = "java/lang/String.hashCode";

	intern_init(&t, 0);
	EXPECT_EQ(intern_find(&t, "x", 1), -ENOENT);
	EXPECT_EQ(intern_id(&t, "abc", 3), 0);
	EXPECT_EQ(intern_id(&t, "abd", 3), 1);
	EXPECT_EQ(intern_id(&t, "ab", 2), 2); /* a prefix is another string */
	EXPECT_EQ(intern_id(&t, "", 0), 3);
	EXPECT_EQ(intern_id(&t, "abcdef", 3), 0); /* n bytes, no NUL needed */
	a = intern_str(&t, buf, strlen(buf));
	buf[0] = 'J'; /* the copy is the interner's own */
	EXPECT_STREQ(a, "java/lang/String.hashCode");
	buf[0] = 'j';
	b = intern_str(&t, buf, strlen(buf));
	EXPECT_TRUE(a == b);
	EXPECT_EQ(intern_find(&t, "abd", 3), 1);
	EXPECT_STREQ(intern_get(&t, 2), "ab");
	EXPECT_STREQ(intern_get(&t, 3), "");
	EXPECT_TRUE(intern_get(&t, 5) == NULL);
	EXPECT_EQ(intern_count(&t), 5);
	/* bytes with a NUL inside: compared by all n of them */
	EXPECT_EQ(intern_id(&t, "a\0b", 3), 5);
	EXPECT_EQ(intern_id(&t, "a\0c", 3), 6);
	EXPECT_EQ(intern_id(&t, "a\0b", 3), 5);
	intern_free(&t);
	EXPECT_EQ(intern_count(&t), 0);
	EXPECT_EQ(intern_id(&t, "abd", 3), 0); /* usable again, ids from 0 */
	intern_free(&t);
}

TEST(many_strings_stay_put)
{
	struct intern t;
	static const char *copies[100000];
	char buf[32];
	size_t bad = 0;

	intern_init(&t, 0);
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(buf, sizeof(buf), "method_%d", i);

		copies[i] = intern_str(&t, buf, (size_t)n);
		if (!copies[i])
			bad++;
	}
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(buf, sizeof(buf), "method_%d", i);

		if (intern_id(&t, buf, (size_t)n) != i || intern_get(&t, (size_t)i) != copies[i] ||
		    strcmp(copies[i], buf))
			bad++;
	}
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(intern_count(&t), 100000);
	intern_free(&t);
}

TEST(byte_budget)
{
	struct intern t;
	char buf[64];
	long id = 0;
	int i;

	intern_init(&t, 256 * 1024);
	for (i = 0; i < 1000000 && id >= 0; i++) {
		int n = snprintf(buf, sizeof(buf), "a fairly long name number %d", i);

		id = intern_id(&t, buf, (size_t)n);
	}
	EXPECT_EQ(id, -ENOSPC);
	EXPECT_TRUE(i > 1000);
	EXPECT_TRUE(intern_bytes(&t) <= 256 * 1024);
	/* what is in is still found; what is new gets in only within the budget */
	EXPECT_EQ(intern_id(&t, "a fairly long name number 7", 27), 7);
	for (i = 0; i < 100000; i++) {
		int n = snprintf(buf, sizeof(buf), "new %d", i);

		(void)intern_id(&t, buf, (size_t)n);
	}
	EXPECT_TRUE(intern_bytes(&t) <= 256 * 1024);
	intern_free(&t);
	intern_init(&t, 0);
	{
		char *big = calloc(1, 2u << 20);

		EXPECT_TRUE(big != NULL);
		if (big)
			EXPECT_EQ(intern_id(&t, big, 2u << 20), -ENOSPC);
		free(big);
	}
	intern_free(&t);
}

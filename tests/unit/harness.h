/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* harness.h: a tiny self-registering unit-test harness. Include once per test binary. */
#ifndef JPROF_HARNESS_H
#define JPROF_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
	struct test_case *next;
};

static struct test_case *test_list;
static int test_failed_cur;
static int test_checks;

#define TEST(name)                                                                                 \
	static void test_##name(void);                                                             \
	__attribute__((constructor)) static void register_##name(void)                             \
	{                                                                                          \
		static struct test_case tc = { #name, test_##name, NULL };                         \
		struct test_case **p = &test_list;                                                 \
		while (*p)                                                                         \
			p = &(*p)->next;                                                           \
		*p = &tc;                                                                          \
	}                                                                                          \
	static void test_##name(void)

#define FAIL_AT(...)                                                                               \
	do {                                                                                       \
		fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                                  \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		test_failed_cur = 1;                                                               \
	} while (0)

#define EXPECT_TRUE(c)                                                                             \
	do {                                                                                       \
		test_checks++;                                                                     \
		if (!(c))                                                                          \
			FAIL_AT("expected true: %s", #c);                                          \
	} while (0)

#define EXPECT_EQ(a, b)                                                                            \
	do {                                                                                       \
		long long _a = (long long)(a), _b = (long long)(b);                                \
		test_checks++;                                                                     \
		if (_a != _b)                                                                      \
			FAIL_AT("%s == %s: %lld != %lld", #a, #b, _a, _b);                         \
	} while (0)

#define EXPECT_STREQ(a, b)                                                                         \
	do {                                                                                       \
		const char *_a = (a), *_b = (b);                                                   \
		test_checks++;                                                                     \
		if (!_a || !_b || strcmp(_a, _b))                                                  \
			FAIL_AT("%s == %s: \"%s\" != \"%s\"", #a, #b, _a ? _a : "(null)",          \
				_b ? _b : "(null)");                                               \
	} while (0)

/* stop the current test when a precondition fails */
#define ASSERT_TRUE(c)                                                                             \
	do {                                                                                       \
		test_checks++;                                                                     \
		if (!(c)) {                                                                        \
			FAIL_AT("assertion failed: %s", #c);                                       \
			return;                                                                    \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	for (struct test_case *t = test_list; t; t = t->next) {
		if (argc > 1 && !strstr(t->name, argv[1]))
			continue;
		test_failed_cur = 0;
		t->fn();
		if (test_failed_cur) {
			fprintf(stderr, "FAIL %s\n", t->name);
			failed++;
		} else {
			passed++;
		}
	}
	printf("%s: %d passed, %d failed (%d checks)\n", argv[0], passed, failed, test_checks);
	return failed ? 1 : 0;
}

#endif /* JPROF_HARNESS_H */

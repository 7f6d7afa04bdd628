// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_profile.c: the aggregate trie, merge, the folded reader and report readers' budgets. */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "model/model.h"
#include "model/pprof_read.h"
#include "profile.h"

#define F(n, k) ((struct prof_frame){ (n), (k) })

static const struct profile_node *kid(const struct profile_node *n, const char *name,
				      enum jp_frame_kind kind)
{
	for (n = profile_node__child(n); n; n = profile_node__next(n))
		if (!strcmp(profile_node__name(n), name) && profile_node__kind(n) == kind)
			return n;
	return NULL;
}

/* every node: total == self + sum of children's totals; children strictly sorted */
static int check_tree(const struct profile_node *n)
{
	__u64 sum = profile_node__self(n);
	const struct profile_node *c, *prev = NULL;
	size_t cnt = 0;

	for (c = profile_node__child(n); c; prev = c, c = profile_node__next(c)) {
		if (profile_node__parent(c) != n || !check_tree(c))
			return 0;
		if (prev) {
			int d = strcmp(profile_node__name(prev), profile_node__name(c));

			if (d > 0 || (!d && profile_node__kind(prev) >= profile_node__kind(c)))
				return 0;
		}
		sum += profile_node__total(c);
		cnt++;
	}
	return sum == profile_node__total(n) && cnt == profile_node__child_count(n);
}

static struct profile *read_str(const char *s, int *ret_err, size_t *ret_line)
{
	struct profile *p = profile__new("t", "samples");
	FILE *f = fmemopen((void *)s, strlen(s), "r");

	*ret_err = p && f ? profile__read_folded(p, f, ret_line) : -ENOMEM;
	if (f)
		fclose(f);
	return p;
}

TEST(new_and_accessors)
{
	struct profile *p = profile__new("cpu", "ns");

	ASSERT_TRUE(p);
	EXPECT_STREQ(profile__title(p), "cpu");
	EXPECT_STREQ(profile__unit(p), "ns");
	EXPECT_EQ(profile__total(p), 0);
	EXPECT_EQ(profile__node_count(p), 0);
	EXPECT_STREQ(profile_node__name(profile__root(p)), "all");
	EXPECT_EQ(profile_node__kind(profile__root(p)), JP_FK_ROOT);
	EXPECT_TRUE(profile_node__child(profile__root(p)) == NULL);
	EXPECT_TRUE(profile_node__parent(profile__root(p)) == NULL);
	profile__free(p);
	profile__free(NULL);
}

TEST(add_weights_and_order)
{
	struct profile *p = profile__new("t", "samples");
	struct prof_frame s1[] = { F("main", JP_FK_NATIVE), F("b", JP_FK_JIT), F("x", JP_FK_KERNEL) };
	struct prof_frame s2[] = { F("main", JP_FK_NATIVE), F("a", JP_FK_JIT) };
	struct prof_frame s3[] = { F("main", JP_FK_NATIVE), F("b", JP_FK_INTERP) };
	struct prof_frame s4[] = { F("main", JP_FK_NATIVE), F("b", JP_FK_JIT) };
	const struct profile_node *m, *c;

	ASSERT_TRUE(p);
	EXPECT_EQ(profile__add(p, s1, 3, 5), 0);
	EXPECT_EQ(profile__add(p, s2, 2, 2), 0);
	EXPECT_EQ(profile__add(p, s3, 2, 1), 0);
	EXPECT_EQ(profile__add(p, s4, 2, 4), 0);
	EXPECT_EQ(profile__add(p, s1, 3, 1), 0);
	EXPECT_EQ(profile__add(p, NULL, 0, 7), 0);
	EXPECT_EQ(profile__total(p), 20);
	EXPECT_EQ(profile__node_count(p), 5);
	EXPECT_EQ(profile_node__self(profile__root(p)), 7);
	m = kid(profile__root(p), "main", JP_FK_NATIVE);
	ASSERT_TRUE(m);
	EXPECT_EQ(profile_node__total(m), 13);
	EXPECT_EQ(profile_node__self(m), 0);
	/* sorted by name, then kind (JIT < INTERP) */
	c = profile_node__child(m);
	EXPECT_STREQ(profile_node__name(c), "a");
	c = profile_node__next(c);
	EXPECT_STREQ(profile_node__name(c), "b");
	EXPECT_EQ(profile_node__kind(c), JP_FK_JIT);
	EXPECT_EQ(profile_node__total(c), 10);
	EXPECT_EQ(profile_node__self(c), 4);
	c = profile_node__next(c);
	EXPECT_STREQ(profile_node__name(c), "b");
	EXPECT_EQ(profile_node__kind(c), JP_FK_INTERP);
	EXPECT_TRUE(profile_node__next(c) == NULL);
	EXPECT_TRUE(check_tree(profile__root(p)));
	profile__free(p);
}

TEST(names_are_interned_and_copied)
{
	struct profile *p = profile__new("t", "samples");
	char buf[16];
	struct prof_frame s[2];

	ASSERT_TRUE(p);
	strcpy(buf, "shared");
	s[0] = F("one", JP_FK_NATIVE);
	s[1] = F(buf, JP_FK_NATIVE);
	EXPECT_EQ(profile__add(p, s, 2, 1), 0);
	s[0] = F("two", JP_FK_NATIVE);
	EXPECT_EQ(profile__add(p, s, 2, 1), 0);
	strcpy(buf, "clobbered");
	{
		const struct profile_node *a = kid(kid(profile__root(p), "one", 0), "shared", 0);
		const struct profile_node *b = kid(kid(profile__root(p), "two", 0), "shared", 0);

		ASSERT_TRUE(a && b);
		EXPECT_TRUE(profile_node__name(a) == profile_node__name(b));
	}
	/* NULL names and out-of-range kinds don't crash */
	s[0] = F(NULL, (enum jp_frame_kind)99);
	EXPECT_EQ(profile__add(p, s, 1, 1), 0);
	EXPECT_TRUE(kid(profile__root(p), "", JP_FK_NATIVE) != NULL);
	profile__free(p);
}

/* a node's only child is held in the node; the second makes an array, in either order */
TEST(one_child_then_an_array)
{
	struct profile *p = profile__new("t", "samples");
	const char *order[] = {"m", "c", "x", "a", "n", "b"};
	const struct profile_node *top, *c;
	size_t i = 0;

	ASSERT_TRUE(p);
	ASSERT_TRUE(!profile__add(p, (struct prof_frame[]){F("top", JP_FK_NATIVE), F("m", JP_FK_JIT)},
				  2, 1));
	top = kid(profile__root(p), "top", JP_FK_NATIVE);
	ASSERT_TRUE(top);
	EXPECT_EQ(profile_node__child_count(top), 1);
	EXPECT_TRUE(profile_node__next(profile_node__child(top)) == NULL);
	for (size_t k = 1; k < sizeof(order) / sizeof(order[0]); k++)
		ASSERT_TRUE(!profile__add(
			p, (struct prof_frame[]){F("top", JP_FK_NATIVE), F(order[k], JP_FK_JIT)}, 2,
			k + 1));
	EXPECT_EQ(profile_node__child_count(top), 6);
	for (c = profile_node__child(top); c; c = profile_node__next(c), i++)
		EXPECT_STREQ(profile_node__name(c), ((const char *[]){"a", "b", "c", "m", "n", "x"})[i]);
	EXPECT_EQ(i, 6);
	EXPECT_EQ(profile_node__self(kid(top, "m", JP_FK_JIT)), 1);
	EXPECT_EQ(profile_node__self(kid(top, "b", JP_FK_JIT)), 6);
	EXPECT_EQ(profile_node__total(top), 21);
	EXPECT_TRUE(check_tree(profile__root(p)));
	profile__free(p);
}

TEST(many_random_stacks)
{
	struct profile *p = profile__new("t", "samples");
	struct prof_frame st[64];
	char names[40][16];
	__u64 sum = 0;
	unsigned int seed = 1;

	ASSERT_TRUE(p);
	for (int i = 0; i < 40; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	for (int i = 0; i < 50000; i++) {
		size_t d = 1 + rand_r(&seed) % 64;

		for (size_t j = 0; j < d; j++)
			st[j] = F(names[rand_r(&seed) % (j < 3 ? 3 : 40)], rand_r(&seed) % JP_FK_MAX);
		EXPECT_EQ(profile__add(p, st, d, 3), 0);
		sum += 3;
	}
	EXPECT_EQ(profile__total(p), sum);
	EXPECT_TRUE(check_tree(profile__root(p)));
	profile__free(p);
}

TEST(merge)
{
	struct profile *a = profile__new("a", "samples"), *b = profile__new("b", "samples");
	struct prof_frame s1[] = { F("m", JP_FK_NATIVE), F("x", JP_FK_JIT) };
	struct prof_frame s2[] = { F("m", JP_FK_NATIVE), F("y", JP_FK_JIT) };
	const struct profile_node *m;

	ASSERT_TRUE(a && b);
	EXPECT_EQ(profile__add(a, s1, 2, 2), 0);
	EXPECT_EQ(profile__add(b, s1, 2, 3), 0);
	EXPECT_EQ(profile__add(b, s2, 2, 4), 0);
	EXPECT_EQ(profile__add(b, s1, 1, 1), 0);
	EXPECT_EQ(profile__add(b, NULL, 0, 6), 0);
	EXPECT_EQ(profile__merge(a, b), 0);
	EXPECT_EQ(profile__total(a), 16);
	EXPECT_EQ(profile_node__self(profile__root(a)), 6);
	m = kid(profile__root(a), "m", JP_FK_NATIVE);
	ASSERT_TRUE(m);
	EXPECT_EQ(profile_node__total(m), 10);
	EXPECT_EQ(profile_node__self(m), 1);
	EXPECT_EQ(profile_node__total(kid(m, "x", JP_FK_JIT)), 5);
	EXPECT_EQ(profile_node__total(kid(m, "y", JP_FK_JIT)), 4);
	EXPECT_EQ(profile__node_count(a), 3);
	EXPECT_TRUE(check_tree(profile__root(a)));
	/* b unchanged, self-merge refused */
	EXPECT_EQ(profile__total(b), 14);
	EXPECT_EQ(profile__merge(a, a), -EINVAL);
	profile__free(a);
	profile__free(b);
}

static int map_upper_kind(void *ctx, const char *name, enum jp_frame_kind kind,
			  struct prof_frame *out)
{
	(void)kind;
	(*(int *)ctx)++;
	out->name = name;
	out->kind = JP_FK_NATIVE;
	return 0;
}

TEST(merge_mapped_joins_duplicates)
{
	struct profile *a = profile__new("a", "samples"), *b = profile__new("b", "samples");
	struct prof_frame s1[] = { F("m", JP_FK_JIT), F("x", JP_FK_JIT) };
	struct prof_frame s2[] = { F("m", JP_FK_INTERP), F("x", JP_FK_KERNEL) };
	int calls = 0;

	ASSERT_TRUE(a && b);
	EXPECT_EQ(profile__add(b, s1, 2, 3), 0);
	EXPECT_EQ(profile__add(b, s2, 2, 4), 0);
	EXPECT_EQ(profile__merge_mapped(a, b, map_upper_kind, &calls), 0);
	EXPECT_EQ(profile__node_count(a), 2);
	EXPECT_EQ(profile_node__self(kid(kid(profile__root(a), "m", 0), "x", 0)), 7);
	EXPECT_TRUE(calls > 0);
	EXPECT_TRUE(check_tree(profile__root(a)));
	profile__free(a);
	profile__free(b);
}

TEST(read_folded_basic)
{
	const char *in = "[process 1 java];[thread main];Main.run_[j];Foo.bar_[i] 10\n"
			 "[process 1 java];[thread main];Main.run_[j] 3\r\n"
			 "\n"
			 "[unknown];libc_[k];x_[0] 2\n"
			 " 4\n"
			 "a b;c d\t7\n"
			 "last 1"; /* no final newline */
	const struct profile_node *r, *n;
	size_t line = 0;
	int err;
	struct profile *p = read_str(in, &err, &line);

	ASSERT_TRUE(p);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(line, 0);
	EXPECT_EQ(profile__total(p), 27);
	r = profile__root(p);
	EXPECT_EQ(profile_node__self(r), 4);
	n = kid(r, "[process 1 java]", JP_FK_ROOT);
	ASSERT_TRUE(n);
	n = kid(n, "[thread main]", JP_FK_ROOT);
	ASSERT_TRUE(n);
	n = kid(n, "Main.run", JP_FK_JIT);
	ASSERT_TRUE(n);
	EXPECT_EQ(profile_node__self(n), 3);
	EXPECT_EQ(profile_node__self(kid(n, "Foo.bar", JP_FK_INLINED)), 10);
	n = kid(r, "[unknown]", JP_FK_NATIVE);
	ASSERT_TRUE(n);
	n = kid(n, "libc", JP_FK_KERNEL);
	ASSERT_TRUE(n);
	EXPECT_EQ(profile_node__self(kid(n, "x", JP_FK_INTERP)), 2);
	EXPECT_EQ(profile_node__self(kid(kid(r, "a b", 0), "c d", 0)), 7);
	EXPECT_EQ(profile_node__self(kid(r, "last", 0)), 1);
	EXPECT_TRUE(check_tree(r));
	profile__free(p);
}

TEST(read_folded_bad_lines)
{
	static const struct {
		const char *in;
		size_t line;
	} cases[] = {
		{ "a 1\nb\n", 2 },
		{ "a 1\n\nb x\n", 3 },
		{ "a 1.5\n", 1 },
		{ "a -1\n", 1 },
		{ "a 18446744073709551616\n", 1 },
		{ "5\n", 1 },
		{ "a 1\nb 2\nc 3 \n", 3 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t line = 0;
		int err;
		struct profile *p = read_str(cases[i].in, &err, &line);

		EXPECT_EQ(err, -EINVAL);
		EXPECT_EQ(line, cases[i].line);
		profile__free(p);
	}
	{
		/* a NUL byte inside a line */
		static const char in[] = "ok 1\nbad\0x 2\n";
		struct profile *p = profile__new("t", "samples");
		FILE *f = fmemopen((void *)in, sizeof(in) - 1, "r");
		size_t line = 0;

		ASSERT_TRUE(p && f);
		EXPECT_EQ(profile__read_folded(p, f, &line), -EINVAL);
		EXPECT_EQ(line, 2);
		EXPECT_EQ(profile__total(p), 1);
		fclose(f);
		profile__free(p);
	}
	{
		/* max weight parses */
		int err;
		size_t line = 0;
		struct profile *p = read_str("a 18446744073709551615\n", &err, &line);

		EXPECT_EQ(err, 0);
		EXPECT_TRUE(profile__total(p) == 18446744073709551615ULL);
		profile__free(p);
	}
}

TEST(read_folded_bare_suffix_is_a_name)
{
	int err;
	size_t line = 0;
	struct profile *p = read_str("_[k];x_[j]_[i] 1\n", &err, &line);
	const struct profile_node *n;

	EXPECT_EQ(err, 0);
	n = kid(profile__root(p), "_[k]", JP_FK_NATIVE);
	ASSERT_TRUE(n);
	EXPECT_TRUE(kid(n, "x_[j]", JP_FK_INLINED) != NULL);
	profile__free(p);
}

/* jprof report's readers and their budgets (issue 26) ------------------------------------------ */

/* reads s with the budgets; the reason goes to why */
static int read_why(const char *s, size_t len, size_t *ret_line, char *why, size_t why_len,
		    struct profile **ret_p)
{
	struct profile *p = profile__new("t", "samples");
	FILE *f = fmemopen((void *)s, len, "r");
	int err = p && f ? profile__read_folded_why(p, f, ret_line, why, why_len) : -ENOMEM;

	if (f)
		fclose(f);
	*ret_p = p;
	return err;
}

TEST(read_folded_budgets)
{
	size_t n = (64 << 10) + 100, line = 0;
	char *s = malloc(n + 16), why[160];
	struct profile *p;

	ASSERT_TRUE(s != NULL);
	/* a frame name of 64 KiB + 1 */
	memcpy(s, "ok 1\nmain;", 10);
	memset(s + 10, 'x', (64 << 10) + 1);
	strcpy(s + 10 + (64 << 10) + 1, " 1\n");
	EXPECT_EQ(read_why(s, strlen(s), &line, why, sizeof(why), &p), -E2BIG);
	EXPECT_EQ(line, 2);
	EXPECT_STREQ(why, "a frame name longer than 65536 (a budget of jprof report)");
	EXPECT_EQ(profile__total(p), 1);
	profile__free(p);
	/* exactly 64 KiB is a name */
	strcpy(s + 10 + (64 << 10), " 1\n");
	EXPECT_EQ(read_why(s, strlen(s), &line, why, sizeof(why), &p), 0);
	EXPECT_EQ(profile__total(p), 2);
	profile__free(p);
	free(s);

	/* 8193 frames in one stack; 8192 pass */
	s = malloc(8193 * 2 + 16);
	ASSERT_TRUE(s != NULL);
	for (size_t i = 0; i < 8193; i++)
		memcpy(s + 2 * i, "a;", 2);
	strcpy(s + 2 * 8193 - 1, " 1\n");
	EXPECT_EQ(read_why(s, strlen(s), &line, why, sizeof(why), &p), -E2BIG);
	EXPECT_EQ(line, 1);
	EXPECT_STREQ(why, "a stack deeper than 8192 (a budget of jprof report)");
	profile__free(p);
	strcpy(s + 2 * 8192 - 1, " 1\n");
	EXPECT_EQ(read_why(s, strlen(s), &line, why, sizeof(why), &p), 0);
	EXPECT_EQ(profile__node_count(p), 8192);
	profile__free(p);
	free(s);
}

TEST(read_folded_node_budget_and_random_roots)
{
	/* 1Mi + 1 distinct roots, in a scrambled order: refused at the line past the budget */
	size_t want = (1 << 20) + 1, len = 0, line = 0;
	char *s = malloc(want * 12 + 1), why[160];
	struct profile *p;

	ASSERT_TRUE(s != NULL);
	for (size_t i = 0; i < want; i++)
		len += (size_t)sprintf(s + len, "r%07zx 1\n", (i * 2654435761u) % want);
	EXPECT_EQ(read_why(s, len, &line, why, sizeof(why), &p), -E2BIG);
	EXPECT_EQ(line, want);
	EXPECT_STREQ(why, "more distinct frames in the tree than 1048576 (a budget of jprof report)");
	/* what was read is a sorted tree */
	EXPECT_TRUE(check_tree(profile__root(p)));
	EXPECT_EQ(profile__total(p), want);
	profile__free(p);
	free(s);
}

TEST(children_out_of_order_are_sorted_when_read)
{
	struct profile *p = profile__new("t", "samples");
	static const char *names[] = {"m", "c", "x", "a", "m", "b", "z", "c"};
	const struct profile_node *n;
	const char *want = "abcmxz";

	ASSERT_TRUE(p != NULL);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct prof_frame f[2] = {F(names[i], JP_FK_JIT), F("leaf", JP_FK_NATIVE)};

		EXPECT_EQ(profile__add(p, f, 2, 1), 0);
		EXPECT_EQ(profile__add(p, f, 1, 1), 0);
	}
	EXPECT_EQ(profile__node_count(p), 12);
	EXPECT_TRUE(check_tree(profile__root(p)));
	for (n = profile_node__child(profile__root(p)); n; n = profile_node__next(n), want++)
		EXPECT_TRUE(profile_node__name(n)[0] == *want);
	EXPECT_TRUE(*want == '\0');
	/* a child added after a read comes in its place too */
	{
		struct prof_frame f = F("d", JP_FK_JIT);

		EXPECT_EQ(profile__add(p, &f, 1, 1), 0);
		EXPECT_STREQ(profile_node__name(profile_node__next(profile_node__next(
				     profile_node__next(profile_node__child(profile__root(p)))))),
			     "d");
		EXPECT_TRUE(check_tree(profile__root(p)));
	}
	profile__free(p);
}

/* a pprof head (string table "", "samples", "count"; one sample type) and n copies of unit */
static unsigned char *pprof_bomb(const unsigned char *unit, size_t ulen, size_t n, size_t *ret_len)
{
	static const unsigned char head[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00,
					     0x32, 0x07, 's',  'a',  'm',  'p',  'l',  'e',
					     's',  0x32, 0x05, 'c',  'o',  'u',  'n',  't'};
	unsigned char *b = malloc(sizeof(head) + ulen * n);

	if (!b)
		return NULL;
	memcpy(b, head, sizeof(head));
	for (size_t i = 0; i < n; i++)
		memcpy(b + sizeof(head) + i * ulen, unit, ulen);
	*ret_len = sizeof(head) + ulen * n;
	return b;
}

TEST(read_pprof_budgets)
{
	static const struct {
		unsigned char unit[4];
		size_t ulen, n;
		const char *why;
	} cases[] = {
		{{0x32, 0x00}, 2, (2u << 20) - 3 + 1, /* the head has 3 strings */
		 "more than 2097152 strings (a budget of jprof report)"},
		{{0x12, 0x00}, 2, (4u << 20) + 1,
		 "more than 4194304 samples (a budget of jprof report)"},
		{{0x22, 0x02, 0x08, 0x01}, 4, (2u << 20) + 1,
		 "more than 2097152 locations (a budget of jprof report)"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct model *m = model__new();
		size_t len = 0;
		unsigned char *b = pprof_bomb(cases[i].unit, cases[i].ulen, cases[i].n, &len);
		char why[160];

		ASSERT_TRUE(m && b);
		EXPECT_EQ(model__read_pprof(m, b, len, why, sizeof(why)), -EINVAL);
		EXPECT_STREQ(why, cases[i].why);
		/* one fewer is within the budget */
		EXPECT_TRUE(model__read_pprof(m, b, len - cases[i].ulen, why, sizeof(why)) !=
			    -ENOMEM);
		EXPECT_TRUE(strstr(why, "budget") == NULL);
		free(b);
		model__free(m);
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_diff.c: report --diff's comparison: the grown and shrunk functions, folded base/new lines. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "out/diff.h"

#define F(n, k) ((struct prof_frame){(n), (k)})

/* main -> work -> {a, b}, main -> extra; b's weight and extra's as given */
static struct profile *trie(__u64 a, __u64 b, __u64 extra, const char *extra_name)
{
	struct profile *p = profile__new("t", "samples");
	struct prof_frame sa[] = {F("[process 1 java]", JP_FK_ROOT), F("Main.main", JP_FK_INTERP),
				  F("Main.work", JP_FK_JIT), F("Main.a", JP_FK_JIT)};
	struct prof_frame sb[] = {F("[process 1 java]", JP_FK_ROOT), F("Main.main", JP_FK_INTERP),
				  F("Main.work", JP_FK_JIT), F("Main.b", JP_FK_JIT)};
	struct prof_frame sx[] = {F("[process 1 java]", JP_FK_ROOT), F("Main.main", JP_FK_INTERP),
				  F(extra_name, JP_FK_JIT)};
	/* recursion: work -> work -> a counts work once per stack */
	struct prof_frame sr[] = {F("[process 1 java]", JP_FK_ROOT), F("Main.main", JP_FK_INTERP),
				  F("Main.work", JP_FK_JIT), F("Main.work", JP_FK_JIT),
				  F("Main.a", JP_FK_JIT)};

	if (!p)
		return NULL;
	if ((a && profile__add(p, sa, 4, a)) || (b && profile__add(p, sb, 4, b)) ||
	    (extra && profile__add(p, sx, 3, extra)) || profile__add(p, sr, 5, 10)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

static char *capture_top(const struct diff_table *t, size_t limit)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (out_diff_top_write(t, limit, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static char *capture_folded(const struct profile *b, const struct profile *n, bool absolute)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (out_diff_folded_write(b, n, absolute, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

static const struct diff_ent *find(const struct diff_table *t, const char *name)
{
	size_t n;
	const struct diff_ent *e = diff_table__ents(t, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	return NULL;
}

TEST(self_diff_has_no_change)
{
	struct profile *p = trie(50, 10, 5, "Main.gone");
	struct diff_table *t = NULL;
	const struct diff_ent *e;
	char *top, *folded;
	size_t n;

	ASSERT_TRUE(p);
	for (int absolute = 0; absolute < 2; absolute++) {
		ASSERT_TRUE(!diff_table__new(p, p, absolute, &t));
		e = diff_table__ents(t, &n);
		EXPECT_EQ(n, 6); /* root marker, main, work, a, b, gone */
		for (size_t i = 0; i < n; i++) {
			EXPECT_EQ(diff_ent__sign(&e[i]), 0);
			EXPECT_TRUE(e[i].d_total == 0 && e[i].d_self == 0 && e[i].f_total == 1);
			EXPECT_EQ(e[i].base_total, e[i].new_total);
		}
		/* work: 60 + its recursion's 10, counted once */
		EXPECT_EQ(find(t, "Main.work")->new_total, 70);
		EXPECT_EQ(find(t, "Main.a")->new_self, 60);
		top = capture_top(t, 10);
		ASSERT_TRUE(top);
		EXPECT_TRUE(strstr(top, "grew: 0 functions\nshrank: 0 functions\n"));
		free(top);
		diff_table__free(t);
		t = NULL;
		folded = capture_folded(p, p, absolute);
		ASSERT_TRUE(folded);
		EXPECT_STREQ(folded,
			     "[process 1 java];Main.main_[0];Main.gone_[j] 5 5\n"
			     "[process 1 java];Main.main_[0];Main.work_[j];Main.a_[j] 50 50\n"
			     "[process 1 java];Main.main_[0];Main.work_[j];Main.b_[j] 10 10\n"
			     "[process 1 "
			     "java];Main.main_[0];Main.work_[j];Main.work_[j];Main.a_[j] 10 10\n");
		free(folded);
	}
	profile__free(p);
}

TEST(a_method_twice_as_slow_grows_most)
{
	/* base: b is 10 of 75; new: 20 of 85 (shares 13.33% -> 23.53%) */
	struct profile *b = trie(50, 10, 5, "Main.gone"), *n = trie(50, 20, 5, "Main.fresh");
	struct diff_table *t = NULL;
	const struct diff_ent *e, *x;
	char *top;
	size_t cnt;

	ASSERT_TRUE(b && n);
	ASSERT_TRUE(!diff_table__new(b, n, false, &t));
	e = diff_table__ents(t, &cnt);
	EXPECT_STREQ(e[0].name, "Main.b");
	EXPECT_EQ(diff_ent__sign(&e[0]), 1);
	EXPECT_TRUE(fabs(e[0].f_total - (20.0 / 85) / (10.0 / 75)) < 1e-9);
	EXPECT_TRUE(fabs(e[0].d_self - (100.0 * 20 / 85 - 100.0 * 10 / 75)) < 1e-9);
	/* only in BASE: factor 0, among the shrunk; only in NEW: infinite factor */
	x = find(t, "Main.gone");
	ASSERT_TRUE(x);
	EXPECT_EQ(diff_ent__sign(x), -1);
	EXPECT_TRUE(x->f_total == 0 && x->new_total == 0 && x->base_total == 5);
	x = find(t, "Main.fresh");
	ASSERT_TRUE(x);
	EXPECT_TRUE(isinf(x->f_total));
	/* a's share shrank though its weight did not change */
	EXPECT_EQ(diff_ent__sign(find(t, "Main.a")), -1);
	top = capture_top(t, 1);
	ASSERT_TRUE(top);
	EXPECT_TRUE(strstr(top, "grew: 3 functions\n")); /* b, fresh, and work (gone shrank) */
	EXPECT_TRUE(strstr(top, "1.76x  Main.b_[j]\n"));
	free(top);
	diff_table__free(t);
	/* absolute: the raw weights; the caller chain grew by b's 10 too */
	ASSERT_TRUE(!diff_table__new(b, n, true, &t));
	x = find(t, "Main.b");
	EXPECT_TRUE(x->d_total == 10 && x->f_total == 2);
	x = find(t, "Main.a");
	EXPECT_EQ(diff_ent__sign(x), 0);
	diff_table__free(t);
	profile__free(b);
	profile__free(n);
}

TEST(folded_lines_scale_base_to_new)
{
	struct profile *b = trie(50, 10, 5, "Main.gone"), *n = trie(100, 40, 10, "Main.fresh");
	char *s;

	ASSERT_TRUE(b && n);
	/* base 75, new 160: base weights times 160/75, rounded */
	s = capture_folded(b, n, false);
	ASSERT_TRUE(s);
	EXPECT_STREQ(
		s, "[process 1 java];Main.main_[0];Main.fresh_[j] 0 10\n"
		   "[process 1 java];Main.main_[0];Main.gone_[j] 11 0\n"
		   "[process 1 java];Main.main_[0];Main.work_[j];Main.a_[j] 107 100\n"
		   "[process 1 java];Main.main_[0];Main.work_[j];Main.b_[j] 21 40\n"
		   "[process 1 java];Main.main_[0];Main.work_[j];Main.work_[j];Main.a_[j] 21 10\n");
	free(s);
	s = capture_folded(b, n, true);
	ASSERT_TRUE(s);
	EXPECT_TRUE(strstr(s, "Main.work_[j];Main.a_[j] 50 100\n"));
	EXPECT_TRUE(strstr(s, "Main.gone_[j] 5 0\n"));
	free(s);
	profile__free(b);
	profile__free(n);
}

TEST(empty_sides)
{
	struct profile *e = profile__new("t", "samples"), *n = trie(1, 1, 0, "x");
	struct diff_table *t = NULL;
	char *s;

	ASSERT_TRUE(e && n);
	ASSERT_TRUE(!diff_table__new(e, n, false, &t));
	EXPECT_EQ(diff_ent__sign(find(t, "Main.b")), 1);
	diff_table__free(t);
	ASSERT_TRUE(!diff_table__new(n, e, false, &t));
	EXPECT_EQ(diff_ent__sign(find(t, "Main.b")), -1);
	diff_table__free(t);
	s = capture_folded(n, e, false);
	ASSERT_TRUE(s);
	EXPECT_TRUE(strstr(s, "Main.b_[j] 1 0\n"));
	free(s);
	profile__free(e);
	profile__free(n);
}

/* a folded file's root "java" and libjvm frames are native, in its pprof twin a marker, JVM */
TEST(marker_matches_native_root)
{
	struct profile *b = profile__new("t", "samples"), *n = profile__new("t", "samples");
	struct prof_frame sb[] = {F("java", JP_FK_ROOT), F("Thread::run", JP_FK_JVM),
				  F("Main.a", JP_FK_JIT)};
	struct prof_frame sn[] = {F("java", JP_FK_NATIVE), F("Thread::run", JP_FK_NATIVE),
				  F("Main.a", JP_FK_JIT)};
	struct diff_table *t = NULL;
	const struct diff_ent *e;
	size_t cnt;

	ASSERT_TRUE(b && n && !profile__add(b, sb, 3, 5) && !profile__add(n, sn, 3, 5));
	ASSERT_TRUE(!diff_table__new(b, n, false, &t));
	e = diff_table__ents(t, &cnt);
	EXPECT_EQ(cnt, 3);
	for (size_t i = 0; i < cnt; i++)
		EXPECT_EQ(diff_ent__sign(&e[i]), 0);
	diff_table__free(t);
	profile__free(b);
	profile__free(n);
}

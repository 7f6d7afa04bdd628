// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sym_ksyms.c: kallsyms parsing and kernel lookups. */
#include <errno.h>

#include "harness.h"
#include "sym/ksyms.h"
#include "sym/syms.h"
#include "sym_fixture.h"

TEST(ksyms_fixture_file)
{
	const char *name, *mod;
	struct ksyms *k = ksyms__load_file(fx_path("kallsyms.txt"));
	__u64 off;

	ASSERT_TRUE(k);
	/* _text/startup_64 alias, do_one_initcall, schedule, weak_thing, _etext, 3 module syms */
	EXPECT_EQ(ksyms__count(k), 8);
	EXPECT_EQ(ksyms__bad_lines(k), 4);
	EXPECT_EQ(ksyms__find(k, 0xffffffff81002010ull, &name, &mod, &off), 0);
	EXPECT_STREQ(name, "schedule");
	EXPECT_TRUE(mod == NULL);
	EXPECT_EQ(off, 0x10);
	EXPECT_EQ(ksyms__find(k, 0xffffffff81000005ull, &name, &mod, &off), 0);
	EXPECT_STREQ(name, "_text"); /* first listed alias wins */
	EXPECT_EQ(ksyms__find(k, 0xffffffff81002400ull, &name, &mod, &off), 0);
	EXPECT_STREQ(name, "weak_thing");
	EXPECT_EQ(off, 0);
	/* D symbols are skipped: the address belongs to the preceding text symbol */
	EXPECT_EQ(ksyms__find(k, 0xffffffff81003004ull, &name, &mod, &off), 0);
	EXPECT_STREQ(name, "weak_thing");
	EXPECT_EQ(ksyms__find(k, 0xffffffffc0a01010ull, &name, &mod, &off), 0);
	EXPECT_STREQ(name, "ext4_readpage");
	EXPECT_STREQ(mod, "ext4");
	EXPECT_EQ(ksyms__find(k, 0xffffffffc0a00001ull, &name, &mod, &off), 0);
	EXPECT_STREQ(name, "ext4_init");
	EXPECT_STREQ(mod, "ext4");
	EXPECT_EQ(ksyms__find(k, 0xffffffffc0a02001ull, &name, &mod, &off), 0);
	EXPECT_STREQ(mod, "nf_tables");
	EXPECT_EQ(ksyms__find(k, 0xffffffff80000000ull, &name, &mod, &off), -ENOENT);
	/* far past the last symbol */
	EXPECT_EQ(ksyms__find(k, 0xffffffffc1a02000ull, &name, &mod, &off), -ENOENT);
	ksyms__free(k);
}

TEST(ksyms_buffer_edge_cases)
{
	static const char txt[] = "ffffffff81000000 T a\n"
				  "ffffffff81000100 T b\n"
				  "0000000000000000 T hidden_by_kptr_restrict\n"
				  "fffffffffffffffff T too_many_digits\n"
				  "ffffffff81000200 T c\t[m]"; /* no final newline */
	const char *name, *mod;
	struct ksyms *k = ksyms__load_buf(txt, sizeof(txt) - 1);
	__u64 off;

	ASSERT_TRUE(k);
	EXPECT_EQ(ksyms__count(k), 3);
	EXPECT_EQ(ksyms__bad_lines(k), 1);
	EXPECT_EQ(ksyms__find(k, 0xffffffff810000ffull, &name, &mod, &off), 0);
	EXPECT_STREQ(name, "a");
	EXPECT_EQ(off, 0xff);
	EXPECT_EQ(ksyms__find(k, 0xffffffff81000200ull, &name, &mod, &off), 0);
	EXPECT_STREQ(name, "c");
	EXPECT_STREQ(mod, "m");
	ksyms__free(k);

	k = ksyms__load_buf("", 0);
	ASSERT_TRUE(k);
	EXPECT_EQ(ksyms__count(k), 0);
	EXPECT_EQ(ksyms__find(k, 1, &name, &mod, &off), -ENOENT);
	ksyms__free(k);
	ksyms__free(NULL);
}

TEST(ksyms_overlong_line_is_skipped)
{
	static char buf[3 * 4096];
	struct ksyms *k;
	size_t n;

	memset(buf, 'x', 2 * 4096);
	buf[2 * 4096] = '\n';
	n = 2 * 4096 + 1;
	n += (size_t)sprintf(buf + n, "ffffffff81000000 T after\n");
	k = ksyms__load_buf(buf, n);
	ASSERT_TRUE(k);
	EXPECT_EQ(ksyms__count(k), 1);
	EXPECT_EQ(ksyms__bad_lines(k), 1);
	ksyms__free(k);
}

TEST(syms_kernel_front)
{
	struct syms *s = syms__new(fx_path("kallsyms.txt"));
	struct jp_sym r;

	ASSERT_TRUE(s);
	EXPECT_EQ(syms__kernel(s, 0xffffffff81001004ull, &r), 0);
	EXPECT_STREQ(r.name, "do_one_initcall");
	EXPECT_STREQ(r.dso, "[kernel]");
	EXPECT_EQ(r.offset, 4);
	EXPECT_EQ(r.kind, JP_FK_KERNEL);
	EXPECT_EQ(syms__kernel(s, 0xffffffffc0a01000ull, &r), 0);
	EXPECT_STREQ(r.dso, "ext4");
	EXPECT_EQ(syms__kernel(s, 0x1000, &r), -ENOENT);
	syms__free(s);
	EXPECT_TRUE(syms__new("/nonexistent/kallsyms") == NULL);
	syms__free(NULL);
}

TEST(ksyms_real_proc_kallsyms)
{
	struct ksyms *k = ksyms__load_file(NULL);

	/* readable everywhere; addresses may be hidden (then nothing is kept) */
	ASSERT_TRUE(k);
	EXPECT_EQ(ksyms__bad_lines(k), 0);
	ksyms__free(k);
}

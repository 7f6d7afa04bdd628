// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sym_maps.c: /proc/<pid>/maps parsing. */
#include <errno.h>
#include <unistd.h>

#include "harness.h"
#include "sym/procmaps.h"
#include "sym_fixture.h"

TEST(maps_fixture_all)
{
	FILE *f = fopen(fx_path("maps.txt"), "r");
	const struct jp_map *m;
	struct jp_maps *mm = NULL;

	ASSERT_TRUE(f);
	EXPECT_EQ(procmaps_parse_stream(f, false, &mm), 0);
	fclose(f);
	ASSERT_TRUE(mm);
	EXPECT_EQ(mm->n, 12);
	EXPECT_EQ(mm->bad_lines, 4);
	EXPECT_EQ(mm->first_bad_line, 10);

	m = procmaps_find(mm, 0x55d0c6a01234ull);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->start, 0x55d0c6a01000ull);
	EXPECT_EQ(m->offset, 0x1000);
	EXPECT_EQ(m->perms, JP_MAP_R | JP_MAP_X | JP_MAP_P);
	EXPECT_EQ(m->dev_major, 8);
	EXPECT_EQ(m->dev_minor, 1);
	EXPECT_EQ(m->inode, 1048601);
	EXPECT_EQ(m->type, JP_MAP_FILE);
	EXPECT_STREQ(m->path, "/usr/bin/fx");
	EXPECT_TRUE(!m->deleted);

	m = procmaps_find(mm, 0x7f0000000010ull);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->type, JP_MAP_ANON);
	EXPECT_TRUE(m->path == NULL);
	EXPECT_EQ(m->perms, JP_MAP_R | JP_MAP_W | JP_MAP_X | JP_MAP_P);

	m = procmaps_find(mm, 0x7f0000200000ull);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->type, JP_MAP_ANON_NAMED);
	EXPECT_STREQ(m->path, "[anon:jit code]");

	m = procmaps_find(mm, 0x7f1000000fffull);
	ASSERT_TRUE(m);
	EXPECT_STREQ(m->path, "/tmp/old lib.so");
	EXPECT_TRUE(m->deleted);
	EXPECT_EQ(m->dev_major, 0xfd);
	EXPECT_EQ(m->offset, 0x10000);

	m = procmaps_find(mm, 0x7f1000001000ull);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->type, JP_MAP_ANON_NAMED);
	EXPECT_STREQ(m->path, "/memfd:jit");
	EXPECT_TRUE(m->deleted);

	m = procmaps_find(mm, 0x7f2000000000ull);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->type, JP_MAP_ANON);

	m = procmaps_find(mm, 0x7ffc00100000ull);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->type, JP_MAP_SPECIAL);
	EXPECT_STREQ(m->path, "[vdso]");
	m = procmaps_find(mm, 0xffffffffff600000ull);
	ASSERT_TRUE(m);
	EXPECT_STREQ(m->path, "[vsyscall]");

	EXPECT_TRUE(procmaps_find(mm, 0x55d0c6a03000ull) == NULL); /* the gap before [heap] */
	EXPECT_TRUE(procmaps_find(mm, 0) == NULL);
	EXPECT_TRUE(procmaps_find(mm, ~0ull) == NULL);
	procmaps_free(mm);
}

TEST(maps_only_exec)
{
	FILE *f = fopen(fx_path("maps.txt"), "r");
	struct jp_maps *mm = NULL;
	size_t i;

	ASSERT_TRUE(f);
	EXPECT_EQ(procmaps_parse_stream(f, true, &mm), 0);
	fclose(f);
	ASSERT_TRUE(mm);
	EXPECT_EQ(mm->n, 8);
	for (i = 0; i < mm->n; i++)
		EXPECT_TRUE(mm->maps[i].perms & JP_MAP_X);
	procmaps_free(mm);
}

TEST(maps_unsorted_and_overlapping)
{
	static const char txt[] = "2000-3000 r-xp 00000000 00:00 0 /b\n"
				  "1000-2000 r-xp 00000000 00:00 0 /a\n"
				  "1800-2800 r-xp 00000000 00:00 0 /overlap\n"
				  "\n"
				  "4000-5000 r-xp 00000000 00:00 0";
	struct jp_maps *mm = NULL;

	EXPECT_EQ(procmaps_parse_buf(txt, sizeof(txt) - 1, false, &mm), 0);
	ASSERT_TRUE(mm);
	EXPECT_EQ(mm->n, 3);
	EXPECT_EQ(mm->bad_lines, 1);
	EXPECT_STREQ(procmaps_find(mm, 0x1fff)->path, "/a");
	EXPECT_STREQ(procmaps_find(mm, 0x2000)->path, "/b");
	EXPECT_EQ(procmaps_find(mm, 0x4800)->type, JP_MAP_ANON);
	procmaps_free(mm);
	procmaps_free(NULL);
}

TEST(maps_self)
{
	struct jp_maps *mm = NULL;
	const struct jp_map *m;

	EXPECT_EQ(procmaps_read_pid((__u32)getpid(), true, &mm), 0);
	ASSERT_TRUE(mm);
	EXPECT_EQ(mm->bad_lines, 0);
	m = procmaps_find(mm, (__u64)(unsigned long)&procmaps_find);
	ASSERT_TRUE(m);
	EXPECT_EQ(m->type, JP_MAP_FILE);
	procmaps_free(mm);
	EXPECT_EQ(procmaps_read_pid(0x7ffffff0u, true, &mm), -ESRCH);
}

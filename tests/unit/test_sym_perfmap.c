// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sym_perfmap.c: perf map parsing, overlaps, incremental reads, safety. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "sym/perfmap.h"
#include "sym_fixture.h"

static const char *find(struct perfmap *pm, __u64 addr, __u64 *off)
{
	__u64 dummy;

	return perfmap__find(pm, addr, off ? off : &dummy);
}

TEST(perfmap_fixture)
{
	struct perfmap *pm = perfmap__new();
	FILE *f = fopen(fx_path("perf-fixture.map"), "r");
	__u64 off;

	ASSERT_TRUE(pm && f);
	EXPECT_EQ(perfmap__parse_stream(pm, f), 0);
	fclose(f);
	/* garbage, bad size, missing name */
	EXPECT_EQ(perfmap__bad_lines(pm), 3);
	EXPECT_EQ(perfmap__last_bad_line(pm), 7);
	EXPECT_STREQ(find(pm, 0x7f0000001000ull, &off), "Interpreter");
	EXPECT_EQ(off, 0);
	EXPECT_TRUE(find(pm, 0x7f0000001100ull, NULL) == NULL);
	EXPECT_STREQ(find(pm, 0x7f000000303full, &off), "java.lang.String::hashCode()");
	EXPECT_EQ(off, 0x3f);
	/* Busy::spin (later) overrides the middle of Object::wait (earlier) */
	EXPECT_STREQ(find(pm, 0x7f000000407full, &off), "Ljava/lang/Object;::wait");
	EXPECT_STREQ(find(pm, 0x7f0000004080ull, &off), "Busy::spin");
	EXPECT_EQ(off, 0);
	EXPECT_STREQ(find(pm, 0x7f00000040c0ull, &off), "Ljava/lang/Object;::wait");
	EXPECT_EQ(off, 0xc0);
	EXPECT_TRUE(find(pm, 0x7f0000007000ull, NULL) == NULL); /* zero-sized */
	/* a stream's unterminated last line counts */
	EXPECT_STREQ(find(pm, 0x7f0000008010ull, NULL), "tail without newline");
	perfmap__free(pm);
}

TEST(perfmap_later_wins)
{
	static const char a[] = "1000 100 old_a\n"
				"2000 100 old_b\n"
				"1080 100 new_over_a_and_gap\n"
				"1000 10 newest\n"
				"1f00 200 covers_b\n";
	struct perfmap *pm = perfmap__new();
	__u64 off;

	ASSERT_TRUE(pm);
	EXPECT_EQ(perfmap__parse_buf(pm, a, sizeof(a) - 1, true), (long)sizeof(a) - 1);
	EXPECT_STREQ(find(pm, 0x1000, NULL), "newest");
	EXPECT_STREQ(find(pm, 0x1010, &off), "old_a");
	EXPECT_EQ(off, 0x10);
	EXPECT_STREQ(find(pm, 0x1080, NULL), "new_over_a_and_gap");
	EXPECT_STREQ(find(pm, 0x117f, &off), "new_over_a_and_gap");
	EXPECT_EQ(off, 0xff);
	EXPECT_TRUE(find(pm, 0x1180, NULL) == NULL);
	EXPECT_STREQ(find(pm, 0x2050, &off), "covers_b");
	EXPECT_EQ(off, 0x150);

	/* a second batch over the merged map */
	static const char b[] = "1004 4 again\n3000 10 fresh\n";
	EXPECT_EQ(perfmap__parse_buf(pm, b, sizeof(b) - 1, true), (long)sizeof(b) - 1);
	EXPECT_STREQ(find(pm, 0x1003, NULL), "newest");
	EXPECT_STREQ(find(pm, 0x1005, NULL), "again");
	EXPECT_STREQ(find(pm, 0x1008, NULL), "newest");
	EXPECT_STREQ(find(pm, 0x300f, NULL), "fresh");
	EXPECT_STREQ(find(pm, 0x20ff, NULL), "covers_b");
	perfmap__free(pm);
}

TEST(perfmap_partial_line_waits)
{
	static const char a[] = "1000 10 first\n2000 10 seco";
	struct perfmap *pm = perfmap__new();
	long used;

	ASSERT_TRUE(pm);
	used = perfmap__parse_buf(pm, a, sizeof(a) - 1, false);
	EXPECT_EQ(used, 14);
	EXPECT_EQ(perfmap__count(pm), 1);
	used = perfmap__parse_buf(pm, "2000 10 second\n", 15, false);
	EXPECT_EQ(used, 15);
	EXPECT_STREQ(find(pm, 0x2001, NULL), "second");
	perfmap__free(pm);
}

TEST(perfmap_incremental_file)
{
	char dir[] = "/tmp/jp_pm_XXXXXX", path[64], link[64];
	struct perfmap *pm = perfmap__new();
	const char *held;
	int fd;

	ASSERT_TRUE(pm && mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_TRUE(fd >= 0);
	EXPECT_EQ(write(fd, "1000 10 a\n2000 10 b", 19), 19);
	EXPECT_EQ(perfmap__load_path(pm, path), 1);
	EXPECT_TRUE(find(pm, 0x2000, NULL) == NULL);
	EXPECT_EQ(write(fd, "b\n3000 10 c\n", 12), 12);
	EXPECT_EQ(perfmap__load_path(pm, path), 2);
	EXPECT_STREQ(find(pm, 0x2000, NULL), "bb");
	EXPECT_STREQ(find(pm, 0x3000, NULL), "c");
	EXPECT_EQ(perfmap__load_path(pm, path), 0); /* nothing new */
	held = find(pm, 0x1000, NULL);

	/* truncated and rewritten (a new JVM with the same pid): start over */
	EXPECT_EQ(ftruncate(fd, 0), 0);
	EXPECT_EQ(pwrite(fd, "5000 10 z\n", 10, 0), 10);
	EXPECT_EQ(perfmap__load_path(pm, path), 1);
	EXPECT_TRUE(find(pm, 0x1000, NULL) == NULL);
	EXPECT_STREQ(find(pm, 0x5000, NULL), "z");
	EXPECT_STREQ(held, "a"); /* names handed out earlier stay valid */
	close(fd);

	/* symlinks are refused */
	snprintf(link, sizeof(link), "%s/perf-2.map", dir);
	EXPECT_EQ(symlink(path, link), 0);
	EXPECT_EQ(perfmap__load_path(pm, link), -ELOOP);
	/* so are non-regular files */
	EXPECT_EQ(perfmap__load_path(pm, dir), -EBADFD);
	unlink(link);
	unlink(path);
	rmdir(dir);
	perfmap__free(pm);
}

TEST(perfmap_many_random_overlaps)
{
	struct perfmap *pm = perfmap__new();
	char *buf = malloc(1 << 20);
	size_t n = 0, i;
	__u64 off;

	ASSERT_TRUE(pm && buf);
	srand(7);
	for (i = 0; i < 20000; i++)
		n += (size_t)sprintf(buf + n, "%x %x f%zu\n", 0x100000 + (rand() % 0x10000) * 16,
				     16 + rand() % 256, i);
	/* the last line wins where it lands */
	n += (size_t)sprintf(buf + n, "100800 10 last\n");
	EXPECT_EQ(perfmap__parse_buf(pm, buf, n, true), (long)n);
	EXPECT_STREQ(perfmap__find(pm, 0x100805, &off), "last");
	EXPECT_EQ(off, 5);
	free(buf);
	perfmap__free(pm);
}

TEST(perfmap_stub_names)
{
	EXPECT_TRUE(perfmap_name_is_jvm_stub("Interpreter"));
	EXPECT_TRUE(perfmap_name_is_jvm_stub("StubRoutines::call_stub"));
	EXPECT_TRUE(perfmap_name_is_jvm_stub("I2C/C2I adapters"));
	EXPECT_TRUE(perfmap_name_is_jvm_stub("vtable chunks"));
	EXPECT_TRUE(perfmap_name_is_jvm_stub("RuntimeStub - _new_array_Java"));
	EXPECT_TRUE(perfmap_name_is_jvm_stub(""));
	EXPECT_TRUE(!perfmap_name_is_jvm_stub("java.lang.String::hashCode()"));
	EXPECT_TRUE(!perfmap_name_is_jvm_stub("Ljava/lang/String;::hashCode"));
	EXPECT_TRUE(!perfmap_name_is_jvm_stub("Busy::spin"));
	EXPECT_TRUE(!perfmap_name_is_jvm_stub("Busy.spin"));
}

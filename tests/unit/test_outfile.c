// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_outfile.c: the -o file is replaced atomically: a dropped write leaves the old file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "out/outfile.h"

static char dir[256];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "build/tmp-test-outfile-%d", (int)getpid());
	mkdir("build", 0755);
	mkdir(dir, 0755);
}

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

static int count_entries(void)
{
	char cmd[512], buf[64];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	p = popen(cmd, "r");
	if (p && fgets(buf, sizeof(buf), p))
		n = atoi(buf);
	if (p)
		pclose(p);
	return n;
}

TEST(commit_replaces_abort_keeps)
{
	char path[512], buf[64], why[256];
	struct outfile *o = NULL;

	make_dir();
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	EXPECT_EQ(outfile__open(path, &o, why, sizeof(why)), 0);
	EXPECT_EQ(access(path, F_OK), -1); /* nothing visible before the commit */
	fputs("first\n", outfile__stream(o));
	EXPECT_EQ(outfile__commit(o), 0);
	slurp(path, buf, sizeof(buf));
	EXPECT_STREQ(buf, "first\n");

	EXPECT_EQ(outfile__open(path, &o, why, sizeof(why)), 0);
	fputs("second, dropped\n", outfile__stream(o));
	outfile__abort(o);
	slurp(path, buf, sizeof(buf));
	EXPECT_STREQ(buf, "first\n");
	EXPECT_EQ(count_entries(), 1); /* no temporary file left behind */

	/* a symlink owned by us in a private directory is followed: its target is replaced */
	char link[512], target[512];
	snprintf(link, sizeof(link), "%s/link.folded", dir);
	snprintf(target, sizeof(target), "out.folded");
	EXPECT_EQ(symlink(target, link), 0);
	EXPECT_EQ(outfile__open(link, &o, why, sizeof(why)), 0);
	fputs("via link\n", outfile__stream(o));
	EXPECT_EQ(outfile__commit(o), 0);
	slurp(path, buf, sizeof(buf));
	EXPECT_STREQ(buf, "via link\n");
	struct stat st;
	EXPECT_EQ(lstat(link, &st), 0);
	EXPECT_TRUE(S_ISLNK(st.st_mode));

	/* errors */
	EXPECT_EQ(outfile__open(dir, &o, why, sizeof(why)), -EISDIR);
	char nodir[512];
	snprintf(nodir, sizeof(nodir), "%s/no/such/dir/x.folded", dir);
	EXPECT_EQ(outfile__open(nodir, &o, why, sizeof(why)), -ENOENT);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

TEST(devices_are_written_in_place)
{
	struct outfile *o = NULL;
	char why[256];

	EXPECT_EQ(outfile__open("/dev/null", &o, why, sizeof(why)), 0);
	fputs("x\n", outfile__stream(o));
	EXPECT_EQ(outfile__commit(o), 0);
	if (!access("/dev/full", W_OK)) {
		EXPECT_EQ(outfile__open("/dev/full", &o, why, sizeof(why)), 0);
		fputs("x\n", outfile__stream(o));
		EXPECT_EQ(outfile__commit(o), -ENOSPC);
	}
}

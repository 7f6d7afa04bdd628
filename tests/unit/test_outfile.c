// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_outfile.c: the -o file is replaced atomically: a dropped write leaves the old file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * A directory link planted by another user in a sticky world-writable directory is not
 * followed, wherever it is on the path (also through a link's target); the refusal names
 * it. fs.protected_symlinks plays no part: the check is jprof's own.
 */
TEST(planted_directory_link_is_refused)
{
	char sticky[300], victim[300], link[400], path[600], why[512], chain[700], own[400];
	struct outfile *o = NULL;
	struct stat st;

	make_dir();
	snprintf(sticky, sizeof(sticky), "%s/sticky", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	EXPECT_EQ(mkdir(sticky, 0755), 0);
	EXPECT_EQ(chmod(sticky, 01777), 0);
	EXPECT_EQ(mkdir(victim, 0755), 0);
	snprintf(link, sizeof(link), "%s/link", sticky);
	EXPECT_EQ(symlink("../victim", link), 0);
	if (geteuid() == 0)
		EXPECT_EQ(lchown(link, 65534, 65534), 0);
	snprintf(path, sizeof(path), "%s/x.folded", link);
	if (geteuid() == 0) {
		EXPECT_EQ(outfile__open(path, &o, why, sizeof(why)), -EPERM);
		EXPECT_TRUE(strstr(why, "/sticky/link is a symbolic link owned by another user") != NULL);
		/* nothing created in the target directory */
		snprintf(chain, sizeof(chain), "ls -A %s | wc -l | grep -qx 0", victim);
		EXPECT_EQ(system(chain), 0);
		/* reached through a link of our own elsewhere: still refused */
		snprintf(own, sizeof(own), "%s/own", dir);
		EXPECT_EQ(symlink("sticky/link/deeper", own), 0);
		snprintf(chain, sizeof(chain), "%s/own", dir);
		EXPECT_EQ(outfile__open(chain, &o, why, sizeof(why)), -EPERM);
		unlink(own);
		/* the same link, owned by root (the directory's owner), is followed */
		EXPECT_EQ(lchown(link, 0, 0), 0);
	}
	EXPECT_EQ(outfile__open(path, &o, why, sizeof(why)), 0);
	fputs("ok\n", outfile__stream(o));
	EXPECT_EQ(outfile__commit(o), 0);
	snprintf(path, sizeof(path), "%s/x.folded", victim);
	EXPECT_EQ(stat(path, &st), 0);
	unlink(path);
	unlink(link);
	rmdir(sticky);
	rmdir(victim);
	rmdir(dir);
}

TEST(dev_stdout_is_written_in_place)
{
	struct outfile *o = NULL;
	char why[256];
	int p[2];

	/* /dev/stdout -> /proc/self/fd/1 -> pipe:[N]: a magic link, opened as the kernel does */
	EXPECT_EQ(pipe(p), 0);
	int saved = dup(1);
	EXPECT_EQ(dup2(p[1], 1), 1);
	EXPECT_EQ(outfile__open("/dev/stdout", &o, why, sizeof(why)), 0);
	if (o) {
		fputs("x\n", outfile__stream(o));
		EXPECT_EQ(outfile__commit(o), 0);
	}
	dup2(saved, 1);
	close(saved);
	char buf[8] = {0};
	close(p[1]);
	EXPECT_EQ(read(p[0], buf, sizeof(buf)), 2);
	EXPECT_STREQ(buf, "x\n");
	close(p[0]);
}

/* a killed jprof's temporary file is removed by the next run; a live one's is not */
TEST(stale_temporary_files_of_dead_runs_are_removed)
{
	char path[600], dead[600], live[600], why[256];
	struct outfile *o = NULL;

	make_dir();
	snprintf(path, sizeof(path), "%s/p.folded", dir);
	snprintf(dead, sizeof(dead), "%s/.p.folded.jprof-99999999-deadbeef", dir);
	snprintf(live, sizeof(live), "%s/.p.folded.jprof-%d-deadbeef", dir, (int)getppid());
	fclose(fopen(dead, "w"));
	fclose(fopen(live, "w"));
	EXPECT_EQ(outfile__open(path, &o, why, sizeof(why)), 0);
	EXPECT_EQ(outfile__commit(o), 0);
	EXPECT_EQ(access(dead, F_OK), -1);
	EXPECT_EQ(access(live, F_OK), 0);
	unlink(live);
	unlink(path);
	rmdir(dir);
}

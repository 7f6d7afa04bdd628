// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_agent_files.c: the agent channel's names (jprof-<nspid>-<token>.ring) are recognised
 * only with their pid and a whole token; the sweep removes a stale ring of the JVM's user
 * and its dictionary, and nothing else (a live ring, other names, a symlink, a directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "jvm/agent_files.h"
#include "ring.h"

TEST(chan_name_match)
{
	const char *base = NULL;

	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-42-0123456789abcdef.ring", 42, &base), 1);
	EXPECT_STREQ(base, "jprof-42-0123456789abcdef.ring");
	EXPECT_EQ(jvm_chan_name_match("jprof-42-0123456789abcdef.ring", 42, NULL), 1);
	/* a container's /tmp seen from the host */
	EXPECT_EQ(
		jvm_chan_name_match("/var/lib/x/merged/tmp/jprof-7-ffffffffffffffff.ring", 7, NULL),
		1);
	/* an agent before the token */
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-42.ring", 42, NULL), 2);
	/* another pid, a pid's suffix, short or long or upper-case tokens, other extensions */
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-43-0123456789abcdef.ring", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-142-0123456789abcdef.ring", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match("/tmp/xjprof-42-0123456789abcdef.ring", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-142.ring", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-42-0123456789abcde.ring", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-42-0123456789abcdef0.ring", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-42-0123456789ABCDEF.ring", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-42-0123456789abcdef.dict", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match("/tmp/jprof-42-0123456789abcdef.ring (deleted)", 42, NULL),
		  0);
	EXPECT_EQ(jvm_chan_name_match("", 42, NULL), 0);
	EXPECT_EQ(jvm_chan_name_match(".ring", 42, NULL), 0);
}

/* this process maps a ring: found by its maps, of the names before the token refused */
TEST(chan_files_find_in_maps)
{
	struct jvm_chan_files cf;
	char path[128];
	void *m;
	int fd;

	EXPECT_EQ(jvm_chan_files_find((__u32)getpid(), (__u32)getpid(), &cf), -ENOENT);
	snprintf(path, sizeof(path), "/tmp/jprof-%d.ring", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ(ftruncate(fd, 4096), 0);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_TRUE(m != MAP_FAILED);
	close(fd);
	EXPECT_EQ(jvm_chan_files_find((__u32)getpid(), (__u32)getpid(), &cf), -EPROTO);
	munmap(m, 4096);
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/jprof-%d-00112233445566ff.ring", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ(ftruncate(fd, 4096), 0);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_TRUE(m != MAP_FAILED);
	close(fd);
	EXPECT_EQ(jvm_chan_files_find((__u32)getpid(), (__u32)getpid(), &cf), 0);
	snprintf(path, sizeof(path), "jprof-%d-00112233445566ff.ring", (int)getpid());
	EXPECT_STREQ(cf.ring, path);
	snprintf(path, sizeof(path), "jprof-%d-00112233445566ff.dict", (int)getpid());
	EXPECT_STREQ(cf.dict, path);
	/* another pid's name is not this pid's channel */
	EXPECT_EQ(jvm_chan_files_find((__u32)getpid(), (__u32)getpid() + 1, &cf), -ENOENT);
	snprintf(path, sizeof(path), "/tmp/jprof-%d-00112233445566ff.ring", (int)getpid());
	unlink(path);
	/* given up: "(deleted)" */
	EXPECT_EQ(jvm_chan_files_find((__u32)getpid(), (__u32)getpid(), &cf), -ENOENT);
	munmap(m, 4096);
}

static void put_ring(const char *dir, const char *name, __u64 start_ns)
{
	struct jp_ring_hdr h;
	char path[512];
	int fd;

	memset(&h, 0, sizeof(h));
	h.magic = JP_RING_MAGIC;
	h.version = JP_RING_VERSION;
	h.start_ns = start_ns;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	close(fd);
}

static void put_file(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	EXPECT_TRUE(fd >= 0);
	close(fd);
}

static int exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &st);
}

TEST(chan_files_sweep)
{
	char dir[] = "/tmp/jprof-test-sweep.XXXXXX", path[512], cmd[600];
	int tmp_fd;

	EXPECT_TRUE(mkdtemp(dir) != NULL);
	put_ring(dir, "jprof-42-aaaaaaaaaaaaaaaa.ring", 100); /* stale: before 1000 */
	put_file(dir, "jprof-42-aaaaaaaaaaaaaaaa.dict");
	put_ring(dir, "jprof-42-bbbbbbbbbbbbbbbb.ring", 2000); /* live */
	put_file(dir, "jprof-42-bbbbbbbbbbbbbbbb.dict");
	put_ring(dir, "jprof-43-cccccccccccccccc.ring", 100); /* another pid */
	put_ring(dir, "jprof-42.ring", 100);		      /* not a token name */
	put_ring(dir, "target", 100);
	snprintf(path, sizeof(path), "%s/jprof-42-dddddddddddddddd.ring", dir);
	EXPECT_EQ(symlink("target", path), 0);
	snprintf(path, sizeof(path), "%s/jprof-42-eeeeeeeeeeeeeeee.ring", dir);
	EXPECT_EQ(mkdir(path, 0700), 0);
	tmp_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	EXPECT_TRUE(tmp_fd >= 0);
	/* another owner's: nothing removed */
	EXPECT_EQ(jvm_chan_files_sweep(tmp_fd, 42, getuid() + 1, 1000), 0);
	EXPECT_TRUE(exists(dir, "jprof-42-aaaaaaaaaaaaaaaa.ring"));
	EXPECT_EQ(jvm_chan_files_sweep(tmp_fd, 42, getuid(), 1000), 2);
	EXPECT_TRUE(!exists(dir, "jprof-42-aaaaaaaaaaaaaaaa.ring"));
	EXPECT_TRUE(!exists(dir, "jprof-42-aaaaaaaaaaaaaaaa.dict"));
	EXPECT_TRUE(exists(dir, "jprof-42-bbbbbbbbbbbbbbbb.ring"));
	EXPECT_TRUE(exists(dir, "jprof-42-bbbbbbbbbbbbbbbb.dict"));
	EXPECT_TRUE(exists(dir, "jprof-43-cccccccccccccccc.ring"));
	EXPECT_TRUE(exists(dir, "jprof-42.ring"));
	EXPECT_TRUE(exists(dir, "jprof-42-dddddddddddddddd.ring"));
	EXPECT_TRUE(exists(dir, "jprof-42-eeeeeeeeeeeeeeee.ring"));
	EXPECT_TRUE(exists(dir, "target"));
	/* no start time known: nothing is stale */
	put_ring(dir, "jprof-42-aaaaaaaaaaaaaaaa.ring", 100);
	EXPECT_EQ(jvm_chan_files_sweep(tmp_fd, 42, getuid(), 0), 0);
	close(tmp_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	EXPECT_EQ(system(cmd), 0);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sym_safe_open.c: opening untrusted paths: what is refused, and that nothing else is opened. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "util/safe_open.h"

struct dir {
	char path[64], file[96], link[96], fifo[96];
};

static void dir_init(struct dir *d)
{
	int fd;

	snprintf(d->path, sizeof(d->path), "/tmp/jprof-ut-so-XXXXXX");
	if (!mkdtemp(d->path))
		abort();
	snprintf(d->file, sizeof(d->file), "%s/file", d->path);
	snprintf(d->link, sizeof(d->link), "%s/link", d->path);
	snprintf(d->fifo, sizeof(d->fifo), "%s/fifo", d->path);
	fd = open(d->file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, "hello", 5) != 5)
		abort();
	close(fd);
	if (symlink(d->file, d->link) || mkfifo(d->fifo, 0600))
		abort();
}

static void dir_fini(struct dir *d)
{
	unlink(d->file);
	unlink(d->link);
	unlink(d->fifo);
	rmdir(d->path);
}

TEST(regular_file_checked_then_opened)
{
	struct safe_expect exp = SAFE_EXPECT_ANY;
	struct dir d;
	struct stat st, st2;
	char buf[8];
	int fd;

	dir_init(&d);
	EXPECT_EQ(stat(d.file, &st), 0);
	exp.dev = st.st_dev;
	exp.ino = st.st_ino;
	exp.uid = getuid();
	exp.max_size = 5;
	fd = safe_open_at(AT_FDCWD, d.file, 0, &exp, &st2);
	EXPECT_TRUE(fd >= 0);
	EXPECT_EQ(st2.st_ino, st.st_ino);
	EXPECT_EQ(read(fd, buf, sizeof(buf)), 5);
	/* read-only unless asked */
	EXPECT_EQ(write(fd, "x", 1), -1);
	close(fd);
	fd = safe_open_at(AT_FDCWD, d.file, SAFE_RDWR, &exp, NULL);
	EXPECT_EQ(write(fd, "x", 1), 1);
	close(fd);
	dir_fini(&d);
}

TEST(refusals)
{
	struct safe_expect exp = SAFE_EXPECT_ANY;
	struct dir d;
	struct stat st;
	int wfd;

	dir_init(&d);
	EXPECT_EQ(stat(d.file, &st), 0);
	EXPECT_EQ(safe_open_at(AT_FDCWD, d.link, 0, &exp, NULL), -ELOOP);
	EXPECT_EQ(safe_open_at(AT_FDCWD, d.fifo, 0, &exp, NULL), -EBADFD);
	/* the FIFO was never opened for reading: a writer still finds no reader */
	wfd = open(d.fifo, O_WRONLY | O_NONBLOCK);
	EXPECT_EQ(wfd, -1);
	EXPECT_EQ(errno, ENXIO);
	EXPECT_EQ(safe_open_at(AT_FDCWD, d.path, 0, &exp, NULL), -EBADFD);
	EXPECT_EQ(safe_open_at(AT_FDCWD, "/dev/null", 0, &exp, NULL), -EBADFD);
	exp.ino = st.st_ino + 1;
	EXPECT_EQ(safe_open_at(AT_FDCWD, d.file, 0, &exp, NULL), -ESTALE);
	exp = SAFE_EXPECT_ANY;
	exp.dev = st.st_dev + 1;
	EXPECT_EQ(safe_open_at(AT_FDCWD, d.file, 0, &exp, NULL), -ESTALE);
	exp = SAFE_EXPECT_ANY;
	exp.uid = getuid() + 1;
	EXPECT_EQ(safe_open_at(AT_FDCWD, d.file, 0, &exp, NULL), -EPERM);
	exp = SAFE_EXPECT_ANY;
	exp.one_link = true;
	wfd = safe_open_at(AT_FDCWD, d.file, 0, &exp, NULL);
	EXPECT_TRUE(wfd >= 0);
	close(wfd);
	{
		char hard[128];

		snprintf(hard, sizeof(hard), "%s/hard", d.path);
		EXPECT_EQ(link(d.file, hard), 0);
		EXPECT_EQ(safe_open_at(AT_FDCWD, d.file, 0, &exp, NULL), -EMLINK);
		unlink(hard);
	}
	exp = SAFE_EXPECT_ANY;
	exp.max_size = 4;
	EXPECT_EQ(safe_open_at(AT_FDCWD, d.file, 0, &exp, NULL), -EFBIG);
	/* beneath: no way out of the directory */
	{
		int dfd = open(d.path, O_PATH | O_DIRECTORY);

		EXPECT_EQ(
			safe_open_at(dfd, "../../etc/passwd", SAFE_BENEATH, &SAFE_EXPECT_ANY, NULL),
			-EXDEV);
		EXPECT_EQ(safe_open_at(dfd, "/etc/passwd", SAFE_BENEATH, &SAFE_EXPECT_ANY, NULL),
			  -EXDEV);
		/* a mount is crossed from / into /proc */
		close(dfd);
		dfd = open("/", O_PATH | O_DIRECTORY);
		EXPECT_EQ(safe_open_at(dfd, "proc/self/status", SAFE_SAME_MOUNT, &SAFE_EXPECT_ANY,
				       NULL),
			  -EXDEV);
		close(dfd);
	}
	dir_fini(&d);
}

/* a file in our own /tmp, through /proc/self/root like another process's */
TEST(proc_tmp)
{
	struct safe_expect exp = SAFE_EXPECT_ANY;
	char name[64], path[96], link[128];
	int fd;

	snprintf(name, sizeof(name), "jprof-ut-so-%d", (int)getpid());
	snprintf(path, sizeof(path), "/tmp/%s", name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	EXPECT_TRUE(fd >= 0);
	close(fd);
	exp.uid = getuid();
	fd = safe_open_proc_tmp((unsigned int)getpid(), name, 0, &exp, NULL);
	EXPECT_TRUE(fd >= 0);
	close(fd);
	exp.uid = getuid() + 1;
	EXPECT_EQ(safe_open_proc_tmp((unsigned int)getpid(), name, 0, &exp, NULL), -EPERM);
	snprintf(link, sizeof(link), "%s.lnk", path);
	EXPECT_EQ(symlink(path, link), 0);
	snprintf(name, sizeof(name), "jprof-ut-so-%d.lnk", (int)getpid());
	EXPECT_EQ(safe_open_proc_tmp((unsigned int)getpid(), name, 0, &SAFE_EXPECT_ANY, NULL),
		  -ELOOP);
	unlink(link);
	unlink(path);
}

/*
 * A directory symlink on any component is refused too (a JDK's release below a planted
 * directory link), also inside a process's root (SAFE_IN_ROOT, what discover uses).
 */
TEST(directory_link_on_the_path_is_refused)
{
	char root[] = "/tmp/jprof-test-safeopen.XXXXXX", path[600];
	struct safe_expect exp = SAFE_EXPECT_ANY;
	int rfd, fd;

	EXPECT_TRUE(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "%s/real", root);
	EXPECT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/real/release", root);
	fclose(fopen(path, "w"));
	snprintf(path, sizeof(path), "%s/jdk", root);
	EXPECT_EQ(symlink("real", path), 0);
	rfd = open(root, O_PATH | O_DIRECTORY);
	EXPECT_TRUE(rfd >= 0);
	EXPECT_EQ(safe_open_at(rfd, "/jdk/release", SAFE_IN_ROOT, &exp, NULL), -ELOOP);
	EXPECT_EQ(safe_open_at(rfd, "jdk/release", SAFE_BENEATH, &exp, NULL), -ELOOP);
	fd = safe_open_at(rfd, "/real/release", SAFE_IN_ROOT, &exp, NULL);
	EXPECT_TRUE(fd >= 0);
	close(fd);
	/* ".." cannot leave the root either */
	fd = safe_open_at(rfd, "/../../../etc/passwd", SAFE_IN_ROOT, &exp, NULL);
	EXPECT_TRUE(fd == -ENOENT);
	close(rfd);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	EXPECT_EQ(system(path), 0);
}

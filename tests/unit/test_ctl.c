// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_ctl.c: the daemon's control socket without the daemon: the request parser on good
 * and bad lines, a dump answered with its memfd, the daemon's own error passed on, no
 * daemon, a stale socket, and clients that send nothing, too much or garbage (the server
 * never waits on them, drops them at their deadline and serves the next).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "daemon/ctl.h"

static char dir[64];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/jprof-test-ctl-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void remove_dir(int dfd)
{
	if (dfd >= 0)
		close(dfd);
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

TEST(parse_request)
{
	char long_line[CTL_REQ_MAX];

	EXPECT_EQ(ctl_parse_request("dump 1\n", 7), CTL_REQ_DUMP);
	EXPECT_EQ(ctl_parse_request("dump 1", 6), -EAGAIN);
	EXPECT_EQ(ctl_parse_request("", 0), -EAGAIN);
	EXPECT_EQ(ctl_parse_request("\n", 1), -EINVAL);
	EXPECT_EQ(ctl_parse_request("dump 2\n", 7), -EINVAL);
	EXPECT_EQ(ctl_parse_request("dump 1 \n", 8), -EINVAL);
	EXPECT_EQ(ctl_parse_request("dump 1\r\n", 8), -EINVAL);
	EXPECT_EQ(ctl_parse_request("dump 1\nx", 8), -EINVAL);  /* bytes after the line */
	EXPECT_EQ(ctl_parse_request("dump\0001\n", 7), -EINVAL); /* a NUL inside */
	EXPECT_EQ(ctl_parse_request("DUMP 1\n", 7), -EINVAL);
	memset(long_line, 'a', sizeof(long_line));
	EXPECT_EQ(ctl_parse_request(long_line, sizeof(long_line)), -EINVAL); /* full, no newline */
	EXPECT_EQ(ctl_parse_request(long_line, sizeof(long_line) - 1), -EAGAIN);
	/* a mark: a name and a window in seconds, nothing else */
	{
		const char *n49 = "mark 1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 5\n";
		struct ctl_request r;

		EXPECT_EQ(ctl_parse("mark 1 deploy-v2.1 300\n", 23, &r), CTL_REQ_MARK);
		EXPECT_STREQ(r.name, "deploy-v2.1");
		EXPECT_EQ(r.back_s, 300);
		EXPECT_EQ(ctl_parse("mark 1 x 31622400\n", 18, &r), CTL_REQ_MARK);
		EXPECT_EQ(ctl_parse("mark 1 x 31622401\n", 18, &r), -EINVAL); /* over 366 days */
		EXPECT_EQ(ctl_parse("mark 1 x 0\n", 11, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 x -5\n", 12, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 x +5\n", 12, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 x 5 \n", 12, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 x 5x\n", 12, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1  x 5\n", 12, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 ../x 5\n", 14, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 .x 5\n", 12, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 a/b 5\n", 13, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 x\n", 9, &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 2 x 5\n", 11, &r), -EINVAL);
		EXPECT_EQ(ctl_parse(n49, strlen(n49), &r), -EINVAL); /* a name of 49 */
		EXPECT_EQ(ctl_parse(n49 + 1, strlen(n49 + 1), &r), -EINVAL);
		EXPECT_EQ(ctl_parse("mark 1 x 5\n", 11, &r), CTL_REQ_MARK);
	}
}

/* the daemon's side, in a thread: polls until told to stop */
struct server {
	struct ctl_server *c;
	volatile int stop;
	int fail; /* the dump fn fails with this */
	pthread_t th;
};

static int dump_fn(void *ctx, int fd, __u64 *ret_start_s, __u64 *ret_end_s, char *why,
		   size_t why_len)
{
	struct server *s = ctx;

	if (s->fail) {
		snprintf(why, why_len, "out of test");
		return s->fail;
	}
	if (write(fd, "snapshot", 8) != 8)
		return -EIO;
	*ret_start_s = 100;
	*ret_end_s = 160;
	return 0;
}

/* a mark: what it was asked, answered with a made-up directory */
static int mark_fn(void *ctx, const char *name, __u32 back_s, int snap_fd, __u64 snap_start_s,
		   __u64 snap_end_s, char *ret_dir, size_t dir_len, size_t *ret_n, char *why,
		   size_t why_len)
{
	char buf[16] = "";

	(void)ctx;
	(void)why;
	(void)why_len;
	if (snap_fd < 0 || pread(snap_fd, buf, sizeof(buf) - 1, 0) != 8 || snap_start_s != 100 ||
	    snap_end_s != 160)
		return -EIO;
	snprintf(ret_dir, dir_len, "marks/T-%s-%u", name, back_s);
	*ret_n = 3;
	return 0;
}

static void *serve(void *arg)
{
	struct server *s = arg;
	struct ctl_fns fns = {.dump = dump_fn, .mark = mark_fn, .ctx = s};

	while (!s->stop) {
		ctl__poll(s->c, now_ns(), &fns);
		usleep(5000);
	}
	return NULL;
}

TEST(dump_round_trip)
{
	struct server s = {0};
	char why[256], buf[16] = "";
	__u64 a = 0, b = 0, dumps, refused, bad;
	int dfd = make_dir(), fd = -1, err;
	struct stat st;

	ASSERT_TRUE(dfd >= 0);
	EXPECT_EQ(ctl__listen(dfd, &s.c, why, sizeof(why)), 0);
	ASSERT_TRUE(s.c != NULL);
	EXPECT_EQ(fstatat(dfd, CTL_SOCK_NAME, &st, 0), 0);
	EXPECT_EQ(st.st_mode & 0777, 0600);
	pthread_create(&s.th, NULL, serve, &s);
	err = ctl_dump_request(dfd, 2000, &fd, &a, &b, why, sizeof(why));
	EXPECT_EQ(err, 0);
	EXPECT_EQ(a, 100);
	EXPECT_EQ(b, 160);
	ASSERT_TRUE(fd >= 0);
	EXPECT_EQ(pread(fd, buf, sizeof(buf) - 1, 0), 8);
	EXPECT_STREQ(buf, "snapshot");
	EXPECT_TRUE(write(fd, "x", 1) < 0); /* sealed: nobody changes it afterwards */
	close(fd);
	/* a mark: the daemon's snapshot goes to its mark function, the directory comes back */
	{
		char dir[128];
		size_t n = 0;

		EXPECT_EQ(ctl_mark_request(dfd, 2000, "incident-1", 600, dir, sizeof(dir), &n, why,
					   sizeof(why)),
			  0);
		EXPECT_STREQ(dir, "marks/T-incident-1-600");
		EXPECT_EQ(n, 3);
		EXPECT_EQ(ctl_mark_request(dfd, 2000, "a/b", 600, dir, sizeof(dir), &n, why,
					   sizeof(why)),
			  -EINVAL);
	}
	/* the daemon's own error, passed on as one line */
	s.fail = -ENOMEM;
	err = ctl_dump_request(dfd, 2000, &fd, &a, &b, why, sizeof(why));
	EXPECT_EQ(err, -EPROTO);
	EXPECT_TRUE(strstr(why, "out of test") != NULL);
	s.stop = 1;
	pthread_join(s.th, NULL);
	ctl__counts(s.c, &dumps, &refused, &bad);
	EXPECT_EQ(dumps, 1);
	EXPECT_EQ(refused, 0);
	ctl__free(s.c);
	/* gone with the daemon: the next dump finds none */
	EXPECT_TRUE(fstatat(dfd, CTL_SOCK_NAME, &st, 0) && errno == ENOENT);
	remove_dir(dfd);
}

TEST(no_daemon_and_stale_socket)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ctl_server *c = NULL;
	char why[256];
	__u64 a, b;
	int dfd = make_dir(), fd, sfd;

	ASSERT_TRUE(dfd >= 0);
	EXPECT_EQ(ctl_dump_request(dfd, 500, &fd, &a, &b, why, sizeof(why)), -ENOENT);
	EXPECT_TRUE(strstr(why, "no jprof daemon") != NULL);
	/* a killed daemon's socket: its name stays, nobody listens */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, CTL_SOCK_NAME);
	sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	EXPECT_EQ(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(sfd);
	EXPECT_EQ(ctl_dump_request(dfd, 500, &fd, &a, &b, why, sizeof(why)), -ECONNREFUSED);
	EXPECT_TRUE(strstr(why, "stale") != NULL);
	/* the next daemon replaces it */
	EXPECT_EQ(ctl__listen(dfd, &c, why, sizeof(why)), 0);
	ctl__free(c);
	/* a file of that name that is no socket is left alone */
	sfd = openat(dfd, CTL_SOCK_NAME, O_CREAT | O_WRONLY, 0600);
	EXPECT_TRUE(sfd >= 0);
	close(sfd);
	c = NULL;
	EXPECT_EQ(ctl__listen(dfd, &c, why, sizeof(why)), -EEXIST);
	EXPECT_TRUE(c == NULL);
	remove_dir(dfd);
}

static int connect_raw(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, CTL_SOCK_NAME);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* what the server answered fd, "" when nothing (yet) */
static void answer(int fd, char *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
}

TEST(hostile_clients)
{
	struct server s = {0};
	char why[256], buf[CTL_REPLY_MAX], junk[200];
	__u64 dumps, refused, bad, t0, t;
	int dfd = make_dir(), silent[CTL_CLIENTS + 2], junky, good, good2, partial, gone;
	struct ctl_fns fns = {.dump = dump_fn, .ctx = &s}; /* no marks: refused */

	ASSERT_TRUE(dfd >= 0);
	ASSERT_TRUE(!ctl__listen(dfd, &s.c, why, sizeof(why)));
	/* more that say nothing than the server has slots: the poll returns at once */
	for (int i = 0; i < CTL_CLIENTS + 2; i++) {
		silent[i] = connect_raw();
		EXPECT_TRUE(silent[i] >= 0);
	}
	t0 = now_ns();
	ctl__poll(s.c, t0, &fns);
	ctl__poll(s.c, t0 + 1000000, &fns);
	EXPECT_TRUE(now_ns() - t0 < 100000000ull); /* never blocked on them */
	good = connect_raw(); /* queued behind them */
	ASSERT_TRUE(good >= 0);
	EXPECT_EQ(send(good, "dump 1\n", 7, 0), 7);
	ctl__poll(s.c, t0 + 2000000, &fns);
	answer(good, buf, sizeof(buf));
	EXPECT_STREQ(buf, ""); /* every slot taken */
	t = t0 + (CTL_CLIENT_MS + 1) * 1000000ull;
	ctl__poll(s.c, t, &fns); /* their deadline: dropped, the queue's next taken */
	answer(silent[0], buf, sizeof(buf));
	EXPECT_TRUE(!strncmp(buf, "error ", 6));
	ctl__poll(s.c, t + 1, &fns);
	answer(good, buf, sizeof(buf));
	EXPECT_STREQ(buf, "ok 100 160\n");
	/* two dumps of one round share one snapshot */
	good2 = connect_raw();
	close(good);
	good = connect_raw();
	EXPECT_EQ(send(good, "dump 1\n", 7, 0), 7);
	EXPECT_EQ(send(good2, "dump 1\n", 7, 0), 7);
	/* too much, garbage, and one that hangs up half-way: each answered or dropped */
	junky = connect_raw();
	memset(junk, 'A', sizeof(junk));
	EXPECT_EQ(send(junky, junk, sizeof(junk), 0), (ssize_t)sizeof(junk));
	partial = connect_raw();
	EXPECT_EQ(send(partial, "dump 1\nrm -rf /\n", 16, 0), 16);
	gone = connect_raw();
	EXPECT_EQ(send(gone, "du", 2, 0), 2);
	close(gone);
	t += (CTL_CLIENT_MS + 1) * 1000000ull; /* the two silent ones queued drop too */
	for (int i = 0; i < 3; i++)
		ctl__poll(s.c, t + (__u64)i, &fns);
	answer(good, buf, sizeof(buf));
	EXPECT_STREQ(buf, "ok 100 160\n");
	answer(good2, buf, sizeof(buf));
	EXPECT_STREQ(buf, "ok 100 160\n");
	answer(junky, buf, sizeof(buf));
	EXPECT_TRUE(!strncmp(buf, "error ", 6));
	answer(partial, buf, sizeof(buf));
	EXPECT_TRUE(!strncmp(buf, "error ", 6));
	ctl__counts(s.c, &dumps, &refused, &bad);
	EXPECT_EQ(dumps, 3);
	EXPECT_EQ(bad, CTL_CLIENTS + 2 + 3);
	for (int i = 0; i < CTL_CLIENTS + 2; i++)
		close(silent[i]);
	close(good);
	close(good2);
	close(junky);
	close(partial);
	ctl__free(s.c);
	remove_dir(dfd);
}

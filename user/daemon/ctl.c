// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ctl.c: the daemon's control socket: requests parsed, peers checked, snapshots passed. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "util/why.h"
#include "store/store.h"

#define REQ_DUMP "dump 1"
#define REQ_MARK "mark 1"

struct ctl_client {
	int fd; /* -1: a free slot */
	__u64 deadline_ns;
	char buf[CTL_REQ_MAX];
	size_t len;
};

struct ctl_server {
	int dirfd; /* the store's directory (not owned) */
	int lfd;   /* listening, non-blocking */
	struct ctl_client cl[CTL_CLIENTS];
	int snap; /* this round's snapshot, shared by its dumps; -1: none yet */
	__u64 snap_start_s, snap_end_s;
	__u64 dumps, marks, refused, bad;
};

int ctl_parse(const char *buf, size_t len, struct ctl_request *ret)
{
	const char *nl = memchr(buf, '\n', len);
	char line[CTL_REQ_MAX], name[CTL_REQ_MAX], tail;
	unsigned long back;
	size_t n;

	memset(ret, 0, sizeof(*ret));
	if (!nl)
		return len < CTL_REQ_MAX ? -EAGAIN : -EINVAL;
	n = (size_t)(nl - buf);
	if (nl + 1 != buf + len || n >= sizeof(line) || memchr(buf, '\0', n))
		return -EINVAL; /* one line, nothing after it, no NUL in it */
	if (n == strlen(REQ_DUMP) && !memcmp(buf, REQ_DUMP, n))
		return ret->kind = CTL_REQ_DUMP;
	memcpy(line, buf, n);
	line[n] = '\0';
	/* "mark 1 NAME SECONDS": digits only, in range, nothing after them */
	if (strncmp(line, REQ_MARK " ", strlen(REQ_MARK) + 1) ||
	    sscanf(line + strlen(REQ_MARK) + 1, "%63s %lu%c", name, &back, &tail) != 2 ||
	    !store_mark_name_ok(name) || !back || back > CTL_MARK_BACK_MAX ||
	    strspn(line + strlen(REQ_MARK) + 2 + strlen(name), "0123456789") !=
		    n - strlen(REQ_MARK) - 2 - strlen(name))
		return -EINVAL;
	memcpy(ret->name, name, strlen(name) + 1); /* at most STORE_MARK_NAME_MAX: checked */
	ret->back_s = (__u32)back;
	return ret->kind = CTL_REQ_MARK;
}

int ctl_parse_request(const char *buf, size_t len)
{
	struct ctl_request r;

	return ctl_parse(buf, len, &r);
}

/* "/proc/self/fd/N/control.sock": the store's directory by its fd, no path walked again */
static int sock_addr(int dirfd, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", dirfd,
		     CTL_SOCK_NAME) >= (int)sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	return 0;
}

int ctl__listen(int dirfd, struct ctl_server **ret, char *why, size_t why_len)
{
	struct ctl_server *c = calloc(1, sizeof(*c));
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int err;

	if (!c)
		return -ENOMEM;
	c->dirfd = dirfd;
	c->snap = -1;
	for (int i = 0; i < CTL_CLIENTS; i++)
		c->cl[i].fd = -1;
	err = sock_addr(dirfd, &sa);
	if (err)
		goto out_free;
	/* the caller holds the store's lock: a socket here is a killed daemon's; not a link */
	if (!fstatat(dirfd, CTL_SOCK_NAME, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!S_ISSOCK(st.st_mode)) {
			err = set_why(why, why_len, -EEXIST,
				      "%s is there and is not a socket: remove it", CTL_SOCK_NAME);
			goto out_free;
		}
		(void)unlinkat(dirfd, CTL_SOCK_NAME, 0);
	}
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0) {
		err = -errno;
		goto out_free;
	}
	old = umask(0177); /* the socket 0600: connecting needs write permission on it */
	err = bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!err && listen(c->lfd, 2 * CTL_CLIENTS))
		err = -errno;
	if (err) {
		set_why(why, why_len, err, "cannot listen on %s: %s", CTL_SOCK_NAME,
			strerror(-err));
		close(c->lfd);
		goto out_free;
	}
	*ret = c;
	return 0;
out_free:
	if (why && why_len && !why[0])
		set_why(why, why_len, err, "%s", strerror(-err));
	free(c);
	return err;
}

static void drop_client(struct ctl_client *k)
{
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	k->len = 0;
}

/* one line back, with fd passed beside it when fd >= 0; never waits (the line is small) */
static void reply(const struct ctl_client *k, const char *line, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)line, .iov_len = strlen(line)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	(void)sendmsg(k->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* the open interval into a sealed memfd, once a round whatever the number of dumps in it */
static int make_snapshot(struct ctl_server *c, ctl_dump_fn fn, void *ctx, char *why, size_t why_len)
{
	int fd, err;

	if (c->snap >= 0)
		return 0;
	fd = memfd_create("jprof-dump", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	err = fn(ctx, fd, &c->snap_start_s, &c->snap_end_s, why, why_len);
	/* the clients read what was written: nobody changes it afterwards */
	if (!err &&
	    fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	c->snap = fd;
	return 0;
}

static void serve_dump(struct ctl_server *c, struct ctl_client *k, const struct ctl_fns *fns)
{
	char why[256] = "", line[CTL_REPLY_MAX];
	int err = make_snapshot(c, fns->dump, fns->ctx, why, sizeof(why));

	if (err) {
		snprintf(line, sizeof(line),
			 "error the daemon could not snapshot its open interval: %s\n",
			 why[0] ? why : strerror(-err));
		reply(k, line, -1);
		return;
	}
	snprintf(line, sizeof(line), "ok %llu %llu\n", (unsigned long long)c->snap_start_s,
		 (unsigned long long)c->snap_end_s);
	reply(k, line, c->snap);
	c->dumps++;
}

static void serve_mark(struct ctl_server *c, struct ctl_client *k, const struct ctl_request *rq,
		       const struct ctl_fns *fns)
{
	char why[256] = "", line[CTL_REPLY_MAX], dir[160];
	size_t n = 0;
	int err = make_snapshot(c, fns->dump, fns->ctx, why, sizeof(why));

	if (!err)
		err = fns->mark(fns->ctx, rq->name, rq->back_s, c->snap, c->snap_start_s,
				c->snap_end_s, dir, sizeof(dir), &n, why, sizeof(why));
	if (err) {
		snprintf(line, sizeof(line), "error %s\n", why[0] ? why : strerror(-err));
		reply(k, line, -1);
		return;
	}
	snprintf(line, sizeof(line), "ok %s %zu\n", dir, n);
	reply(k, line, -1);
	c->marks++;
}

/* new clients into free slots: only root and the daemon's own user are kept */
static void accept_clients(struct ctl_server *c, __u64 now_ns)
{
	char line[CTL_REPLY_MAX];

	for (int i = 0; i < CTL_CLIENTS; i++) {
		struct ctl_client *k = &c->cl[i];
		socklen_t len = sizeof(struct ucred);
		struct ucred cr;

		if (k->fd >= 0)
			continue;
		/*
		 * none waiting: a poll says so for a tenth of what a refused accept costs (the
		 * kernel makes a socket to throw away), and this runs every round of the loop
		 */
		if (poll(&(struct pollfd){.fd = c->lfd, .events = POLLIN}, 1, 0) <= 0)
			return;
		k->fd = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (k->fd < 0)
			return; /* none waiting (EAGAIN), or out of fds: the next round */
		k->len = 0;
		k->deadline_ns = now_ns + CTL_CLIENT_MS * 1000000ull;
		if (getsockopt(k->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
		    (cr.uid != 0 && cr.uid != geteuid())) {
			snprintf(line, sizeof(line),
				 "error permission denied: only root and uid %u may ask this "
				 "daemon\n",
				 (unsigned int)geteuid());
			reply(k, line, -1);
			c->refused++;
			drop_client(k);
		}
	}
}

/* what a client sent so far: answered and dropped once whole, wrong, gone or late */
static void serve_client(struct ctl_server *c, struct ctl_client *k, __u64 now_ns,
			 const struct ctl_fns *fns)
{
	ssize_t n = recv(k->fd, k->buf + k->len, sizeof(k->buf) - k->len, MSG_DONTWAIT);
	struct ctl_request rq;
	int req;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		c->bad++; /* gone before its request was whole */
		drop_client(k);
		return;
	}
	if (n > 0)
		k->len += (size_t)n;
	req = ctl_parse(k->buf, k->len, &rq);
	if (req == -EAGAIN) {
		if (now_ns >= k->deadline_ns) {
			reply(k, "error no whole request in time\n", -1);
			c->bad++;
			drop_client(k);
		}
		return;
	}
	if (req == CTL_REQ_DUMP) {
		serve_dump(c, k, fns);
	} else if (req == CTL_REQ_MARK && fns->mark) {
		serve_mark(c, k, &rq, fns);
	} else {
		reply(k,
		      "error not a request of this daemon's (jprof dump and the daemon of "
		      "different versions?)\n",
		      -1);
		c->bad++;
	}
	drop_client(k);
}

void ctl__poll(struct ctl_server *c, __u64 now_ns, const struct ctl_fns *fns)
{
	if (!c)
		return;
	accept_clients(c, now_ns);
	for (int i = 0; i < CTL_CLIENTS; i++)
		if (c->cl[i].fd >= 0)
			serve_client(c, &c->cl[i], now_ns, fns);
	if (c->snap >= 0) { /* the clients hold their own copies of the fd */
		close(c->snap);
		c->snap = -1;
	}
}

void ctl__counts(const struct ctl_server *c, __u64 *ret_dumps, __u64 *ret_refused, __u64 *ret_bad)
{
	*ret_dumps = c ? c->dumps : 0;
	*ret_refused = c ? c->refused : 0;
	*ret_bad = c ? c->bad : 0;
}

void ctl__free(struct ctl_server *c)
{
	if (!c)
		return;
	for (int i = 0; i < CTL_CLIENTS; i++)
		drop_client(&c->cl[i]);
	close(c->lfd);
	(void)unlinkat(c->dirfd, CTL_SOCK_NAME, 0);
	free(c);
}

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/* the answer line and the fd beside it, by deadline_ms (CLOCK_MONOTONIC) */
static int recv_reply(int fd, __u64 deadline_ms, char *line, size_t len, int *ret_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	size_t got = 0;

	*ret_fd = -1;
	while (got + 1 < len && !memchr(line, '\n', got)) {
		struct iovec iov = {.iov_base = line + got, .iov_len = len - 1 - got};
		struct msghdr msg = {.msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf)};
		struct pollfd p = {.fd = fd, .events = POLLIN};
		__u64 now = mono_ms();
		struct cmsghdr *cm;
		ssize_t n;
		int r;

		if (now >= deadline_ms)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)(deadline_ms - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return -ETIMEDOUT;
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return -errno;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			int passed;

			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
			    cm->cmsg_len != CMSG_LEN(sizeof(int)))
				continue;
			memcpy(&passed, CMSG_DATA(cm), sizeof(int));
			if (*ret_fd >= 0)
				close(passed);
			else
				*ret_fd = passed;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	line[got] = '\0';
	return memchr(line, '\n', got) ? 0 : -EPROTO;
}

/*
 * Sends req (one line, its newline included) to the daemon of the store dirfd and reads its
 * answer line into line (without its newline) and the fd passed beside it (-1: none). 0, or
 * -errno with why: no daemon, a stale socket, refused, no answer, the daemon's own error.
 */
static int ctl_call(int dirfd, unsigned int timeout_ms, const char *req, char *line, size_t len,
		    int *ret_fd, char *why, size_t why_len)
{
	__u64 deadline = mono_ms() + timeout_ms;
	struct sockaddr_un sa;
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	struct stat st;
	int fd, err;

	*ret_fd = -1;
	if (why && why_len)
		why[0] = '\0';
	err = sock_addr(dirfd, &sa);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		if (err == -ENOENT)
			set_why(why, why_len, err, "no jprof daemon runs on this store (no %s)",
				CTL_SOCK_NAME);
		else if (err == -ECONNREFUSED)
			set_why(why, why_len, err,
				"%s is stale: no daemon listens on it (one that was killed?)",
				CTL_SOCK_NAME);
		else if (err == -EACCES || err == -EPERM)
			set_why(why, why_len, -EACCES,
				"permission denied on %s: only root and the daemon's user may ask it",
				CTL_SOCK_NAME);
		else
			set_why(why, why_len, err, "cannot connect to %s: %s", CTL_SOCK_NAME,
				strerror(-err));
		goto out_close;
	}
	/* the answer comes from root or from the store's own user, nobody else */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) || fstat(dirfd, &st) ||
	    (cr.uid != 0 && cr.uid != st.st_uid)) {
		err = set_why(why, why_len, -EACCES,
			      "%s is served by uid %u, neither root nor the store's owner",
			      CTL_SOCK_NAME, (unsigned int)cr.uid);
		goto out_close;
	}
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		err = set_why(why, why_len, -errno, "cannot send the request: %s", strerror(errno));
		goto out_close;
	}
	err = recv_reply(fd, deadline, line, len, ret_fd);
	if (err == -ETIMEDOUT) {
		set_why(why, why_len, err, "the daemon did not answer within %u ms", timeout_ms);
		goto out_close;
	}
	if (err) {
		set_why(why, why_len, err, "the daemon's answer was cut short: %s",
			err == -EPROTO ? "no whole line" : strerror(-err));
		goto out_close;
	}
	*strchr(line, '\n') = '\0';
	if (!strncmp(line, "error ", 6))
		err = set_why(why, why_len, strstr(line, "permission denied") ? -EACCES : -EPROTO,
			      "%s", line + 6);
out_close:
	if (err && *ret_fd >= 0) {
		close(*ret_fd);
		*ret_fd = -1;
	}
	close(fd);
	return err;
}

int ctl_dump_request(int dirfd, unsigned int timeout_ms, int *ret_fd, __u64 *ret_start_s,
		     __u64 *ret_end_s, char *why, size_t why_len)
{
	char line[CTL_REPLY_MAX];
	unsigned long long a, b;
	int snap, err;

	err = ctl_call(dirfd, timeout_ms, REQ_DUMP "\n", line, sizeof(line), &snap, why, why_len);
	if (err)
		return err;
	if (sscanf(line, "ok %llu %llu", &a, &b) != 2 || snap < 0 || a > b) {
		if (snap >= 0)
			close(snap);
		return set_why(why, why_len, -EPROTO,
			       "the daemon's answer is not understood: '%.80s'", line);
	}
	*ret_fd = snap;
	*ret_start_s = a;
	*ret_end_s = b;
	return 0;
}

int ctl_mark_request(int dirfd, unsigned int timeout_ms, const char *name, __u32 back_s,
		     char *ret_dir, size_t dir_len, size_t *ret_n, char *why, size_t why_len)
{
	char req[CTL_REQ_MAX], line[CTL_REPLY_MAX], dir[CTL_REPLY_MAX];
	unsigned long n;
	int fd, err;

	if (!store_mark_name_ok(name) || !back_s || back_s > CTL_MARK_BACK_MAX)
		return set_why(why, why_len, -EINVAL,
			       "a mark's name is 1 to %d letters, digits, '.', '-' or '_'",
			       STORE_MARK_NAME_MAX);
	snprintf(req, sizeof(req), "%s %s %u\n", REQ_MARK, name, back_s);
	err = ctl_call(dirfd, timeout_ms, req, line, sizeof(line), &fd, why, why_len);
	if (fd >= 0)
		close(fd);
	if (err)
		return err;
	if (sscanf(line, "ok %255s %lu", dir, &n) != 2)
		return set_why(why, why_len, -EPROTO,
			       "the daemon's answer is not understood: '%.80s'", line);
	snprintf(ret_dir, dir_len, "%s", dir);
	*ret_n = n;
	return 0;
}

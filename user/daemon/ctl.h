/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ctl.h: the daemon's control socket, DIR/control.sock (0600 in the 0700 store), through
 * which `jprof dump` asks for the open interval. One request a connection, one line of at
 * most CTL_REQ_MAX bytes ("dump 1\n"); the answer is one line ("ok START_S END_S\n" or
 * "error WHY\n"), and with "ok" the snapshot as a file descriptor (SCM_RIGHTS) the daemon
 * wrote it into (a memfd: nothing is written in the store, no path is given or taken).
 * "mark 1 NAME SECONDS\n" (`jprof dump --mark`) has the daemon keep the last SECONDS and
 * its open interval as a mark of the store (store__mark): "ok marks/DIR N\n".
 * Only root and the daemon's own uid are answered (SO_PEERCRED). The daemon never waits on a
 * client: its sockets are non-blocking, up to CTL_CLIENTS at once (more wait in the listen
 * queue), each with CTL_CLIENT_MS to send its line; the dumps of one round share a snapshot.
 */
#ifndef JPROF_DAEMON_CTL_H
#define JPROF_DAEMON_CTL_H

#include <linux/types.h>
#include <stddef.h>
#include <stdbool.h>

#include "store/store.h"

#define CTL_SOCK_NAME "control.sock"
#define CTL_REQ_MAX   128  /* a request's bytes, its newline included */
#define CTL_CLIENT_MS 1000 /* a client's time to send its request */
#define CTL_REPLY_MAX 512
#define CTL_CLIENTS   8

#define CTL_MARK_BACK_MAX (366u * 86400) /* a mark's window reaches this far back at most */

enum ctl_req {
	CTL_REQ_DUMP = 1, /* "dump 1": the open interval, as a pprof file */
	CTL_REQ_MARK,	  /* "mark 1 NAME SECONDS": keep the last SECONDS (store__mark) */
};

struct ctl_request {
	int kind;
	char name[STORE_MARK_NAME_MAX + 1]; /* CTL_REQ_MARK */
	__u32 back_s;			    /* CTL_REQ_MARK: 1 .. CTL_MARK_BACK_MAX */
};

/*
 * One request line, buf[0..len) (its newline included, or not), into *ret: CTL_REQ_* or
 * -EINVAL (not one of them: unknown verb, version, a bad name or window, stray bytes, NUL,
 * too long); -EAGAIN when buf holds no newline yet and has room for more. No allocation,
 * any bytes accepted.
 */
int ctl_parse(const char *buf, size_t len, struct ctl_request *ret);
/* ctl_parse's kind alone */
int ctl_parse_request(const char *buf, size_t len);

struct ctl_server;

/*
 * What the daemon does for a dump: the open interval written to fd (a memfd) as pprof,
 * its range into *ret_start_s, *ret_end_s. 0 or -errno with why set.
 */
typedef int (*ctl_dump_fn)(void *ctx, int fd, __u64 *ret_start_s, __u64 *ret_end_s, char *why,
			   size_t why_len);
/*
 * What the daemon does for a mark: keep the last back_s seconds and the open interval
 * (snap_fd, [snap_start_s, snap_end_s), made by the dump function) as a mark of its store:
 * its directory ("marks/...") into ret_dir, the segments kept into *ret_n. 0 or -errno with
 * why set.
 */
typedef int (*ctl_mark_fn)(void *ctx, const char *name, __u32 back_s, int snap_fd,
			   __u64 snap_start_s, __u64 snap_end_s, char *ret_dir, size_t dir_len,
			   size_t *ret_n, char *why, size_t why_len);

/* the daemon's answers; mark NULL: marks are refused */
struct ctl_fns {
	ctl_dump_fn dump;
	ctl_mark_fn mark;
	void *ctx;
};

/*
 * Listens on CTL_SOCK_NAME in the directory dirfd (the store, whose lock the caller holds:
 * a socket left there by a daemon that was killed is removed first). 0 and *ret, or -errno
 * with why.
 */
int ctl__listen(int dirfd, struct ctl_server **ret, char *why, size_t why_len);
/*
 * Serves what waits, without blocking: takes connections (up to CTL_CLIENTS), reads their
 * requests, answers (fns->dump once for the dumps and marks of this call, fns->mark for each
 * mark). now_ns: CLOCK_MONOTONIC. Call every round.
 */
void ctl__poll(struct ctl_server *c, __u64 now_ns, const struct ctl_fns *fns);
/* the counts since ctl__listen: answered dumps, refused peers, bad or timed-out requests */
void ctl__counts(const struct ctl_server *c, __u64 *ret_dumps, __u64 *ret_refused, __u64 *ret_bad);
/* NULL-safe; removes the socket's name */
void ctl__free(struct ctl_server *c);

/*
 * The client's side: sends a dump request to the daemon on dirfd's socket and waits up to
 * timeout_ms for its answer. 0 with the snapshot's fd in *ret_fd and its range, or -errno
 * with a one-line reason in why (-ENOENT no daemon, -ECONNREFUSED a stale socket, -EACCES
 * refused, -ETIMEDOUT no answer, -EPROTO the daemon's own error).
 */
int ctl_dump_request(int dirfd, unsigned int timeout_ms, int *ret_fd, __u64 *ret_start_s,
		     __u64 *ret_end_s, char *why, size_t why_len);
/*
 * jprof dump --mark: asks the daemon to keep the last back_s seconds as a mark named name.
 * 0 with its directory ("marks/<UTC>-<name>") in ret_dir and the segments kept in *ret_n, or
 * -errno with why, as ctl_dump_request.
 */
int ctl_mark_request(int dirfd, unsigned int timeout_ms, const char *name, __u32 back_s,
		     char *ret_dir, size_t dir_len, size_t *ret_n, char *why, size_t why_len);

#endif /* JPROF_DAEMON_CTL_H */

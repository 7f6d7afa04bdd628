// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attach_proto.c: the HotSpot attach protocol: trigger file, socket, load command, reply */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_files.h"
#include "attach.h"
#include "attach_int.h"
#include "log.h"
#include "ring.h"
#include "util/procfs.h"
#include "util/safe_open.h"

/*
 * Connects to the JVM's /tmp/.java_pid<nspid>. Returns the socket, -ENOENT when there is
 * no listening socket (absent, or stale from an earlier process: ECONNREFUSED), -errno.
 * Runs as the JVM's user inside its root, so a socket swapped in after the check can only
 * be one that user may connect to anyway; the peer check below makes sure we talk to the JVM.
 */
int at_try_connect(struct attach_ctx *c)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct ucred peer;
	socklen_t plen = sizeof(peer);
	struct timeval tv;
	struct stat st;
	int path_fd, sock = -1, err, ms;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/.java_pid%u", c->jvm->nspid);
	/* O_PATH | O_NOFOLLOW: a symlink planted there is opened as itself and refused below */
	path_fd = jvm_open_in_root(c->root_fd, addr.sun_path, O_PATH | O_NOFOLLOW, 0);
	if (path_fd < 0)
		return path_fd;
	if (fstat(path_fd, &st)) {
		err = -errno;
		goto out_close;
	}
	/* HotSpot creates it as the JVM's euid; anything else was not made by this JVM */
	err = -ENOENT;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != c->jvm->uid)
		goto out_close;
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		err = -errno;
		goto out_close;
	}
	ms = at_remaining_ms(c) + 1; /* 0 would mean "block forever" */
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	if (setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		err = -errno;
		goto out_close;
	}
	err = connect(sock, (struct sockaddr *)&addr, sizeof(addr)) ? -errno : 0;
	if (err == -ECONNREFUSED)
		err = -ENOENT;
	/* the listener is the JVM itself (pids as our pid namespace, the host's, sees them) */
	if (!err && (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &plen) ||
		     (__u32)peer.pid != c->jvm->pid)) {
		err = -ENOENT;
		pr_debug("attach: pid %u: %s is not the JVM's socket (peer pid %d)", c->jvm->pid,
			 addr.sun_path, (int)peer.pid);
	}
out_close:
	if (err && sock >= 0)
		close(sock);
	close(path_fd);
	return err ? err : sock;
}

/* creates .attach_pid<nspid> as the JVM's user in dir_fd; returns 0 or -errno */
static int create_trigger(struct attach_ctx *c, int dir_fd, const char *name)
{
	int fd, err, tries;

	(void)c;
	for (tries = 0; tries < 2; tries++) {
		fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		err = fd < 0 ? -errno : 0;
		if (err != -EEXIST)
			break;
		/* a stale trigger may belong to someone else, which HotSpot would ignore */
		if (unlinkat(dir_fd, name, 0))
			break;
	}
	if (fd >= 0)
		close(fd);
	return err;
}

/*
 * Starts the JVM's attach listener the way HotSpot expects it: a .attach_pid<nspid> file
 * owned by its euid in its cwd (else its /tmp), then SIGQUIT; the signal dispatcher sees
 * the file and creates /tmp/.java_pid<nspid> instead of printing a thread dump.
 */
int at_wake_listener(struct attach_ctx *c)
{
	char name[64];
	int dir_fd = -1, cwd_fd, err, sock = -ENOENT, delay_ms = BACKOFF_MIN_MS;

	/* a process that does not catch SIGQUIT would dump core or die of it (root checks again) */
	err = jvm_signal_caught_fd(c->status_fd, SIGQUIT);
	if (err == 0) {
		at_set_err(c, "JVM does not handle SIGQUIT (started with -Xrs, or still starting), "
			      "refusing to signal it");
		return -EPERM;
	}
	if (err < 0) {
		if (err == -ESRCH)
			at_set_err(c, "no such process");
		else
			at_set_err(c, "cannot read signal state: %s", strerror(-err));
		return err;
	}
	snprintf(name, sizeof(name), ".attach_pid%u", c->jvm->nspid);
	cwd_fd = c->cwd_fd >= 0 ? dup(c->cwd_fd) : -1;
	if (cwd_fd >= 0) {
		err = create_trigger(c, cwd_fd, name);
		if (!err)
			dir_fd = cwd_fd;
		else
			close(cwd_fd);
	}
	if (dir_fd < 0) {
		dir_fd = jvm_open_in_root(c->root_fd, "/tmp", O_PATH | O_DIRECTORY, 0);
		err = dir_fd < 0 ? dir_fd : create_trigger(c, dir_fd, name);
		if (err) {
			if (dir_fd >= 0)
				close(dir_fd);
			at_set_err(c, "cannot create %s in the JVM's cwd or /tmp as uid %u: %s",
				   name, (unsigned int)c->jvm->uid, strerror(-err));
			return err;
		}
	}
	/* root sends it, through its pidfd of the JVM, after checking SigCgt once more */
	at_send_msg(c, MSG_SIGQUIT, 0, NULL);
	while (at_remaining_ms(c) > 0) {
		int ms = delay_ms < at_remaining_ms(c) ? delay_ms : at_remaining_ms(c);

		(void)poll(NULL, 0, ms);
		sock = at_try_connect(c);
		if (sock >= 0 || sock != -ENOENT)
			break;
		if (delay_ms < BACKOFF_MAX_MS)
			delay_ms *= 2;
	}
	if (sock == -ENOENT) {
		err = -ETIMEDOUT;
		at_set_err(c, "JVM did not answer the attach request within %d ms", c->timeout_ms);
	} else if (sock < 0) {
		err = sock;
		at_set_err(c, "cannot connect to the JVM's attach socket: %s", strerror(-err));
	}
	(void)unlinkat(dir_fd, name, 0);
	close(dir_fd);
	return err ? err : sock;
}

static int io_wait(struct attach_ctx *c, int fd, short events)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int n;

	do {
		n = poll(&pfd, 1, at_remaining_ms(c));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

/*
 * The reply, read until the JVM closes the socket or the deadline: the first reply_cap - 1
 * bytes are kept (NUL-terminated), the rest is read and dropped so the JVM is never stuck.
 */
static int read_reply(struct attach_ctx *c, int sock, char *reply, size_t reply_cap,
		      size_t *ret_len)
{
	size_t len = 0;
	ssize_t n;
	int err;

	if (reply_cap < 2)
		return -EINVAL;
	for (;;) {
		char discard[512];
		int full = len >= reply_cap - 1;

		err = io_wait(c, sock, POLLIN);
		if (err)
			return err;
		if (full)
			n = recv(sock, discard, sizeof(discard), 0);
		else
			n = recv(sock, reply + len, reply_cap - 1 - len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		if (!full)
			len += (size_t)n;
	}
	reply[len] = '\0';
	*ret_len = len;
	return 0;
}

/* protocol 1: "1\0load\0<path>\0true\0<options>\0", reply read until the JVM closes */
int at_send_load(struct attach_ctx *c, int sock, const char *path, const char *options, char *reply,
		 size_t reply_cap, size_t *ret_len)
{
	char req[16 + 3 * HS_ARG_MAX];
	size_t len = 0, off = 0, plen = strlen(path) + 1, olen = strlen(options) + 1;
	ssize_t n;
	int err;

	memcpy(req, "1\0load\0", 7);
	len = 7;
	memcpy(req + len, path, plen);
	len += plen;
	memcpy(req + len, "true", 5);
	len += 5;
	memcpy(req + len, options, olen);
	len += olen;
	while (off < len) {
		err = io_wait(c, sock, POLLOUT);
		if (err)
			return err;
		n = send(sock, req + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return read_reply(c, sock, reply, reply_cap, ret_len);
}

/*
 * The JVM's text on one line, bytes a terminal might act on replaced: returns where the
 * text starts, after leading newlines and spaces (which stay in the buffer).
 */
static char *flatten(char *s)
{
	size_t n;

	for (; *s == '\n' || *s == ' '; s++)
		;
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
	n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	return s;
}

static int parse_int(const char *s, int *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n') || v < INT_MIN || v > INT_MAX)
		return -EINVAL;
	*ret = (int)v;
	return 0;
}

/*
 * Reply: "<status>\n" then the command's output. For load, JDK <= 20 writes the agent's
 * return value as "<rc>\n"; later JDKs write "return code: <rc>\n" and may add a message.
 * A failed dlopen or a refused load gives a non-zero status and a message.
 */
int at_parse_reply(struct attach_ctx *c, char *reply, size_t len)
{
	char *rest = memchr(reply, '\n', len), *msg;
	int status, rc, err;

	if (rest)
		*rest++ = '\0';
	else
		rest = reply + len;
	if (parse_int(reply, &status)) {
		reply = flatten(reply);
		at_set_err(c, "unexpected reply from the JVM: \"%.80s\"", reply);
		return -EPROTO;
	}
	if (status) {
		rest = flatten(rest);
		err = (strstr(rest, "not enabled") || strstr(rest, "not allowed") ||
		       strstr(rest, "ermission"))
			      ? -EPERM
			      : -EINVAL;
		if (*rest)
			at_set_err(c, "agent load failed: %.200s", rest);
		else
			at_set_err(c, "agent load failed: attach status %d", status);
		return err;
	}
	/* JDK 25 answers a failed dlopen() with status 0 and "<path> was not loaded.\n<dlerror>" */
	if (parse_int(!strncmp(rest, "return code: ", 13) ? rest + 13 : rest, &rc)) {
		rest = flatten(rest);
		at_set_err(c, "agent load failed: %.200s", *rest ? rest : "no return code");
		return -EINVAL;
	}
	msg = strchr(rest, '\n');
	msg = msg ? msg + 1 : rest + strlen(rest);
	if (rc) {
		char why[160] = "";

		msg = flatten(msg);
		/* jprof's agent says why it did not start (ring.h JP_AGENT_RC_FILES) */
		if (rc < JP_AGENT_RC_FILES && rc > JP_AGENT_RC_FILES - 4096)
			snprintf(
				why, sizeof(why),
				" (the agent could not create its files jprof-PID-TOKEN.ring/.dict "
				"in the JVM's /tmp: %s)",
				strerror(JP_AGENT_RC_FILES - rc));
		else if (rc < -1 && rc > -4096)
			snprintf(why, sizeof(why), " (the agent did not start: %s)", strerror(-rc));
		/*
		 * -EAGAIN: the JVM ran the load before its live phase (an attach listener
		 * started by the SIGQUIT of a JVM still starting): no JVMTI environment yet, the
		 * agent did nothing, a later try starts it
		 */
		if (rc == -EAGAIN) {
			at_set_err(c, "agent load too early: the JVM is still starting");
			return -EAGAIN;
		}
		at_set_err(c, "agent load failed: Agent_OnAttach returned %d%s%s%.160s", rc, why,
			   *msg ? ": " : "", msg);
		return -EINVAL;
	}
	return 0;
}

int jvm_attach_read_reply(int sock, int timeout_ms, char *reply, size_t cap, size_t *ret_len)
{
	struct attach_ctx c = {.deadline_ms = at_now_ms() + (timeout_ms > 0 ? timeout_ms : 0),
			       .timeout_ms = timeout_ms};

	return read_reply(&c, sock, reply, cap, ret_len);
}

int jvm_attach_parse_reply(char *reply, size_t len, char *err, size_t errlen)
{
	struct attach_ctx c = {.err = err, .errlen = errlen};

	if (errlen)
		err[0] = '\0';
	return at_parse_reply(&c, reply, len);
}

void at_log_reply(__u32 pid, const char *reply, size_t len)
{
	char buf[256];
	size_t i, n = 0;

	if (log_get_level() < LOG_DEBUG)
		return;
	for (i = 0; i < len && n < sizeof(buf) - 3; i++) {
		unsigned char ch = (unsigned char)reply[i];

		if (ch == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
		}
	}
	buf[n] = '\0';
	pr_debug("attach: pid %u: reply \"%s\"", pid, buf);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attach.c: loads the agent into a running HotSpot JVM (attach protocol 1), across namespaces. */
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
#include "log.h"
#include "ring.h"
#include "util/procfs.h"
#include "util/safe_open.h"

#define DEFAULT_TIMEOUT_MS 10000
#define AGENT_MAX	   (64 << 20)
#define REPLY_MAX	   8192
#define HS_ARG_MAX	   1024 /* HotSpot's limit per protocol-1 argument, NUL included */
#define BACKOFF_MIN_MS	   10
#define BACKOFF_MAX_MS	   200
#define GROUPS_MAX	   1024 /* supplementary groups taken over from the target */
#define REAP_GRACE_MS	   1000 /* the child's own deadline comes first; then it is killed */

/* child -> parent messages, one per SOCK_SEQPACKET record */
enum {
	MSG_SIGQUIT = 'Q',   /* trigger file created: please send SIGQUIT now */
	MSG_CONNECTED = 'C', /* connected to the JVM's attach socket */
	MSG_LOAD_SENT = 'L', /* the load command went out: the JVM may load the agent now */
	MSG_INFO = 'I',	     /* a line for jprof's debug log (the child's stderr is /dev/null) */
	MSG_RESULT = 'R',    /* final: code and text */
};

struct attach_msg {
	char type;
	char pad[3];
	__s32 code;
	char text[248];
};

/* what the child works with; every fd was opened by root before the child dropped to the JVM's user */
struct attach_ctx {
	const struct jvm_info *jvm;
	int root_fd;   /* "/" after chroot into the JVM's root, in its mount namespace */
	int cwd_fd;    /* the JVM's cwd (O_PATH), for the trigger file */
	int status_fd; /* /proc/<pid>/status of the JVM: SigCgt at the moment we need it */
	int agent_fd;  /* the agent library, read-only */
	int chan;      /* socket to the parent */
	long long deadline_ms;
	int timeout_ms;
	char *err;
	size_t errlen;
};

/* one attach in flight, as the parent (root) sees it */
struct jvm_attach {
	struct jvm_info jvm;
	pid_t child;  /* > 0 until reaped */
	pid_t parent; /* jprof, as the child sees it */
	int chan;    /* parent end of the socket pair */
	int pidfd;   /* the JVM, pinned: the only way SIGQUIT is sent */
	long long start_ms, deadline_ms;
	int timeout_ms;
	bool signalled, connected, load_sent, done;
	bool claimed; /* this jprof holds the JVM's SIGQUIT marker (claim_sigquit) */
	long long signal_ms, connected_ms, load_sent_ms; /* when each happened, for the debug log */
	int ret;
	char err[256];
};

static void set_err(struct attach_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(struct attach_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->errlen)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining_ms(const struct attach_ctx *c)
{
	long long left = c->deadline_ms - now_ms();

	return left > 0 ? (int)left : 0;
}

static void send_msg(struct attach_ctx *c, char type, int code, const char *text)
{
	struct attach_msg m = {.type = type, .code = code};

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	(void)send(c->chan, &m, sizeof(m), MSG_NOSIGNAL);
}

static __u64 fnv1a64(const unsigned char *p, size_t n)
{
	__u64 h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* the agent library, through the fd root opened: the child cannot open it by path */
static int read_agent(int fd, unsigned char **ret_buf, size_t *ret_len)
{
	unsigned char *buf;
	struct stat st;
	size_t len = 0;
	ssize_t n;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > AGENT_MAX)
		return -EINVAL;
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return -ENOMEM;
	while (len < (size_t)st.st_size) {
		n = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		len += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 1 when dir_fd/name is a copy of buf owned by us (the JVM's user), writable by no one else */
static int is_good_copy(int dir_fd, const char *name, const unsigned char *buf, size_t len)
{
	unsigned char chunk[65536];
	struct stat st;
	size_t off = 0;
	ssize_t n;
	int fd, ok = 0;

	fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size != (off_t)len)
		goto out_close;
	while (off < len) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (size_t)n > len - off || memcmp(chunk, buf + off, (size_t)n))
			goto out_close;
		off += (size_t)n;
	}
	ok = 1;
out_close:
	close(fd);
	return ok;
}

/*
 * Places the agent in dir (as the JVM sees it) as jprof-agent-<fnv1a64>-<uid>.so, created
 * by the child as the JVM's user, 0644. The uid in the name keeps users sharing a /tmp
 * apart: a JVM only ever maps a copy its own user owns, never one another user could
 * rewrite. Only ever replaced by rename(), so a mapped copy is never modified. Writes the
 * JVM-side path.
 */
static int place_agent(struct attach_ctx *c, const char *dir, const unsigned char *buf, size_t len,
		       char *ret_path, size_t path_len)
{
	char name[64], tmp[96];
	unsigned long long rnd = 0;
	struct statvfs sv;
	int dir_fd, fd, err;

	dir_fd = jvm_open_in_root(c->root_fd, dir, O_PATH | O_DIRECTORY, 0);
	if (dir_fd < 0)
		return dir_fd;
	/* dlopen() needs an exec mapping; hardened containers mount /tmp noexec */
	if (!fstatvfs(dir_fd, &sv) && (sv.f_flag & ST_NOEXEC)) {
		err = -EACCES;
		goto out_close;
	}
	snprintf(name, sizeof(name), "jprof-agent-%016llx-%u.so",
		 (unsigned long long)fnv1a64(buf, len), (unsigned int)geteuid());
	if (is_good_copy(dir_fd, name, buf, len))
		goto out_done;
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (unsigned long long)now_ms() ^ ((unsigned long long)getpid() << 32);
	snprintf(tmp, sizeof(tmp), "%s.%016llx.tmp", name, rnd);
	fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out_close;
	}
	err = fchmod(fd, 0644) ? -errno : 0; /* whatever our umask */
	if (!err)
		err = write_all(fd, buf, len);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		(void)unlinkat(dir_fd, tmp, 0);
		goto out_close;
	}
	/*
	 * A file of that name that is not our copy (left by an old build, or planted) is
	 * replaced where the JVM's user may rename over it. When that fails (another user's
	 * file in sticky /tmp, a directory of that name), the unique temp name serves as the
	 * final one.
	 */
	if (renameat(dir_fd, tmp, dir_fd, name)) {
		pr_debug("attach: rename %s/%s: %s, loading the temp copy", dir, tmp,
			 strerror(errno));
		snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, tmp);
		if (strlen(tmp) >= sizeof(name)) {
			err = -ENAMETOOLONG;
			(void)unlinkat(dir_fd, tmp, 0);
			goto out_close;
		}
	}
out_done:
	if (snprintf(ret_path, path_len, "%s/%s", dir, name) >= (int)path_len)
		err = -ENAMETOOLONG;
	else
		err = 0;
out_close:
	close(dir_fd);
	return err;
}

static int copy_agent(struct attach_ctx *c, char *ret_path, size_t path_len)
{
	/* /tmp first (what the JVM itself uses); the others when it is noexec */
	static const char *const dirs[] = {"/tmp", "/var/tmp", "/dev/shm"};
	unsigned char *buf = NULL;
	size_t len = 0, i;
	int err;

	err = read_agent(c->agent_fd, &buf, &len);
	if (err) {
		set_err(c, "cannot read the agent library: %s", strerror(-err));
		return err;
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		err = place_agent(c, dirs[i], buf, len, ret_path, path_len);
		if (!err)
			break;
		pr_debug("attach: cannot place agent in %s of pid %u: %s", dirs[i], c->jvm->pid,
			 strerror(-err));
	}
	free(buf);
	if (err)
		set_err(c, "cannot copy the agent into the JVM's /tmp as uid %u: %s",
			(unsigned int)geteuid(), strerror(-err));
	return err;
}

/*
 * Connects to the JVM's /tmp/.java_pid<nspid>. Returns the socket, -ENOENT when there is
 * no listening socket (absent, or stale from an earlier process: ECONNREFUSED), -errno.
 * Runs as the JVM's user inside its root, so a socket swapped in after the check can only
 * be one that user may connect to anyway; the peer check below makes sure we talk to the JVM.
 */
static int try_connect(struct attach_ctx *c)
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
	ms = remaining_ms(c) + 1; /* 0 would mean "block forever" */
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
static int wake_listener(struct attach_ctx *c)
{
	char name[64];
	int dir_fd = -1, cwd_fd, err, sock = -ENOENT, delay_ms = BACKOFF_MIN_MS;

	/* a process that does not catch SIGQUIT would dump core or die of it (root checks again) */
	err = jvm_signal_caught_fd(c->status_fd, SIGQUIT);
	if (err == 0) {
		set_err(c, "JVM does not handle SIGQUIT (started with -Xrs, or still starting), "
			   "refusing to signal it");
		return -EPERM;
	}
	if (err < 0) {
		if (err == -ESRCH)
			set_err(c, "no such process");
		else
			set_err(c, "cannot read signal state: %s", strerror(-err));
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
			set_err(c, "cannot create %s in the JVM's cwd or /tmp as uid %u: %s", name,
				(unsigned int)c->jvm->uid, strerror(-err));
			return err;
		}
	}
	/* root sends it, through its pidfd of the JVM, after checking SigCgt once more */
	send_msg(c, MSG_SIGQUIT, 0, NULL);
	while (remaining_ms(c) > 0) {
		int ms = delay_ms < remaining_ms(c) ? delay_ms : remaining_ms(c);

		(void)poll(NULL, 0, ms);
		sock = try_connect(c);
		if (sock >= 0 || sock != -ENOENT)
			break;
		if (delay_ms < BACKOFF_MAX_MS)
			delay_ms *= 2;
	}
	if (sock == -ENOENT) {
		err = -ETIMEDOUT;
		set_err(c, "JVM did not answer the attach request within %d ms", c->timeout_ms);
	} else if (sock < 0) {
		err = sock;
		set_err(c, "cannot connect to the JVM's attach socket: %s", strerror(-err));
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
		n = poll(&pfd, 1, remaining_ms(c));
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
static int send_load(struct attach_ctx *c, int sock, const char *path, const char *options,
		     char *reply, size_t reply_cap, size_t *ret_len)
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
static int parse_reply(struct attach_ctx *c, char *reply, size_t len)
{
	char *rest = memchr(reply, '\n', len), *msg;
	int status, rc, err;

	if (rest)
		*rest++ = '\0';
	else
		rest = reply + len;
	if (parse_int(reply, &status)) {
		reply = flatten(reply);
		set_err(c, "unexpected reply from the JVM: \"%.80s\"", reply);
		return -EPROTO;
	}
	if (status) {
		rest = flatten(rest);
		err = (strstr(rest, "not enabled") || strstr(rest, "not allowed") ||
		       strstr(rest, "ermission"))
			      ? -EPERM
			      : -EINVAL;
		if (*rest)
			set_err(c, "agent load failed: %.200s", rest);
		else
			set_err(c, "agent load failed: attach status %d", status);
		return err;
	}
	/* JDK 25 answers a failed dlopen() with status 0 and "<path> was not loaded.\n<dlerror>" */
	if (parse_int(!strncmp(rest, "return code: ", 13) ? rest + 13 : rest, &rc)) {
		rest = flatten(rest);
		set_err(c, "agent load failed: %.200s", *rest ? rest : "no return code");
		return -EINVAL;
	}
	msg = strchr(rest, '\n');
	msg = msg ? msg + 1 : rest + strlen(rest);
	if (rc) {
		char why[160] = "";

		msg = flatten(msg);
		/* jprof's agent says why it did not start (ring.h JP_AGENT_RC_FILES) */
		if (rc < JP_AGENT_RC_FILES && rc > JP_AGENT_RC_FILES - 4096)
			snprintf(why, sizeof(why),
				 " (the agent could not create its files jprof-PID-TOKEN.ring/.dict "
				 "in the JVM's /tmp: %s)",
				 strerror(JP_AGENT_RC_FILES - rc));
		else if (rc < -1 && rc > -4096)
			snprintf(why, sizeof(why), " (the agent did not start: %s)", strerror(-rc));
		set_err(c, "agent load failed: Agent_OnAttach returned %d%s%s%.160s", rc, why,
			*msg ? ": " : "", msg);
		return -EINVAL;
	}
	return 0;
}

int jvm_attach_read_reply(int sock, int timeout_ms, char *reply, size_t cap, size_t *ret_len)
{
	struct attach_ctx c = {.deadline_ms = now_ms() + (timeout_ms > 0 ? timeout_ms : 0),
			       .timeout_ms = timeout_ms};

	return read_reply(&c, sock, reply, cap, ret_len);
}

int jvm_attach_parse_reply(char *reply, size_t len, char *err, size_t errlen)
{
	struct attach_ctx c = {.err = err, .errlen = errlen};

	if (errlen)
		err[0] = '\0';
	return parse_reply(&c, reply, len);
}

static void log_reply(__u32 pid, const char *reply, size_t len)
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

/* the attach proper, in the child, as the JVM's user: copy, wake, load, parse */
static int child_attach(struct attach_ctx *c, const char *options)
{
	char path[HS_ARG_MAX], reply[REPLY_MAX];
	size_t reply_len = 0;
	int ret, sock;

	ret = copy_agent(c, path, sizeof(path));
	if (ret)
		return ret;
	sock = try_connect(c);
	if (sock == -ENOENT)
		sock = wake_listener(c);
	else if (sock < 0)
		set_err(c, "cannot connect to the JVM's attach socket: %s", strerror(-sock));
	if (sock < 0)
		return sock;
	send_msg(c, MSG_CONNECTED, 0, NULL);
	pr_debug("attach: pid %u: load %s %s", c->jvm->pid, path, options);
	send_msg(c, MSG_LOAD_SENT, 0, NULL);
	ret = send_load(c, sock, path, options, reply, sizeof(reply), &reply_len);
	close(sock);
	if (ret == -ETIMEDOUT || ret == -EAGAIN) {
		set_err(c, "JVM did not answer the load command within %d ms", c->timeout_ms);
		return -ETIMEDOUT;
	}
	if (ret) {
		set_err(c, "attach socket: %s", strerror(-ret));
		return ret;
	}
	log_reply(c->jvm->pid, reply, reply_len);
	return parse_reply(c, reply, reply_len);
}

/* CapEff, Uid and Gid of the child as the kernel reports them, read through an fd opened before */
static int check_dropped(int self_status_fd, uid_t uid, gid_t gid, char *why, size_t why_len)
{
	unsigned long long cap = ~0ull;
	unsigned int ruid, euid, suid, fsuid, rgid, egid, sgid, fsgid;
	char buf[4096], *p;
	ssize_t n;

	n = pread(self_status_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		snprintf(why, why_len, "cannot read the helper's own status");
		return -EIO;
	}
	buf[n] = '\0';
	p = strstr(buf, "\nCapEff:");
	if (!p || sscanf(p, "\nCapEff: %llx", &cap) != 1 || cap) {
		snprintf(why, why_len, "attach helper kept capabilities (CapEff %llx)", cap);
		return -EPERM;
	}
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p, "\nUid: %u %u %u %u", &ruid, &euid, &suid, &fsuid) != 4 ||
	    ruid != uid || euid != uid || suid != uid || fsuid != uid) {
		snprintf(why, why_len, "attach helper did not become uid %u", (unsigned int)uid);
		return -EPERM;
	}
	p = strstr(buf, "\nGid:");
	if (!p || sscanf(p, "\nGid: %u %u %u %u", &rgid, &egid, &sgid, &fsgid) != 4 ||
	    rgid != gid || egid != gid || sgid != gid || fsgid != gid) {
		snprintf(why, why_len, "attach helper did not become gid %u", (unsigned int)gid);
		return -EPERM;
	}
	return 0;
}

/*
 * Becomes the JVM's user: its groups, gid and uid (all of real, effective, saved, fs), and
 * no capabilities left, also when that uid is 0. Not dumpable, so the user cannot ptrace
 * the helper and read what it inherited of jprof's memory.
 */
static int drop_to(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2];

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(SYS_setgroups, (size_t)ngroups, groups))
		return -errno;
	if (setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return -errno;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return -errno;
	return 0;
}

/* every fd but those in keep[] closed; 0,1,2 point to /dev/null (devnull is kept too) */
static void close_others(const int *keep, int nkeep, int devnull)
{
	int lo = 3;

	(void)dup2(devnull, 0);
	(void)dup2(devnull, 1);
	(void)dup2(devnull, 2);
	/* keep[] is sorted by the caller */
	for (int i = 0; i < nkeep; i++) {
		if (keep[i] > lo)
			(void)syscall(SYS_close_range, lo, keep[i] - 1, 0);
		if (keep[i] + 1 > lo)
			lo = keep[i] + 1;
	}
	(void)syscall(SYS_close_range, lo, ~0U, 0);
}

static int cmp_int(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/*
 * The child: joins the JVM's mount namespace and root, drops to its user, then does all
 * file work and the protocol exchange. Only what root opened before the drop stays: the
 * JVM's root, cwd and status, the agent library (read-only), our own status, the channel.
 */
static void __attribute__((noreturn))
child_main(const struct jvm_attach *a, int chan, int agent_fd, const char *options,
	   const gid_t *groups, int ngroups)
{
	struct attach_ctx c = {.jvm = &a->jvm,
			       .chan = chan,
			       .agent_fd = agent_fd,
			       .cwd_fd = -1,
			       .deadline_ms = a->deadline_ms,
			       .timeout_ms = a->timeout_ms};
	char path[64], err[sizeof(((struct attach_msg *)0)->text)] = "";
	int proc_fd, ns_fd, self_fd, devnull, ret;
	struct stat ns_st, own_st;
	int keep[8], nkeep = 0;

	c.err = err;
	c.errlen = sizeof(err);
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* never outlive jprof */
	if (getppid() != a->parent)
		_exit(0);
	snprintf(path, sizeof(path), "/proc/%u", a->jvm.pid);
	proc_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	self_fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (proc_fd < 0 || devnull < 0 || self_fd < 0) {
		ret = proc_fd < 0 && errno == ENOENT ? -ESRCH : -errno;
		set_err(&c, "cannot open %s: %s", path, strerror(-ret));
		goto out;
	}
	c.root_fd = openat(proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	c.cwd_fd = openat(proc_fd, "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	c.status_fd = openat(proc_fd, "status", O_RDONLY | O_CLOEXEC);
	ns_fd = openat(proc_fd, "ns/mnt", O_RDONLY | O_CLOEXEC);
	if (c.root_fd < 0 || c.status_fd < 0 || ns_fd < 0) {
		ret = errno == ENOENT ? -ESRCH : -errno;
		set_err(&c, "cannot open the JVM's root, status and mount namespace: %s",
			strerror(-ret));
		goto out;
	}
	/* the pid those were opened by still names the JVM the parent pinned */
	if (syscall(SYS_pidfd_send_signal, a->pidfd, 0, NULL, 0) && errno == ESRCH) {
		ret = -ESRCH;
		set_err(&c, "no such process");
		goto out;
	}
	/* join the JVM's mount namespace (unless it is ours) and its root */
	if (fstat(ns_fd, &ns_st) || stat("/proc/self/ns/mnt", &own_st) ||
	    ns_st.st_ino != own_st.st_ino || ns_st.st_dev != own_st.st_dev) {
		if (setns(ns_fd, CLONE_NEWNS)) {
			ret = -errno;
			set_err(&c, "cannot join the JVM's mount namespace: %s", strerror(-ret));
			goto out;
		}
	}
	close(ns_fd);
	if (fchdir(c.root_fd) || chroot(".") || chdir("/")) {
		ret = -errno;
		set_err(&c, "cannot enter the JVM's root: %s", strerror(-ret));
		goto out;
	}
	close(c.root_fd);
	c.root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.root_fd < 0) {
		ret = -errno;
		set_err(&c, "cannot open the JVM's root: %s", strerror(-ret));
		goto out;
	}
	keep[nkeep++] = chan;
	keep[nkeep++] = agent_fd;
	keep[nkeep++] = c.root_fd;
	keep[nkeep++] = c.status_fd;
	keep[nkeep++] = self_fd;
	keep[nkeep++] = devnull;
	if (c.cwd_fd >= 0)
		keep[nkeep++] = c.cwd_fd;
	qsort(keep, (size_t)nkeep, sizeof(keep[0]), cmp_int);
	close_others(keep, nkeep, devnull);
	ret = drop_to(a->jvm.uid, a->jvm.gid, groups, ngroups);
	if (ret) {
		set_err(&c, "cannot become uid %u gid %u: %s", (unsigned int)a->jvm.uid,
			(unsigned int)a->jvm.gid, strerror(-ret));
		goto out;
	}
	ret = check_dropped(self_fd, a->jvm.uid, a->jvm.gid, err, sizeof(err));
	if (ret)
		goto out;
	/* a change of credentials cleared the parent-death signal: set it again, then make sure
	 * jprof did not die in between */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != a->parent)
		_exit(0);
	snprintf(path, sizeof(path), "%d groups", ngroups);
	send_msg(&c, MSG_INFO, 0, path);
	ret = child_attach(&c, options);
out:
	send_msg(&c, MSG_RESULT, ret, err);
	_exit(0);
}

static void reap(struct jvm_attach *a, bool kill_it)
{
	int status;

	if (a->child <= 0)
		return;
	/* not yet reaped, so the pid is still our child's: kill() cannot hit another process */
	if (kill_it)
		(void)kill(a->child, SIGKILL);
	if (waitpid(a->child, &status, WNOHANG) == a->child)
		a->child = 0;
}

/*
 * 1 when the JVM's listener is up and reachable, 0 when not (or unknown). A SIGQUIT then
 * would not start anything: HotSpot prints a thread dump into the application's output
 * instead. Up: a unix socket of the JVM's network namespace listens (__SO_ACCEPTCON) at
 * /tmp/.java_pid<nspid>(.tmp: HotSpot binds that name and renames it), read from procfs,
 * which the JVM's user cannot plant; reachable: /tmp/.java_pid<nspid> exists in the JVM's
 * root. A socket file removed (a /tmp cleaner) while the listener runs is not: HotSpot
 * restarts its listener at the next SIGQUIT then (check_socket_file), and prints no dump.
 */
static int listener_up(__u32 pid, __u32 nspid)
{
	char path[64], line[512], want[48], sock_path[256];
	unsigned int flags, lines = 0;
	size_t wn;
	int up = 0, root_fd, fd;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/net/unix", pid);
	wn = (size_t)snprintf(want, sizeof(want), "/tmp/.java_pid%u", nspid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* a host's socket table is its own size: a budget, then "unknown" */
	while (!up && lines++ < 1000000 && fgets(line, sizeof(line), f))
		up = sscanf(line, "%*s %*x %*x %x %*x %*x %*u %255s", &flags, sock_path) == 2 &&
		     (flags & 0x10000) && !strncmp(sock_path, want, wn) &&
		     (!sock_path[wn] || !strcmp(sock_path + wn, ".tmp"));
	fclose(f);
	if (!up)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/root", pid);
	root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return 0;
	fd = jvm_open_in_root(root_fd, want, O_PATH | O_NOFOLLOW, 0);
	close(root_fd);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

#define SIGQUIT_DIR    "/run/jprof"
#define SIGQUIT_HOLD_S 10 /* a listener not up this long after a SIGQUIT: another may be sent */

static void sigquit_marker(__u32 pid, char *buf, size_t len)
{
	__u64 start = 0;

	(void)proc_start_ticks(pid, &start);
	snprintf(buf, len, "sigquit-%u-%llu", pid, (unsigned long long)start);
}

/*
 * Two jprofs attaching the same JVM at once must not both send it SIGQUIT: the second
 * one, arriving after the first had started the listener, makes the JVM print a thread
 * dump. The one that creates /run/jprof/sigquit-<pid>-<start ticks> (root's own directory)
 * sends it; the other waits for the listener. 1: this jprof may send it.
 */
/*
 * Markers older than SIGQUIT_HOLD_S are spent: a jprof killed mid-attach left them. At
 * most 256 a call, so the directory stays as small as the attaches in flight.
 */
static void sweep_sigquit(int dfd)
{
	int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
	struct dirent *de;
	struct stat st;
	int n = 0;

	if (!d) {
		if (rfd >= 0)
			close(rfd);
		return;
	}
	while (n++ < 256 && (de = readdir(d)))
		if (!strncmp(de->d_name, "sigquit-", 8) &&
		    !fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    time(NULL) - st.st_mtime >= SIGQUIT_HOLD_S)
			(void)unlinkat(dfd, de->d_name, 0);
	closedir(d);
}

static int claim_sigquit(struct jvm_attach *a)
{
	char name[64];
	struct stat st;
	int dfd, fd = -1, tries;

	if (mkdir(SIGQUIT_DIR, 0700) && errno != EEXIST)
		return 1; /* no /run: nobody else can have claimed it there either */
	dfd = open(SIGQUIT_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 1;
	if (fstat(dfd, &st) || st.st_uid != 0 || (st.st_mode & 022)) {
		close(dfd);
		return 1;
	}
	sweep_sigquit(dfd);
	sigquit_marker(a->jvm.pid, name, sizeof(name));
	for (tries = 0; tries < 2 && fd < 0; tries++) {
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
		/* another jprof's, within SIGQUIT_HOLD_S: its signal starts the listener */
		if (!fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
		    time(NULL) - st.st_mtime < SIGQUIT_HOLD_S)
			break;
		(void)unlinkat(dfd, name, 0);
	}
	close(dfd);
	if (fd < 0)
		return errno == EEXIST ? 0 : 1;
	close(fd);
	a->claimed = true;
	return 1;
}

static void release_sigquit(struct jvm_attach *a)
{
	char path[96];

	if (!a->claimed)
		return;
	a->claimed = false;
	snprintf(path, sizeof(path), SIGQUIT_DIR "/");
	sigquit_marker(a->jvm.pid, path + strlen(path), sizeof(path) - strlen(path));
	(void)unlink(path);
}

static void finish(struct jvm_attach *a, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void finish(struct jvm_attach *a, int ret, const char *fmt, ...)
{
	va_list ap;

	if (a->done)
		return;
	a->done = true;
	a->ret = ret;
	release_sigquit(a);
	if (fmt) {
		va_start(ap, fmt);
		(void)vsnprintf(a->err, sizeof(a->err), fmt, ap);
		va_end(ap);
	}
}

int jvm_attach__start(const struct jvm_info *jvm, int agent_fd, const char *options, int timeout_ms,
		      unsigned int flags, struct jvm_attach **ret)
{
	gid_t *groups = NULL;
	struct jvm_attach *a;
	int sv[2], ngroups, err;
	pid_t child;

	if (!options)
		options = "";
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->chan = -1;
	a->timeout_ms = timeout_ms > 0 ? timeout_ms : DEFAULT_TIMEOUT_MS;
	a->start_ms = now_ms();
	a->deadline_ms = a->start_ms + a->timeout_ms;
	*ret = a;
	/* pin the process first, then look at it afresh: the caller's info may be stale */
	a->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)jvm->pid, 0);
	if (a->pidfd < 0) {
		if (errno == ESRCH)
			finish(a, -ESRCH, "no such process");
		else
			finish(a, -errno, "pidfd_open: %s", strerror(errno));
		return 0;
	}
	err = jvm_probe("/proc", jvm->pid, &a->jvm);
	if (err == -ESRCH) {
		finish(a, err, "no such process");
		return 0;
	}
	if (err == -ENOEXEC) {
		finish(a, err, "not a JVM");
		return 0;
	}
	if (err) {
		finish(a, err, "cannot read /proc/%u: %s", jvm->pid, strerror(-err));
		return 0;
	}
	if (a->jvm.agent == JVM_AGENT_LOADED && !(flags & JVM_ATTACH_AGAIN)) {
		finish(a, 1, NULL);
		return 0;
	}
	if (a->jvm.agent == JVM_AGENT_NO_ATTACH) {
		finish(a, -EACCES, "attach mechanism disabled (-XX:+DisableAttachMechanism)");
		return 0;
	}
	if (strlen(options) >= HS_ARG_MAX) {
		finish(a, -E2BIG, "agent options longer than %d bytes", HS_ARG_MAX - 1);
		return 0;
	}
	groups = calloc(GROUPS_MAX, sizeof(*groups));
	if (!groups) {
		finish(a, -ENOMEM, "out of memory");
		return 0;
	}
	ngroups = jvm_read_groups("/proc", jvm->pid, groups, GROUPS_MAX);
	if (ngroups < 0) {
		finish(a, ngroups, "cannot read the JVM's groups: %s", strerror(-ngroups));
		goto out_free;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		finish(a, -errno, "socketpair: %s", strerror(errno));
		goto out_free;
	}
	a->parent = getpid();
	child = fork();
	if (child < 0) {
		finish(a, -errno, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto out_free;
	}
	if (child == 0) {
		close(sv[0]);
		child_main(a, sv[1], agent_fd, options, groups, ngroups);
	}
	close(sv[1]);
	a->child = child;
	a->chan = sv[0];
	if (fcntl(a->chan, F_SETFL, O_NONBLOCK))
		pr_debug("attach: O_NONBLOCK: %s", strerror(errno));
out_free:
	free(groups);
	return 0;
}

int jvm_clear_stale_channel(const struct jvm_info *jvm)
{
	__u64 start_ns = proc_start_mono_ns(jvm->pid);
	int root_fd, tmp_fd, n;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/root", jvm->pid);
	root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	tmp_fd = jvm_open_in_root(root_fd, "/tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW, 0);
	close(root_fd);
	if (tmp_fd < 0)
		return tmp_fd;
	n = jvm_chan_files_sweep(tmp_fd, jvm->nspid, jvm->uid, start_ns);
	close(tmp_fd);
	if (n > 0)
		pr_debug("attach: pid %u: removed %d agent file%s an earlier process of its pid "
			 "left in its /tmp", jvm->pid, n, n > 1 ? "s" : "");
	return n;
}

int jvm_attach__fd(const struct jvm_attach *a)
{
	return a && !a->done ? a->chan : -1;
}

/*
 * SIGQUIT for the child, sent by root to the pinned process, once, only when it is caught,
 * only when the listener is not up already and no other jprof has just sent one
 */
static int send_sigquit(struct jvm_attach *a)
{
	int caught;

	if (a->signalled)
		return 0;
	a->signalled = true;
	a->signal_ms = now_ms();
	if (listener_up(a->jvm.pid, a->jvm.nspid)) {
		pr_debug("attach: pid %u: its attach listener is up already, no SIGQUIT",
			 a->jvm.pid);
		return 0;
	}
	if (!claim_sigquit(a)) {
		pr_debug("attach: pid %u: another jprof has just sent it SIGQUIT, waiting for its "
			 "listener", a->jvm.pid);
		return 0;
	}
	caught = jvm_signal_caught("/proc", a->jvm.pid, SIGQUIT);
	if (caught == 0) {
		finish(a, -EPERM,
		       "JVM does not handle SIGQUIT (started with -Xrs, or still "
		       "starting), refusing to signal it");
		return -EPERM;
	}
	if (caught < 0) {
		finish(a, caught, "%s",
		       caught == -ESRCH ? "no such process" : "cannot read SigCgt");
		return caught;
	}
	if (syscall(SYS_pidfd_send_signal, a->pidfd, SIGQUIT, NULL, 0)) {
		int err = -errno;

		finish(a, err, "%s", err == -ESRCH ? "no such process" : "cannot signal the JVM");
		return err;
	}
	return 0;
}

/* the child's text, on one line, printable only: it came from a process the JVM's user could touch */
static void take_text(char *dst, size_t dst_len, const char *src, size_t src_len)
{
	size_t i;

	for (i = 0; i + 1 < dst_len && i < src_len && src[i]; i++)
		dst[i] = ((unsigned char)src[i] < 0x20 || src[i] == 0x7f) ? '?' : src[i];
	dst[i] = '\0';
}

int jvm_attach__step(struct jvm_attach *a)
{
	struct attach_msg m;
	ssize_t n;

	while (!a->done) {
		n = recv(a->chan, &m, sizeof(m), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			finish(a, -EIO, "attach helper ended without a result");
			break;
		}
		if ((size_t)n != sizeof(m)) {
			finish(a, -EPROTO, "malformed message from the attach helper");
			break;
		}
		switch (m.type) {
		case MSG_SIGQUIT:
			(void)send_sigquit(a);
			break;
		case MSG_INFO:
			take_text(a->err, sizeof(a->err), m.text, sizeof(m.text));
			pr_debug("attach: pid %u: helper %d runs as uid %u gid %u with %s, CapEff "
				 "0, "
				 "in the JVM's mount namespace and root",
				 a->jvm.pid, (int)a->child, (unsigned int)a->jvm.uid,
				 (unsigned int)a->jvm.gid, a->err);
			a->err[0] = '\0';
			break;
		case MSG_CONNECTED:
			a->connected = true;
			a->connected_ms = now_ms();
			break;
		case MSG_LOAD_SENT:
			a->load_sent = true;
			a->load_sent_ms = now_ms();
			break;
		case MSG_RESULT:
			/* 1 already loaded, 0 loaded, else an errno */
			if (m.code > 1 || m.code < -4095) {
				finish(a, -EPROTO, "malformed result from the attach helper");
				break;
			}
			a->done = true;
			a->ret = m.code;
			release_sigquit(a);
			take_text(a->err, sizeof(a->err), m.text, sizeof(m.text));
			break;
		default:
			finish(a, -EPROTO, "malformed message from the attach helper");
			break;
		}
	}
	if (!a->done && now_ms() >= a->deadline_ms + REAP_GRACE_MS)
		finish(a, -ETIMEDOUT, "JVM did not answer within %d ms%s", a->timeout_ms,
		       a->load_sent ? " of the load command" : "");
	if (a->done && a->child > 0) {
		long long t = now_ms();

		pr_debug("attach: pid %u: %s after %lld ms (SIGQUIT %lld, socket %lld, load sent "
			 "%lld "
			 "ms; -1: not reached)",
			 a->jvm.pid, a->ret >= 0 ? "done" : "failed", t - a->start_ms,
			 a->signalled ? a->signal_ms - a->start_ms : -1,
			 a->connected ? a->connected_ms - a->start_ms : -1,
			 a->load_sent ? a->load_sent_ms - a->start_ms : -1);
	}
	if (a->done)
		reap(a, true);
	return a->done;
}

int jvm_attach__result(const struct jvm_attach *a, const char **ret_err)
{
	if (ret_err)
		*ret_err = a->err;
	return a->done ? a->ret : -EINPROGRESS;
}

bool jvm_attach__load_sent(const struct jvm_attach *a)
{
	return a->load_sent;
}

const char *jvm_attach__progress(const struct jvm_attach *a)
{
	if (a->load_sent)
		return "load command sent, the JVM has not answered yet";
	if (a->connected)
		return "connected to the JVM's attach socket";
	if (a->signalled)
		return "SIGQUIT sent, the JVM has not opened its attach socket yet";
	return "attach in progress";
}

bool jvm_attach__reaped(const struct jvm_attach *a)
{
	return a->child <= 0;
}

void jvm_attach__free(struct jvm_attach *a)
{
	if (!a)
		return;
	release_sigquit(a);
	reap(a, true);
	/* SIGKILL takes effect at once unless the helper sits in an uninterruptible wait */
	for (int i = 0; a->child > 0 && i < 50; i++) {
		(void)poll(NULL, 0, 2);
		reap(a, false);
	}
	if (a->child > 0)
		pr_debug("attach: helper %d of pid %u not reaped yet", (int)a->child, a->jvm.pid);
	if (a->chan >= 0)
		close(a->chan);
	if (a->pidfd >= 0)
		close(a->pidfd);
	free(a);
}

int jvm_attach_agent(const struct jvm_info *jvm, const char *agent_path, const char *options,
		     int timeout_ms, char *err, size_t errlen)
{
	struct jvm_attach *a = NULL;
	const char *why = "";
	int fd, ret;

	if (errlen)
		err[0] = '\0';
	fd = open(agent_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (errlen)
			snprintf(err, errlen, "cannot read agent %s: %s", agent_path,
				 strerror(-ret));
		return ret;
	}
	ret = jvm_attach__start(jvm, fd, options, timeout_ms, 0, &a);
	if (ret) {
		close(fd);
		if (errlen)
			snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	while (!jvm_attach__step(a)) {
		struct pollfd pfd = {.fd = jvm_attach__fd(a), .events = POLLIN};

		(void)poll(&pfd, 1, 50);
	}
	ret = jvm_attach__result(a, &why);
	if (errlen)
		snprintf(err, errlen, "%s", why);
	jvm_attach__free(a);
	close(fd);
	return ret;
}

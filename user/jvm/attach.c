// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attach.c: loads the agent into a running HotSpot JVM (attach protocol 1), across namespaces. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "log.h"

#define DEFAULT_TIMEOUT_MS 10000
#define AGENT_MAX	   (64 << 20)
#define REPLY_MAX	   8192
#define HS_ARG_MAX	   1024 /* HotSpot's limit per protocol-1 argument, NUL included */
#define BACKOFF_MIN_MS	   10
#define BACKOFF_MAX_MS	   200

/* everything one attach needs to keep open */
struct attach_ctx {
	const struct jvm_info *jvm;
	int pidfd;   /* pins the process identity for the one signal we send; -1 without pidfd */
	int root_fd; /* /proc/<pid>/root: the JVM's view of the filesystem */
	long long deadline_ms;
	int timeout_ms;
	char *err;
	size_t errlen;
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

/*
 * Acts as the JVM's user for file system access (creation ownership, permission checks,
 * socket connect). fsuid/fsgid are per thread, unlike seteuid(), which glibc applies to
 * every thread of jprof; euid stays 0, so HotSpot's SO_PEERCRED check (root or same
 * euid) passes. Going from fsuid 0 to non-zero drops the fs capabilities (DAC override)
 * until we switch back.
 */
static int fs_become(uid_t uid, gid_t gid)
{
	(void)setfsgid(gid);
	(void)setfsuid(uid);
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid) {
		(void)setfsuid(geteuid());
		(void)setfsgid(getegid());
		return -EPERM;
	}
	return 0;
}

static void fs_restore(void)
{
	(void)setfsuid(geteuid());
	(void)setfsgid(getegid());
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

static int read_agent(const char *path, unsigned char **ret_buf, size_t *ret_len)
{
	unsigned char *buf;
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out_close;
	}
	err = -EINVAL;
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > AGENT_MAX)
		goto out_close;
	buf = malloc((size_t)st.st_size);
	err = -ENOMEM;
	if (!buf)
		goto out_close;
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			free(buf);
			goto out_close;
		}
		len += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	err = 0;
out_close:
	close(fd);
	return err;
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

/* 1 when dir_fd/name is our own (root-owned, not writable by others) copy of buf */
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
 * Places the agent in dir (as the JVM sees it) as jprof-agent-<fnv1a64>.so, owned by us
 * and 0644, so no JVM user can rewrite code another user's JVM maps. Only ever replaced
 * by rename(), so a copy mapped by a JVM is never modified. Writes the JVM-side path.
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
	snprintf(name, sizeof(name), "jprof-agent-%016llx.so",
		 (unsigned long long)fnv1a64(buf, len));
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
	 * A file of that name that is not our copy (planted by a JVM user, or left by an old
	 * build) is replaced: root may rename over it in sticky /tmp. When even that fails
	 * (a directory of that name), the unique temp name serves as the final one.
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

static int copy_agent(struct attach_ctx *c, const char *agent_path, char *ret_path, size_t path_len)
{
	/* /tmp first (what the JVM itself uses); the others when it is noexec */
	static const char *const dirs[] = {"/tmp", "/var/tmp", "/dev/shm"};
	unsigned char *buf = NULL;
	size_t len = 0, i;
	int err;

	err = read_agent(agent_path, &buf, &len);
	if (err) {
		set_err(c, "cannot read agent %s: %s", agent_path, strerror(-err));
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
		set_err(c, "cannot copy the agent into the JVM's /tmp: %s", strerror(-err));
	return err;
}

/*
 * Connects to the JVM's /tmp/.java_pid<nspid>. Returns the socket, -ENOENT when there is
 * no listening socket (absent, or stale from an earlier process: ECONNREFUSED), -errno.
 */
static int try_connect(struct attach_ctx *c)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	struct timeval tv;
	char path[64];
	struct stat st;
	int path_fd, sock = -1, err, ms;

	snprintf(path, sizeof(path), "/tmp/.java_pid%u", c->jvm->nspid);
	/* O_PATH | O_NOFOLLOW: a symlink planted there is opened as itself and refused below */
	path_fd = jvm_open_in_root(c->root_fd, path, O_PATH | O_NOFOLLOW, 0);
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
	/* connect through the fd we checked, not a path that could change meanwhile */
	snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d", path_fd);
	err = fs_become(c->jvm->uid, c->jvm->gid);
	if (err)
		goto out_close;
	err = connect(sock, (struct sockaddr *)&addr, sizeof(addr)) ? -errno : 0;
	fs_restore();
	if (err == -ECONNREFUSED)
		err = -ENOENT;
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

	err = fs_become(c->jvm->uid, c->jvm->gid);
	if (err)
		return err;
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
	fs_restore();
	if (fd >= 0)
		close(fd);
	return err;
}

static int send_sigquit(struct attach_ctx *c)
{
	if (c->pidfd >= 0) {
		if (!syscall(SYS_pidfd_send_signal, c->pidfd, SIGQUIT, NULL, 0))
			return 0;
		if (errno != ENOSYS)
			return -errno;
	}
	return kill((pid_t)c->jvm->pid, SIGQUIT) ? -errno : 0;
}

/*
 * Starts the JVM's attach listener the way HotSpot expects it: a .attach_pid<nspid> file
 * owned by its euid in its cwd (else its /tmp), then SIGQUIT; the signal dispatcher sees
 * the file and creates /tmp/.java_pid<nspid> instead of printing a thread dump.
 */
static int wake_listener(struct attach_ctx *c)
{
	char name[64], path[64];
	int dir_fd = -1, cwd_fd, err, sock = -ENOENT, delay_ms = BACKOFF_MIN_MS;

	/* a process that does not catch SIGQUIT would dump core or die of it */
	err = jvm_signal_caught("/proc", c->jvm->pid, SIGQUIT);
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
	snprintf(path, sizeof(path), "/proc/%u/cwd", c->jvm->pid);
	cwd_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
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
	err = send_sigquit(c);
	if (err) {
		if (err == -ESRCH)
			set_err(c, "no such process");
		else
			set_err(c, "cannot signal the JVM: %s", strerror(-err));
		goto out_unlink;
	}
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
out_unlink:
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
	len = 0;
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

/* the JVM's text on one line, bytes a terminal might act on replaced */
static void flatten(char *s)
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
		flatten(reply);
		set_err(c, "unexpected reply from the JVM: \"%.80s\"", reply);
		return -EPROTO;
	}
	if (status) {
		flatten(rest);
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
		flatten(rest);
		set_err(c, "agent load failed: %.200s", *rest ? rest : "no return code");
		return -EINVAL;
	}
	msg = strchr(rest, '\n');
	msg = msg ? msg + 1 : rest + strlen(rest);
	if (rc) {
		flatten(msg);
		set_err(c, "agent load failed: Agent_OnAttach returned %d%s%.160s", rc,
			*msg ? ": " : "", msg);
		return -EINVAL;
	}
	return 0;
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

int jvm_attach_agent(const struct jvm_info *jvm, const char *agent_path, const char *options,
		     int timeout_ms, char *err, size_t errlen)
{
	struct attach_ctx c = {.err = err, .errlen = errlen, .pidfd = -1, .root_fd = -1};
	char path[PATH_MAX], reply[REPLY_MAX];
	struct jvm_info cur;
	size_t reply_len = 0;
	int ret, sock = -1;

	if (errlen)
		err[0] = '\0';
	if (!options)
		options = "";
	c.timeout_ms = timeout_ms > 0 ? timeout_ms : DEFAULT_TIMEOUT_MS;
	c.deadline_ms = now_ms() + c.timeout_ms;
	c.jvm = &cur;
	/* pin the process first, then look at it afresh: the caller's info may be stale */
	c.pidfd = (int)syscall(SYS_pidfd_open, (pid_t)jvm->pid, 0);
	if (c.pidfd < 0 && errno == ESRCH) {
		set_err(&c, "no such process");
		return -ESRCH;
	}
	ret = jvm_probe("/proc", jvm->pid, &cur);
	if (ret == -ESRCH) {
		set_err(&c, "no such process");
		goto out_close;
	}
	if (ret == -ENOEXEC) {
		set_err(&c, "not a JVM");
		goto out_close;
	}
	if (ret) {
		set_err(&c, "cannot read /proc/%u: %s", jvm->pid, strerror(-ret));
		goto out_close;
	}
	if (cur.agent == JVM_AGENT_LOADED) {
		ret = 1;
		goto out_close;
	}
	if (cur.agent == JVM_AGENT_NO_ATTACH) {
		set_err(&c, "attach mechanism disabled (-XX:+DisableAttachMechanism)");
		ret = -EPERM;
		goto out_close;
	}
	if (strlen(options) >= HS_ARG_MAX) {
		set_err(&c, "agent options longer than %d bytes", HS_ARG_MAX - 1);
		ret = -E2BIG;
		goto out_close;
	}
	snprintf(path, sizeof(path), "/proc/%u/root", cur.pid);
	c.root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.root_fd < 0) {
		ret = errno == ENOENT ? -ESRCH : -errno;
		if (ret == -ESRCH)
			set_err(&c, "no such process");
		else
			set_err(&c, "cannot open %s: %s", path, strerror(-ret));
		goto out_close;
	}
	/* the pid we opened /proc/<pid>/root by is still the process the pidfd pinned */
	if (c.pidfd >= 0 && syscall(SYS_pidfd_send_signal, c.pidfd, 0, NULL, 0) && errno == ESRCH) {
		set_err(&c, "no such process");
		ret = -ESRCH;
		goto out_close;
	}
	ret = copy_agent(&c, agent_path, path, HS_ARG_MAX);
	if (ret)
		goto out_close;
	sock = try_connect(&c);
	if (sock == -ENOENT)
		sock = wake_listener(&c);
	else if (sock < 0)
		set_err(&c, "cannot connect to the JVM's attach socket: %s", strerror(-sock));
	if (sock < 0) {
		ret = sock;
		goto out_close;
	}
	pr_debug("attach: pid %u: load %s %s", cur.pid, path, options);
	ret = send_load(&c, sock, path, options, reply, sizeof(reply), &reply_len);
	if (ret == -ETIMEDOUT || ret == -EAGAIN) {
		ret = -ETIMEDOUT;
		set_err(&c, "JVM did not answer the attach request within %d ms", c.timeout_ms);
	} else if (ret) {
		set_err(&c, "attach socket: %s", strerror(-ret));
	} else {
		log_reply(cur.pid, reply, reply_len);
		ret = parse_reply(&c, reply, reply_len);
	}
out_close:
	if (sock >= 0)
		close(sock);
	if (c.root_fd >= 0)
		close(c.root_fd);
	if (c.pidfd >= 0)
		close(c.pidfd);
	return ret;
}

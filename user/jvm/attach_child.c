// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attach_child.c: the attach's child: into the JVM's namespaces, down to its user, attach */
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

void at_set_err(struct attach_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->errlen)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
}

long long at_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int at_remaining_ms(const struct attach_ctx *c)
{
	long long left = c->deadline_ms - at_now_ms();

	return left > 0 ? (int)left : 0;
}

void at_send_msg(struct attach_ctx *c, char type, int code, const char *text)
{
	struct attach_msg m = {.type = type, .code = code};

	if (text)
		snprintf(m.text, sizeof(m.text), "%s", text);
	(void)send(c->chan, &m, sizeof(m), MSG_NOSIGNAL);
}

/* the attach proper, in the child, as the JVM's user: copy, wake, load, parse */
static int child_attach(struct attach_ctx *c, const char *options)
{
	char path[HS_ARG_MAX], reply[REPLY_MAX];
	size_t reply_len = 0;
	int ret, sock;

	ret = at_copy_agent(c, path, sizeof(path));
	if (ret)
		return ret;
	sock = at_try_connect(c);
	if (sock == -ENOENT)
		sock = at_wake_listener(c);
	else if (sock < 0)
		at_set_err(c, "cannot connect to the JVM's attach socket: %s", strerror(-sock));
	if (sock < 0)
		return sock;
	at_send_msg(c, MSG_CONNECTED, 0, NULL);
	pr_debug("attach: pid %u: load %s %s", c->jvm->pid, path, options);
	at_send_msg(c, MSG_LOAD_SENT, 0, NULL);
	ret = at_send_load(c, sock, path, options, reply, sizeof(reply), &reply_len);
	close(sock);
	if (ret == -ETIMEDOUT || ret == -EAGAIN) {
		at_set_err(c, "JVM did not answer the load command within %d ms", c->timeout_ms);
		return -ETIMEDOUT;
	}
	if (ret) {
		at_set_err(c, "attach socket: %s", strerror(-ret));
		return ret;
	}
	at_log_reply(c->jvm->pid, reply, reply_len);
	return at_parse_reply(c, reply, reply_len);
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
void __attribute__((noreturn)) at_child_main(const struct jvm_attach *a, int chan, int agent_fd,
					     const char *options, const gid_t *groups, int ngroups)
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
		at_set_err(&c, "cannot open %s: %s", path, strerror(-ret));
		goto out;
	}
	c.root_fd = openat(proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	c.cwd_fd = openat(proc_fd, "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	c.status_fd = openat(proc_fd, "status", O_RDONLY | O_CLOEXEC);
	ns_fd = openat(proc_fd, "ns/mnt", O_RDONLY | O_CLOEXEC);
	if (c.root_fd < 0 || c.status_fd < 0 || ns_fd < 0) {
		ret = errno == ENOENT ? -ESRCH : -errno;
		at_set_err(&c, "cannot open the JVM's root, status and mount namespace: %s",
			   strerror(-ret));
		goto out;
	}
	/* the pid those were opened by still names the JVM the parent pinned */
	if (syscall(SYS_pidfd_send_signal, a->pidfd, 0, NULL, 0) && errno == ESRCH) {
		ret = -ESRCH;
		at_set_err(&c, "no such process");
		goto out;
	}
	/* join the JVM's mount namespace (unless it is ours) and its root */
	if (fstat(ns_fd, &ns_st) || stat("/proc/self/ns/mnt", &own_st) ||
	    ns_st.st_ino != own_st.st_ino || ns_st.st_dev != own_st.st_dev) {
		if (setns(ns_fd, CLONE_NEWNS)) {
			ret = -errno;
			at_set_err(&c, "cannot join the JVM's mount namespace: %s", strerror(-ret));
			goto out;
		}
	}
	close(ns_fd);
	if (fchdir(c.root_fd) || chroot(".") || chdir("/")) {
		ret = -errno;
		at_set_err(&c, "cannot enter the JVM's root: %s", strerror(-ret));
		goto out;
	}
	close(c.root_fd);
	c.root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c.root_fd < 0) {
		ret = -errno;
		at_set_err(&c, "cannot open the JVM's root: %s", strerror(-ret));
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
		at_set_err(&c, "cannot become uid %u gid %u: %s", (unsigned int)a->jvm.uid,
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
	at_send_msg(&c, MSG_INFO, 0, path);
	ret = child_attach(&c, options);
out:
	at_send_msg(&c, MSG_RESULT, ret, err);
	_exit(0);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * attach.c: loads the agent into a running HotSpot JVM (attach protocol 1), across namespaces.
 * This file is the parent's side, as root: start a child, step it, finish, reap. The child
 * (attach_child.c) enters the JVM's namespaces and user, copies the library
 * (attach_copy.c) and talks the protocol (attach_proto.c); attach_sigquit.c starts the
 * JVM's listener.
 */
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

void at_finish(struct jvm_attach *a, int ret, const char *fmt, ...)
{
	va_list ap;

	if (a->done)
		return;
	a->done = true;
	a->ret = ret;
	at_release_sigquit(a);
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
	a->start_ms = at_now_ms();
	a->deadline_ms = a->start_ms + a->timeout_ms;
	*ret = a;
	/* pin the process first, then look at it afresh: the caller's info may be stale */
	a->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)jvm->pid, 0);
	if (a->pidfd < 0) {
		if (errno == ESRCH)
			at_finish(a, -ESRCH, "no such process");
		else
			at_finish(a, -errno, "pidfd_open: %s", strerror(errno));
		return 0;
	}
	err = jvm_probe("/proc", jvm->pid, &a->jvm);
	if (err == -ESRCH) {
		at_finish(a, err, "no such process");
		return 0;
	}
	if (err == -ENOEXEC) {
		at_finish(a, err, "not a JVM");
		return 0;
	}
	if (err) {
		at_finish(a, err, "cannot read /proc/%u: %s", jvm->pid, strerror(-err));
		return 0;
	}
	if (a->jvm.agent == JVM_AGENT_LOADED && !(flags & JVM_ATTACH_AGAIN)) {
		at_finish(a, 1, NULL);
		return 0;
	}
	if (a->jvm.agent == JVM_AGENT_NO_ATTACH) {
		at_finish(a, -EACCES, "attach mechanism disabled (-XX:+DisableAttachMechanism)");
		return 0;
	}
	if (strlen(options) >= HS_ARG_MAX) {
		at_finish(a, -E2BIG, "agent options longer than %d bytes", HS_ARG_MAX - 1);
		return 0;
	}
	groups = calloc(GROUPS_MAX, sizeof(*groups));
	if (!groups) {
		at_finish(a, -ENOMEM, "out of memory");
		return 0;
	}
	ngroups = jvm_read_groups("/proc", jvm->pid, groups, GROUPS_MAX);
	if (ngroups < 0) {
		at_finish(a, ngroups, "cannot read the JVM's groups: %s", strerror(-ngroups));
		goto out_free;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		at_finish(a, -errno, "socketpair: %s", strerror(errno));
		goto out_free;
	}
	a->parent = getpid();
	child = fork();
	if (child < 0) {
		at_finish(a, -errno, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		goto out_free;
	}
	if (child == 0) {
		close(sv[0]);
		at_child_main(a, sv[1], agent_fd, options, groups, ngroups);
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
			 "left in its /tmp",
			 jvm->pid, n, n > 1 ? "s" : "");
	return n;
}

int jvm_attach__fd(const struct jvm_attach *a)
{
	return a && !a->done ? a->chan : -1;
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
			at_finish(a, -EIO, "attach helper ended without a result");
			break;
		}
		if ((size_t)n != sizeof(m)) {
			at_finish(a, -EPROTO, "malformed message from the attach helper");
			break;
		}
		switch (m.type) {
		case MSG_SIGQUIT:
			(void)at_send_sigquit(a);
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
			a->connected_ms = at_now_ms();
			break;
		case MSG_LOAD_SENT:
			a->load_sent = true;
			a->load_sent_ms = at_now_ms();
			break;
		case MSG_RESULT:
			/* 1 already loaded, 0 loaded, else an errno */
			if (m.code > 1 || m.code < -4095) {
				at_finish(a, -EPROTO, "malformed result from the attach helper");
				break;
			}
			a->done = true;
			a->ret = m.code;
			at_release_sigquit(a);
			take_text(a->err, sizeof(a->err), m.text, sizeof(m.text));
			break;
		default:
			at_finish(a, -EPROTO, "malformed message from the attach helper");
			break;
		}
	}
	if (!a->done && at_now_ms() >= a->deadline_ms + REAP_GRACE_MS)
		at_finish(a, -ETIMEDOUT, "JVM did not answer within %d ms%s", a->timeout_ms,
			  a->load_sent ? " of the load command" : "");
	if (a->done && a->child > 0) {
		long long t = at_now_ms();

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
	at_release_sigquit(a);
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

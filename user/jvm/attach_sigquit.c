// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attach_sigquit.c: the SIGQUIT that starts a JVM's attach listener, sent once, if caught */
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

/*
 * Two jprofs attaching the same JVM at once must not both send it SIGQUIT: the second
 * one, arriving after the first had started the listener, makes the JVM print a thread
 * dump. The one that creates /run/jprof/sigquit-<pid>-<start ticks> (root's own directory)
 * sends it; the other waits for the listener. 1: this jprof may send it.
 */
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

void at_release_sigquit(struct jvm_attach *a)
{
	char path[96];

	if (!a->claimed)
		return;
	a->claimed = false;
	snprintf(path, sizeof(path), SIGQUIT_DIR "/");
	sigquit_marker(a->jvm.pid, path + strlen(path), sizeof(path) - strlen(path));
	(void)unlink(path);
}

/*
 * SIGQUIT for the child, sent by root to the pinned process, once, only when it is caught,
 * only when the listener is not up already and no other jprof has just sent one
 */
int at_send_sigquit(struct jvm_attach *a)
{
	int caught;

	if (a->signalled)
		return 0;
	a->signalled = true;
	a->signal_ms = at_now_ms();
	if (listener_up(a->jvm.pid, a->jvm.nspid)) {
		pr_debug("attach: pid %u: its attach listener is up already, no SIGQUIT",
			 a->jvm.pid);
		return 0;
	}
	if (!claim_sigquit(a)) {
		pr_debug("attach: pid %u: another jprof has just sent it SIGQUIT, waiting for its "
			 "listener",
			 a->jvm.pid);
		return 0;
	}
	caught = jvm_signal_caught("/proc", a->jvm.pid, SIGQUIT);
	if (caught == 0) {
		at_finish(a, -EPERM,
			  "JVM does not handle SIGQUIT (started with -Xrs, or still "
			  "starting), refusing to signal it");
		return -EPERM;
	}
	if (caught < 0) {
		at_finish(a, caught, "%s",
			  caught == -ESRCH ? "no such process" : "cannot read SigCgt");
		return caught;
	}
	if (syscall(SYS_pidfd_send_signal, a->pidfd, SIGQUIT, NULL, 0)) {
		int err = -errno;

		at_finish(a, err, "%s",
			  err == -ESRCH ? "no such process" : "cannot signal the JVM");
		return err;
	}
	return 0;
}

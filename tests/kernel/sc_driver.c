// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sc_driver.c: runs the syscalls and/or off-CPU programs against one pid for a while
 * and prints what the kernel side produced, before the jprof CLI integrates them.
 *
 *   sc_driver [-p PID] [-e syscalls|offcpu|both] [-d SECS] [--slow USEC] [--min-block USEC]
 *             [--per-thread] [--json] [--jvm SIGNO] [--ready FILE] [-q]
 *
 * stdout: one "sample ..." line per ring-buffer record (unless -q), then the syscall
 * table (text or JSON), then "offcpu tid=T ns=N samples=S" per thread and
 * "stat NAME=V" lines. Without -p: every process. --jvm registers PID as a JVM
 * whose agent answers SIGNO (the handler address comes from its ring header).
 * --ready FILE is created once everything is attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "clock.h"
#include "kernel/offcpu.h"
#include "kernel/session.h"
#include "kernel/syscalls.h"
#include "out/sctable.h"
#include "../../jvmagent/ring.h"

#define MAX_TIDS 4096

static volatile sig_atomic_t exiting;

struct tid_sum {
	__u32 tid;
	__u64 ns, samples;
};

struct drv {
	int quiet;
	struct tid_sum tids[MAX_TIDS];
	size_t ntids;
};

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static int on_sample(void *ctx, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack)
{
	struct drv *d = ctx;
	size_t i;

	(void)kstack;
	(void)ustack;
	if (!d->quiet)
		printf("sample kind=%s pid=%u tid=%u comm=%.16s nr=%d name=%s weight_ns=%llu "
		       "kstack=%u ustack=%u flags=%u sig_err=%d\n",
		       s->kind == JP_EV_OFFCPU	  ? "offcpu"
		       : s->kind == JP_EV_SYSCALL ? "syscall"
						  : "cpu",
		       s->pid, s->tid, s->comm, s->syscall_nr,
		       s->syscall_nr >= 0 ? syscall_name(s->syscall_nr) : "-",
		       (unsigned long long)s->weight, s->kstack_len, s->ustack_len, s->flags,
		       s->sig_err);
	if (s->kind != JP_EV_OFFCPU)
		return 0;
	for (i = 0; i < d->ntids && d->tids[i].tid != s->tid; i++)
		;
	if (i == d->ntids) {
		if (d->ntids == MAX_TIDS)
			return 0;
		d->tids[d->ntids++].tid = s->tid;
	}
	d->tids[i].ns += s->weight;
	d->tids[i].samples++;
	return 0;
}

/* /proc/<pid>/stat field 22, after the parenthesised comm */
/*
 * the agent's published handler address, from /tmp/jprof-<pid>-<token>.ring, the name its
 * maps show (no pid namespace here)
 */
static int agent_handler(__u32 pid, __u64 *ret)
{
	char path[4200], line[4096], want[32], *p = NULL;
	__u64 h = 0;
	size_t n;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	snprintf(want, sizeof(want), "/jprof-%u-", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!p && fgets(line, sizeof(line), f)) {
		n = strcspn(line, "\n");
		line[n] = '\0';
		if (n > 5 && !strcmp(line + n - 5, ".ring") && strstr(line, want))
			p = strchr(line, '/');
	}
	fclose(f);
	if (!p)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%u/root%s", pid, p);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pread(fd, &h, sizeof(h), offsetof(struct jp_ring_hdr, handler)) != sizeof(h))
		h = 0;
	close(fd);
	if (h <= 1)
		return -ENOENT;
	*ret = h;
	return 0;
}

static int start_ticks(__u32 pid, __u64 *ret)
{
	char path[64], buf[1024], *p;
	unsigned long long v;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* field 3 starts at p + 2; skip 19 more fields to reach 22 */
	p += 2;
	for (int i = 0; i < 19; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	if (sscanf(p, "%llu", &v) != 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sc_driver [-p PID] [-e syscalls|offcpu|both] [-d SECS] [--slow USEC] "
		"[--min-block USEC] [--per-thread] [--json] [--jvm SIGNO] [--ready FILE] "
		"[-q]\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"slow", required_argument, NULL, 's'},
		{"min-block", required_argument, NULL, 'm'},
		{"per-thread", no_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'},
		{"jvm", required_argument, NULL, 'J'},
		{"ready", required_argument, NULL, 'r'},
		{},
	};
	struct syscalls_opts so = {0};
	struct offcpu_opts oo = {0};
	struct kernel_opts ko = {0};
	struct kernel_session *ks = NULL;
	struct syscalls *sc = NULL;
	struct offcpu *oc = NULL;
	struct sc_table *t = NULL;
	static struct drv d;
	const char *ready = NULL, *ev = "syscalls";
	__u64 st[JP_STAT_MAX], ticks = 0, handler = 0, deadline;
	int c, err, json = 0, jvm_signo = 0, ret = EXIT_FAILURE;
	double secs = 3;
	__u32 pid = 0;
	struct sigaction sa = {.sa_handler = on_signal};

	while ((c = getopt_long(argc, argv, "p:e:d:q", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = (__u32)strtoul(optarg, NULL, 10);
			break;
		case 'e':
			ev = optarg;
			break;
		case 'd':
			secs = atof(optarg);
			break;
		case 'q':
			d.quiet = 1;
			break;
		case 's':
			so.slow_ns = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 'm':
			oo.min_block_ns = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 't':
			so.per_thread = true;
			break;
		case 'j':
			json = 1;
			break;
		case 'J':
			jvm_signo = atoi(optarg);
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			usage();
			return EXIT_FAILURE;
		}
	}
	if (jvm_signo && !pid) {
		usage();
		return EXIT_FAILURE;
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return EXIT_FAILURE;

	ko.pids = &pid;
	ko.npids = pid ? 1 : 0;
	err = kernel_session__start(&ko, on_sample, &d, &ks);
	if (err)
		goto out;
	if (jvm_signo) {
		err = start_ticks(pid, &ticks);
		if (!err)
			err = agent_handler(pid, &handler);
		if (!err)
			err = kernel_session__add_jvm(ks, pid, ticks, jvm_signo, handler);
		if (err) {
			fprintf(stderr, "sc_driver: registering JVM %u: %s\n", pid, strerror(-err));
			goto out;
		}
	}
	if (!strcmp(ev, "syscalls") || !strcmp(ev, "both")) {
		err = syscalls__start(ks, &so, &sc);
		if (err)
			goto out;
	}
	if (!strcmp(ev, "offcpu") || !strcmp(ev, "both")) {
		err = offcpu__start(ks, &oo, &oc);
		if (err)
			goto out;
		/* blocked time counts from here (until a window is set, BPF counts none) */
		offcpu__set_window(oc, mono_ns());
	}
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd >= 0) {
			(void)!write(fd, "ready\n", 6);
			close(fd);
		}
	}
	deadline = mono_ns() + (__u64)(secs * 1e9);
	while (!exiting && mono_ns() < deadline) {
		err = kernel_session__poll(ks, 100);
		if (err == -EINTR)
			break;
		if (err < 0)
			goto out;
	}
	err = kernel_session__drain(ks);
	if (err < 0)
		goto out;
	if (sc) {
		err = syscalls__read(sc, &t);
		if (err)
			goto out;
		err = json ? sctable_write_json(t, stdout) : sctable_write_text(t, stdout);
		if (err)
			goto out;
	}
	for (size_t i = 0; i < d.ntids; i++)
		printf("offcpu tid=%u ns=%llu samples=%llu\n", d.tids[i].tid,
		       (unsigned long long)d.tids[i].ns, (unsigned long long)d.tids[i].samples);
	kernel_session__stats(ks, st);
	{
		static const char *const names[JP_STAT_MAX] = {
			"samples",  "rb_drops",	   "kstack_err", "ustack_err", "sig_sent",
			"sig_busy", "sig_err",	   "filtered",	 "offcpu",     "offcpu_lost",
			"sc_slow",  "sc_agg_full", "sc_noenter", "idle",	     "no_handler",
			"jvm_exec", "jvm_exit",	   "sig_queued",
		};
		/* the stats the tests read are named; the rest by their index (bpf/jprof.h) */
		for (int i = 0; i < JP_STAT_MAX; i++) {
			char idx[16];
			const char *name = names[i];

			if (!name) {
				snprintf(idx, sizeof(idx), "%d", i);
				name = idx;
			}
			if (json)
				fprintf(stderr, "stat %s=%llu\n", name, (unsigned long long)st[i]);
			else
				printf("stat %s=%llu\n", name, (unsigned long long)st[i]);
		}
	}
	ret = EXIT_SUCCESS;
out:
	if (ret != EXIT_SUCCESS && err)
		fprintf(stderr, "sc_driver: %s\n", strerror(-err));
	sc_table_free(t);
	offcpu__free(oc);
	syscalls__free(sc);
	kernel_session__free(ks);
	return ret;
}

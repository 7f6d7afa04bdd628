// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* record.c: one recording: targets, kernel session, JVM agents, the poll loop, the output. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "clock.h"
#include "join.h"
#include "profile.h"
#include "record.h"
#include "kernel/offcpu.h"
#include "kernel/session.h"
#include "kernel/syscalls.h"
#include "jvm/agent_ring.h"
#include "jvm/attach.h"
#include "jvm/discover.h"
#include "out/out.h"
#include "sym/syms.h"

#define POLL_MS		   100
#define ATTACH_TIMEOUT_MS  5000
#define CHANNEL_WAIT_MS	   2000
#define JVM_MIN_AGE_S	   1   /* attach a JVM that started during the recording once it is this old */
#define MAX_ATTACH_TRIES   3
#define NEW_PIDS_MAX	   4096

static volatile sig_atomic_t exiting;
static volatile sig_atomic_t exit_signal;

static void on_signal(int sig)
{
	exiting = 1;
	exit_signal = sig;
}

/* pids seen for the first time; classified (JVM or not) outside the ring callback */
struct pidq {
	__u32 pids[NEW_PIDS_MAX];
	size_t n;
};

struct rec {
	const struct jp_opts *o;
	struct syms *syms;
	struct kernel_session *ks;
	struct offcpu *offcpu;
	struct syscalls *sc;
	struct profile *prof;
	struct join *join;
	char agent_path[4096];
	/* every pid seen in a sample (open hash), its process name, and attach tries per pid */
	__u32 *seen;
	char (*pcomm)[JP_COMM_LEN];
	__u8 *tries;
	size_t seen_cap, seen_n;
	struct pidq q;
	unsigned int jvms_total, jvms_java;
	/* agents connected before the kernel session started: registered in BPF after it */
	struct {
		__u32 pid;
		__u64 start_ticks;
		int signo;
	} early[JP_MAX_JVMS];
	size_t nearly;
};

static size_t seen_slot(struct rec *r, __u32 pid)
{
	size_t i = (pid * 2654435761u) & (r->seen_cap - 1);

	while (r->seen[i] && r->seen[i] != pid)
		i = (i + 1) & (r->seen_cap - 1);
	return i;
}

static int seen_grow(struct rec *r)
{
	size_t oc = r->seen_cap, nc = oc ? oc * 2 : 4096;
	__u32 *os = r->seen;
	__u8 *otr = r->tries;
	char(*opc)[JP_COMM_LEN] = r->pcomm;

	r->seen = calloc(nc, sizeof(*r->seen));
	r->tries = calloc(nc, 1);
	r->pcomm = calloc(nc, sizeof(*r->pcomm));
	if (!r->seen || !r->tries || !r->pcomm) {
		free(r->seen);
		free(r->tries);
		free(r->pcomm);
		r->seen = os;
		r->tries = otr;
		r->pcomm = opc;
		return -ENOMEM;
	}
	r->seen_cap = nc;
	for (size_t i = 0; i < oc; i++) {
		if (!os[i])
			continue;
		size_t s = seen_slot(r, os[i]);
		r->seen[s] = os[i];
		r->tries[s] = otr[i];
		memcpy(r->pcomm[s], opc[i], JP_COMM_LEN);
	}
	free(os);
	free(otr);
	free(opc);
	return 0;
}

/* slot of pid, inserted when new (*is_new set) */
static long seen_get(struct rec *r, __u32 pid, bool *is_new)
{
	size_t s;

	*is_new = false;
	if ((r->seen_n + 1) * 2 > r->seen_cap && seen_grow(r))
		return -1;
	s = seen_slot(r, pid);
	if (!r->seen[s]) {
		r->seen[s] = pid;
		r->seen_n++;
		*is_new = true;
	}
	return (long)s;
}

static int on_sample(void *ctx, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack)
{
	struct rec *r = ctx;
	bool is_new;
	long slot;

	slot = seen_get(r, s->pid, &is_new);
	if (slot >= 0 && !is_new && r->pcomm[slot][0] &&
	    memcmp(r->pcomm[slot], s->pcomm, JP_COMM_LEN)) {
		/* a new process name: it exec'ed, its old maps would lie */
		syms__drop_pid(r->syms, s->pid);
		r->tries[slot] = 0;
		is_new = true;
	}
	if (slot >= 0 && !r->pcomm[slot][0])
		memcpy(r->pcomm[slot], s->pcomm, JP_COMM_LEN);
	if (is_new) {
		/* read maps and ELF symbols now, while the process still exists */
		(void)syms__add_pid(r->syms, s->pid);
		if (slot >= 0)
			memcpy(r->pcomm[slot], s->pcomm, JP_COMM_LEN);
		if (r->q.n < NEW_PIDS_MAX && slot >= 0)
			r->q.pids[r->q.n++] = s->pid;
	}
	return join__sample(r->join, s, kstack, ustack);
}

static int read_start_ticks(__u32 pid, __u64 *ret)
{
	char path[64], buf[2048], *p;
	unsigned long long v;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	if (!p)
		return -EIO;
	/* after ") ": state is field 3; starttime is field 22 */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
		   &v) != 1)
		return -EIO;
	*ret = v;
	return 0;
}

/* seconds since pid started, or -1 when it is gone (or unreadable) */
static double proc_age_s(__u32 pid)
{
	__u64 start;
	double up;
	FILE *f;

	if (read_start_ticks(pid, &start))
		return -1;
	f = fopen("/proc/uptime", "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lf", &up) != 1)
		up = 0;
	fclose(f);
	return up - (double)start / sysconf(_SC_CLK_TCK);
}

/* Opens the agent channel and tells BPF to request stacks. 0, or -errno. */
static int connect_agent(struct rec *r, const struct jvm_info *jvm)
{
	struct jvm_agent *a = NULL;
	__u64 start, deadline = mono_ns() + CHANNEL_WAIT_MS * 1000000ull;
	int signo = 0, err;

	for (;;) {
		if (!a)
			a = jvm_agent__open(jvm->pid, jvm->nspid);
		if (a) {
			signo = jvm_agent__signo(a);
			if (signo > 0)
				break;
		}
		if (mono_ns() > deadline || exiting)
			break;
		usleep(20 * 1000);
	}
	if (!a || signo <= 0) {
		err = a ? -EAGAIN : -errno;
		jvm_agent__free(a);
		return err ? err : -ENOENT;
	}
	err = read_start_ticks(jvm->pid, &start);
	if (!err)
		err = join__add_jvm(r->join, jvm->pid, jvm->nspid, "java", a);
	if (err) {
		jvm_agent__free(a);
		return err;
	}
	if (!r->ks) {
		if (r->nearly < JP_MAX_JVMS) {
			r->early[r->nearly].pid = jvm->pid;
			r->early[r->nearly].start_ticks = start;
			r->early[r->nearly].signo = signo;
			r->nearly++;
		}
		return 0;
	}
	err = kernel_session__add_jvm(r->ks, jvm->pid, start, signo);
	if (err)
		return err;
	pr_debug("JVM %u: agent ready, signal %d", jvm->pid, signo);
	return 0;
}

/* Attach + connect one JVM. Failure is a warning: the JVM is then profiled natively. */
static void setup_jvm(struct rec *r, const struct jvm_info *jvm, bool last_try)
{
	bool attached_now = false;
	char err[512] = "";
	int ret;

	if (join__knows_jvm(r->join, jvm->pid))
		return; /* set up already, with or without an agent */
	if (jvm->agent == JVM_AGENT_NO_ATTACH && !r->o->no_attach) {
		pr_warn("JVM %u (%s): attach mechanism disabled (-XX:+DisableAttachMechanism); "
			"profiling it without Java frames",
			jvm->pid, jvm->main);
		(void)join__add_jvm(r->join, jvm->pid, jvm->nspid, "java", NULL);
		r->jvms_total++;
		return;
	}
	if (!r->o->no_attach && jvm->agent != JVM_AGENT_LOADED) {
		ret = jvm_attach_agent(jvm, r->agent_path, r->o->recompile ? "recompile" : NULL,
				       ATTACH_TIMEOUT_MS, err, sizeof(err));
		attached_now = ret == 0;
		if (ret < 0) {
			if (!last_try) {
				pr_debug("JVM %u: attach failed (%s), will retry", jvm->pid, err);
				return;
			}
			pr_warn("JVM %u (%s): %s; profiling it without Java frames", jvm->pid,
				jvm->main, err[0] ? err : strerror(-ret));
			(void)join__add_jvm(r->join, jvm->pid, jvm->nspid, "java", NULL);
			r->jvms_total++;
			return;
		}
	}
	ret = connect_agent(r, jvm);
	if (ret < 0) {
		if (!last_try && !r->o->no_attach)
			return;
		if (r->o->no_attach)
			pr_warn("JVM %u (%s): no jprof agent loaded (--no-attach); Java frames "
				"come from its perf map only",
				jvm->pid, jvm->main);
		else
			pr_warn("JVM %u (%s): agent loaded but its channel is not usable (%s); "
				"profiling it without Java frames",
				jvm->pid, jvm->main, strerror(-ret));
		(void)join__add_jvm(r->join, jvm->pid, jvm->nspid, "java", NULL);
		r->jvms_total++;
		return;
	}
	if (attached_now && !r->o->recompile)
		join__set_jvm_note(r->join, jvm->pid,
				   "agent attached late: in code the JIT compiled before that, "
				   "samples in inlined methods count for the method they were inlined "
				   "into; --recompile fixes this");
	r->jvms_total++;
	r->jvms_java++;
}

/* classify pids first seen in samples; attach the JVMs among them once they are up */
static void handle_new_pids(struct rec *r)
{
	struct jvm_info jvm;
	size_t keep = 0;

	for (size_t i = 0; i < r->q.n; i++) {
		__u32 pid = r->q.pids[i];
		bool is_new;
		long slot = seen_get(r, pid, &is_new);
		double age = proc_age_s(pid);

		if (slot < 0 || pid == (__u32)getpid() || age < 0)
			continue;
		/*
		 * Classify once it is a second old: before that it may still be the shell
		 * that execs java, or a launcher that has not mapped libjvm.so yet.
		 */
		if (age < JVM_MIN_AGE_S) {
			r->q.pids[keep++] = pid;
			continue;
		}
		if (jvm_probe("/proc", pid, &jvm))
			continue;
		r->tries[slot]++;
		setup_jvm(r, &jvm, r->tries[slot] >= MAX_ATTACH_TRIES);
		if (!join__has_jvm(r->join, pid) && r->tries[slot] < MAX_ATTACH_TRIES &&
		    !r->o->no_attach) {
			r->q.pids[keep++] = pid; /* retried next round */
		}
	}
	r->q.n = keep;
}

static bool only_syscalls(const struct jp_opts *o)
{
	return o->events == 1u << JP_EV_SYSCALL;
}

static int open_output(const struct jp_opts *o, FILE **ret)
{
	int fd;

	if (!o->output) {
		/* -e syscalls alone prints its table there, and a profile only with -o */
		*ret = o->cmd == JP_CMD_RECORD && only_syscalls(o) ? NULL : stdout;
		return 0;
	}
	fd = open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	*ret = fdopen(fd, "w");
	if (!*ret) {
		close(fd);
		return -errno;
	}
	return 0;
}

static int write_profile(const struct jp_opts *o, const struct profile *p, FILE *f)
{
	int err = o->format == OUT_HTML ? out_html_write(p, f) : out_folded_write(p, f);

	if (!err && fflush(f))
		err = -errno;
	if (!err && f != stdout && fsync(fileno(f)) && errno != EINVAL)
		err = -errno;
	return err;
}

static const char *profile_title(const struct jp_opts *o)
{
	static const char *const names[] = { [JP_EV_CPU] = "CPU", [JP_EV_OFFCPU] = "off-CPU",
					     [JP_EV_SYSCALL] = "slow syscalls" };
	static char title[64];
	size_t n = snprintf(title, sizeof(title), "jprof: ");

	for (int e = JP_EV_CPU; e <= JP_EV_SYSCALL; e++)
		if (o->events & (1u << e))
			n += snprintf(title + n, sizeof(title) - n, "%s%s",
				      n > strlen("jprof: ") ? " + " : "", names[e]);
	return title;
}

/* the off-CPU and syscall programs, on top of the session's maps */
static int start_extra_events(struct rec *r)
{
	const struct jp_opts *o = r->o;
	int err;

	if (o->events & (1u << JP_EV_OFFCPU)) {
		struct offcpu_opts oo = { .min_block_ns = (__u64)o->min_block_us * 1000 };

		err = offcpu__start(r->ks, &oo, &r->offcpu);
		if (err)
			return err;
	}
	if (o->events & (1u << JP_EV_SYSCALL)) {
		struct syscalls_opts so = {
			.slow_ns = (__u64)o->slow_us * 1000,
			.per_thread = o->per_thread,
		};

		err = syscalls__start(r->ks, &so, &r->sc);
		if (err)
			return err;
	}
	return 0;
}

/* the syscall table, on stdout */
static int write_syscall_table(struct rec *r)
{
	struct sc_table *t = NULL;
	int err;

	err = syscalls__read(r->sc, &t);
	if (err) {
		pr_err("reading the syscall statistics: %s", strerror(-err));
		return err;
	}
	err = r->o->json ? sctable_write_json(t, stdout) : sctable_write_text(t, stdout);
	if (!err && fflush(stdout))
		err = -errno;
	sc_table_free(t);
	if (err)
		pr_err("writing the syscall table: %s", strerror(-err));
	return err;
}

static void find_agent(struct rec *r, const char *self_dir)
{
	if (r->o->agent_path)
		snprintf(r->agent_path, sizeof(r->agent_path), "%s", r->o->agent_path);
	else
		snprintf(r->agent_path, sizeof(r->agent_path), "%s/libjprofagent.so", self_dir);
}

/* root, or the capabilities loading BPF and opening perf events take */
static bool has_bpf_privileges(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	/* CAP_PERFMON 38, CAP_BPF 39 (5.8+); CAP_SYS_ADMIN 21 covers both before that */
	return (eff & (1ull << 21)) || ((eff & (1ull << 38)) && (eff & (1ull << 39)));
}

static int check_targets(const struct jp_opts *o)
{
	char path[64];

	for (size_t i = 0; i < o->npids; i++) {
		snprintf(path, sizeof(path), "/proc/%u", o->pids[i]);
		if (access(path, F_OK)) {
			pr_err("no such process: %u", o->pids[i]);
			return JP_EXIT_NO_TARGET;
		}
	}
	return 0;
}

/* JVMs present at start: every one with -a, the named ones with -p */
static void setup_initial_jvms(struct rec *r)
{
	struct jvm_info *list = NULL, one;
	bool is_new;
	int n;

	if (r->o->npids) {
		for (size_t i = 0; i < r->o->npids; i++) {
			(void)seen_get(r, r->o->pids[i], &is_new); /* handled: not queued again */
			if (jvm_probe("/proc", r->o->pids[i], &one) == 0)
				setup_jvm(r, &one, true);
			else
				pr_debug("pid %u is not a JVM: native frames only", r->o->pids[i]);
		}
		return;
	}
	n = jvm_discover("/proc", &list);
	if (n < 0) {
		pr_warn("looking for JVMs: %s; continuing without Java frames", strerror(-n));
		return;
	}
	for (int i = 0; i < n && !exiting; i++) {
		if (list[i].pid == (__u32)getpid())
			continue;
		setup_jvm(r, &list[i], true);
		(void)seen_get(r, list[i].pid, &is_new); /* handled: not queued again */
	}
	free(list);
}

static void summary(struct rec *r, double secs, int write_err)
{
	__u64 st[JP_STAT_MAX];
	struct join_stats js;
	char where[512], what[96];

	kernel_session__stats(r->ks, st);
	join__stats(r->join, &js);
	join__report(r->join, stderr);
	if (write_err)
		snprintf(where, sizeof(where), "nothing written (%s)", strerror(-write_err));
	else if (!r->o->output && only_syscalls(r->o))
		snprintf(where, sizeof(where), "syscall table on stdout%s",
			 r->o->slow_us ? " (slow-call stacks need -o)" : "");
	else
		snprintf(where, sizeof(where), "wrote %s (%s)", r->o->output ? r->o->output : "stdout",
			 r->o->format == OUT_HTML ? "html" : "folded");
	if (r->o->events & ((1u << JP_EV_OFFCPU) | (1u << JP_EV_SYSCALL)))
		fprintf(stderr, "jprof: %llu off-CPU intervals (%llu lost), %llu slow syscalls\n",
			(unsigned long long)st[JP_STAT_OFFCPU], (unsigned long long)st[JP_STAT_OFFCPU_LOST],
			(unsigned long long)st[JP_STAT_SC_SLOW]);
	if (r->o->events & (1u << JP_EV_CPU))
		snprintf(what, sizeof(what), "%s, %u Hz, %llu idle not shown, ",
			 kernel_session__cpu_event(r->ks), r->o->freq_hz,
			 (unsigned long long)st[JP_STAT_IDLE]);
	else
		what[0] = '\0';
	fprintf(stderr,
		"jprof: %llu samples (%s%.1f s), %llu lost (ring buffer full), "
		"%llu processes, %u JVMs (%u with Java stacks); %s\n",
		(unsigned long long)js.samples, what, secs,
		(unsigned long long)st[JP_STAT_RB_DROPS], (unsigned long long)js.processes,
		r->jvms_total, r->jvms_java, where);
	pr_debug("bpf: %llu samples, %llu kernel-stack errors, %llu user-stack errors, %llu signals "
		 "(%llu busy, %llu failed), %llu unmatched traces",
		 (unsigned long long)st[JP_STAT_SAMPLES], (unsigned long long)st[JP_STAT_KSTACK_ERR],
		 (unsigned long long)st[JP_STAT_USTACK_ERR], (unsigned long long)st[JP_STAT_SIG_SENT],
		 (unsigned long long)st[JP_STAT_SIG_BUSY], (unsigned long long)st[JP_STAT_SIG_ERR],
		 (unsigned long long)js.unmatched_traces);
}

/*
 * On a saturated host a profiler at the default priority gets too little CPU, too late,
 * to read its rings in time (issue 13: with 200 runnable threads on 2 CPUs it waited
 * 32 s of 34 runnable, lost most Java stacks and overran -d by 14 s). Nice -15 weighs
 * about 28 default tasks in the fair scheduler: it is picked soon after each wakeup,
 * yet the scheduler stays fair. Measured on a 2-CPU host at load 200-340: nice -10 still
 * let the agent's ring overflow (77% complete), -15 gave 99.8%. A real-time policy
 * would keep up too, but a busy real-time jprof (say, a JVM flooding its agent ring)
 * could starve the host; jprof's work per round is bounded and it sleeps in poll.
 */
#define JPROF_NICE (-15)

static void boost_priority(const struct jp_opts *o)
{
	int cur;

	if (o->no_boost)
		return;
	errno = 0;
	cur = getpriority(PRIO_PROCESS, 0);
	if ((cur == -1 && errno) || cur <= JPROF_NICE)
		return;
	/* the attach helpers jprof forks inherit it: they are short and run jprof's code */
	if (setpriority(PRIO_PROCESS, 0, JPROF_NICE))
		pr_debug("cannot raise jprof's priority to nice %d: %s", JPROF_NICE, strerror(errno));
	else
		pr_debug("running at nice %d (--no-boost keeps %d)", JPROF_NICE, cur);
}

int record_run(const struct jp_opts *o, const char *self_dir)
{
	struct kernel_opts ko = {
		.events = o->events,
		.freq_hz = o->freq_hz,
		.pids = o->pids,
		.npids = o->npids,
	};
	bool multi = (o->events & (o->events - 1)) != 0;
	struct join_opts jo = {
		.per_pid = o->per_pid,
		.per_thread = o->per_thread,
		.dotted = o->dotted,
		.lines = o->lines,
		/* with other events, a cpu sample stands for its period, so all weights are ns */
		.cpu_weight = o->events == 1u << JP_EV_CPU ? 1 : 1000000000ull / o->freq_hz,
		.mark_offcpu = multi,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct rec r = { .o = o };
	__u64 t0, deadline;
	FILE *out = NULL;
	int ret = JP_EXIT_FAILURE, err;

	ret = check_targets(o);
	if (ret)
		return ret;
	ret = JP_EXIT_FAILURE;
	if (!has_bpf_privileges()) {
		pr_err("recording needs root (or CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE and "
		       "CAP_SYS_ADMIN); run it with sudo");
		return JP_EXIT_FAILURE;
	}
	boost_priority(o);

	err = open_output(o, &out);
	if (err) {
		pr_err("cannot write %s: %s", o->output, strerror(-err));
		return JP_EXIT_OUTPUT;
	}
	find_agent(&r, self_dir);

	sigemptyset(&sa.sa_mask); /* no SA_RESTART: poll must see EINTR */
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL)) {
		pr_err("sigaction: %s", strerror(errno));
		goto out_close;
	}
	signal(SIGPIPE, SIG_IGN);

	r.prof = profile__new(profile_title(o), o->events == 1u << JP_EV_CPU ? "samples" : "ns");
	r.syms = syms__new(NULL);
	if (!r.prof || !r.syms) {
		pr_err("out of memory or no /proc/kallsyms: %s", strerror(errno));
		goto out_free;
	}
	r.join = join__new(r.syms, r.prof, &jo);
	if (!r.join) {
		pr_err("out of memory");
		goto out_free;
	}
	/* attach first, so no sample of a JVM is taken before its agent can answer */
	setup_initial_jvms(&r);
	err = kernel_session__start(&ko, on_sample, &r, &r.ks);
	if (err)
		goto out_free; /* the session logged why */
	err = start_extra_events(&r);
	if (err)
		goto out_free; /* logged by the loader */
	for (size_t i = 0; i < r.nearly; i++) {
		err = kernel_session__add_jvm(r.ks, r.early[i].pid, r.early[i].start_ticks,
					      r.early[i].signo);
		if (err)
			pr_warn("JVM %u: cannot request Java stacks: %s", r.early[i].pid,
				strerror(-err));
	}

	t0 = mono_ns();
	deadline = o->duration_s ? t0 + (__u64)o->duration_s * 1000000000ull : ~0ull;
	pr_info("recording %s (%s)%s", o->npids ? "the given processes" : "all processes",
		profile_title(o) + strlen("jprof: "), o->duration_s ? "" : "; Ctrl-C to stop");
	while (!exiting && mono_ns() < deadline) {
		err = kernel_session__poll(r.ks, POLL_MS);
		if (err == -EINTR)
			break;
		if (err < 0) {
			pr_err("reading the ring buffer: %s", strerror(-err));
			break;
		}
		err = join__poll(r.join, 0);
		if (err) {
			pr_err("joining samples: %s", strerror(-err));
			break;
		}
		handle_new_pids(&r);
	}
	if (exit_signal)
		pr_info("%s: stopping and writing what was recorded", strsignal(exit_signal));
	(void)kernel_session__drain(r.ks);
	(void)join__flush(r.join);

	if (r.sc && write_syscall_table(&r))
		ret = JP_EXIT_OUTPUT;
	err = out ? write_profile(o, r.prof, out) : 0;
	if (out && out != stdout) {
		if (fclose(out) && !err)
			err = -errno;
	}
	out = NULL;
	summary(&r, (mono_ns() - t0) / 1e9, err);
	if (err) {
		pr_err("writing %s: %s; the %llu collected samples were not saved",
		       o->output ? o->output : "stdout", strerror(-err),
		       (unsigned long long)profile__total(r.prof));
		ret = JP_EXIT_OUTPUT;
	} else if (ret != JP_EXIT_OUTPUT) {
		ret = JP_EXIT_OK;
	}
out_free:
	syscalls__free(r.sc);
	offcpu__free(r.offcpu);
	kernel_session__free(r.ks);
	join__free(r.join);
	syms__free(r.syms);
	profile__free(r.prof);
	free(r.seen);
	free(r.tries);
	free(r.pcomm);
out_close:
	if (out && out != stdout)
		fclose(out);
	return ret;
}

int list_run(const struct jp_opts *o)
{
	struct jvm_info *list = NULL;
	static const char *const state[] = { "none", "loaded", "attach-disabled" };
	int n;

	(void)o;
	n = jvm_discover("/proc", &list);
	if (n < 0) {
		pr_err("reading /proc: %s", strerror(-n));
		return JP_EXIT_FAILURE;
	}
	printf("%-8s %-8s %-12s %-10s %-15s %-12s %s\n", "PID", "NSPID", "USER", "VERSION", "AGENT",
	       "CONTAINER", "MAIN");
	for (int i = 0; i < n; i++)
		printf("%-8u %-8u %-12s %-10s %-15s %-12s %s\n", list[i].pid, list[i].nspid,
		       list[i].user, list[i].version, state[list[i].agent % 3],
		       list[i].container[0] ? list[i].container : "-", list[i].main);
	free(list);
	return JP_EXIT_OK;
}

int report_run(const struct jp_opts *o)
{
	struct profile *p = profile__new("jprof", "samples");
	size_t bad_line = 0;
	FILE *in, *out = NULL;
	int err, ret = JP_EXIT_FAILURE;

	if (!p)
		return JP_EXIT_FAILURE;
	in = fopen(o->input, "re");
	if (!in) {
		pr_err("cannot read %s: %s", o->input, strerror(errno));
		goto out_free;
	}
	err = profile__read_folded(p, in, &bad_line);
	fclose(in);
	if (err) {
		pr_err("%s:%zu: not a folded-stack line", o->input, bad_line);
		goto out_free;
	}
	err = open_output(o, &out);
	if (err) {
		pr_err("cannot write %s: %s", o->output, strerror(-err));
		ret = JP_EXIT_OUTPUT;
		goto out_free;
	}
	err = write_profile(o, p, out);
	if (out != stdout && fclose(out) && !err)
		err = -errno;
	if (err) {
		pr_err("writing %s: %s", o->output ? o->output : "stdout", strerror(-err));
		ret = JP_EXIT_OUTPUT;
		goto out_free;
	}
	ret = JP_EXIT_OK;
out_free:
	profile__free(p);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* record.c: one recording: targets, kernel session, JVM agents, the poll loop, the output. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "clock.h"
#include "containers.h"
#include "join.h"
#include "record.h"
#include "kernel/offcpu.h"
#include "kernel/session.h"
#include "kernel/syscalls.h"
#include "jvm/agent_ring.h"
#include "jvm/attacher.h"
#include "jvm/discover.h"
#include "util/fdlimit.h"
#include "jvm/hswatch.h"
#include "jvm/pauses.h"
#include "out/out.h"
#include "out/outfile.h"
#include "out/sctable.h"
#include "util/cgroup.h"
#include "util/procfs.h"
#include "util/ttysafe.h"
#include "model/model.h"
#include "model/view.h"
#include "sym/syms.h"

#define POLL_MS		   100
#define POLL_ATTACH_MS	   20 /* while attaches run: serve their helpers without delay */
#define POLL_YOUNG_MS	   50 /* while young processes wait to be classified */
#define JVM_MIN_AGE_S	   1 /* attach a JVM that started during the recording once it is this old */
#define JVM_START_MAX_S	   5 /* ...or, when its hsperfdata says it is still starting, this old */
#define NEW_PIDS_MAX	   4096
#define OFFCPU_BLOCKED_MAX 65536 /* threads blocked since before the recording, reported */

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
	unsigned int targets_gone; /* rounds since every -p process exited */
	__u64 status_ns;	   /* the status line's last update (status_tick) */
	struct syms *syms;
	struct kernel_session *ks;
	/* the kernel side's counters and CPU event, kept when it is freed before the writers */
	__u64 kstats[JP_STAT_MAX];
	const char *cpu_event;
	struct offcpu *offcpu;
	int offcpu_open; /* intervals still open at the end (offcpu__flush_open) */
	struct syscalls *sc;
	struct model *model;
	struct join *join;
	char agent_path[4096];
	/* every pid seen in a sample (open hash) and its process name */
	__u32 *seen;
	char (*pcomm)[JP_COMM_LEN];
	__u64 *pcount; /* samples per pid, for JVMs that exit before they could be tracked */
	size_t seen_cap, seen_n;
	struct pidq q;
	bool q_fast;	  /* a queued process is looked at every round: poll faster */
	ino_t mnt_ns_ino; /* jprof's mount namespace */
	/*
	 * JVMs whose agent answers stack requests. Registered in BPF once the kernel session
	 * runs (agents connected before it wait here); dropped when the agent withdraws.
	 */
	struct {
		struct jvm_agent *a; /* owned by the join */
		__u32 pid;	     /* 0: slot unused */
		int signo;
		__u64 start_ticks;
		__u64 handler;
		bool in_bpf;
		__u64 dead_ns; /* when the process was first found gone, 0 while it lives */
	} agents[JP_MAX_JVMS];
	__u64 retire_check_ns; /* the last look for JVMs that exited */
	unsigned int retired;  /* JVMs that exited and were forgotten (their agent freed) */
	size_t nagents;
	unsigned int withdrawn; /* agents dropped because they withdrew their signal */
	/* attaches run in helper processes, in the background: sampling never waits on them */
	struct attacher *att;
	/* GC and safepoint pauses of every tracked JVM, from its hsperfdata file */
	struct pauses *pauses;
	/* new JVMs announced by their hsperfdata file; those gone before they were looked at */
	struct hswatch *watch;
	struct {
		__u32 pid;
		__u64 seen_ns;
		bool looked_at; /* known as a JVM, gone while it was still starting */
	} gone[64];
	size_t ngone;
	__u64 gone_more;
	/* CLOCK_MONOTONIC: record_run's start, sampling's start, the first sample's time */
	__u64 t_start_ns, sampling_ns, first_sample_ns;
	struct ct_filter *ctf;	       /* --cgroup/--container, NULL: none */
	struct cgroup_names *cgnames; /* cgroup id -> container label, NULL without cgroup v2 */
	__u64 window_ns;   /* -e wall: from the window's start to the end of the recording */
	__u64 wall_end_ns; /* -e wall: the end; samples after it are clipped to it */
	int wall_tails;	   /* -e wall: threads whose CPU time since their last sample came at the end */
	__u64 band_gc_ns, band_safepoint_ns; /* -e wall: the pause band's time, all JVMs */
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
	char(*opc)[JP_COMM_LEN] = r->pcomm;
	__u64 *ocount = r->pcount;

	r->seen = calloc(nc, sizeof(*r->seen));
	r->pcomm = calloc(nc, sizeof(*r->pcomm));
	r->pcount = calloc(nc, sizeof(*r->pcount));
	if (!r->seen || !r->pcomm || !r->pcount) {
		free(r->seen);
		free(r->pcomm);
		free(r->pcount);
		r->seen = os;
		r->pcomm = opc;
		r->pcount = ocount;
		return -ENOMEM;
	}
	r->seen_cap = nc;
	for (size_t i = 0; i < oc; i++) {
		if (!os[i])
			continue;
		size_t s = seen_slot(r, os[i]);
		r->seen[s] = os[i];
		memcpy(r->pcomm[s], opc[i], JP_COMM_LEN);
		r->pcount[s] = ocount[i];
	}
	free(os);
	free(opc);
	free(ocount);
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

/* the join learnt whether a JVM thread is a Java thread: stack requests stop or start */
static void on_native_thread(void *ctx, __u32 tid, bool native)
{
	struct rec *r = ctx;

	if (r->ks)
		(void)kernel_session__native_thread(r->ks, tid, native);
}

/* the join can name an interpreted method of a JVM (or no longer): BPF's walk follows */
static void on_jw_method(void *ctx, __u32 pid, __u64 method, bool known)
{
	struct rec *r = ctx;

	if (r->ks)
		(void)kernel_session__jw_method(r->ks, pid, method, known);
}

static int on_sample(void *ctx, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack)
{
	struct rec *r = ctx;
	struct jp_sample clipped;
	bool is_new;
	long slot;

	/*
	 * -e wall: the recording ends at end_ns for every part of a thread's time. Samples
	 * read after it (the sampler runs until the final drain; an interval may close
	 * between the end and the detach) keep only their time up to it: their weight is
	 * wall time that ends at time_ns.
	 */
	if (r->wall_end_ns && s->time_ns > r->wall_end_ns) {
		__u64 over = s->time_ns - r->wall_end_ns;

		if (s->weight <= over)
			return 0;
		clipped = *s;
		clipped.weight -= over;
		clipped.time_ns = r->wall_end_ns;
		s = &clipped;
	}
	if (!r->first_sample_ns || s->time_ns < r->first_sample_ns)
		r->first_sample_ns = s->time_ns;
	slot = seen_get(r, s->pid, &is_new);
	if (slot >= 0 && !is_new && r->pcomm[slot][0] &&
	    memcmp(r->pcomm[slot], s->pcomm, JP_COMM_LEN)) {
		/* a new process name: it exec'ed, its old maps would lie */
		syms__drop_pid(r->syms, s->pid);
		is_new = true;
	}
	if (slot >= 0 && !r->pcomm[slot][0])
		memcpy(r->pcomm[slot], s->pcomm, JP_COMM_LEN);
	if (slot >= 0)
		r->pcount[slot]++;
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

/* seconds since pid started, or -1 when it is gone (or unreadable) */
static double proc_age_s(__u32 pid)
{
	__u64 start;
	double up;
	FILE *f;

	if (proc_start_ticks(pid, &start))
		return -1;
	f = fopen("/proc/uptime", "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lf", &up) != 1)
		up = 0;
	fclose(f);
	return up - (double)start / sysconf(_SC_CLK_TCK);
}

/* --java-walk: BPF walks agents[i]'s JVM by the layout its agent published, if any */
static void set_java_walk(struct rec *r, size_t i)
{
	struct jp_jwalk w;
	int err = jvm_agent__walk(r->agents[i].a, &w);

	if (!err)
		err = kernel_session__set_jwalk(r->ks, r->agents[i].pid, &w);
	if (err)
		pr_warn("JVM %u: no Java walk in BPF: %s", r->agents[i].pid,
			err == -ENOENT ? "its agent published no layout" : strerror(-err));
	else
		pr_debug("JVM %u: Java walk in BPF, %u code heaps", r->agents[i].pid, w.n_heaps);
}

/* BPF requests stacks of agents[i]'s JVM from now on; a failure is a warning */
static void register_agent(struct rec *r, size_t i)
{
	int err;

	if (r->agents[i].handler <= 1) {
		pr_warn("JVM %u: its agent does not say which handler answers the signal (an older "
			"libjprofagent?); profiling it without Java frames",
			r->agents[i].pid);
		return;
	}
	err = kernel_session__add_jvm(r->ks, r->agents[i].pid, r->agents[i].start_ticks,
				      r->agents[i].signo, r->agents[i].handler);
	r->agents[i].in_bpf = !err;
	if (err) {
		pr_warn("JVM %u: cannot request Java stacks: %s", r->agents[i].pid, strerror(-err));
		return;
	}
	pr_debug("JVM %u: agent ready, signal %d", r->agents[i].pid, r->agents[i].signo);
	if (r->o->java_walk)
		set_java_walk(r, i);
}

/*
 * An agent that stops answering (its ring header's signal back to 0, or another one)
 * gets no more stack requests: one pread of 4 bytes per JVM and poll round.
 */
static void drop_withdrawn_agents(struct rec *r)
{
	for (size_t i = 0; i < r->nagents; i++) {
		if (!r->agents[i].in_bpf || jvm_agent__signo(r->agents[i].a) == r->agents[i].signo)
			continue;
		(void)kernel_session__del_jvm(r->ks, r->agents[i].pid);
		r->agents[i].in_bpf = false;
		r->withdrawn++;
		pr_debug("JVM %u: the agent withdrew its signal", r->agents[i].pid);
	}
}

/*
 * JVMs that exited: once the time their last traces may take is over, the join reads
 * what their rings still hold and frees their agents (dictionaries: megabytes per JVM),
 * and their symbols go; their slot is free again. A long recording of a host where JVMs
 * come and go (build tools, batch jobs) keeps only what live JVMs need. Once a second.
 */
#define RETIRE_AFTER_NS (4 * 1000000000ull) /* > the join's wait for a trace (3 s) */

static void retire_dead_jvms(struct rec *r, __u64 now)
{
	bool freed = false;

	if (now - r->retire_check_ns < 1000000000ull)
		return;
	r->retire_check_ns = now;
	for (size_t i = 0; i < r->nagents; i++) {
		__u32 pid = r->agents[i].pid;
		__u64 start;
		int err;

		if (!pid)
			continue;
		if (!proc_start_ticks(pid, &start) && start == r->agents[i].start_ticks) {
			r->agents[i].dead_ns = 0;
			continue;
		}
		if (!r->agents[i].dead_ns) {
			r->agents[i].dead_ns = now;
			continue;
		}
		if (now - r->agents[i].dead_ns < RETIRE_AFTER_NS)
			continue;
		err = join__retire_jvm(r->join, pid, now);
		if (err)
			pr_debug("JVM %u: retiring it: %s", pid, strerror(-err));
		if (r->agents[i].in_bpf)
			(void)kernel_session__del_jvm(r->ks, pid);
		syms__drop_pid(r->syms, pid);
		memset(&r->agents[i], 0, sizeof(r->agents[i]));
		r->retired++;
		freed = true;
		pr_debug("JVM %u exited: its agent and symbols freed", pid);
	}
#ifdef __GLIBC__
	/* megabytes freed amid the heap stay resident unless given back */
	if (freed)
		(void)malloc_trim(0);
#endif
}

/*
 * Opens the agent channel and tells BPF to request stacks. 0, -EAGAIN while the agent
 * has not published its channel yet (the attacher asks again), or -errno. Never waits.
 */
static int connect_agent(struct rec *r, const struct jvm_info *jvm)
{
	struct jvm_agent *a;
	__u64 start;
	int signo = 0, err;
	size_t i;

	a = jvm_agent__open(jvm->pid, jvm->nspid);
	if (a) {
		signo = jvm_agent__signo(a);
		jvm_agent__events_since(a, r->t_start_ns);
	}
	if (!a || signo <= 0) {
		err = !a && errno != ENOENT ? -errno : -EAGAIN;
		jvm_agent__free(a);
		return err;
	}
	err = proc_start_ticks(jvm->pid, &start);
	if (!err)
		err = join__add_jvm(r->join, jvm->pid, jvm->nspid, "java", a);
	join__set_jvm_name(r->join, jvm->pid, jvm->main);
	if (err) {
		jvm_agent__free(a);
		return err;
	}
	/* a pid seen again is a new process: the join freed the old agent */
	for (i = 0; i < r->nagents && r->agents[i].pid != jvm->pid; i++)
		;
	if (i == r->nagents) /* a slot a retired JVM left, if any */
		for (i = 0; i < r->nagents && r->agents[i].pid; i++)
			;
	if (i == JP_MAX_JVMS)
		return 0; /* BPF could not hold it either: profiled without Java frames */
	r->agents[i].a = a;
	r->agents[i].pid = jvm->pid;
	r->agents[i].signo = signo;
	r->agents[i].start_ticks = start;
	r->agents[i].handler = jvm_agent__handler(a);
	r->agents[i].in_bpf = false;
	if (i == r->nagents)
		r->nagents++;
	if (r->ks)
		register_agent(r, i);
	return 0;
}

/* the attacher found a JVM's agent loaded: connect it (0), not yet (-EAGAIN), or -errno */
static int on_agent_ready(void *ctx, const struct jvm_info *jvm, bool attached_now)
{
	struct rec *r = ctx;
	int err;

	err = connect_agent(r, jvm);
	if (err)
		return err;
	/* an agent an earlier jprof loaded may lack the events asked: it adds them when loaded again */
	if (!attached_now && !r->o->no_attach && join__missing_events(r->join, jvm->pid, true))
		return 1;
	if (attached_now && !r->o->recompile)
		join__set_jvm_note(r->join, jvm->pid,
				   "agent attached late: in code the JIT compiled before that, "
				   "samples in inlined methods count for the method they were inlined "
				   "into; --recompile fixes this");
	return 0;
}

/*
 * A JVM to profile: its samples are marked "agent not yet attached" until its agent is
 * connected; the attacher loads the agent in the background (queued here, started by
 * attacher__poll). JVMs that cannot be attached say "no agent".
 */
static void track_jvm(struct rec *r, const struct jvm_info *jvm, bool started_during)
{
	int err;

	err = pauses__add(r->pauses, jvm, started_during);
	if (err < 0)
		pr_debug("JVM %u: pauses not watched: %s", jvm->pid, strerror(-err));
	if (!join__knows_jvm(r->join, jvm->pid))
		(void)join__add_jvm(r->join, jvm->pid, jvm->nspid, "java", NULL);
	join__set_jvm_name(r->join, jvm->pid, jvm->main);
	err = attacher__add(r->att, jvm, mono_ns());
	if (err < 0)
		pr_debug("JVM %u: not tracked: %s", jvm->pid, strerror(-err));
	join__set_jvm_pending(r->join, jvm->pid,
			      err >= 0 && !r->o->no_attach && jvm->agent != JVM_AGENT_NO_ATTACH);
}

/* a JVM that exited before it was attached (or even looked at): listed at the end */
static void add_gone(struct rec *r, __u32 pid, bool looked_at)
{
	if (r->ngone == sizeof(r->gone) / sizeof(r->gone[0])) {
		r->gone_more++;
		return;
	}
	r->gone[r->ngone].pid = pid;
	r->gone[r->ngone].looked_at = looked_at;
	r->gone[r->ngone++].seen_ns = mono_ns();
}

/*
 * A JVM seen before it can be attached: the join counts and marks its samples ("agent
 * not yet attached") and its pauses are watched; track_jvm() attaches it later.
 */
static void note_jvm(struct rec *r, const struct jvm_info *jvm, bool started_during)
{
	if (!join__knows_jvm(r->join, jvm->pid)) {
		(void)join__add_jvm(r->join, jvm->pid, jvm->nspid, "java", NULL);
		join__set_jvm_name(r->join, jvm->pid, jvm->main);
		join__set_jvm_pending(r->join, jvm->pid,
				      !r->o->no_attach && jvm->agent != JVM_AGENT_NO_ATTACH);
	}
	(void)pauses__add(r->pauses, jvm, started_during);
}

static void queue_pid(struct rec *r, __u32 pid)
{
	for (size_t i = 0; i < r->q.n; i++)
		if (r->q.pids[i] == pid)
			return;
	if (r->q.n < NEW_PIDS_MAX)
		r->q.pids[r->q.n++] = pid;
}

/*
 * Classify pids first seen in samples (or announced by their hsperfdata file). A young
 * process is looked at in every poll round: it is a JVM once it maps libjvm.so, and is
 * counted as one from then on (note_jvm). It is attached once its hsperfdata file says
 * JNI_CreateJavaVM returned (sun.rt.createVmEndTime): earlier, JDK 25 refuses agents
 * ("only permitted in the live phase") and the agent fails on JDK 17, for good. Before
 * libjvm.so it may be the shell that execs java, or a launcher that has not loaded it.
 * Without a file (-XX:-UsePerfData) a JVM is attached at a second old, as before; one
 * still starting at JVM_START_MAX_S is attached anyway.
 */
/* pid lives in jprof's mount namespace (so its /tmp is the one hswatch watches) */
static bool same_mnt_ns(struct rec *r, __u32 pid)
{
	char path[64];
	struct stat st;

	if (!r->mnt_ns_ino) {
		if (stat("/proc/self/ns/mnt", &st))
			return false;
		r->mnt_ns_ino = st.st_ino;
	}
	(void)snprintf(path, sizeof(path), "/proc/%u/ns/mnt", pid);
	return !stat(path, &st) && st.st_ino == r->mnt_ns_ino;
}

static void handle_new_pids(struct rec *r)
{
	double since_start = (mono_ns() - r->t_start_ns) / 1e9;
	struct jvm_info jvm;
	size_t keep = 0;

	r->q_fast = false;
	for (size_t i = 0; i < r->q.n; i++) {
		__u32 pid = r->q.pids[i];
		double age = proc_age_s(pid);
		bool during;
		int ready;

		if (pid == (__u32)getpid())
			continue;
		if (age < 0) {
			if (join__knows_jvm(r->join, pid))
				add_gone(r, pid, true);
			continue;
		}
		during = age < since_start;
		/*
		 * A young process of our mount namespace that is not known as a JVM is looked
		 * at once it is a second old: were it a JVM, its hsperfdata file would have
		 * announced it (a busy build starts hundreds of processes a second)
		 */
		if (age < JVM_MIN_AGE_S && r->watch && !join__knows_jvm(r->join, pid) &&
		    same_mnt_ns(r, pid)) {
			r->q.pids[keep++] = pid;
			continue;
		}
		if (jvm_probe("/proc", pid, &jvm)) {
			/* a JVM known as one that no longer maps libjvm.so is exiting (a zombie) */
			if (join__knows_jvm(r->join, pid))
				add_gone(r, pid, true);
			else if (age < JVM_MIN_AGE_S)
				r->q.pids[keep++] = pid, r->q_fast = true;
			continue;
		}
		ready = pauses__probe(r->pauses, &jvm, during, mono_ns());
		if (ready == 1 || (ready < 0 && age >= JVM_MIN_AGE_S) || age >= JVM_START_MAX_S) {
			track_jvm(r, &jvm, during);
			continue;
		}
		note_jvm(r, &jvm, during);
		r->q.pids[keep++] = pid;
		r->q_fast = true;
	}
	r->q.n = keep;
}

/* the process has exited (a zombie) or is exiting (no memory mapped any more) */
static bool proc_exiting(__u32 pid)
{
	char path[64], c;
	ssize_t n;
	int fd;

	if (proc_gone(pid))
		return true;
	(void)snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	n = read(fd, &c, 1);
	close(fd);
	return n == 0;
}

/* samples read of pid so far */
static __u64 pid_samples(const struct rec *r, __u32 pid)
{
	size_t i;

	if (!r->seen_cap)
		return 0;
	i = (pid * 2654435761u) & (r->seen_cap - 1);
	while (r->seen[i] && r->seen[i] != pid)
		i = (i + 1) & (r->seen_cap - 1);
	return r->seen[i] ? r->pcount[i] : 0;
}

/*
 * JVMs that just created their hsperfdata file: looked at at once, before the samples
 * of this round are joined, so their samples count in their per-JVM line from here on.
 * One already gone is listed at the end with the samples read of it.
 */
static void handle_new_jvm_files(struct rec *r)
{
	__u32 pids[64];
	struct jvm_info jvm;
	int n;

	if (!r->watch)
		return;
	n = hswatch__read(r->watch, pids, sizeof(pids) / sizeof(pids[0]));
	for (int i = 0; i < n; i++) {
		bool is_new;
		int err;

		if (pids[i] == (__u32)getpid() || join__knows_jvm(r->join, pids[i]))
			continue;
		(void)seen_get(r, pids[i], &is_new);
		err = jvm_probe("/proc", pids[i], &jvm);
		/* outside --cgroup/--container: never sampled, so neither noted nor attached */
		if (r->ctf && (err || !ct_filter_has_path(r->ctf, jvm.cgroup)))
			continue;
		if (!err) {
			/* counted from now on; handle_new_pids attaches it once it is initialised */
			note_jvm(r, &jvm, true);
			queue_pid(r, pids[i]);
			continue;
		}
		/*
		 * Gone already (or a zombie, or exiting: its memory is released, no maps
		 * left): listed, with the samples read of it (maybe none). A file of
		 * another pid namespace sharing this /tmp could name a pid that does not exist
		 * here; one that does exist is no JVM (-ENOEXEC) and is not listed.
		 */
		if (err != -ESRCH && !(err == -ENOEXEC && proc_exiting(pids[i])))
			continue;
		add_gone(r, pids[i], false);
	}
}

static void gone_report(const struct rec *r, FILE *f, bool verbose)
{
	/* short JVMs (a build's) come by the dozen: their count, and each with -v */
	if (!verbose && r->ngone + r->gone_more)
		fprintf(f, "jprof: %llu JVMs exited before attach (no Java stacks; -v lists them)\n",
			(unsigned long long)(r->ngone + r->gone_more));
	for (size_t i = 0; verbose && i < r->ngone; i++)
		fprintf(f,
			"jprof: JVM %u: %llu samples in all, none with Java stacks: exited before "
			"attach (%s, %.2f s after start)\n",
			r->gone[i].pid, (unsigned long long)pid_samples(r, r->gone[i].pid),
			r->gone[i].looked_at ? "gone while it was still starting"
					     : "gone before it could be looked at, its hsperfdata "
					       "file seen",
			(r->gone[i].seen_ns - r->t_start_ns) / 1e9);
	if (verbose && r->gone_more)
		fprintf(f, "jprof: %llu more JVMs exited before attach\n",
			(unsigned long long)r->gone_more);
}

/* what the watch of hsperfdata directories left out (budgets, or files of no process) */
static void watch_report(const struct rec *r, FILE *f)
{
	__u64 dirs = 0, overflows = 0, phantoms;

	if (!r->watch)
		return;
	hswatch__counters(r->watch, &dirs, &overflows);
	phantoms = hswatch__phantoms(r->watch);
	if (dirs || overflows || phantoms)
		fprintf(f,
			"jprof: new JVMs: %llu hsperfdata directories not watched (budget), %llu "
			"overflows of the kernel's event queue, %llu pid files of no process "
			"ignored\n",
			(unsigned long long)dirs, (unsigned long long)overflows,
			(unsigned long long)phantoms);
}

static bool only_syscalls(const struct jp_opts *o)
{
	return o->events == 1u << JP_EV_SYSCALL;
}

/* one output of a recording: an -o file, or stdout */
struct rec_out {
	const char *path; /* NULL: stdout */
	int format;	  /* enum out_format */
	bool existed;	  /* a regular file was there: it stays as it was if writing fails */
	struct outfile *file;
	FILE *f;
};

static void abort_outputs(struct rec_out *outs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		outfile__abort(outs[i].file);
		outs[i].file = NULL;
	}
}

/* opens every -o before the recording starts, so a bad path fails at once */
static int open_outputs(const struct jp_opts *o, struct rec_out *outs, size_t *ret_n)
{
	*ret_n = 0;
	if (!o->noutputs) {
		/* -e syscalls alone prints its table on stdout, and a profile only with -o */
		if (only_syscalls(o))
			return 0;
		outs[0] = (struct rec_out){ .format = o->format, .f = stdout };
		*ret_n = 1;
		return 0;
	}
	for (size_t i = 0; i < o->noutputs; i++) {
		struct rec_out *x = &outs[i];
		struct stat st;
		char why[512];
		int err;

		*x = (struct rec_out){ .path = o->outputs[i], .format = o->formats[i] };
		x->existed = !stat(x->path, &st) && S_ISREG(st.st_mode);
		err = outfile__open(x->path, &x->file, why, sizeof(why));
		if (err) {
			pr_err("cannot write %s: %s", x->path, why[0] ? why : strerror(-err));
			abort_outputs(outs, i);
			return err;
		}
		x->f = outfile__stream(x->file);
	}
	*ret_n = o->noutputs;
	return 0;
}

/* what a recording shows: "CPU", "CPU + off-CPU", "wall clock", "lock contention + allocations" */
static const char *events_shown(const struct jp_opts *o)
{
	static const char *const names[] = { [JP_EV_CPU] = "CPU", [JP_EV_OFFCPU] = "off-CPU",
					     [JP_EV_SYSCALL] = "slow syscalls" };
	static const char *const agent[] = { "lock contention", "allocations", "live heap" };
	static char buf[96];
	size_t n = 0;

	buf[0] = '\0';
	if (o->wall)
		n += snprintf(buf, sizeof(buf), "wall clock");
	for (int e = JP_EV_CPU; e <= JP_EV_SYSCALL && !o->wall && !o->cpu_hidden; e++)
		if (o->events & (1u << e))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " + " : "", names[e]);
	/* JP_AGENT_EV_LOCK, _ALLOC, _LIVE: bits 0, 1, 2 */
	for (unsigned int b = 0; b < 3 && n < sizeof(buf); b++)
		if (o->agent_events & (1u << b))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " + " : "", agent[b]);
	return buf;
}

/*
 * The unit of the graph (one, see opts.c check_units): CPU samples alone count samples
 * (--cpu-time: their ns); time of any other event is ns; allocations alone are bytes.
 */
static const char *graph_unit(const struct jp_opts *o)
{
	if (o->cpu_hidden)
		return o->agent_events & JP_AGENT_EV_LOCK ? "ns" : "bytes";
	if (o->events == 1u << JP_EV_CPU && !o->cpu_time && !(o->agent_events & JP_AGENT_EV_LOCK))
		return "samples";
	return "ns";
}

/* the graph's title, with its unit: "jprof: CPU (samples)", "jprof: allocations (bytes)" */
static const char *profile_title(const struct jp_opts *o)
{
	static char title[128];

	snprintf(title, sizeof(title), "jprof: %s (%s)", events_shown(o), graph_unit(o));
	return title;
}

/* the off-CPU and syscall programs, on top of the session's maps */
/*
 * The threads of the profiled processes (-p, else those seen) blocked since before the
 * recording: their blocked time, the whole recording. How many, or -errno.
 */
static int flush_blocked(struct rec *r, __u64 start, __u64 end)
{
	size_t n = r->o->npids ? r->o->npids : r->seen_cap;
	unsigned int budget = OFFCPU_BLOCKED_MAX;
	int total = 0, k;

	for (size_t i = 0; i < n && budget; i++) {
		__u32 pid = r->o->npids ? r->o->pids[i] : r->seen[i];

		if (!pid)
			continue;
		k = offcpu__flush_blocked(r->offcpu, pid, start, end, budget, on_sample, r);
		if (k == -ENOENT)
			continue; /* exited */
		if (k < 0)
			return k;
		total += k;
		budget = (unsigned int)k < budget ? budget - (unsigned int)k : 0;
	}
	return total;
}

static int start_extra_events(struct rec *r)
{
	const struct jp_opts *o = r->o;
	int err;

	/* -e lock: the parks of java.util.concurrent are blocked intervals (join.c add_park) */
	if (o->events & (1u << JP_EV_OFFCPU) || o->agent_events & JP_AGENT_EV_LOCK) {
		struct offcpu_opts oo = { .min_block_ns = (__u64)o->min_block_us * 1000,
					  .runnable = o->wall };

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

/* the syscall table's JSON object with "jvm_pauses" (pauses__report_json) added at its end */
static int write_json_with_pauses(struct rec *r, const struct sc_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err;

	if (!m)
		return -errno;
	err = sctable_write_json(t, m);
	if (fclose(m) && !err)
		err = -ENOMEM;
	/* the table ends with "}\n": continue the object there */
	if (!err && (len < 2 || buf[len - 2] != '}'))
		err = -EINVAL;
	if (!err) {
		fwrite(buf, 1, len - 2, stdout);
		fputs(",\"jvm_pauses\":", stdout);
		pauses__report_json(r->pauses, stdout);
		fputs("}\n", stdout);
	}
	free(buf);
	return err;
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
	if (r->o->per_container) {
		for (size_t i = 0; i < t->nprocs; i++)
			snprintf(t->procs[i].container, sizeof(t->procs[i].container), "%s",
				 cgroup_names__get(r->cgnames, t->procs[i].cgroup_id));
		sc_table_group(t);
	}
	err = r->o->json ? write_json_with_pauses(r, t) : sctable_write_text(t, stdout);
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

/*
 * The agent is read before the recording starts, not at the first JVM: an --agent that
 * cannot be read stops here (-errno); a default one that is missing (a broken install)
 * leaves the JVMs with native frames, said once now.
 */
static int check_agent(const struct rec *r)
{
	struct stat st;
	int fd = open(r->agent_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int err = fd < 0 ? -errno : fstat(fd, &st) ? -errno : S_ISREG(st.st_mode) ? 0 : -EINVAL;

	if (fd >= 0)
		close(fd);
	if (!err)
		return 0;
	if (r->o->agent_path) {
		pr_err("--agent %s: %s", r->agent_path,
		       err == -EINVAL ? "not a regular file" : strerror(-err));
		return err;
	}
	pr_warn("no agent at %s (%s): JVMs get native frames only, recording without Java stacks",
		r->agent_path, strerror(-err));
	return 0;
}

/* each JVM's attach as it ends (attacher_opts.note): what a user waits for while recording */
static void on_attach_note(void *ctx, const char *line)
{
	(void)ctx;
	pr_info("%s", line);
}

/* every -p process has exited (a zombie, or gone) */
static bool targets_gone(const struct jp_opts *o)
{
	for (size_t i = 0; i < o->npids; i++)
		if (!proc_gone(o->pids[i]))
			return false;
	return true;
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
			if (jvm_probe("/proc", r->o->pids[i], &one) == 0 &&
			    ct_filter_has_path(r->ctf, one.cgroup))
				track_jvm(r, &one, false);
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
		/* outside --cgroup/--container: never sampled, so never attached */
		if (!ct_filter_has_path(r->ctf, list[i].cgroup))
			continue;
		track_jvm(r, &list[i], false);
		(void)seen_get(r, list[i].pid, &is_new); /* handled: not queued again */
	}
	free(list);
}

/* what the symbolizer refused or left out (untrusted files, budgets): one line, when any */
static void syms_report(const struct rec *r)
{
	struct syms_stats ss;

	syms__stats(r->syms, &ss);
	if (!ss.unsafe_files && !ss.elf_over_budget && !ss.perfmap_not_owned &&
	    !ss.perfmap_dropped && !ss.perfmap_over_budget && !ss.paths_over_budget)
		return;
	fprintf(stderr,
		"jprof: symbols: %llu files refused as unsafe (link, mount, type, swapped), %llu "
		"perf maps not owned by their process's user ignored, %llu ELF files and %llu "
		"perf-map reads left out by memory budgets, %llu perf-map entries and %llu paths "
		"dropped; their frames show as addresses\n",
		(unsigned long long)ss.unsafe_files, (unsigned long long)ss.perfmap_not_owned,
		(unsigned long long)ss.elf_over_budget, (unsigned long long)ss.perfmap_over_budget,
		(unsigned long long)ss.perfmap_dropped, (unsigned long long)ss.paths_over_budget);
}

/* -v: what jprof's memory holds at the end of the recording, by owner */
static void mem_report(const struct rec *r)
{
	struct model_mem mm;
	struct syms_stats ss;

	model__mem(r->model, &mm);
	syms__stats(r->syms, &ss);
	pr_debug("memory: model %.1f MB (%zu stacks of %zu frames, %zu rows, %zu labels, %zu "
		 "locations, %zu functions, %zu strings; MB in rows %.1f, stacks %.1f, locations "
		 "%.1f, strings %.1f); symbols: ELF %.1f MB, perf maps %.1f MB, "
		 "%llu pids, %llu files; agent dictionaries %.1f MB (%u JVMs that exited freed)",
		 mm.bytes / 1048576.0, mm.stacks, mm.stack_locs, mm.rows, mm.labels, mm.locs,
		 mm.funcs, mm.strs, mm.row_bytes / 1048576.0, mm.stack_bytes / 1048576.0,
		 mm.loc_bytes / 1048576.0, mm.str_bytes / 1048576.0, ss.elf_bytes / 1048576.0, ss.perfmap_bytes / 1048576.0,
		 (unsigned long long)ss.pids, (unsigned long long)ss.dsos,
		 jvm_agent__all_bytes() / 1048576.0, r->retired);
}

/* the kernel side's counters: read now, or as kept when it was freed */
static void kstats(const struct rec *r, __u64 *st)
{
	if (r->ks)
		kernel_session__stats(r->ks, st);
	else
		memcpy(st, r->kstats, sizeof(r->kstats));
}

/*
 * On a terminal, once a second: how long, how many samples, JVMs and losses so far (one
 * status line that messages print above; none when stderr is a file or a pipe)
 */
static void status_tick(struct rec *r, __u64 now, __u64 t0, __u64 deadline)
{
	__u64 st[JP_STAT_MAX];
	unsigned int jvms = 0, java = 0;
	char line[200], when[64];

	if (!log_is_tty() || now < r->status_ns + 1000000000ull)
		return;
	r->status_ns = now;
	kstats(r, st);
	if (r->att)
		attacher__counts(r->att, &jvms, &java);
	if (deadline != ~0ull)
		snprintf(when, sizeof(when), "%.0f of %.0f s", (now - t0) / 1e9,
			 (deadline - t0) / 1e9);
	else
		snprintf(when, sizeof(when), "%.0f s (Ctrl-C to stop)", (now - t0) / 1e9);
	snprintf(line, sizeof(line), "jprof: recording %s: %llu samples, %u JVMs (%u with Java "
		 "stacks), %llu lost", when, (unsigned long long)st[JP_STAT_SAMPLES], jvms, java,
		 (unsigned long long)st[JP_STAT_RB_DROPS]);
	log_status(line);
}

/* text to stderr with other users' control characters escaped (ttysafe.h), lines kept */
static void print_escaped(const char *text, size_t len)
{
	size_t cap = len * 4 + 1;
	char *safe = text ? malloc(cap) : NULL;

	if (!text)
		return;
	fputs(safe ? tty_escape(text, safe, cap, 1) : text, stderr);
	free(safe);
}

static void summary(struct rec *r, double secs, const char *where)
{
	__u64 st[JP_STAT_MAX];
	struct join_stats js;
	char what[96], agent_lost[96] = "", *text = NULL;
	size_t len = 0;
	/* gathered, then printed escaped: names in it are other users' (comm, main class) */
	FILE *out = open_memstream(&text, &len);
	unsigned int jvms = 0, jvms_java = 0;
	int open = r->offcpu_open > 0 ? r->offcpu_open : 0;
	/* by default what matters; -v: how each figure came about, per JVM */
	bool v = r->o->verbose;

	if (!out)
		out = stderr;

	kstats(r, st);
	join__stats(r->join, &js);
	join__report(r->join, out, v);
	gone_report(r, out, v);
	watch_report(r, out);
	if (r->pauses && v)
		pauses__report(r->pauses, out);
	if (r->att) {
		attacher__report(r->att, mono_ns(), out);
		attacher__counts(r->att, &jvms, &jvms_java);
	}
	/* each event in its own unit */
	if (r->o->events & (1u << JP_EV_OFFCPU))
		fprintf(out,
			"jprof: off-CPU: %llu intervals, %.3f s blocked, %d still open at the end, "
			"%llu lost; %llu thread switches the kernel's tracepoint did not report, "
			"their time taken from the scheduler's runtime\n",
			(unsigned long long)st[JP_STAT_OFFCPU] + (__u64)open,
			model__total(r->model, JP_VAL_OFFCPU_NS) / 1e9, open,
			(unsigned long long)st[JP_STAT_OFFCPU_LOST],
			(unsigned long long)st[JP_STAT_SWITCH_MISSED]);
	if (r->o->events & (1u << JP_EV_SYSCALL))
		fprintf(out, "jprof: slow syscalls: %llu calls, %.3f s%s\n",
			(unsigned long long)model__total(r->model, JP_VAL_SYSCALL_CALLS),
			model__total(r->model, JP_VAL_SYSCALL_NS) / 1e9,
			r->o->events & (1u << JP_EV_OFFCPU) ?
				" (their blocked time is in the off-CPU time, counted once there)" :
				"");
	if (r->o->events & (1u << JP_EV_CPU) && v)
		fprintf(out,
			"jprof: CPU time: %.3f s on CPU (%s), %llu thread exits%s carried their time "
			"after the last sample, %llu threads new in the recording, %llu samples "
			"weighed one period (thread's earlier runtime unknown)\n",
			model__total(r->model, JP_VAL_CPU_NS) / 1e9,
			r->o->wall ? "switch timestamps" : "scheduler runtime",
			(unsigned long long)st[JP_STAT_CPU_TAIL] + (__u64)r->wall_tails,
			r->o->wall ? " and threads alive at the end" : "",
			(unsigned long long)st[JP_STAT_CPU_NEW],
			(unsigned long long)st[JP_STAT_CPU_NOPREV]);
	if (r->o->wall)
		fprintf(out,
			"jprof: wall: %.6f s recorded; per thread, on-CPU + runnable + blocked time "
			"add up to it for threads that lived through it; JVM pauses beside "
			"them (hsperfdata): [GC pause] %.6f s, [safepoint] %.6f s\n",
			r->window_ns / 1e9, r->band_gc_ns / 1e9, r->band_safepoint_ns / 1e9);
	if (r->o->agent_events & JP_AGENT_EV_LOCK)
		fprintf(out,
			"jprof: monitor contention: %llu waits, %.3f s waited (of them "
			"java.util.concurrent parks: %llu, %.3f s; parks shorter than --min-block "
			"%u us are not seen)\n",
			(unsigned long long)model__total(r->model, JP_VAL_CONTENTIONS),
			model__total(r->model, JP_VAL_DELAY_NS) / 1e9, (unsigned long long)js.parks,
			js.park_ns / 1e9, r->o->min_block_us);
	if (r->o->agent_events & (JP_AGENT_EV_ALLOC | JP_AGENT_EV_LIVE))
		fprintf(out,
			"jprof: allocations: %llu bytes, %llu objects (estimated from samples)\n",
			(unsigned long long)model__total(r->model, JP_VAL_ALLOC_SPACE),
			(unsigned long long)model__total(r->model, JP_VAL_ALLOC_OBJECTS));
	if (r->o->agent_events & JP_AGENT_EV_LIVE)
		fprintf(out, "jprof: live at the end: %llu bytes, %llu objects (estimated)\n",
			(unsigned long long)model__total(r->model, JP_VAL_INUSE_SPACE),
			(unsigned long long)model__total(r->model, JP_VAL_INUSE_OBJECTS));
	if (v && (st[JP_STAT_NO_HANDLER] || st[JP_STAT_JVM_EXEC] || st[JP_STAT_JVM_EXIT] ||
		  r->withdrawn))
		fprintf(out,
			"jprof: %llu stack requests not sent (the process's handler for the signal "
			"was not, or was being changed from, the agent's: exec or signal reset); "
			"JVMs unregistered: %llu at exec, %llu at exit, %u withdrawn by the agent\n",
			(unsigned long long)st[JP_STAT_NO_HANDLER],
			(unsigned long long)st[JP_STAT_JVM_EXEC],
			(unsigned long long)st[JP_STAT_JVM_EXIT], r->withdrawn);
	if (r->o->events & (1u << JP_EV_CPU))
		snprintf(what, sizeof(what), "%s, %u Hz, %llu idle not shown, ",
			 r->cpu_event, r->o->freq_hz,
			 (unsigned long long)st[JP_STAT_IDLE]);
	else
		what[0] = '\0';
	if (v && (r->o->npids || r->ctf) && (r->o->events & (1u << JP_EV_CPU)))
		fprintf(out,
			"jprof: %llu CPU samples of other processes left out in the kernel (%s)\n",
			(unsigned long long)st[JP_STAT_FILTERED],
			r->ctf ? (r->o->npids ? "-p, --cgroup/--container" : "--cgroup/--container") :
				 "-p");
	if (js.model_drops)
		fprintf(out,
			"jprof: %llu samples dropped: the profile reached its budget (%llu MiB); "
			"the JVM lines say whose\n",
			(unsigned long long)js.model_drops, (unsigned long long)(MODEL_MAX_BYTES >> 20));
	/* the first sample's time with -v; none at all is a problem, said always */
	if (r->first_sample_ns > r->t_start_ns) {
		if (v)
			fprintf(out,
				"jprof: first sample %.0f ms after start (sampling from %.0f ms)\n",
				(r->first_sample_ns - r->t_start_ns) / 1e6,
				(r->sampling_ns - r->t_start_ns) / 1e6);
	} else {
		fprintf(out, "jprof: no sample (sampling from %.0f ms after start)\n",
			(r->sampling_ns - r->t_start_ns) / 1e6);
	}
	/* every loss of this recording: the kernel's ring, and what the agents dropped */
	if (js.agent_lost)
		snprintf(agent_lost, sizeof(agent_lost),
			 ", %llu Java stacks and events the JVMs' agents dropped (ring full)",
			 (unsigned long long)js.agent_lost);
	fprintf(out,
		"jprof: %llu %ssamples (%s%.1f s), %llu lost (ring buffer full)%s, "
		"%llu processes, %u JVMs (%u with Java stacks); %s\n",
		(unsigned long long)(r->o->events & (1u << JP_EV_CPU) ?
					     model__total(r->model, JP_VAL_CPU_SAMPLES) :
					     js.samples),
		r->o->events == 1u << JP_EV_CPU || !(r->o->events & (1u << JP_EV_CPU)) ? "" : "CPU ",
		what, secs,
		(unsigned long long)st[JP_STAT_RB_DROPS], agent_lost,
		(unsigned long long)js.processes, jvms, jvms_java, where);
	if (out != stderr) {
		fclose(out);
		print_escaped(text, len);
		free(text);
	}
	syms_report(r);
	pr_debug("bpf: %llu samples, %llu kernel-stack errors, %llu user-stack errors, %llu signals "
		 "(%llu busy, %llu failed, %llu not sent: one still queued, %llu not sent: not a "
		 "Java thread), %llu unmatched traces",
		 (unsigned long long)st[JP_STAT_SAMPLES], (unsigned long long)st[JP_STAT_KSTACK_ERR],
		 (unsigned long long)st[JP_STAT_USTACK_ERR], (unsigned long long)st[JP_STAT_SIG_SENT],
		 (unsigned long long)st[JP_STAT_SIG_BUSY], (unsigned long long)st[JP_STAT_SIG_ERR],
		 (unsigned long long)st[JP_STAT_SIG_QUEUED],
		 (unsigned long long)st[JP_STAT_NATIVE_SKIP],
		 (unsigned long long)js.unmatched_traces);
}

/*
 * What the flame graph weighs: CPU samples alone count samples; several events share one
 * unit, nanoseconds (CPU samples weigh their thread's CPU time, spread by samples).
 */
/* the agent's option string: recompile, and the JVMTI events asked (jvmagent/agent.c) */
static const char *agent_options(const struct jp_opts *o, char *buf, size_t size)
{
	size_t w = 0;

	buf[0] = '\0';
	if (o->recompile)
		w += (size_t)snprintf(buf + w, size - w, "recompile,");
	if (o->perf_map && w < size)
		w += (size_t)snprintf(buf + w, size - w, "perfmap,");
	/*
	 * Blocked time needs them too: a thread blocked entering a monitor is not walkable,
	 * the wait's Java stack comes from MonitorContendedEnter (join.c add_monitor_wait).
	 */
	if ((o->agent_events & JP_AGENT_EV_LOCK ||
	     o->events & (1u << JP_EV_OFFCPU | 1u << JP_EV_SYSCALL)) &&
	    w < size)
		w += (size_t)snprintf(buf + w, size - w, "lock,");
	if (o->agent_events & JP_AGENT_EV_LIVE && w < size)
		w += (size_t)snprintf(buf + w, size - w, "live,");
	if (o->agent_events & (JP_AGENT_EV_ALLOC | JP_AGENT_EV_LIVE) && o->alloc_interval && w < size)
		w += (size_t)snprintf(buf + w, size - w, "alloc=%u,", o->alloc_interval);
	else if (o->agent_events & JP_AGENT_EV_ALLOC && w < size)
		w += (size_t)snprintf(buf + w, size - w, "alloc,");
	if (w && w < size)
		buf[w - 1] = '\0';
	return buf[0] ? buf : NULL;
}

/* JP_AGENT_EV_* this recording wants from every agent: as in agent_options() */
static __u32 wanted_agent_events(const struct jp_opts *o)
{
	/* blocked time takes a monitor wait's Java stack from the lock events */
	return o->agent_events |
	       (o->events & (1u << JP_EV_OFFCPU | 1u << JP_EV_SYSCALL) ? JP_AGENT_EV_LOCK : 0);
}

static void record_view(const struct jp_opts *o, int format, struct model_view *v)
{
	memset(v, 0, sizeof(*v));
	if (o->events == 1u << JP_EV_CPU)
		v->values = strcmp(graph_unit(o), "samples") ? 1u << JP_VAL_CPU_NS :
							       1u << JP_VAL_CPU_SAMPLES;
	else
		v->values = (o->events & (1u << JP_EV_CPU) ? 1u << JP_VAL_CPU_NS : 0) |
			    (o->events & (1u << JP_EV_OFFCPU) ? 1u << JP_VAL_OFFCPU_NS : 0) |
			    /* a slow call's blocked time is an off-CPU interval already */
			    (o->events & (1u << JP_EV_SYSCALL) && !(o->events & (1u << JP_EV_OFFCPU)) ?
				     1u << JP_VAL_SYSCALL_NS :
				     0);
	/* the wall view's band of JVM pauses (add_pause_band) */
	if (o->wall)
		v->values |= 1u << JP_VAL_PAUSE_NS;
	/* pprof gets the sample count beside the CPU time */
	if (format == OUT_PPROF && (o->events & (1u << JP_EV_CPU)))
		v->values |= 1u << JP_VAL_CPU_SAMPLES | 1u << JP_VAL_CPU_NS;
	/*
	 * Agent events have their own units (bytes, counts): in a graph the bytes or the wait
	 * are weighed; pprof carries the counts beside them as further sample types.
	 */
	if (o->cpu_hidden)
		v->values = 0;
	if (o->agent_events & JP_AGENT_EV_ALLOC)
		v->values |= 1u << JP_VAL_ALLOC_SPACE |
			     (format == OUT_PPROF ? 1u << JP_VAL_ALLOC_OBJECTS : 0);
	if (o->agent_events & JP_AGENT_EV_LIVE)
		v->values |= 1u << JP_VAL_INUSE_SPACE |
			     (format == OUT_PPROF ? 1u << JP_VAL_INUSE_OBJECTS : 0);
	if (o->agent_events & JP_AGENT_EV_LOCK)
		v->values |= 1u << JP_VAL_DELAY_NS |
			     (format == OUT_PPROF ? 1u << JP_VAL_CONTENTIONS : 0);
	v->per_pid = o->per_pid;
	v->per_thread = o->per_thread;
	v->per_container = o->per_container;
	v->dotted = o->dotted;
	v->lines = o->lines;
}

static __u64 js_samples(const struct rec *r)
{
	struct join_stats js;

	join__stats(r->join, &js);
	return js.samples;
}

/* jprof's own command line, arguments with blanks or quotes in single quotes; cut when long */
static void own_command(char *buf, size_t len)
{
	char raw[1024];
	size_t n = 0, o = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : read(fd, raw, sizeof(raw) - 1);

	if (fd >= 0)
		close(fd);
	buf[0] = '\0';
	if (got <= 0)
		return;
	raw[got] = '\0';
	while (n < (size_t)got && o + 4 < len) {
		const char *a = raw + n;
		bool quote = !*a || strpbrk(a, " \t\n'\"\\$`;&|<>*?");

		o += snprintf(buf + o, len - o, "%s%s", o ? " " : "", quote ? "'" : "");
		for (; *a && o + 6 < len; a++) {
			if (*a == '\'') {
				memcpy(buf + o, "'\\''", 4); /* close, escaped quote, reopen */
				o += 4;
			} else {
				buf[o++] = *a;
			}
		}
		if (quote && o + 2 < len)
			buf[o++] = '\'';
		buf[o] = '\0';
		n += strlen(raw + n) + 1;
	}
}

static void record_meta(const struct rec *r, __u64 t0, struct out_meta *m)
{
	static const char *const ev_names[] = { [JP_EV_CPU] = "cpu", [JP_EV_OFFCPU] = "offcpu",
						[JP_EV_SYSCALL] = "syscalls" };
	static char host[256], events[64], command[1024], losses[128];
	size_t n = 0;
	__u64 st[JP_STAT_MAX];
	struct timespec now;

	memset(m, 0, sizeof(*m));
	own_command(command, sizeof(command));
	m->command = command[0] ? command : NULL;
	kstats(r, st);
	if (gethostname(host, sizeof(host) - 1))
		host[0] = '\0';
	m->title = profile_title(r->o);
	m->unit = graph_unit(r->o);
	m->host = host[0] ? host : NULL;
	events[0] = '\0';
	for (int e = JP_EV_CPU; e <= JP_EV_SYSCALL; e++)
		if (r->o->events & (1u << e))
			n += snprintf(events + n, sizeof(events) - n, "%s%s", n ? "," : "", ev_names[e]);
	if (r->o->cpu_hidden)
		n = 0;
	if (r->o->agent_events & JP_AGENT_EV_LOCK)
		n += snprintf(events + n, sizeof(events) - n, "%slock", n ? "," : "");
	if (r->o->agent_events & JP_AGENT_EV_ALLOC)
		n += snprintf(events + n, sizeof(events) - n, "%salloc", n ? "," : "");
	if (r->o->agent_events & JP_AGENT_EV_LIVE)
		n += snprintf(events + n, sizeof(events) - n, "%slive", n ? "," : "");
	m->events = events;
	m->freq_hz = r->o->events & (1u << JP_EV_CPU) ? r->o->freq_hz : 0;
	m->duration_ns = mono_ns() - t0;
	clock_gettime(CLOCK_REALTIME, &now);
	m->start_unix_ns = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec - m->duration_ns;
	m->samples = js_samples(r);
	m->lost = st[JP_STAT_RB_DROPS] + st[JP_STAT_OFFCPU_LOST];
	snprintf(losses, sizeof(losses), "%llu ring buffer full, %llu off-CPU not stored",
		 (unsigned long long)st[JP_STAT_RB_DROPS], (unsigned long long)st[JP_STAT_OFFCPU_LOST]);
	m->losses = losses;
}

/* -e wall: the pause band, one sample per JVM and kind of pause (add_pause_band) */
struct band_ctx {
	struct rec *r;
	__u64 gc_ns, safepoint_ns; /* all JVMs, for the report */
	int err;
};

/*
 * The JVM's process name as its samples have it, so the band sits under the same root;
 * copied: the model's pointers move when it grows.
 */
static void band_comm(struct model *m, __u32 pid, char *buf, size_t size)
{
	/* the newest row: a JVM started during the recording was its shell before the exec */
	for (size_t i = model__rows(m); i > 0; i--) {
		struct jp_sample_row rb;
		const struct jp_labels *l = model__get_labels(m, model__row(m, i - 1, &rb)->labels);

		if (l && l->pid == pid && l->tid && l->comm && l->comm[0]) {
			snprintf(buf, size, "%s", l->comm);
			return;
		}
	}
	snprintf(buf, size, "java");
}

static int band_add(struct model *m, __u32 pid, const char *comm, const char *frame, __u64 ns)
{
	struct jp_labels l = { .pid = pid, .tid = 0, .comm = comm, .thread = "", .container = "" };
	struct jp_location loc = { .kind = JP_FK_ROOT };
	jp_id id, stack, labels;

	if (!ns)
		return 0;
	loc.func = model__func(m, frame, "", false);
	id = loc.func ? model__location(m, &loc) : 0;
	stack = id ? model__stack(m, &id, 1) : 0;
	labels = model__labels(m, &l);
	if (!stack || !labels)
		return -ENOMEM;
	return model__add(m, stack, labels, JP_VAL_PAUSE_NS, ns);
}

/*
 * A JVM's stop-the-world time in the recording, from the counters of its hsperfdata file
 * (exact, and complete: a pause between two reads is in them, though not seen one by one):
 * "[GC pause]" the collectors' pause time, "[safepoint]" the time at safepoints beyond it
 * (a GC pause is a safepoint operation, so it is in the safepoint time too). Samples of the
 * process with tid 0: no thread's time, and the threads' own times stay as they are.
 */
static void band_jvm(void *vctx, const struct jvm_info *jvm, const struct hsperf *h)
{
	struct hsperf_kind_stats st[HSPERF_COLLECTORS + 1];
	struct band_ctx *c = vctx;
	unsigned int n = hsperf__stats(h, st, HSPERF_COLLECTORS + 1);
	__u64 gc = 0, sp = 0;
	char comm[64];

	if (c->err || !n)
		return;
	for (unsigned int i = 0; i + 1 < n; i++)
		gc += st[i].total_ns;
	sp = st[n - 1].total_ns > gc ? st[n - 1].total_ns - gc : 0; /* safepoints: last */
	if (!gc && !sp)
		return;
	band_comm(c->r->model, jvm->pid, comm, sizeof(comm));
	c->err = band_add(c->r->model, jvm->pid, comm, "[GC pause]", gc);
	if (!c->err)
		c->err = band_add(c->r->model, jvm->pid, comm, "[safepoint]", sp);
	c->gc_ns += gc;
	c->safepoint_ns += sp;
}

static void add_pause_band(struct rec *r)
{
	struct band_ctx c = { .r = r };

	if (!r->pauses)
		return;
	pauses__for_each_jvm(r->pauses, band_jvm, &c);
	if (c.err)
		pr_warn("wall: the pause band is incomplete: %s", strerror(-c.err));
	r->band_gc_ns = c.gc_ns;
	r->band_safepoint_ns = c.safepoint_ns;
}

/*
 * Writes every output from the one model; says what was written in where. Each failure is
 * one line naming the file and what was not saved. Returns 0 or the first -errno.
 */
/* GC pauses of all JVMs, for writers that show them (JFR); times from t0 */
struct gc_list {
	struct out_gc_pause *p;
	size_t n, cap;
	__u64 t0;
};

#define GC_PAUSES_OUT_MAX (1u << 20)

static void add_gc_pause(void *ctx, __u32 pid, __u64 start_mono_ns,
			 const struct hsperf_gc_event *ev)
{
	struct gc_list *l = ctx;

	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 256;
		struct out_gc_pause *np;

		if (nc > GC_PAUSES_OUT_MAX || !(np = realloc(l->p, nc * sizeof(*np))))
			return; /* JFR then holds the first ones; the report's table has all */
		l->p = np;
		l->cap = nc;
	}
	l->p[l->n++] = (struct out_gc_pause){
		.start_ns = start_mono_ns > l->t0 ? start_mono_ns - l->t0 : 0,
		.duration_ns = ev->duration_ns,
		.pid = pid,
		.gc_id = ev->gc_id,
		.name = ev->collector,
		.cause = ev->cause,
	};
}

static int write_outputs(struct rec *r, __u64 t0, struct rec_out *outs, size_t n, char *where,
			 size_t wlen)
{
	struct gc_list gcs = {.t0 = t0};
	struct out_meta meta;
	size_t w = 0;
	int first = 0;

	record_meta(r, t0, &meta);
	if (r->pauses) {
		pauses__for_each_gc(r->pauses, add_gc_pause, &gcs);
		meta.gc_pauses = gcs.p;
		meta.n_gc_pauses = gcs.n;
	}
	where[0] = '\0';
	if (!n)
		snprintf(where, wlen, "syscall table on stdout%s",
			 r->o->slow_us ? " (slow-call stacks need -o)" : "");
	for (size_t i = 0; i < n; i++) {
		struct out_input in = { .model = r->model, .meta = &meta };
		const char *name = outs[i].path ? outs[i].path : "stdout";
		int err;

		record_view(r->o, outs[i].format, &in.view);
		err = out_write(outs[i].format, &in, outs[i].f);
		if (outs[i].file) {
			if (err)
				outfile__abort(outs[i].file);
			else
				err = outfile__commit(outs[i].file);
			outs[i].file = NULL;
		} else if (!err && fflush(outs[i].f)) {
			err = -errno;
		}
		if (err) {
			pr_err("writing %s: %s; the %llu collected samples were not saved%s",
			       name, strerror(-err), (unsigned long long)meta.samples,
			       outs[i].existed ? " (the previous file is unchanged)" : "");
			first = first ? first : err;
		}
		w += snprintf(where + w, w < wlen ? wlen - w : 0, "%s%s %s (%s)", i ? ", " : "",
			      err ? "nothing written to" : "wrote", name,
			      err ? strerror(-err) : out_format_name(outs[i].format));
	}
	free(gcs.p);
	return first;
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
		.wall = o->wall,
		.java_walk = o->java_walk,
	};
	bool multi = (o->events & (o->events - 1)) != 0;
	struct join_opts jo = {
		.mark_offcpu = multi,
		.lock_threshold_ns = o->lock_threshold_ns,
		.parks = !!(o->agent_events & JP_AGENT_EV_LOCK),
		.offcpu_parks_only =
			(o->agent_events & JP_AGENT_EV_LOCK) && !(o->events & (1u << JP_EV_OFFCPU)),
		.agent_events = o->agent_events,
		.joined_events = wanted_agent_events(o),
	};
	char agent_opts[128];
	struct sigaction sa = { .sa_handler = on_signal };
	struct rec r = { .o = o, .t_start_ns = mono_ns() };
	struct attacher_opts ao = {
		.options = agent_options(o, agent_opts, sizeof(agent_opts)),
		.no_attach = o->no_attach,
		.start_ns = r.t_start_ns,
		.note = on_attach_note,
		.report_all = o->verbose,
	};
	__u64 t0, deadline;
	struct rec_out outs[JP_MAX_OUTPUTS];
	size_t nouts = 0;
	char where[1024];
	int ret = JP_EXIT_FAILURE, err;

	ret = check_targets(o);
	if (ret)
		return ret;
	ret = ct_filter_resolve(o, &r.ctf);
	if (ret)
		return ret;
	ret = JP_EXIT_FAILURE;
	if (r.ctf) {
		ko.cgroup_ids = r.ctf->ids;
		ko.cgroup_levels = r.ctf->levels;
		ko.ncgroups = r.ctf->n;
	}
	if (!has_bpf_privileges()) {
		pr_err("recording needs root (or CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE and "
		       "CAP_SYS_ADMIN); run it with sudo");
		ct_filter_free(r.ctf);
		return JP_EXIT_FAILURE;
	}
	boost_priority(o);

	find_agent(&r, self_dir);
	ao.agent_path = r.agent_path;
	if (!o->no_attach && check_agent(&r)) {
		ct_filter_free(r.ctf);
		return JP_EXIT_USAGE;
	}
	if (open_outputs(o, outs, &nouts)) {
		ct_filter_free(r.ctf);
		return JP_EXIT_OUTPUT;
	}

	sigemptyset(&sa.sa_mask); /* no SA_RESTART: poll must see EINTR */
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL)) {
		pr_err("sigaction: %s", strerror(errno));
		goto out_close;
	}
	signal(SIGPIPE, SIG_IGN);

	r.model = model__new();
	r.syms = syms__new(NULL);
	if (!r.model || !r.syms) {
		pr_err("out of memory or no /proc/kallsyms: %s", strerror(errno));
		goto out_free;
	}
	{
		char mount[4096];

		/* container labels of samples: without cgroup v2 every sample is the host's */
		if (!cgroup_find_mount("/proc/self/mountinfo", mount, sizeof(mount)))
			r.cgnames = cgroup_names__new(mount);
		jo.cgroups = r.cgnames;
	}
	jo.native_thread = on_native_thread;
	jo.native_ctx = &r;
	jo.jw_method = on_jw_method;
	jo.jw_ctx = &r;
	r.join = join__new(r.syms, r.model, &jo);
	if (!r.join) {
		pr_err("out of memory");
		goto out_free;
	}
	/* fds per JVM (hsperfdata, agent files): the hard limit where allowed, see fdlimit.h */
	pr_debug("open files limit: %lu", fdlimit_raise());
	r.att = attacher__new(&ao);
	r.pauses = pauses__new();
	/* without inotify, new JVMs are still found through their samples */
	if (!o->npids && !(r.watch = hswatch__new()))
		pr_debug("not watching /tmp/hsperfdata_*: %s", strerror(errno));
	if (!r.att || !r.pauses) {
		pr_err("out of memory");
		goto out_free;
	}
	/*
	 * Sampling first: JVMs' samples carry native frames (marked) until their agent is
	 * connected, and no JVM, however slow or hostile, delays the recording's start.
	 */
	err = kernel_session__start(&ko, on_sample, &r, &r.ks);
	if (err)
		goto out_free; /* the session logged why */
	r.sampling_ns = mono_ns();
	err = start_extra_events(&r);
	if (err)
		goto out_free; /* logged by the loader */
	setup_initial_jvms(&r);
	attacher__poll(r.att, mono_ns(), on_agent_ready, &r);

	t0 = mono_ns();
	if (o->wall) {
		/* one window for all of a thread's time: CPU, blocked and runnable */
		offcpu__set_window(r.offcpu, t0);
		err = kernel_session__start_cpu(r.ks, t0);
		if (err)
			goto out_free;
		r.sampling_ns = mono_ns();
	}
	deadline = o->duration_s ? t0 + (__u64)o->duration_s * 1000000000ull : ~0ull;
	pr_info("recording %s%s (%s)%s", o->npids ? "the given processes" : "all processes",
		r.ctf ? " in the given cgroups" : "", events_shown(o),
		o->duration_s ? "" : "; Ctrl-C to stop");
	for (size_t i = 0; r.ctf && i < r.ctf->n; i++)
		pr_info("cgroup filter: %s%s (id %llu)", r.ctf->mount, r.ctf->paths[i],
			(unsigned long long)r.ctf->ids[i]);
	while (!exiting && mono_ns() < deadline) {
		handle_new_jvm_files(&r);
		/* young processes are looked at every round: short ones to catch them early */
		err = kernel_session__poll(r.ks, attacher__busy(r.att) ? POLL_ATTACH_MS
					   : r.q_fast		   ? POLL_YOUNG_MS
								   : POLL_MS);
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
		join__heartbeat(r.join, mono_ns(), wanted_agent_events(o), o->alloc_interval);
		handle_new_pids(&r);
		drop_withdrawn_agents(&r);
		retire_dead_jvms(&r, mono_ns());
		/* between rounds no symbol name is held: names went into the model as copies */
		syms__free_dropped(r.syms);
		attacher__poll(r.att, mono_ns(), on_agent_ready, &r);
		pauses__poll(r.pauses, mono_ns(), false);
		status_tick(&r, mono_ns(), t0, deadline);
		/* as perf does: -p targets all gone end the recording, a round after (their last) */
		if (o->npids && targets_gone(o)) {
			if (r.targets_gone++) {
				pr_info("the -p process%s exited: stopping", o->npids > 1 ? "es" : "");
				break;
			}
		}
	}
	log_status(NULL);
	pauses__poll(r.pauses, mono_ns(), true);
	if (exit_signal)
		pr_info("%s: stopping and writing what was recorded", strsignal(exit_signal));
	/* threads still blocked now: their blocked time up to the end, with their stacks */
	if (r.offcpu) {
		__u64 end = mono_ns();
		int n;

		r.window_ns = end - t0;
		if (o->wall)
			r.wall_end_ns = end;
		r.offcpu_open = flush_blocked(&r, t0, end);
		n = offcpu__flush_open(r.offcpu, t0, end, on_sample, &r);
		r.offcpu_open = n < 0 ? n : r.offcpu_open + n;
		if (r.offcpu_open < 0)
			pr_warn("off-CPU: the intervals still open at the end: %s",
				strerror(-r.offcpu_open));
		if (o->wall) {
			n = kernel_session__flush_wall(r.ks, end, on_sample, &r);
			if (n < 0)
				pr_warn("wall: the CPU time since each thread's last sample: %s",
					strerror(-n));
			r.wall_tails = n > 0 ? n : 0;
		}
	}
	(void)kernel_session__drain(r.ks);
	(void)join__flush(r.join);
	if (o->wall)
		add_pause_band(&r);
	/* every frame is resolved: what resolved them goes before the writers need memory */
	mem_report(&r);
	join__release(r.join);
	syms__release(r.syms);
	/* the BPF side is done too: its ring buffer's pages go */
	kstats(&r, r.kstats);
	r.cpu_event = kernel_session__cpu_event(r.ks);
	kernel_session__free(r.ks);
	r.ks = NULL;
#ifdef __GLIBC__
	(void)malloc_trim(0);
#endif

	if (r.sc && write_syscall_table(&r))
		ret = JP_EXIT_OUTPUT;
	err = write_outputs(&r, t0, outs, nouts, where, sizeof(where));
	summary(&r, (mono_ns() - t0) / 1e9, where);
	if (err)
		ret = JP_EXIT_OUTPUT;
	else if (ret != JP_EXIT_OUTPUT)
		ret = JP_EXIT_OK;
out_free:
	attacher__free(r.att);
	pauses__free(r.pauses);
	hswatch__free(r.watch);
	syscalls__free(r.sc);
	offcpu__free(r.offcpu);
	kernel_session__free(r.ks);
	join__free(r.join);
	syms__free(r.syms);
	model__free(r.model);
	free(r.seen);
	free(r.pcomm);
	free(r.pcount);
out_close:
	abort_outputs(outs, nouts);
	cgroup_names__free(r.cgnames);
	ct_filter_free(r.ctf);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jvms.c: the JVMs of a recording: processes seen in samples classified outside the ring
 * callback, JVMs probed and attached (the attacher), their agents connected to the join
 * and registered in BPF, and retired once they exit.
 */
#include "record/record_int.h"

/* seconds since pid started, or -1 when it is gone (or unreadable); its start in *start */
static double proc_age_s(__u32 pid, __u64 *ret_start)
{
	__u64 start;
	double up;
	FILE *f;

	if (proc_start_ticks(pid, &start))
		return -1;
	*ret_start = start;
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

	/* the layout read from outside before, if any, against the agent's */
	(void)rec_early_check(r, r->agents[i].pid, err ? NULL : &w);
	if (!err)
		err = kernel_session__set_jwalk(r->ks, r->agents[i].pid, &w);
	else if (rec_early_published(r, r->agents[i].pid))
		return; /* BPF keeps walking by the layout read from outside */
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
 * gets no more stack requests: the signal word as the join's poll of the ring read it,
 * read again only when that one differs (a poll that failed, or one before the agent
 * was ready)
 */
void rec_drop_withdrawn_agents(struct rec *r)
{
	for (size_t i = 0; i < r->nagents; i++) {
		const struct jvm_agent *a = r->agents[i].a;

		if (!r->agents[i].in_bpf || jvm_agent__signo_polled(a) == r->agents[i].signo ||
		    jvm_agent__signo(a) == r->agents[i].signo)
			continue;
		(void)kernel_session__del_jvm(r->ks, r->agents[i].pid);
		r->agents[i].in_bpf = false;
		r->withdrawn++;
		pr_debug("JVM %u: the agent withdrew its signal %.2f s after start (its JVM "
			 "ending, or a stack request it no longer answers)",
			 r->agents[i].pid, (mono_ns() - r->t_start_ns) / 1e9);
	}
}

/*
 * The stores of a recording that keep state per process, as the process table drops a
 * process (exited, its last samples joined; or exec'd): each drops its state once, in this
 * order. The join reads what a JVM's ring still holds and frees its agent; then its BPF
 * entry and agent slot go, the process's symbols, and its attach entry.
 */
/*
 * a process the table holds now has pid (a new one, after the pid was dropped); comm not
 * NULL: and its samples carry that name (an exec'd process runs under its old name again)
 */
static bool pid_alive(void *ctx, __u32 pid, const char *comm)
{
	struct rec *r = ctx;
	const struct pt_proc *p = ptable__find(r->procs, pid);

	return p && (!comm || !strncmp(p->comm, comm, JP_COMM_LEN));
}

static void add_gone(struct rec *r, __u32 pid, bool looked_at, bool execed);

/* pid is waiting in the queue of new processes (a JVM noted, not handed to the attacher) */
static bool queued(const struct rec *r, __u32 pid)
{
	for (size_t i = 0; i < r->q.n; i++)
		if (r->q.pids[i] == pid)
			return true;
	return false;
}

static void drop_join(void *ctx, const struct pt_proc *p, enum pt_why why, __u64 now)
{
	struct rec *r = ctx;
	int err;

	if (!join__knows_jvm(r->join, p->pid))
		goto out_fold;
	/*
	 * exec'd while still starting, before the attacher had it: the queue finds the pid
	 * alive but no JVM it knows, and no outcome would be listed (its exit the queue sees)
	 */
	if (why == PT_EXECED && queued(r, p->pid))
		add_gone(r, p->pid, true, true);
	err = join__retire_jvm(r->join, p->pid, now);
	if (err)
		pr_debug("JVM %u: retiring it: %s", p->pid, strerror(-err));
	r->retired++;
	if (why == PT_EXECED)
		pr_debug("JVM %u exec'd another program: retired, looked at again", p->pid);
	else
		pr_debug("JVM %u exited: its agent and symbols freed", p->pid);
out_fold:
	/*
	 * An exec'd process goes on (same pid, new name): the label sets of its old name end,
	 * as an exited process's do
	 */
	if (why == PT_EXITED)
		err = join__process_exited(r->join, p->pid, pid_alive, r);
	else if (why == PT_EXECED) {
		char comm[JP_COMM_LEN + 1];

		memcpy(comm, p->comm, JP_COMM_LEN);
		comm[JP_COMM_LEN] = '\0';
		err = join__process_execed(r->join, p->pid, comm, pid_alive, r);
	} else
		err = 0;
	if (err)
		pr_debug("process %u %s: folding the oldest ended: %s", p->pid,
			 why == PT_EXITED ? "exited" : "exec'd", strerror(-err));
}

static void drop_agent(void *ctx, const struct pt_proc *p, enum pt_why why, __u64 now)
{
	struct rec *r = ctx;

	(void)why, (void)now;
	for (size_t i = 0; i < r->nagents; i++) {
		if (r->agents[i].pid != p->pid)
			continue;
		if (r->agents[i].in_bpf && r->ks)
			(void)kernel_session__del_jvm(r->ks, p->pid);
		memset(&r->agents[i], 0, sizeof(r->agents[i]));
	}
	/* a JVM gone before its attach: the samples read of it, for the report */
	for (size_t i = 0; i < r->ngone; i++)
		if (r->gone[i].pid == p->pid)
			r->gone[i].samples = p->samples;
	rec_early_drop(r, p->pid);
}

static void drop_syms(void *ctx, const struct pt_proc *p, enum pt_why why, __u64 now)
{
	(void)why, (void)now;
	syms__drop_pid(ctx, p->pid);
}

static void drop_attach(void *ctx, const struct pt_proc *p, enum pt_why why, __u64 now)
{
	attacher__forget(ctx, p->pid, now, why == PT_EXECED ? "exec'd another program" : "exited");
}

int rec_subscribe_procs(struct rec *r)
{
	int err = ptable__subscribe(r->procs, drop_join, r);

	if (!err)
		err = ptable__subscribe(r->procs, drop_agent, r);
	if (!err)
		err = ptable__subscribe(r->procs, drop_syms, r->syms);
	if (!err)
		err = ptable__subscribe(r->procs, drop_attach, r->att);
	return err;
}

/*
 * JVMs whose process is gone (or another one's now): told to the process table, which drops
 * them once their last traces are read (RETIRE_AFTER_NS), the rest of the table in turn
 * (exits the kernel could not tell, its ring full): a long recording of a host where JVMs
 * come and go (build tools, batch jobs) keeps only what live JVMs need. The kernel tells
 * each exit (rec_take_exits), so this is a backstop: both read start times from
 * /proc/PID/stat (which sums the CPU time of all a process's threads: about 50 us for a
 * JVM of 30), every CHECK_TOLD_NS while the kernel tells exits and has lost none (in its
 * ring or in ours), every second without its word or once it has lost one.
 */
#define SWEEP_PER_ROUND 256
#define CHECK_TOLD_NS	(10ull * 1000 * 1000 * 1000)

void rec_retire_dead_jvms(struct rec *r, __u64 now)
{
	bool told, freed;

	if (r->ks && !r->exits_lost && now - r->lost_check_ns >= 1000000000ull) {
		__u64 st[JP_STAT_MAX];

		r->lost_check_ns = now;
		kernel_session__stats(r->ks, st); /* one read of the per-CPU counters */
		r->exits_lost = st[JP_STAT_EXIT_LOST] > 0;
	}
	told = r->ks && !r->exited_dropped && !r->exits_lost;
	if (now - r->retire_check_ns >= (told ? CHECK_TOLD_NS : 1000000000ull)) {
		r->retire_check_ns = now;
		for (size_t i = 0; i < r->nagents; i++) {
			__u64 start;

			if (r->agents[i].pid && (proc_start_ticks(r->agents[i].pid, &start) ||
						 start != r->agents[i].start_ticks))
				ptable__exited(r->procs, r->agents[i].pid, now);
		}
		(void)ptable__sweep(r->procs, now, SWEEP_PER_ROUND);
	}
	freed = ptable__tick(r->procs, now) > 0;
#ifdef __GLIBC__
	/* megabytes freed amid the heap stay resident unless given back */
	if (freed)
		(void)malloc_trim(0);
#endif
}

/*
 * Processes that exited or exec'd, as the kernel tells (JP_EV_EXIT, JP_EV_EXEC), to the
 * process table: an exec drops what jprof held of the old program at once, and the pid's
 * next sample makes it a new process (symbols loaded again, looked at for a JVM, attached
 * if it is one: a JVM that execs a new JVM in the same pid is attached again, issue 26;
 * its start time does not change, so nothing else would tell). An exit drops it once its
 * last samples are joined.
 */
void rec_take_exits(struct rec *r, __u64 now)
{
	struct ks_proc_event ev[256];
	size_t n;

	if (!r->ks)
		return;
	while ((n = kernel_session__take_exits(r->ks, ev, 256)))
		for (size_t i = 0; i < n; i++)
			if (ev[i].exec)
				ptable__execed(r->procs, ev[i].pid, now);
			else
				ptable__exited(r->procs, ev[i].pid, now);
	r->exited_dropped = kernel_session__exits_dropped(r->ks);
}

/*
 * Opens the agent channel and tells BPF to request stacks. 0, -EAGAIN while the agent
 * has not published its channel yet (the attacher asks again), or -errno. Never waits.
 */
/* what a person knows a JVM by, and the container its agent's events belong to */
static void set_jvm_labels(struct rec *r, const struct jvm_info *jvm)
{
	join__set_jvm_name(r->join, jvm->pid, jvm->main);
	join__set_jvm_cgroup(r->join, jvm->pid, cgroup_names__id(r->cgnames, jvm->cgroup));
}

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
	if (!err) {
		bool is_new;
		struct pt_proc *p = ptable__get(r->procs, jvm->pid, &is_new);

		if (p) {
			p->flags |= PT_F_JVM;
			p->start_ticks = start;
		}
	}
	set_jvm_labels(r, jvm);
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
int rec_on_agent_ready(void *ctx, const struct jvm_info *jvm, bool attached_now)
{
	struct rec *r = ctx;
	int err;

	err = connect_agent(r, jvm);
	if (err)
		return err;
	/*
	 * an agent an earlier jprof loaded may lack the events asked, and so may one this jprof
	 * loaded before a SIGHUP asked for more (record/interval.c set_alloc): it adds them
	 * when loaded again
	 */
	if (attached_now && !r->o->recompile)
		join__set_jvm_note(
			r->join, jvm->pid,
			"agent attached late: in code the JIT compiled before that, "
			"samples in inlined methods count for the method they were inlined "
			"into; --recompile fixes this");
	return !r->o->no_attach && join__missing_events(r->join, jvm->pid, true) ? 1 : 0;
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
	set_jvm_labels(r, jvm);
	rec_early_found(r, jvm);
	err = attacher__add(r->att, jvm, mono_ns());
	if (err < 0)
		pr_debug("JVM %u: not tracked: %s", jvm->pid, strerror(-err));
	join__set_jvm_pending(r->join, jvm->pid,
			      err >= 0 && !r->o->no_attach && jvm->agent != JVM_AGENT_NO_ATTACH);
}

/* a JVM that exited before it was attached (or even looked at): listed at the end */
static void add_gone(struct rec *r, __u32 pid, bool looked_at, bool execed)
{
	if (r->ngone == sizeof(r->gone) / sizeof(r->gone[0])) {
		r->gone_more++;
		return;
	}
	r->gone[r->ngone].pid = pid;
	r->gone[r->ngone].looked_at = looked_at;
	r->gone[r->ngone].execed = execed;
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
		set_jvm_labels(r, jvm);
		join__set_jvm_pending(r->join, jvm->pid,
				      !r->o->no_attach && jvm->agent != JVM_AGENT_NO_ATTACH);
	}
	rec_early_found(r, jvm);
	(void)pauses__add(r->pauses, jvm, started_during);
}

static void queue_pid(struct rec *r, __u32 pid)
{
	if (!queued(r, pid) && r->q.n < NEW_PIDS_MAX)
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

void rec_handle_new_pids(struct rec *r)
{
	double since_start = (mono_ns() - r->t_start_ns) / 1e9;
	struct jvm_info jvm;
	size_t keep = 0;

	r->q_fast = false;
	for (size_t i = 0; i < r->q.n; i++) {
		__u32 pid = r->q.pids[i];
		__u64 start = 0;
		double age = proc_age_s(pid, &start);
		struct pt_proc *p = ptable__find(r->procs, pid);
		bool during;
		int ready;

		if (pid == (__u32)getpid())
			continue;
		/* its identity: ptable__sweep finds its exit if the kernel's word is lost */
		if (p && !p->start_ticks)
			p->start_ticks = start;
		if (age < 0) {
			if (join__knows_jvm(r->join, pid))
				add_gone(r, pid, true, false);
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
				add_gone(r, pid, true, false);
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

/*
 * JVMs that just created their hsperfdata file: looked at at once, before the samples
 * of this round are joined, so their samples count in their per-JVM line from here on.
 * One already gone is listed at the end with the samples read of it.
 */
void rec_handle_new_jvm_files(struct rec *r)
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
		err = jvm_probe("/proc", pids[i], &jvm);
		/*
		 * outside --cgroup/--container: never sampled, so neither noted nor attached,
		 * nor seen (the seen processes' threads blocked all along are reported)
		 */
		if (r->ctf && (err || !ct_filter_has_path(r->ctf, jvm.cgroup)))
			continue;
		(void)ptable__get(r->procs, pids[i], &is_new);
		if (!err) {
			/* counted from now on; rec_handle_new_pids attaches it once it is initialised */
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
		add_gone(r, pids[i], false, false);
	}
}

/* samples read of the i-th JVM gone before attach: from the table, or kept when it dropped it */
static __u64 gone_samples(const struct rec *r, size_t i)
{
	const struct pt_proc *p = ptable__find(r->procs, r->gone[i].pid);

	/* an exec'd one's pid goes on as another program: its samples were kept at the exec */
	return p && !r->gone[i].execed ? p->samples : r->gone[i].samples;
}

void rec_gone_report(const struct rec *r, FILE *f, bool verbose)
{
	/* short JVMs (a build's) come by the dozen: their count, and each with -v */
	if (!verbose && r->ngone + r->gone_more)
		fprintf(f,
			"jprof: %llu JVMs exited before attach (no Java stacks; -v lists them)\n",
			(unsigned long long)(r->ngone + r->gone_more));
	for (size_t i = 0; verbose && i < r->ngone; i++)
		fprintf(f,
			"jprof: JVM %u: %llu samples in all, none with Java stacks: exited before "
			"attach (%s, %.2f s after start)\n",
			r->gone[i].pid, (unsigned long long)gone_samples(r, i),
			r->gone[i].execed      ? "gone while it was still starting: its process "
						 "exec'd another program" :
			r->gone[i].looked_at ? "gone while it was still starting"
					     : "gone before it could be looked at, its hsperfdata "
					       "file seen",
			(r->gone[i].seen_ns - r->t_start_ns) / 1e9);
	if (verbose && r->gone_more)
		fprintf(f, "jprof: %llu more JVMs exited before attach\n",
			(unsigned long long)r->gone_more);
}

/* what the watch of hsperfdata directories left out (budgets, or files of no process) */
void rec_watch_report(const struct rec *r, FILE *f)
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

void rec_find_agent(struct rec *r, const char *self_dir)
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
int rec_check_agent(const struct rec *r)
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
void rec_on_attach_note(void *ctx, const char *line)
{
	(void)ctx;
	pr_info("%s", line);
}

/* JVMs present at start: every one with -a, the named ones with -p */
void rec_setup_initial_jvms(struct rec *r)
{
	struct jvm_info *list = NULL, one;
	bool is_new;
	int n;

	if (r->o->npids) {
		for (size_t i = 0; i < r->o->npids; i++) {
			/* handled: not queued again */
			(void)ptable__get(r->procs, r->o->pids[i], &is_new);
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
	for (int i = 0; i < n && !rec_exiting; i++) {
		if (list[i].pid == (__u32)getpid())
			continue;
		/* outside --cgroup/--container: never sampled, so never attached */
		if (!ct_filter_has_path(r->ctf, list[i].cgroup))
			continue;
		track_jvm(r, &list[i], false);
		/* handled: not queued again */
		(void)ptable__get(r->procs, list[i].pid, &is_new);
	}
	free(list);
}

/*
 * What the flame graph weighs: CPU samples alone count samples; several events share one
 * unit, nanoseconds (CPU samples weigh their thread's CPU time, spread by samples).
 */
/* the agent's option string: recompile, and the JVMTI events asked (jvmagent/agent.c) */
const char *rec_agent_options(const struct jp_opts *o, char *buf, size_t size)
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
	if (o->agent_events & (JP_AGENT_EV_ALLOC | JP_AGENT_EV_LIVE) && o->alloc_interval &&
	    w < size)
		w += (size_t)snprintf(buf + w, size - w, "alloc=%u,", o->alloc_interval);
	else if (o->agent_events & JP_AGENT_EV_ALLOC && w < size)
		w += (size_t)snprintf(buf + w, size - w, "alloc,");
	if (w && w < size)
		buf[w - 1] = '\0';
	return buf[0] ? buf : NULL;
}

struct model *rec_model_new(void)
{
	struct model *m = model__new();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t target = (size_t)(cpus > 2 ? cpus : 2) << 21;

	if (m)
		model__set_time_target_bytes(m, target);
	return m;
}

/* JP_AGENT_EV_* this recording wants from every agent: as in rec_agent_options() */
__u32 rec_wanted_agent_events(const struct jp_opts *o)
{
	/* blocked time takes a monitor wait's Java stack from the lock events */
	return o->agent_events |
	       (o->events & (1u << JP_EV_OFFCPU | 1u << JP_EV_SYSCALL) ? JP_AGENT_EV_LOCK : 0);
}

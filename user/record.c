// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * record.c: `jprof record`: sets a recording up, runs its loop (kernel samples, agent
 * rings, new processes and JVMs, pauses, the status line) until -d, a signal or the end
 * of its targets, then writes the outputs and the summary. JVMs are handled by
 * record/jvms.c, outputs by record/outputs.c, what is said by record/summary.c.
 */
#include "record/record_int.h"

volatile sig_atomic_t rec_exiting;
static volatile sig_atomic_t exit_signal;

static void on_signal(int sig)
{
	rec_exiting = 1;
	exit_signal = sig;
}

/*
 * What the join learnt for the capture side since the last round: threads of JVMs that are
 * not Java threads (their stack requests stop, or start again), Method*s BPF's Java walk may
 * name (or no longer). Applied once a round, never from inside a sample's join.
 */
static void apply_join_updates(struct rec *r)
{
	struct join_update u[256];
	size_t n;

	while ((n = join__take_updates(r->join, u, 256))) {
		for (size_t i = 0; i < n && r->ks; i++) {
			if (u[i].kind == JOIN_UP_NATIVE_THREAD)
				(void)kernel_session__native_thread(r->ks, u[i].tid, u[i].on, false);
			else if (u[i].kind == JOIN_UP_JW_METHOD)
				(void)kernel_session__jw_method(r->ks, u[i].pid, u[i].method,
								u[i].on);
		}
	}
}

/* a sample's bytes: header, kernel and user stacks, BPF's Java frames */
static size_t sample_size(const struct jp_sample *s)
{
	return sizeof(*s) + ((size_t)s->kstack_len + s->ustack_len) * sizeof(__u64) +
	       (size_t)s->jstack_len * sizeof(struct jp_jframe);
}

/* a copy of the sample, joined by release_held: 0, or -ENOSPC past HELD_MAX_BYTES */
static int hold_sample(struct rec *r, const struct jp_sample *s, const __u64 *kstack,
		       const __u64 *ustack)
{
	size_t k = (size_t)s->kstack_len * sizeof(__u64), n = sample_size(s);
	size_t need = (r->held_bytes + n + 7) & ~(size_t)7;
	unsigned char *at;

	if (need > HELD_MAX_BYTES)
		return -ENOSPC;
	if (need > r->held_cap) {
		size_t cap = r->held_cap ? r->held_cap : 65536;
		unsigned char *nb;

		while (cap < need)
			cap *= 2;
		nb = realloc(r->held, cap);
		if (!nb)
			return -ENOSPC;
		r->held = nb;
		r->held_cap = cap;
	}
	at = r->held + r->held_bytes;
	memcpy(at, s, sizeof(*s));
	memcpy(at + sizeof(*s), kstack, k);
	/* the user stack, then BPF's Java frames after it */
	memcpy(at + sizeof(*s) + k, ustack, n - sizeof(*s) - k);
	r->held_bytes = need;
	r->held_samples++;
	return 0;
}

/*
 * The samples of new processes, held while the round read the ring: their symbols are
 * loaded now (and what lookups asked to re-read), then the samples are joined, in the
 * order they came
 */
static int release_held(struct rec *r)
{
	size_t off = 0;
	int err = 0;

	(void)syms__load_wanted(r->syms);
	while (off < r->held_bytes) {
		const struct jp_sample *s = (const void *)(r->held + off);
		const __u64 *k = (const __u64 *)(s + 1);
		struct pt_proc *p = ptable__find(r->procs, s->pid);

		if (p)
			p->flags &= ~PT_F_DEFER;
		if (!err)
			err = join__sample(r->join, s, k, k + s->kstack_len);
		off = (off + sample_size(s) + 7) & ~(size_t)7;
	}
	r->held_bytes = 0;
	return err;
}

static int on_sample(void *ctx, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack)
{
	struct rec *r = ctx;
	struct jp_sample clipped;
	struct pt_proc *p;
	bool is_new;

	/*
	 * -e wall: the recording ends at end_ns for every part of a thread's time. Samples
	 * read after it (the sampler runs until the final drain; an interval may close
	 * between the end and the detach) keep only their time up to it: their weight is
	 * wall time that ends at time_ns.
	 */
	if (r->wall_end_ns && s->time_ns > r->wall_end_ns) {
		__u64 over = s->time_ns - r->wall_end_ns, n = join_sample_count(s);
		/* a count's samples each weigh an equal share, its first the remainder too */
		__u64 each = s->weight / n, first = each + s->weight % n;

		if (first <= over)
			return 0;
		clipped = *s;
		clipped.weight = first - over;
		if (n > 1 && each > over)
			clipped.weight += (n - 1) * (each - over);
		else if (n > 1)
			clipped.count = 1;
		clipped.time_ns = r->wall_end_ns;
		s = &clipped;
	}
	if (!r->first_sample_ns || s->time_ns < r->first_sample_ns)
		r->first_sample_ns = s->time_ns;
	p = ptable__get(r->procs, s->pid, &is_new);
	if (p && !is_new && p->comm[0] && memcmp(p->comm, s->pcomm, JP_COMM_LEN)) {
		/* a new process name: it exec'ed (the kernel's word of it may be lost) */
		ptable__execed(r->procs, s->pid, s->time_ns);
		p = ptable__get(r->procs, s->pid, &is_new);
	}
	if (p) {
		if (!p->samples)
			r->processes++;
		p->samples += join_sample_count(s);
		if (is_new)
			memcpy(p->comm, s->pcomm, JP_COMM_LEN);
	}
	/*
	 * A new process's samples wait, to the end of this poll round, for its maps and ELF
	 * symbols (hold_sample): no file is read inside the ring callback
	 */
	if (is_new && r->q.n < NEW_PIDS_MAX)
		r->q.pids[r->q.n++] = s->pid;
	if (p && (p->flags & (PT_F_SYMS | PT_F_DEFER)) != PT_F_SYMS) {
		p->flags |= PT_F_SYMS;
		if (!hold_sample(r, s, kstack, ustack)) {
			p->flags |= PT_F_DEFER;
			syms__want_pid(r->syms, s->pid);
			return 0;
		}
		r->held_over++; /* no room: loaded now, as the process still exists */
		p->flags &= ~PT_F_DEFER;
		(void)syms__add_pid(r->syms, s->pid);
	}
	if (r->nearly && s->kind == JP_EV_CPU)
		rec_early_sampled(r, s->pid, s->tid);
	return join__sample(r->join, s, kstack, ustack);
}

struct pid_list {
	__u32 *pids;
	size_t n;
};

static void add_pid(void *ctx, const struct pt_proc *p)
{
	struct pid_list *l = ctx;

	l->pids[l->n++] = p->pid;
}

/*
 * The threads of the profiled processes (-p, else those the process table holds) asleep
 * since before the recording. seed, at its start: an interval opened for each, that BPF
 * closes if it wakes (offcpu__seed_blocked). Else, at its end: the blocked time of those
 * that slept all along, the whole recording. How many, or -errno.
 */
static int blocked_threads(struct rec *r, __u64 start, __u64 end, bool seed)
{
	struct ptable_stats st;
	struct pid_list l = {0};
	unsigned int budget = seed ? OFFCPU_SEED_MAX : OFFCPU_BLOCKED_MAX;
	int total = 0, k = 0;
	size_t n;

	/* the samples this makes go through the table: its pids are taken out first */
	ptable__stats(r->procs, &st);
	l.pids = calloc(st.live ? st.live : 1, sizeof(*l.pids));
	if (!l.pids)
		return -ENOMEM;
	if (!r->o->npids)
		ptable__for_each(r->procs, add_pid, &l);
	n = r->o->npids ? r->o->npids : l.n;
	for (size_t i = 0; i < n && budget; i++) {
		__u32 pid = r->o->npids ? r->o->pids[i] : l.pids[i];

		k = seed ? offcpu__seed_blocked(r->offcpu, pid, start, budget)
			 : offcpu__flush_blocked(r->offcpu, pid, start, end, budget, on_sample, r);
		if (k == -ENOENT)
			continue; /* exited */
		if (k < 0)
			break;
		total += k;
		budget = (unsigned int)k < budget ? budget - (unsigned int)k : 0;
	}
	free(l.pids);
	return k < 0 && k != -ENOENT ? k : total;
}

/* the off-CPU and syscall programs, on top of the session's maps */
static int start_extra_events(struct rec *r)
{
	const struct jp_opts *o = r->o;
	int err;

	/* -e lock: the parks of java.util.concurrent are blocked intervals (join.c add_park) */
	if (o->events & (1u << JP_EV_OFFCPU) || o->agent_events & JP_AGENT_EV_LOCK) {
		struct offcpu_opts oo = {.min_block_ns = (__u64)o->min_block_us * 1000,
					 .runnable = o->wall,
					 .parks = !!(o->agent_events & JP_AGENT_EV_LOCK)};

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

/*
 * The -p processes, each held by a pidfd, readable once it has exited (a zombie, or gone):
 * the loop's check is one poll, where a read of /proc/PID/stat a round (the kernel sums
 * every thread's times for it) took 8% of jprof's CPU on a busy JVM at 999 Hz. A pid
 * without one (pidfd_open refused) is looked up in /proc.
 */
static void targets_open(struct rec *r)
{
	const struct jp_opts *o = r->o;

	if (!o->npids || !(r->target_fds = calloc(o->npids, sizeof(*r->target_fds))))
		return;
	for (size_t i = 0; i < o->npids; i++) {
		r->target_fds[i].fd = (int)syscall(SYS_pidfd_open, (pid_t)o->pids[i], 0);
		r->target_fds[i].events = POLLIN;
	}
}

static void targets_close(struct rec *r)
{
	for (size_t i = 0; r->target_fds && i < r->o->npids; i++)
		if (r->target_fds[i].fd >= 0)
			close(r->target_fds[i].fd);
	free(r->target_fds);
	r->target_fds = NULL;
}

/* every -p process has exited (a zombie, or gone) */
static bool targets_gone(struct rec *r)
{
	const struct jp_opts *o = r->o;

	if (r->target_fds && poll(r->target_fds, o->npids, 0) < 0)
		return false; /* EINTR: the next round looks again */
	for (size_t i = 0; i < o->npids; i++) {
		if (r->target_fds && r->target_fds[i].fd >= 0) {
			if (!r->target_fds[i].revents)
				return false;
		} else if (!proc_gone(o->pids[i])) {
			return false;
		}
	}
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
		pr_debug("cannot raise jprof's priority to nice %d: %s", JPROF_NICE,
			 strerror(errno));
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
		.aggregate = o->aggregate,
	};
	bool multi = (o->events & (o->events - 1)) != 0;
	struct join_opts jo = {
		.mark_offcpu = multi,
		.lock_threshold_ns = o->lock_threshold_ns,
		.parks = !!(o->agent_events & JP_AGENT_EV_LOCK),
		.offcpu_parks_only =
			(o->agent_events & JP_AGENT_EV_LOCK) && !(o->events & (1u << JP_EV_OFFCPU)),
		/* the wall view keeps every thread's time whole */
		.idle_out = !o->idle && !o->wall,
		.collapse_whole = (o->events & (1u << JP_EV_OFFCPU)) && !o->wall,
		.agent_events = o->agent_events,
		.joined_events = rec_wanted_agent_events(o),
		.compare_walks = o->java_walk == JP_JWALK_SHADOW || o->java_walk == JP_JWALK_CHECK,
	};
	char agent_opts[128];
	struct sigaction sa = {.sa_handler = on_signal};
	struct rec r = {.o = o, .t_start_ns = mono_ns()};
	__u64 t_stop = 0, t_drained = 0, t_flushed = 0, t_released = 0;
	struct attacher_opts ao = {
		.options = rec_agent_options(o, agent_opts, sizeof(agent_opts)),
		.no_attach = o->no_attach,
		.start_ns = r.t_start_ns,
		.note = rec_on_attach_note,
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

	rec_find_agent(&r, self_dir);
	ao.agent_path = r.agent_path;
	if (!o->no_attach && rec_check_agent(&r)) {
		ct_filter_free(r.ctf);
		return JP_EXIT_USAGE;
	}
	/* the daemon writes segments to its store (record/interval.c), opened before sampling */
	if (o->cmd == JP_CMD_DAEMON ? rec_interval_open(&r) : rec_open_outputs(o, outs, &nouts)) {
		ct_filter_free(r.ctf);
		return JP_EXIT_OUTPUT;
	}

	targets_open(&r);
	sigemptyset(&sa.sa_mask); /* no SA_RESTART: poll must see EINTR */
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL)) {
		pr_err("sigaction: %s", strerror(errno));
		goto out_close;
	}
	/* the daemon's SIGHUP reads its --config again (record/interval.c) */
	if (r.iv && rec_interval_signals()) {
		pr_err("sigaction: %s", strerror(errno));
		goto out_close;
	}
	signal(SIGPIPE, SIG_IGN);

	r.model = rec_model_new();
	if (r.model) /* the samples' times: slot 0 is the recording's start */
		model__set_clock(r.model, r.t_start_ns, wall_ns() - (mono_ns() - r.t_start_ns));
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
	jo.native_threads = true;
	r.join = join__new(r.syms, r.model, &jo);
	if (!r.join) {
		pr_err("out of memory");
		goto out_free;
	}
	/* fds per JVM (hsperfdata, agent files): the hard limit where allowed, see fdlimit.h */
	pr_debug("open files limit: %lu", fdlimit_raise());
	r.att = attacher__new(&ao);
	r.pauses = pauses__new();
	r.procs = ptable__new(RETIRE_AFTER_NS);
	syms__defer_loads(r.syms, true); /* no file read in the ring callback: release_held */
	/* without inotify, new JVMs are still found through their samples */
	if (!o->npids && !(r.watch = hswatch__new()))
		pr_debug("not watching /tmp/hsperfdata_*: %s", strerror(errno));
	if (!r.att || !r.pauses || !r.procs || rec_subscribe_procs(&r)) {
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
	rec_setup_initial_jvms(&r);
	attacher__poll(r.att, mono_ns(), rec_on_agent_ready, &r);

	t0 = mono_ns();
	if (r.iv) { /* the daemon: slot 0 at its first segment's start */
		rec_interval_clock(&r);
	} else { /* slot 0 from the recording's t0, as its meta; BPF's counts' slots too */
		model__set_clock(r.model, t0, wall_ns());
		kernel_session__agg_clock(r.ks, t0);
	}
	/* blocked time from t0 on (intervals that ended before are not the recording's) */
	offcpu__set_window(r.offcpu, t0);
	if (o->wall) {
		/* one window for all of a thread's time: CPU, blocked and runnable */
		err = kernel_session__start_cpu(r.ks, t0);
		if (err)
			goto out_free;
		r.sampling_ns = mono_ns();
	}
	/* threads asleep since before t0: their time from t0, whenever they wake */
	if (r.offcpu) {
		int n = blocked_threads(&r, t0, 0, true);

		if (n < 0)
			pr_warn("off-CPU: the threads asleep at the start: %s", strerror(-n));
		else
			pr_debug("off-CPU: %d threads asleep at the start, their intervals opened", n);
	}
	deadline = o->duration_s ? t0 + (__u64)o->duration_s * 1000000000ull : ~0ull;
	pr_info("recording %s%s (%s)%s", o->npids ? "the given processes" : "all processes",
		r.ctf ? " in the given cgroups" : "", rec_events_shown(o),
		o->duration_s ? "" : "; Ctrl-C to stop");
	for (size_t i = 0; r.ctf && i < r.ctf->n; i++)
		pr_info("cgroup filter: %s%s (id %llu)", r.ctf->mount, r.ctf->paths[i],
			(unsigned long long)r.ctf->ids[i]);
	while (!rec_exiting && mono_ns() < deadline) {
		rec_handle_new_jvm_files(&r);
		/* young processes are looked at every round: short ones to catch them early */
		err = kernel_session__poll(r.ks, attacher__busy(r.att) ? POLL_ATTACH_MS
						 : r.q_fast	       ? POLL_YOUNG_MS
								       : POLL_MS);
		/* a signal: SIGINT and SIGTERM end the loop (rec_exiting), the daemon's SIGHUP not */
		if (err == -EINTR)
			continue;
		if (err < 0) {
			pr_err("reading the ring buffer: %s", strerror(-err));
			break;
		}
		err = release_held(&r);
		if (!err)
			err = join__poll(r.join, 0);
		if (err) {
			pr_err("joining samples: %s", strerror(-err));
			break;
		}
		apply_join_updates(&r);
		rec_take_exits(&r, mono_ns());
		join__heartbeat(r.join, mono_ns(), rec_wanted_agent_events(r.o), r.o->alloc_interval);
		rec_handle_new_pids(&r);
		rec_early_tick(&r, mono_ns());
		rec_drop_withdrawn_agents(&r);
		rec_retire_dead_jvms(&r, mono_ns());
		/* between rounds no symbol name is held: names went into the model as copies */
		syms__free_dropped(r.syms);
		attacher__poll(r.att, mono_ns(), rec_on_agent_ready, &r);
		pauses__poll(r.pauses, mono_ns(), false);
		rec_status_tick(&r, mono_ns(), t0, deadline);
		rec_interval_tick(&r, false);
		/* -v: what jprof's memory holds, by owner, once a minute (a long run's growth) */
		if (o->verbose && mono_ns() - r.mem_ns >= 60000000000ull) {
			if (r.mem_ns)
				rec_mem_report(&r);
			r.mem_ns = mono_ns();
		}
		/* as perf does: -p targets all gone end the recording, a round after (their last) */
		if (o->npids && targets_gone(&r)) {
			if (r.targets_gone++) {
				pr_info("the -p process%s exited: stopping",
					o->npids > 1 ? "es" : "");
				break;
			}
		}
	}
	log_status(NULL);
	t_stop = mono_ns();
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
		r.offcpu_open = blocked_threads(&r, t0, end, false);
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
	/* no sample after this: the counts BPF aggregated are all drained */
	(void)kernel_session__stop_sampling(r.ks);
	(void)kernel_session__drain(r.ks);
	(void)release_held(&r);
	t_drained = mono_ns();
	(void)join__flush(r.join);
	t_flushed = mono_ns();
	if (o->wall)
		rec_add_pause_band(&r);
	rec_interval_tick(&r, true); /* the daemon: the open interval, then the store closed */
	rec_interval_close(&r, where, sizeof(where));
	/* every frame is resolved: what resolved them goes before the writers need memory */
	rec_mem_report(&r);
	join__release(r.join);
	syms__release(r.syms);
	/* the BPF side is done too: its ring buffer's pages go */
	rec_kstats(&r, r.kstats);
	kernel_session__agg_stats(r.ks, &r.agg);
	r.cpu_event = kernel_session__cpu_event(r.ks);
	kernel_session__free(r.ks);
	r.ks = NULL;
#ifdef __GLIBC__
	(void)malloc_trim(0);
#endif

	if (r.sc && rec_write_syscall_table(&r))
		ret = JP_EXIT_OUTPUT;
	err = 0;
	t_released = mono_ns();
	if (o->cmd != JP_CMD_DAEMON) /* its segments are written: rec_interval_tick */
		err = rec_write_outputs(&r, t0, outs, nouts, where, sizeof(where));
	/* -v: where the stop's time went (issue 33: stop and write a 30k-sample recording) */
	pr_debug("stop: %.0f ms in all: pauses and the open intervals, the ring drained, held "
		 "samples joined %.0f ms; the agents' last traces %.0f ms; symbols and BPF released "
		 "%.0f ms; outputs written %.0f ms",
		 (mono_ns() - t_stop) / 1e6, (t_drained - t_stop) / 1e6,
		 (t_flushed - t_drained) / 1e6, (t_released - t_flushed) / 1e6,
		 (mono_ns() - t_released) / 1e6);
	rec_summary(&r, (mono_ns() - t0) / 1e9, where);
	if (err)
		ret = JP_EXIT_OUTPUT;
	else if (ret != JP_EXIT_OUTPUT)
		ret = JP_EXIT_OK;
out_free:
	rec_early_free(&r);
	attacher__free(r.att);
	pauses__free(r.pauses);
	hswatch__free(r.watch);
	syscalls__free(r.sc);
	offcpu__free(r.offcpu);
	kernel_session__free(r.ks);
	join__free(r.join);
	syms__free(r.syms);
	model__free(r.model);
	ptable__free(r.procs);
	free(r.held);
out_close:
	targets_close(&r);
	rec_interval_close(&r, where, sizeof(where));
	rec_abort_outputs(outs, nouts);
	cgroup_names__free(r.cgnames);
	ct_filter_free(r.ctf);
	return ret;
}

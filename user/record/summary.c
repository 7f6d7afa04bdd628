// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* summary.c: what a recording says: the status line while it runs, the report at its end */
#include "record/record_int.h"

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
void rec_mem_report(const struct rec *r)
{
	struct ptable_stats ps;
	struct join_stats js;
	struct model_mem mm;
	struct syms_stats ss;
	__u64 tb, te, pcl = 0, pcc = 0;

	model__mem(r->model, &mm);
	jvm_agent__all_tables(&tb, &te);
	for (size_t i = 0; i < r->nagents; i++) {
		struct jvm_agent_stats as;

		if (!r->agents[i].pid || !r->agents[i].a)
			continue;
		jvm_agent__stats(r->agents[i].a, &as);
		pcl += as.pc_lookups;
		pcc += as.pc_cached;
	}
	syms__stats(r->syms, &ss);
	ptable__stats(r->procs, &ps);
	join__stats(r->join, &js);
	pr_debug("memory: model %.1f MB (%zu stacks in %zu trie nodes, %zu rows, %zu labels (%llu "
		 "exited processes and %llu exec'd programs folded, %llu not: their pid taken "
		 "again or their name run again), %zu "
		 "locations, %zu functions, %zu strings; MB in rows %.1f, stacks %.1f, locations "
		 "%.1f, strings %.1f; times %.1f MB, %zu entries); symbols: ELF %.1f MB, perf maps %.1f MB, "
		 "%llu pids, %llu files (%llu unloaded, %llu read again); processes: %llu held now "
		 "(at most %llu), %llu exited and "
		 "%llu exec'd forgotten, %llu exits found by a sweep; agent dictionaries %.1f MB "
		 "(%u JVMs retired), their inline tables %.1f MB (%llu freed for room), pc lookups "
		 "of live JVMs %llu (%llu from their cache); samples held for their process's symbols %llu (%llu not: no "
		 "room), lookups that left a load for later %llu; walked CPU samples whose stack the "
		 "memo had %llu of %llu",
		 mm.bytes / 1048576.0, mm.stacks, mm.stack_nodes, mm.rows, mm.labels,
		 (unsigned long long)mm.folded, (unsigned long long)mm.folded_execs,
		 (unsigned long long)join__fold_skipped(r->join), mm.locs, mm.funcs, mm.strs,
		 mm.row_bytes / 1048576.0, mm.stack_bytes / 1048576.0, mm.loc_bytes / 1048576.0,
		 mm.str_bytes / 1048576.0, mm.time_bytes / 1048576.0, mm.time_entries,
		 ss.elf_bytes / 1048576.0, ss.perfmap_bytes / 1048576.0,
		 (unsigned long long)ss.pids, (unsigned long long)ss.dsos,
		 (unsigned long long)ss.dsos_unloaded, (unsigned long long)ss.dsos_reloaded,
		 (unsigned long long)ps.live, (unsigned long long)ps.peak,
		 (unsigned long long)ps.exited, (unsigned long long)ps.execed,
		 (unsigned long long)ps.swept, jvm_agent__all_bytes() / 1048576.0, r->retired,
		 tb / 1048576.0, (unsigned long long)te, (unsigned long long)pcl,
		 (unsigned long long)pcc,
		 (unsigned long long)r->held_samples, (unsigned long long)r->held_over,
		 (unsigned long long)ss.deferred, (unsigned long long)js.memo_hits,
		 (unsigned long long)js.memo_tries);
#ifdef __GLIBC__
	{
		/* what the owners above do not name: the rest of the heap, and its free part */
		struct mallinfo2 mi = mallinfo2();

		pr_debug("heap: %.1f MB in use (%.1f MB of it in mmap'd blocks), %.1f MB "
			 "free inside the heap (%.1f MB of it at its top)",
			 (mi.uordblks + mi.hblkhd) / 1048576.0, mi.hblkhd / 1048576.0,
			 mi.fordblks / 1048576.0, mi.keepcost / 1048576.0);
	}
#endif
}

/* the kernel side's counters: read now, or as kept when it was freed */
void rec_kstats(const struct rec *r, __u64 *st)
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
void rec_status_tick(struct rec *r, __u64 now, __u64 t0, __u64 deadline)
{
	__u64 st[JP_STAT_MAX];
	unsigned int jvms = 0, java = 0;
	char line[200], when[64];

	if (!log_is_tty() || now < r->status_ns + 1000000000ull)
		return;
	r->status_ns = now;
	rec_kstats(r, st);
	if (r->att)
		attacher__counts(r->att, &jvms, &java);
	if (deadline != ~0ull)
		snprintf(when, sizeof(when), "%.0f of %.0f s", (now - t0) / 1e9,
			 (deadline - t0) / 1e9);
	else
		snprintf(when, sizeof(when), "%.0f s (Ctrl-C to stop)", (now - t0) / 1e9);
	snprintf(line, sizeof(line),
		 "jprof: recording %s: %llu samples, %u JVMs (%u with Java "
		 "stacks), %llu lost",
		 when, (unsigned long long)st[JP_STAT_SAMPLES], jvms, java,
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

/* the recording's total of v: the model's, and the daemon's intervals written before it */
static __u64 rec_total(const struct rec *r, enum jp_value v)
{
	return model__total(r->model, v) + r->cut_totals[v];
}

/* -v, --aggregate: what BPF counted and what user space made of it; losses always */
static void rec_agg_report(const struct rec *r, const __u64 *st)
{
	struct ks_agg_stats a;

	if (r->ks)
		kernel_session__agg_stats(r->ks, &a);
	else
		a = r->agg;
	if (!a.on)
		return;
	pr_debug("aggregation: %llu samples counted in the kernel, %llu records of new stacks "
		 "(%llu kept, %llu only until their counts are in: no room), %llu other "
		 "records; %llu drains (%llu asked by BPF), %llu counts joined whole (%llu "
		 "samples); full records instead of a count: %llu (counts map full); %llu "
		 "marks cleared (ring full); %llu stacks let go for room, %llu kept (%.1f MB)",
		 (unsigned long long)st[JP_STAT_AGG_COUNTED],
		 (unsigned long long)st[JP_STAT_AGG_SENT], (unsigned long long)a.learnt,
		 (unsigned long long)a.not_kept,
		 (unsigned long long)(st[JP_STAT_SAMPLES] - st[JP_STAT_AGG_COUNTED] -
				      st[JP_STAT_AGG_SENT]),
		 (unsigned long long)a.drains, (unsigned long long)a.fill_asks,
		 (unsigned long long)a.counts, (unsigned long long)a.replayed,
		 (unsigned long long)st[JP_STAT_AGG_FULL],
		 (unsigned long long)st[JP_STAT_AGG_UNMARK], (unsigned long long)a.retired,
		 (unsigned long long)a.records, a.record_bytes / 1048576.0);
	if (a.lost_unknown || a.replayed + a.lost_unknown != st[JP_STAT_AGG_COUNTED])
		fprintf(stderr,
			"jprof: aggregation: %llu samples counted in the kernel whose stack was "
			"never learnt, %llu not drained\n",
			(unsigned long long)a.lost_unknown,
			(unsigned long long)(st[JP_STAT_AGG_COUNTED] > a.replayed + a.lost_unknown
						     ? st[JP_STAT_AGG_COUNTED] - a.replayed -
							       a.lost_unknown
						     : 0));
}

void rec_summary(struct rec *r, double secs, const char *where)
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

	rec_kstats(r, st);
	join__stats(r->join, &js);
	join__report(r->join, out, v);
	rec_gone_report(r, out, v);
	rec_early_report(r, out, v);
	rec_watch_report(r, out);
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
			rec_total(r, JP_VAL_OFFCPU_NS) / 1e9, open,
			(unsigned long long)st[JP_STAT_OFFCPU_LOST],
			(unsigned long long)st[JP_STAT_SWITCH_MISSED]);
	if (v && (st[JP_STAT_OFFCPU_JWALK] || st[JP_STAT_OFFCPU_NOWALK] ||
		  st[JP_STAT_OFFCPU_WALK_NOJAVA] || st[JP_STAT_OFFCPU_WALK_NOTHREAD] ||
		  st[JP_STAT_OFFCPU_WALK_UNNAMED] || st[JP_STAT_OFFCPU_WALK_FAILED]))
		fprintf(out,
			"jprof: off-CPU Java stacks: %llu walked in BPF at the syscall's return "
			"(%llu signalled all the same for a park's blocker), %llu of threads with "
			"no "
			"Java frame (not signalled), %llu walks that could not give the stack (no "
			"JavaThread known %llu, a method not known %llu, other %llu: then "
			"signalled; %llu threads found at the end of their JVM's thread list), "
			"%llu "
			"signalled without a walk (no layout); %llu intervals out before their "
			"syscall returned\n",
			(unsigned long long)st[JP_STAT_OFFCPU_JWALK],
			(unsigned long long)st[JP_STAT_OFFCPU_PARK_SIG],
			(unsigned long long)st[JP_STAT_OFFCPU_WALK_NOJAVA],
			(unsigned long long)(st[JP_STAT_OFFCPU_WALK_NOTHREAD] +
					     st[JP_STAT_OFFCPU_WALK_UNNAMED] +
					     st[JP_STAT_OFFCPU_WALK_FAILED]),
			(unsigned long long)st[JP_STAT_OFFCPU_WALK_NOTHREAD],
			(unsigned long long)st[JP_STAT_OFFCPU_WALK_UNNAMED],
			(unsigned long long)st[JP_STAT_OFFCPU_WALK_FAILED],
			(unsigned long long)st[JP_STAT_OFFCPU_LIST_TAIL],
			(unsigned long long)st[JP_STAT_OFFCPU_NOWALK],
			(unsigned long long)st[JP_STAT_OFFCPU_HELD_EARLY]);
	if (r->o->events & (1u << JP_EV_SYSCALL))
		fprintf(out, "jprof: slow syscalls: %llu calls, %.3f s%s\n",
			(unsigned long long)rec_total(r, JP_VAL_SYSCALL_CALLS),
			rec_total(r, JP_VAL_SYSCALL_NS) / 1e9,
			r->o->events & (1u << JP_EV_OFFCPU)
				? " (their blocked time is in the off-CPU time, counted once there)"
				: "");
	if (r->o->events & (1u << JP_EV_CPU) && v)
		fprintf(out,
			"jprof: CPU time: %.3f s on CPU (%s), %llu thread exits%s carried their "
			"time "
			"after the last sample, %llu threads new in the recording, %llu samples "
			"weighed one period (thread's earlier runtime unknown), %llu samples in a "
			"thread's exit after its tail weighed nothing\n",
			rec_total(r, JP_VAL_CPU_NS) / 1e9,
			r->o->wall ? "switch timestamps" : "scheduler runtime",
			(unsigned long long)st[JP_STAT_CPU_TAIL] + (__u64)r->wall_tails,
			r->o->wall ? " and threads alive at the end" : "",
			(unsigned long long)st[JP_STAT_CPU_NEW],
			(unsigned long long)st[JP_STAT_CPU_NOPREV],
			(unsigned long long)st[JP_STAT_CPU_EXITED]);
	if (r->o->wall)
		fprintf(out,
			"jprof: wall: %.6f s recorded; per thread, on-CPU + runnable + blocked "
			"time "
			"add up to it for threads that lived through it; JVM pauses beside "
			"them (hsperfdata): [GC pause] %.6f s, [safepoint] %.6f s\n",
			r->window_ns / 1e9, r->band_gc_ns / 1e9, r->band_safepoint_ns / 1e9);
	if (r->o->agent_events & JP_AGENT_EV_LOCK)
		fprintf(out,
			"jprof: monitor contention: %llu waits, %.3f s waited (of them "
			"java.util.concurrent parks: %llu, %.3f s; parks shorter than --min-block "
			"%u us are not seen)\n",
			(unsigned long long)rec_total(r, JP_VAL_CONTENTIONS),
			rec_total(r, JP_VAL_DELAY_NS) / 1e9, (unsigned long long)js.parks,
			js.park_ns / 1e9, r->o->min_block_us);
	if (js.whole_threads)
		fprintf(out,
			"jprof: %llu JVM threads blocked all recording without a Java stack (%.3f "
			"s): "
			"one \"" JOIN_WHOLE_FRAME "\" frame each\n",
			(unsigned long long)js.whole_threads, js.whole_ns / 1e9);
	if (js.idle_waits)
		fprintf(out,
			"jprof: %.0f ms of idle pool waits left out (%llu intervals of workers "
			"waiting for a task or an event loop's select); --idle includes them\n",
			js.idle_ns / 1e6, (unsigned long long)js.idle_waits);
	if (r->o->agent_events & (JP_AGENT_EV_ALLOC | JP_AGENT_EV_LIVE))
		fprintf(out,
			"jprof: allocations: %llu bytes, %llu objects (estimated from samples)\n",
			(unsigned long long)rec_total(r, JP_VAL_ALLOC_SPACE),
			(unsigned long long)rec_total(r, JP_VAL_ALLOC_OBJECTS));
	if (r->o->agent_events & JP_AGENT_EV_LIVE)
		fprintf(out, "jprof: live at the end: %llu bytes, %llu objects (estimated)\n",
			(unsigned long long)rec_total(r, JP_VAL_INUSE_SPACE),
			(unsigned long long)rec_total(r, JP_VAL_INUSE_OBJECTS));
	if (v && (st[JP_STAT_NO_HANDLER] || st[JP_STAT_JVM_EXEC] || st[JP_STAT_JVM_EXIT] ||
		  r->withdrawn))
		fprintf(out,
			"jprof: %llu stack requests not sent (the process's handler for the signal "
			"was not, or was being changed from, the agent's: exec or signal reset); "
			"JVMs unregistered: %llu at exec, %llu at exit, %u withdrawn by the "
			"agent\n",
			(unsigned long long)st[JP_STAT_NO_HANDLER],
			(unsigned long long)st[JP_STAT_JVM_EXEC],
			(unsigned long long)st[JP_STAT_JVM_EXIT], r->withdrawn);
	if ((r->o->events & (1u << JP_EV_CPU)) && r->freq_now && r->freq_now != r->o->freq_hz)
		snprintf(what, sizeof(what), "%s, %u Hz then %u Hz (SIGHUP), %llu idle not shown, ",
			 r->cpu_event, r->o->freq_hz, r->freq_now,
			 (unsigned long long)st[JP_STAT_IDLE]);
	else if (r->o->events & (1u << JP_EV_CPU))
		snprintf(what, sizeof(what), "%s, %u Hz, %llu idle not shown, ", r->cpu_event,
			 r->o->freq_hz, (unsigned long long)st[JP_STAT_IDLE]);
	else
		what[0] = '\0';
	if (v && (r->o->npids || r->ctf) && (r->o->events & (1u << JP_EV_CPU)))
		fprintf(out,
			"jprof: %llu CPU samples of other processes left out in the kernel (%s)\n",
			(unsigned long long)st[JP_STAT_FILTERED],
			r->ctf ? (r->o->npids ? "-p, --cgroup/--container" : "--cgroup/--container")
			       : "-p");
	if (js.model_drops)
		fprintf(out,
			"jprof: %llu samples dropped: the profile reached its budget (%llu MiB); "
			"the JVM lines say whose\n",
			(unsigned long long)js.model_drops,
			(unsigned long long)(MODEL_MAX_BYTES >> 20));
	/* the samples' times coarser than 100 ms (their budget), or lost: said always */
	{
		struct model_time mt;

		model__time_info(r->model, &mt);
		if (mt.lost)
			fprintf(out, "jprof: the samples' times were dropped: one entry a row did "
				     "not fit their budget (the totals are whole)\n");
		else if (mt.coarsened)
			fprintf(out, "jprof: the samples' times are in %u ms slots (coarsened %u "
				     "times to fit their budget; the totals are whole)\n",
				mt.res_ms, mt.coarsened);
	}
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
		(unsigned long long)(r->o->events & (1u << JP_EV_CPU)
					     ? rec_total(r, JP_VAL_CPU_SAMPLES)
					     : js.samples),
		r->o->events == 1u << JP_EV_CPU || !(r->o->events & (1u << JP_EV_CPU)) ? ""
										       : "CPU ",
		what, secs, (unsigned long long)st[JP_STAT_RB_DROPS], agent_lost,
		(unsigned long long)r->processes, jvms, jvms_java, where);
	if (out != stderr) {
		fclose(out);
		print_escaped(text, len);
		free(text);
	}
	syms_report(r);
	pr_debug(
		"bpf: %llu samples, %llu kernel-stack errors, %llu user-stack errors, %llu signals "
		"(%llu busy, %llu failed, %llu not sent: one still queued, %llu not sent: not a "
		"Java thread), %llu unmatched traces",
		(unsigned long long)st[JP_STAT_SAMPLES], (unsigned long long)st[JP_STAT_KSTACK_ERR],
		(unsigned long long)st[JP_STAT_USTACK_ERR],
		(unsigned long long)st[JP_STAT_SIG_SENT], (unsigned long long)st[JP_STAT_SIG_BUSY],
		(unsigned long long)st[JP_STAT_SIG_ERR], (unsigned long long)st[JP_STAT_SIG_QUEUED],
		(unsigned long long)st[JP_STAT_NATIVE_SKIP],
		(unsigned long long)js.unmatched_traces);
	rec_agg_report(r, st);
	/* exits and execs not told or not kept: those processes keep their symbols to the end */
	if (st[JP_STAT_EXIT_LOST] || r->exited_dropped)
		fprintf(stderr,
			"jprof: %llu process exits or execs not told (ring full) and %llu not "
			"kept: "
			"what jprof holds of those processes stays until the end\n",
			(unsigned long long)st[JP_STAT_EXIT_LOST],
			(unsigned long long)r->exited_dropped);
}

__u64 rec_js_samples(const struct rec *r)
{
	struct join_stats js;

	join__stats(r->join, &js);
	return js.samples;
}

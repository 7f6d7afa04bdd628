// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* report.c: the join's figures (join__stats) and its end-of-run report per JVM */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "join/join_int.h"
#include "clock.h"
#include "log.h"
#include "opts.h"
#include "model/spread.h"
#include "kernel/syscalls.h"
#include "util/cgroup.h"
#include "util/hashkey.h"

static bool ent_agent_stats(const struct jvm_ent *e, struct jvm_agent_stats *as);

void join__stats(const struct join *j, struct join_stats *ret)
{
	struct jvm_agent_stats as;

	*ret = j->st;
	ret->agent_lost = j->folded.agent_lost;
	for (size_t i = 0; i < j->njvms; i++)
		if (ent_agent_stats(j->jvms[i], &as))
			ret->agent_lost += as.ring_full + as.events_dropped;
}

/* appends ", N what" to a report clause when n is not zero */
static size_t cat_count(char *buf, size_t size, size_t w, __u64 n, const char *what)
{
	if (n && w < size)
		w += snprintf(buf + w, size - w, "%s%llu %s", w ? ", " : "", (unsigned long long)n,
			      what);
	return w;
}

/* the agent's counters: live from its ring, or as kept when it was let go; false: none */
static bool ent_agent_stats(const struct jvm_ent *e, struct jvm_agent_stats *as)
{
	memset(as, 0, sizeof(*as));
	if (e->a)
		jvm_agent__stats(e->a, as);
	else if (e->final_kept)
		*as = e->final;
	return e->a || e->final_kept;
}

/* what the agent itself dropped or refused, and what the join let go: only non-zero */
static void report_losses(const struct jvm_ent *e, const struct jvm_agent_stats *as, bool have,
			  char *buf, size_t size)
{
	char a[256] = "", jn[384] = "", fb[320] = "";
	size_t w = 0;

	if (have) {
		w = cat_count(a, sizeof(a), w, as->ring_full, "ring full");
		w = cat_count(a, sizeof(a), w, as->busy, "busy");
		w = cat_count(a, sizeof(a), w, as->faults, "faults");
		w = cat_count(a, sizeof(a), w, as->threads_full, "thread table full");
		w = cat_count(a, sizeof(a), w, as->not_java_thread, "not a Java thread");
		w = cat_count(a, sizeof(a), w, as->malformed, "malformed");
		w = cat_count(a, sizeof(a), w, as->over_budget, "dictionary entries over budget");
		w = cat_count(a, sizeof(a), w, as->events_dropped, "events dropped (ring full)");
	}
	w = cat_count(jn, sizeof(jn), 0, e->unmatched, "traces without sample");
	w = cat_count(jn, sizeof(jn), w, e->ev_orphan, "monitor waits without their start");
	w = cat_count(jn, sizeof(jn), w, e->ev_over_budget, "events over budget");
	w = cat_count(jn, sizeof(jn), w, e->trace_drops, "traces over budget");
	/* events -e did not ask for: skipped unread by the ring reader, or here by kind */
	w = cat_count(jn, sizeof(jn), w, e->ev_skipped + (have ? as->events_unread : 0),
		      "events not asked for (skipped)");
	w = cat_count(jn, sizeof(jn), w, e->time_drops, "stacks cut short (time budget)");
	w = cat_count(jn, sizeof(jn), w, e->unread_end >> 10,
		      "KiB of agent records left unread (time budget)");
	w = cat_count(jn, sizeof(jn), w, e->model_drops, "samples dropped (model budget)");
	cat_count(jn, sizeof(jn), w, e->share_drops,
		  "samples of new stacks dropped (the JVM's stack budget)");
	/* the agent's own figures (all its traces, matched or not); its time per request/try */
	if (as->handler_ns && as->traces)
		w = (size_t)snprintf(
			fb, sizeof(fb), "; stack requests: %llu, %.1f us each in the agent",
			(unsigned long long)as->traces,
			(double)as->handler_ns / 1000.0 /
				(double)(as->handler_timed ? as->handler_timed : as->traces));
	else
		w = 0;
	if (as->fallback_tried && w < sizeof(fb))
		w += (size_t)snprintf(
			fb + w, sizeof(fb) - w,
			"; fallback walker: %llu of %llu AGCT failures recovered, %.1f us each",
			(unsigned long long)as->fallback_ok, (unsigned long long)as->fallback_tried,
			(double)as->fallback_ns / 1000.0 / (double)as->fallback_tried);
	if (as->stub_tried && w < sizeof(fb))
		snprintf(fb + w, sizeof(fb) - w,
			 " (in C1/C2 runtime stubs: %llu, of which %llu walked from the caller, "
			 "%llu callers refused)",
			 (unsigned long long)as->stub_tried, (unsigned long long)as->stub_ok,
			 (unsigned long long)as->stub_gaveup);
	snprintf(buf, size, "%s%s%s%s%s", a[0] ? "; agent: " : "", a, jn[0] ? "; join: " : "", jn,
		 fb);
}

/* "Class_[a] <- method": the allocated class and the method that allocated it */
static void site_name(const struct join *j, jp_id stack, char *buf, size_t size)
{
	size_t n = 0;
	const jp_id *l = model__get_stack(j->model, stack, &n);
	const struct jp_location *a = n > 0 ? model__get_location(j->model, l[0]) : NULL;
	const struct jp_location *b = n > 1 ? model__get_location(j->model, l[1]) : NULL;
	const struct jp_func *fa = a ? model__get_func(j->model, a->func) : NULL;
	const struct jp_func *fb = b ? model__get_func(j->model, b->func) : NULL;

	snprintf(buf, size, "%s <- %s", fa ? fa->name : "?", fb ? fb->name : "?");
}

/* -e live: how long the sampled objects that were freed lived, per allocation site */
static void report_ages(const struct join *j, FILE *f)
{
	static const char *const hdr[AGE_BUCKETS] = {"<1ms", "<10ms", "<100ms",
						     "<1s",  "<10s",  ">=10s"};
	char name[256];
	bool other = false;

	if (!j->nages)
		return;
	fprintf(f, "jprof: age at death of freed sampled objects, per allocation site:\n");
	fprintf(f, "jprof: %9s %9s %9s %9s %9s %9s  site\n", hdr[0], hdr[1], hdr[2], hdr[3], hdr[4],
		hdr[5]);
	for (size_t i = 0; i <= j->nages; i++) {
		const __u64 *n = i < j->nages ? j->ages[i].n : j->ages_other;

		if (i == j->nages) {
			for (int b = 0; b < AGE_BUCKETS; b++)
				other |= n[b] != 0;
			if (!other)
				break;
			snprintf(name, sizeof(name), "(other sites)");
		} else {
			site_name(j, j->ages[i].stack, name, sizeof(name));
		}
		fprintf(f, "jprof: %9llu %9llu %9llu %9llu %9llu %9llu  %s\n",
			(unsigned long long)n[0], (unsigned long long)n[1],
			(unsigned long long)n[2], (unsigned long long)n[3],
			(unsigned long long)n[4], (unsigned long long)n[5], name);
	}
}

/*
 * "; CPU samples of Java threads: ..." when they are not all the JVM's Java samples
 * (off-CPU, syscalls) or some came before its agent was connected: the steady-state
 * figure is the one after the connection.
 */
static void report_cpu(const struct jvm_ent *e, char *buf, size_t size)
{
	__u64 after = e->cpu_java - e->cpu_before;
	int n = 0;

	buf[0] = '\0';
	if (!e->cpu_java || (e->cpu_java == e->java_samples && !e->cpu_before && !e->followed))
		return;
	n = snprintf(buf, size, "; CPU samples of Java threads: %llu of %llu complete (%.1f%%)",
		     (unsigned long long)e->cpu_complete, (unsigned long long)e->cpu_java,
		     100.0 * e->cpu_complete / e->cpu_java);
	if (e->cpu_before && after && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, ", %.1f%% of the %llu after the agent connected",
			      100.0 * e->cpu_complete / after, (unsigned long long)after);
	if (e->followed && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - n,
			 "; %llu samples came while a stack request was pending or handled and "
			 "took its outcome",
			 (unsigned long long)e->followed);
}

/* JP_RING_F_EV_* asked of every agent that e's agent says it does not send */
static __u32 missing_events(const struct join *j, const struct jvm_agent_stats *as, bool have)
{
	__u32 want = (j->o.agent_events & JP_AGENT_EV_LOCK ? JP_RING_F_EV_LOCK : 0) |
		     (j->o.agent_events & JP_AGENT_EV_ALLOC ? JP_RING_F_EV_ALLOC : 0) |
		     (j->o.agent_events & JP_AGENT_EV_LIVE ? JP_RING_F_EV_LIVE : 0);

	if (!want || !have || !(as->ring_flags & JP_RING_F_EV_KNOWN))
		return 0;
	return want & ~as->ring_flags;
}

__u32 join__missing_events(const struct join *j, __u32 pid, bool attached_by_jprof)
{
	const struct jvm_ent *e = jn_find_jvm(j, pid);
	struct jvm_agent_stats as;
	__u32 miss = e ? missing_events(j, &as, ent_agent_stats(e, &as)) : 0;

	return miss && (!attached_by_jprof || as.ring_flags & JP_RING_F_ATTACHED) ? miss : 0;
}

/*
 * An agent is loaded once per JVM and keeps the events it was started with: one loaded at
 * the JVM's start, or by another jprof build, may lack what this recording asks (an agent
 * an earlier jprof of this build loaded is loaded again and adds them). Said, not left
 * to look like a JVM without contention or allocations.
 */
static void report_missing_events(const struct join *j, const struct jvm_ent *e,
				  const struct jvm_agent_stats *as, bool have, FILE *f)
{
	char names[32] = "";
	__u32 miss = missing_events(j, as, have);

	if (!miss)
		return;
	snprintf(names, sizeof(names), "%s%s%s", miss & JP_RING_F_EV_LOCK ? ",lock" : "",
		 miss & JP_RING_F_EV_ALLOC ? ",alloc" : "",
		 miss & JP_RING_F_EV_LIVE ? ",live" : "");
	fprintf(f,
		"jprof: JVM %u: its agent runs without the %s events asked (loaded %s with other "
		"options, or the JVM lacks the capability): none come from this JVM; a JVM "
		"started with -agentpath:<libjprofagent.so>=%s has them\n",
		e->pid, names + 1,
		as->ring_flags & JP_RING_F_ATTACHED ? "by another jprof" : "at the JVM's start",
		names + 1);
}

/* --java-walk shadow: how BPF's walks ended, and how they compare with the agent's */
static void report_jwalk(const struct jvm_ent *e, FILE *f)
{
	struct jwalk_stats st;
	const char *sep = "";

	if (e->early_held || e->early_over)
		fprintf(f,
			"jprof: JVM %u: walked in BPF before its agent: %llu samples held, %llu named "
			"by the agent's dictionary, %llu named from the JVM's memory, %llu shown "
			"with " JOIN_UNKNOWN_JAVA " frames, %llu dropped (the agent's layout "
			"differed), %llu not held (budget)\n",
			e->pid, (unsigned long long)e->early_held, (unsigned long long)e->early_named,
			(unsigned long long)e->early_mem, (unsigned long long)e->early_unknown,
			(unsigned long long)e->early_dropped, (unsigned long long)e->early_over);
	if (e->vn || e->vn_had) {
		struct vmnames_stats vs = e->vn_st;

		if (e->vn)
			vmnames__stats(e->vn, &vs);
		fprintf(f,
			"jprof: JVM %u: method names read from its memory: %llu methods, %llu "
			"could not be read, %llu over budget; compiled frames' inlining: %llu "
			"chains read (%llu inlined frames), %llu with no scope at the pc, %llu not "
			"readable or not checking out, %llu over budget (%llu bytes, %.1f ms); %llu "
			"reads, %llu bytes\n",
			e->pid, (unsigned long long)vs.methods, (unsigned long long)vs.failed,
			(unsigned long long)vs.over_budget, (unsigned long long)vs.chains,
			(unsigned long long)vs.inlined, (unsigned long long)vs.dbg_noscope,
			(unsigned long long)vs.dbg_failed,
			(unsigned long long)vs.dbg_over, (unsigned long long)vs.dbg_bytes,
			(double)vs.dbg_ns / 1e6, (unsigned long long)vs.reads,
			(unsigned long long)vs.bytes_read);
		if (vs.cmp || vs.cmp_unnamed)
			fprintf(f,
				"jprof: JVM %u: names from its memory against the agent's: %llu "
				"stacks compared, %llu identical (%.2f%%), %llu identical but for "
				"the inlining at the interrupted pc, %llu differ, %llu not named; "
				"compiled frames without their inlined ones: %llu identical "
				"(%.2f%%); compiled frames against the agent's code records: %llu, "
				"%llu the same (%.2f%%); stacks whose compiled frames all are: %llu "
				"(%.2f%%)\n",
				e->pid, (unsigned long long)vs.cmp, (unsigned long long)vs.cmp_same,
				vs.cmp ? 100.0 * (double)vs.cmp_same / (double)vs.cmp : 0.0,
				(unsigned long long)vs.cmp_leaf, (unsigned long long)vs.cmp_differ,
				(unsigned long long)vs.cmp_unnamed,
				(unsigned long long)vs.cmp_roots_same,
				vs.cmp ? 100.0 * (double)vs.cmp_roots_same / (double)vs.cmp : 0.0,
				(unsigned long long)vs.cmp_frames,
				(unsigned long long)vs.cmp_frames_same,
				vs.cmp_frames ? 100.0 * (double)vs.cmp_frames_same /
							(double)vs.cmp_frames
					      : 0.0,
				(unsigned long long)vs.cmp_rec_same,
				vs.cmp ? 100.0 * (double)vs.cmp_rec_same / (double)vs.cmp : 0.0);
	}
	if (e->retired)
		st = e->jw_st;
	else
		jwalk__stats(e->jw, &st);
	if (!st.walked)
		return;
	fprintf(f, "jprof: JVM %u: Java walk in BPF: %llu samples (", e->pid,
		(unsigned long long)st.walked);
	for (int i = JW_ENDS - 1; i >= 0; i--) {
		if (!st.ends[i])
			continue;
		fprintf(f, "%s%llu %s", sep, (unsigned long long)st.ends[i], jwalk_end_str(i));
		sep = ", ";
	}
	fprintf(f,
		"); %llu compared with the agent's: %llu agree (%.1f%%; %llu named an "
		"interpreted method first), %llu agree but for the inlining at the "
		"interrupted pc or a callee in its prologue (%llu: the agent drops it), %llu "
		"differ (%llu in length only); not compared: "
		"%llu without the agent's frames, %llu with code not named yet; %llu methods "
		"learned\n",
		(unsigned long long)st.compared, (unsigned long long)st.agree,
		st.compared ? 100.0 * (double)st.agree / (double)st.compared : 0.0,
		(unsigned long long)st.learned,
		(unsigned long long)(st.leaf_inlining + st.prologue),
		(unsigned long long)st.prologue, (unsigned long long)st.differ, (unsigned long long)st.differ_length,
		(unsigned long long)st.no_trace, (unsigned long long)st.unnamed,
		(unsigned long long)st.methods);
	if (st.stub_fp)
		fprintf(f,
			"jprof: JVM %u: of the walks compared, past a stub's rbp frame: %llu, %llu "
			"of them differ\n",
			e->pid, (unsigned long long)st.stub_fp, (unsigned long long)st.stub_fp_differ);
	if (st.mh)
		fprintf(f,
			"jprof: JVM %u: of the walks compared, past a method handle intrinsic: %llu, "
			"%llu of them differ\n",
			e->pid, (unsigned long long)st.mh, (unsigned long long)st.mh_differ);
	if (st.c2i)
		fprintf(f,
			"jprof: JVM %u: of the walks compared, past a C2I adapter at the top: "
			"%llu, "
			"%llu of them differ\n",
			e->pid, (unsigned long long)st.c2i, (unsigned long long)st.c2i_differ);
	/* a stack the memo had was named from the same walk before */
	if (st.named || e->memo_named || st.unlearned)
		fprintf(f,
			"jprof: JVM %u: Java stacks named from BPF's walk without a signal: %llu; "
			"%llu methods forgotten when a check disagreed\n",
			e->pid, (unsigned long long)(st.named + e->memo_named),
			(unsigned long long)st.unlearned);
}

/*
 * Notes JVMs share (an agent attached late: the same advice for each) in one line, with
 * their pids: a host's dozen JVMs made a dozen identical lines
 */
static void report_notes(const struct join *j, FILE *f)
{
	for (size_t i = 0; i < j->njvms; i++) {
		const char *note = j->jvms[i]->note;
		size_t n = 0, w = 0;
		char pids[128] = "";
		bool first = true;

		if (!note[0])
			continue;
		for (size_t k = 0; k < j->njvms && first; k++)
			first = k >= i || strcmp(j->jvms[k]->note, note);
		if (!first)
			continue; /* told with the first JVM of this note */
		for (size_t k = i; k < j->njvms; k++) {
			if (strcmp(j->jvms[k]->note, note))
				continue;
			if (n++ < 8 && w < sizeof(pids))
				w += (size_t)snprintf(pids + w, sizeof(pids) - w, "%s%u",
						      w ? ", " : "", j->jvms[k]->pid);
		}
		fprintf(f, "jprof: JVM%s %s%s: %s\n", n > 1 ? "s" : "", pids, n > 8 ? ", ..." : "",
			note);
	}
}

void join__report(const struct join *j, FILE *f, bool verbose)
{
	const struct jvm_fold *fo = &j->folded;

	report_ages(j, f);
	if (!verbose)
		report_notes(j, f);
	if (fo->jvms)
		fprintf(f,
			"jprof: %llu more JVMs that exited (not listed one by one): %llu samples, "
			"%llu in Java threads of which %llu with complete Java stacks (%.1f%%), "
			"%llu "
			"in JVM-internal threads\n",
			(unsigned long long)fo->jvms, (unsigned long long)fo->samples,
			(unsigned long long)fo->java_samples, (unsigned long long)fo->complete,
			fo->java_samples ? 100.0 * fo->complete / fo->java_samples : 0.0,
			(unsigned long long)fo->internal);
	for (size_t i = 0; i < j->njvms; i++) {
		const struct jvm_ent *e = j->jvms[i];
		char why[1024], loss[1024], cpu[256];
		size_t w = 0;
		/* the agent's counters, read once (a pread of its ring header) for all lines */
		struct jvm_agent_stats as;
		bool have = ent_agent_stats(e, &as);

		why[0] = '\0';
		for (int r = 0; r < MISS_MAX; r++) {
			if (r == MISS_AGCT) {
				for (int c = 0; c < 12; c++)
					if (e->agct[c])
						w += snprintf(why + w,
							      w < sizeof(why) ? sizeof(why) - w : 0,
							      "%s%llu %s", w ? ", " : "",
							      (unsigned long long)e->agct[c],
							      java_trace_err_str(-c));
				continue;
			}
			if (e->miss[r])
				w += snprintf(why + w, w < sizeof(why) ? sizeof(why) - w : 0,
					      "%s%llu %s", w ? ", " : "",
					      (unsigned long long)e->miss[r], join_miss_names[r]);
		}
		report_losses(e, &as, have, loss, sizeof(loss));
		report_cpu(e, cpu, sizeof(cpu));
		fprintf(f,
			"jprof: JVM %u (%s): %llu samples, %llu in Java threads of which %llu with "
			"complete Java stacks (%.1f%%), %llu in JVM-internal threads (%llu not "
			"asked again)%s%s%s%s\n",
			e->pid, e->name[0] ? e->name : e->comm, (unsigned long long)e->samples,
			(unsigned long long)e->java_samples, (unsigned long long)e->complete,
			e->java_samples ? 100.0 * e->complete / e->java_samples : 0.0,
			(unsigned long long)e->internal, (unsigned long long)e->internal_known, cpu,
			why[0] ? "; missing: " : "", why, loss);
		report_missing_events(j, e, &as, have, f);
		/* the rest is for -v: how the stacks were had, what the agent's events cost */
		if (!verbose)
			continue;
		if (e->note[0])
			fprintf(f, "jprof: JVM %u: %s\n", e->pid, e->note);
		report_jwalk(e, f);
		if (e->ev_allocs || e->ev_frees || e->ev_locks || e->ev_lock_short || e->parks ||
		    e->park_short || e->ev_blocked_at_attach) {
			fprintf(f,
				"jprof: JVM %u: agent events: %llu allocation samples, %llu frees, "
				"%llu monitor waits (%llu under --lock-threshold; %llu of threads "
				"already blocked when the agent came, timed from then); %llu "
				"blocked or "
				"spinning samples got the Java stack of their monitor wait; %llu "
				"parks "
				"(%llu under --lock-threshold; %llu with their blocker's class)",
				e->pid, (unsigned long long)e->ev_allocs,
				(unsigned long long)e->ev_frees, (unsigned long long)e->ev_locks,
				(unsigned long long)e->ev_lock_short,
				(unsigned long long)e->ev_blocked_at_attach,
				(unsigned long long)e->monitor_joined, (unsigned long long)e->parks,
				(unsigned long long)e->park_short,
				(unsigned long long)e->park_blocker);
			/* what the agent made of the parks it saw (its reads of Thread.parkBlocker) */
			if (have && e->parks && !(as.ring_flags & JP_RING_F_BLOCKER))
				fprintf(f,
					"; its agent names no blockers (an agent before it, "
					"or a JVM it cannot read them in: ZGC, Shenandoah, compact "
					"headers)");
			else if (have && e->parks)
				fprintf(f,
					"; park traces the agent read: %llu named, %llu without "
					"a blocker, %llu not named (a GC pause, a failed read), "
					"%llu "
					"names refused here",
					(unsigned long long)as.blocker_named,
					(unsigned long long)as.blocker_none,
					(unsigned long long)as.blocker_failed,
					(unsigned long long)as.blocker_bad);
			/* the callbacks' own time, in the JVM's threads: the agent's cost of them */
			if (have && as.events_ns && as.events + as.events_dropped)
				fprintf(f, "; callbacks %.1f us each, %.1f ms in all",
					(double)as.events_ns / 1000.0 /
						(double)(as.events + as.events_dropped),
					(double)as.events_ns / 1e6);
			fputc('\n', f);
		}
	}
}

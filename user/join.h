/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * join.h: turns kernel samples (+ the agents' Java traces for JVM threads) into
 * stacks of typed frames and adds them to the profile. See docs/DESIGN.md "The seams".
 */
#ifndef JPROF_JOIN_H
#define JPROF_JOIN_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

#include "jprof.h"

struct syms;
struct model;
struct jvm_agent;
struct cgroup_names;

struct join_opts {
	bool mark_offcpu; /* leaf frame "[off-cpu]" on blocked time (several events in one graph) */
	/* budgets in bytes (0: the defaults in join.c); what exceeds them is counted */
	size_t pend_budget_jvm;	       /* samples waiting for their trace, per JVM */
	size_t pend_budget;	       /* ... in all JVMs */
	size_t trace_budget_jvm;       /* traces waiting for their sample, per JVM */
	size_t trace_budget;	       /* ... in all JVMs */
	size_t early_budget_jvm;       /* samples BPF walked before the agent, held, per JVM */
	size_t early_budget;	       /* ... in all JVMs */
	unsigned int traces_per_round; /* agent records per JVM per join__poll (0: default) */
	struct cgroup_names
		*cgroups;	 /* names the container label by cgroup id; NULL: "" (borrowed) */
	__u64 lock_threshold_ns; /* -e lock: shorter monitor waits are only counted */
	bool parks;		/* -e lock: blocked intervals in LockSupport.park are contentions */
	bool offcpu_parks_only; /* off-CPU runs for the parks alone: its own time is not added */
	/* -e offcpu: a JVM thread blocked all recording without a Java stack: JOIN_WHOLE_FRAME */
	bool collapse_whole;
	bool idle_out; /* blocked time of idle pool workers (join/idle.h) is left out, counted */
	__u32 agent_events;	/* JP_AGENT_EV_* asked of every agent: one without them is named */
	/*
	 * JP_AGENT_EV_* whose records are joined, the rest skipped and counted: agent_events,
	 * and lock under -e offcpu or syscalls (a monitor wait's Java stack for blocked time)
	 */
	__u32 joined_events;
	/*
	 * JOIN_UP_NATIVE_THREAD updates are made (a JVM thread's agent answered that it is
	 * not a Java thread: its stack requests can stop). false: they go on.
	 */
	bool native_threads;
	/*
	 * The join's time bounds (a poll round, the end's flush, a late record's Java frames)
	 * times this; 0 or 1: as they are. For tests that must not depend on being scheduled
	 * within them on a loaded host: what a bound drops is counted either way
	 */
	unsigned int time_scale;
	/*
	 * --java-walk shadow or check: a sample BPF walked and the agent traced too has its
	 * frames named from the JVM's memory and compared with the agent's (vmnames__compare).
	 * Off: not made (it reads the JVM's memory: an eighth of jprof's CPU over 10 JVMs)
	 */
	bool compare_walks;
};

/*
 * What the capture side must learn from the join: returned as data, taken by the record
 * loop once a round (join__take_updates), never called upward from a sample.
 */
enum join_update_kind {
	/* a JVM thread (global tid) is native (GC, compiler: on) or, re-asked, Java (off) */
	JOIN_UP_NATIVE_THREAD = 1,
	/* --java-walk: an interpreted method's Method* of JVM pid can be named (on), or not */
	JOIN_UP_JW_METHOD,
};

struct join_update {
	__u32 kind; /* enum join_update_kind */
	__u32 pid, tid;
	bool on;
	__u64 method;
};

/* the one frame of a JVM thread's blocked time when it was blocked all recording */
#define JOIN_WHOLE_FRAME "[blocked all recording]"

struct join;

/*
 * Resolved samples go to model (names interned once per frame, labels pid, tid, comm, thread
 * and cgroup, values per event column). syms and model are borrowed. NULL + errno on failure.
 */
struct join *join__new(struct syms *syms, struct model *model, const struct join_opts *o);
void join__free(struct join *j); /* NULL-safe; frees the agents it owns */

/*
 * The layout BPF walked JVM pid by before its agent came is not the agent's: the samples
 * so walked and held are dropped (counted), and no more are held
 */
void join__early_off(struct join *j, __u32 pid);
/*
 * The names of JVM pid's methods as read from its memory (jvm/vmnames.h; owned by the join
 * from now on): what BPF walked and no agent names is named by them
 */
struct vmnames;
void join__set_jvm_vmnames(struct join *j, __u32 pid, struct vmnames *vn);
/*
 * BPF knows JVM pid's JavaThreads (its thread list read from outside is in the jthreads
 * map): a sample of a thread BPF found in no entry (JP_JW_NO_THREAD) is of a thread that
 * is no JavaThread (GC, VM thread), as far as the list read last says
 */
void join__set_jvm_threads_known(struct join *j, __u32 pid, bool known);
/* Hands the agent channel of a JVM to the join (owned from now on). */
int join__add_jvm(struct join *j, __u32 pid, __u32 nspid, const char *comm, struct jvm_agent *a);
/* The name the report gives the JVM: its main class or jar (copied, cut to 95 bytes) */
void join__set_jvm_name(struct join *j, __u32 pid, const char *name);
/*
 * When the recording had one JVM, and its name is known: "comm [pid] name" into buf (a
 * title names it as its root does), true. Else false, buf untouched.
 */
bool join__only_jvm(const struct join *j, char *buf, size_t size);
/* the JVM's cgroup id: its agent's events are labelled with its container (0: the host's) */
void join__set_jvm_cgroup(struct join *j, __u32 pid, __u64 cgroup_id);
/* A line of context for the JVM's end-of-run report (copied); e.g. why frames may be off. */
void join__set_jvm_note(struct join *j, __u32 pid, const char *note);
/*
 * Whether an agent is being attached to a JVM that has none yet: its samples are then
 * marked "[no Java stack: agent not yet attached]" rather than "no agent".
 */
void join__set_jvm_pending(struct join *j, __u32 pid, bool pending);
/* true when pid was handed to the join, with or without an agent channel */
bool join__knows_jvm(const struct join *j, __u32 pid);
/* true when pid has an agent channel in the join */
bool join__has_jvm(const struct join *j, __u32 pid);
/*
 * JP_RING_F_EV_* asked (agent_events) that pid's agent says it does not send; 0 when it
 * sends them all or cannot say. attached_by_jprof: only if a jprof loaded it (the same
 * build then loads the same copy again, which adds them).
 */
__u32 join__missing_events(const struct join *j, __u32 pid, bool attached_by_jprof);

/*
 * One kernel sample, or a count of them (JP_SF_COUNTED: join_sample_count), added at once.
 * Samples that requested a Java trace wait for it (join__poll).
 */
int join__sample(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		 const __u64 *ustack);

/* how many samples s stands for: a count BPF aggregated, replayed whole, or one */
static inline __u64 join_sample_count(const struct jp_sample *s)
{
	return (s->flags & JP_SF_COUNTED) && s->count ? s->count : 1;
}

/*
 * Reads the agent rings (a bounded number of records per JVM per call: call it again
 * for the rest), pairs traces with waiting samples, and adds samples that waited
 * longer than the bound (now_ns: CLOCK_MONOTONIC, 0: now) without one.
 */
int join__poll(struct join *j, __u64 now_ns);
/*
 * Moves up to max pending updates, oldest first, into buf; returns how many. Updates wait
 * in the join until taken (at most JOIN_UPDATES_MAX: past it a "native" or "known" one is
 * dropped and counted, costing signals only; one that withdraws a Method* is always kept).
 */
size_t join__take_updates(struct join *j, struct join_update *buf, size_t max);
/* End of run: reads the agent rings for at most a few hundred ms, pairs what can be
 * paired and adds everything still waiting. */
int join__flush(struct join *j);

struct join_stats {
	__u64 samples;		/* kernel samples added to the profile */
	__u64 jvm_samples;	/* of them, samples of JVM processes with an agent */
	__u64 java_complete;	/* JVM samples with a complete Java stack */
	__u64 unmatched_traces; /* traces whose sample never came (ring drop) */
	__u64 trace_drops;	/* traces dropped over the join's budget */
	__u64 backlog;		/* samples added without waiting for their trace: budget */
	__u64 model_full;	/* frames the model could not store (out of memory) */
	__u64 model_drops;	/* samples the model's budget refused (model__over_budget) */
	__u64 share_drops;	/* samples of new stacks past their JVM's share (jn_stack) */
	__u64 memo_tries, memo_hits; /* walked CPU samples looked up in the stack memo; found */
	__u64 parks, park_ns;	/* -e lock: LockSupport.park intervals in the lock view */
	__u64 idle_waits, idle_ns; /* blocked intervals of idle pool workers left out */
	__u64 whole_threads, whole_ns; /* JVM threads blocked all recording, collapsed */
	__u64 agent_lost;	/* traces and events the JVMs' agents dropped this recording */
	__u64 updates_dropped;	/* updates for the capture side over JOIN_UPDATES_MAX */
};
void join__stats(const struct join *j, struct join_stats *ret);
/*
 * The JVM pid exited (the caller waited out the time its last traces may take): reads
 * what its agent's ring still holds, gives up on its samples still waiting, keeps its
 * figures for the report and frees its agent and its live objects. Later samples of
 * the pid are another process's. 0 or -errno.
 */
int join__retire_jvm(struct join *j, __u32 pid, __u64 now_ns);
/*
 * Process pid exited and the caller waited out its last samples (the process table drops
 * it). The newest JOIN_EXITED_KEEP ended programs (exits and execs) keep their label sets
 * in the model; older ones are folded (model__fold) into one set per process name, in
 * batches, and the join forgets the label ids it held of them. alive (NULL: none) says
 * whether a process holds pid now, and, given a name, runs under it: an exited pid a
 * process holds again is not folded. 0 or -errno: a fold failed (the model's budget), and
 * that batch's processes keep their own label sets.
 */
typedef bool (*join_alive_fn)(void *ctx, __u32 pid, const char *comm);
int join__process_exited(struct join *j, __u32 pid, join_alive_fn alive, void *ctx);
/*
 * Process pid exec'd another program: the label sets of the name it ran under, comm
 * (NUL-terminated; "" or NULL: none, nothing to do), end as an exited process's do (its
 * samples after the exec carry the new name). They fold as above unless the process runs
 * under comm again when their batch comes (then its exit folds them).
 */
int join__process_execed(struct join *j, __u32 pid, const char *comm, join_alive_fn alive,
			 void *ctx);
/* ended programs left unfolded: a new process held the pid, or it runs the name again */
__u64 join__fold_skipped(const struct join *j);
/*
 * After join__flush, before the outputs are written: frees every agent's dictionary
 * (its figures are kept for the report), so the writers' memory comes on top of less.
 * Nothing may be joined after it.
 */
void join__release(struct join *j);
/*
 * One line per JVM: samples, complete Java stacks, each reason one was missing, and the
 * agent's and the join's non-zero loss counters; events it lacks. verbose adds per JVM
 * its notes, how BPF walked its stacks and its agent events; else JVMs that share a note
 * share its line.
 */
void join__report(const struct join *j, FILE *f, bool verbose);

/*
 * Stamps every agent's ring (jvm_agent__heartbeat) with now_ns and the events wanted
 * (JP_AGENT_EV_*), each every JOIN_BEAT_NS (a new agent and a change of the events at
 * once): call it every poll round, or the agents switch those events off.
 */
void join__heartbeat(struct join *j, __u64 now_ns, __u32 agent_events, __u32 alloc_interval);

/*
 * The daemon's SIGHUP: the agent events asked of every agent and those joined from now on
 * (join_opts' agent_events and joined_events); records of others are skipped and counted.
 */
void join__set_agent_events(struct join *j, __u32 agent_events, __u32 joined_events);
/*
 * The daemon's SIGHUP of -e lock: blocked intervals in LockSupport.park are contentions
 * (join_opts' parks), and off-CPU time is only read for them (offcpu_parks_only)
 */
void join__set_parks(struct join *j, bool parks, bool parks_only);

/*
 * From now on samples go to m (the old model may be freed): every model id the join caches
 * is dropped (see join.c). For a long run whose model's tables are replaced when they pass
 * a budget; samples and traces waiting stay and go to m.
 */
void join__model_reset(struct join *j, struct model *m);

#endif /* JPROF_JOIN_H */

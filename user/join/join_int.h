/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * join_int.h: the join's own state and the functions its files share (user/join.c and
 * the files of user/join/); nothing outside the join includes it. The public interface is join.h.
 */
#ifndef JPROF_JOIN_INT_H
#define JPROF_JOIN_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "join.h"
#include "ring.h"
#include "model/model.h"
#include "sym/syms.h"
#include "jvm/agent_ring.h"
#include "jvm/jwalk.h"
#include "jvm/vmnames.h"
#include "util/blkcache.h"
#include "util/hmap.h"

#define JOIN_WAIT_NS	 (3000ull * 1000 * 1000) /* how long a sample waits for its trace, and back */
#define JOIN_MAX_FRAMES	 (JP_MAX_KSTACK + JP_MAX_USTACK + 4096 + 8)
#define JOIN_NAME_POOL	 (256 * 1024)
#define TIDMAP_RESCAN_NS (100ull * 1000 * 1000)
/*
 * An agent's ring is stamped this often (join__heartbeat): it looks every
 * JP_RING_WATCH_MS and takes a stamp unchanged for JP_RING_READER_GONE_MS as the reader gone
 */
#define JOIN_BEAT_NS (200ull * 1000 * 1000)
/*
 * A ring read every round while samples of its JVM wait for traces, or events are asked
 * for, or the last read found records; else every JOIN_RING_IDLE_NS (an idle JVM's agent
 * writes nothing unless asked: a read of its head every round was most of what ten idle
 * JVMs cost a daemon)
 */
#define JOIN_RING_IDLE_NS (250ull * 1000 * 1000)

/*
 * Budgets (bytes). A pending sample costs ~100 bytes + 8 per frame: 32 MiB per JVM
 * holds 1.5 s of 999 Hz on about 50 busy CPUs with 40-frame stacks. Traces wait only
 * when their sample was lost or is late, so their budget is smaller.
 */
#define JOIN_PEND_BUDGET_JVM  (32ull << 20)
#define JOIN_PEND_BUDGET      (96ull << 20)
#define JOIN_TRACE_BUDGET_JVM (8ull << 20)
#define JOIN_TRACE_BUDGET     (32ull << 20)
/*
 * Samples BPF walked before the agent came, held until its dictionary names them (the
 * whole recording at most): 16 MiB per JVM holds 2 s of 999 Hz on 40 busy CPUs
 */
#define JOIN_EARLY_BUDGET_JVM (16ull << 20)
#define JOIN_EARLY_BUDGET     (64ull << 20)
#define JOIN_UNKNOWN_JAVA     "[unknown Java]"
/* agent-ring records per JVM per join__poll: a round stays in the tens of ms */
#define JOIN_TRACES_PER_ROUND 4096
#ifndef JP_FUZZ_BUDGETS
#define JOIN_POLL_ROUND_NS (50ull * 1000 * 1000) /* no next JVM after this in one round */
#else /* fuzzing: the time budgets within a fuzzer's reach */
#define JOIN_POLL_ROUND_NS (200ull * 1000)
#endif
#define JOIN_POLL_ROUNDS 64 /* rounds over the agent rings in one join__poll, at most */
#define JOIN_FLUSH_NS	 (250ull * 1000 * 1000) /* reading the rings at the end */
/*
 * A record being resolved when its round's time is up goes on for this long at most; past
 * it the rest of its Java frames are dropped (a marker stands for them) and counted for its
 * JVM. Frames are named from a dictionary the JVM's user writes: one may cost a read of
 * its method's entry (a 64 KiB name, a line table to sort) or a refresh of the dictionary.
 */
#ifndef JP_FUZZ_BUDGETS
#define JOIN_LATE_NS (100ull * 1000 * 1000)
#else
#define JOIN_LATE_NS (200ull * 1000)
#endif
#define JOIN_LATE_EVERY	 16 /* frames between two looks at the clock */
/* a time bound of the join as this join keeps it (join_opts.time_scale) */
#define JN_NS(j, ns) ((j)->o.time_scale > 1 ? (__u64)(ns) * (j)->o.time_scale : (__u64)(ns))
#define JOIN_LATE_MARKER "[Java frames dropped: jprof's time budget]"

/* why a JVM sample has no Java stack */
enum miss_reason {
	MISS_AGCT = 0,	 /* + AGCT code, see agct[] */
	MISS_SIG_BUSY,	 /* bpf_send_signal_thread -EBUSY */
	MISS_SIG_ERR,	 /* other signal errors */
	MISS_NO_TRACE,	 /* signal sent, no trace came within the bound (ring full, handler) */
	MISS_NOT_SENT,	 /* agent not ready when sampled */
	MISS_AGENT_BUSY, /* handler re-entered */
	MISS_NO_AGENT,	 /* JVM without an agent (attach failed or disabled) */
	MISS_PENDING,	 /* the agent is being attached: samples before it is connected */
	MISS_FAULT,	 /* the agent's walk faulted; caught in the JVM */
	MISS_OTHER,	 /* a code the agent should not send */
	MISS_BACKLOG,	 /* did not wait for its trace: the join's budget was full */
	MISS_OPEN,	 /* off-CPU, still blocked at the end: never signalled (it would wake) */
	MISS_FOLLOW,	 /* followed a request whose sample or trace is not known */
	MISS_JWALK,	 /* walked by BPF, not signalled, and its frames could not be named */
	MISS_EARLY_OFF,	 /* walked by BPF before the agent by a layout the agent's contradicts */
	MISS_MAX
};

/* AGCT codes 0 .. -(MISS_AGCT_CODES - 1) have a marker formatted once */
enum { MISS_AGCT_CODES = 16 };

/* what each reason reads as in the report and the markers */
extern const char *const join_miss_names[MISS_MAX];

/* an intrusive circular list; an entry sits on two: its thread's and its JVM's */
struct dl {
	struct dl *prev, *next;
};

#define dl_entry(p, type, member) ((type *)((char *)(p)-offsetof(type, member)))

static inline void dl_init(struct dl *h)
{
	h->prev = h->next = h;
}

static inline bool dl_empty(const struct dl *h)
{
	return h->next == h;
}

static inline void dl_add_tail(struct dl *h, struct dl *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void dl_del(struct dl *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	dl_init(n);
}

struct tid_pair {
	__u32 nstid, tid;
};

struct jvm_ent {
	__u32 pid, nspid;
	struct jwalk *jw; /* --java-walk shadow: BPF's frames against the agent's; NULL off */
	__u32 serial;	  /* unique in the join (pids are reused): Java frames' cache key */
	char comm[JP_COMM_LEN + 1];
	char name[96];	     /* what a person knows it by: its main class or jar ("" unknown) */
	__u64 cgroup;	     /* its cgroup id, for the labels of its agent's events (0: host) */
	struct jvm_agent *a; /* NULL: a JVM without agent */
	bool pending;	     /* no agent yet, but one is being attached */
	__u64 beat_ns;	     /* its ring's last stamp (join__heartbeat); 0 none yet */
	__u64 ring_next_ns;  /* its ring's next read while idle (JOIN_RING_IDLE_NS) */
	char note[160];
	struct tid_pair *tids;	  /* sorted by nstid */
	struct tid_pair *by_host; /* the same, sorted by tid */
	size_t ntids;
	__u64 tids_scanned_ns, unresolved_scan_ns;
	/* waiting, oldest first: struct pend.jnode, struct ptr.jnode */
	struct dl pend, traces;
	/*
	 * samples BPF walked (JP_SF_JWALK) in code the dictionary does not name yet: HotSpot
	 * posts CompiledMethodLoad from its service thread, after the code first ran (struct
	 * pend.jnode, oldest first)
	 */
	struct dl jwait;
	/* the dictionary's size and the Method*s learned (jwalk__learned) at the last try */
	__u64 jwait_dict, jwait_learned;
	struct dl unresolved; /* struct ptr.tnode of traces whose host tid is not known yet */
	/*
	 * samples BPF walked before the agent came (struct pend.jnode, oldest first), named
	 * when its dictionary can; what is still unnamed at the end shows "[unknown Java]"
	 */
	struct dl early;
	size_t early_bytes;
	bool early_off;				 /* join__early_off: none held any more */
	bool threads_known;			 /* join__set_jvm_threads_known */
	__u64 early_dict, early_methods;	 /* dictionary and Method*s learned at the last try */
	__u64 early_held, early_named, early_unknown, early_over, early_dropped;
	struct vmnames *vn; /* names read from the JVM's memory, for what no agent names */
	/*
	 * at retirement: what vn and jw counted, for the report, once they are freed (a
	 * retired JVM kept for the report holds its figures, not its 1 MiB of name pool)
	 */
	struct vmnames_stats vn_st;
	struct jwalk_stats jw_st;
	bool vn_had;
	__u64 early_mem;    /* held samples named from the JVM's memory alone */
	size_t pend_bytes, trace_bytes;
	/* report */
	__u64 samples, java_samples, complete, internal;
	__u64 internal_known; /* ... of which not signalled: known JVM-internal (JP_SF_NATIVE_THREAD) */
	/* CPU samples of Java threads: all, complete, before the agent was connected */
	__u64 cpu_java, cpu_complete, cpu_before;
	__u64 followed; /* samples given the stack of the request they followed */
	__u64 memo_named; /* walked samples whose stack the memo had (named by BPF's walk before) */
	__u64 miss[MISS_MAX];
	__u64 agct[12];
	__u64 unmatched, trace_drops;
	/* agent events (-e lock, alloc, live) */
	__u64 ev_allocs, ev_frees, ev_locks, ev_lock_short, ev_orphan, ev_over_budget;
	__u64 ev_blocked_at_attach; /* threads the attach scan found blocked on a monitor */
	__u64 monitor_joined;	    /* blocked samples given the Java stack of their monitor wait */
	/* -e lock: blocked intervals in LockSupport.park, and those under --lock-threshold */
	__u64 parks, park_short;
	__u64 park_blocker; /* parks shown with their blocker's class */
	/*
	 * budgets: records whose Java frames were dropped for time (JOIN_LATE_NS), agent
	 * events of a kind not asked for (-e), samples the model's budget refused, and the
	 * agent ring's bytes left unread at the end (its reading's time was up)
	 */
	__u64 time_drops, ev_skipped, model_drops, unread_end;
	/*
	 * the stack trie nodes its new stacks added to the model (since the model's last
	 * replacement), how many new stacks, and the samples of new stacks dropped past its
	 * share (jn_stack)
	 */
	__u64 stack_nodes, new_stacks, share_drops;
	/* the process exited and its agent was freed (join__retire_jvm): its last figures */
	bool retired;
	bool final_kept; /* the agent was freed, final holds its figures (retired or released) */
	struct jvm_agent_stats final;
};

/* one thread with something waiting; forgotten when nothing waits any more */
struct thr {
	__u32 pid, tid;
	struct dl pend;	  /* struct pend.tnode, in arrival (= time) order */
	struct dl traces; /* struct ptr.tnode, in arrival order */
	struct dl dnode;  /* on join.dirty: new samples may match waiting traces */
};

/* a sample waiting for its trace */
struct pend {
	struct dl tnode, jnode;
	struct thr *thr;
	struct jvm_ent *jvm;
	size_t cost;
	struct jp_sample s;
	__u64 frames[]; /* kstack then ustack */
};

/* the BPF walk's frames of a sample: they follow its user stack */
static inline const struct jp_jframe *jframes_of(const struct jp_sample *s, const __u64 *ustack)
{
	return (const struct jp_jframe *)(ustack + s->ustack_len);
}

/* the bytes a waiting copy of s holds: its stacks and the BPF walk's frames (two words each) */
static inline size_t pend_cost(const struct jp_sample *s)
{
	return sizeof(struct pend) +
	       ((size_t)s->kstack_len + s->ustack_len + 2 * (size_t)s->jstack_len) * sizeof(__u64);
}

/* a trace waiting for its sample */
struct ptr {
	struct dl tnode, jnode;
	struct thr *thr; /* NULL: on jvm.unresolved */
	struct jvm_ent *jvm;
	size_t cost;
	__u64 seen_ns;
	struct java_trace t;
	struct java_frame frames[];
};

/*
 * A thread's last CPU sample as committed: where its CPU time after that sample goes when
 * it exits (JP_SF_CPU_TAIL). Direct-mapped by (pid, tid); a collision forgets the older.
 */
#define JOIN_LAST_SLOTS 4096
struct last_cpu {
	__u32 pid, tid;
	jp_id stack, labels;
	__u64 carry_ns; /* CPU time of later samples without a Java stack, for the next one */
	/*
	 * The thread's newest stack request (a signalled sample) as read, and the newest
	 * one that met its trace: its stack (Java frames from index jfrom on) or its walk's
	 * error code. A sample that follows a request (JP_SF_FOLLOWS) read after that
	 * request met its trace takes its Java part from here (lead_ns == sig_ns).
	 */
	__u64 sig_ns, lead_ns;
	jp_id lead_stack;
	__u32 lead_jfrom;
	__s32 lead_code;
	/* the sample time of the first of the thread's "not a Java thread" answers in a row */
	__u64 native_ns;
};

/*
 * A Java thread answers "not a Java thread" too, for a moment: from its start to the
 * agent's ThreadStart. Only a thread that answers so for this long is a native thread.
 */
#define NATIVE_AFTER_NS (200ull * 1000 * 1000)

/*
 * Frames resolved before, by key: a kernel address, a user address of a pid (not in the
 * code cache: perf-map names change at the same address), a Java (method, bci, kind) of a
 * JVM. Each frame of each sample was symbolized and its name hashed into the model; most
 * are the same few thousand frames again (a third of jprof's own CPU, perf, 10 JVMs).
 * Direct-mapped; a new syms generation (a pid's maps re-read or dropped) empties it.
 */
#define LOC_CACHE_SLOTS 16384 /* 640 KiB */
#define LC_KERNEL	(1ull << 62)
#define LC_USER		(2ull << 62)
#define LC_JAVA		(3ull << 62)
struct loc_cache_ent {
	__u64 a, b;
	__u32 c, gen;
	jp_id id;
};

/*
 * Whole stacks named before, by the raw sample: a JVM's CPU sample that BPF walked is
 * its kernel, native and Java frames as addresses, and most are the same few thousand
 * again (87% of H2's under load). The memo gives such a sample its model stack without
 * naming a frame or hashing the stack in the model. Keyed by two keyed hashes of the
 * raw frames (96 bits: another user cannot aim at a slot or a collision); an entry holds
 * while what named it holds: the symbols and the model (lc_gen), the JVM's agent
 * (serial), its compiled code (the agent's code_gen) and the Method*s its walk learned.
 * Sets of two, the one used last first: a new stack takes the other's place.
 */
#define STACK_MEMO_SLOTS 65536 /* 2 MiB, in sets of 2: a cache line */
struct stack_memo_ent {
	__u64 h1;		      /* h1, h2: of the frames, the pid and the JVM's serial */
	__u32 h2;
	jp_id stack;
	__u32 lc_gen, code_gen, jw_gen;
	__u32 java_from;
};

/* age-at-death histogram of one allocation site: <1 ms, <10 ms, <100 ms, <1 s, <10 s, more */
#define AGE_BUCKETS 6
#define AGE_SITES   64 /* sites with a row of their own; the others share one */
struct age_site {
	jp_id stack;
	__u64 n[AGE_BUCKETS];
};

/*
 * JVMs that exited keep their entry for the report, the newest JOIN_RETIRED_KEEP of them;
 * older ones are added up in struct jvm_fold and freed: a host where JVMs come and go for
 * months holds what its live JVMs need
 */
#define JOIN_RETIRED_KEEP 128
/*
 * Programs that ended (exited, or exec'd another) whose label sets stay their own in the
 * model: a recording of a few hundred processes never sees a fold. Past it they are folded
 * JOIN_FOLD_BATCH at a time (a fold walks the model's label sets and rows once).
 */
#define JOIN_EXITED_KEEP 2048
#define JOIN_FOLD_BATCH	 512

/* a program's end: pid exited (comm "") or exec'd, leaving the name comm */
struct jn_ended {
	__u32 pid;
	char comm[JP_COMM_LEN + 1];
};

struct jvm_fold {
	__u64 jvms, samples, java_samples, complete, internal, agent_lost;
};

struct join {
	struct syms *syms;
	struct model *model;
	struct join_opts o;
	__u32 beat_want, beat_ivl; /* what the agents' rings were last stamped asking for */
	struct blkcache blk; /* waiting samples, traces and thread slots: reused, not malloc'd */
	/* "[no Java stack: REASON]" markers, each formatted once: by reason, by AGCT code */
	char miss_marks[MISS_MAX][64], agct_marks[MISS_AGCT_CODES][64];
	/* updates for the capture side, oldest first, until join__take_updates */
	struct join_update *ups;
	size_t nups, ups_cap;
	/* every JVM of the recording, retired ones too (the report; the oldest go to folded) */
	struct jvm_ent **jvms;
	size_t jvms_cap, nretired;
	struct jvm_fold folded;
	/* programs ended, not folded yet, oldest first (JOIN_EXITED_KEEP + JOIN_FOLD_BATCH) */
	struct jn_ended *exited;
	size_t nexited;
	/* not folded: a new process held the pid again, or an exec'd one runs the name again */
	__u64 fold_skipped;
	/* the live ones by pid (a struct jvm_ent *) */
	struct hmap by_pid;
	size_t njvms, rr; /* rr: the JVM whose ring is read first next round */
	/* threads with something waiting, by (pid, tid): a struct thr * */
	struct hmap thr_tab;
	struct dl dirty; /* struct thr.dnode */
	size_t early_bytes; /* held samples BPF walked before their agent came */
	size_t pend_bytes, trace_bytes;
	unsigned int round_left; /* agent records the current JVM may still deliver this round */
	__u64 end_ns;		 /* when join__flush began: the recording's end */
	__u64 traces_read;	 /* agent records delivered, all JVMs */
	struct last_cpu last[JOIN_LAST_SLOTS];
	/*
	 * a thread's labels as its last sample found them, in last's slot (sample_labels):
	 * used when the model's labels of that id still say what the sample does
	 */
	struct {
		jp_id id;
		__u32 gen; /* lc_gen: a new model, an id of the old one */
	} lmemo[JOIN_LAST_SLOTS];
	/* resolved frames (see loc_cache_get); entries of another gen are empty */
	struct loc_cache_ent *lc;
	__u32 lc_gen, serials;
	__u64 lc_syms_gen;
	struct stack_memo_ent *memo; /* (memo.c) NULL: none */
	/* the stack being built has a frame not named for good: not put in the memo */
	bool memo_off;
	jp_id committed;  /* the stack commit() added last */
	bool share_refused; /* jn_stack refused a JVM a new stack: jn_model_drop counts it */
	size_t java_from; /* add_java: the index of its first Java frame in locs */
	/*
	 * the next frame pushed by address is a CPU sample's interrupted pc: keyed by its
	 * function's start (take_leaf_pc), not by itself; jn_push_kernel sets it
	 */
	bool leaf_pc;
	/* per-sample scratch: the stack as model locations, leaf first */
	jp_id locs[JOIN_MAX_FRAMES];
	char pool[JOIN_NAME_POOL];
	size_t pool_used;
	struct join_stats st;
	__u64 now_ns;
	struct jvm_ent *cur_jvm; /* during a poll callback */
	/*
	 * while the rings are read and their records paired: when that is to end (0: no
	 * bound); past it by JOIN_LATE_NS a stack's remaining Java frames are dropped (late)
	 */
	__u64 deadline_ns;
	unsigned int late_count; /* frames since the clock was read */
	bool late, late_marked;	 /* past the bound; this stack has its marker */
	/* agent events waiting for their other half, bounded open-addressing tables */
	struct age_site *ages; /* -e live: age at death of freed sampled objects, per site */
	size_t nages;
	__u64 ages_other[AGE_BUCKETS]; /* sites past AGE_SITES */
	struct ev_tab *waits;	       /* (pid, nstid) -> MonitorContendedEnter not yet Entered */
	struct ev_tab *live;	       /* (pid, tag) -> a sampled object not freed yet */
	bool carried; /* the sample being committed had its CPU time carried (last_cpu) */
};

/* an event waiting for its other half: a monitor wait for its end, an object for its free */
struct ev_slot {
	__u64 k1, k2; /* its key in its table */
	jp_id stack, labels;
	__u64 time_ns;
	__u64 space, objects;
	jp_id jstack; /* monitor waits: the Java frames alone, for the wait's off-CPU time */
	__u64 end_ns; /* monitor waits: Entered (0: still waiting); kept for late samples */
};

/*
 * A table of events by (k1, k2): util/hmap from the key to the event's index in a dense
 * array, which a delete fills with the last event and which shrinks with the entries, so
 * memory follows the events waiting now (a table a burst filled is given back)
 */
struct ev_tab {
	struct hmap map;
	struct ev_slot *evs;
	size_t n, cap;
};

#define EV_WAITS_MAX 3072u   /* threads waiting on a monitor at once, all JVMs */
#define EV_LIVE_MAX  196608u /* sampled objects tracked live (72 B + index each: ~20 MiB) */

/* a finished wait stays this long for the off-CPU sample of its end, which comes later */
#define WAIT_KEEP_NS (2ull * 1000 * 1000 * 1000)

/* at most this many updates wait for the record loop (join__take_updates) */
#define JOIN_UPDATES_MAX 65536

/* join/jvms.c: the JVMs and their threads, retired; the updates for the capture side */
void jn_update(struct join *j, const struct join_update *u);
void jn_jw_method(void *ctx, __u32 pid, __u64 method, bool known);
struct jvm_ent *jn_find_jvm(const struct join *j, __u32 pid);
void jn_tidmap_rescan(struct jvm_ent *e, __u64 now);
__u32 jn_host_tid(struct jvm_ent *e, __u32 nstid, __u64 now);
__u32 jn_ns_tid(struct jvm_ent *e, __u32 tid);
void jn_jvm_free(struct join *j, struct jvm_ent *e);
void jn_free_agent(struct jvm_ent *e);

/* join.c: the samples, the stack committed to the model */
int jn_model_drop(struct join *j, struct jvm_ent *e, int err);
/*
 * Each JVM's share of the model's stack trie: its first JOIN_JVM_NODES nodes, then
 * JOIN_JVM_NODES_PER_STACK per new stack on average. A program's stacks share their
 * callers, so a new one adds a few nodes; an agent that writes events of thousands of
 * random frames (a hostile one) adds thousands each, and past its share only the
 * stacks the model has already are taken.
 */
#define JOIN_JVM_NODES		 (256u << 10)
#define JOIN_JVM_NODES_PER_STACK 128u
/*
 * The model's stack of j->locs[0..n): for e (NULL: no JVM) within its share; 0 when
 * refused (j->share_refused) or out of memory / budget
 */
jp_id jn_stack(struct join *j, struct jvm_ent *e, size_t n);
struct last_cpu *jn_last_cpu_slot(struct join *j, __u32 pid, __u32 tid);
int jn_last_cpu_settle(struct join *j, struct last_cpu *l);
struct last_cpu *jn_last_own(struct join *j, __u32 pid, __u32 tid);
int jn_commit(struct join *j, const struct jp_sample *s, struct jvm_ent *e, size_t n,
	      const char *marker);
/* s counted with the model's stack (0: refused or out of memory, a drop) */
int jn_commit_stack(struct join *j, const struct jp_sample *s, struct jvm_ent *e, jp_id stack);
int jn_add_native(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e, const char *marker);
void jn_tally_cpu(struct jvm_ent *e, const struct jp_sample *s, bool complete, bool before);
int jn_add_missing(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		   const __u64 *ustack, struct jvm_ent *e, enum miss_reason r, int code);
int jn_finish(struct join *j, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack,
	      struct jvm_ent *e, const struct java_trace *t);
/* jn_finish's end for a whole Java stack whose model stack the memo had (memo.c) */
int jn_finish_stack(struct join *j, const struct jp_sample *s, struct jvm_ent *e, jp_id stack);

/* join/memo.c: whole stacks by their raw frames (struct stack_memo_ent) */
struct stack_memo_ent *jn_memo_new(void); /* NULL: out of memory (no memo) */
void jn_memo_free(struct stack_memo_ent *m);
struct memo_key {
	__u64 h1;
	__u32 h2, jw_gen;
	__u32 lc_gen, code_gen; /* what names frames, as of the lookup, before naming them */
};
/* s's key and, when the memo has its stack, the stack (j->java_from set); 0: not there */
jp_id jn_memo_get(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e, struct memo_key *k);
/* after s was committed whole from its frames (j->committed): its stack kept for k */
void jn_memo_put(struct join *j, struct jvm_ent *e, const struct memo_key *k);
/* the loc cache's generation now (a new syms generation starts a new one) */
__u32 jn_lc_gen(struct join *j);

/* join/frames.c: frames of a stack, named once and cached */
const char *jn_pool_fmt(struct join *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jn_push(struct join *j, size_t *n, const char *name, enum jp_frame_kind kind);
/* a Java frame by its name alone ("pkg/Class.method": read from the JVM's memory) */
void jn_push_java_name(struct join *j, size_t *n, const char *name, enum jp_frame_kind kind);
bool jn_push_user_frame(struct join *j, size_t *n, __u32 pid, __u64 addr, bool stop_at_code);
void jn_push_kernel(struct join *j, size_t *n, const struct jp_sample *s, const __u64 *kstack);
void jn_push_java(struct join *j, size_t *n, struct jvm_ent *e, const struct java_frame *f);
void jn_late_done(struct join *j, struct jvm_ent *e);
bool jn_push_agent_code(struct join *j, size_t *n, struct jvm_ent *e, __u32 pid, __u64 addr);
void jn_push_native_part(struct join *j, size_t *n, const struct jp_sample *s, const __u64 *kstack,
			 const __u64 *ustack);
bool jn_agent_on_stack(struct join *j, const struct jp_sample *s, const __u64 *ustack);
const char *jn_miss_marker(struct join *j, enum miss_reason r, int code);

/* join/wait.c: samples waiting for their Java traces and traces for their samples */
int jn_add_cpu_tail(struct join *j, const struct jp_sample *s, struct jvm_ent *e);
/* p (cost bytes) filled with a copy of s and its stacks, of e, on no list yet */
void jn_pend_fill(struct pend *p, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e, size_t cost);
int jn_pend_add(struct join *j, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack,
		struct jvm_ent *e);
int jn_add_follower(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		    const __u64 *ustack, struct jvm_ent *e);
int jn_add_jwalked(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		   const __u64 *ustack, struct jvm_ent *e);
int jn_round_next(struct join *j);
int jn_on_trace(void *ctx, const struct java_trace *tr);
int jn_retry_dirty(struct join *j);
int jn_expire(struct join *j, struct jvm_ent *e, bool all);
bool jn_poll_agents(struct join *j);
/*
 * How much of e's agent's dictionary is read: what it gained read first while samples
 * wait on the list waiting (a poll of an idle ring looks at it only now and then)
 */
static inline __u64 jn_dict_for(struct jvm_ent *e, const struct dl *waiting)
{
	return dl_empty(waiting) ? jvm_agent__dict_read(e->a) : jvm_agent__dict_refresh(e->a);
}
void jn_time_bound(struct join *j, __u64 until);
int jn_pair_and_expire(struct join *j, bool all);

/* join/early.c: samples held from before their JVM's agent came */
int jn_early_hold(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e);
/* the held samples tried again, when what names them grew; all: every one goes */
int jn_early_retry(struct join *j, struct jvm_ent *e, bool all);

/* join/events.c: the agents' events (monitor waits, allocations, live objects) */
int jn_add_monitor_wait(struct join *j, const struct jp_sample *s, const __u64 *kstack,
			const __u64 *ustack, struct jvm_ent *e);
int jn_on_event(void *ctx, const struct java_event *ev);
int jn_add_live(struct join *j);
void jn_ev_drop_pid(struct ev_tab *t, __u32 pid);
/* frees an event table (NULL-safe) */
void jn_ev_free(struct ev_tab *t);

#endif /* JPROF_JOIN_INT_H */

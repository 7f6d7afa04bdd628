// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* join.c: kernel sample + Java trace -> one stack of typed frames -> profile. */
#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "join.h"
#include "clock.h"
#include "ring.h"
#include "log.h"
#include "opts.h"
#include "model/model.h"
#include "model/spread.h"
#include "sym/syms.h"
#include "jvm/agent_ring.h"
#include "jvm/jwalk.h"
#include "kernel/syscalls.h"
#include "util/cgroup.h"
#include "util/hashkey.h"

#define JOIN_WAIT_NS	 (3000ull * 1000 * 1000) /* how long a sample waits for its trace, and back */
#define JOIN_MAX_FRAMES	 (JP_MAX_KSTACK + JP_MAX_USTACK + 4096 + 8)
#define JOIN_NAME_POOL	 (256 * 1024)
#define TIDMAP_RESCAN_NS (100ull * 1000 * 1000)

/*
 * Budgets (bytes). A pending sample costs ~100 bytes + 8 per frame: 32 MiB per JVM
 * holds 1.5 s of 999 Hz on about 50 busy CPUs with 40-frame stacks. Traces wait only
 * when their sample was lost or is late, so their budget is smaller.
 */
#define JOIN_PEND_BUDGET_JVM  (32ull << 20)
#define JOIN_PEND_BUDGET      (96ull << 20)
#define JOIN_TRACE_BUDGET_JVM (8ull << 20)
#define JOIN_TRACE_BUDGET     (32ull << 20)
/* agent-ring records per JVM per join__poll: a round stays in the tens of ms */
#define JOIN_TRACES_PER_ROUND 4096
#ifndef JP_FUZZ_BUDGETS
#define JOIN_POLL_ROUND_NS    (50ull * 1000 * 1000) /* no next JVM after this in one round */
#else /* fuzzing: the time budgets within a fuzzer's reach */
#define JOIN_POLL_ROUND_NS    (200ull * 1000)
#endif
#define JOIN_POLL_ROUNDS      64 /* rounds over the agent rings in one join__poll, at most */
#define JOIN_FLUSH_NS	      (250ull * 1000 * 1000) /* reading the rings at the end */
/*
 * A record being resolved when its round's time is up goes on for this long at most; past
 * it the rest of its Java frames are dropped (a marker stands for them) and counted for its
 * JVM. Frames are named from a dictionary the JVM's user writes: one may cost a read of
 * its method's entry (a 64 KiB name, a line table to sort) or a refresh of the dictionary.
 */
#ifndef JP_FUZZ_BUDGETS
#define JOIN_LATE_NS	      (100ull * 1000 * 1000)
#else
#define JOIN_LATE_NS	      (200ull * 1000)
#endif
#define JOIN_LATE_EVERY	      16 /* frames between two looks at the clock */
#define JOIN_LATE_MARKER      "[Java frames dropped: jprof's time budget]"

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
	MISS_MAX
};

static const char *const miss_names[MISS_MAX] = {
	[MISS_AGCT] = "AGCT", [MISS_SIG_BUSY] = "signal busy (-EBUSY)",
	[MISS_SIG_ERR] = "signal failed", [MISS_NO_TRACE] = "no trace from the agent",
	[MISS_NOT_SENT] = "agent not ready", [MISS_AGENT_BUSY] = "agent busy",
	[MISS_NO_AGENT] = "no agent", [MISS_PENDING] = "agent not yet attached", [MISS_FAULT] = "stack walk faulted (caught)",
	[MISS_OTHER] = "unknown agent code", [MISS_BACKLOG] = "join backlog full",
	[MISS_OPEN] = "still blocked at the end (never signalled)",
	[MISS_FOLLOW] = "during a pending request of unknown outcome",
	[MISS_JWALK] = "walked in BPF, code not named",
};

/* an intrusive circular list; an entry sits on two: its thread's and its JVM's */
struct dl {
	struct dl *prev, *next;
};

#define dl_entry(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

static void dl_init(struct dl *h)
{
	h->prev = h->next = h;
}

static bool dl_empty(const struct dl *h)
{
	return h->next == h;
}

static void dl_add_tail(struct dl *h, struct dl *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static void dl_del(struct dl *n)
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
	__u32 serial; /* unique in the join (pids are reused): Java frames' cache key */
	char comm[JP_COMM_LEN + 1];
	char name[96];	     /* what a person knows it by: its main class or jar ("" unknown) */
	struct jvm_agent *a; /* NULL: a JVM without agent */
	bool pending;	     /* no agent yet, but one is being attached */
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
	__u64 jwait_dict; /* the dictionary's size when they were last tried */
	struct dl unresolved; /* struct ptr.tnode of traces whose host tid is not known yet */
	size_t pend_bytes, trace_bytes;
	/* report */
	__u64 samples, java_samples, complete, internal;
	__u64 internal_known; /* ... of which not signalled: known JVM-internal (JP_SF_NATIVE_THREAD) */
	/* CPU samples of Java threads: all, complete, before the agent was connected */
	__u64 cpu_java, cpu_complete, cpu_before;
	__u64 followed; /* samples given the stack of the request they followed */
	__u64 miss[MISS_MAX];
	__u64 agct[12];
	__u64 unmatched, trace_drops;
	/* agent events (-e lock, alloc, live) */
	__u64 ev_allocs, ev_frees, ev_locks, ev_lock_short, ev_orphan, ev_over_budget;
	__u64 ev_blocked_at_attach; /* threads the attach scan found blocked on a monitor */
	__u64 monitor_joined; /* blocked samples given the Java stack of their monitor wait */
	/* -e lock: blocked intervals in LockSupport.park, and those under --lock-threshold */
	__u64 parks, park_short;
	/*
	 * budgets: records whose Java frames were dropped for time (JOIN_LATE_NS), agent
	 * events of a kind not asked for (-e), samples the model's budget refused, and the
	 * agent ring's bytes left unread at the end (its reading's time was up)
	 */
	__u64 time_drops, ev_skipped, model_drops, unread_end;
	/* the process exited and its agent was freed (join__retire_jvm): its last figures */
	bool retired;
	bool final_kept; /* the agent was freed, final holds its figures (retired or released) */
	struct jvm_agent_stats final;
};

/* one thread with something waiting; forgotten when nothing waits any more */
struct thr {
	struct thr *hnext; /* hash chain */
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

/* age-at-death histogram of one allocation site: <1 ms, <10 ms, <100 ms, <1 s, <10 s, more */
#define AGE_BUCKETS 6
#define AGE_SITES   64 /* sites with a row of their own; the others share one */
struct age_site {
	jp_id stack;
	__u64 n[AGE_BUCKETS];
};

struct join {
	struct syms *syms;
	struct model *model;
	struct join_opts o;
	struct jvm_ent **jvms;
	size_t njvms, rr; /* rr: the JVM whose ring is read first next round */
	/* threads with something waiting: chained hash by (pid, tid) */
	struct thr **thr_tab;
	size_t thr_cap, thr_n;
	struct dl dirty; /* struct thr.dnode */
	size_t pend_bytes, trace_bytes;
	unsigned int round_left; /* agent records the current JVM may still deliver this round */
	__u64 end_ns;		 /* when join__flush began: the recording's end */
	__u64 traces_read;	 /* agent records delivered, all JVMs */
	struct last_cpu last[JOIN_LAST_SLOTS];
	/* resolved frames (see loc_cache_get); entries of another gen are empty */
	struct loc_cache_ent *lc;
	__u32 lc_gen, serials;
	__u64 lc_syms_gen;
	jp_id committed;   /* the stack commit() added last */
	size_t java_from;  /* add_java: the index of its first Java frame in locs */
	/* per-sample scratch: the stack as model locations, leaf first */
	jp_id locs[JOIN_MAX_FRAMES];
	char pool[JOIN_NAME_POOL];
	size_t pool_used;
	/* distinct pids seen: small open-addressing set */
	__u32 *pidset;
	size_t pidset_cap, pidset_n;
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
	struct ev_slot *waits; /* (pid, nstid) -> MonitorContendedEnter not yet Entered */
	struct ev_slot *live;  /* (pid, tag) -> a sampled object not freed yet */
	size_t nwaits, nlive;
	bool carried; /* the sample being committed had its CPU time carried (last_cpu) */
};

/* an event waiting for its other half: a monitor wait for its end, an object for its free */
struct ev_slot {
	__u64 k1, k2; /* k1 0: empty */
	jp_id stack, labels;
	__u64 time_ns;
	__u64 space, objects;
	jp_id jstack;  /* monitor waits: the Java frames alone, for the wait's off-CPU time */
	__u64 end_ns;  /* monitor waits: Entered (0: still waiting); kept for late samples */
};

#define EV_WAITS_CAP 4096u	     /* threads waiting on a monitor at once, all JVMs */
#define EV_LIVE_CAP  (1u << 18) /* sampled objects tracked live (48 B each: 12 MiB) */

static size_t ev_hash(__u64 k1, __u64 k2, size_t cap)
{
	/* keyed: tags and thread ids are the JVM's user's to choose */
	return (size_t)hash_keyed(k1 ^ hash_keyed(k2)) & (cap - 1);
}

static struct ev_slot *ev_find(struct ev_slot *t, size_t cap, __u64 k1, __u64 k2)
{
	if (!t)
		return NULL;
	for (size_t i = ev_hash(k1, k2, cap), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
		if (!t[i].k1)
			return NULL;
		if (t[i].k1 == k1 && t[i].k2 == k2)
			return &t[i];
	}
	return NULL;
}

/* a free slot for a new key (kept at most 3/4 full: probes stay short); NULL when full */
static struct ev_slot *ev_add(struct ev_slot **tp, size_t cap, size_t *n, __u64 k1, __u64 k2)
{
	size_t i;

	if (!*tp) {
		*tp = calloc(cap, sizeof(**tp));
		if (!*tp)
			return NULL;
	}
	if (*n >= cap / 4 * 3)
		return NULL;
	for (i = ev_hash(k1, k2, cap); (*tp)[i].k1; i = (i + 1) & (cap - 1))
		;
	(*tp)[i].k1 = k1;
	(*tp)[i].k2 = k2;
	(*n)++;
	return &(*tp)[i];
}

/* removes a slot, shifting back the entries of its probe chain (no tombstones) */
static void ev_del(struct ev_slot *t, size_t cap, size_t *n, struct ev_slot *s)
{
	size_t i = (size_t)(s - t), j = i;

	for (;;) {
		size_t h;

		j = (j + 1) & (cap - 1);
		if (!t[j].k1)
			break;
		h = ev_hash(t[j].k1, t[j].k2, cap);
		/* move j back to i unless its home lies cyclically in (i, j] */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		t[i] = t[j];
		i = j;
	}
	memset(&t[i], 0, sizeof(t[i]));
	(*n)--;
}

struct join *join__new(struct syms *syms, struct model *model, const struct join_opts *o)
{
	struct join *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->syms = syms;
	j->model = model;
	j->o = *o;
	j->lc = calloc(LOC_CACHE_SLOTS, sizeof(*j->lc)); /* without it: no cache */
	if (!j->o.pend_budget_jvm)
		j->o.pend_budget_jvm = JOIN_PEND_BUDGET_JVM;
	if (!j->o.pend_budget)
		j->o.pend_budget = JOIN_PEND_BUDGET;
	if (!j->o.trace_budget_jvm)
		j->o.trace_budget_jvm = JOIN_TRACE_BUDGET_JVM;
	if (!j->o.trace_budget)
		j->o.trace_budget = JOIN_TRACE_BUDGET;
	if (!j->o.traces_per_round)
		j->o.traces_per_round = JOIN_TRACES_PER_ROUND;
	dl_init(&j->dirty);
	return j;
}

/* the samples on a JVM's list of waiting ones (by jnode), freed unaccounted: the JVM goes */
static void pends_free(struct dl *h)
{
	while (!dl_empty(h)) {
		struct dl *n = h->next;

		dl_del(n);
		free(dl_entry(n, struct pend, jnode));
	}
}

static void jvm_ent__free(struct jvm_ent *e)
{
	if (!e)
		return;
	jwalk__free(e->jw);
	pends_free(&e->pend);
	pends_free(&e->jwait);
	while (!dl_empty(&e->traces)) {
		struct dl *n = e->traces.next;

		dl_del(n);
		free(dl_entry(n, struct ptr, jnode));
	}
	jvm_agent__free(e->a);
	free(e->tids);
	free(e->by_host);
	free(e);
}

void join__free(struct join *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->njvms; i++)
		jvm_ent__free(j->jvms[i]);
	free(j->jvms);
	for (size_t i = 0; i < j->thr_cap; i++) {
		for (struct thr *t = j->thr_tab[i], *next; t; t = next) {
			next = t->hnext;
			free(t);
		}
	}
	free(j->thr_tab);
	free(j->pidset);
	free(j->waits);
	free(j->live);
	free(j->ages);
	free(j->lc);
	free(j);
}

/* the live JVM entry of pid (a retired one stays for the report, its pid may be reused) */
static struct jvm_ent *find_jvm(const struct join *j, __u32 pid)
{
	for (size_t i = 0; i < j->njvms; i++)
		if (j->jvms[i]->pid == pid && !j->jvms[i]->retired)
			return j->jvms[i];
	return NULL;
}

void join__set_jvm_name(struct join *j, __u32 pid, const char *name)
{
	struct jvm_ent *e = find_jvm(j, pid);

	if (e && name && *name)
		snprintf(e->name, sizeof(e->name), "%s", name);
}

void join__set_jvm_note(struct join *j, __u32 pid, const char *note)
{
	struct jvm_ent *e = find_jvm(j, pid);

	if (e)
		snprintf(e->note, sizeof(e->note), "%s", note);
}

void join__set_jvm_pending(struct join *j, __u32 pid, bool pending)
{
	struct jvm_ent *e = find_jvm(j, pid);

	if (e)
		e->pending = pending;
}

bool join__knows_jvm(const struct join *j, __u32 pid)
{
	return find_jvm(j, pid) != NULL;
}

bool join__has_jvm(const struct join *j, __u32 pid)
{
	struct jvm_ent *e = find_jvm(j, pid);

	return e && e->a;
}

int join__add_jvm(struct join *j, __u32 pid, __u32 nspid, const char *comm, struct jvm_agent *a)
{
	struct jvm_ent *e = find_jvm(j, pid), **n;

	/* the agent's dictionary names its code: the perf map it also writes is not read */
	if (a)
		syms__perfmap_off(j->syms, pid);
	if (e) { /* a JVM known without agent that got one */
		jvm_agent__free(e->a);
		e->a = a;
		e->serial = ++j->serials; /* its Java frames are looked up anew */
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->serial = ++j->serials;
	n = realloc(j->jvms, (j->njvms + 1) * sizeof(*n));
	if (!n) {
		free(e);
		return -ENOMEM;
	}
	j->jvms = n;
	e->pid = pid;
	e->nspid = nspid;
	e->a = a;
	dl_init(&e->pend);
	dl_init(&e->traces);
	dl_init(&e->jwait);
	dl_init(&e->unresolved);
	snprintf(e->comm, sizeof(e->comm), "%s", comm ? comm : "java");
	j->jvms[j->njvms++] = e;
	return 0;
}

/* ---- pid namespaces: the agent reports thread ids of its own namespace ---- */

static int by_nstid(const void *a, const void *b)
{
	const struct tid_pair *x = a, *y = b;

	return x->nstid < y->nstid ? -1 : x->nstid > y->nstid;
}

static int by_tid(const void *a, const void *b)
{
	const struct tid_pair *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* both directions by binary search: a JVM in a container may have thousands of threads */
static void tidmap_rescan(struct jvm_ent *e, __u64 now)
{
	char path[64], line[256];
	struct dirent *de;
	size_t n = 0, cap = 0;
	struct tid_pair *v = NULL;
	DIR *d;

	e->tids_scanned_ns = now;
	snprintf(path, sizeof(path), "/proc/%u/task", e->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned int tid, nstid = 0;
		FILE *f;

		if (sscanf(de->d_name, "%u", &tid) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/status", e->pid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "NSpid:", 6))
				continue;
			for (char *p = line + 6, *end; *p; p = end) {
				unsigned long x = strtoul(p, &end, 10);
				if (end == p)
					break;
				nstid = (__u32)x;
			}
			break;
		}
		fclose(f);
		if (!nstid)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct tid_pair *nv = realloc(v, nc * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		v[n].nstid = nstid;
		v[n].tid = tid;
		n++;
	}
	closedir(d);
	free(e->tids);
	free(e->by_host);
	e->tids = v;
	e->ntids = n;
	e->by_host = n ? malloc(n * sizeof(*v)) : NULL;
	if (n)
		qsort(v, n, sizeof(*v), by_nstid);
	if (e->by_host) {
		memcpy(e->by_host, v, n * sizeof(*v));
		qsort(e->by_host, n, sizeof(*v), by_tid);
	}
}

static __u32 host_tid(struct jvm_ent *e, __u32 nstid, __u64 now)
{
	struct tid_pair key = { .nstid = nstid }, *hit;

	if (e->pid == e->nspid)
		return nstid;
	for (int pass = 0; pass < 2; pass++) {
		hit = e->ntids ? bsearch(&key, e->tids, e->ntids, sizeof(key), by_nstid) : NULL;
		if (hit)
			return hit->tid;
		if (pass || now - e->tids_scanned_ns < TIDMAP_RESCAN_NS)
			break;
		tidmap_rescan(e, now);
	}
	return 0;
}

static __u32 ns_tid(struct jvm_ent *e, __u32 tid)
{
	struct tid_pair key = { .tid = tid }, *hit;

	if (e->pid == e->nspid)
		return tid;
	hit = e->by_host ? bsearch(&key, e->by_host, e->ntids, sizeof(key), by_tid) : NULL;
	return hit ? hit->nstid : 0;
}

/* ---- building stacks ---- */

static const char *pool_fmt(struct join *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *pool_fmt(struct join *j, const char *fmt, ...)
{
	size_t room = sizeof(j->pool) - j->pool_used;
	char *p = j->pool + j->pool_used;
	va_list ap;
	int n;

	if (room < 2)
		return "[...]";
	va_start(ap, fmt);
	n = vsnprintf(p, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return "[?]";
	j->pool_used += ((size_t)n < room ? (size_t)n : room - 1) + 1;
	return p;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* true for code in the JVM's code cache: JIT methods, the interpreter, stubs */
static bool in_code_cache(const struct jp_sym *sym)
{
	if (sym->kind == JP_FK_JIT)
		return true;
	if (!sym->dso)
		return true; /* anonymous executable memory */
	return !strcmp(sym->dso, "[jit]") || !strncmp(sym->dso, "[anon", 5) ||
	       !strcmp(sym->dso, "//anon") || !strcmp(sym->dso, "[perf-map]");
}

/* one frame of the stack being built, interned as a model location (name and file copied) */
static jp_id push_loc(struct join *j, size_t *n, const char *name, const char *file, bool java,
		      enum jp_frame_kind kind, __u64 addr, __s32 line)
{
	struct jp_location loc = { .addr = addr, .line = line, .kind = kind };
	jp_id id;

	if (*n >= JOIN_MAX_FRAMES)
		return 0;
	loc.func = model__func(j->model, name, file, java);
	id = loc.func ? model__location(j->model, &loc) : 0;
	if (!id) {
		j->st.model_full++;
		return 0;
	}
	j->locs[(*n)++] = id;
	return id;
}

static struct loc_cache_ent *loc_cache_slot(struct join *j, __u64 a, __u64 b, __u32 c)
{
	__u64 h = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ c * 0x165667b19e3779f9ull;

	return &j->lc[(h ^ h >> 29) & (LOC_CACHE_SLOTS - 1)];
}

/* pushes the cached location of key (a, b, c): true, or false when not cached */
static bool loc_cache_get(struct join *j, size_t *n, __u64 a, __u64 b, __u32 c)
{
	const struct loc_cache_ent *x;
	__u64 g;

	if (!j->lc)
		return false;
	g = syms__generation(j->syms);
	if (g != j->lc_syms_gen) {
		j->lc_syms_gen = g;
		j->lc_gen++; /* every entry of the old generation is a miss now */
	}
	x = loc_cache_slot(j, a, b, c);
	if (x->gen != j->lc_gen || x->a != a || x->b != b || x->c != c || !x->id)
		return false;
	if (*n < JOIN_MAX_FRAMES)
		j->locs[(*n)++] = x->id;
	return true;
}

static void loc_cache_put(struct join *j, __u64 a, __u64 b, __u32 c, jp_id id)
{
	struct loc_cache_ent *x;

	if (!j->lc || !id)
		return;
	x = loc_cache_slot(j, a, b, c);
	x->a = a;
	x->b = b;
	x->c = c;
	x->gen = j->lc_gen;
	x->id = id;
}

/* a marker or a name without address: syscall leaves, [off-cpu], [no Java stack: ...] */
static void push(struct join *j, size_t *n, const char *name, enum jp_frame_kind kind)
{
	push_loc(j, n, name, "", false, kind, 0, 0);
}

/*
 * A JIT method named by a perf map, in the dictionary's form ("pkg/Class.method"), so one
 * method has one name whichever source named it. The agent writes "pkg.Class::method", jcmd
 * Compiler.perfmap "ret pkg.Class.method(args)". NULL when name is no such method.
 */
static const char *java_from_perfmap(struct join *j, const char *name)
{
	const char *sep = strstr(name, "::"), *start = name, *end, *paren, *sp, *meth;
	size_t clen;
	char *out;

	paren = strchr(name, '(');
	end = paren ? paren : name + strlen(name);
	/* a return type before the name (jcmd): the last space before the parameters */
	for (sp = end; sp > name && sp[-1] != ' '; sp--)
		;
	if (sp > name)
		start = sp;
	if (sep && sep >= start && sep < end) {
		clen = (size_t)(sep - start);
		meth = sep + 2;
	} else {
		const char *dot = NULL;

		for (const char *p = start; p < end; p++)
			if (*p == '.')
				dot = p;
		if (!dot)
			return NULL;
		clen = (size_t)(dot - start);
		meth = dot + 1;
	}
	if (!clen || meth >= end)
		return NULL;
	out = (char *)pool_fmt(j, "%.*s.%.*s", (int)clen, start, (int)(end - meth), meth);
	if (out < j->pool || out >= j->pool + sizeof(j->pool))
		return NULL; /* the pool is full: pool_fmt gave a constant marker */
	for (size_t i = 0; i < clen && out[i]; i++)
		if (out[i] == '.')
			out[i] = '/';
	return out;
}

static jp_id push_user(struct join *j, size_t *n, __u64 addr, const struct jp_sym *sym)
{
	const char *dso = sym->dso ? sym->dso : "", *java;

	/*
	 * a frame in a file is the file's address, not this process's: the processes that run
	 * one binary (a JVM started again and again, a pool of servers) share its locations
	 * and their stacks in the model, where ASLR would make each process's its own
	 */
	if (sym->file_addr)
		addr = sym->file_addr;

	if (sym->name && sym->kind == JP_FK_JIT && (java = java_from_perfmap(j, sym->name)))
		return push_loc(j, n, java, "", true, JP_FK_JIT, addr, 0);
	if (sym->name)
		return push_loc(j, n, sym->name, dso, false, sym->kind, addr, 0);
	if (sym->dso)
		return push_loc(j, n,
				pool_fmt(j, "%s+0x%llx", base_name(sym->dso),
					 (unsigned long long)sym->offset),
				dso, false, sym->kind, addr, 0);
	return push_loc(j, n, "[unknown]", "", false, JP_FK_NATIVE, addr, 0);
}

static void resolve_user(struct join *j, __u32 pid, __u64 addr, struct jp_sym *sym)
{
	memset(sym, 0, sizeof(*sym));
	sym->kind = JP_FK_NATIVE;
	if (syms__user(j->syms, pid, addr, sym) < 0) {
		sym->name = NULL;
		sym->dso = NULL;
		sym->kind = JP_FK_NATIVE;
		sym->offset = addr;
	}
}

/*
 * The user frame at addr of pid, from the cache or resolved. With stop_at_code, a frame in
 * the code cache (where the Java frames take over) is not pushed: false.
 */
static bool push_user_frame(struct join *j, size_t *n, __u32 pid, __u64 addr, bool stop_at_code)
{
	struct jp_sym sym;

	if (loc_cache_get(j, n, LC_USER | pid, addr, 0))
		return true;
	/* where Java takes over, the JIT frame's name is not needed: no perf-map lookup */
	if (stop_at_code && syms__user_anon(j->syms, pid, addr))
		return false;
	resolve_user(j, pid, addr, &sym);
	if (in_code_cache(&sym)) {
		if (stop_at_code)
			return false;
		(void)push_user(j, n, addr, &sym);
		return true;
	}
	loc_cache_put(j, LC_USER | pid, addr, 0, push_user(j, n, addr, &sym));
	return true;
}

/* the leaf-most frames that say what a weight is: the slow syscall, or blocked time */
static void push_event_leaf(struct join *j, size_t *n, const struct jp_sample *s)
{
	if (s->kind == JP_EV_SYSCALL && s->syscall_nr >= 0)
		push(j, n, pool_fmt(j, "%s", syscall_name(s->syscall_nr)), JP_FK_ROOT);
	else if (s->kind == JP_EV_CPU && (s->flags & JP_SF_CPU_TAIL))
		push(j, n, "[cpu after the last sample]", JP_FK_ROOT);
	else if (s->kind == JP_EV_OFFCPU && (s->flags & JP_SF_RUNNABLE))
		push(j, n, "[runnable]", JP_FK_ROOT);
	else if (s->kind == JP_EV_OFFCPU && j->o.mark_offcpu)
		push(j, n, "[off-cpu]", JP_FK_ROOT);
}

/*
 * Stacks taken inside a tracepoint program start with the program itself and the
 * tracing glue (bpf_trace_run4, __bpf_trace_sched_switch): not the traced code's.
 */
static __u32 skip_bpf_frames(struct join *j, const struct jp_sample *s, const __u64 *kstack)
{
	struct jp_sym sym;

	for (__u32 i = 0; i < s->kstack_len && i < 4; i++) {
		if (syms__kernel(j->syms, kstack[i], &sym) == 0 && sym.name &&
		    (!strncmp(sym.name, "bpf_trace_run", 13) || !strncmp(sym.name, "__bpf_trace_", 12)))
			return i + 1;
	}
	return 0;
}

static void push_kernel(struct join *j, size_t *n, const struct jp_sample *s, const __u64 *kstack)
{
	struct jp_sym sym;

	push_event_leaf(j, n, s);
	for (__u32 i = s->kind == JP_EV_CPU ? 0 : skip_bpf_frames(j, s, kstack); i < s->kstack_len;
	     i++) {
		jp_id id;

		if (loc_cache_get(j, n, LC_KERNEL, kstack[i], 0))
			continue;
		if (syms__kernel(j->syms, kstack[i], &sym) == 0 && sym.name)
			id = push_loc(j, n, sym.name, sym.dso ? sym.dso : "[kernel]", false,
				      JP_FK_KERNEL, kstack[i], 0);
		else
			id = push_loc(j, n, "[unknown]", "[kernel]", false, JP_FK_KERNEL, kstack[i],
				      0);
		loc_cache_put(j, LC_KERNEL, kstack[i], 0, id);
	}
}

/* a Java frame: function in internal form ("pkg/Class.method"), source line when known */
static void push_java(struct join *j, size_t *n, struct jvm_ent *e, const struct java_frame *f)
{
	__u64 key = LC_JAVA | e->serial;
	__u32 c = (__u32)f->bci << 3 | ((__u32)f->kind & 7);
	const char *name;
	int line;
	jp_id id;

	if (loc_cache_get(j, n, key, f->method_id, c))
		return;
	if (!j->late && j->deadline_ns && ++j->late_count % JOIN_LATE_EVERY == 0 &&
	    mono_ns() > j->deadline_ns + JOIN_LATE_NS)
		j->late = true;
	if (j->late) {
		if (!j->late_marked)
			push(j, n, JOIN_LATE_MARKER, JP_FK_ROOT);
		j->late_marked = true;
		return;
	}
	name = jvm_agent__method_name(e->a, f->method_id, 0);
	line = f->bci >= 0 && name ? jvm_agent__line(e->a, f->method_id, f->bci) : -1;
	if (!name) {
		/* not cached: the dictionary may name it later */
		push_loc(j, n, "[unknown Java method]", "", false, f->kind, 0, 0);
		return;
	}
	id = push_loc(j, n, name, "", true, f->kind, 0, line > 0 ? line : 0);
	/* nor a line that the dictionary may still bring */
	if (line > 0 || f->bci < 0)
		loc_cache_put(j, key, f->method_id, c, id);
}

/* a stack is built: its JVM counts it when its Java frames were cut for time */
static void late_done(struct join *j, struct jvm_ent *e)
{
	if (j->late_marked && e)
		e->time_drops++;
	j->late_marked = false;
}

/*
 * err from the model: a refusal of its budget is a dropped sample (counted for its JVM),
 * not an error that ends the recording
 */
static int model_drop(struct join *j, struct jvm_ent *e, int err)
{
	if (!err || !model__over_budget(j->model))
		return err;
	if (e)
		e->model_drops++;
	j->st.model_drops++;
	return 0;
}

static struct last_cpu *last_cpu_slot(struct join *j, __u32 pid, __u32 tid)
{
	return &j->last[(pid * 2654435761u ^ tid * 40503u) % JOIN_LAST_SLOTS];
}

/* the slot's carried CPU time to its thread's last stack; 0 or -ENOMEM */
static int last_cpu_settle(struct join *j, struct last_cpu *l)
{
	__u64 c = l->carry_ns;

	l->carry_ns = 0;
	return c ? model_drop(j, NULL, model__add(j->model, l->stack, l->labels, JP_VAL_CPU_NS, c)) :
		   0;
}

/* the thread's slot, taken over from another thread (whose carry goes to its own stack) */
static struct last_cpu *last_own(struct join *j, __u32 pid, __u32 tid)
{
	struct last_cpu *l = last_cpu_slot(j, pid, tid);

	if (l->pid != pid || l->tid != tid) {
		(void)last_cpu_settle(j, l);
		memset(l, 0, sizeof(*l));
		l->pid = pid;
		l->tid = tid;
	}
	return l;
}

static void last_cpu_set(struct join *j, const struct jp_sample *s, jp_id stack, jp_id labels)
{
	struct last_cpu *l = last_own(j, s->pid, s->tid);

	l->stack = stack;
	l->labels = labels;
}

/*
 * The sample's labels, its stack (marker at the root end), and its values: a CPU sample
 * weighs the CPU time its thread ran since its previous sample (BPF reads the scheduler's
 * runtime); blocked and syscall time weigh their nanoseconds. A thread's CPU time after
 * its last sample comes at its exit, without stacks, and counts no sample. At the end each
 * thread's CPU time is spread over its stacks by their samples (model__spread_cpu).
 */
/* the sample's labels as a model id (0: out of memory) */
static jp_id sample_labels(struct join *j, const struct jp_sample *s, struct jvm_ent *e)
{
	char comm[JP_COMM_LEN + 1], pcomm[JP_COMM_LEN + 1];
	struct jp_labels l = { .pid = s->pid, .tid = s->tid, .cgroup = s->cgroup_id,
			       .container = cgroup_names__get(j->o.cgroups, s->cgroup_id) };

	memcpy(comm, s->comm, JP_COMM_LEN);
	comm[JP_COMM_LEN] = '\0';
	memcpy(pcomm, s->pcomm, JP_COMM_LEN);
	pcomm[JP_COMM_LEN] = '\0';
	if (!pcomm[0])
		memcpy(pcomm, comm, sizeof(pcomm));
	l.comm = pcomm;
	l.thread = e && e->a ? jvm_agent__thread_name(e->a, ns_tid(e, s->tid)) : NULL;
	if (!l.thread)
		l.thread = comm;
	return model__labels(j->model, &l);
}

static int commit(struct join *j, const struct jp_sample *s, struct jvm_ent *e, size_t n,
		  const char *marker)
{
	jp_id stack, labels;
	__u64 w;
	int err;

	/* off-CPU recorded only for -e lock's parks: the rest of the blocked time is not shown */
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only)
		return 0;
	if (marker)
		push(j, &n, marker, JP_FK_ROOT);
	late_done(j, e);
	j->pool_used = 0;
	stack = model__stack(j->model, j->locs, n);
	labels = sample_labels(j, s, e);
	if (!stack || !labels)
		return model_drop(j, e, -ENOMEM);
	j->committed = stack;
	switch (s->kind) {
	case JP_EV_CPU:
		w = s->weight;
		if (!(s->flags & JP_SF_CPU_TAIL) && !j->carried) {
			struct last_cpu *l = last_cpu_slot(j, s->pid, s->tid);

			last_cpu_set(j, s, stack, labels);
			w += l->carry_ns; /* the thread's samples without a Java stack since */
			l->carry_ns = 0;
		}
		err = 0;
		if (!(s->flags & JP_SF_CPU_TAIL))
			err = model__add(j->model, stack, labels, JP_VAL_CPU_SAMPLES, 1);
		if (!err && w)
			err = model__add(j->model, stack, labels, JP_VAL_CPU_NS, w);
		break;
	case JP_EV_OFFCPU:
		err = model__add(j->model, stack, labels, JP_VAL_OFFCPU_NS, s->weight);
		break;
	default:
		err = model__add(j->model, stack, labels, JP_VAL_SYSCALL_CALLS, 1);
		if (!err)
			err = model__add(j->model, stack, labels, JP_VAL_SYSCALL_NS, s->weight);
		break;
	}
	if (!err)
		j->st.samples++;
	return model_drop(j, e, err);
}

/*
 * A frame in a JVM's code cache, named by its agent's dictionary (it knows the code a perf
 * map would, and is read anyway): false when it is not such a frame. An address in
 * anonymous memory that no code holds (a frame-pointer walk gone astray in native code)
 * is "[unknown]", as it was when no perf map named it: not a Java frame.
 */
static bool push_agent_code(struct join *j, size_t *n, struct jvm_ent *e, __u32 pid, __u64 addr)
{
	const char *name;
	bool java;

	if (!e || !e->a || !syms__user_anon(j->syms, pid, addr))
		return false;
	name = jvm_agent__code_name(e->a, addr, &java);
	if (!name)
		push_loc(j, n, "[unknown]", "", false, JP_FK_NATIVE, addr, 0);
	else
		push_loc(j, n, name, "", java, java ? JP_FK_JIT : JP_FK_JVM, addr, 0);
	return true;
}

/*
 * A sample with only native information: names over the frame-pointer walk, JIT code
 * named by the JVM's agent when it has one, else by the perf map.
 */
static int add_native(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		      const __u64 *ustack, struct jvm_ent *e, const char *marker)
{
	size_t n = 0;

	push_kernel(j, &n, s, kstack);
	for (__u32 i = 0; i < s->ustack_len; i++)
		if (!push_agent_code(j, &n, e, s->pid, ustack[i]))
			(void)push_user_frame(j, &n, s->pid, ustack[i], false);
	return commit(j, s, e, n, marker);
}

/*
 * Kernel frames, native frames down to the code cache, then the Java frames. The
 * native frames below the Java entry (JavaCalls, thread start) are left out: the
 * frame-pointer walk reaches them only through interpreted frames or with
 * -XX:+PreserveFramePointer, so keeping them would put one Java stack under two
 * different roots depending on how far each walk got.
 */
/*
 * -e lock: a blocked interval whose Java stack enters LockSupport.park (the JDK's
 * Unsafe.park, a native method: the leaf Java frame, or next to it) is a
 * java.util.concurrent wait. It is one contention of its duration, with leaf "[park]" over
 * its Java frames, the monitor waits' form ("Class_[l]" over theirs). Not the blocker's
 * class: AGCT gives no locals, and GetStackTrace/GetObjectMonitorUsage here would run
 * JVMTI in the signal path. 1 when the interval was a park, 0 when not, -ENOMEM.
 */
static int add_park(struct join *j, const struct jp_sample *s, struct jvm_ent *e,
		    const struct java_trace *t)
{
	bool park = false;
	jp_id stack, labels;
	size_t n = 0;
	int err;

	if (!j->o.parks || s->kind != JP_EV_OFFCPU || (s->flags & (JP_SF_RUNNABLE | JP_SF_OPEN)))
		return 0;
	for (int f = 0; f < t->num_frames && f < 2 && !park; f++) {
		const char *name = jvm_agent__method_name(e->a, t->frames[f].method_id, 0);

		park = name && (!strcmp(name, "jdk/internal/misc/Unsafe.park") ||
				!strcmp(name, "sun/misc/Unsafe.park"));
	}
	if (!park)
		return 0;
	if (s->weight < j->o.lock_threshold_ns) {
		e->park_short++;
		return 1;
	}
	push(j, &n, "[park]", JP_FK_ROOT);
	for (int f = 0; f < t->num_frames; f++)
		push_java(j, &n, e, &t->frames[f]);
	late_done(j, e);
	j->pool_used = 0;
	stack = model__stack(j->model, j->locs, n);
	labels = sample_labels(j, s, e);
	if (!stack || !labels)
		return model_drop(j, e, -ENOMEM) ? -ENOMEM : 1;
	err = model__add(j->model, stack, labels, JP_VAL_CONTENTIONS, 1);
	if (!err)
		err = model__add(j->model, stack, labels, JP_VAL_DELAY_NS, s->weight);
	if (!err) {
		e->parks++;
		j->st.parks++;
		j->st.park_ns += s->weight;
	}
	err = model_drop(j, e, err);
	return err ? err : 1;
}

/* the agent's library: its handler's frames */
static bool is_agent_dso(const char *dso)
{
	const char *b = dso ? base_name(dso) : "";

	return !strncmp(b, "libjprofagent", 13) || !strncmp(b, "jprof-agent-", 12);
}

/*
 * The part of a sample's stack below its Java frames: the kernel stack, then the user
 * stack up to the first frame in the code cache (where the Java frames take over).
 */
static void push_native_part(struct join *j, size_t *n, const struct jp_sample *s,
			     const __u64 *kstack, const __u64 *ustack)
{
	push_kernel(j, n, s, kstack);
	for (__u32 i = 0; i < s->ustack_len; i++)
		if (!push_user_frame(j, n, s->pid, ustack[i], true))
			break;
}

/* the agent's frames (its signal handler) are on the sample's user stack, below Java */
static bool agent_on_stack(struct join *j, const struct jp_sample *s, const __u64 *ustack)
{
	struct jp_sym sym;

	for (__u32 i = 0; i < s->ustack_len; i++) {
		resolve_user(j, s->pid, ustack[i], &sym);
		if (in_code_cache(&sym))
			return false;
		if (is_agent_dso(sym.dso))
			return true;
	}
	return false;
}

static int add_java(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		    const __u64 *ustack, struct jvm_ent *e, const struct java_trace *t)
{
	size_t n = 0;
	int err = add_park(j, s, e, t);

	if (err < 0)
		return err;
	push_native_part(j, &n, s, kstack, ustack);
	j->java_from = n;
	for (int f = 0; f < t->num_frames; f++)
		push_java(j, &n, e, &t->frames[f]);
	return commit(j, s, e, n, NULL);
}

static const char *miss_marker(struct join *j, enum miss_reason r, int code)
{
	if (r == MISS_AGCT)
		return pool_fmt(j, "[no Java stack: %s]", java_trace_err_str(code));
	return pool_fmt(j, "[no Java stack: %s]", miss_names[r]);
}

/* a CPU sample of a Java thread, for the per-JVM completeness of CPU samples */
static void tally_cpu(struct jvm_ent *e, const struct jp_sample *s, bool complete, bool before)
{
	if (s->kind != JP_EV_CPU || (s->flags & JP_SF_CPU_TAIL))
		return;
	e->cpu_java++;
	e->cpu_complete += complete;
	e->cpu_before += before;
}

static int add_missing(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		       const __u64 *ustack, struct jvm_ent *e, enum miss_reason r, int code)
{
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only)
		return 0; /* no Java stack: not known to be a park, and not shown otherwise */
	e->samples++;
	e->java_samples++;
	e->miss[r]++;
	tally_cpu(e, s, false, r == MISS_PENDING || r == MISS_NO_AGENT);
	if (r == MISS_AGCT && code <= 0 && -code < 12)
		e->agct[-code]++;
	/*
	 * A CPU sample the agent was not asked about (its signal could not be sent: busy, or
	 * the thread still in the handler) passes its CPU time on to its thread's next sample,
	 * which has a Java stack; it still counts as a sample. Only for a thread with an
	 * earlier CPU sample, whose last stack takes the time if no other sample comes.
	 */
	if (s->kind == JP_EV_CPU && !(s->flags & JP_SF_CPU_TAIL) && e->a &&
	    (r == MISS_NOT_SENT || r == MISS_SIG_BUSY || r == MISS_SIG_ERR || r == MISS_FOLLOW)) {
		struct last_cpu *l = last_cpu_slot(j, s->pid, s->tid);

		if (l->pid == s->pid && l->tid == s->tid && l->stack) {
			struct jp_sample c = *s;
			int err;

			l->carry_ns += s->weight;
			c.weight = 0;
			j->carried = true; /* for commit, which add_native reaches */
			err = add_native(j, &c, kstack, ustack, e, miss_marker(j, r, code));
			j->carried = false;
			return err;
		}
	}
	return add_native(j, s, kstack, ustack, e, miss_marker(j, r, code));
}

/*
 * HotSpot JavaThreads that never run Java code (compilers, service threads) answer
 * AGCT with -3 ("unknown, not Java") rather than 0: their top frame lookup fails before
 * the no-Java-frame check. By their native thread names they are JVM-internal.
 */
static bool jvm_service_thread(const char *comm)
{
	static const char *const prefixes[] = {
		"C1 CompilerThre", "C2 CompilerThre", "Sweeper thread", "Service Thread",
		"Monitor Deflati", "Notification Th", "Signal Dispatch", "JVMCI",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(comm, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* a finished wait stays this long for the off-CPU sample of its end, which comes later */
#define WAIT_KEEP_NS (2ull * 1000 * 1000 * 1000)

/*
 * Issue 8: a thread blocked entering a contended monitor is in the VM, and AGCT cannot
 * walk it. If the blocked interval [time - weight, time] falls in a wait the agent
 * reported (MonitorContendedEnter .. Entered, Enter's stack from GetStackTrace), that
 * stack is the Java stack of the block: kernel and JVM frames of the wait over it.
 * A CPU sample (a point: its weight is CPU time) in such a wait is the thread spinning
 * for the monitor in the VM (ObjectMonitor's EnterI): the same Java stack.
 */
static int add_monitor_wait(struct join *j, const struct jp_sample *s, const __u64 *kstack,
			    const __u64 *ustack, struct jvm_ent *e)
{
	__u64 k1 = (__u64)e->pid << 32 | 2;
	__u64 start = s->kind == JP_EV_CPU ? s->time_ns : s->time_ns - s->weight;
	const struct ev_slot *w;
	const jp_id *jl;
	size_t n = 0, nj = 0;

	if ((s->flags & JP_SF_CPU_TAIL) || !e->a || !j->waits)
		return 1;
	w = ev_find(j->waits, EV_WAITS_CAP, k1, ns_tid(e, s->tid));
	/* 1 ms slack: the agent's and the kernel's clocks are read at different points */
	if (!w || !w->jstack || w->time_ns > s->time_ns ||
	    (w->end_ns && w->end_ns + 1000000 < start))
		return 1;
	jl = model__get_stack(j->model, w->jstack, &nj);
	if (!jl)
		return 1;
	push_native_part(j, &n, s, kstack, ustack);
	for (size_t i = 0; i < nj && n < JOIN_MAX_FRAMES; i++)
		j->locs[n++] = jl[i];
	e->samples++;
	e->java_samples++;
	e->complete++;
	e->monitor_joined++;
	tally_cpu(e, s, true, false);
	j->st.java_complete++;
	return commit(j, s, e, n, NULL);
}

/*
 * The kernel side stops asking a thread that answered "not a Java thread" for
 * NATIVE_AFTER_NS, and asks again (JP_SF_NATIVE_RECHECK) one that may have attached to
 * the JVM since: told here when it has.
 */
static void tell_native(struct join *j, const struct jp_sample *s, bool native)
{
	struct last_cpu *l = last_own(j, s->pid, s->tid);

	if (!native) {
		l->native_ns = 0;
		if (s->flags & JP_SF_NATIVE_RECHECK)
			j->o.native_thread(j->o.native_ctx, s->tid, false);
		return;
	}
	if (!l->native_ns || l->native_ns > s->time_ns)
		l->native_ns = s->time_ns;
	if (!(s->flags & JP_SF_NATIVE_RECHECK) && s->time_ns - l->native_ns >= NATIVE_AFTER_NS)
		j->o.native_thread(j->o.native_ctx, s->tid, true);
}

/* a sample meets its trace */
static int finish(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e, const struct java_trace *t)
{
	char comm[JP_COMM_LEN + 1];
	bool native;

	memcpy(comm, s->comm, JP_COMM_LEN);
	comm[JP_COMM_LEN] = '\0';
	native = t->num_frames == JAVA_TRACE_ERR_NOT_JAVA_THREAD ||
		 (t->num_frames == -3 && jvm_service_thread(comm));
	if (j->o.native_thread)
		tell_native(j, s, native);
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only) {
		int r = t->num_frames > 0 ? add_park(j, s, e, t) : 0;

		return r < 0 ? r : 0;
	}
	j->st.jvm_samples++;
	if (t->num_frames > 0) {
		e->samples++;
		e->java_samples++;
		e->complete++;
		tally_cpu(e, s, true, false);
		j->st.java_complete++;
		return add_java(j, s, kstack, ustack, e, t);
	}
	if (native || t->num_frames == 0) {
		/* JVM-internal thread, or a Java thread with no Java frame yet: natives are the truth */
		e->samples++;
		e->internal++;
		return add_native(j, s, kstack, ustack, e, NULL);
	}
	if (t->num_frames < 0) {
		int r = add_monitor_wait(j, s, kstack, ustack, e);

		if (r <= 0)
			return r;
	}
	if (t->num_frames == JAVA_TRACE_ERR_BUSY)
		return add_missing(j, s, kstack, ustack, e, MISS_AGENT_BUSY, 0);
	if (t->num_frames == JAVA_TRACE_ERR_FAULT)
		return add_missing(j, s, kstack, ustack, e, MISS_FAULT, 0);
	if (t->num_frames < JAVA_TRACE_ERR_MIN)
		return add_missing(j, s, kstack, ustack, e, MISS_OTHER, 0);
	return add_missing(j, s, kstack, ustack, e, MISS_AGCT, t->num_frames);
}

/* ---- pending samples and traces ---- */

static void pidset_add(struct join *j, __u32 pid)
{
	size_t i;

	if (j->pidset_n * 2 >= j->pidset_cap) {
		size_t nc = j->pidset_cap ? j->pidset_cap * 2 : 1024;
		__u32 *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return;
		for (i = 0; i < j->pidset_cap; i++) {
			__u32 p = j->pidset[i];
			size_t h;
			if (!p)
				continue;
			for (h = (p * 2654435761u) & (nc - 1); ns[h]; h = (h + 1) & (nc - 1))
				;
			ns[h] = p;
		}
		free(j->pidset);
		j->pidset = ns;
		j->pidset_cap = nc;
	}
	if (!j->pidset_cap)
		return;
	for (i = (pid * 2654435761u) & (j->pidset_cap - 1); j->pidset[i];
	     i = (i + 1) & (j->pidset_cap - 1))
		if (j->pidset[i] == pid)
			return;
	j->pidset[i] = pid;
	j->pidset_n++;
	j->st.processes = j->pidset_n;
}

/*
 * Waiting samples and traces sit on two lists each: their thread's queue (matching
 * looks only at the few entries of one tid) and their JVM's FIFO in arrival order
 * (expiry and the budgets look only at the oldest). Samples of one thread come out of
 * the one BPF ring in time order, so a thread's queue is sorted by time and the JVM's
 * FIFO nearly so. Every step is O(1) amortised per sample and per trace.
 */

static size_t thr_hash(__u32 pid, __u32 tid, size_t cap)
{
	__u64 k = ((__u64)pid << 32 | tid) * 0x9e3779b97f4a7c15ull;

	return (size_t)(k >> 32) & (cap - 1);
}

static struct thr *thr_find(const struct join *j, __u32 pid, __u32 tid)
{
	if (!j->thr_cap)
		return NULL;
	for (struct thr *t = j->thr_tab[thr_hash(pid, tid, j->thr_cap)]; t; t = t->hnext)
		if (t->pid == pid && t->tid == tid)
			return t;
	return NULL;
}

static int thr_grow(struct join *j)
{
	size_t nc = j->thr_cap ? j->thr_cap * 2 : 256;
	struct thr **nt = calloc(nc, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < j->thr_cap; i++) {
		for (struct thr *t = j->thr_tab[i], *next; t; t = next) {
			size_t h = thr_hash(t->pid, t->tid, nc);

			next = t->hnext;
			t->hnext = nt[h];
			nt[h] = t;
		}
	}
	free(j->thr_tab);
	j->thr_tab = nt;
	j->thr_cap = nc;
	return 0;
}

static struct thr *thr_get(struct join *j, __u32 pid, __u32 tid)
{
	struct thr *t = thr_find(j, pid, tid);
	size_t h;

	if (t)
		return t;
	/* a failed grow only makes the chains longer, unless there is no table yet */
	if ((j->thr_n + 1) * 2 > j->thr_cap && thr_grow(j) && !j->thr_cap)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->tid = tid;
	dl_init(&t->pend);
	dl_init(&t->traces);
	dl_init(&t->dnode);
	h = thr_hash(pid, tid, j->thr_cap);
	t->hnext = j->thr_tab[h];
	j->thr_tab[h] = t;
	j->thr_n++;
	return t;
}

/* forgets a thread once nothing of it waits: threads come and go */
static void thr_put(struct join *j, struct thr *t)
{
	struct thr **pp;

	if (!t || !dl_empty(&t->pend) || !dl_empty(&t->traces))
		return;
	for (pp = &j->thr_tab[thr_hash(t->pid, t->tid, j->thr_cap)]; *pp && *pp != t;
	     pp = &(*pp)->hnext)
		;
	if (*pp)
		*pp = t->hnext;
	dl_del(&t->dnode);
	j->thr_n--;
	free(t);
}

static void mark_dirty(struct join *j, struct thr *t)
{
	if (dl_empty(&t->dnode))
		dl_add_tail(&j->dirty, &t->dnode);
}

/* unlinks and frees a waiting sample; returns its thread for thr_put() when safe */
static struct thr *pend_free(struct join *j, struct pend *p)
{
	struct thr *t = p->thr;

	dl_del(&p->tnode);
	dl_del(&p->jnode);
	p->jvm->pend_bytes -= p->cost;
	j->pend_bytes -= p->cost;
	free(p);
	return t;
}

static struct thr *ptr_free(struct join *j, struct ptr *p)
{
	struct thr *t = p->thr;

	dl_del(&p->tnode);
	dl_del(&p->jnode);
	p->jvm->trace_bytes -= p->cost;
	j->trace_bytes -= p->cost;
	free(p);
	return t;
}

/* a waiting sample goes into the profile without its Java stack */
static int pend_give_up(struct join *j, struct pend *p, enum miss_reason r)
{
	int err;

	j->st.jvm_samples++;
	if (r == MISS_BACKLOG)
		j->st.backlog++;
	err = add_missing(j, &p->s, p->frames, p->frames + p->s.kstack_len, p->jvm, r, 0);
	thr_put(j, pend_free(j, p));
	return err;
}

/*
 * A thread exited: its CPU time after its last sample goes to that sample's stack, as each
 * sample's own weight is the CPU time before it. The sample may still wait for its Java
 * trace (then it takes the time), or be committed (the last_cpu slot); without either the
 * time stays on the thread under "[cpu after the last sample]".
 */
static int add_cpu_tail(struct join *j, const struct jp_sample *s, struct jvm_ent *e)
{
	struct thr *t = thr_find(j, s->pid, s->tid);
	struct last_cpu *l = last_cpu_slot(j, s->pid, s->tid);
	struct pend *p;

	if (t && !dl_empty(&t->pend)) {
		p = dl_entry(t->pend.prev, struct pend, tnode);
		if (p->s.kind == JP_EV_CPU) {
			p->s.weight += s->weight;
			return 0;
		}
	}
	if (l->pid == s->pid && l->tid == s->tid && l->stack) {
		l->carry_ns += s->weight;
		l->pid = 0; /* the thread is gone */
		return last_cpu_settle(j, l);
	}
	return add_native(j, s, NULL, NULL, e, NULL);
}

/* the sample waits for its trace (or, following a request, for that request's) */
/* the BPF walk's frames of a sample: they follow its user stack */
static const struct jp_jframe *jframes_of(const struct jp_sample *s, const __u64 *ustack)
{
	return (const struct jp_jframe *)(ustack + s->ustack_len);
}

/* the bytes a waiting copy of s holds: its stacks and the BPF walk's frames (two words each) */
static size_t pend_cost(const struct jp_sample *s)
{
	return sizeof(struct pend) +
	       ((size_t)s->kstack_len + s->ustack_len + 2 * (size_t)s->jstack_len) * sizeof(__u64);
}

/* a waiting copy of s (cost bytes) charged to e and the join, on no list yet; NULL: no memory */
static struct pend *pend_new(struct join *j, const struct jp_sample *s, const __u64 *kstack,
			     const __u64 *ustack, struct jvm_ent *e, size_t cost)
{
	struct pend *p = malloc(cost);

	if (!p)
		return NULL;
	if (s->kstack_len)
		memcpy(p->frames, kstack, (size_t)s->kstack_len * sizeof(__u64));
	if (s->ustack_len + s->jstack_len)
		memcpy(p->frames + s->kstack_len, ustack,
		       ((size_t)s->ustack_len + 2 * (size_t)s->jstack_len) * sizeof(__u64));
	p->s = *s;
	p->jvm = e;
	p->thr = NULL;
	p->cost = cost;
	dl_init(&p->tnode);
	e->pend_bytes += cost;
	j->pend_bytes += cost;
	return p;
}

static int pend_add(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		    const __u64 *ustack, struct jvm_ent *e)
{
	size_t cost = pend_cost(s);
	struct pend *p;
	struct thr *t;
	int err;

	/* over this JVM's budget its oldest sample stops waiting; over the total, this one */
	while (e->pend_bytes + cost > j->o.pend_budget_jvm && !dl_empty(&e->pend)) {
		err = pend_give_up(j, dl_entry(e->pend.next, struct pend, jnode), MISS_BACKLOG);
		if (err)
			return err;
	}
	if (e->pend_bytes + cost > j->o.pend_budget_jvm || j->pend_bytes + cost > j->o.pend_budget) {
		j->st.jvm_samples++;
		j->st.backlog++;
		return add_missing(j, s, kstack, ustack, e, MISS_BACKLOG, 0);
	}
	t = thr_get(j, s->pid, s->tid);
	if (!t)
		return -ENOMEM;
	p = pend_new(j, s, kstack, ustack, e, cost);
	if (!p) {
		thr_put(j, t);
		return -ENOMEM;
	}
	if (s->jstack_err && !e->jw) /* NULL: not compared */
		e->jw = jwalk__new(e->pid, j->o.jw_method, j->o.jw_ctx);
	p->thr = t;
	dl_add_tail(&t->pend, &p->tnode);
	dl_add_tail(&e->pend, &p->jnode);
	/* a trace that came before this sample was read is paired at the next join__poll */
	if (!dl_empty(&t->traces))
		mark_dirty(j, t);
	return 0;
}

/*
 * A CPU sample taken while the thread's previous stack request was pending or its
 * handler ran (JP_SF_FOLLOWS): the thread has not run Java code since that request, so
 * the request's trace is this sample's Java stack too; the sample's own kernel and native
 * frames stay its own (in the handler: the agent's frames, its cost, on top of the Java
 * stack it walks). A blocked signal is the handler only with its frames on the stack.
 */
static int add_follower(struct join *j, const struct jp_sample *s, const __u64 *kstack,
			const __u64 *ustack, struct jvm_ent *e)
{
	struct last_cpu *l = last_cpu_slot(j, s->pid, s->tid);
	const jp_id *jl;
	size_t n = 0, nj = 0;

	if ((s->flags & JP_SF_IN_HANDLER) && !agent_on_stack(j, s, ustack)) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e, MISS_NOT_SENT, 0);
	}
	if (l->pid != s->pid || l->tid != s->tid || !l->sig_ns || l->sig_ns > s->time_ns) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e, MISS_FOLLOW, 0);
	}
	if (l->lead_ns != l->sig_ns)
		return pend_add(j, s, kstack, ustack, e); /* its request still waits */
	if (l->lead_code <= 0) {
		struct java_trace t = { .num_frames = l->lead_code };

		e->followed++;
		return finish(j, s, kstack, ustack, e, &t);
	}
	j->st.jvm_samples++;
	jl = l->lead_stack ? model__get_stack(j->model, l->lead_stack, &nj) : NULL;
	if (!jl || l->lead_jfrom >= nj)
		return add_missing(j, s, kstack, ustack, e, MISS_FOLLOW, 0);
	push_native_part(j, &n, s, kstack, ustack);
	for (size_t i = l->lead_jfrom; i < nj && n < JOIN_MAX_FRAMES; i++)
		j->locs[n++] = jl[i];
	e->samples++;
	e->java_samples++;
	e->complete++;
	e->followed++;
	tally_cpu(e, s, true, false);
	j->st.java_complete++;
	return commit(j, s, e, n, NULL);
}

/*
 * A sample BPF walked whole and did not signal (--java-walk bpf): its Java stack is
 * BPF's frames, named here; one that cannot be named is counted missing
 */
static int add_jwalked(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		       const __u64 *ustack, struct jvm_ent *e)
{
	size_t cost = pend_cost(s);
	struct java_trace tr;
	struct pend *p;

	if (!e->jw)
		e->jw = jwalk__new(e->pid, j->o.jw_method, j->o.jw_ctx);
	if (!jwalk__trace(e->jw, e->a, s, jframes_of(s, ustack), &tr))
		return finish(j, s, kstack, ustack, e, &tr);
	/* the first to wait reads what the dictionary has gained (the others wait for it) */
	if (dl_empty(&e->jwait) && jvm_agent__dict_refresh(e->a) != e->jwait_dict &&
	    !jwalk__trace(e->jw, e->a, s, jframes_of(s, ustack), &tr))
		return finish(j, s, kstack, ustack, e, &tr);
	/* it waits for the dictionary, within the budget of samples waiting for traces */
	if (e->pend_bytes + cost > j->o.pend_budget_jvm || j->pend_bytes + cost > j->o.pend_budget ||
	    !(p = pend_new(j, s, kstack, ustack, e, cost))) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e, MISS_JWALK, 0);
	}
	dl_add_tail(&e->jwait, &p->jnode);
	return 0;
}

/*
 * The samples waiting for the dictionary to name their code: named now, or (all, or
 * waited JOIN_WAIT_NS) counted missing
 */
static int jwait_retry(struct join *j, struct jvm_ent *e, bool all)
{
	struct dl *n = e->jwait.next;
	/* named by what the dictionary gained since they were last tried, or never */
	__u64 size = jvm_agent__dict_read(e->a);
	bool grown = size != e->jwait_dict;
	int err = 0;

	e->jwait_dict = size;
	while (n != &e->jwait && !err) {
		struct pend *p = dl_entry(n, struct pend, jnode);
		const __u64 *ustack = p->frames + p->s.kstack_len;
		struct java_trace tr;

		n = n->next;
		if ((grown || all) && !jwalk__trace(e->jw, e->a, &p->s, jframes_of(&p->s, ustack), &tr)) {
			err = finish(j, &p->s, p->frames, ustack, e, &tr);
		} else if (all || p->s.time_ns + JOIN_WAIT_NS <= j->now_ns) {
			j->st.jvm_samples++;
			err = add_missing(j, &p->s, p->frames, ustack, e, MISS_JWALK, 0);
		} else {
			continue;
		}
		pend_free(j, p);
	}
	return err;
}

int join__sample(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		 const __u64 *ustack)
{
	struct jvm_ent *e = find_jvm(j, s->pid);

	if (s->pid)
		pidset_add(j, s->pid);
	if (s->kind == JP_EV_CPU && (s->flags & JP_SF_CPU_TAIL))
		return add_cpu_tail(j, s, e);
	/* only a JVM thread's interval with a Java stack can be a park */
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only &&
	    (!e || !e->a || (s->flags & JP_SF_OPEN) || !(s->flags & JP_SF_SIGNALED) || s->sig_err))
		return 0;
	if (!e)
		return add_native(j, s, kstack, ustack, NULL, NULL);
	if (!e->a) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e, e->pending ? MISS_PENDING : MISS_NO_AGENT,
				   0);
	}
	if (s->flags & JP_SF_OPEN) {
		/* never signalled (it would wake), but a monitor wait it is in has its stack */
		int r = add_monitor_wait(j, s, kstack, ustack, e);

		j->st.jvm_samples++;
		if (r <= 0)
			return r;
		return add_missing(j, s, kstack, ustack, e, MISS_OPEN, 0);
	}
	if (s->flags & JP_SF_NATIVE_THREAD) {
		/* the agent said so earlier: a JVM-internal thread, not asked again */
		j->st.jvm_samples++;
		e->samples++;
		e->internal++;
		e->internal_known++;
		return add_native(j, s, kstack, ustack, e, NULL);
	}
	if (s->flags & JP_SF_JWALK)
		return add_jwalked(j, s, kstack, ustack, e);
	if (s->kind == JP_EV_CPU && (s->flags & JP_SF_FOLLOWS))
		return add_follower(j, s, kstack, ustack, e);
	if (!(s->flags & JP_SF_SIGNALED)) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e, MISS_NOT_SENT, 0);
	}
	if (s->sig_err) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e,
				   s->sig_err == -EBUSY ? MISS_SIG_BUSY : MISS_SIG_ERR, 0);
	}
	last_own(j, s->pid, s->tid)->sig_ns = s->time_ns;
	return pend_add(j, s, kstack, ustack, e);
}

/*
 * The newest waiting request of the thread not later than time: a walk from the newest.
 * Samples that follow a request (JP_SF_FOLLOWS) are not requests: they go with theirs.
 */
static struct pend *pend_match(struct thr *t, __u64 time)
{
	for (struct dl *n = t->pend.prev; n != &t->pend; n = n->prev) {
		struct pend *p = dl_entry(n, struct pend, tnode);

		if (!(p->s.flags & JP_SF_FOLLOWS) && p->s.time_ns <= time)
			return p;
	}
	return NULL;
}

/*
 * A request meets its trace; the thread's slot keeps the outcome for the samples that
 * followed the request and are read later.
 */
static int finish_lead(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		       const __u64 *ustack, struct jvm_ent *e, const struct java_trace *t)
{
	struct last_cpu *l;
	int err;

	j->committed = 0;
	err = finish(j, s, kstack, ustack, e, t);
	if (err)
		return err;
	l = last_own(j, s->pid, s->tid);
	l->lead_ns = s->time_ns;
	l->lead_code = t->num_frames;
	l->lead_stack = t->num_frames > 0 ? j->committed : 0;
	l->lead_jfrom = (__u32)j->java_from;
	return 0;
}

/*
 * A waiting request p meets its trace, and so do the samples that followed it (next to it
 * in the thread's list: no other request can be made while one is pending or handled).
 * Frees them all; the caller puts the thread.
 */
static int finish_request(struct join *j, struct pend *p, struct jvm_ent *e,
			  const struct java_trace *tr)
{
	struct thr *t = p->thr;
	struct dl *n = p->tnode.next;
	const __u64 *ustack = p->frames + p->s.kstack_len;
	int err;

	if (p->s.jstack_err && e->a)
		jwalk__compare(e->jw, e->a, &p->s, jframes_of(&p->s, ustack), tr);
	err = finish_lead(j, &p->s, p->frames, ustack, e, tr);

	while (!err && n != &t->pend) {
		struct pend *f = dl_entry(n, struct pend, tnode);

		if (!(f->s.flags & JP_SF_FOLLOWS))
			break;
		n = n->next;
		e->followed++;
		err = finish(j, &f->s, f->frames, f->frames + f->s.kstack_len, e, tr);
		pend_free(j, f);
	}
	pend_free(j, p);
	return err;
}

static int keep_trace(struct join *j, struct jvm_ent *e, __u32 tid, const struct java_trace *tr)
{
	size_t nf = tr->num_frames > 0 ? (size_t)tr->num_frames : 0;
	size_t cost = sizeof(struct ptr) + nf * sizeof(struct java_frame);
	struct thr *t = NULL;
	struct ptr *p;

	/* no thread has id 0: an agent that says so would only make us rescan the tid map */
	if (!tr->tid) {
		e->unmatched++;
		j->st.unmatched_traces++;
		return 0;
	}
	/* over this JVM's budget its oldest trace goes; over the total, this one */
	if (cost > j->o.trace_budget_jvm || j->trace_bytes + cost > j->o.trace_budget) {
		e->trace_drops++;
		j->st.trace_drops++;
		return 0;
	}
	while (e->trace_bytes + cost > j->o.trace_budget_jvm && !dl_empty(&e->traces)) {
		thr_put(j, ptr_free(j, dl_entry(e->traces.next, struct ptr, jnode)));
		e->trace_drops++;
		j->st.trace_drops++;
	}
	if (tid) {
		t = thr_get(j, e->pid, tid);
		if (!t)
			return -ENOMEM;
	}
	p = malloc(cost);
	if (!p) {
		thr_put(j, t);
		return -ENOMEM;
	}
	if (nf)
		memcpy(p->frames, tr->frames, nf * sizeof(struct java_frame));
	p->t = *tr;
	p->t.frames = p->frames;
	p->jvm = e;
	p->thr = t;
	p->cost = cost;
	p->seen_ns = j->now_ns;
	dl_add_tail(t ? &t->traces : &e->unresolved, &p->tnode);
	dl_add_tail(&e->traces, &p->jnode);
	e->trace_bytes += cost;
	j->trace_bytes += cost;
	return 0;
}

/*
 * After a record: 0 to read the next, -EAGAIN when this JVM's records of the round are
 * read or the round's time is up (the record is consumed; the rest waits in the ring)
 */
static int round_next(struct join *j)
{
	if (!--j->round_left)
		return -EAGAIN;
	if (j->deadline_ns && mono_ns() > j->deadline_ns) {
		j->round_left = 0;
		return -EAGAIN;
	}
	return 0;
}

static int on_trace(void *ctx, const struct java_trace *tr)
{
	struct join *j = ctx;
	struct jvm_ent *e = j->cur_jvm;
	__u32 tid = host_tid(e, tr->tid, j->now_ns);
	struct thr *t = tid ? thr_find(j, e->pid, tid) : NULL;
	struct pend *p = t ? pend_match(t, tr->time_ns) : NULL;
	int err;

	j->traces_read++;
	if (p) {
		err = finish_request(j, p, e, tr);
		thr_put(j, t);
	} else if (j->end_ns && tr->time_ns > j->end_ns) {
		/* answers a sample taken after the recording ended, which is not read */
		err = 0;
	} else {
		err = keep_trace(j, e, tid, tr);
	}
	if (err)
		return err;
	return round_next(j);
}

/*
 * A JNI class signature as a Java name: "Ljava/lang/String;" -> "java.lang.String",
 * "[[I" -> "int[][]". Untrusted: bounded, odd input is kept as it is.
 */
static const char *class_display(struct join *j, const char *sig)
{
	static const char prim[] = "ZBCSIJFD";
	static const char *const pname[] = { "boolean", "byte", "char", "short",
					     "int",	"long", "float", "double" };
	char buf[300];
	size_t dims = 0, w = 0, n;
	const char *p;

	if (!sig)
		return "[unknown class]";
	while (sig[dims] == '[' && dims < 16)
		dims++;
	p = sig + dims;
	n = strlen(p);
	if (p[0] == 'L' && n >= 2 && p[n - 1] == ';') {
		n -= 2;
		if (n > 255)
			n = 255;
		for (size_t i = 0; i < n; i++)
			buf[w++] = p[1 + i] == '/' ? '.' : p[1 + i];
	} else if (n == 1 && strchr(prim, p[0])) {
		const char *t = pname[strchr(prim, p[0]) - prim];

		w = strlen(t);
		memcpy(buf, t, w);
	} else {
		return pool_fmt(j, "%.255s", sig);
	}
	for (size_t i = 0; i < dims; i++) {
		buf[w++] = '[';
		buf[w++] = ']';
	}
	buf[w] = '\0';
	return pool_fmt(j, "%s", buf);
}

/* the event's stack (class leaf, then its Java frames) and labels as model ids */
static int event_ids(struct join *j, struct jvm_ent *e, const struct java_event *ev,
		     const char *leaf_fmt, jp_id *ret_stack, jp_id *ret_labels, jp_id *ret_jstack)
{
	struct jp_labels l = { .pid = e->pid, .cgroup = 0, .container = "" };
	size_t n = 0;

	j->pool_used = 0;
	l.tid = host_tid(e, ev->tid, j->now_ns);
	l.comm = e->comm;
	l.thread = jvm_agent__thread_name(e->a, ev->tid);
	if (!l.thread)
		l.thread = pool_fmt(j, "tid-%u", ev->tid);
	if (leaf_fmt) {
		const char *cls = class_display(j, jvm_agent__class_name(e->a, ev->class_id));

		push(j, &n, pool_fmt(j, leaf_fmt, cls), JP_FK_ROOT);
	}
	for (int i = 0; i < ev->num_frames; i++)
		push_java(j, &n, e, &ev->frames[i]);
	late_done(j, e);
	*ret_stack = model__stack(j->model, j->locs, n);
	*ret_labels = model__labels(j->model, &l);
	if (ret_jstack)
		*ret_jstack = n > 1 ? model__stack(j->model, j->locs + 1, n - 1) : 0;
	return *ret_stack && *ret_labels ? 0 : -ENOMEM;
}

static void age_add(struct join *j, jp_id stack, __u64 age_ns)
{
	__u64 *n = j->ages_other;
	int b = 0;

	for (__u64 lim = 1000000; b < AGE_BUCKETS - 1 && age_ns >= lim; lim *= 10)
		b++;
	for (size_t i = 0; i < j->nages; i++) {
		if (j->ages[i].stack == stack) {
			n = j->ages[i].n;
			goto add;
		}
	}
	if (j->nages < AGE_SITES) {
		if (!j->ages)
			j->ages = calloc(AGE_SITES, sizeof(*j->ages));
		if (j->ages) {
			j->ages[j->nages].stack = stack;
			n = j->ages[j->nages++].n;
		}
	}
add:
	n[b]++;
}

/* the table of waits is full: forget the waits that ended long enough ago */
static void waits_sweep(struct join *j, __u64 now)
{
	for (size_t i = 0; j->waits && i < EV_WAITS_CAP;) {
		struct ev_slot *w = &j->waits[i];

		if (w->k1 && w->end_ns && w->end_ns + WAIT_KEEP_NS < now)
			ev_del(j->waits, EV_WAITS_CAP, &j->nwaits, w); /* i again: shifted into */
		else
			i++;
	}
}

/*
 * An agent event (jvmagent/events.c). Allocations are samples of their own; a monitor
 * wait is one once its end comes (Entered, paired by thread: a thread waits for one
 * monitor at a time); an object tracked live is one at the end unless freed first.
 */
static int on_event(void *ctx, const struct java_event *ev)
{
	struct join *j = ctx;
	struct jvm_ent *e = j->cur_jvm;
	struct ev_slot *w;
	jp_id stack, labels, jstack = 0;
	__u64 k1 = (__u64)e->pid << 32 | 1, objects;
	__u32 want = j->o.joined_events;
	int err = 0;

	j->traces_read++;
	/* only what -e asked for is joined: another kind costs a count, not a stack */
	if (!((ev->kind == JP_AEV_ALLOC && want & (JP_AGENT_EV_ALLOC | JP_AGENT_EV_LIVE)) ||
	      (ev->kind == JP_AEV_FREE && want & JP_AGENT_EV_LIVE) ||
	      ((ev->kind == JP_AEV_MONITOR_ENTER || ev->kind == JP_AEV_MONITOR_ENTERED ||
		ev->kind == JP_AEV_MONITOR_BLOCKED) &&
	       want & JP_AGENT_EV_LOCK))) {
		e->ev_skipped++;
		return round_next(j);
	}
	switch (ev->kind) {
	case JP_AEV_ALLOC:
		e->ev_allocs++;
		err = event_ids(j, e, ev, "%s_[a]", &stack, &labels, NULL);
		if (err)
			break;
		/* weight = size / p, so 1/p objects = weight / size (at least the one seen) */
		objects = ev->size ? (ev->weight + ev->size / 2) / ev->size : 1;
		if (!objects)
			objects = 1;
		err = model__add(j->model, stack, labels, JP_VAL_ALLOC_SPACE, ev->weight);
		if (!err)
			err = model__add(j->model, stack, labels, JP_VAL_ALLOC_OBJECTS, objects);
		if (!err && ev->tag) {
			w = ev_add(&j->live, EV_LIVE_CAP, &j->nlive, k1, ev->tag);
			if (!w) {
				e->ev_over_budget++;
				break;
			}
			w->stack = stack;
			w->labels = labels;
			w->time_ns = ev->time_ns;
			w->space = ev->weight;
			w->objects = objects;
		}
		break;
	case JP_AEV_FREE:
		e->ev_frees++;
		w = ev_find(j->live, EV_LIVE_CAP, k1, ev->tag);
		if (w) {
			age_add(j, w->stack, ev->time_ns > w->time_ns ? ev->time_ns - w->time_ns : 0);
			ev_del(j->live, EV_LIVE_CAP, &j->nlive, w);
		}
		break;
	case JP_AEV_MONITOR_BLOCKED:
		/*
		 * Found blocked by the agent's scan after a late attach: a wait since the scan,
		 * unless the thread's wait is known already (its Enter came after the events
		 * were on) or it entered since the scan (its Entered came first).
		 */
		w = ev_find(j->waits, EV_WAITS_CAP, (__u64)e->pid << 32 | 2, ev->tid);
		if (w && (!w->end_ns || w->end_ns >= ev->time_ns || w->time_ns >= ev->time_ns))
			break;
		e->ev_blocked_at_attach++;
		/* fallthrough */
	case JP_AEV_MONITOR_ENTER:
		err = event_ids(j, e, ev, "%s_[l]", &stack, &labels, &jstack);
		if (err)
			break;
		k1 = (__u64)e->pid << 32 | 2;
		w = ev_find(j->waits, EV_WAITS_CAP, k1, ev->tid);
		if (!w)
			w = ev_add(&j->waits, EV_WAITS_CAP, &j->nwaits, k1, ev->tid);
		if (!w) {
			waits_sweep(j, ev->time_ns);
			w = ev_add(&j->waits, EV_WAITS_CAP, &j->nwaits, k1, ev->tid);
		}
		if (!w) {
			e->ev_over_budget++;
			break;
		}
		w->stack = stack;
		w->labels = labels;
		w->jstack = jstack;
		w->time_ns = ev->time_ns;
		w->end_ns = 0;
		break;
	case JP_AEV_MONITOR_ENTERED:
		k1 = (__u64)e->pid << 32 | 2;
		w = ev_find(j->waits, EV_WAITS_CAP, k1, ev->tid);
		if (!w || w->end_ns) {
			e->ev_orphan++; /* its Enter was dropped, or came before the recording */
			/* kept: a scan record of this thread older than this is no wait */
			if (!w && (w = ev_add(&j->waits, EV_WAITS_CAP, &j->nwaits, k1, ev->tid))) {
				w->stack = w->labels = w->jstack = 0;
				w->time_ns = 0;
				w->end_ns = ev->time_ns ? ev->time_ns : 1;
			}
			break;
		}
		if (ev->time_ns >= w->time_ns && ev->time_ns - w->time_ns >= j->o.lock_threshold_ns) {
			e->ev_locks++;
			err = model__add(j->model, w->stack, w->labels, JP_VAL_CONTENTIONS, 1);
			if (!err)
				err = model__add(j->model, w->stack, w->labels, JP_VAL_DELAY_NS,
						 ev->time_ns - w->time_ns);
		} else {
			e->ev_lock_short++;
		}
		/* kept a while: the off-CPU sample of this wait comes after its end */
		w->end_ns = ev->time_ns ? ev->time_ns : 1;
		break;
	default:
		break;
	}
	err = model_drop(j, e, err);
	if (err)
		return err;
	return round_next(j);
}

/* at the end: what was sampled and never freed is live (inuse_space / inuse_objects) */
static int add_live(struct join *j)
{
	int err = 0;

	for (size_t i = 0; j->live && i < EV_LIVE_CAP && !err; i++) {
		struct ev_slot *w = &j->live[i];

		if (!w->k1)
			continue;
		err = model__add(j->model, w->stack, w->labels, JP_VAL_INUSE_SPACE, w->space);
		if (!err)
			err = model__add(j->model, w->stack, w->labels, JP_VAL_INUSE_OBJECTS,
					 w->objects);
		err = model_drop(j, NULL, err);
	}
	return err;
}

/* the waiting traces of a thread that got new samples, oldest first */
static int retry_thread(struct join *j, struct thr *t)
{
	struct dl *n = t->traces.next;
	int err = 0;

	while (n != &t->traces && !dl_empty(&t->pend)) {
		struct ptr *tr = dl_entry(n, struct ptr, tnode);
		struct pend *p = pend_match(t, tr->t.time_ns);

		n = n->next;
		if (!p)
			continue;
		err = finish_request(j, p, tr->jvm, &tr->t);
		/* the thread stays: thr_put() only after the walk */
		ptr_free(j, tr);
		if (err)
			break;
	}
	thr_put(j, t);
	return err;
}

/* traces of threads not in the tid map yet: tried again after each rescan of the map */
static int retry_unresolved(struct join *j, struct jvm_ent *e)
{
	struct dl *n;

	if (dl_empty(&e->unresolved))
		return 0;
	if (j->now_ns - e->tids_scanned_ns >= TIDMAP_RESCAN_NS)
		tidmap_rescan(e, j->now_ns);
	if (e->unresolved_scan_ns == e->tids_scanned_ns)
		return 0;
	e->unresolved_scan_ns = e->tids_scanned_ns;
	for (n = e->unresolved.next; n != &e->unresolved;) {
		struct ptr *tr = dl_entry(n, struct ptr, tnode);
		__u32 tid = host_tid(e, tr->t.tid, j->now_ns);
		struct thr *t;

		n = n->next;
		if (!tid)
			continue;
		t = thr_get(j, e->pid, tid);
		if (!t)
			return -ENOMEM;
		dl_del(&tr->tnode);
		dl_add_tail(&t->traces, &tr->tnode);
		tr->thr = t;
		mark_dirty(j, t);
	}
	return 0;
}

static int retry_dirty(struct join *j)
{
	int err;

	while (!dl_empty(&j->dirty)) {
		struct thr *t = dl_entry(j->dirty.next, struct thr, dnode);

		dl_del(&t->dnode);
		err = retry_thread(j, t);
		if (err)
			return err;
	}
	return 0;
}

/* what waited past the bound, oldest first; everything when all */
static int expire(struct join *j, struct jvm_ent *e, bool all)
{
	int err = e->a ? jwait_retry(j, e, all) : 0;

	if (err)
		return err;
	while (!dl_empty(&e->traces)) {
		struct ptr *tr = dl_entry(e->traces.next, struct ptr, jnode);

		if (!all && j->now_ns - tr->seen_ns < JOIN_WAIT_NS)
			break;
		e->unmatched++;
		j->st.unmatched_traces++;
		thr_put(j, ptr_free(j, tr));
	}
	while (!dl_empty(&e->pend)) {
		struct pend *p = dl_entry(e->pend.next, struct pend, jnode);

		if (!all && p->s.time_ns + JOIN_WAIT_NS > j->now_ns)
			break;
		err = pend_give_up(j, p, MISS_NO_TRACE);
		if (err)
			return err;
	}
	return 0;
}

/*
 * One round over the agent rings: at most traces_per_round records of each JVM, and
 * no next JVM once the round took JOIN_POLL_ROUND_NS; the JVM read first rotates so a
 * busy one cannot starve the others. Returns true when a ring may hold more.
 */
static bool poll_agents(struct join *j)
{
	__u64 t0 = mono_ns();
	bool more = false;
	int err;

	for (size_t k = 0; k < j->njvms; k++) {
		struct jvm_ent *e = j->jvms[(j->rr + k) % j->njvms];

		if (!e->a)
			continue;
		if (k && (mono_ns() - t0 > JOIN_POLL_ROUND_NS ||
			  (j->deadline_ns && mono_ns() > j->deadline_ns))) {
			more = true;
			break;
		}
		j->cur_jvm = e;
		j->round_left = j->o.traces_per_round;
		/* without -e alloc, live or lock no event is looked at: counted as unread */
		err = jvm_agent__poll_events(e->a, on_trace, j->o.joined_events ? on_event : NULL, j);
		if (err == -EAGAIN && !j->round_left)
			more = true;
		else if (err < 0 && err != -EAGAIN)
			pr_debug("JVM %u: reading the agent ring: %s", e->pid, strerror(-err));
	}
	if (j->njvms)
		j->rr = (j->rr + 1) % j->njvms;
	j->cur_jvm = NULL;
	return more;
}

/*
 * The time reading the rings and pairing their records may take from now (until, 0: no
 * bound): how long the poll loop waits for the join, whatever the records hold
 */
static void time_bound(struct join *j, __u64 until)
{
	j->deadline_ns = until;
	j->late = j->late_marked = false;
	j->late_count = 0;
}

static int pair_and_expire(struct join *j, bool all)
{
	int err;

	for (size_t i = 0; i < j->njvms; i++) {
		err = retry_unresolved(j, j->jvms[i]);
		if (err)
			return err;
	}
	err = retry_dirty(j);
	for (size_t i = 0; i < j->njvms && !err; i++)
		err = expire(j, j->jvms[i], all);
	return err;
}

/*
 * Rounds over the agent rings until they are drained or JOIN_POLL_ROUND_NS is spent: one
 * round (4,096 records per JVM) per 100 ms poll was 41,000 records a second, and a JVM
 * under heavy monitor contention writes more (64,000 events a second, its ring full).
 */
int join__poll(struct join *j, __u64 now_ns)
{
	__u64 t0 = mono_ns();
	int err;

	j->now_ns = now_ns ? now_ns : t0;
	time_bound(j, t0 + JOIN_POLL_ROUND_NS);
	for (int n = 0;
	     poll_agents(j) && ++n < JOIN_POLL_ROUNDS && mono_ns() - t0 < JOIN_POLL_ROUND_NS;)
		;
	err = pair_and_expire(j, false);
	time_bound(j, 0);
	return err;
}

/* forgets a pid's entries in an event table (its JVM is gone: nothing of it is alive) */
static void ev_drop_pid(struct ev_slot *t, size_t cap, size_t *n, __u32 pid)
{
	for (size_t i = 0; t && i < cap;) {
		if (t[i].k1 && t[i].k1 >> 32 == pid)
			ev_del(t, cap, n, &t[i]); /* i again: shifted into */
		else
			i++;
	}
}

/* the agent goes, its figures stay for the report */
static void free_agent(struct jvm_ent *e)
{
	jvm_agent__stats(e->a, &e->final);
	jvm_agent__free(e->a);
	e->a = NULL;
	e->final_kept = true;
}

int join__retire_jvm(struct join *j, __u32 pid, __u64 now_ns)
{
	struct jvm_ent *e = find_jvm(j, pid);
	int err = 0, n = 0;

	if (!e || e->retired)
		return 0;
	if (e->a) {
		/* what its ring still holds (in a round's time), then no sample of it waits */
		time_bound(j, mono_ns() + JOIN_POLL_ROUND_NS);
		j->cur_jvm = e;
		do {
			j->round_left = j->o.traces_per_round;
			err = jvm_agent__poll_events(e->a, on_trace,
						     j->o.joined_events ? on_event : NULL, j);
		} while (err == -EAGAIN && !j->round_left && mono_ns() <= j->deadline_ns &&
			 ++n < 64);
		j->cur_jvm = NULL;
		j->now_ns = now_ns;
		err = retry_dirty(j);
		if (!err)
			err = expire(j, e, true);
		time_bound(j, 0);
		e->unread_end += jvm_agent__unread(e->a);
		free_agent(e);
	}
	ev_drop_pid(j->live, EV_LIVE_CAP, &j->nlive, pid);
	ev_drop_pid(j->waits, EV_WAITS_CAP, &j->nwaits, pid);
	free(e->tids);
	free(e->by_host);
	e->tids = e->by_host = NULL;
	e->ntids = 0;
	e->retired = true;
	e->pending = false;
	return err;
}

int join__flush(struct join *j)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	__u64 t0 = mono_ns(), seen;
	bool napped = false;
	int err;

	j->end_ns = t0;
	time_bound(j, t0 + JOIN_FLUSH_NS);
	/*
	 * What the agents wrote up to now, then, while samples still wait, what they write
	 * next: a thread sampled just before the end answers when it next runs, which on a
	 * saturated host is a while. Within a bound: the deadline is kept.
	 */
	for (;;) {
		j->now_ns = mono_ns();
		if (j->now_ns - t0 >= JOIN_FLUSH_NS)
			break;
		seen = j->traces_read;
		if (!poll_agents(j)) {
			err = pair_and_expire(j, false);
			if (err)
				return err;
			/* done when nothing waits, or when a nap brought nothing */
			if (!j->pend_bytes || (napped && j->traces_read == seen))
				break;
			nanosleep(&nap, NULL);
			napped = true;
		}
	}
	j->now_ns = mono_ns();
	err = pair_and_expire(j, true);
	time_bound(j, 0);
	/* what the rings still hold was not read in time: counted, not read */
	for (size_t i = 0; i < j->njvms; i++)
		if (j->jvms[i]->a)
			j->jvms[i]->unread_end += jvm_agent__unread(j->jvms[i]->a);
	/* CPU time carried past the last sample with a Java stack: to that stack */
	for (size_t i = 0; i < JOIN_LAST_SLOTS && !err; i++)
		err = last_cpu_settle(j, &j->last[i]);
	/* each thread's exact CPU time over its stacks by their samples (spread.c) */
	if (!err)
		err = model__spread_cpu(j->model);
	return err ? err : add_live(j);
}

void join__release(struct join *j)
{
	for (size_t i = 0; i < j->njvms; i++)
		if (j->jvms[i]->a)
			free_agent(j->jvms[i]);
	free(j->lc);
	j->lc = NULL;
}

static bool ent_agent_stats(const struct jvm_ent *e, struct jvm_agent_stats *as);

void join__stats(const struct join *j, struct join_stats *ret)
{
	struct jvm_agent_stats as;

	*ret = j->st;
	ret->agent_lost = 0;
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
	char a[256] = "", jn[384] = "", fb[192] = "";
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
	cat_count(jn, sizeof(jn), w, e->model_drops, "samples dropped (model budget)");
	/* the agent's own figures (all its traces, matched or not); its time per request/try */
	if (as->handler_ns && as->traces)
		w = (size_t)snprintf(fb, sizeof(fb),
				     "; stack requests: %llu, %.1f us each in the agent",
				     (unsigned long long)as->traces,
				     (double)as->handler_ns / 1000.0 /
					     (double)(as->handler_timed ? as->handler_timed :
									  as->traces));
	else
		w = 0;
	if (as->fallback_tried && w < sizeof(fb))
		snprintf(fb + w, sizeof(fb) - w,
			 "; fallback walker: %llu of %llu AGCT failures recovered, %.1f us each",
			 (unsigned long long)as->fallback_ok, (unsigned long long)as->fallback_tried,
			 (double)as->fallback_ns / 1000.0 / (double)as->fallback_tried);
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
	static const char *const hdr[AGE_BUCKETS] = { "<1ms", "<10ms", "<100ms", "<1s", "<10s", ">=10s" };
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
		fprintf(f, "jprof: %9llu %9llu %9llu %9llu %9llu %9llu  %s\n", (unsigned long long)n[0],
			(unsigned long long)n[1], (unsigned long long)n[2], (unsigned long long)n[3],
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
	const struct jvm_ent *e = find_jvm(j, pid);
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
		"interrupted pc, %llu differ (%llu in length only); not compared: "
		"%llu without the agent's frames, %llu with code not named yet; %llu methods "
		"learned\n",
		(unsigned long long)st.compared, (unsigned long long)st.agree,
		st.compared ? 100.0 * (double)st.agree / (double)st.compared : 0.0,
		(unsigned long long)st.learned, (unsigned long long)st.leaf_inlining,
		(unsigned long long)st.differ,
		(unsigned long long)st.differ_length, (unsigned long long)st.no_trace,
		(unsigned long long)st.unnamed, (unsigned long long)st.methods);
	if (st.named || st.unlearned)
		fprintf(f,
			"jprof: JVM %u: Java stacks named from BPF's walk without a signal: %llu; "
			"%llu methods forgotten when a check disagreed\n",
			e->pid, (unsigned long long)st.named, (unsigned long long)st.unlearned);
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
				w += (size_t)snprintf(pids + w, sizeof(pids) - w, "%s%u", w ? ", " : "",
						      j->jvms[k]->pid);
		}
		fprintf(f, "jprof: JVM%s %s%s: %s\n", n > 1 ? "s" : "", pids, n > 8 ? ", ..." : "",
			note);
	}
}

void join__report(const struct join *j, FILE *f, bool verbose)
{
	report_ages(j, f);
	if (!verbose)
		report_notes(j, f);
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
						w += snprintf(why + w, w < sizeof(why) ? sizeof(why) - w : 0,
							      "%s%llu %s", w ? ", " : "",
							      (unsigned long long)e->agct[c],
							      java_trace_err_str(-c));
				continue;
			}
			if (e->miss[r])
				w += snprintf(why + w, w < sizeof(why) ? sizeof(why) - w : 0, "%s%llu %s",
					      w ? ", " : "", (unsigned long long)e->miss[r], miss_names[r]);
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
				"already blocked when the agent came, timed from then); %llu blocked or "
				"spinning samples got the Java stack of their monitor wait; %llu parks "
				"(%llu under --lock-threshold)",
				e->pid, (unsigned long long)e->ev_allocs,
				(unsigned long long)e->ev_frees, (unsigned long long)e->ev_locks,
				(unsigned long long)e->ev_lock_short,
				(unsigned long long)e->ev_blocked_at_attach,
				(unsigned long long)e->monitor_joined, (unsigned long long)e->parks,
				(unsigned long long)e->park_short);
			/* the callbacks' own time, in the JVM's threads: the agent's cost of them */
			if (have && as.events_ns &&
			    as.events + as.events_dropped)
				fprintf(f, "; callbacks %.1f us each, %.1f ms in all",
					(double)as.events_ns / 1000.0 /
						(double)(as.events + as.events_dropped),
					(double)as.events_ns / 1e6);
			fputc('\n', f);
		}
	}
}

/* the reader protocol: every agent of the join learns this jprof still reads it */
void join__heartbeat(struct join *j, __u64 now_ns, __u32 agent_events, __u32 alloc_interval)
{
	__u32 want = (agent_events & JP_AGENT_EV_LOCK ? JP_RING_F_EV_LOCK : 0) |
		     (agent_events & JP_AGENT_EV_ALLOC ? JP_RING_F_EV_ALLOC : 0) |
		     (agent_events & JP_AGENT_EV_LIVE ? JP_RING_F_EV_LIVE : 0);

	for (size_t i = 0; i < j->njvms; i++)
		if (j->jvms[i]->a && !j->jvms[i]->retired)
			(void)jvm_agent__heartbeat(j->jvms[i]->a, now_ns, want, alloc_interval);
}

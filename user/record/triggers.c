// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * triggers.c: the daemon's automatic marks, each made as `jprof dump --mark` does and one
 * interval after its event, so that the mark holds the time before the event, the event and
 * the interval after it:
 * - --mark-on-pause MS: a GC pause of at least MS in any recorded JVM (its hsperfdata,
 *   jvm/pauses.h): gc-pause-PID-Nms, from the interval before the pause (a minute at least);
 * - --mark-on-oom: a process the kernel's OOM killer chose (oom:mark_victim, kernel/oom.h):
 *   oom-PID-COMM, from the minute before;
 * - --mark-on-cpu PCT:SECONDS: a process over PCT% of one core for SECONDS one-second steps
 *   in a row: cpu-PID-COMM, from the minute before the run began. Its CPU is the samples the
 *   daemon took of it (the process table counts them): a process on a core all the time
 *   gets the sampling rate's samples a second, so no /proc file is read.
 * Each kind makes one mark in TRIGGER_GAP_S at most (a JVM in a GC storm, a fork bomb under
 * a memory limit, a host at 100% make one mark, not hundreds); the events over the threshold
 * meanwhile are counted and said at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record_int.h"
#include "jvm/pauses.h"
#include "kernel/oom.h"
#include "store/store.h"
#include "log.h"

#define TRIGGER_GAP_S	 600 /* seconds between two automatic marks of a kind, at least */
#define TRIGGER_LOOK_NS	 (1000ull * 1000 * 1000) /* pauses and CPU looked at once a second */
#define TRIGGER_JVMS	 1024 /* JVMs whose newest pause looked at is remembered */
#define TRIGGER_BEFORE_S 60   /* a mark reaches this far before its event at least */
#define CPU_TRACK_MAX	 4096 /* processes whose CPU is followed; more are counted, not followed */

enum trig_kind { TRIG_PAUSE = 0, TRIG_OOM, TRIG_CPU, TRIG_MAX };

static const char *const trig_opt[TRIG_MAX] = {"--mark-on-pause", "--mark-on-oom", "--mark-on-cpu"};
static const char *const trig_events[TRIG_MAX] = {"pauses over the threshold", "OOM kills",
						  "processes over the threshold"};

/* one kind's mark: the one that waits (made at due_ns), the last made, the counts */
struct trig {
	bool on, pending;
	__u64 due_ns, start_ns; /* start: the event's (CLOCK_MONOTONIC) */
	char name[STORE_MARK_NAME_MAX + 1];
	char what[96];	    /* the event, said in the log line */
	__u64 last_mark_ns; /* 0: none yet */
	__u64 made, failed, suppressed;
};

struct seen {
	__u32 pid;
	__u64 end_ns; /* the end of its newest GC pause looked at (CLOCK_MONOTONIC) */
};

/* a process whose CPU is followed: sorted by pid */
struct cpu_proc {
	__u32 pid;
	__u32 run_s;	   /* one-second steps over the threshold in a row */
	__u64 start_ticks; /* its identity with pid (0: not read yet) */
	__u64 samples;	   /* the process table's count at the last look */
	__u64 run_start_ns;
	char comm[JP_COMM_LEN];
};

struct rec_triggers {
	struct trig k[TRIG_MAX];
	__u64 looked_ns;
	/* --mark-on-pause */
	__u64 pause_ns;
	struct seen seen[TRIGGER_JVMS];
	size_t nseen, next_evict;
	/* --mark-on-oom */
	struct oom_watch *oom;
	__u64 oom_kills;
	/* --mark-on-cpu */
	__u32 cpu_pct, cpu_s;
	unsigned int freq_hz;
	struct cpu_proc *cpu, *cpu_next; /* the processes followed; the next look's */
	size_t ncpu, ncpu_next;
	__u64 cpu_untracked; /* processes left out at a look (more than CPU_TRACK_MAX) */
	__u64 cpu_look_ns;
};

/* "oom-1234-java": [A-Za-z0-9._-] only, as store_mark_name_ok wants */
static void mark_name(char *buf, size_t len, const char *kind, __u32 pid, const char *comm)
{
	size_t n;

	snprintf(buf, len, "%s-%u-%s", kind, pid, comm && comm[0] ? comm : "unknown");
	for (n = 0; buf[n]; n++)
		if (!((buf[n] >= 'a' && buf[n] <= 'z') || (buf[n] >= 'A' && buf[n] <= 'Z') ||
		      (buf[n] >= '0' && buf[n] <= '9') || buf[n] == '.' || buf[n] == '_' ||
		      buf[n] == '-'))
			buf[n] = '_';
	while (n && buf[n - 1] == '_') /* a name cut mid-way, or spaces at its end */
		buf[--n] = '\0';
}

/* an event of kind k at start_ns: its mark is made at due_ns, unless one was made lately */
static void fire(struct rec_triggers *t, enum trig_kind k, __u64 now_ns, __u64 start_ns,
		 __u64 due_ns, const char *name, const char *what)
{
	struct trig *g = &t->k[k];

	if (g->pending ||
	    (g->last_mark_ns && now_ns - g->last_mark_ns < TRIGGER_GAP_S * 1000000000ull)) {
		g->suppressed++;
		return;
	}
	g->pending = true;
	g->start_ns = start_ns;
	g->due_ns = due_ns;
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->what, sizeof(g->what), "%s", what);
}

struct rec_triggers *rec_triggers_new(const struct jp_opts *o)
{
	struct rec_triggers *t;

	if (!o->mark_pause_ms && !o->mark_oom && !o->mark_cpu_pct)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t) {
		t->cpu = calloc(CPU_TRACK_MAX, sizeof(*t->cpu));
		t->cpu_next = calloc(CPU_TRACK_MAX, sizeof(*t->cpu_next));
	}
	if (!t || !t->cpu || !t->cpu_next) {
		pr_warn("--mark-on-*: no memory: no automatic marks");
		if (t) {
			free(t->cpu);
			free(t->cpu_next);
		}
		free(t);
		return NULL;
	}
	t->pause_ns = (__u64)o->mark_pause_ms * 1000000ull;
	t->k[TRIG_PAUSE].on = o->mark_pause_ms != 0;
	t->cpu_pct = o->mark_cpu_pct;
	t->cpu_s = o->mark_cpu_s;
	t->freq_hz = o->freq_hz ? o->freq_hz : 99;
	t->k[TRIG_CPU].on = o->mark_cpu_pct != 0;
	if (o->mark_oom) {
		char why[256] = "";
		int err = oom_watch__start(&t->oom, why, sizeof(why));

		/* asked for: the daemon says it cannot, and records without it */
		if (err)
			pr_warn("--mark-on-oom: %s; no marks on OOM kills",
				why[0] ? why : strerror(-err));
		t->k[TRIG_OOM].on = !err;
	}
	return t;
}

void rec_triggers_set_rate(struct rec_triggers *t, unsigned int freq_hz)
{
	if (t && freq_hz)
		t->freq_hz = freq_hz;
}

/* ---- --mark-on-pause ---- */

static struct seen *seen_of(struct rec_triggers *t, __u32 pid)
{
	struct seen *s;

	for (size_t i = 0; i < t->nseen; i++)
		if (t->seen[i].pid == pid)
			return &t->seen[i];
	/* a new JVM: a free entry, else the oldest taken (a JVM that came back re-looks) */
	s = t->nseen < TRIGGER_JVMS ? &t->seen[t->nseen++] : &t->seen[t->next_evict++ % TRIGGER_JVMS];
	s->pid = pid;
	s->end_ns = 0;
	return s;
}

struct look_ctx {
	struct rec_triggers *t;
	__u64 now_ns;
	unsigned int interval_s;
};

static void look_gc(void *ctx, __u32 pid, __u64 start_mono_ns, const struct hsperf_gc_event *ev)
{
	struct look_ctx *c = ctx;
	struct rec_triggers *t = c->t;
	struct seen *s = seen_of(t, pid);
	__u64 end = start_mono_ns + ev->duration_ns;
	char name[STORE_MARK_NAME_MAX + 1], what[96];

	if (!start_mono_ns || end <= s->end_ns)
		return; /* looked at already */
	s->end_ns = end;
	if (ev->duration_ns < t->pause_ns)
		return;
	snprintf(name, sizeof(name), "gc-pause-%u-%llums", pid,
		 (unsigned long long)(ev->duration_ns / 1000000));
	snprintf(what, sizeof(what), "a GC pause of %llu ms in JVM %u",
		 (unsigned long long)(ev->duration_ns / 1000000), pid);
	/* the interval after the pause goes into the mark too */
	fire(t, TRIG_PAUSE, c->now_ns, start_mono_ns, end + (__u64)c->interval_s * 1000000000ull,
	     name, what);
}

/* ---- --mark-on-oom ---- */

static void on_oom(void *ctx, const struct oom_kill *k)
{
	struct look_ctx *c = ctx;
	char name[STORE_MARK_NAME_MAX + 1], what[96];

	c->t->oom_kills++;
	mark_name(name, sizeof(name), "oom", k->pid, k->comm);
	snprintf(what, sizeof(what), "the OOM killer chose process %u (%s)", k->pid,
		 k->comm[0] ? k->comm : "?");
	pr_info("daemon: %s", what);
	fire(c->t, TRIG_OOM, c->now_ns, k->time_ns,
	     c->now_ns + (__u64)c->interval_s * 1000000000ull, name, what);
}

/* ---- --mark-on-cpu ---- */

struct cpu_look {
	struct rec_triggers *t;
	bool over; /* more processes than CPU_TRACK_MAX */
};

static void collect(void *ctx, const struct pt_proc *p)
{
	struct cpu_look *c = ctx;
	struct rec_triggers *t = c->t;
	struct cpu_proc *n;

	if (p->gone_ns || !p->samples)
		return; /* exited (evicted by not being taken), or never on a CPU we saw */
	if (t->ncpu_next == CPU_TRACK_MAX) {
		c->over = true;
		return;
	}
	n = &t->cpu_next[t->ncpu_next++];
	memset(n, 0, sizeof(*n));
	n->pid = p->pid;
	n->start_ticks = p->start_ticks;
	n->samples = p->samples;
	memcpy(n->comm, p->comm, sizeof(n->comm));
	n->comm[sizeof(n->comm) - 1] = '\0';
}

static void read_comm(__u32 pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static int cmp_pid(const void *a, const void *b)
{
	const struct cpu_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void look_cpu(struct rec_triggers *t, struct ptable *procs, __u64 now_ns,
		     unsigned int interval_s)
{
	struct cpu_look c = {.t = t};
	struct cpu_proc *tmp;
	__u64 dt_ns = t->cpu_look_ns ? now_ns - t->cpu_look_ns : 0;
	size_t j = 0;

	t->ncpu_next = 0;
	ptable__for_each(procs, collect, &c);
	t->cpu_untracked += c.over;
	qsort(t->cpu_next, t->ncpu_next, sizeof(*t->cpu_next), cmp_pid);
	/* each process now, against itself a second ago (both sorted by pid) */
	for (size_t i = 0; i < t->ncpu_next; i++) {
		struct cpu_proc *n = &t->cpu_next[i];
		const struct cpu_proc *o;
		__u64 pct;

		while (j < t->ncpu && t->cpu[j].pid < n->pid)
			j++;
		if (j == t->ncpu || t->cpu[j].pid != n->pid || !dt_ns)
			continue; /* new: followed from now on */
		o = &t->cpu[j];
		if (o->start_ticks && n->start_ticks && o->start_ticks != n->start_ticks)
			continue; /* another process under the same pid */
		/* samples a second at the rate: 100% of one core */
		pct = n->samples >= o->samples ? (n->samples - o->samples) * 100ull *
							 1000000000ull / dt_ns / t->freq_hz
					       : 0;
		if (pct < t->cpu_pct)
			continue; /* the run ends (run_s 0) */
		n->run_s = o->run_s + 1;
		n->run_start_ns = o->run_s ? o->run_start_ns : t->cpu_look_ns;
		if (n->run_s == t->cpu_s) {
			char name[STORE_MARK_NAME_MAX + 1], what[96];

			if (!n->comm[0]) /* the table may not have it: /proc's, read once */
				read_comm(n->pid, n->comm, sizeof(n->comm));
			mark_name(name, sizeof(name), "cpu", n->pid, n->comm);
			snprintf(what, sizeof(what), "process %u (%s) over %u%% of a core for %u s",
				 n->pid, n->comm, t->cpu_pct, t->cpu_s);
			fire(t, TRIG_CPU, now_ns, n->run_start_ns,
			     now_ns + (__u64)interval_s * 1000000000ull, name, what);
		}
	}
	tmp = t->cpu;
	t->cpu = t->cpu_next;
	t->cpu_next = tmp;
	t->ncpu = t->ncpu_next;
	t->cpu_look_ns = now_ns;
}

/* ---- the marks ---- */

static void make_mark(struct rec *r, struct rec_triggers *t, enum trig_kind k, __u64 now_ns,
		      unsigned int interval_s)
{
	struct trig *g = &t->k[k];
	char dir[160], why[256] = "";
	__u64 back_s;
	size_t n = 0;
	int err;

	g->pending = false;
	g->last_mark_ns = now_ns;
	back_s = (now_ns > g->start_ns ? now_ns - g->start_ns : 0) / 1000000000ull + 1;
	if (k == TRIG_PAUSE) /* the interval before the pause, a minute at least */
		back_s += back_s < TRIGGER_BEFORE_S ? TRIGGER_BEFORE_S : interval_s;
	else /* the minute before the event */
		back_s += TRIGGER_BEFORE_S;
	err = rec_interval_mark(r, g->name, (__u32)back_s, dir, sizeof(dir), &n, why, sizeof(why));
	if (err) {
		g->failed++;
		return; /* rec_interval_mark said why */
	}
	g->made++;
	pr_info("daemon: %s: the %llu s around it kept as %s (%zu segments), outside the limits",
		g->what, (unsigned long long)back_s, dir, n);
}

void rec_triggers_tick(struct rec *r, struct rec_triggers *t, __u64 now_ns)
{
	unsigned int interval_s = rec_interval_length(r);
	struct look_ctx c = {.t = t, .now_ns = now_ns, .interval_s = interval_s};

	if (!t)
		return;
	if (t->oom)
		(void)oom_watch__poll(t->oom, on_oom, &c);
	if (now_ns - t->looked_ns >= TRIGGER_LOOK_NS) {
		t->looked_ns = now_ns;
		if (t->k[TRIG_PAUSE].on)
			pauses__for_each_gc(r->pauses, look_gc, &c);
		if (t->k[TRIG_CPU].on)
			look_cpu(t, r->procs, now_ns, interval_s);
	}
	for (int k = 0; k < TRIG_MAX; k++)
		if (t->k[k].pending && now_ns >= t->k[k].due_ns)
			make_mark(r, t, k, now_ns, interval_s);
}

void rec_triggers_free(struct rec_triggers *t)
{
	if (!t)
		return;
	for (int k = 0; k < TRIG_MAX; k++) {
		const struct trig *g = &t->k[k];

		if (g->made || g->failed || g->suppressed)
			pr_info("%s: %llu marks made, %llu failed; %llu more %s came within %d s "
				"of a mark or while one waited",
				trig_opt[k], (unsigned long long)g->made,
				(unsigned long long)g->failed, (unsigned long long)g->suppressed,
				trig_events[k], TRIGGER_GAP_S);
	}
	if (t->oom && (t->oom_kills || oom_watch__lost(t->oom)))
		pr_info("--mark-on-oom: %llu OOM kills seen, %llu lost (the kernel's ring full)",
			(unsigned long long)t->oom_kills,
			(unsigned long long)oom_watch__lost(t->oom));
	if (t->cpu_untracked)
		pr_info("--mark-on-cpu: %llu looks left processes out (over %d followed)",
			(unsigned long long)t->cpu_untracked, CPU_TRACK_MAX);
	oom_watch__free(t->oom);
	free(t->cpu);
	free(t->cpu_next);
	free(t);
}

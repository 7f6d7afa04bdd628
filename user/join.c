// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * join.c: kernel sample + Java trace -> one stack of typed frames -> the model. This file:
 * the JVMs and their thread ids, what a sample becomes (native, Java, missing its Java
 * stack), the stack committed to the model, and the rounds over the agents' rings. Frames
 * are built in join/frames.c, waiting samples and traces paired in join/wait.c, agent
 * events joined in join/events.c, the report written by join/report.c.
 */
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
#include "join/idle.h"
#include "kernel/offcpu.h"

const char *const join_miss_names[MISS_MAX] = {
	[MISS_AGCT] = "AGCT",
	[MISS_SIG_BUSY] = "signal busy (-EBUSY)",
	[MISS_SIG_ERR] = "signal failed",
	[MISS_NO_TRACE] = "no trace from the agent",
	[MISS_NOT_SENT] = "agent not ready",
	[MISS_AGENT_BUSY] = "agent busy",
	[MISS_NO_AGENT] = "no agent",
	[MISS_PENDING] = "agent not yet attached",
	[MISS_FAULT] = "stack walk faulted (caught)",
	[MISS_OTHER] = "unknown agent code",
	[MISS_BACKLOG] = "join backlog full",
	[MISS_OPEN] = "still blocked at the end (never signalled)",
	[MISS_FOLLOW] = "during a pending request of unknown outcome",
	[MISS_JWALK] = "walked in BPF, code not named",
};

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
static void pends_free(struct join *j, struct dl *h)
{
	while (!dl_empty(h)) {
		struct dl *n = h->next;

		dl_del(n);
		blk_free(&j->blk, dl_entry(n, struct pend, jnode));
	}
}

static void jvm_ent__free(struct join *j, struct jvm_ent *e)
{
	if (!e)
		return;
	jwalk__free(e->jw);
	pends_free(j, &e->pend);
	pends_free(j, &e->jwait);
	while (!dl_empty(&e->traces)) {
		struct dl *n = e->traces.next;

		dl_del(n);
		blk_free(&j->blk, dl_entry(n, struct ptr, jnode));
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
		jvm_ent__free(j, j->jvms[i]);
	free(j->jvms);
	free(j->by_pid);
	free(j->ups);
	for (size_t i = 0; i < j->thr_cap; i++) {
		for (struct thr *t = j->thr_tab[i], *next; t; t = next) {
			next = t->hnext;
			blk_free(&j->blk, t);
		}
	}
	blk_release(&j->blk);
	free(j->thr_tab);
	free(j->pidset);
	free(j->waits);
	free(j->live);
	free(j->ages);
	free(j->lc);
	free(j);
}

/* the live JVM entry of pid (a retired one stays for the report, its pid may be reused) */
/*
 * The live JVMs by pid: a lookup per sample costs a hash and a probe or two, whatever the
 * number of JVMs that came and went (they stay in jvms[] for the report only).
 */
static size_t by_pid_slot(size_t cap, __u32 pid)
{
	return (size_t)(hash_keyed(pid) >> 17) & (cap - 1);
}

struct jvm_ent *jn_find_jvm(const struct join *j, __u32 pid)
{
	if (!j->by_pid_n)
		return NULL;
	for (size_t i = by_pid_slot(j->by_pid_cap, pid);; i = (i + 1) & (j->by_pid_cap - 1)) {
		struct jvm_ent *e = j->by_pid[i];

		if (!e || e->pid == pid)
			return e;
	}
}

static void by_pid_put(struct jvm_ent **t, size_t cap, struct jvm_ent *e)
{
	size_t i = by_pid_slot(cap, e->pid);

	while (t[i])
		i = (i + 1) & (cap - 1);
	t[i] = e;
}

static int by_pid_add(struct join *j, struct jvm_ent *e)
{
	if ((j->by_pid_n + 1) * 2 > j->by_pid_cap) {
		size_t nc = j->by_pid_cap ? j->by_pid_cap * 2 : 64;
		struct jvm_ent **nt = calloc(nc, sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		for (size_t i = 0; i < j->by_pid_cap; i++)
			if (j->by_pid[i])
				by_pid_put(nt, nc, j->by_pid[i]);
		free(j->by_pid);
		j->by_pid = nt;
		j->by_pid_cap = nc;
	}
	by_pid_put(j->by_pid, j->by_pid_cap, e);
	j->by_pid_n++;
	return 0;
}

/* removes e, moving back the entries of its probe run that would no longer be found */
static void by_pid_del(struct join *j, const struct jvm_ent *e)
{
	size_t mask = j->by_pid_cap - 1, i, k;

	if (!j->by_pid_n)
		return;
	for (i = by_pid_slot(j->by_pid_cap, e->pid); j->by_pid[i] != e; i = (i + 1) & mask)
		if (!j->by_pid[i])
			return;
	j->by_pid[i] = NULL;
	j->by_pid_n--;
	for (k = (i + 1) & mask; j->by_pid[k]; k = (k + 1) & mask) {
		size_t home = by_pid_slot(j->by_pid_cap, j->by_pid[k]->pid);

		/* k's entry stays unless the hole lies between its home and k */
		if ((k > i && (home <= i || home > k)) || (k < i && home <= i && home > k)) {
			j->by_pid[i] = j->by_pid[k];
			j->by_pid[k] = NULL;
			i = k;
		}
	}
}

void join__set_jvm_name(struct join *j, __u32 pid, const char *name)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e && name && *name) {
		snprintf(e->name, sizeof(e->name), "%s", name);
		/* its samples before it was known join its root */
		model__name_process(j->model, pid, e->name);
	}
}

bool join__only_jvm(const struct join *j, char *buf, size_t size)
{
	const struct jvm_ent *e = j->njvms ? j->jvms[0] : NULL;

	for (size_t i = 1; i < j->njvms; i++)
		if (j->jvms[i]->pid != e->pid)
			return false;
	if (!e || !e->name[0])
		return false;
	snprintf(buf, size, "%s [%u] %s", e->comm, e->pid, e->name);
	return true;
}

void join__set_jvm_cgroup(struct join *j, __u32 pid, __u64 cgroup_id)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e)
		e->cgroup = cgroup_id;
}

void join__set_jvm_note(struct join *j, __u32 pid, const char *note)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e)
		snprintf(e->note, sizeof(e->note), "%s", note);
}

void join__set_jvm_pending(struct join *j, __u32 pid, bool pending)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e)
		e->pending = pending;
}

bool join__knows_jvm(const struct join *j, __u32 pid)
{
	return jn_find_jvm(j, pid) != NULL;
}

bool join__has_jvm(const struct join *j, __u32 pid)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	return e && e->a;
}

/*
 * An update for the capture side waits in the join until the record loop takes it. Over
 * JOIN_UPDATES_MAX one that only saves signals is dropped (and counted); one that withdraws
 * a Method* BPF must no longer name is always kept.
 */
void jn_update(struct join *j, const struct join_update *u)
{
	bool must = u->kind == JOIN_UP_JW_METHOD && !u->on;

	if (j->nups >= JOIN_UPDATES_MAX && !must) {
		j->st.updates_dropped++;
		return;
	}
	if (j->nups == j->ups_cap) {
		size_t nc = j->ups_cap ? j->ups_cap * 2 : 256;
		struct join_update *nv = realloc(j->ups, nc * sizeof(*nv));

		if (!nv) {
			j->st.updates_dropped++; /* a withdrawal too: out of memory */
			return;
		}
		j->ups = nv;
		j->ups_cap = nc;
	}
	j->ups[j->nups++] = *u;
}

/* jwalk's callback: a Method* was learnt or forgotten */
void jn_jw_method(void *ctx, __u32 pid, __u64 method, bool known)
{
	jn_update(ctx,
		  &(struct join_update){
			  .kind = JOIN_UP_JW_METHOD, .pid = pid, .method = method, .on = known});
}

size_t join__take_updates(struct join *j, struct join_update *buf, size_t max)
{
	size_t n = j->nups < max ? j->nups : max;

	if (!n)
		return 0;
	memcpy(buf, j->ups, n * sizeof(*buf));
	memmove(j->ups, j->ups + n, (j->nups - n) * sizeof(*buf));
	j->nups -= n;
	return n;
}

int join__add_jvm(struct join *j, __u32 pid, __u32 nspid, const char *comm, struct jvm_agent *a)
{
	struct jvm_ent *e = jn_find_jvm(j, pid), **n;

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
	if (j->njvms == j->jvms_cap) {
		size_t nc = j->jvms_cap ? j->jvms_cap * 2 : 16;

		n = realloc(j->jvms, nc * sizeof(*n));
		if (!n) {
			free(e);
			return -ENOMEM;
		}
		j->jvms = n;
		j->jvms_cap = nc;
	}
	e->pid = pid;
	if (by_pid_add(j, e)) {
		free(e);
		return -ENOMEM;
	}
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
void jn_tidmap_rescan(struct jvm_ent *e, __u64 now)
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

__u32 jn_host_tid(struct jvm_ent *e, __u32 nstid, __u64 now)
{
	struct tid_pair key = {.nstid = nstid}, *hit;

	if (e->pid == e->nspid)
		return nstid;
	for (int pass = 0; pass < 2; pass++) {
		hit = e->ntids ? bsearch(&key, e->tids, e->ntids, sizeof(key), by_nstid) : NULL;
		if (hit)
			return hit->tid;
		if (pass || now - e->tids_scanned_ns < TIDMAP_RESCAN_NS)
			break;
		jn_tidmap_rescan(e, now);
	}
	return 0;
}

__u32 jn_ns_tid(struct jvm_ent *e, __u32 tid)
{
	struct tid_pair key = {.tid = tid}, *hit;

	if (e->pid == e->nspid)
		return tid;
	hit = e->by_host ? bsearch(&key, e->by_host, e->ntids, sizeof(key), by_tid) : NULL;
	return hit ? hit->nstid : 0;
}

/*
 * err from the model: a refusal of its budget is a dropped sample (counted for its JVM),
 * not an error that ends the recording
 */
int jn_model_drop(struct join *j, struct jvm_ent *e, int err)
{
	if (!err || !model__over_budget(j->model))
		return err;
	if (e)
		e->model_drops++;
	j->st.model_drops++;
	return 0;
}

struct last_cpu *jn_last_cpu_slot(struct join *j, __u32 pid, __u32 tid)
{
	return &j->last[(pid * 2654435761u ^ tid * 40503u) % JOIN_LAST_SLOTS];
}

/* the slot's carried CPU time to its thread's last stack; 0 or -ENOMEM */
int jn_last_cpu_settle(struct join *j, struct last_cpu *l)
{
	__u64 c = l->carry_ns;

	l->carry_ns = 0;
	return c ? jn_model_drop(j, NULL,
				 model__add(j->model, l->stack, l->labels, JP_VAL_CPU_NS, c))
		 : 0;
}

/* the thread's slot, taken over from another thread (whose carry goes to its own stack) */
struct last_cpu *jn_last_own(struct join *j, __u32 pid, __u32 tid)
{
	struct last_cpu *l = jn_last_cpu_slot(j, pid, tid);

	if (l->pid != pid || l->tid != tid) {
		(void)jn_last_cpu_settle(j, l);
		memset(l, 0, sizeof(*l));
		l->pid = pid;
		l->tid = tid;
	}
	return l;
}

static void last_cpu_set(struct join *j, const struct jp_sample *s, jp_id stack, jp_id labels)
{
	struct last_cpu *l = jn_last_own(j, s->pid, s->tid);

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
	struct jp_labels l = {.pid = s->pid,
			      .tid = s->tid,
			      .cgroup = s->cgroup_id,
			      .container = cgroup_names__get(j->o.cgroups, s->cgroup_id)};

	memcpy(comm, s->comm, JP_COMM_LEN);
	comm[JP_COMM_LEN] = '\0';
	memcpy(pcomm, s->pcomm, JP_COMM_LEN);
	pcomm[JP_COMM_LEN] = '\0';
	if (!pcomm[0])
		memcpy(pcomm, comm, sizeof(pcomm));
	l.comm = pcomm;
	l.main = e ? e->name : "";
	if (e && s->cgroup_id)
		e->cgroup = s->cgroup_id; /* where it runs now: its events go there too */
	l.thread = e && e->a ? jvm_agent__thread_name(e->a, jn_ns_tid(e, s->tid)) : NULL;
	if (!l.thread)
		l.thread = comm;
	return model__labels(j->model, &l);
}

int jn_commit(struct join *j, const struct jp_sample *s, struct jvm_ent *e, size_t n,
	      const char *marker)
{
	jp_id stack, labels;
	__u64 w;
	int err;

	/* off-CPU recorded only for -e lock's parks: the rest of the blocked time is not shown */
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only)
		return 0;
	if (marker)
		jn_push(j, &n, marker, JP_FK_ROOT);
	jn_late_done(j, e);
	j->pool_used = 0;
	stack = model__stack(j->model, j->locs, n);
	labels = sample_labels(j, s, e);
	if (!stack || !labels)
		return jn_model_drop(j, e, -ENOMEM);
	j->committed = stack;
	switch (s->kind) {
	case JP_EV_CPU:
		w = s->weight;
		if (!(s->flags & JP_SF_CPU_TAIL) && !j->carried) {
			struct last_cpu *l = jn_last_cpu_slot(j, s->pid, s->tid);

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
	return jn_model_drop(j, e, err);
}

/*
 * A sample with only native information: names over the frame-pointer walk, JIT code
 * named by the JVM's agent when it has one, else by the perf map.
 */
int jn_add_native(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e, const char *marker)
{
	size_t n = 0;

	jn_push_kernel(j, &n, s, kstack);
	for (__u32 i = 0; i < s->ustack_len; i++)
		if (!jn_push_agent_code(j, &n, e, s->pid, ustack[i]))
			(void)jn_push_user_frame(j, &n, s->pid, ustack[i], false);
	return jn_commit(j, s, e, n, marker);
}

/*
 * Kernel frames, native frames down to the code cache, then the Java frames. The
 * native frames below the Java entry (JavaCalls, thread start) are left out: the
 * frame-pointer walk reaches them only through interpreted frames or with
 * -XX:+PreserveFramePointer, so keeping them would put one Java stack under two
 * different roots depending on how far each walk got.
 */
/* "java/util/Foo$Bar" as the monitor waits name classes: "java.util.Foo$Bar_[l]" */
static const char *blocker_frame(struct join *j, const char *cls)
{
	char buf[JP_BLOCKER_MAX + 1];
	size_t n = 0;

	for (; cls[n] && n < JP_BLOCKER_MAX; n++)
		buf[n] = cls[n] == '/' ? '.' : cls[n];
	buf[n] = '\0';
	return jn_pool_fmt(j, "%s_[l]", buf);
}

/*
 * -e lock: a blocked interval whose Java stack enters LockSupport.park (the JDK's
 * Unsafe.park, a native method: the leaf Java frame, or next to it) is a
 * java.util.concurrent wait. It is one contention of its duration, "[park]" over its Java
 * frames; when the agent read the thread's parkBlocker (jvmagent/blocker.c), its class
 * is the leaf over "[park]", in the monitor waits' form ("Class_[l]" over theirs), so
 * "ReentrantLock$NonfairSync_[l]" says what the thread waited for. A park without a
 * blocker (LockSupport.park()) or one the agent could not name keeps "[park]" as its leaf.
 * 1 when the interval was a park, 0 when not, -ENOMEM.
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
	if (t->blocker)
		jn_push(j, &n, blocker_frame(j, t->blocker), JP_FK_ROOT);
	jn_push(j, &n, "[park]", JP_FK_ROOT);
	for (int f = 0; f < t->num_frames; f++)
		jn_push_java(j, &n, e, &t->frames[f]);
	jn_late_done(j, e);
	j->pool_used = 0;
	stack = model__stack(j->model, j->locs, n);
	labels = sample_labels(j, s, e);
	if (!stack || !labels)
		return jn_model_drop(j, e, -ENOMEM) ? -ENOMEM : 1;
	err = model__add(j->model, stack, labels, JP_VAL_CONTENTIONS, 1);
	if (!err)
		err = model__add(j->model, stack, labels, JP_VAL_DELAY_NS, s->weight);
	if (!err) {
		e->parks++;
		e->park_blocker += !!t->blocker;
		j->st.parks++;
		j->st.park_ns += s->weight;
	}
	err = jn_model_drop(j, e, err);
	return err ? err : 1;
}

/* an idle pool worker's wait (join/idle.h) left out of -e offcpu and lock, counted: true */
static bool idle_left_out(struct join *j, const struct jp_sample *s, struct jvm_ent *e,
			  const struct java_trace *t)
{
	if (!j->o.idle_out || s->kind != JP_EV_OFFCPU || (s->flags & JP_SF_RUNNABLE) ||
	    !join_idle__trace(e->a, t))
		return false;
	j->st.idle_waits++;
	j->st.idle_ns += s->weight;
	return true;
}

static int add_java(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		    const __u64 *ustack, struct jvm_ent *e, const struct java_trace *t)
{
	size_t n = 0;
	int err;

	if (idle_left_out(j, s, e, t))
		return 0;
	err = add_park(j, s, e, t);
	if (err < 0)
		return err;
	jn_push_native_part(j, &n, s, kstack, ustack);
	j->java_from = n;
	for (int f = 0; f < t->num_frames; f++)
		jn_push_java(j, &n, e, &t->frames[f]);
	return jn_commit(j, s, e, n, NULL);
}

/* a CPU sample of a Java thread, for the per-JVM completeness of CPU samples */
void jn_tally_cpu(struct jvm_ent *e, const struct jp_sample *s, bool complete, bool before)
{
	if (s->kind != JP_EV_CPU || (s->flags & JP_SF_CPU_TAIL))
		return;
	e->cpu_java++;
	e->cpu_complete += complete;
	e->cpu_before += before;
}

int jn_add_missing(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		   const __u64 *ustack, struct jvm_ent *e, enum miss_reason r, int code)
{
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only)
		return 0; /* no Java stack: not known to be a park, and not shown otherwise */
	e->samples++;
	e->java_samples++;
	e->miss[r]++;
	jn_tally_cpu(e, s, false, r == MISS_PENDING || r == MISS_NO_AGENT);
	if (r == MISS_AGCT && code <= 0 && -code < 12)
		e->agct[-code]++;
	/* blocked all recording, no Java stack: one frame, not its native wait (issue 25) */
	if (j->o.collapse_whole && s->kind == JP_EV_OFFCPU && (s->flags & OFFCPU_SF_WHOLE)) {
		j->st.whole_threads++;
		j->st.whole_ns += s->weight;
		return jn_commit(j, s, e, 0, JOIN_WHOLE_FRAME);
	}
	/*
	 * A CPU sample the agent was not asked about (its signal could not be sent: busy, or
	 * the thread still in the handler) passes its CPU time on to its thread's next sample,
	 * which has a Java stack; it still counts as a sample. Only for a thread with an
	 * earlier CPU sample, whose last stack takes the time if no other sample comes.
	 */
	if (s->kind == JP_EV_CPU && !(s->flags & JP_SF_CPU_TAIL) && e->a &&
	    (r == MISS_NOT_SENT || r == MISS_SIG_BUSY || r == MISS_SIG_ERR || r == MISS_FOLLOW)) {
		struct last_cpu *l = jn_last_cpu_slot(j, s->pid, s->tid);

		if (l->pid == s->pid && l->tid == s->tid && l->stack) {
			struct jp_sample c = *s;
			int err;

			l->carry_ns += s->weight;
			c.weight = 0;
			j->carried = true; /* for commit, which add_native reaches */
			err = jn_add_native(j, &c, kstack, ustack, e, jn_miss_marker(j, r, code));
			j->carried = false;
			return err;
		}
	}
	return jn_add_native(j, s, kstack, ustack, e, jn_miss_marker(j, r, code));
}

/*
 * HotSpot JavaThreads that never run Java code (compilers, service threads) answer
 * AGCT with -3 ("unknown, not Java") rather than 0: their top frame lookup fails before
 * the no-Java-frame check. By their native thread names they are JVM-internal.
 */
static bool jvm_service_thread(const char *comm)
{
	static const char *const prefixes[] = {
		"C1 CompilerThre", "C2 CompilerThre", "Sweeper thread",	 "Service Thread",
		"Monitor Deflati", "Notification Th", "Signal Dispatch", "JVMCI",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(comm, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * The kernel side stops asking a thread that answered "not a Java thread" for
 * NATIVE_AFTER_NS, and asks again (JP_SF_NATIVE_RECHECK) one that may have attached to
 * the JVM since: told here when it has.
 */
static void tell_native(struct join *j, const struct jp_sample *s, bool native)
{
	struct last_cpu *l = jn_last_own(j, s->pid, s->tid);

	if (!native) {
		l->native_ns = 0;
		if (s->flags & JP_SF_NATIVE_RECHECK)
			jn_update(j, &(struct join_update){.kind = JOIN_UP_NATIVE_THREAD,
							   .pid = s->pid,
							   .tid = s->tid});
		return;
	}
	if (!l->native_ns || l->native_ns > s->time_ns)
		l->native_ns = s->time_ns;
	if (!(s->flags & JP_SF_NATIVE_RECHECK) && s->time_ns - l->native_ns >= NATIVE_AFTER_NS)
		jn_update(j, &(struct join_update){.kind = JOIN_UP_NATIVE_THREAD,
						   .pid = s->pid,
						   .tid = s->tid,
						   .on = true});
}

/* a sample meets its trace */
int jn_finish(struct join *j, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack,
	      struct jvm_ent *e, const struct java_trace *t)
{
	char comm[JP_COMM_LEN + 1];
	bool native;

	memcpy(comm, s->comm, JP_COMM_LEN);
	comm[JP_COMM_LEN] = '\0';
	native = t->num_frames == JAVA_TRACE_ERR_NOT_JAVA_THREAD ||
		 (t->num_frames == -3 && jvm_service_thread(comm));
	if (j->o.native_threads)
		tell_native(j, s, native);
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only) {
		int r = t->num_frames > 0 && !idle_left_out(j, s, e, t) ? add_park(j, s, e, t) : 0;

		return r < 0 ? r : 0;
	}
	j->st.jvm_samples++;
	if (t->num_frames > 0) {
		e->samples++;
		e->java_samples++;
		e->complete++;
		jn_tally_cpu(e, s, true, false);
		j->st.java_complete++;
		return add_java(j, s, kstack, ustack, e, t);
	}
	if (native || t->num_frames == 0) {
		/* JVM-internal thread, or a Java thread with no Java frame yet: natives are the truth */
		e->samples++;
		e->internal++;
		return jn_add_native(j, s, kstack, ustack, e, NULL);
	}
	if (t->num_frames < 0) {
		int r = jn_add_monitor_wait(j, s, kstack, ustack, e);

		if (r <= 0)
			return r;
	}
	if (t->num_frames == JAVA_TRACE_ERR_BUSY)
		return jn_add_missing(j, s, kstack, ustack, e, MISS_AGENT_BUSY, 0);
	if (t->num_frames == JAVA_TRACE_ERR_FAULT)
		return jn_add_missing(j, s, kstack, ustack, e, MISS_FAULT, 0);
	if (t->num_frames < JAVA_TRACE_ERR_MIN)
		return jn_add_missing(j, s, kstack, ustack, e, MISS_OTHER, 0);
	return jn_add_missing(j, s, kstack, ustack, e, MISS_AGCT, t->num_frames);
}

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

int join__sample(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		 const __u64 *ustack)
{
	struct jvm_ent *e = jn_find_jvm(j, s->pid);

	if (s->pid)
		pidset_add(j, s->pid);
	if (s->kind == JP_EV_CPU && (s->flags & JP_SF_CPU_TAIL))
		return jn_add_cpu_tail(j, s, e);
	/* only a JVM thread's interval with a Java stack can be a park */
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only &&
	    (!e || !e->a || (s->flags & JP_SF_OPEN) || !(s->flags & JP_SF_SIGNALED) || s->sig_err))
		return 0;
	if (!e)
		return jn_add_native(j, s, kstack, ustack, NULL, NULL);
	if (!e->a) {
		j->st.jvm_samples++;
		return jn_add_missing(j, s, kstack, ustack, e,
				      e->pending ? MISS_PENDING : MISS_NO_AGENT, 0);
	}
	if (s->flags & JP_SF_OPEN) {
		/* never signalled (it would wake), but a monitor wait it is in has its stack */
		int r = jn_add_monitor_wait(j, s, kstack, ustack, e);

		j->st.jvm_samples++;
		if (r <= 0)
			return r;
		return jn_add_missing(j, s, kstack, ustack, e, MISS_OPEN, 0);
	}
	if (s->flags & JP_SF_NATIVE_THREAD) {
		/* the agent said so earlier: a JVM-internal thread, not asked again */
		j->st.jvm_samples++;
		e->samples++;
		e->internal++;
		e->internal_known++;
		return jn_add_native(j, s, kstack, ustack, e, NULL);
	}
	if (s->flags & JP_SF_JWALK)
		return jn_add_jwalked(j, s, kstack, ustack, e);
	if (s->kind == JP_EV_CPU && (s->flags & JP_SF_FOLLOWS))
		return jn_add_follower(j, s, kstack, ustack, e);
	if (!(s->flags & JP_SF_SIGNALED)) {
		j->st.jvm_samples++;
		return jn_add_missing(j, s, kstack, ustack, e, MISS_NOT_SENT, 0);
	}
	if (s->sig_err) {
		j->st.jvm_samples++;
		return jn_add_missing(j, s, kstack, ustack, e,
				      s->sig_err == -EBUSY ? MISS_SIG_BUSY : MISS_SIG_ERR, 0);
	}
	jn_last_own(j, s->pid, s->tid)->sig_ns = s->time_ns;
	return jn_pend_add(j, s, kstack, ustack, e);
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
	jn_time_bound(j, t0 + JOIN_POLL_ROUND_NS);
	for (int n = 0;
	     jn_poll_agents(j) && ++n < JOIN_POLL_ROUNDS && mono_ns() - t0 < JOIN_POLL_ROUND_NS;)
		;
	err = jn_pair_and_expire(j, false);
	jn_time_bound(j, 0);
	return err;
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
	struct jvm_ent *e = jn_find_jvm(j, pid);
	int err = 0, n = 0;

	if (!e || e->retired)
		return 0;
	if (e->a) {
		/* what its ring still holds (in a round's time), then no sample of it waits */
		jn_time_bound(j, mono_ns() + JOIN_POLL_ROUND_NS);
		j->cur_jvm = e;
		do {
			j->round_left = j->o.traces_per_round;
			err = jvm_agent__poll_events(e->a, jn_on_trace,
						     j->o.joined_events ? jn_on_event : NULL, j);
		} while (err == -EAGAIN && !j->round_left && mono_ns() <= j->deadline_ns &&
			 ++n < 64);
		j->cur_jvm = NULL;
		j->now_ns = now_ns;
		err = jn_retry_dirty(j);
		if (!err)
			err = jn_expire(j, e, true);
		jn_time_bound(j, 0);
		e->unread_end += jvm_agent__unread(e->a);
		free_agent(e);
	}
	jn_ev_drop_pid(j->live, EV_LIVE_CAP, &j->nlive, pid);
	jn_ev_drop_pid(j->waits, EV_WAITS_CAP, &j->nwaits, pid);
	free(e->tids);
	free(e->by_host);
	e->tids = e->by_host = NULL;
	e->ntids = 0;
	e->retired = true;
	by_pid_del(j, e);
	e->pending = false;
	return err;
}

int join__flush(struct join *j)
{
	struct timespec nap = {0, 20 * 1000 * 1000};
	__u64 t0 = mono_ns(), seen;
	bool napped = false;
	int err;

	j->end_ns = t0;
	jn_time_bound(j, t0 + JOIN_FLUSH_NS);
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
		if (!jn_poll_agents(j)) {
			err = jn_pair_and_expire(j, false);
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
	err = jn_pair_and_expire(j, true);
	jn_time_bound(j, 0);
	/* what the rings still hold was not read in time: counted, not read */
	for (size_t i = 0; i < j->njvms; i++)
		if (j->jvms[i]->a)
			j->jvms[i]->unread_end += jvm_agent__unread(j->jvms[i]->a);
	/* CPU time carried past the last sample with a Java stack: to that stack */
	for (size_t i = 0; i < JOIN_LAST_SLOTS && !err; i++)
		err = jn_last_cpu_settle(j, &j->last[i]);
	/* each thread's exact CPU time over its stacks by their samples (spread.c) */
	if (!err)
		err = model__spread_cpu(j->model);
	return err ? err : jn_add_live(j);
}

void join__release(struct join *j)
{
	for (size_t i = 0; i < j->njvms; i++)
		if (j->jvms[i]->a)
			free_agent(j->jvms[i]);
	free(j->lc);
	j->lc = NULL;
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

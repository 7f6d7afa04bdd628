// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * join.c: kernel sample + Java trace -> one stack of typed frames -> the model. This file:
 * what a sample becomes (native, Java, missing its Java stack), the stack committed to the
 * model, and the rounds over the agents' rings. The JVMs are kept in join/jvms.c, frames
 * built in join/frames.c, waiting samples and traces paired in join/wait.c, agent events
 * joined in join/events.c, the report written by join/report.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	[MISS_EARLY_OFF] = "walked early, layout contradicted",
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
	j->memo = jn_memo_new(); /* nor a memo */
	if (!j->o.pend_budget_jvm)
		j->o.pend_budget_jvm = JOIN_PEND_BUDGET_JVM;
	if (!j->o.pend_budget)
		j->o.pend_budget = JOIN_PEND_BUDGET;
	if (!j->o.early_budget_jvm)
		j->o.early_budget_jvm = JOIN_EARLY_BUDGET_JVM;
	if (!j->o.early_budget)
		j->o.early_budget = JOIN_EARLY_BUDGET;
	if (!j->o.trace_budget_jvm)
		j->o.trace_budget_jvm = JOIN_TRACE_BUDGET_JVM;
	if (!j->o.trace_budget)
		j->o.trace_budget = JOIN_TRACE_BUDGET;
	if (!j->o.traces_per_round)
		j->o.traces_per_round = JOIN_TRACES_PER_ROUND;
	dl_init(&j->dirty);
	hmap_init(&j->by_pid, 64, 0);
	hmap_init(&j->thr_tab, 256, 0);
	return j;
}

void join__free(struct join *j)
{
	__u64 *v;

	if (!j)
		return;
	for (size_t i = 0; i < j->njvms; i++)
		jn_jvm_free(j, j->jvms[i]);
	free(j->jvms);
	hmap_free(&j->by_pid);
	free(j->ups);
	for (size_t pos = 0; (v = hmap_next(&j->thr_tab, &pos, NULL, NULL));)
		blk_free(&j->blk, (struct thr *)(uintptr_t)*v);
	hmap_free(&j->thr_tab);
	blk_release(&j->blk);
	jn_ev_free(j->waits);
	jn_ev_free(j->live);
	free(j->ages);
	free(j->lc);
	jn_memo_free(j->memo);
	free(j->exited);
	free(j);
}

static int pid_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* queues a program's end; folds the oldest JOIN_FOLD_BATCH when past JOIN_EXITED_KEEP */
static int process_ended(struct join *j, __u32 pid, const char *comm, join_alive_fn alive,
			 void *ctx)
{
	struct model_end batch[JOIN_FOLD_BATCH];
	__u32 pids[JOIN_FOLD_BATCH];
	size_t n = 0;
	int err;

	if (!j->exited) {
		j->exited = calloc(JOIN_EXITED_KEEP + JOIN_FOLD_BATCH, sizeof(*j->exited));
		if (!j->exited)
			return -ENOMEM;
	}
	j->exited[j->nexited].pid = pid;
	snprintf(j->exited[j->nexited].comm, sizeof(j->exited[0].comm), "%s", comm ? comm : "");
	if (++j->nexited < JOIN_EXITED_KEEP + JOIN_FOLD_BATCH)
		return 0;
	/*
	 * A pid a new process holds now (the pid space wrapped) is left out: its label sets
	 * are the live process's too (a set is keyed by pid and tid), and ids the join holds
	 * of it (event slots of a JVM) must stay valid. So is an exec'd program's name that
	 * the process runs under again (a shell that exec'd a shell): its sets are the new
	 * program's too. Its exit folds them.
	 */
	for (size_t i = 0; i < JOIN_FOLD_BATCH; i++) {
		const struct jn_ended *e = &j->exited[i];

		if (alive && alive(ctx, e->pid, e->comm[0] ? e->comm : NULL)) {
			j->fold_skipped++;
			continue;
		}
		batch[n].pid = pids[n] = e->pid;
		batch[n++].comm = e->comm[0] ? e->comm : NULL;
	}
	qsort(pids, n, sizeof(*pids), pid_cmp);
	/*
	 * The label ids the join holds of these processes: a thread's last stack gets its
	 * carried CPU time now (the ids are still valid); after the fold the slots whose ids it
	 * freed (for reuse) are forgotten. Their agent events went when their JVM retired.
	 */
	for (size_t i = 0; i < JOIN_LAST_SLOTS; i++) {
		struct last_cpu *l = &j->last[i];

		if (l->labels && bsearch(&l->pid, pids, n, sizeof(*pids), pid_cmp))
			(void)jn_last_cpu_settle(j, l);
	}
	/*
	 * On failure (the model's budget: the fold lays the rows out again beside the old)
	 * the batch stays unfolded and is let go, not tried again at every exit: each try
	 * walks every label set and row
	 */
	err = n ? model__fold(j->model, batch, n) : 0;
	for (size_t i = 0; i < JOIN_LAST_SLOTS && n; i++) {
		struct last_cpu *l = &j->last[i];

		if (l->labels && !model__get_labels(j->model, l->labels))
			memset(l, 0, sizeof(*l));
	}
	j->nexited -= JOIN_FOLD_BATCH;
	memmove(j->exited, j->exited + JOIN_FOLD_BATCH, j->nexited * sizeof(*j->exited));
	return err;
}

int join__process_exited(struct join *j, __u32 pid, join_alive_fn alive, void *ctx)
{
	return process_ended(j, pid, NULL, alive, ctx);
}

int join__process_execed(struct join *j, __u32 pid, const char *comm, join_alive_fn alive,
			 void *ctx)
{
	if (!comm || !comm[0])
		return 0; /* never named by a sample: no label set of it */
	return process_ended(j, pid, comm, alive, ctx);
}

__u64 join__fold_skipped(const struct join *j)
{
	return j->fold_skipped;
}

jp_id jn_stack(struct join *j, struct jvm_ent *e, size_t n)
{
	size_t before;
	jp_id id;

	if (!e)
		return model__stack(j->model, j->locs, n);
	if (e->stack_nodes > JOIN_JVM_NODES + e->new_stacks * JOIN_JVM_NODES_PER_STACK) {
		id = model__stack_find(j->model, j->locs, n);
		j->share_refused = !id;
		return id;
	}
	before = model__stack_nodes(j->model);
	id = model__stack(j->model, j->locs, n);
	if (model__stack_nodes(j->model) > before) {
		e->stack_nodes += model__stack_nodes(j->model) - before;
		e->new_stacks++;
	}
	return id;
}

/*
 * err from the model: a refusal of its budget, or of a JVM's share (jn_stack), is a
 * dropped sample (counted for its JVM), not an error that ends the recording
 */
int jn_model_drop(struct join *j, struct jvm_ent *e, int err)
{
	bool share = j->share_refused;

	j->share_refused = false;
	if (err && share) {
		if (e)
			e->share_drops++;
		j->st.share_drops++;
		return 0;
	}
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
 * l's id in the model: the thread's last one when the model's labels of it are l still
 * (compared whole: a folded process's ids are freed and reused), else looked up and kept.
 * Saves the hashing of four strings and two lookups a sample.
 */
static jp_id memo_labels(struct join *j, const struct jp_labels *l)
{
	size_t i = (size_t)(jn_last_cpu_slot(j, l->pid, l->tid) - j->last);
	const struct jp_labels *m;
	jp_id id;

	if (j->lmemo[i].gen == j->lc_gen && j->lmemo[i].id &&
	    (m = model__get_labels(j->model, j->lmemo[i].id)) && m->pid == l->pid &&
	    m->tid == l->tid && m->cgroup == l->cgroup && m->nfolded == l->nfolded &&
	    !strcmp(m->comm, l->comm) && !strcmp(m->thread, l->thread) &&
	    !strcmp(m->main, l->main) && !strcmp(m->container, l->container ? l->container : ""))
		return j->lmemo[i].id;
	id = model__labels(j->model, l);
	j->lmemo[i].id = id;
	j->lmemo[i].gen = j->lc_gen;
	return id;
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
	return memo_labels(j, &l);
}

int jn_commit(struct join *j, const struct jp_sample *s, struct jvm_ent *e, size_t n,
	      const char *marker)
{
	/* off-CPU recorded only for -e lock's parks: the rest of the blocked time is not shown */
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only)
		return 0;
	if (marker)
		jn_push(j, &n, marker, JP_FK_ROOT);
	jn_late_done(j, e);
	j->pool_used = 0;
	return jn_commit_stack(j, s, e, jn_stack(j, e, n));
}

int jn_commit_stack(struct join *j, const struct jp_sample *s, struct jvm_ent *e, jp_id stack)
{
	__u64 w, cnt = join_sample_count(s);
	jp_id labels;
	int err;

	labels = sample_labels(j, s, e);
	if (!stack || !labels)
		return jn_model_drop(j, e, -ENOMEM);
	j->committed = stack;
	model__at(j->model, s->time_ns); /* the sample's time in the model's timeline */
	switch (s->kind) {
	case JP_EV_CPU:
		w = s->weight; /* a count's: its samples' weights summed */
		if (!(s->flags & JP_SF_CPU_TAIL) && !j->carried) {
			struct last_cpu *l = jn_last_cpu_slot(j, s->pid, s->tid);

			last_cpu_set(j, s, stack, labels);
			w += l->carry_ns; /* the thread's samples without a Java stack since */
			l->carry_ns = 0;
		}
		err = 0;
		if (!(s->flags & JP_SF_CPU_TAIL))
			err = model__add(j->model, stack, labels, JP_VAL_CPU_SAMPLES, cnt);
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
		j->st.samples += cnt;
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
	stack = jn_stack(j, e, n);
	labels = sample_labels(j, s, e);
	if (!stack || !labels)
		return jn_model_drop(j, e, -ENOMEM) ? -ENOMEM : 1;
	model__at(j->model, s->time_ns);
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
	__u64 n = join_sample_count(s);

	if (s->kind != JP_EV_CPU || (s->flags & JP_SF_CPU_TAIL))
		return;
	e->cpu_java += n;
	e->cpu_complete += complete ? n : 0;
	e->cpu_before += before ? n : 0;
}

int jn_add_missing(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		   const __u64 *ustack, struct jvm_ent *e, enum miss_reason r, int code)
{
	__u64 n = join_sample_count(s);

	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only)
		return 0; /* no Java stack: not known to be a park, and not shown otherwise */
	e->samples += n;
	e->java_samples += n;
	e->miss[r] += n;
	jn_tally_cpu(e, s, false, r == MISS_PENDING || r == MISS_NO_AGENT || r == MISS_EARLY_OFF);
	if (r == MISS_AGCT && code <= 0 && -code < 12)
		e->agct[-code] += n;
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

/* a JVM's sample with its whole Java stack, counted */
static void java_whole(struct join *j, const struct jp_sample *s, struct jvm_ent *e)
{
	__u64 n = join_sample_count(s);

	e->samples += n;
	e->java_samples += n;
	e->complete += n;
	jn_tally_cpu(e, s, true, false);
	j->st.java_complete += n;
}

int jn_finish_stack(struct join *j, const struct jp_sample *s, struct jvm_ent *e, jp_id stack)
{
	if (j->o.native_threads)
		tell_native(j, s, false);
	j->st.jvm_samples += join_sample_count(s);
	java_whole(j, s, e);
	j->pool_used = 0;
	return jn_commit_stack(j, s, e, stack);
}

/* a sample meets its trace */
int jn_finish(struct join *j, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack,
	      struct jvm_ent *e, const struct java_trace *t)
{
	char comm[JP_COMM_LEN + 1];
	__u64 n = join_sample_count(s);
	bool native;

	/*
	 * an off-CPU sample BPF walked, signalled for its park's blocker (-e lock): the trace
	 * brought no stack (a thread the agent does not know yet): BPF's frames stand
	 */
	if (t->num_frames <= 0 && (s->flags & JP_SF_JWALK))
		return jn_add_jwalked(j, s, kstack, ustack, e);
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
	j->st.jvm_samples += n;
	if (t->num_frames > 0) {
		java_whole(j, s, e);
		return add_java(j, s, kstack, ustack, e, t);
	}
	if (native || t->num_frames == 0) {
		/* JVM-internal thread, or a Java thread with no Java frame yet: natives are the truth */
		e->samples += n;
		e->internal += n;
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

int join__sample(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		 const __u64 *ustack)
{
	struct jvm_ent *e = jn_find_jvm(j, s->pid);
	__u64 n = join_sample_count(s);

	if (s->kind == JP_EV_CPU && (s->flags & JP_SF_CPU_TAIL))
		return jn_add_cpu_tail(j, s, e);
	/* only a JVM thread's interval with a Java stack (asked for, or BPF's) can be a park */
	if (s->kind == JP_EV_OFFCPU && j->o.offcpu_parks_only &&
	    (!e || (!e->a && !(s->jstack_err == JP_JW_ENTRY && s->jstack_len)) ||
	     (s->flags & JP_SF_OPEN) ||
	     (!((s->flags & JP_SF_SIGNALED) && !s->sig_err) &&
	      !(s->jstack_err == JP_JW_ENTRY && s->jstack_len))))
		return 0;
	if (!e)
		return jn_add_native(j, s, kstack, ustack, NULL, NULL);
	/*
	 * Replayed from a count (--aggregate): BPF counts a JVM's samples without a stack of
	 * their own only while the JVM has no entry there, before its agent is registered, as
	 * a record read then would say; its agent may be in by now
	 */
	if ((s->flags & JP_SF_COUNTED) && e->a &&
	    !(s->flags & (JP_SF_JWALK | JP_SF_NO_JAVA | JP_SF_NATIVE_THREAD))) {
		j->st.jvm_samples += n;
		return jn_add_missing(j, s, kstack, ustack, e, MISS_PENDING, 0);
	}
	if (!e->a && s->jstack_err == JP_JW_ENTRY && s->jstack_len && !e->early_off)
		return jn_early_hold(j, s, kstack, ustack, e);
	if (!e->a && !e->early_off &&
	    (s->jstack_err == JP_JW_NO_ANCHOR ||
	     (s->jstack_err == JP_JW_NO_THREAD && e->threads_known))) {
		/*
		 * a JavaThread (its OSThread checked by BPF) out of Java code with no last Java
		 * frame: no Java frame on its stack (a compiler thread, one not in Java yet), as
		 * the agent's "no Java frame" answer: its native frames are the truth. So is a
		 * thread in no entry of the JVM's thread list (GC, the VM thread), as of its last
		 * read: one started since (within ~100 ms) is taken for one too
		 */
		j->st.jvm_samples += n;
		e->samples += n;
		e->internal += n;
		return jn_add_native(j, s, kstack, ustack, e, NULL);
	}
	if (!e->a) {
		j->st.jvm_samples += n;
		return jn_add_missing(j, s, kstack, ustack, e,
				      e->pending ? MISS_PENDING : MISS_NO_AGENT, 0);
	}
	if (s->flags & JP_SF_OPEN) {
		/* never signalled (it would wake), but a monitor wait it is in has its stack */
		int r = jn_add_monitor_wait(j, s, kstack, ustack, e);

		j->st.jvm_samples += n;
		if (r <= 0)
			return r;
		return jn_add_missing(j, s, kstack, ustack, e, MISS_OPEN, 0);
	}
	if (s->flags & JP_SF_NO_JAVA) {
		/* BPF saw no last Java frame: the agent's "no Java frame" answer, unasked */
		j->st.jvm_samples += n;
		e->samples += n;
		e->internal += n;
		return jn_add_native(j, s, kstack, ustack, e, NULL);
	}
	if (s->flags & JP_SF_NATIVE_THREAD) {
		/* the agent said so earlier: a JVM-internal thread, not asked again */
		j->st.jvm_samples += n;
		e->samples += n;
		e->internal += n;
		e->internal_known += n;
		return jn_add_native(j, s, kstack, ustack, e, NULL);
	}
	/*
	 * walked, and signalled all the same (an off-CPU sample of -e lock: the agent's trace
	 * has the park's blocker): it waits for that trace, BPF's frames its fallback
	 */
	if ((s->flags & (JP_SF_JWALK | JP_SF_SIGNALED)) == (JP_SF_JWALK | JP_SF_SIGNALED) &&
	    !s->sig_err) {
		jn_last_own(j, s->pid, s->tid)->sig_ns = s->time_ns;
		return jn_pend_add(j, s, kstack, ustack, e);
	}
	if (s->flags & JP_SF_JWALK)
		return jn_add_jwalked(j, s, kstack, ustack, e);
	if (s->kind == JP_EV_CPU && (s->flags & JP_SF_FOLLOWS))
		return jn_add_follower(j, s, kstack, ustack, e);
	/*
	 * off-CPU, walked whole where no signal may go (the thread blocked again in its
	 * syscall: walked at that switch-out) with a Method* BPF did not know: named here
	 * if the join knows it by now
	 */
	if (s->kind == JP_EV_OFFCPU && !(s->flags & JP_SF_SIGNALED) &&
	    s->jstack_err == JP_JW_ENTRY && s->jstack_len)
		return jn_add_jwalked(j, s, kstack, ustack, e);
	if (!(s->flags & JP_SF_SIGNALED)) {
		j->st.jvm_samples += n;
		return jn_add_missing(j, s, kstack, ustack, e, MISS_NOT_SENT, 0);
	}
	if (s->sig_err) {
		j->st.jvm_samples += n;
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
	jn_time_bound(j, t0 + JN_NS(j, JOIN_POLL_ROUND_NS));
	for (int n = 0; jn_poll_agents(j) && ++n < JOIN_POLL_ROUNDS &&
			mono_ns() - t0 < JN_NS(j, JOIN_POLL_ROUND_NS);)
		;
	err = jn_pair_and_expire(j, false);
	jn_time_bound(j, 0);
	return err;
}

int join__flush(struct join *j)
{
	struct timespec nap = {0, 20 * 1000 * 1000};
	__u64 t0 = mono_ns(), seen;
	bool napped = false;
	int err;

	j->end_ns = t0;
	jn_time_bound(j, t0 + JN_NS(j, JOIN_FLUSH_NS));
	/*
	 * What the agents wrote up to now, then, while samples still wait, what they write
	 * next: a thread sampled just before the end answers when it next runs, which on a
	 * saturated host is a while. Within a bound: the deadline is kept.
	 */
	for (;;) {
		j->now_ns = mono_ns();
		if (j->now_ns - t0 >= JN_NS(j, JOIN_FLUSH_NS))
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
			jn_free_agent(j->jvms[i]);
	free(j->lc);
	j->lc = NULL;
	jn_memo_free(j->memo);
	j->memo = NULL;
}

/*
 * The long-running store (record/interval.c) gives the join a new model when the old one's
 * tables passed their budget. Every model id the join keeps belongs to the old model and is
 * forgotten here: the frames cached (loc cache: a new generation), the threads' last stacks
 * and the stacks of requests that samples follow (last_cpu; the CPU time carried to a last
 * stack goes with it), the stack of the last commit, the agent events waiting for their
 * other half (a monitor wait under way is then an orphan at its end; objects sampled live
 * are no longer tracked) and the allocation sites' stacks (their ages are kept, unnamed).
 * What the join holds as raw samples and traces (waiting) is model-free and stays.
 */
void join__model_reset(struct join *j, struct model *m)
{
	j->model = m;
	j->lc_gen++;
	j->committed = 0;
	for (size_t i = 0; i < j->njvms; i++)
		j->jvms[i]->stack_nodes = j->jvms[i]->new_stacks = 0;
	for (size_t i = 0; i < JOIN_LAST_SLOTS; i++) {
		struct last_cpu *l = &j->last[i];

		l->stack = l->labels = l->lead_stack = 0;
		l->carry_ns = 0;
	}
	for (size_t i = 0; j->waits && i < j->waits->n; i++) {
		struct ev_slot *w = &j->waits->evs[i];

		w->stack = w->labels = w->jstack = 0;
		if (!w->end_ns) /* its Entered finds an ended wait: an orphan, counted */
			w->end_ns = w->time_ns ? w->time_ns : 1;
	}
	jn_ev_free(j->live);
	j->live = NULL;
	for (size_t i = 0; j->ages && i < j->nages; i++)
		for (size_t b = 0; b < AGE_BUCKETS; b++)
			j->ages_other[b] += j->ages[i].n[b];
	j->nages = 0;
}

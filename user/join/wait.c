// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wait.c: a JVM sample waits for its Java trace from the agent's ring, and a trace read
 * first waits for its sample. Waiting samples and traces sit on two lists each: their
 * thread's queue (matching looks only at the few entries of one tid) and their JVM's FIFO
 * in arrival order (expiry and the budgets look only at the oldest). Samples of one thread
 * come out of the one BPF ring in time order, so a thread's queue is sorted by time and the
 * JVM's FIFO nearly so. Every step is O(1) amortised per sample and per trace. Samples held
 * before their JVM's agent came are early.c's.
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

/* the threads with something waiting, by (pid, tid) in one u64 (util/hmap) */
static __u64 thr_key(__u32 pid, __u32 tid)
{
	return (__u64)pid << 32 | tid;
}

static struct thr *thr_find(const struct join *j, __u32 pid, __u32 tid)
{
	const __u64 *v = hmap_find(&j->thr_tab, thr_key(pid, tid));

	return v ? (struct thr *)(uintptr_t)*v : NULL;
}

static struct thr *thr_get(struct join *j, __u32 pid, __u32 tid)
{
	struct thr *t = thr_find(j, pid, tid);

	if (t)
		return t;
	t = blk_zalloc(&j->blk, sizeof(*t));
	if (!t)
		return NULL;
	/* a failed grow only makes the probes longer, until the map is 3/4 full */
	if (hmap_put(&j->thr_tab, thr_key(pid, tid), (uintptr_t)t) < 0) {
		blk_free(&j->blk, t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	dl_init(&t->pend);
	dl_init(&t->traces);
	dl_init(&t->dnode);
	return t;
}

/* forgets a thread once nothing of it waits: threads come and go */
static void thr_put(struct join *j, struct thr *t)
{
	if (!t || !dl_empty(&t->pend) || !dl_empty(&t->traces))
		return;
	(void)hmap_del(&j->thr_tab, thr_key(t->pid, t->tid), NULL);
	dl_del(&t->dnode);
	blk_free(&j->blk, t);
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
	blk_free(&j->blk, p);
	return t;
}

static struct thr *ptr_free(struct join *j, struct ptr *p)
{
	struct thr *t = p->thr;

	dl_del(&p->tnode);
	dl_del(&p->jnode);
	p->jvm->trace_bytes -= p->cost;
	j->trace_bytes -= p->cost;
	blk_free(&j->blk, p);
	return t;
}

/* a waiting sample goes into the profile without its Java stack */
static int pend_give_up(struct join *j, struct pend *p, enum miss_reason r)
{
	int err;

	/* BPF walked it (an off-CPU sample signalled for its park's blocker): its frames */
	if ((p->s.flags & JP_SF_JWALK) && p->jvm->a) {
		err = jn_add_jwalked(j, &p->s, p->frames, p->frames + p->s.kstack_len, p->jvm);
		thr_put(j, pend_free(j, p));
		return err;
	}
	j->st.jvm_samples++;
	if (r == MISS_BACKLOG)
		j->st.backlog++;
	err = jn_add_missing(j, &p->s, p->frames, p->frames + p->s.kstack_len, p->jvm, r, 0);
	thr_put(j, pend_free(j, p));
	return err;
}

/*
 * A thread exited: its CPU time after its last sample goes to that sample's stack, as each
 * sample's own weight is the CPU time before it. The sample may still wait for its Java
 * trace (then it takes the time), or be committed (the last_cpu slot); without either the
 * time stays on the thread under "[cpu after the last sample]".
 */
int jn_add_cpu_tail(struct join *j, const struct jp_sample *s, struct jvm_ent *e)
{
	struct thr *t = thr_find(j, s->pid, s->tid);
	struct last_cpu *l = jn_last_cpu_slot(j, s->pid, s->tid);
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
		return jn_last_cpu_settle(j, l);
	}
	return jn_add_native(j, s, NULL, NULL, e, NULL);
}

void jn_pend_fill(struct pend *p, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e, size_t cost)
{
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
}

/* a waiting copy of s (cost bytes) charged to e and the join, on no list yet; NULL: no memory */
static struct pend *pend_new(struct join *j, const struct jp_sample *s, const __u64 *kstack,
			     const __u64 *ustack, struct jvm_ent *e, size_t cost)
{
	struct pend *p = blk_alloc(&j->blk, cost);

	if (!p)
		return NULL;
	jn_pend_fill(p, s, kstack, ustack, e, cost);
	e->pend_bytes += cost;
	j->pend_bytes += cost;
	return p;
}

/* the sample waits for its trace (or, following a request, for that request's) */
int jn_pend_add(struct join *j, const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack,
		struct jvm_ent *e)
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
	if (e->pend_bytes + cost > j->o.pend_budget_jvm ||
	    j->pend_bytes + cost > j->o.pend_budget) {
		j->st.jvm_samples++;
		j->st.backlog++;
		return jn_add_missing(j, s, kstack, ustack, e, MISS_BACKLOG, 0);
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
		e->jw = jwalk__new(e->pid, jn_jw_method, j);
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
int jn_add_follower(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		    const __u64 *ustack, struct jvm_ent *e)
{
	struct last_cpu *l = jn_last_cpu_slot(j, s->pid, s->tid);
	const jp_id *jl;
	size_t n = 0, nj = 0;

	if ((s->flags & JP_SF_IN_HANDLER) && !jn_agent_on_stack(j, s, ustack)) {
		j->st.jvm_samples++;
		return jn_add_missing(j, s, kstack, ustack, e, MISS_NOT_SENT, 0);
	}
	if (l->pid != s->pid || l->tid != s->tid || !l->sig_ns || l->sig_ns > s->time_ns) {
		j->st.jvm_samples++;
		return jn_add_missing(j, s, kstack, ustack, e, MISS_FOLLOW, 0);
	}
	if (l->lead_ns != l->sig_ns)
		return jn_pend_add(j, s, kstack, ustack, e); /* its request still waits */
	if (l->lead_code <= 0) {
		struct java_trace t = {.num_frames = l->lead_code};

		e->followed++;
		return jn_finish(j, s, kstack, ustack, e, &t);
	}
	j->st.jvm_samples++;
	jl = l->lead_stack ? model__get_stack(j->model, l->lead_stack, &nj) : NULL;
	if (!jl || l->lead_jfrom >= nj)
		return jn_add_missing(j, s, kstack, ustack, e, MISS_FOLLOW, 0);
	jn_push_native_part(j, &n, s, kstack, ustack);
	for (size_t i = l->lead_jfrom; i < nj && n < JOIN_MAX_FRAMES; i++)
		j->locs[n++] = jl[i];
	e->samples++;
	e->java_samples++;
	e->complete++;
	e->followed++;
	jn_tally_cpu(e, s, true, false);
	j->st.java_complete++;
	return jn_commit(j, s, e, n, NULL);
}

/* jn_finish, and the stack kept in the memo under k (h1 0: not kept) when it was whole */
static int finish_memo(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		       const __u64 *ustack, struct jvm_ent *e, const struct java_trace *tr,
		       const struct memo_key *k)
{
	int err;

	j->memo_off = !k->h1 && !k->h2;
	j->committed = 0;
	err = jn_finish(j, s, kstack, ustack, e, tr);
	if (!err)
		jn_memo_put(j, e, k);
	return err;
}

/*
 * A sample BPF walked whole and did not signal (--java-walk bpf): its Java stack is
 * BPF's frames, named here; one that cannot be named is counted missing
 */
int jn_add_jwalked(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		   const __u64 *ustack, struct jvm_ent *e)
{
	size_t cost = pend_cost(s);
	struct java_trace tr;
	struct memo_key k;
	struct pend *p;
	jp_id stack;

	if (!e->jw)
		e->jw = jwalk__new(e->pid, jn_jw_method, j);
	if (s->kind != JP_EV_CPU || (s->flags & JP_SF_CPU_TAIL))
		k.h1 = k.h2 = 0; /* only CPU samples: no event leaf, no park */
	else if ((stack = jn_memo_get(j, s, kstack, ustack, e, &k)))
		return jn_finish_stack(j, s, e, stack);
	if (!jwalk__trace(e->jw, e->a, s, jframes_of(s, ustack), &tr))
		return finish_memo(j, s, kstack, ustack, e, &tr, &k);
	/* the first to wait reads what the dictionary has gained (the others wait for it) */
	if (dl_empty(&e->jwait) && jvm_agent__dict_refresh(e->a) != e->jwait_dict &&
	    !jwalk__trace(e->jw, e->a, s, jframes_of(s, ustack), &tr))
		return jn_finish(j, s, kstack, ustack, e, &tr);
	/* it waits for the dictionary, within the budget of samples waiting for traces */
	if (e->pend_bytes + cost > j->o.pend_budget_jvm ||
	    j->pend_bytes + cost > j->o.pend_budget ||
	    !(p = pend_new(j, s, kstack, ustack, e, cost))) {
		j->st.jvm_samples += join_sample_count(s);
		return jn_add_missing(j, s, kstack, ustack, e, MISS_JWALK, 0);
	}
	dl_add_tail(&e->jwait, &p->jnode);
	return 0;
}

/*
 * The samples waiting for their frames to be named: named now, or (all, or waited
 * JOIN_WAIT_NS) counted missing. Tried again as soon as what names them grew: the
 * dictionary (a compiled method's code) or the Method*s learned from agreeing walks (an
 * interpreted frame's, jwalk__learned), which the same join__poll may have taught.
 */
static int jwait_retry(struct join *j, struct jvm_ent *e, bool all)
{
	struct dl *n = e->jwait.next;
	__u64 size = jn_dict_for(e, &e->jwait), learned = jwalk__learned(e->jw);
	bool grown = size != e->jwait_dict || learned != e->jwait_learned;
	int err = 0;

	e->jwait_dict = size;
	e->jwait_learned = learned;
	while (n != &e->jwait && !err) {
		struct pend *p = dl_entry(n, struct pend, jnode);
		const __u64 *ustack = p->frames + p->s.kstack_len;
		struct java_trace tr;

		n = n->next;
		if ((grown || all) &&
		    !jwalk__trace(e->jw, e->a, &p->s, jframes_of(&p->s, ustack), &tr)) {
			err = jn_finish(j, &p->s, p->frames, ustack, e, &tr);
		} else if (all || p->s.time_ns + JOIN_WAIT_NS <= j->now_ns) {
			j->st.jvm_samples += join_sample_count(&p->s);
			err = jn_add_missing(j, &p->s, p->frames, ustack, e, MISS_JWALK, 0);
		} else {
			continue;
		}
		pend_free(j, p);
	}
	return err;
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
	err = jn_finish(j, s, kstack, ustack, e, t);
	if (err)
		return err;
	l = jn_last_own(j, s->pid, s->tid);
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

	if (p->s.jstack_err && e->a) {
		/* learns the Method*s it names (the walks that need no signal) */
		jwalk__compare(e->jw, e->a, &p->s, jframes_of(&p->s, ustack), tr);
		/*
		 * the names the JVM's memory gives the same frames, against the agent's: a
		 * check (it reads the JVM's memory), made only when one is asked for
		 */
		if (j->o.compare_walks)
			vmnames__compare(e->vn, e->a, &p->s, jframes_of(&p->s, ustack), tr);
	}
	err = finish_lead(j, &p->s, p->frames, ustack, e, tr);

	while (!err && n != &t->pend) {
		struct pend *f = dl_entry(n, struct pend, tnode);

		if (!(f->s.flags & JP_SF_FOLLOWS))
			break;
		n = n->next;
		e->followed++;
		err = jn_finish(j, &f->s, f->frames, f->frames + f->s.kstack_len, e, tr);
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
	p = blk_alloc(&j->blk, cost);
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
int jn_round_next(struct join *j)
{
	if (!--j->round_left)
		return -EAGAIN;
	if (j->deadline_ns && mono_ns() > j->deadline_ns) {
		j->round_left = 0;
		return -EAGAIN;
	}
	return 0;
}

int jn_on_trace(void *ctx, const struct java_trace *tr)
{
	struct join *j = ctx;
	struct jvm_ent *e = j->cur_jvm;
	__u32 tid = jn_host_tid(e, tr->tid, j->now_ns);
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
	return jn_round_next(j);
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
		jn_tidmap_rescan(e, j->now_ns);
	if (e->unresolved_scan_ns == e->tids_scanned_ns)
		return 0;
	e->unresolved_scan_ns = e->tids_scanned_ns;
	for (n = e->unresolved.next; n != &e->unresolved;) {
		struct ptr *tr = dl_entry(n, struct ptr, tnode);
		__u32 tid = jn_host_tid(e, tr->t.tid, j->now_ns);
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

int jn_retry_dirty(struct join *j)
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
int jn_expire(struct join *j, struct jvm_ent *e, bool all)
{
	int err = jn_early_retry(j, e, all);

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
	/* last: a walked sample that gave up its trace above may wait for the dictionary */
	return e->a ? jwait_retry(j, e, all) : 0;
}

/*
 * One round over the agent rings: at most traces_per_round records of each JVM, and
 * no next JVM once the round took JOIN_POLL_ROUND_NS; the JVM read first rotates so a
 * busy one cannot starve the others. Returns true when a ring may hold more.
 */
bool jn_poll_agents(struct join *j)
{
	__u64 t0 = mono_ns();
	bool more = false;
	int err;

	for (size_t k = 0; k < j->njvms; k++) {
		struct jvm_ent *e = j->jvms[(j->rr + k) % j->njvms];

		if (!e->a)
			continue;
		/* idle (no sample waits, no event asked for, nothing last time): now and then */
		if (!j->end_ns && !j->o.joined_events && !e->pend_bytes && t0 < e->ring_next_ns)
			continue;
		if (k && (mono_ns() - t0 > JN_NS(j, JOIN_POLL_ROUND_NS) ||
			  (j->deadline_ns && mono_ns() > j->deadline_ns))) {
			more = true;
			break;
		}
		j->cur_jvm = e;
		j->round_left = j->o.traces_per_round;
		/* without -e alloc, live or lock no event is looked at: counted as unread */
		err = jvm_agent__poll_events(e->a, jn_on_trace,
					     j->o.joined_events ? jn_on_event : NULL, j);
		e->ring_next_ns = err ? 0 : t0 + JN_NS(j, JOIN_RING_IDLE_NS);
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
void jn_time_bound(struct join *j, __u64 until)
{
	j->deadline_ns = until;
	j->late = j->late_marked = false;
	j->late_count = 0;
}

int jn_pair_and_expire(struct join *j, bool all)
{
	int err;

	for (size_t i = 0; i < j->njvms; i++) {
		err = retry_unresolved(j, j->jvms[i]);
		if (err)
			return err;
	}
	err = jn_retry_dirty(j);
	for (size_t i = 0; i < j->njvms && !err; i++)
		err = jn_expire(j, j->jvms[i], all);
	return err;
}


// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * early.c: Java stacks before the agent is in. When a JVM is found, the layout BPF's Java
 * walk needs is read from outside (jvm/vmstructs.h: libjvm.so's symbols, the JVM's memory
 * read-only) and published at once, as a jvms entry without a signal: BPF walks the JVM's
 * threads and never signals them (no agent, no handler). The join holds those raw frames
 * until the agent's dictionary names them. When the agent's own layout arrives the two are
 * compared; one that differs turns the early walk of that JVM off.
 */
#include <dirent.h>
#include <stdint.h>

#include "record/record_int.h"
#include "jvm/vmnames.h"
#include "jvm/vmstructs.h"

/*
 * Its thread list (the walk from a thread's frame anchor): the list pointer is looked at
 * every THREADS_EVERY_NS (one 8-byte read: HotSpot makes a new list for every thread that
 * starts or exits), the list read only when it changed (then the next look waits 1 ms
 * more for each thread read), and read whole every THREADS_FULL_NS anyway (a list freed and
 * another made at the same address)
 */
#define THREADS_EVERY_NS (100ull * 1000 * 1000)
/*
 * A JVM whose threads stay as they are has its task directory read less and less often
 * (native_scan): each look that finds its list and its other threads unchanged doubles the
 * time to the next, up to THREADS_QUIET_MAX_NS; any change brings it back to
 * THREADS_EVERY_NS, and a changed list has the directory read at once. Ten JVMs of stable
 * thread pools read 100 task directories a second at the fixed rate (an eighth of jprof's
 * CPU at 99 Hz, longrun.py --daemon), about 7 this way.
 *
 * The list pointer backs off the same way while no thread outside the list runs: a CPU
 * sample of one (rec_early_sampled: a native thread, or a thread that starts) has it looked
 * at within THREADS_EVERY_NS of the last look. A native thread that attaches is sampled
 * while it runs, so it is in the list within that time and its samples get Java stacks
 * again; an idle JVM's list is looked at every THREADS_QUIET_MAX_NS.
 */
#define THREADS_QUIET_MAX_NS (1600ull * 1000 * 1000)
#define THREADS_FULL_NS	 (5000ull * 1000 * 1000)
#define THREADS_CAP0	 256
#define THREADS_PER_THREAD_NS (1000ull * 1000)

/* a JVM found while still starting has no code heaps yet: tried again, 20 ms doubling */
#define EARLY_TRIES	 9 /* the last about 5 s after the first */
#define EARLY_BACKOFF_NS (20ull * 1000 * 1000)

static struct rec_early *early_of(struct rec *r, __u32 pid)
{
	for (size_t i = 0; i < r->nearly; i++)
		if (r->early[i].pid == pid)
			return &r->early[i];
	return NULL;
}

/* an agent of pid registered in BPF: its own entry there, never to be replaced */
static bool agent_in_bpf(const struct rec *r, __u32 pid)
{
	for (size_t i = 0; i < r->nagents; i++)
		if (r->agents[i].pid == pid && r->agents[i].in_bpf)
			return true;
	return false;
}

static int cmp_tid(const void *a, const void *b)
{
	__u32 x = ((const struct vms_thread *)a)->host_tid;
	__u32 y = ((const struct vms_thread *)b)->host_tid;

	return x < y ? -1 : x > y;
}

/* the thread ts of e in BPF's jthreads, or (t NULL) no longer */
static void thread_set(struct rec *r, struct rec_early *e, const struct vms_thread *t, __u32 tid)
{
	const struct vms_threads *l = &e->names.threads;
	struct jp_jthread v;
	int err;

	if (!t) {
		(void)kernel_session__set_jthread(r->ks, tid, NULL);
		return;
	}
	v = (struct jp_jthread){
		.thread = t->thread,
		.stack_hi = t->stack_hi,
		.tgid = e->pid,
		.state = (__u16)l->state,
		.anchor = (__u16)l->anchor,
		.osthread = (__u16)l->osthread,
		.os_tid = (__u16)l->os_tid,
		.jvm_tid = t->tid,
	};
	err = kernel_session__set_jthread(r->ks, tid, &v);
	if (err) {
		r->early_st.tl_map_err++;
		e->jl_bad = true;
	} else {
		r->early_st.tl_set++;
	}
}

_Static_assert(sizeof(struct jp_jlist) == sizeof(struct jp_jthread), "jthreads' list entry");

/*
 * jthreads' entry of e itself (jprof.h struct jp_jlist), after its threads: every thread of
 * its list, whose last entry is last, is in jthreads; or (last NULL) that is not known
 */
static void list_set(struct rec *r, struct rec_early *e, const struct vms_thread *last)
{
	const struct vms_threads *l = &e->names.threads;
	union {
		struct jp_jthread t;
		struct jp_jlist l;
	} v;
	__u32 key = JP_JTHREADS_LIST | e->pid;

	__u32 tkey = JP_JTHREADS_TMPL | e->pid;

	if (!last || e->jl_bad || l->list_length > UINT16_MAX || l->list_threads > UINT16_MAX ||
	    l->osthread > UINT16_MAX || l->os_tid > UINT16_MAX) {
		if (e->jl_set && !kernel_session__set_jthread(r->ks, key, NULL)) {
			e->jl_set = false;
			(void)kernel_session__set_jthread(r->ks, tkey, NULL);
		}
		return;
	}
	memset(&v, 0, sizeof(v));
	v.l = (struct jp_jlist){
		.list_var = l->list_var,
		.last = last->thread,
		.tgid = e->pid,
		.length = (__u16)l->list_length,
		.threads = (__u16)l->list_threads,
		.osthread = (__u16)l->osthread,
		.os_tid = (__u16)l->os_tid,
		.last_tid = last->tid,
	};
	if (kernel_session__set_jthread(r->ks, key, &v.t)) {
		r->early_st.tl_map_err++;
		return;
	}
	/* the offsets of a JavaThread, for the threads BPF finds at the list's end */
	v.t = (struct jp_jthread){
		.tgid = e->pid,
		.state = (__u16)l->state,
		.anchor = (__u16)l->anchor,
		.osthread = (__u16)l->osthread,
		.os_tid = (__u16)l->os_tid,
	};
	if (kernel_session__set_jthread(r->ks, tkey, &v.t))
		r->early_st.tl_map_err++;
	e->jl_set = true;
	r->early_st.jl_set++;
}

/*
 * The host tids of the threads nt[0..n) of e, a JVM in another pid namespace (its OSThreads
 * hold the tids it has there): its task directory read again (the list changed: threads
 * came). Threads not found there (gone since) are left out. The new n.
 */
static size_t threads_to_host(struct rec *r, struct rec_early *e, struct vms_thread *nt, size_t n)
{
	size_t m = 0, k = 0, bad = 0;
	int err;

	for (;;) {
		if (!e->capnst) {
			size_t cap = e->nnst_want;
			struct proc_nstid *p = realloc(e->nst, cap * sizeof(*p));

			if (!p)
				return 0;
			e->nst = p;
			e->capnst = cap;
		}
		err = proc_ns_tids(e->pid, e->nst, e->capnst, &m, &bad);
		if (err != -E2BIG || e->capnst >= 2 * VMS_MAX_THREADS)
			break;
		/* more threads than JavaThreads (GC, compiler...): grown, read again */
		e->nnst_want = e->capnst * 2;
		e->capnst = 0;
	}
	r->early_st.ns_scans++;
	r->early_st.ns_bad += bad;
	if (err) {
		r->early_st.ns_failed++;
		r->early_st.ns_last_err = err;
		return 0;
	}
	e->nnst = m;
	for (size_t i = 0; i < n; i++) {
		nt[i].host_tid = proc_nstid_host(e->nst, e->nnst, nt[i].tid);
		if (nt[i].host_tid)
			nt[k++] = nt[i];
		else
			r->early_st.ns_unmapped++;
	}
	return k;
}

/*
 * e's thread list read again when it changed: BPF's jthreads gets the threads that came,
 * loses the ones gone (sorted by host tid, merged with the last read)
 */
static bool threads_refresh(struct rec *r, struct rec_early *e, __u64 now)
{
	bool full = now >= e->threads_full_ns;
	size_t n = 0, skipped = 0, i = 0, k = 0, nlist;
	struct vms_thread *nt, last = {0};
	__u64 list = 0;
	int err;

	/* the next look: soon after a thread outside the list ran, else later and later */
	e->look_ns = e->unlisted_ran			     ? THREADS_EVERY_NS
		     : e->look_ns * 2 < THREADS_QUIET_MAX_NS ? e->look_ns * 2
							     : THREADS_QUIET_MAX_NS;
	e->unlisted_ran = false;
	e->look_soon_ns = now + THREADS_EVERY_NS;
	e->threads_next_ns = now + e->look_ns;
	if (!e->capthr || (e->nthr == e->capthr && e->capthr < VMS_MAX_THREADS)) {
		size_t cap = e->capthr ? e->capthr * 2 : THREADS_CAP0;
		struct vms_thread *p = realloc(e->thr, 2 * cap * sizeof(*p));

		if (!p)
			return false;
		e->thr = p;
		e->capthr = cap;
	}
	/* the last read in [0, capthr), the new one after it */
	nt = e->thr + e->capthr;
	err = vmstructs_threads_pid(e->pid, &e->names.threads, full ? 0 : e->tlist, nt, e->capthr,
				    &n, &list, &skipped);
	if (err == -EALREADY) {
		e->quiet_ns = e->quiet_ns * 2 < THREADS_QUIET_MAX_NS ? e->quiet_ns * 2
								    : THREADS_QUIET_MAX_NS;
		return true;
	}
	r->early_st.tl_reads++;
	if (list != e->tlist) { /* threads came or went: the task directory read at once */
		e->quiet_ns = e->look_ns = THREADS_EVERY_NS;
		e->threads_next_ns = now + THREADS_EVERY_NS;
		e->native_next_ns = now;
	}
	if (err == -E2BIG && e->capthr < VMS_MAX_THREADS) {
		e->nthr = e->capthr; /* grown at the next look */
		e->tlist = 0;
		return false;
	}
	if (err) {
		r->early_st.tl_failed++;
		r->early_st.tl_last_err = err;
		return false;
	}
	/* the list's last entry, in list order (before the sort): every entry read */
	if (n && !skipped)
		last = nt[n - 1];
	nlist = n;
	if (full)
		e->threads_full_ns = now + THREADS_FULL_NS;
	/*
	 * a list read costs 3 batched reads per 128 threads, and a BPF map update per thread
	 * that changed: a JVM with many threads that start and exit all the time is looked at
	 * less often (1,000 threads: every 1.1 s)
	 */
	e->threads_next_ns = e->look_soon_ns = now + THREADS_EVERY_NS + n * THREADS_PER_THREAD_NS;
	r->early_st.tl_changed += list != e->tlist;
	r->early_st.tl_skipped += skipped;
	e->tlist = list;
	if (e->same_ns) {
		for (size_t j = 0; j < n; j++)
			nt[j].host_tid = nt[j].tid;
	} else {
		n = threads_to_host(r, e, nt, n);
	}
	if (n != nlist)
		last.thread = 0; /* some not found in the task directory: not all stored */
	qsort(nt, n, sizeof(*nt), cmp_tid);
	while (i < e->nthr || k < n) {
		if (k == n || (i < e->nthr && e->thr[i].host_tid < nt[k].host_tid)) {
			thread_set(r, e, NULL, e->thr[i++].host_tid);
		} else if (i == e->nthr || nt[k].host_tid < e->thr[i].host_tid) {
			thread_set(r, e, &nt[k], nt[k].host_tid);
			k++;
		} else {
			if (nt[k].thread != e->thr[i].thread ||
			    nt[k].stack_hi != e->thr[i].stack_hi || nt[k].tid != e->thr[i].tid)
				thread_set(r, e, &nt[k], nt[k].host_tid);
			i++;
			k++;
		}
	}
	memcpy(e->thr, nt, n * sizeof(*nt));
	e->nthr = n;
	r->early_st.jl_unset += !last.thread;
	list_set(r, e, last.thread ? &last : NULL);
	/* samples of threads in no entry are of no JavaThread (the join) */
	join__set_jvm_threads_known(r->join, e->pid, n > 0);
	return true;
}

static int cmp_native(const void *a, const void *b)
{
	__u32 x = ((const struct rec_native *)a)->tid, y = ((const struct rec_native *)b)->tid;

	return x < y ? -1 : x > y;
}

/* tid is in e's thread list as last read (e->thr, sorted by host tid) */
static bool thr_has(const struct rec_early *e, __u32 tid)
{
	size_t lo = 0, hi = e->nthr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->thr[mid].host_tid == tid)
			return true;
		if (e->thr[mid].host_tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/*
 * The threads of e that are no JavaThread (GC, VM, JIT-less native threads), in BPF's
 * native_threads: a sample of theirs asks the agent for no stack, as when the agent answered
 * "not a Java thread" (which it says only after NATIVE_AFTER_NS of such answers, a signal
 * each). One is in e's task directory and in no entry of its thread list, read just before
 * (e->thr current), at two looks in a row: a JavaThread is in the list from before it
 * starts, but its OS thread exists a moment earlier. One found in the list later (a native
 * thread that attached) is taken out again; the agent's periodic re-ask stays. Looked at
 * every NATIVE_SCAN_NS, or NATIVE_SCAN_BIG_NS for a JVM of more than NATIVE_SCAN_BIG
 * threads, or less often while its threads stay as they are (quiet_ns); before its agent
 * is in too, so that its first signals are not to these.
 */
#define NATIVE_SCAN_NS	   (100ull * 1000 * 1000)
#define NATIVE_SCAN_BIG_NS (1000ull * 1000 * 1000)
#define NATIVE_SCAN_BIG	   256
#define NATIVE_MAX	   (2 * VMS_MAX_THREADS)
static void native_scan(struct rec *r, struct rec_early *e, __u64 now)
{
	struct rec_native *nv = NULL;
	size_t n = 0, cap = 0, k = 0;
	struct dirent *de;
	bool changed;
	char path[48];
	DIR *d;
	int dfd;

	if (now < e->native_next_ns || !e->nthr)
		return;
	e->native_next_ns = now + (e->nthr > NATIVE_SCAN_BIG ? NATIVE_SCAN_BIG_NS : NATIVE_SCAN_NS);
	if (e->native_next_ns < now + e->quiet_ns)
		e->native_next_ns = now + e->quiet_ns; /* its threads stay as they were */
	snprintf(path, sizeof(path), "/proc/%u/task", e->pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	r->early_st.nat_scans++;
	while ((de = readdir(d))) {
		unsigned long tid;
		char *end;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		errno = 0;
		tid = strtoul(de->d_name, &end, 10);
		if (*end || errno || tid > UINT32_MAX || thr_has(e, (__u32)tid))
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct rec_native *p;

			if (c > NATIVE_MAX || !(p = realloc(nv, c * sizeof(*p))))
				break; /* the rest at a later look */
			nv = p;
			cap = c;
		}
		nv[n++] = (struct rec_native){.tid = (__u32)tid};
	}
	closedir(d);
	if (n)
		qsort(nv, n, sizeof(*nv), cmp_native);
	/* merged with the last look's: seen twice, marked; marked and gone from here, unmarked */
	for (size_t i = 0; i < n; i++) {
		while (k < e->nnat && e->nat[k].tid < nv[i].tid) {
			if (e->nat[k].marked && thr_has(e, e->nat[k].tid)) {
				(void)kernel_session__native_thread(r->ks, e->nat[k].tid, false, false);
				r->early_st.nat_unmarked++;
			}
			k++;
		}
		if (k < e->nnat && e->nat[k].tid == nv[i].tid) {
			nv[i].marked = e->nat[k].marked;
			if (!nv[i].marked &&
			    !kernel_session__native_thread(r->ks, nv[i].tid, true, true)) {
				nv[i].marked = 1;
				r->early_st.nat_marked++;
			}
			k++;
		}
	}
	for (; k < e->nnat; k++) {
		if (e->nat[k].marked && thr_has(e, e->nat[k].tid)) {
			(void)kernel_session__native_thread(r->ks, e->nat[k].tid, false, false);
			r->early_st.nat_unmarked++;
		}
	}
	/* threads that came or went outside the list: looked at often again */
	changed = n != e->nnat;
	for (size_t i = 0; !changed && i < n; i++)
		changed = nv[i].tid != e->nat[i].tid;
	if (changed)
		e->quiet_ns = THREADS_EVERY_NS;
	free(e->nat);
	e->nat = nv;
	e->nnat = n;
}

/* e's threads out of jthreads, its list freed */
static void threads_drop(struct rec *r, struct rec_early *e)
{
	if (r->ks) {
		list_set(r, e, NULL);
		for (size_t i = 0; i < e->nthr; i++)
			thread_set(r, e, NULL, e->thr[i].host_tid);
	}
	free(e->thr);
	e->thr = NULL;
	e->nthr = e->capthr = 0;
	free(e->nst);
	e->nst = NULL;
	e->nnst = e->capnst = 0;
	free(e->nat);
	e->nat = NULL;
	e->nnat = 0;
}

static void try_publish(struct rec *r, struct rec_early *e, __u64 now)
{
	struct vms_stats st = {0};
	bool agent = agent_in_bpf(r, e->pid);
	__u64 start;
	int err;

	err = proc_start_ticks(e->pid, &start);
	if (!err && start != e->start_ticks)
		err = -ESRCH;
	if (!err)
		err = vmstructs_read_pid(e->pid, &e->w, &e->names, &st);
	r->early_st.read_bytes += st.bytes;
	r->early_st.reads += st.reads;
	if (err == -EAGAIN && ++e->tries < EARLY_TRIES) {
		r->early_st.retries++;
		e->next_ns = now + (EARLY_BACKOFF_NS << (e->tries - 1));
		return;
	}
	/*
	 * The thread list for the walk from the frame anchor, agent or not. A JVM in another
	 * pid namespace knows its threads by the tids they have there: mapped to ours through
	 * /proc (threads_to_host), BPF's entries keyed by ours and holding theirs
	 */
	if (!err && e->names.threads.ok) {
		e->threads_on = true;
		threads_refresh(r, e, now);
	}
	if (agent) {
		e->done = true; /* the agent was faster: its own layout walks it */
		/* shadow: the names from its memory, compared with the agent's (vmnames__compare) */
		if (!err && r->o->java_walk == JP_JWALK_SHADOW)
			join__set_jvm_vmnames(r->join, e->pid,
					      vmnames__new(e->pid, &e->w, &e->names));
		return;
	}
	if (!err)
		err = kernel_session__add_walk(r->ks, e->pid, e->start_ticks, &e->w);
	e->done = true;
	if (err) {
		r->early_st.failed++;
		r->early_st.last_err = err;
		pr_debug("JVM %u: no Java walk before its agent: %s", e->pid, strerror(-err));
		return;
	}
	e->published = true;
	r->early_st.published++;
	/* what no agent names (before it comes, or with none) is named from the JVM's memory */
	join__set_jvm_vmnames(r->join, e->pid, vmnames__new(e->pid, &e->w, &e->names));
	now = mono_ns();
	r->early_st.ns_sum += now - e->found_ns;
	if (now - e->found_ns > r->early_st.ns_max)
		r->early_st.ns_max = now - e->found_ns;
	pr_debug("JVM %u: Java walk in BPF before its agent, %u code heaps, %.1f ms after it was "
		 "found (%llu KiB of its memory read)",
		 e->pid, e->w.n_heaps, (now - e->found_ns) / 1e6,
		 (unsigned long long)(st.bytes >> 10));
}

void rec_early_found(struct rec *r, const struct jvm_info *jvm)
{
	struct rec_early *e;
	__u64 start, now = mono_ns();
	size_t i;

	if (!r->ks || !r->o->java_walk || early_of(r, jvm->pid))
		return;
	if (proc_start_ticks(jvm->pid, &start))
		return;
	for (i = 0; i < r->nearly && r->early[i].pid; i++)
		;
	if (i == JP_MAX_JVMS)
		return;
	e = &r->early[i];
	*e = (struct rec_early){.pid = jvm->pid,
				.start_ticks = start,
				.found_ns = now,
				.same_ns = jvm->nspid == jvm->pid,
				.nnst_want = THREADS_CAP0 * 2,
				.quiet_ns = THREADS_EVERY_NS,
				.look_ns = THREADS_EVERY_NS};
	if (i == r->nearly)
		r->nearly++;
	try_publish(r, e, now);
}

void rec_early_tick(struct rec *r, __u64 now)
{
	for (size_t i = 0; i < r->nearly; i++) {
		struct rec_early *e = &r->early[i];

		if (e->pid && !e->done && now >= e->next_ns)
			try_publish(r, e, now);
		else if (e->pid && e->threads_on && now >= e->threads_next_ns &&
			 threads_refresh(r, e, now))
			native_scan(r, e, now);
	}
}

void rec_early_sampled(struct rec *r, __u32 pid, __u32 tid)
{
	struct rec_early *e = early_of(r, pid);

	if (!e || !e->threads_on || e->unlisted_ran || thr_has(e, tid))
		return;
	e->unlisted_ran = true;
	if (e->threads_next_ns > e->look_soon_ns)
		e->threads_next_ns = e->look_soon_ns;
}

/*
 * The agent's layout for pid (NULL: it published none) against the one read from outside:
 * false when they differ (the early walk is off for that JVM: the join drops what it held)
 */
bool rec_early_check(struct rec *r, __u32 pid, const struct jp_jwalk *agent_w)
{
	struct rec_early *e = early_of(r, pid);

	if (!e || !e->published)
		return true;
	if (!agent_w) {
		r->early_st.no_agent_layout++;
		return true;
	}
	if (!memcmp(&e->w, agent_w, sizeof(*agent_w))) {
		r->early_st.agree++;
		return true;
	}
	r->early_st.differ++;
	pr_info("JVM %u: the layout read from outside differs from its agent's: its walk before "
		"the agent is off, the samples walked so far dropped",
		pid);
	join__early_off(r->join, pid);
	return false;
}

bool rec_early_published(struct rec *r, __u32 pid)
{
	const struct rec_early *e = early_of(r, pid);

	return e && e->published;
}

void rec_early_drop(struct rec *r, __u32 pid)
{
	struct rec_early *e = early_of(r, pid);

	if (!e)
		return;
	if (e->published && r->ks && !agent_in_bpf(r, pid))
		(void)kernel_session__del_jvm(r->ks, pid);
	threads_drop(r, e);
	memset(e, 0, sizeof(*e));
}

void rec_early_free(struct rec *r)
{
	for (size_t i = 0; i < r->nearly; i++) {
		free(r->early[i].thr);
		r->early[i].thr = NULL;
		r->early[i].nthr = r->early[i].capthr = 0;
		free(r->early[i].nst);
		r->early[i].nst = NULL;
		r->early[i].nnst = r->early[i].capnst = 0;
		free(r->early[i].nat);
		r->early[i].nat = NULL;
		r->early[i].nnat = 0;
	}
}

void rec_early_report(const struct rec *r, FILE *f, bool verbose)
{
	const __typeof__(r->early_st) *s = &r->early_st;

	if (verbose && r->kstats[JP_STAT_ANCHOR])
		fprintf(f,
			"jprof: samples of walked JVMs outside the code cache: %llu, walked whole "
			"from the thread's frame anchor (or native frame pointers): %llu (%.1f%%); not: "
			"thread not known %llu, "
			"in Java state %llu, no last Java frame %llu, anchor unreadable or out of "
			"range %llu, the walk from it ended early %llu\n",
			(unsigned long long)r->kstats[JP_STAT_ANCHOR],
			(unsigned long long)r->kstats[JP_STAT_ANCHOR_WHOLE],
			100.0 * (double)r->kstats[JP_STAT_ANCHOR_WHOLE] /
				(double)r->kstats[JP_STAT_ANCHOR],
			(unsigned long long)r->kstats[JP_STAT_ANCHOR_NOTHREAD],
			(unsigned long long)r->kstats[JP_STAT_ANCHOR_IN_JAVA],
			(unsigned long long)r->kstats[JP_STAT_ANCHOR_NONE],
			(unsigned long long)r->kstats[JP_STAT_ANCHOR_BAD],
			(unsigned long long)(r->kstats[JP_STAT_ANCHOR] -
					     r->kstats[JP_STAT_ANCHOR_WHOLE] -
					     r->kstats[JP_STAT_ANCHOR_NOTHREAD] -
					     r->kstats[JP_STAT_ANCHOR_IN_JAVA] -
					     r->kstats[JP_STAT_ANCHOR_NONE] -
					     r->kstats[JP_STAT_ANCHOR_BAD]));
	if (verbose && (r->kstats[JP_STAT_STUB_FP] || r->kstats[JP_STAT_STUB_FP_NOT]))
		fprintf(f,
			"jprof: stubs the Java walk passed by their rbp frame: %llu (%llu tried that "
			"did not check out)\n",
			(unsigned long long)r->kstats[JP_STAT_STUB_FP],
			(unsigned long long)r->kstats[JP_STAT_STUB_FP_NOT]);
	if (verbose && r->kstats[JP_STAT_I2C])
		fprintf(f,
			"jprof: I2C adapters at the interrupted pc passed to their interpreted "
			"caller: %llu\n",
			(unsigned long long)r->kstats[JP_STAT_I2C]);
	if (verbose && r->kstats[JP_STAT_INTERP_ENTRY])
		fprintf(f,
			"jprof: interpreted frames at the interrupted pc not whole yet, passed to "
			"their caller: %llu\n",
			(unsigned long long)r->kstats[JP_STAT_INTERP_ENTRY]);
	if (verbose && r->kstats[JP_STAT_JW_PUSHED])
		fprintf(f,
			"jprof: compiled frames at the interrupted pc with a word pushed in their "
			"body (String.compareTo's intrinsic), walked one word up: %llu\n",
			(unsigned long long)r->kstats[JP_STAT_JW_PUSHED]);
	if (verbose && (r->kstats[JP_STAT_C2I] || r->kstats[JP_STAT_C2I_NOT]))
		fprintf(f,
			"jprof: C2I adapters at the interrupted pc passed to their compiled "
			"caller: "
			"%llu; adapters passed neither way (signalled): %llu\n",
			(unsigned long long)r->kstats[JP_STAT_C2I],
			(unsigned long long)r->kstats[JP_STAT_C2I_NOT]);
	if (verbose && s->tl_reads)
		fprintf(f,
			"jprof: threads for the walk from the frame anchor: %llu thread lists read "
			"(%llu changed), %llu threads set, %llu left out, %llu not stored, %llu "
			"reads failed%s%s\n",
			(unsigned long long)s->tl_reads, (unsigned long long)s->tl_changed,
			(unsigned long long)s->tl_set, (unsigned long long)s->tl_skipped,
			(unsigned long long)s->tl_map_err, (unsigned long long)s->tl_failed,
			s->tl_failed ? ", the last: " : "",
			s->tl_failed ? strerror(-s->tl_last_err) : "");
	if (verbose && s->nat_scans)
		fprintf(f,
			"jprof: threads in no JVM's thread list (GC, VM threads), asked for no Java "
			"stack: %llu marked, %llu found in the list later; %llu task directories read; "
			"%llu samples of threads not marked yet not signalled (no thread added to the "
			"list since it was stored whole: %llu times, %llu not whole)\n",
			(unsigned long long)s->nat_marked, (unsigned long long)s->nat_unmarked,
			(unsigned long long)s->nat_scans,
			(unsigned long long)r->kstats[JP_STAT_UNLISTED],
			(unsigned long long)s->jl_set, (unsigned long long)s->jl_unset);
	if (verbose && s->ns_scans)
		fprintf(f,
			"jprof: threads of JVMs in other pid namespaces: %llu task directories read "
			"(%llu failed%s%s), %llu threads not found there, %llu status files "
			"unparsable\n",
			(unsigned long long)s->ns_scans, (unsigned long long)s->ns_failed,
			s->ns_failed ? ", the last: " : "",
			s->ns_failed ? strerror(-s->ns_last_err) : "",
			(unsigned long long)s->ns_unmapped, (unsigned long long)s->ns_bad);
	if (!verbose || !(s->published + s->failed))
		return;
	fprintf(f,
		"jprof: Java walk before the agent: %llu JVMs (layout read from outside in %.1f ms "
		"on average, %.1f ms at most, %llu KiB read in %llu reads, %llu retries of JVMs "
		"still starting), %llu failed%s%s; against the agent's layout: %llu the same, %llu "
		"different, %llu agents without one\n",
		(unsigned long long)s->published,
		s->published ? s->ns_sum / 1e6 / (double)s->published : 0.0, s->ns_max / 1e6,
		(unsigned long long)(s->read_bytes >> 10), (unsigned long long)s->reads,
		(unsigned long long)s->retries, (unsigned long long)s->failed,
		s->failed ? ", the last: " : "", s->failed ? strerror(-s->last_err) : "",
		(unsigned long long)s->agree, (unsigned long long)s->differ,
		(unsigned long long)s->no_agent_layout);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offcpu.bpf.c: blocked time per thread from sched_switch, with the stacks it blocked in. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "maps.bpf.h"

#define TASK_RUNNING 0
#define TASK_DEAD    0x80
#define PF_KTHREAD   0x00200000

const volatile __u64 min_block_ns = 1;
const volatile __u8 include_kthreads = 0;
/*
 * -e wall: also the time a preempted thread waits for a CPU (JP_SF_RUNNABLE), and the
 * on-CPU time between switches (wall_cpu), which the cpu sampler hands to its samples.
 */
const volatile __u8 wall = 0;
/*
 * The recording's start (CLOCK_MONOTONIC), set by user space once everything is attached:
 * intervals count from here (-e wall: like the CPU time). Until then the largest value:
 * an interval that ends before the start (programs attached, a JVM looked at) is none of
 * the recording's, and one still open counts from the start.
 */
__u64 window_start_ns = ~0ull;
/*
 * -e lock: a JVM thread whose Java stack BPF walked at its syscall's return is signalled
 * all the same: the agent's trace carries the park's blocker (Thread.parkBlocker)
 */
const volatile __u8 parks = 0;

/* from start on CPU to now, clipped to the window */
static __always_inline __u64 wall_span(__u64 start, __u64 now)
{
	__u64 w = window_start_ns;

	if (!w || now <= w)
		return 0;
	if (start < w)
		start = w;
	return now > start ? now - start : 0;
}

/* on-CPU time d that ended at now, clipped to the window */
static __always_inline __u64 wall_clip(__u64 d, __u64 now)
{
	__u64 w = window_start_ns;

	if (!w || now <= w)
		return 0;
	return d < now - w ? d : now - w;
}

/* the scheduler's CPU time of t (up to date for prev at a switch: updated before it) */
static __always_inline __u64 task_runtime(struct task_struct *t)
{
	return BPF_CORE_READ(t, se.sum_exec_runtime);
}

/*
 * -e wall, thread tid leaves the CPU with runtime rt: its on-CPU time since it came on.
 * No entry: it came on before the programs were attached, so it ran since before the
 * window. Not on by the entry: its switch-in was not reported (JP_STAT_SWITCH_MISSED),
 * and it ran rt minus the runtime at its last switch-out.
 */
static __always_inline void wall_off(__u32 pid, __u32 tid, __u64 now, __u64 rt)
{
	struct jp_wall_cpu *w = bpf_map_lookup_elem(&wall_cpu, &tid);
	struct jp_wall_cpu v = { .rt_ns = rt, .pid = pid };

	if (w) {
		if (w->since_ns)
			w->acc_ns += wall_span(w->since_ns, now);
		else if (rt > w->rt_ns)
			w->acc_ns += wall_clip(rt - w->rt_ns, now);
		w->since_ns = 0;
		w->rt_ns = rt;
		return;
	}
	v.acc_ns = wall_span(0, now);
	(void)bpf_map_update_elem(&wall_cpu, &tid, &v, BPF_ANY);
}

/* the threads whose time -e wall tiles: those off-CPU reports */
static __always_inline bool wall_wanted(struct task_struct *t)
{
	if (!include_kthreads && (BPF_CORE_READ(t, flags) & PF_KTHREAD))
		return false;
	return pid_wanted(BPF_CORE_READ(t, tgid));
}

/*
 * -e wall, thread tid comes on the CPU with runtime rt. Still on by the entry: its
 * switch-out was not reported, and it ran rt minus the runtime at its last switch or sample.
 */
static __always_inline void wall_on(__u32 pid, __u32 tid, __u64 now, __u64 rt)
{
	struct jp_wall_cpu *w = bpf_map_lookup_elem(&wall_cpu, &tid);
	struct jp_wall_cpu v = { .since_ns = now, .rt_ns = rt, .pid = pid };

	if (!w) {
		(void)bpf_map_update_elem(&wall_cpu, &tid, &v, BPF_ANY);
		return;
	}
	if (w->since_ns && rt > w->rt_ns) {
		w->acc_ns += wall_clip(rt - w->rt_ns, now);
		stat_inc(JP_STAT_SWITCH_MISSED);
	}
	w->since_ns = now;
	w->rt_ns = rt;
}

/*
 * tid -> the thread's last switch-out: a ready jp_sample (identity, time, syscall)
 * followed by its kernel then user stack, captured while it was current. Emitted
 * in place at its switch-in, then s.time_ns = 0 marks it used. Entries are reused
 * per thread; LRU evicts those of exited threads. Size set by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct jp_scratch);
} offcpu_start SEC(".maps");

/*
 * JVM threads switched in inside a blocking syscall, waiting for its return (marked at
 * switch-in, cleared at sys_exit): to signal there, or with a held interval whose Java
 * stack BPF walks there (struct jp_offcpu_exit). Only marked threads have an entry, so
 * the sys_exit program, which runs for every syscall on the host, is one lookup that
 * misses.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct jp_offcpu_exit);
} offcpu_sys SEC(".maps");

/* source for inserting a new offcpu_start entry (too big for the BPF stack) */
static const struct jp_scratch zero_rec;

/* task_struct.state became __state in 5.14 */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/*
 * The syscall prev blocked in, or -1 (a page fault, or unknown). Its user registers say:
 * a syscall leaves orig_ax >= 0 and the user IP just past a `syscall` instruction (0f 05);
 * an exception's orig_ax may be an error code, but no syscall instruction precedes its
 * IP. bpf_task_pt_regs needs a BTF task pointer: tp_btf only (the raw_tp fallback, for
 * kernels before 5.5, reports -1, so its samples get no Java frames).
 */
static __always_inline __s32 blocked_syscall(struct task_struct *prev, bool btf)
{
	struct pt_regs *regs;
	__u16 insn = 0;
	long nr;

	if (!btf)
		return -1;
	regs = (struct pt_regs *)bpf_task_pt_regs(prev);
	if (!regs)
		return -1;
	nr = regs->orig_ax;
	if (nr < 0 || bpf_probe_read_user(&insn, sizeof(insn), (void *)(regs->ip - 2)))
		return -1;
	return insn == 0x050f ? (__s32)nr : -1;
}

/*
 * r: prev's record of its last switch-out, still open as prev leaves the CPU again: the
 * tracepoint did not report its switch-in (JP_STAT_SWITCH_MISSED). It ran rt minus the
 * runtime it had then (r->s.weight) since, as one stretch up to now as far as can be
 * told: the interval ends where that began. Emitted without a signal (no Java frames:
 * the thread has run since).
 */
static __always_inline void emit_unseen_switch_in(struct jp_scratch *r, __u64 now, __u64 rt)
{
	__u64 ran = rt > r->s.weight ? rt - r->s.weight : 0;
	__u64 in, start, size;

	stat_inc(JP_STAT_SWITCH_MISSED);
	if (!r->s.weight || now <= r->s.time_ns || ran >= now - r->s.time_ns)
		return;
	in = now - ran;
	start = r->s.time_ns > window_start_ns ? r->s.time_ns : window_start_ns;
	if (in <= window_start_ns || in <= start || in - start < min_block_ns)
		return;
	r->s.weight = in - start;
	r->s.time_ns = in;
	r->s.cpu = bpf_get_smp_processor_id();
	size = sizeof(r->s) + ((__u64)r->s.kstack_len + r->s.ustack_len) * sizeof(__u64);
	if (size > sizeof(*r))
		return;
	if (bpf_ringbuf_output(&events, r, size, ringbuf_wakeup_flags()))
		stat_inc(JP_STAT_RB_DROPS);
	else
		stat_inc(JP_STAT_OFFCPU);
}

/* task's tid in its own pid namespace (a JVM in a container knows its threads by it) */
static __always_inline __u32 task_ns_tid(struct task_struct *t)
{
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	__u32 level = BPF_CORE_READ(p, level), nr = 0;

	if (bpf_probe_read_kernel(&nr, sizeof(nr),
				  (void *)p + bpf_core_field_offset(struct pid, numbers) +
					  (level & 31) * bpf_core_type_size(struct upid) +
					  bpf_core_field_offset(struct upid, nr)))
		return 0;
	return nr;
}

/*
 * The current thread tid of JVM tgid has no jthreads entry: a thread that started since
 * user space last read the JVM's thread list (EvPark's waiters block a moment after they
 * start) is at the end of the current list, HotSpot appends it there. Its last
 * JW_LIST_TAIL entries, newest first: the JavaThread whose OSThread says this tid gets its
 * entry, with the JVM's offsets (JP_JTHREADS_TMPL). True when it did; the walk then
 * checks the entry as it checks every entry. Any doubt (a list replaced
 * or freed under the reads) is false.
 */
#define JW_LIST_TAIL 8
static __always_inline bool jthread_from_list(__u32 tid, __u32 tgid)
{
	__u32 lkey = JP_JTHREADS_LIST | tgid, tkey = JP_JTHREADS_TMPL | tgid, len = 0, n, want;
	const struct jp_jthread *tm = bpf_map_lookup_elem(&jthreads, &tkey);
	const struct jp_jlist *l = bpf_map_lookup_elem(&jthreads, &lkey);
	__u64 list = 0, arr = 0, jts[JW_LIST_TAIL] = {}, os, jt;
	struct jp_jthread v;
	__s32 os_tid;

	if (!l || !tm || l->tgid != tgid || tm->tgid != tgid || tm->thread)
		return false;
	if (jw_read(&list, sizeof(list), l->list_var) || !list ||
	    jw_read(&len, sizeof(len), list + l->length) || !len || len > JP_MAX_JTHREADS ||
	    jw_read(&arr, sizeof(arr), list + l->threads) || !arr)
		return false;
	n = len < JW_LIST_TAIL ? len : JW_LIST_TAIL;
	if (n < 1 || n > JW_LIST_TAIL ||
	    bpf_probe_read_user(jts, n * sizeof(jts[0]), (void *)(arr + (__u64)(len - n) * 8)))
		return false;
	want = task_ns_tid((struct task_struct *)bpf_get_current_task());
	for (__u32 i = 0; i < JW_LIST_TAIL; i++) {
		if (i >= n)
			break;
		jt = jts[(n - 1 - i) & (JW_LIST_TAIL - 1)];
		os = 0;
		os_tid = 0;
		if (!jt || jw_read(&os, sizeof(os), jt + l->osthread) || !os ||
		    jw_read(&os_tid, sizeof(os_tid), os + l->os_tid) || (__u32)os_tid != want)
			continue;
		v = *tm;
		v.thread = jt;
		v.stack_hi = 0; /* unknown: the anchor's sp is checked against the sampled sp */
		v.jvm_tid = want != tid ? want : 0;
		if (bpf_map_update_elem(&jthreads, &tid, &v, BPF_NOEXIST))
			return false;
		stat_inc(JP_STAT_OFFCPU_LIST_TAIL);
		return true;
	}
	return false;
}

/*
 * The interval x held for the current thread tid of JVM tgid (its record still in
 * offcpu_start) goes out. walk: with the Java frames BPF walks from the thread's frame
 * anchor (in the syscall, or back from it but not in Java yet: HotSpot keeps the anchor
 * while the thread is in native, VM or blocked state), put after the stacks in the
 * scratch record as a CPU sample's are. signal (at the syscall's return only: a sleeping
 * thread is never signalled): when the walk cannot give the stack, the agent is asked,
 * as emit_sample asks for a CPU sample; with -e lock, asked all the same for the blocker.
 */
static __always_inline void emit_held(const struct jp_offcpu_exit *x, __u32 tid, __u32 tgid,
				      bool walk, bool signal)
{
	struct jp_scratch *r = bpf_map_lookup_elem(&offcpu_start, &tid);
	struct jp_scratch_cpu *v;
	struct jp_scratch *sc;
	struct jp_jvm *jvm;
	__u32 zero = 0;
	bool want = signal, ok;
	__u64 size;

	v = bpf_map_lookup_elem(&scratch, &zero);
	if (!r || !v) {
		stat_inc(JP_STAT_OFFCPU_LOST);
		return;
	}
	sc = &v->r;
	if (bpf_probe_read_kernel(sc, sizeof(*sc), r) || sc->s.kstack_len > JP_MAX_KSTACK ||
	    sc->s.ustack_len > JP_MAX_USTACK) {
		stat_inc(JP_STAT_OFFCPU_LOST);
		return;
	}
	sc->s.time_ns = x->time_ns;
	sc->s.weight = x->weight;
	sc->s.cpu = x->cpu;
	sc->s.jstack_len = 0;
	sc->s.jstack_err = 0;
	/* a thread started since user space read the list: found at its end first */
	if (walk && !bpf_map_lookup_elem(&jthreads, &tid))
		(void)jthread_from_list(tid, tgid);
	ok = walk && java_walk_current(sc, tgid);
	if (ok && java_walk_put(sc)) {
		sc->s.flags |= JP_SF_JWALK;
		stat_inc(JP_STAT_OFFCPU_JWALK);
		want = signal && parks;
	} else if (walk) {
		/* a whole walk's frames all the same: the join compares them with the trace */
		if (sc->s.jstack_err > 0)
			java_walk_put(sc);
		if (sc->s.jstack_err == JP_JW_NO_THREAD)
			stat_inc(JP_STAT_OFFCPU_WALK_NOTHREAD);
		else if (sc->s.jstack_err == JP_JW_NO_ANCHOR)
			stat_inc(JP_STAT_OFFCPU_WALK_NOJAVA);
		else if (sc->s.jstack_err > 0)
			stat_inc(JP_STAT_OFFCPU_WALK_UNNAMED);
		else
			stat_inc(JP_STAT_OFFCPU_WALK_FAILED);
		if (sc->s.flags & JP_SF_NO_JAVA)
			want = false;
		if (want && sc->s.jstack_err == JP_JW_NO_THREAD && jw_unlisted(tid, tgid)) {
			sc->s.flags |= JP_SF_NATIVE_THREAD;
			want = false;
			stat_inc(JP_STAT_UNLISTED);
		}
	}
	if (want) {
		__u32 follows = 0;

		/*
		 * a request already pending (a CPU sample's, since the switch-in) or its handler
		 * running: flagged JP_SF_FOLLOWS (the join pairs off-CPU followers with no trace
		 * yet: their stack is BPF's, or missing)
		 */
		jvm = jvm_to_signal_or_follow((struct task_struct *)bpf_get_current_task(), tgid,
					      &follows, true);
		sc->s.flags |= follows;
		if (jvm) {
			sc->s.sig_err = signal_current_thread(jvm->signo);
			sc->s.flags |= JP_SF_SIGNALED;
			if (sc->s.flags & JP_SF_JWALK)
				stat_inc(JP_STAT_OFFCPU_PARK_SIG);
		}
	}
	size = sizeof(sc->s) + ((__u64)sc->s.kstack_len + sc->s.ustack_len) * sizeof(__u64) +
	       (__u64)sc->s.jstack_len * sizeof(struct jp_jframe);
	if (size > sizeof(*v))
		return;
	if (bpf_ringbuf_output(&events, sc, size, ringbuf_wakeup_flags()))
		stat_inc(JP_STAT_RB_DROPS);
	else
		stat_inc(JP_STAT_OFFCPU);
}

/* tid's held interval, if it has one, out now (walk: see emit_held); nothing to signal */
static __always_inline void emit_held_early(__u32 tid, __u32 tgid, bool walk)
{
	struct jp_offcpu_exit *x = bpf_map_lookup_elem(&offcpu_sys, &tid), h;

	if (!x || x->what != JP_OX_WALK)
		return;
	h = *x;
	bpf_map_delete_elem(&offcpu_sys, &tid);
	stat_inc(JP_STAT_OFFCPU_HELD_EARLY);
	emit_held(&h, tid, tgid, walk, false);
}

/* prev is current here: record its identity, time, syscall and both stacks */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, __u64 now, bool btf,
				       __u32 flags)
{
	__u32 tid = BPF_CORE_READ(prev, pid);
	__u32 tgid = BPF_CORE_READ(prev, tgid);
	struct jp_scratch *r;
	__u64 rt;

	if (!tid)
		return;
	if (!include_kthreads && (BPF_CORE_READ(prev, flags) & PF_KTHREAD))
		return;
	if (!task_wanted(tgid))
		return;
	/*
	 * blocked again in the syscall it was switched in inside (or preempted there, -e
	 * wall): the interval held for its return goes first, unwalked (a walk here, in the
	 * scheduler, made the sched_switch programs' verification seconds long on this host)
	 */
	emit_held_early(tid, tgid, false);
	r = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!r) {
		(void)bpf_map_update_elem(&offcpu_start, &tid, &zero_rec, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&offcpu_start, &tid);
		if (!r) {
			stat_inc(JP_STAT_OFFCPU_LOST);
			return;
		}
	}
	rt = task_runtime(prev);
	if (r->s.time_ns)
		emit_unseen_switch_in(r, now, rt);
	r->s.time_ns = now;
	r->s.weight = rt; /* until its switch-in: the runtime now, for emit_unseen_switch_in */
	r->s.cgroup_id = bpf_get_current_cgroup_id();
	r->s.pid = tgid;
	r->s.tid = tid;
	r->s.kind = JP_EV_OFFCPU;
	r->s.flags = flags;
	r->s.sig_err = 0;
	r->s.cpu = bpf_get_smp_processor_id();
	r->s.syscall_nr = blocked_syscall(prev, btf);
	bpf_get_current_comm(r->s.comm, sizeof(r->s.comm));
	BPF_CORE_READ_STR_INTO(&r->s.pcomm, prev, group_leader, comm);

	capture_stacks(ctx, r);
}

/*
 * next is switched in (current is still prev): emit its blocked interval.
 *
 * Java frames: a sleeping thread is never signalled (that would end its sleep or
 * make the call fail with EINTR), nor walked here (it is not current). When next is a
 * thread blocked inside a syscall of a JVM BPF walks (a layout in jwalk), its interval is
 * held (offcpu_sys, JP_OX_WALK) until that syscall's sys_exit, where it is current, not in
 * Java yet, and its frame anchor still says where its Java frames are: emitted there
 * with them (emit_held). Held, not emitted now with the frames sent after: one record,
 * which the join takes as it takes a walked CPU sample, nothing to pair, and the walk
 * runs once per blocked interval outside the scheduler, as late as can be (a thread
 * started a moment before it blocked is in jthreads by then).
 *
 * A JVM without a layout: the thread is marked (JP_OX_SIGNAL) and signalled at that
 * sys_exit, where the call has completed and the thread returns to user space at the
 * same Java position. The sample is emitted now, before that signal, already flagged
 * JP_SF_SIGNALED (sig_err 0) so the join waits for the trace, which is taken after
 * this sample's time_ns. A send that fails at sys_exit is counted in
 * JP_STAT_SIG_BUSY/ERR and the join reports the sample as without a trace. A
 * thread that blocked outside a syscall (a page fault waiting for I/O) is neither
 * signalled nor flagged. If one syscall blocks several times, each interval is a sample
 * flagged the same way and only the last one, the newest before the trace, gets the Java
 * frames (held: each is walked, at the next switch-out or the return).
 */
static __always_inline void switch_in(struct task_struct *next, __u64 now, bool btf)
{
	__u32 tid = BPF_CORE_READ(next, pid);
	struct jp_offcpu_exit x = {};
	struct jp_scratch *r;
	__u64 delta, size;

	if (!tid)
		return;
	r = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!r || !r->s.time_ns)
		return;
	delta = now - (r->s.time_ns > window_start_ns ? r->s.time_ns : window_start_ns);
	if (now <= window_start_ns)
		delta = 0;
	r->s.time_ns = 0;
	if (!delta || delta < min_block_ns)
		return;
	r->s.weight = delta;
	r->s.cpu = bpf_get_smp_processor_id();
	/* not a thread the agent or the thread list said is no Java thread (GC, compiler) */
	if (r->s.syscall_nr >= 0 && btf && java_walk && bpf_map_lookup_elem(&jwalk, &r->s.pid) &&
	    !bpf_map_lookup_elem(&native_threads, &tid) && jvm_pinned(next, r->s.pid)) {
		x.time_ns = now;
		x.weight = delta;
		x.what = JP_OX_WALK;
		x.cpu = r->s.cpu;
		/* its time_ns is 0 already: closed for switch_out and the flush at the end */
		if (!bpf_map_update_elem(&offcpu_sys, &tid, &x, BPF_ANY))
			return;
	}
	x.what = JP_OX_SIGNAL;
	if (r->s.syscall_nr >= 0 && jvm_to_signal(next, r->s.pid, &r->s.flags) &&
	    !bpf_map_update_elem(&offcpu_sys, &tid, &x, BPF_ANY)) {
		r->s.flags |= JP_SF_SIGNALED;
		stat_inc(JP_STAT_OFFCPU_NOWALK);
	}
	size = sizeof(r->s) + ((__u64)r->s.kstack_len + r->s.ustack_len) * sizeof(__u64);
	if (size > sizeof(*r))
		return;
	/* time_ns is the switch-in time: the join needs it before the trace's */
	r->s.time_ns = now;
	if (bpf_ringbuf_output(&events, r, size, ringbuf_wakeup_flags()))
		stat_inc(JP_STAT_RB_DROPS);
	else
		stat_inc(JP_STAT_OFFCPU);
	r->s.time_ns = 0;
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 state;

	/* a preempted task stays runnable even with a sleeping state set */
	state = preempt ? TASK_RUNNING : task_state(prev);
	if (state != TASK_RUNNING && !(state & TASK_DEAD))
		switch_out(ctx, prev, now, btf, 0);
	else if (state == TASK_RUNNING && wall)
		switch_out(ctx, prev, now, btf, JP_SF_RUNNABLE);
	if (wall) {
		__u32 ptid = BPF_CORE_READ(prev, pid), ntid = BPF_CORE_READ(next, pid);

		if (ptid && wall_wanted(prev))
			wall_off(BPF_CORE_READ(prev, tgid), ptid, now, task_runtime(prev));
		if (ntid && wall_wanted(next))
			wall_on(BPF_CORE_READ(next, tgid), ntid, now, task_runtime(next));
	}
	switch_in(next, now, btf);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, true);
}

/* raw_tp: for kernels whose BTF lacks btf_trace_sched_switch */
SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, false);
}

/*
 * the syscall completed: a marked JVM thread's held interval goes out with its Java
 * frames (the signal only if the walk cannot), or it gets its stack request now, never
 * earlier. btf: the walk needs the typed current task (tp_btf); raw_tp emits unwalked.
 */
static __always_inline int on_sys_exit(bool btf)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct jp_offcpu_exit *x = bpf_map_lookup_elem(&offcpu_sys, &tid), h;
	struct jp_jvm *jvm;

	if (!x)
		return 0;
	h = *x;
	bpf_map_delete_elem(&offcpu_sys, &tid);
	if (h.what == JP_OX_WALK) {
		emit_held(&h, tid, id >> 32, btf, true);
		return 0;
	}
	jvm = jvm_to_signal((struct task_struct *)bpf_get_current_task(), id >> 32, NULL);
	if (jvm)
		signal_current_thread(jvm->signo);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(offcpu_exit_btf, struct pt_regs *regs, long ret)
{
	return on_sys_exit(true);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(offcpu_exit_raw, struct pt_regs *regs, long ret)
{
	return on_sys_exit(false);
}

/*
 * A thread exits inside the syscall it was switched in inside (its process exits or
 * execs): no sys_exit comes. Its held interval goes out unwalked (its memory may be
 * gone), its mark is dropped before the tid can be reused.
 */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(offcpu_thread_exit, struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;

	/* an entry jthread_from_list added, before the tid can be reused (-e lock: no cpu_exit) */
	bpf_map_delete_elem(&jthreads, &tid);
	if (!bpf_map_lookup_elem(&offcpu_sys, &tid))
		return 0;
	emit_held_early(tid, id >> 32, false);
	bpf_map_delete_elem(&offcpu_sys, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mtrace.bpf.c: jprof trace's kernel side: off-CPU intervals and system calls of traced JVMs. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "mtrace.h"

/*
 * Loaded by jprof trace only, for the traced JVMs' threads (tgids): each off-CPU interval
 * (sched_switch out to in, with the state it left in, the system call in flight and, when
 * it blocked, a few kernel frames) and each system call (sys_enter to sys_exit), one
 * record each through mt_events, which user space reads every 100 ms (no wakeups). A full
 * ring buffer or thread table is counted, never silent.
 */

#define TASK_RUNNING	     0
#define TASK_UNINTERRUPTIBLE 0x2
#define TASK_DEAD	     0x80
#define TASK_NOLOAD	     0x400

/* short calls are batched (mtrace.h jp_mtk_thr); 0: every call sent */
const volatile __u64 sc_batch_ns = 20000;
const volatile __u64 batch_span_ns = 1000000;

/*
 * The traced JVMs (host pids), set before load: a few compares in rodata instead of a map
 * lookup, since sys_enter and sys_exit run for every system call of the host
 */
const volatile __u32 n_tgids = 0;
const volatile __u32 tgids[JP_MTK_PIDS_MAX] = {};

static __always_inline bool tgid_traced(__u32 tgid)
{
	for (__u32 i = 0; i < JP_MTK_PIDS_MAX; i++) {
		if (i >= n_tgids)
			return false;
		if (tgids[i] == tgid)
			return true;
	}
	return false;
}

/* host tid -> its open interval and call; LRU: exited threads fall out. Sized by the loader */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct jp_mtk_thr);
} mt_thr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, JP_MTK_RB_DEFAULT);
} mt_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JP_MTK_ST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} mt_stats SEC(".maps");

static const struct jp_mtk_thr zero_thr;

/* a record without kernel frames: up to kstack */
#define EV_HEAD __builtin_offsetof(struct jp_mtk_ev, kstack)

static __always_inline void st_inc(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&mt_stats, &k);

	if (v)
		(*v)++;
}

/* the thread's open batch of short calls, sent */
static __always_inline void flush_batch(struct jp_mtk_thr *e)
{
	struct jp_mtk_ev *r;

	if (!e->b_count)
		return;
	r = bpf_ringbuf_reserve(&mt_events, EV_HEAD, 0);
	if (r) {
		r->start_ns = e->b_start;
		r->end_ns = e->b_end;
		r->tid = e->off.tid;
		r->ns_tid = e->off.ns_tid;
		r->tgid = e->off.tgid;
		r->nr = e->b_nr;
		r->kind = JP_MTK_SCB;
		r->state = 0;
		r->n_kstack = 0;
		r->flags = 0;
		r->count = e->b_count;
		r->sc_ns = e->b_ns;
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
		st_inc(JP_MTK_ST_BATCHES);
	} else {
		st_inc(JP_MTK_ST_RB_SC);
	}
	e->b_count = 0;
	e->b_ns = 0;
}

/*
 * The thread is seen leaving a CPU, or running, while its last interval is still open: the
 * switch-in that ends it was not seen (on this 6.18 host about 1 in 200 sleeps of threads
 * that sleep 40 ms in a loop: no recursion miss counted, no switch-out ever missed).
 * When it is back in the system call it blocked in, sleeping (S), and leaves it now, the
 * interval ends here: from the wake-up to the return is the call's own exit path (the
 * user side keeps only futex and nanosleep ones, whose path is a few us). Otherwise its
 * span is sent as lost: the calls it overlaps are marked incomplete, never on the CPU.
 */
static __always_inline void close_unseen(struct jp_mtk_thr *e, __u64 now, bool in_call_exit)
{
	struct jp_mtk_ev *r;

	st_inc(JP_MTK_ST_NO_IN);
	if (in_call_exit && e->sc_start && e->sc_start <= e->off.start_ns &&
	    e->off.nr == e->sc_nr && e->off.state == JP_MTK_SLEEP) {
		e->off.end_ns = now;
		e->off.flags = JP_MTK_F_END_EXIT;
		if (bpf_ringbuf_output(&mt_events, &e->off,
				       e->off.n_kstack ? sizeof(e->off) : EV_HEAD,
				       BPF_RB_NO_WAKEUP))
			st_inc(JP_MTK_ST_RB_OFF);
		else
			st_inc(JP_MTK_ST_OFF);
		e->off.flags = 0;
		e->off.start_ns = 0;
		return;
	}
	r = bpf_ringbuf_reserve(&mt_events, EV_HEAD, 0);
	if (r) {
		r->start_ns = e->off.start_ns;
		r->end_ns = now;
		r->tid = e->off.tid;
		r->ns_tid = e->off.ns_tid;
		r->tgid = e->off.tgid;
		r->nr = -1;
		r->kind = JP_MTK_LOST;
		r->state = 0;
		r->n_kstack = 0;
		r->flags = 0;
		r->count = 0;
		r->sc_ns = 0;
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	} else {
		st_inc(JP_MTK_ST_RB_OFF);
	}
	e->off.start_ns = 0;
}

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

/* the thread's id in its own pid namespace (the deepest level) */
static __always_inline __u32 ns_tid_of(struct task_struct *t)
{
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(p, level);
	struct upid u = {};

	if (level > 32)
		return 0;
	bpf_probe_read_kernel(&u, sizeof(u), &p->numbers[level]);
	return (__u32)u.nr;
}

/* t's entry, made the first time a thread of a traced JVM is seen; NULL: not traced */
static __always_inline struct jp_mtk_thr *thr_of(struct task_struct *t, __u32 tid, __u32 tgid)
{
	struct jp_mtk_thr *e = bpf_map_lookup_elem(&mt_thr, &tid);

	if (e || !tgid_traced(tgid))
		return e;
	(void)bpf_map_update_elem(&mt_thr, &tid, &zero_thr, BPF_NOEXIST);
	e = bpf_map_lookup_elem(&mt_thr, &tid);
	if (!e) {
		st_inc(JP_MTK_ST_THR_FULL);
		return NULL;
	}
	e->off.tid = tid;
	e->off.tgid = tgid;
	e->off.ns_tid = ns_tid_of(t);
	e->off.kind = JP_MTK_OFF;
	return e;
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next)
{
	__u32 ptid = BPF_CORE_READ(prev, pid), ntid = BPF_CORE_READ(next, pid);
	__u64 now = bpf_ktime_get_ns();
	struct jp_mtk_thr *e;
	__u32 state;

	if (ptid && (e = thr_of(prev, ptid, BPF_CORE_READ(prev, tgid)))) {
		/* a preempted task stays runnable even with a sleeping state set */
		state = preempt ? TASK_RUNNING : task_state(prev);
		/* its short calls so far go before the interval, in the order they ended */
		flush_batch(e);
		if (e->off.start_ns)
			close_unseen(e, now, false);
		if (!(state & TASK_DEAD)) {
			long n = 0;

			e->off.start_ns = now;
			e->off.nr = e->sc_start ? e->sc_nr : -1;
			e->off.n_kstack = 0;
			if (state == TASK_RUNNING) {
				e->off.state = JP_MTK_RUNNABLE;
			} else {
				e->off.state =
					(state & TASK_UNINTERRUPTIBLE) && !(state & TASK_NOLOAD)
						? JP_MTK_DISK
						: JP_MTK_SLEEP;
				/*
				 * prev is current: its kernel stack, where it blocked; not for
				 * a sleep in a system call (futex, epoll_wait, ...), which the
				 * call names: the stack walk cost more than the rest
				 */
				if (e->off.state == JP_MTK_DISK || e->off.nr < 0) {
					n = bpf_get_stack(ctx, e->off.kstack, sizeof(e->off.kstack),
							  0);
					if (n < 0)
						st_inc(JP_MTK_ST_KSTACK);
					else
						e->off.n_kstack = n / sizeof(__u64);
				}
			}
		}
	}
	if (!ntid)
		return 0;
	e = bpf_map_lookup_elem(&mt_thr, &ntid);
	if (!e || !e->off.start_ns)
		return 0;
	e->off.end_ns = now;
	/* the kernel frames only when there are some */
	if (bpf_ringbuf_output(&mt_events, &e->off, e->off.n_kstack ? sizeof(e->off) : EV_HEAD,
			       BPF_RB_NO_WAKEUP))
		st_inc(JP_MTK_ST_RB_OFF);
	else
		st_inc(JP_MTK_ST_OFF);
	e->off.start_ns = 0;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(mt_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next);
}

/* raw_tp: for kernels whose BTF lacks btf_trace_sched_switch */
SEC("raw_tp/sched_switch")
int BPF_PROG(mt_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next);
}

static __always_inline int on_enter(long nr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct jp_mtk_thr *e;

	if (!tgid_traced(tgid))
		return 0;
	e = thr_of((struct task_struct *)bpf_get_current_task(), tid, tgid);
	if (!e)
		return 0;
	if (e->off.start_ns) { /* running: its switch-in was not seen */
		flush_batch(e);
		close_unseen(e, bpf_ktime_get_ns(), false);
	}
	e->sc_nr = (__s32)nr;
	e->sc_start = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_exit(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	struct jp_mtk_ev *r;
	struct jp_mtk_thr *e;
	__u64 now;

	if (!tgid_traced(tgid))
		return 0;
	e = bpf_map_lookup_elem(&mt_thr, &tid);
	if (!e || !e->sc_start) {
		st_inc(JP_MTK_ST_NO_ENTER);
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (e->off.start_ns) { /* running: its switch-in was not seen */
		flush_batch(e);
		close_unseen(e, now, true);
	}
	if (now - e->sc_start < sc_batch_ns) {
		if (e->b_count && now - e->b_start > batch_span_ns)
			flush_batch(e);
		if (!e->b_count) {
			e->b_start = e->sc_start;
			e->b_nr = e->sc_nr;
		} else if (e->b_nr != e->sc_nr) {
			e->b_nr = JP_MTK_NR_MIXED;
		}
		e->b_end = now;
		e->b_ns += now - e->sc_start;
		e->b_count++;
		e->sc_start = 0;
		st_inc(JP_MTK_ST_BATCHED);
		return 0;
	}
	flush_batch(e);
	/* no kernel stack: the record up to kstack */
	r = bpf_ringbuf_reserve(&mt_events, EV_HEAD, 0);
	if (!r) {
		st_inc(JP_MTK_ST_RB_SC);
		e->sc_start = 0;
		return 0;
	}
	r->start_ns = e->sc_start;
	r->end_ns = now;
	r->tid = tid;
	r->ns_tid = e->off.ns_tid;
	r->tgid = tgid;
	r->nr = e->sc_nr;
	r->kind = JP_MTK_SC;
	r->state = 0;
	r->n_kstack = 0;
	r->flags = 0;
	r->count = 1;
	r->sc_ns = now - e->sc_start;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	st_inc(JP_MTK_ST_SC);
	e->sc_start = 0;
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(mt_enter_btf, struct pt_regs *regs, long nr)
{
	return on_enter(nr);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mt_exit_btf, struct pt_regs *regs, long ret)
{
	return on_exit();
}

SEC("raw_tp/sys_enter")
int BPF_PROG(mt_enter_raw, struct pt_regs *regs, long nr)
{
	return on_enter(nr);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(mt_exit_raw, struct pt_regs *regs, long ret)
{
	return on_exit();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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
 * -e wall: the recording's start (CLOCK_MONOTONIC), set by user space once everything is
 * attached: intervals count from here, like the CPU time. 0: not started yet.
 */
__u64 window_start_ns = 0;

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
 * JVM threads to signal when their blocking syscall returns (marked at switch-in,
 * cleared at sys_exit). Only marked threads have an entry, so the sys_exit program,
 * which runs for every syscall on the host, is one lookup that misses.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
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
 * make the call fail with EINTR). When next is a JVM thread blocked inside a
 * syscall, it is marked in offcpu_sys and signalled at that syscall's sys_exit,
 * where the call has completed and the thread returns to user space at the same
 * Java position. The sample is emitted now, before that signal, already flagged
 * JP_SF_SIGNALED (sig_err 0) so the join waits for the trace, which is taken after
 * this sample's time_ns. A send that fails at sys_exit is counted in
 * JP_STAT_SIG_BUSY/ERR and the join reports the sample as without a trace. A
 * thread that blocked outside a syscall (a page fault waiting for I/O) is neither
 * signalled nor flagged. If one
 * syscall blocks several times, each interval is a sample flagged the same way and
 * only the last one, the newest before the trace, gets the Java frames.
 */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	__u32 tid = BPF_CORE_READ(next, pid);
	struct jp_scratch *r;
	__u64 delta, size;
	__u8 one = 1;

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
	if (r->s.syscall_nr >= 0 && jvm_to_signal(next, r->s.pid, &r->s.flags) &&
	    !bpf_map_update_elem(&offcpu_sys, &tid, &one, BPF_ANY))
		r->s.flags |= JP_SF_SIGNALED;
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
	switch_in(next, now);
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

/* the syscall completed: a marked JVM thread gets its stack request now, never earlier */
static __always_inline int on_sys_exit(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct jp_jvm *jvm;

	if (!bpf_map_lookup_elem(&offcpu_sys, &tid))
		return 0;
	bpf_map_delete_elem(&offcpu_sys, &tid);
	jvm = jvm_to_signal((struct task_struct *)bpf_get_current_task(), id >> 32, NULL);
	if (jvm)
		signal_current_thread(jvm->signo);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(offcpu_exit_btf, struct pt_regs *regs, long ret)
{
	return on_sys_exit();
}

SEC("raw_tp/sys_exit")
int BPF_PROG(offcpu_exit_raw, struct pt_regs *regs, long ret)
{
	return on_sys_exit();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

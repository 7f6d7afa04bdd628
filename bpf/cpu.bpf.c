// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cpu.bpf.c: on-CPU sampler, attached to one cpu-clock (or cycles) perf event per CPU. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "maps.bpf.h"

/* what a thread's first sample weighs when its earlier runtime is unknown */
const volatile __u64 period_ns = 10101010;
/* CLOCK_MONOTONIC when user space seeded cpu_prev: threads started later ran only since */
const volatile __u64 seed_ns = 0;
/*
 * -e wall: the recording's start; samples then weigh the on-CPU time offcpu.bpf.c measured
 * between switches (wall_cpu) instead of the scheduler's runtime. 0: not -e wall.
 */
__u64 wall_start_ns = 0;

/*
 * tid -> the thread's runtime at its last sample. Seeded by user space with every
 * profiled thread's runtime before the sampler starts; entries of exited threads are
 * deleted at exit. LRU, so a host with more threads than entries loses the oldest:
 * their next sample weighs one period and is counted (JP_STAT_CPU_NOPREV). Size set
 * by the loader.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct jp_cpu_prev);
} cpu_prev SEC(".maps");

#define PF_EXITING 0x00000004 /* in do_exit(), from its start */
#define PF_KTHREAD 0x00200000

/*
 * CPU time the current thread ran since its previous sample: the scheduler's own
 * se.sum_exec_runtime (what CLOCK_THREAD_CPUTIME_ID reads, minus the part of the
 * current slice not yet accounted). It is brought up to date at scheduler ticks and
 * switches only, so the running thread's value lags by up to one tick; the lag moves
 * time between a thread's neighbouring samples and never loses it: the deltas of one
 * thread add up to its runtime between its first and last reading.
 */
static __always_inline __u64 cpu_weight(struct task_struct *task, __u32 tid)
{
	/* task: the BTF pointer, read by plain loads */
	__u64 rt = task->se.sum_exec_runtime;
	__u64 start = task->start_time;
	struct jp_cpu_prev *p = bpf_map_lookup_elem(&cpu_prev, &tid);
	struct jp_cpu_prev v = { .runtime_ns = rt, .start_ns = start };
	__u64 w;

	if (p && (p->start_ns == start || !p->start_ns)) {
		w = rt > p->runtime_ns ? rt - p->runtime_ns : 0;
		/* a thread runs on one CPU at a time: no other writer of its entry */
		p->runtime_ns = rt;
		p->start_ns = start;
		return w;
	}
	/*
	 * No entry, or one of an earlier thread with this tid. A thread in its exit past
	 * cpu_exit (PF_EXITING: the tracepoint is not its last code) had its entry deleted
	 * and its time handed over in its tail: taken for a new thread it would weigh all its
	 * runtime a second time
	 */
	if (task->flags & PF_EXITING) {
		stat_inc(JP_STAT_CPU_EXITED);
		return 0;
	}
	if (start >= seed_ns) {
		w = rt; /* all its runtime lies in the recording */
		stat_inc(JP_STAT_CPU_NEW);
	} else {
		w = period_ns; /* ran before the recording: its share since is unknown */
		stat_inc(JP_STAT_CPU_NOPREV);
	}
	(void)bpf_map_update_elem(&cpu_prev, &tid, &v, BPF_ANY);
	return w;
}

/*
 * -e wall: the current thread's on-CPU time since its previous sample, by the switch
 * timestamps. No entry: it has not left the CPU since offcpu.bpf.c was attached, so it
 * has been on it since before the window. Off CPU by the entry, though it runs: its
 * switch-in was not reported (JP_STAT_SWITCH_MISSED), and it ran its runtime since its
 * last switch-out (the runtime as of the last scheduler update: up to a tick behind).
 * Kernel threads are not followed by the switch program (unless asked there): their
 * samples weigh one period.
 */
static __always_inline __u64 wall_weight(struct task_struct *task, __u32 tid, __u64 now,
					 bool exiting)
{
	__u64 rt = BPF_CORE_READ(task, se.sum_exec_runtime);
	struct jp_wall_cpu v = { .since_ns = now, .rt_ns = rt, .pid = BPF_CORE_READ(task, tgid) };
	struct jp_wall_cpu *w;
	__u64 start, weight, ran;

	if (BPF_CORE_READ(task, flags) & PF_KTHREAD)
		return exiting ? 0 : period_ns;
	if (now <= wall_start_ns)
		return 0;
	w = bpf_map_lookup_elem(&wall_cpu, &tid);
	if (!w && !exiting && (BPF_CORE_READ(task, flags) & PF_EXITING)) {
		/* past its exit's tail (cpu_exit deleted the entry): its time is handed over */
		stat_inc(JP_STAT_CPU_EXITED);
		return 0;
	}
	if (!w) {
		if (!exiting)
			(void)bpf_map_update_elem(&wall_cpu, &tid, &v, BPF_ANY);
		return now - wall_start_ns;
	}
	start = w->since_ns > wall_start_ns ? w->since_ns : wall_start_ns;
	if (w->since_ns) {
		weight = w->acc_ns + (now > start ? now - start : 0);
	} else {
		ran = rt > w->rt_ns ? rt - w->rt_ns : 0;
		weight = w->acc_ns + (ran < now - wall_start_ns ? ran : now - wall_start_ns);
	}
	if (exiting) {
		bpf_map_delete_elem(&wall_cpu, &tid);
		return weight;
	}
	w->acc_ns = 0;
	w->since_ns = now; /* it runs: on CPU from here */
	w->rt_ns = rt;
	return weight;
}

/*
 * The interrupted context ran user code (x86-64 user_mode(): cs's privilege level 3).
 * The context gives its registers only as whole words.
 */
static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
	__u64 cs = *(volatile __u64 *)((char *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));

	return (cs & 3) == 3;
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct jp_scratch *sc;

	if (!tgid) { /* the idle task */
		stat_inc(JP_STAT_IDLE);
		return 0;
	}
	if (!task_wanted(tgid)) {
		stat_inc(JP_STAT_FILTERED);
		return 0;
	}
	stat_inc(JP_STAT_SAMPLES);
	sc = begin_sample(JP_EV_CPU, 0);
	if (!sc)
		return 0;
	if (wall_start_ns)
		sc->s.weight = wall_weight((struct task_struct *)bpf_get_current_task(), (__u32)id,
					   sc->s.time_ns, false);
	else
		sc->s.weight = cpu_weight(bpf_get_current_task_btf(), (__u32)id);
	return emit_sample(ctx, sc, tgid, true, in_user_mode(ctx));
}

/*
 * A thread exits: the CPU time it ran since its last sample (all of it, for a thread
 * never sampled) becomes one record without stacks, so per-thread and per-process
 * totals include short-lived threads and the end of every thread's last slice.
 */
SEC("raw_tp/sched_process_exit")
int BPF_PROG(cpu_exit, struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct jp_cpu_prev *prev;
	struct jp_scratch *sc;
	__u64 rt, w;

	if (!tgid || !task_wanted(tgid))
		return 0;
	/* before its tid can be reused: the walk from the anchor must not find this thread */
	bpf_map_delete_elem(&jthreads, &tid);
	if (wall_start_ns) {
		w = wall_weight(task, tid, bpf_ktime_get_ns(), true);
		goto emit;
	}
	rt = BPF_CORE_READ(task, se.sum_exec_runtime);
	prev = bpf_map_lookup_elem(&cpu_prev, &tid);
	if (prev && prev->start_ns && prev->start_ns != BPF_CORE_READ(task, start_time))
		prev = NULL;
	if (prev)
		w = rt > prev->runtime_ns ? rt - prev->runtime_ns : 0;
	else if (BPF_CORE_READ(task, start_time) >= seed_ns)
		w = rt;
	else
		w = 0; /* ran before the recording and lost its entry: unknown */
	if (prev)
		bpf_map_delete_elem(&cpu_prev, &tid);
emit:
	if (!w)
		return 0;
	sc = begin_sample(JP_EV_CPU, w);
	if (!sc)
		return 0;
	sc->s.flags = JP_SF_CPU_TAIL;
	stat_inc(JP_STAT_CPU_TAIL);
	if (bpf_ringbuf_output(&events, sc, sizeof(sc->s), ringbuf_wakeup_flags()))
		stat_inc(JP_STAT_RB_DROPS);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * maps.bpf.h: maps every jprof program shares. Each skeleton declares them; the
 * loader creates them once (cpu skeleton) and the others reuse the fds.
 */
#ifndef JPROF_MAPS_BPF_H
#define JPROF_MAPS_BPF_H

#include "jprof.h"

struct jp_scratch {
	struct jp_sample s;
	__u64 frames[JP_MAX_KSTACK + JP_MAX_USTACK];
};

/*
 * The per-CPU scratch record: room after the stacks for the Java walk's frames (two words
 * each, put at frames[kstack_len + ustack_len], whatever the lengths). Only the cpu
 * sampler's records carry them; offcpu_start's entries and the syscall records keep the
 * smaller jp_scratch.
 */
struct jp_scratch_cpu {
	struct jp_scratch r;
	__u64 jroom[2 * JP_MAX_JFRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, JP_RINGBUF_BYTES);
} events SEC(".maps");

/* -p targets (tgid -> 1); consulted only when filter_pids is set */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JP_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

/* --cgroup/--container targets: cgroup v2 id -> 1, matched at the depths in cgroup_cfg */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JP_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u8);
} cgroups SEC(".maps");

/*
 * In a map, not rodata, so every skeleton shares it (kernel_session__share_maps) and
 * no loader has to know about the filter. An array lookup is inlined by the verifier.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jp_cgroup_cfg);
} cgroup_cfg SEC(".maps");

/* JVMs whose agent answers stack requests: tgid -> signal */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JP_MAX_JVMS);
	__type(key, __u32);
	__type(value, struct jp_jvm);
} jvms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JP_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jp_scratch_cpu);
} scratch SEC(".maps");

/* -e wall: tid -> on-CPU time by the switch timestamps (offcpu.bpf.c adds, cpu.bpf.c takes) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct jp_wall_cpu);
} wall_cpu SEC(".maps");

/* tid -> a JVM thread that is not a Java thread: no stack request (see jprof.h) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, JP_MAX_NATIVE_THREADS);
	__type(key, __u32);
	__type(value, struct jp_native_thread);
} native_threads SEC(".maps");

const volatile __u8 filter_pids = 0;

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		(*v)++;
}

/*
 * Wake the reader only when the ring is a quarter full: one wakeup per sample costs
 * more than the sample (user space also drains the ring every 100 ms on its own).
 */
static __always_inline __u64 ringbuf_wakeup_flags(void)
{
	/* the ring's size is chosen by user space (kernel_session: by events and rate) */
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
			       bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 4
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
}

static __always_inline bool pid_wanted(__u32 tgid)
{
	if (!filter_pids)
		return true;
	return bpf_map_lookup_elem(&pids, &tgid) != NULL;
}

/*
 * true when the current task is in one of the target cgroups or below it. The ancestor
 * id at a target's depth is one helper call (cgroup->ancestors[level]), so the cost is
 * one call and one hash lookup per distinct depth, whatever the number of targets;
 * descendants created during the recording are included. Only the current task: the
 * helper has no task argument (off-CPU filters at switch-out, where prev is current).
 */
static __always_inline bool cgroup_wanted(void)
{
	struct jp_cgroup_cfg *cfg;
	__u32 zero = 0;
	__u64 id;

	cfg = bpf_map_lookup_elem(&cgroup_cfg, &zero);
	if (!cfg || !cfg->nlevels)
		return true;
	for (__u32 i = 0; i < JP_CGROUP_LEVELS; i++) {
		if (i >= cfg->nlevels)
			break;
		id = bpf_get_current_ancestor_cgroup_id(cfg->levels[i]);
		if (id && bpf_map_lookup_elem(&cgroups, &id))
			return true;
	}
	return false;
}

/*
 * The one filter every program applies to the current task of process tgid: -p pids
 * and --cgroup/--container cgroups (both, when both are given).
 */
static __always_inline bool task_wanted(__u32 tgid)
{
	return pid_wanted(tgid) && cgroup_wanted();
}

/*
 * The current task's kernel then user stack into r->frames (leaf first), with their
 * lengths and any -errno in r->s; failures are counted, never fatal.
 */
static __always_inline void capture_kstack(void *ctx, struct jp_scratch *r)
{
	long kbytes;

	r->s.kstack_err = 0;
	kbytes = bpf_get_stack(ctx, r->frames, JP_MAX_KSTACK * sizeof(__u64), 0);
	if (kbytes < 0) {
		r->s.kstack_err = kbytes;
		stat_inc(JP_STAT_KSTACK_ERR);
		kbytes = 0;
	}
	if (kbytes > JP_MAX_KSTACK * sizeof(__u64))
		kbytes = JP_MAX_KSTACK * sizeof(__u64);
	r->s.kstack_len = kbytes / sizeof(__u64);
}

/* the user stack, after the kernel stack capture_kstack put in r */
static __always_inline void capture_ustack(void *ctx, struct jp_scratch *r)
{
	__u64 kbytes = r->s.kstack_len * sizeof(__u64);
	long ubytes;

	r->s.ustack_err = 0;
	if (kbytes > JP_MAX_KSTACK * sizeof(__u64))
		return;
	ubytes = bpf_get_stack(ctx, (void *)r->frames + kbytes, JP_MAX_USTACK * sizeof(__u64),
			       BPF_F_USER_STACK);
	if (ubytes < 0) {
		r->s.ustack_err = ubytes;
		stat_inc(JP_STAT_USTACK_ERR);
		ubytes = 0;
	}
	if (ubytes > JP_MAX_USTACK * sizeof(__u64))
		ubytes = JP_MAX_USTACK * sizeof(__u64);
	r->s.ustack_len = ubytes / sizeof(__u64);
}

static __always_inline void capture_stacks(void *ctx, struct jp_scratch *r)
{
	capture_kstack(ctx, r);
	capture_ustack(ctx, r);
}

/*
 * jvm if the process of group leader start time start is the JVM registered there (so a
 * reused pid is not signalled), else NULL. The first match on the clock ticks user space
 * registered pins the exact start in nanoseconds.
 */
static __always_inline struct jp_jvm *jvm_started(struct jp_jvm *jvm, __u64 start)
{
	if (jvm->start_ns)
		return start == jvm->start_ns ? jvm : NULL;
	/* same clock-tick unit as /proc/<pid>/stat starttime (USER_HZ 100) */
	if (start / 10000000ULL != jvm->start_ticks)
		return NULL;
	jvm->start_ns = start; /* racing CPUs store the same value */
	return jvm;
}

/* the jvms entry of tgid if task's process is the JVM registered there (jvm_started) */
static __always_inline struct jp_jvm *jvm_pinned(struct task_struct *task, __u32 tgid)
{
	struct jp_jvm *jvm = bpf_map_lookup_elem(&jvms, &tgid);

	return jvm ? jvm_started(jvm, BPF_CORE_READ(task, group_leader, start_boottime)) : NULL;
}

/* jvm_pinned of the current task, its leader's start read by plain loads (BTF) */
static __always_inline struct jp_jvm *jvm_pinned_current(__u32 tgid)
{
	struct jp_jvm *jvm = bpf_map_lookup_elem(&jvms, &tgid);

	return jvm ? jvm_started(jvm, bpf_get_current_task_btf()->group_leader->start_boottime)
		   : NULL;
}

/*
 * The jvms entry of a JVM whose agent answers (a signal): an entry without one (signo 0,
 * walked by BPF before its agent is in, or with none) is never one to signal
 */
static __always_inline struct jp_jvm *jvm_of_task(struct task_struct *task, __u32 tgid)
{
	struct jp_jvm *jvm = jvm_pinned(task, tgid);

	return jvm && jvm->signo ? jvm : NULL;
}

/*
 * The handler task's process has installed for signo right now (sa_handler and
 * sa_sigaction share the slot): 0 is SIG_DFL, 1 SIG_IGN; 0 as well if unreadable.
 * Threads share one sighand_struct, so this is the process's disposition.
 */
static __always_inline __u64 task_sig_handler(struct task_struct *task, __u32 signo)
{
	struct sighand_struct *sh = BPF_CORE_READ(task, sighand);
	__u64 off, h = 0;

	if (!sh || signo - 1 >= 64 /* _NSIG */)
		return 0;
	off = bpf_core_field_offset(struct sighand_struct, action) +
	      (signo - 1) * bpf_core_type_size(struct k_sigaction) +
	      bpf_core_field_offset(struct k_sigaction, sa.sa_handler);
	if (bpf_probe_read_kernel(&h, sizeof(h), (void *)sh + off))
		return 0;
	return h;
}

/*
 * The jvms entry to signal task with, or NULL. A registration says only that the agent
 * was ready once: after an exec (same pid, same start time, handlers reset to
 * SIG_DFL) or a reset of the signal, a real-time signal kills. So the handler installed
 * now must be the one the agent published; a mismatch is counted and no signal sent.
 * *follows: set to JP_SF_NATIVE_THREAD when native_ok and the agent said this thread is
 * not a Java thread (native_threads), to JP_SF_NATIVE_RECHECK when that is asked again
 * (with a signal), or to JP_SF_FOLLOWS (| JP_SF_IN_HANDLER) when no signal is sent
 * because the thread's previous request is still pending or its handler runs (see
 * jprof.h).
 */
static __always_inline struct jp_jvm *jvm_to_signal_or_follow(struct task_struct *task, __u32 tgid,
							      __u32 *follows, bool native_ok)
{
	struct jp_jvm *jvm = jvm_of_task(task, tgid);
	struct jp_native_thread *nt;
	__u64 h, bit, pending, blocked;
	__u32 tid;

	if (!jvm)
		return NULL;
	/* a GC or compiler thread: the agent would answer "not a Java thread" again */
	tid = BPF_CORE_READ(task, pid);
	nt = native_ok ? bpf_map_lookup_elem(&native_threads, &tid) : NULL;
	if (nt) {
		if (nt->listed || ++nt->skips < JP_NATIVE_RECHECK) {
			stat_inc(JP_STAT_NATIVE_SKIP);
			*follows = JP_SF_NATIVE_THREAD;
			return NULL;
		}
		nt->skips = 0; /* ask again */
		*follows = JP_SF_NATIVE_RECHECK;
	}
	h = task_sig_handler(task, jvm->signo);
	if (h <= 1 /* SIG_DFL, SIG_IGN */ || h != jvm->handler) {
		stat_inc(JP_STAT_NO_HANDLER);
		return NULL;
	}
	/*
	 * Never queue a second request behind one not yet delivered, nor while the thread
	 * runs the handler (the signal is blocked there): it would be delivered later,
	 * after our check, when the process may have reset the handler meanwhile.
	 */
	bit = 1ULL << ((jvm->signo - 1) & 63);
	pending = BPF_CORE_READ(task, pending.signal.sig[0]) & bit;
	blocked = BPF_CORE_READ(task, blocked.sig[0]) & bit;
	if (pending || blocked) {
		stat_inc(JP_STAT_SIG_QUEUED);
		/* blocked: the handler runs, or the thread masked it (the join checks) */
		*follows = JP_SF_FOLLOWS | (blocked ? JP_SF_IN_HANDLER : 0); /* no re-ask */
		return NULL;
	}
	return jvm;
}

/*
 * The jvms entry to signal task with, or NULL; *flags gets JP_SF_NATIVE_THREAD when that
 * is why, or JP_SF_NATIVE_RECHECK (NULL flags: a signal the sample already expects,
 * never skipped for that).
 */
static __always_inline struct jp_jvm *jvm_to_signal(struct task_struct *task, __u32 tgid,
						    __u32 *flags)
{
	__u32 follows = 0;
	struct jp_jvm *jvm = jvm_to_signal_or_follow(task, tgid, &follows, flags != NULL);

	if (flags)
		*flags |= follows & (JP_SF_NATIVE_THREAD | JP_SF_NATIVE_RECHECK);
	return jvm;
}

/* x86-64 calls that change the caller's signal dispositions */
#define JP_NR_RT_SIGACTION 13
#define JP_NR_EXECVE	   59
#define JP_NR_EXECVEAT	   322

/*
 * true when the current thread, interrupted in the kernel, is inside a call that can
 * change its handler between our check and the delivery of the signal (on its way back
 * to user space): execve sets every caught signal to SIG_DFL, rt_sigaction may. Signals
 * pending at that point would kill the new program. Interrupted in user mode, orig_ax
 * is the interrupt's negative vector. Unknown counts as true.
 */
static __always_inline bool in_disposition_change(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	long nr;

	if (!regs)
		return true;
	nr = regs->orig_ax;
	return nr == JP_NR_RT_SIGACTION || nr == JP_NR_EXECVE || nr == JP_NR_EXECVEAT;
}

/* sends signo to the current thread, counts the outcome; returns the helper's result */
static __always_inline long signal_current_thread(__u32 signo)
{
	long err = bpf_send_signal_thread(signo);

	if (!err)
		stat_inc(JP_STAT_SIG_SENT);
	else if (err == -16 /* EBUSY */)
		stat_inc(JP_STAT_SIG_BUSY);
	else
		stat_inc(JP_STAT_SIG_ERR);
	return err;
}

#include "jwalk.bpf.h"
#include "agg.bpf.h"

/*
 * Fills s->frames with the kernel then the user stack of ctx and sends the record
 * to the ring buffer; sends the stack-request signal when the thread belongs to a
 * JVM with a ready agent. ctx: the program's context (perf_event or tracepoint).
 * in_user: ctx interrupted user code, so there is no kernel stack to take (asking
 * bpf_get_stack for it anyway cost ~300 ns a sample here)
 */
static __always_inline int emit_sample(void *ctx, struct jp_scratch *sc, __u32 tgid, bool want_signal,
				       bool in_user)
{
	struct jp_sample *s = &sc->s;
	struct jp_jvm *jvm;
	long kbytes, ubytes;
	__u64 size;

	if (!in_user)
		capture_kstack(ctx, sc);
	/*
	 * A Java stack BPF walked and can name needs no signal (--java-walk bpf), nor the
	 * user stack by frame pointers: interrupted in Java code there is no native frame
	 * above it, and JIT code's rbp makes that walk read garbage (up to 127 frames)
	 */
	jvm = want_signal && java_walk ? jvm_pinned_current(tgid) : NULL;
	/* a JVM walked before its agent is in (or without one): never signalled */
	if (jvm && !jvm->signo) {
		want_signal = false;
		stat_inc(JP_STAT_WALK_ONLY);
	}
	if (jvm && java_walk_current(sc, tgid)) {
		/* from the anchor: the native frames on top, then the Java ones after them */
		if (s->flags & (JP_SF_ANCHOR | JP_SF_FP_CHAIN))
			capture_ustack(ctx, sc);
		if (java_walk_put(sc)) {
			s->flags |= JP_SF_JWALK;
			want_signal = false;
		} else if (!(s->flags & (JP_SF_ANCHOR | JP_SF_FP_CHAIN))) {
			capture_ustack(ctx, sc);
		}
	} else {
		capture_ustack(ctx, sc);
		if (s->jstack_err > 0)
			java_walk_put(sc);
		/* no Java frame to ask the agent for (JP_SF_NO_JAVA) */
		if (s->flags & JP_SF_NO_JAVA)
			want_signal = false;
		/* no Java thread at all: not in the JVM's thread list, which has no new thread */
		if (want_signal && s->jstack_err == JP_JW_NO_THREAD && jw_unlisted(s->tid, tgid)) {
			s->flags |= JP_SF_NATIVE_THREAD;
			want_signal = false;
			stat_inc(JP_STAT_UNLISTED);
		}
	}
	kbytes = s->kstack_len * sizeof(__u64);
	ubytes = s->ustack_len * sizeof(__u64);
	if (kbytes)
		s->flags |= JP_SF_KERNEL_CTX;
	if (want_signal) {
		__u32 follows = 0;

		jvm = jvm_to_signal_or_follow((struct task_struct *)bpf_get_current_task(), tgid,
					      &follows, true);
		s->flags |= follows;
		if (jvm && in_disposition_change()) {
			stat_inc(JP_STAT_NO_HANDLER);
			jvm = NULL;
		}
		if (jvm) {
			s->sig_err = signal_current_thread(jvm->signo);
			s->flags |= JP_SF_SIGNALED;
		}
	}

	/* --aggregate: a stack sent before only counts (agg.bpf.h) */
	if (agg_wanted(s, tgid) && agg_count(sc))
		return 0;
	size = sizeof(*s) + kbytes + ubytes + s->jstack_len * sizeof(struct jp_jframe);
	/* sc is the scratch map's: room for the walk's frames after the stacks */
	if (size > sizeof(struct jp_scratch_cpu)) {
		agg_unsent(s);
		return 0;
	}
	if (bpf_ringbuf_output(&events, sc, size, ringbuf_wakeup_flags())) {
		stat_inc(JP_STAT_RB_DROPS);
		agg_unsent(s);
	}
	return 0;
}

/* the per-CPU scratch record, zeroed and filled with the current task's identity */
static __always_inline struct jp_scratch *begin_sample(__u32 kind, __u64 weight)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task;
	struct jp_scratch_cpu *v;
	struct jp_scratch *sc;
	__u32 zero = 0;

	v = bpf_map_lookup_elem(&scratch, &zero);
	if (!v)
		return NULL;
	sc = &v->r;
	__builtin_memset(&sc->s, 0, sizeof(sc->s));
	sc->s.time_ns = bpf_ktime_get_ns();
	sc->s.weight = weight;
	sc->s.cgroup_id = bpf_get_current_cgroup_id();
	sc->s.pid = id >> 32;
	sc->s.tid = (__u32)id;
	sc->s.kind = kind;
	sc->s.syscall_nr = -1;
	sc->s.cpu = bpf_get_smp_processor_id();
	bpf_get_current_comm(sc->s.comm, sizeof(sc->s.comm));
	/*
	 * loads through the task's BTF pointer (a fault reads 0), not a string probe: that
	 * cost ~150 ns a sample here. comm is NUL-padded (__set_task_comm: strscpy_pad).
	 */
	task = bpf_get_current_task_btf();
	__builtin_memcpy(sc->s.pcomm, task->group_leader->comm, sizeof(sc->s.pcomm));
	return sc;
}

#endif /* JPROF_MAPS_BPF_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* syscalls.bpf.c: per-process syscall counts, errors and latency histograms; samples of slow calls. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "maps.bpf.h"

#define MAX_ERRNO 4095
#define EINTR	  4
/* kernel-internal: a signal interrupted the call; signal delivery restarts it or fails it */
#define ERESTARTSYS	      512
#define ERESTART_RESTARTBLOCK 516

/* the calls jprof's stack request makes in a JVM thread, and the restart of an interrupted one */
#if defined(__TARGET_ARCH_x86)
#define NR_RT_SIGRETURN	   15
#define NR_GETTID	   186
#define NR_RESTART_SYSCALL 219
#elif defined(__TARGET_ARCH_arm64)
#define NR_RT_SIGRETURN	   139
#define NR_GETTID	   178
#define NR_RESTART_SYSCALL 128
#else
#error "syscall numbers of this architecture"
#endif

const volatile __u8 per_thread = 0;
const volatile __u64 slow_ns = 0; /* 0: no slow-call samples */

struct sc_enter_val {
	__u64 ts; /* 0: no call in flight */
	__s64 nr; /* with JP_SC_NR_JPROF when jprof caused the call */
	/* the call jprof's signal interrupted with ERESTART_RESTARTBLOCK; -1: none */
	__s64 restart_nr;
};

/* tid -> the call in flight; LRU: threads that exit inside exit_group never reach sys_exit */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct sc_enter_val);
} sc_enter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct jp_sc_key);
	__type(value, struct jp_sc_val);
} sc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct jp_sc_errno_key);
	__type(value, __u64);
} sc_errnos SEC(".maps");

/* a slow-call record: reserved at full size, only ustack_len frames are meaningful */
struct slow_rec {
	struct jp_sample s;
	__u64 frames[JP_MAX_USTACK];
};

/* source for inserting a new sc_stats entry (too big for the BPF stack) */
static const struct jp_sc_val zero_val;

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

/*
 * The thread runs the stack-request handler of its JVM's agent: the agent's signal is
 * blocked (the kernel blocks it while its handler runs: no SA_NODEFER) and the handler
 * is the agent's. Both are kernel state, cheap to read. Only rt_sigreturn and gettid
 * are checked (the only calls the handler makes), so other calls cost nothing.
 */
static __always_inline bool in_agent_handler(__u32 tgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct jp_jvm *jvm = jvm_of_task(task, tgid);
	__u64 bit;

	if (!jvm)
		return false;
	bit = 1ULL << ((jvm->signo - 1) & 63);
	if (!(BPF_CORE_READ(task, blocked.sig[0]) & bit))
		return false;
	return task_sig_handler(task, jvm->signo) == jvm->handler;
}

/*
 * The call failed because jprof's stack request is about to be delivered: the agent's
 * signal is pending for the thread and no other unblocked signal is (another one
 * could be what interrupted it).
 */
static __always_inline bool interrupted_by_agent(__u32 tgid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct jp_jvm *jvm = jvm_of_task(task, tgid);
	__u64 bit, pending;

	if (!jvm)
		return false;
	bit = 1ULL << ((jvm->signo - 1) & 63);
	pending = BPF_CORE_READ(task, pending.signal.sig[0]) |
		  BPF_CORE_READ(task, signal, shared_pending.signal.sig[0]);
	pending &= ~BPF_CORE_READ(task, blocked.sig[0]);
	return pending == bit;
}

static __always_inline int on_enter(long nr)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct sc_enter_val *e, init;
	__u32 tid = (__u32)id;

	if (!task_wanted(id >> 32))
		return 0;
	init.ts = bpf_ktime_get_ns();
	init.nr = nr;
	init.restart_nr = -1;
	e = bpf_map_lookup_elem(&sc_enter, &tid);
	if ((nr == NR_RT_SIGRETURN || nr == NR_GETTID) && in_agent_handler(id >> 32)) {
		init.nr |= JP_SC_NR_JPROF;
		/* the handler runs between the interrupted call and its restart */
		if (e)
			init.restart_nr = e->restart_nr;
	}
	/* the rest of a call jprof interrupted counts as that call, as without jprof */
	else if (nr == NR_RESTART_SYSCALL && e && e->restart_nr >= 0)
		init.nr = e->restart_nr;
	if (e)
		*e = init;
	else
		bpf_map_update_elem(&sc_enter, &tid, &init, BPF_ANY);
	return 0;
}

static __always_inline void count_errno(const struct jp_sc_key *k, __s32 err)
{
	struct jp_sc_errno_key ek = {.tgid = k->tgid, .tid = k->tid, .nr = k->nr, .err = err};
	__u64 one = 1, *c;

	c = bpf_map_lookup_elem(&sc_errnos, &ek);
	if (c) {
		__sync_fetch_and_add(c, 1);
		return;
	}
	if (!bpf_map_update_elem(&sc_errnos, &ek, &one, BPF_NOEXIST))
		return;
	c = bpf_map_lookup_elem(&sc_errnos, &ek); /* another CPU inserted it first */
	if (c)
		__sync_fetch_and_add(c, 1);
	else
		stat_inc(JP_STAT_SC_AGG_FULL);
}

/*
 * A slow call as a sample: the user stack is valid at exit (the thread returns to
 * where it called); the kernel stack here would only show the exit path, so none
 * is taken. A JVM thread gets its stack request now: the call has completed, so
 * the signal cannot interrupt it.
 */
static __always_inline void emit_slow(void *ctx, __u64 id, __s32 nr, __u64 lat, __u64 now)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct slow_rec *r;
	struct jp_jvm *jvm;
	long ubytes;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		stat_inc(JP_STAT_RB_DROPS);
		return;
	}
	__builtin_memset(&r->s, 0, sizeof(r->s));
	r->s.time_ns = now;
	r->s.weight = lat;
	r->s.cgroup_id = bpf_get_current_cgroup_id();
	r->s.pid = id >> 32;
	r->s.tid = (__u32)id;
	r->s.kind = JP_EV_SYSCALL;
	r->s.cpu = bpf_get_smp_processor_id();
	r->s.syscall_nr = nr;
	bpf_get_current_comm(r->s.comm, sizeof(r->s.comm));
	BPF_CORE_READ_STR_INTO(&r->s.pcomm, task, group_leader, comm);
	ubytes = bpf_get_stack(ctx, r->frames, sizeof(r->frames), BPF_F_USER_STACK);
	if (ubytes < 0) {
		r->s.ustack_err = ubytes;
		stat_inc(JP_STAT_USTACK_ERR);
		ubytes = 0;
	}
	r->s.ustack_len = ubytes / sizeof(__u64);
	jvm = jvm_to_signal(task, id >> 32, &r->s.flags);
	if (jvm) {
		r->s.flags |= JP_SF_SIGNALED;
		r->s.sig_err = signal_current_thread(jvm->signo);
	}
	bpf_ringbuf_submit(r, ringbuf_wakeup_flags());
	stat_inc(JP_STAT_SC_SLOW);
}

static __always_inline int on_exit(void *ctx, long ret)
{
	__u64 id = bpf_get_current_pid_tgid(), now, lat;
	struct jp_sc_key k = {};
	struct sc_enter_val *e;
	struct jp_sc_val *v;
	__u32 tid = (__u32)id;

	if (!task_wanted(id >> 32))
		return 0;
	e = bpf_map_lookup_elem(&sc_enter, &tid);
	if (!e || !e->ts) {
		stat_inc(JP_STAT_SC_NOENTER);
		return 0;
	}
	now = bpf_ktime_get_ns();
	lat = now - e->ts;
	e->ts = 0;
	k.tgid = id >> 32;
	k.tid = per_thread ? tid : 0;
	k.nr = (__s32)e->nr;
	/*
	 * Interrupted by jprof's signal: this attempt is jprof's; the kernel restarts the
	 * call after the handler (SA_RESTART), as restart_syscall for RESTARTBLOCK.
	 */
	if (!(k.nr & JP_SC_NR_JPROF) &&
	    (ret == -EINTR || (ret <= -ERESTARTSYS && ret >= -ERESTART_RESTARTBLOCK)) &&
	    interrupted_by_agent(id >> 32)) {
		if (ret == -ERESTART_RESTARTBLOCK)
			e->restart_nr = k.nr;
		k.nr |= JP_SC_NR_JPROF;
	}

	v = bpf_map_lookup_elem(&sc_stats, &k);
	if (!v) {
		(void)bpf_map_update_elem(&sc_stats, &k, &zero_val, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sc_stats, &k);
		if (!v) {
			stat_inc(JP_STAT_SC_AGG_FULL);
			return 0;
		}
	}
	if (!v->pcomm[0]) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		bpf_get_current_comm(v->comm, sizeof(v->comm));
		BPF_CORE_READ_STR_INTO(&v->pcomm, task, group_leader, comm);
		v->cgroup_id = bpf_get_current_cgroup_id();
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->total_ns, lat);
	__sync_fetch_and_add(&v->hist[log2_u64(lat) & (JP_SC_HIST_BUCKETS - 1)], 1);
	/* not atomic: two CPUs finishing the same (process, call) at once may keep the lower */
	if (lat > v->max_ns)
		v->max_ns = lat;
	/* rt_sigreturn "returns" the interrupted code's restored ax: never an error of its own */
	if (ret < 0 && ret >= -MAX_ERRNO && (k.nr & ~JP_SC_NR_JPROF) != NR_RT_SIGRETURN) {
		__sync_fetch_and_add(&v->errors, 1);
		count_errno(&k, (__s32)-ret);
	}
	if (slow_ns && lat >= slow_ns && !(k.nr & JP_SC_NR_JPROF))
		emit_slow(ctx, id, k.nr, lat, now);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sc_enter_btf, struct pt_regs *regs, long nr)
{
	return on_enter(nr);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sc_exit_btf, struct pt_regs *regs, long ret)
{
	return on_exit(ctx, ret);
}

/* raw_tp: for kernels whose BTF lacks btf_trace_sys_enter/exit */
SEC("raw_tp/sys_enter")
int BPF_PROG(sc_enter_raw, struct pt_regs *regs, long nr)
{
	return on_enter(nr);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sc_exit_raw, struct pt_regs *regs, long ret)
{
	return on_exit(ctx, ret);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jvms.bpf.c: drops a process's jvms entry when it execs or exits, a thread's native_threads
 * entry when it exits, in the kernel. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "maps.bpf.h"

/*
 * Both tracepoints fire in the task itself (exec_binprm, do_exit), so the current
 * task is the one to look at. raw_tp (4.17+) rather than tp_btf: the programs run
 * once per exec or thread exit, and raw_tp needs no BTF for the tracepoint.
 */

/* the new program does not have the agent's handler: its registration is void */
SEC("raw_tp/sched_process_exec")
int jvms_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct jp_sample *e;

	(void)ctx;
	/* user space retires a JVM that exec'd, and looks at the new program as a new process */
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		__builtin_memset(e, 0, sizeof(*e));
		e->time_ns = bpf_ktime_get_ns();
		e->pid = tgid;
		e->tid = (__u32)bpf_get_current_pid_tgid();
		e->kind = JP_EV_EXEC;
		e->syscall_nr = -1;
		bpf_ringbuf_submit(e, ringbuf_wakeup_flags());
	} else {
		stat_inc(JP_STAT_EXIT_LOST);
	}
	bpf_map_delete_elem(&jwalk, &tgid);
	if (!bpf_map_delete_elem(&jvms, &tgid))
		stat_inc(JP_STAT_JVM_EXEC);
	return 0;
}

/*
 * A thread exits: its tid may be reused soon, by a Java thread: it is no longer a native
 * thread. When it is the last of its process (signal->live already dropped to 0 in
 * do_exit), the pid may be reused soon too: forget it now.
 */
SEC("raw_tp/sched_process_exit")
int jvms_exit(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct jp_sample *e;

	(void)ctx;
	bpf_map_delete_elem(&native_threads, &tid);
	if (BPF_CORE_READ(task, signal, live.counter))
		return 0;
	/* user space drops what it holds of the process (symbols): told once, in the ring */
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (e) {
		__builtin_memset(e, 0, sizeof(*e));
		e->time_ns = bpf_ktime_get_ns();
		e->pid = tgid;
		e->tid = tid;
		e->kind = JP_EV_EXIT;
		e->syscall_nr = -1;
		bpf_ringbuf_submit(e, ringbuf_wakeup_flags());
	} else {
		stat_inc(JP_STAT_EXIT_LOST);
	}
	bpf_map_delete_elem(&jwalk, &tgid);
	if (!bpf_map_delete_elem(&jvms, &tgid))
		stat_inc(JP_STAT_JVM_EXIT);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

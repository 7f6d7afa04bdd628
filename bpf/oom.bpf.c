// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* oom.bpf.c: each process the OOM killer chooses (oom:mark_victim), to a ring buffer. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "oom_event.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* OOM kills are rare: a page holds a burst of them */
} oom_events SEC(".maps");

__u64 oom_lost; /* events the ring buffer had no room for */

/*
 * raw_tp (4.17+), no tracefs needed. mark_victim's first argument is the victim's
 * task_struct since 6.8 (mark_victim(task, uid)), its pid before: a kernel address is far
 * above any pid, which tells the two apart without probing BTF.
 */
SEC("raw_tp/mark_victim")
int oom_mark_victim(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 arg = ctx->args[0];
	struct jp_oom_event *e;

	e = bpf_ringbuf_reserve(&oom_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&oom_lost, 1);
		return 0;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->time_ns = bpf_ktime_get_ns();
	if (arg > 0xffff000000000000ull) {
		struct task_struct *task = (struct task_struct *)arg;

		e->pid = BPF_CORE_READ(task, tgid);
		e->tid = BPF_CORE_READ(task, pid);
		e->uid = (__u32)ctx->args[1];
		BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	} else {
		e->pid = (__u32)arg;
		e->tid = (__u32)arg;
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

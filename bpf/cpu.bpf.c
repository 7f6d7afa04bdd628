// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cpu.bpf.c: on-CPU sampler, attached to one cpu-clock (or cycles) perf event per CPU. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "maps.bpf.h"

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct jp_scratch *sc;

	(void)ctx;
	if (!tgid) { /* the idle task */
		stat_inc(JP_STAT_IDLE);
		return 0;
	}
	if (!task_wanted(tgid)) {
		stat_inc(JP_STAT_FILTERED);
		return 0;
	}
	stat_inc(JP_STAT_SAMPLES);
	sc = begin_sample(JP_EV_CPU, 1);
	if (!sc)
		return 0;
	return emit_sample(ctx, sc, tgid, true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tp_probe.h: can a tp_btf program attach to a tracepoint on this kernel? */
#ifndef JPROF_KERNEL_TP_PROBE_H
#define JPROF_KERNEL_TP_PROBE_H

#include <stdbool.h>

/*
 * true when the kernel's BTF has btf_trace_<tp> and accepts a BPF_TRACE_RAW_TP
 * tracing program for it; false means: use the raw_tp variant. tp: "sched_switch".
 */
bool tp_btf_supported(const char *tp);

#endif /* JPROF_KERNEL_TP_PROBE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * oom_event.h: the record oom.bpf.c hands user/kernel/oom.c for each OOM kill. Its own header, not
 * jprof.h: the join never reads it. Fixed-width fields only.
 */
#ifndef JPROF_OOM_EVENT_H
#define JPROF_OOM_EVENT_H

#define JP_OOM_COMM_LEN 16

struct jp_oom_event {
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;     /* the victim's process (tgid) */
	__u32 tid;     /* the task the OOM killer chose */
	__u32 uid;
	__u32 pad;
	char comm[JP_OOM_COMM_LEN]; /* "" when the kernel passes only a pid (before 6.8) */
};

#endif /* JPROF_OOM_EVENT_H */

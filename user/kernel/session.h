/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* session.h: the kernel side of one recording: BPF programs, perf events, the ring buffer. */
#ifndef JPROF_KERNEL_SESSION_H
#define JPROF_KERNEL_SESSION_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "jprof.h"

#define KS_EV_CPU     (1u << JP_EV_CPU)
#define KS_EV_OFFCPU  (1u << JP_EV_OFFCPU)
#define KS_EV_SYSCALL (1u << JP_EV_SYSCALL)

struct kernel_opts {
	unsigned int events;	/* KS_EV_* */
	unsigned int freq_hz;	/* cpu sampling frequency */
	const __u32 *pids;	/* -p targets; NULL/0: every process */
	size_t npids;
	/* --cgroup/--container targets (cgroup v2 ids and their depths, root = 0), with descendants */
	const __u64 *cgroup_ids;
	const __u32 *cgroup_levels;
	size_t ncgroups;	/* 0: every cgroup; at most JP_MAX_CGROUPS */
	bool wall;		/* -e wall: the cpu sampler waits for kernel_session__start_cpu() */
	unsigned int java_walk;	/* --java-walk: JP_JWALK_* */
	bool aggregate;		/* --aggregate: count repeated cpu stacks in the kernel */
};

/* one ring-buffer record; kstack then ustack, leaf first; valid during the callback */
typedef int (*kernel_sample_fn)(void *ctx, const struct jp_sample *s, const __u64 *kstack,
				const __u64 *ustack);

struct kernel_session;

/*
 * Opens, configures, loads and attaches the programs for o->events. Returns 0, or
 * -errno with a one-line reason logged (permissions, missing BTF, verifier).
 */
int kernel_session__start(const struct kernel_opts *o, kernel_sample_fn fn, void *ctx,
			  struct kernel_session **ret);
/*
 * With o->wall: reads every profiled thread's CPU time so far, then starts the cpu
 * sampler; CPU time counts from here. wall_start_ns (-e wall, with offcpu's programs
 * attached): samples weigh the on-CPU time between switches from then on. 0 or -errno.
 */
int kernel_session__start_cpu(struct kernel_session *s, __u64 wall_start_ns);
/* Waits up to timeout_ms for records and delivers them. Returns records or -errno (-EINTR). */
int kernel_session__poll(struct kernel_session *s, int timeout_ms);
/* Delivers what is in the ring now without waiting. */
int kernel_session__drain(struct kernel_session *s);
/*
 * Asks BPF to send signo to sampled threads of tgid while the handler the process has
 * installed for it is handler (the agent's). start_ticks (/proc/<pid>/stat field 22)
 * pins the process. 0; -ESRCH if tgid is no longer that process; -EINVAL; -errno.
 */
int kernel_session__add_jvm(struct kernel_session *s, __u32 tgid, __u64 start_ticks, int signo,
			    __u64 handler);
/* No more signals to tgid (the agent withdrew). 0 also when it was not registered. */
int kernel_session__del_jvm(struct kernel_session *s, __u32 tgid);
/*
 * BPF walks JVM tgid (pinned by its start time) by layout w and never signals it: no agent
 * answers yet. kernel_session__add_jvm replaces the entry once one does. 0 or -errno
 * (-EOPNOTSUPP: --java-walk off, -ESRCH: the process is gone or another one's now).
 */
int kernel_session__add_walk(struct kernel_session *s, __u32 tgid, __u64 start_ticks,
			     const struct jp_jwalk *w);
/*
 * The layout BPF walks JVM tgid's Java frames by (--java-walk), set after
 * kernel_session__add_jvm; NULL removes it. 0 or -errno.
 */
int kernel_session__set_jwalk(struct kernel_session *s, __u32 tgid, const struct jp_jwalk *w);
/*
 * Thread tid (global) is the JavaThread t->thread of JVM t->tgid (jprof.h jthreads: the
 * walk from its frame anchor), or, t NULL, no longer. 0 or -errno (-E2BIG: the map is full).
 */
int kernel_session__set_jthread(struct kernel_session *s, __u32 tid, const struct jp_jthread *t);
/* an interpreted method BPF's walk of JVM tgid may name without a signal, or no longer */
int kernel_session__jw_method(struct kernel_session *s, __u32 tgid, __u64 method, bool known);
/*
 * The agent answered that JVM thread tid (global) is not a Java thread (native): its
 * samples are not signalled from now on (but every JP_NATIVE_RECHECK-th, a re-ask); or,
 * to a re-ask, that it is one now: they are signalled again. listed: jprof found it in no
 * entry of the JVM's thread list (it takes the mark back when the thread shows up there):
 * over the agent's mark, never re-asked. 0 or -errno.
 */
int kernel_session__native_thread(struct kernel_session *s, __u32 tid, bool native, bool listed);
/* Adds a pid to the -p filter while running. */
int kernel_session__add_pid(struct kernel_session *s, __u32 tgid);
/*
 * -e wall, at the end, after the off-CPU programs are detached: stops the sampler and
 * hands each thread's on-CPU time not yet given to a sample (the time since its last
 * sample, up to end_ns) to fn as a CPU tail record (JP_SF_CPU_TAIL, no stacks), as
 * thread exits do. Returns the records delivered, or -errno.
 */
int kernel_session__flush_wall(struct kernel_session *s, __u64 end_ns, kernel_sample_fn fn,
			       void *ctx);
/*
 * Stops the cpu sampler (its perf events), for the end: the counts BPF aggregated are
 * then all drained by kernel_session__drain. 0 or -errno.
 */
int kernel_session__stop_sampling(struct kernel_session *s);
/* --aggregate: what user space did with BPF's counts (on: aggregating) */
struct ks_agg_stats {
	bool on;
	__u64 learnt;	    /* full records whose stack was kept for its counts */
	__u64 not_kept;	    /* ... no room: BPF forgot the mark, kept retired for 1 s */
	__u64 retired;	    /* records let go (least used) to make room */
	__u64 drains;	    /* reads of agg_counts */
	__u64 fill_asks;    /* ... of them asked by BPF (the map filling) */
	__u64 counts;	    /* entries taken from it */
	__u64 replayed;	    /* samples they stood for, handed to the callback */
	__u64 lost_unknown; /* samples of counts whose stack was never learnt */
	__u64 read_errors;  /* agg_counts reads or deletes that failed (retried next time) */
	__u64 records, record_bytes; /* kept now */
};
void kernel_session__agg_stats(const struct kernel_session *s, struct ks_agg_stats *ret);
/*
 * --aggregate: BPF's time slots begin where the model's do (mono0_ns + k * 100 ms,
 * model__set_clock), so a count's samples are in the slot they would be in one by one.
 * No-op when not aggregating (or s NULL).
 */
void kernel_session__agg_clock(struct kernel_session *s, __u64 mono0_ns);
/* Sums the per-CPU counters (JP_STAT_*). */
void kernel_session__stats(const struct kernel_session *s, __u64 ret[JP_STAT_MAX]);
/* a process whose last thread exited, or that exec'd a new program (exec) */
struct ks_proc_event {
	__u32 pid;
	bool exec;
};
/*
 * Moves up to max of the exits and execs since the last take into pids, oldest first;
 * returns how many. They are records of the one ring (JP_EV_EXIT, JP_EV_EXEC), kept by
 * the session, never handed to the sample callback.
 */
size_t kernel_session__take_exits(struct kernel_session *s, struct ks_proc_event *pids, size_t max);
/* exits and execs read from the ring but not kept (more than 8,192 between two takes) */
__u64 kernel_session__exits_dropped(const struct kernel_session *s);
/* "cpu-clock" or "cycles" */
const char *kernel_session__cpu_event(const struct kernel_session *s);
/* nanoseconds one cpu sample stands for (1e9 / freq) */
__u64 kernel_session__period_ns(const struct kernel_session *s);
/*
 * The CPU sampler's rate, now, on every open perf event (PERF_EVENT_IOC_PERIOD in freq
 * mode). 0; -ENOENT without a CPU sampler; -EINVAL over kernel.perf_event_max_sample_rate
 * (nothing changed); -EIO when it failed after some CPUs had changed.
 */
int kernel_session__set_freq(struct kernel_session *s, unsigned int freq_hz);
/*
 * For loaders of further programs (offcpu.c, syscalls.c): before loading obj, makes
 * its maps named events, pids, cgroups, cgroup_cfg, jvms and stats use this session's. 0 or -errno.
 */
struct bpf_object;
int kernel_session__share_maps(const struct kernel_session *s, struct bpf_object *obj);
/* true when the session filters by pid (-p) */
bool kernel_session__filters_pids(const struct kernel_session *s);
/* --java-walk (JP_JWALK_*): the other programs walk as the sampler does */
unsigned int kernel_session__java_walk(const struct kernel_session *s);
void kernel_session__free(struct kernel_session *s); /* NULL-safe: detaches and unloads */

#endif /* JPROF_KERNEL_SESSION_H */

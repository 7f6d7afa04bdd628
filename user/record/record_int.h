/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * record_int.h: one recording's state (struct rec) and the functions the files of
 * `jprof record` share: user/record.c (the loop), record/jvms.c (JVMs found, attached,
 * retired), record/outputs.c (what is written) and record/summary.c (what is said).
 */
#ifndef JPROF_RECORD_INT_H
#define JPROF_RECORD_INT_H

/* record.c: one recording: targets, kernel session, JVM agents, the poll loop, the output. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "clock.h"
#include "containers.h"
#include "join.h"
#include "record.h"
#include "kernel/offcpu.h"
#include "kernel/session.h"
#include "kernel/syscalls.h"
#include "jvm/agent_ring.h"
#include "jvm/attacher.h"
#include "jvm/discover.h"
#include "util/fdlimit.h"
#include "jvm/hswatch.h"
#include "jvm/pauses.h"
#include "jvm/vmstructs.h"
#include "out/out.h"
#include "out/outfile.h"
#include "out/sctable.h"
#include "util/cgroup.h"
#include "util/procfs.h"
#include "util/ttysafe.h"
#include "model/model.h"
#include "model/view.h"
#include "sym/syms.h"
#include "proc/ptable.h"

#define POLL_MS		100
#define POLL_ATTACH_MS	20 /* while attaches run: serve their helpers without delay */
#define POLL_YOUNG_MS	50 /* while young processes wait to be classified */
#define JVM_MIN_AGE_S	1  /* attach a JVM that started during the recording once it is this old */
#define JVM_START_MAX_S 5  /* ...or, when its hsperfdata says it is still starting, this old */
#define NEW_PIDS_MAX	4096
/* an exited process stays this long in the process table: > the join's wait for a trace (3 s) */
#define RETIRE_AFTER_NS	   (4 * 1000000000ull)
#define OFFCPU_BLOCKED_MAX 65536
/* threads asleep at the start given an interval: a part of offcpu_start's 16384 (LRU) */
#define OFFCPU_SEED_MAX 4096
#define HELD_MAX_BYTES \
	(8u            \
	 << 20) /* samples held for their symbols in one round */ /* threads blocked since before the recording, reported */

/* set by SIGINT/SIGTERM (record.c): the loop ends and the outputs are written */
extern volatile sig_atomic_t rec_exiting;

/* pids seen for the first time; classified (JVM or not) outside the ring callback */
struct pidq {
	__u32 pids[NEW_PIDS_MAX];
	size_t n;
};

struct rec {
	const struct jp_opts *o;
	/* the daemon's: its options as SIGHUP changed them (its agent events); o points here */
	struct jp_opts o_live;
	unsigned int targets_gone; /* rounds since every -p process exited */
	struct pollfd *target_fds; /* -p processes' pidfds (record.c), fd -1: none */
	__u64 status_ns;	   /* the status line's last update (status_tick) */
	__u64 mem_ns;		   /* -v: the last memory line while recording */
	struct syms *syms;
	struct kernel_session *ks;
	/* the kernel side's counters and CPU event, kept when it is freed before the writers */
	__u64 kstats[JP_STAT_MAX];
	struct ks_agg_stats agg; /* --aggregate: kept when the session is freed */
	const char *cpu_event;
	struct offcpu *offcpu;
	int offcpu_open; /* intervals still open at the end (offcpu__flush_open) */
	struct syscalls *sc;
	struct model *model;
	struct join *join;
	char agent_path[4096];
	/*
	 * every process jprof holds anything of (proc/ptable.h): the one place that learns of
	 * exec and exit; the stores below subscribe (rec_subscribe_procs)
	 */
	struct ptable *procs;
	__u64 processes; /* processes sampled (a pid that exec'd is a second one) */
	/* samples of new processes held in a poll round for their symbols (record.c hold_sample) */
	unsigned char *held;
	size_t held_bytes, held_cap;
	__u64 held_samples, held_over;
	__u64 exited_dropped; /* exits and execs the kernel session could not keep */
	struct pidq q;
	bool q_fast;	  /* a queued process is looked at every round: poll faster */
	ino_t mnt_ns_ino; /* jprof's mount namespace */
	/*
	 * JVMs whose agent answers stack requests. Registered in BPF once the kernel session
	 * runs (agents connected before it wait here); dropped when the agent withdraws.
	 */
	struct {
		struct jvm_agent *a; /* owned by the join */
		__u32 pid;	     /* 0: slot unused */
		int signo;
		__u64 start_ticks;
		__u64 handler;
		bool in_bpf;
	} agents[JP_MAX_JVMS];
	/*
	 * JVMs BPF walks before their agent is in (record/early.c): the layout read from
	 * outside (jvm/vmstructs.h), published at once, compared with the agent's
	 */
	struct rec_early {
		__u32 pid; /* 0: slot unused */
		unsigned int tries;
		__u64 start_ticks;
		__u64 found_ns, next_ns; /* when found; the next try (still starting) */
		bool published, done;	 /* done: published, or given up */
		struct jp_jwalk w;
		struct vms_names names; /* where its methods' names are, from the same tables */
		/*
		 * its threads in BPF's jthreads (the walk from the frame anchor), sorted by
		 * tid; the ThreadsList they were read from; when to look again
		 */
		bool threads_on, same_ns; /* same_ns: in jprof's pid namespace */
		struct vms_thread *thr;
		size_t nthr, capthr;
		/* not same_ns: its threads' tids there and here (sorted by theirs), read last */
		struct proc_nstid *nst;
		size_t nnst, capnst, nnst_want;
		/* its threads in no entry of the list at the last look (native_scan), sorted */
		struct rec_native {
			__u32 tid;
			__u32 marked; /* in BPF's native_threads */
		} *nat;
		size_t nnat;
		__u64 native_next_ns;
		__u64 tlist, threads_next_ns, threads_full_ns;
		/* the time between looks at its threads while they stay as they are (early.c) */
		__u64 quiet_ns;
		/*
		 * the time between looks at its list while none of its threads outside it runs,
		 * and the soonest the next may be; a thread outside it ran since the last
		 */
		__u64 look_ns, look_soon_ns;
		bool unlisted_ran;
		/*
		 * jthreads' entry of the JVM itself (struct jp_jlist) is set; a thread of its
		 * list is missing from jthreads (a map error): the entry is never set again
		 */
		bool jl_set, jl_bad;
	} early[JP_MAX_JVMS];
	size_t nearly;
	struct {
		__u64 published, retries, failed, agree, differ, no_agent_layout;
		__u64 ns_sum, ns_max;  /* found -> published */
		__u64 read_bytes, reads; /* of the JVMs' memory */
		int last_err;
		/* thread lists read (changed), threads left out, set in jthreads, failures */
		__u64 tl_reads, tl_changed, tl_skipped, tl_set, tl_failed, tl_map_err;
		int tl_last_err;
		/* JVMs in other pid namespaces: task directories read, failed, threads not found */
		__u64 ns_scans, ns_failed, ns_unmapped, ns_bad;
		/* threads marked no JavaThread (native_scan), unmarked later, looks */
		__u64 nat_marked, nat_unmarked, nat_scans;
		/* jthreads' list entries set (struct jp_jlist), not set (the list incomplete) */
		__u64 jl_set, jl_unset;
		int ns_last_err;
	} early_st;
	__u64 retire_check_ns; /* the last look for processes and JVMs that exited */
	__u64 lost_check_ns;   /* ... and at the kernel's count of exits it lost */
	bool exits_lost;       /* the kernel lost one: every second from then on */
	unsigned int retired;  /* JVMs that exited and were forgotten (their agent freed) */
	size_t nagents;
	unsigned int withdrawn; /* agents dropped because they withdrew their signal */
	unsigned int freq_now;	/* the daemon's rate since a SIGHUP changed it (0: -F's) */
	/* attaches run in helper processes, in the background: sampling never waits on them */
	struct attacher *att;
	/* GC and safepoint pauses of every tracked JVM, from its hsperfdata file */
	struct pauses *pauses;
	/* new JVMs announced by their hsperfdata file; those gone before they were looked at */
	struct hswatch *watch;
	struct {
		__u32 pid;
		__u64 seen_ns;
		bool looked_at; /* known as a JVM, gone while it was still starting */
		bool execed;	/* ...by an exec of another program (the pid goes on) */
		__u64 samples;	/* read of it, kept when the process table drops it */
	} gone[64];
	size_t ngone;
	__u64 gone_more;
	/* CLOCK_MONOTONIC: record_run's start, sampling's start, the first sample's time */
	__u64 t_start_ns, sampling_ns, first_sample_ns;
	struct ct_filter *ctf;	      /* --cgroup/--container, NULL: none */
	struct cgroup_names *cgnames; /* cgroup id -> container label, NULL without cgroup v2 */
	__u64 window_ns;   /* -e wall: from the window's start to the end of the recording */
	__u64 wall_end_ns; /* -e wall: the end; samples after it are clipped to it */
	int wall_tails; /* -e wall: threads whose CPU time since their last sample came at the end */
	__u64 band_gc_ns, band_safepoint_ns; /* -e wall: the pause band's time, all JVMs */
	struct rec_interval *iv; /* jprof daemon: the open interval and the store; NULL: record */
	__u64 cut_totals[JP_VAL_MAX]; /* jprof daemon: the totals of the intervals cut so far */
};

/* one output of a recording: an -o file, or stdout */
struct rec_out {
	const char *path; /* NULL: stdout */
	int format;	  /* enum out_format */
	bool existed;	  /* a regular file was there: it stays as it was if writing fails */
	struct outfile *file;
	FILE *f;
};

/* record/jvms.c */
int rec_subscribe_procs(struct rec *r);
void rec_take_exits(struct rec *r, __u64 now);
void rec_drop_withdrawn_agents(struct rec *r);
void rec_retire_dead_jvms(struct rec *r, __u64 now);
int rec_on_agent_ready(void *ctx, const struct jvm_info *jvm, bool attached_now);
void rec_handle_new_pids(struct rec *r);
void rec_handle_new_jvm_files(struct rec *r);
void rec_gone_report(const struct rec *r, FILE *f, bool verbose);
void rec_watch_report(const struct rec *r, FILE *f);
void rec_find_agent(struct rec *r, const char *self_dir);
int rec_check_agent(const struct rec *r);
void rec_on_attach_note(void *ctx, const char *line);
void rec_setup_initial_jvms(struct rec *r);
const char *rec_agent_options(const struct jp_opts *o, char *buf, size_t size);
__u32 rec_wanted_agent_events(const struct jp_opts *o);
/*
 * The recording's model, empty, with its time data's target: 2 MiB a CPU, 4 MiB at least
 * (model__set_time_target_bytes: a long recording's slots coarsen past it). NULL: no memory.
 */
struct model *rec_model_new(void);

/* record/early.c */
void rec_early_found(struct rec *r, const struct jvm_info *jvm);
void rec_early_tick(struct rec *r, __u64 now);
/* a CPU sample of pid's thread tid: one in no entry of its list has the list looked at soon */
void rec_early_sampled(struct rec *r, __u32 pid, __u32 tid);
bool rec_early_check(struct rec *r, __u32 pid, const struct jp_jwalk *agent_w);
bool rec_early_published(struct rec *r, __u32 pid);
void rec_early_drop(struct rec *r, __u32 pid);
void rec_early_report(const struct rec *r, FILE *f, bool verbose);
/* what the early walk holds (the thread lists read), freed; BPF's entries stay */
void rec_early_free(struct rec *r);

/* record/outputs.c */
void rec_abort_outputs(struct rec_out *outs, size_t n);
int rec_open_outputs(const struct jp_opts *o, struct rec_out *outs, size_t *ret_n);
const char *rec_events_shown(const struct jp_opts *o);
int rec_write_syscall_table(struct rec *r);
void rec_add_pause_band(struct rec *r);
int rec_write_outputs(struct rec *r, __u64 t0, struct rec_out *outs, size_t n, char *where,
		      size_t wlen);

/* record/outputs.c: one interval's segment (the daemon): its metadata and its pprof view */
void rec_segment_meta(const struct rec *r, struct out_meta *m);
void rec_segment_view(const struct rec *r, struct model_view *v);

/* record/interval.c: the daemon's intervals, each written to the store as a segment */
int rec_interval_open(struct rec *r);
void rec_interval_tick(struct rec *r, bool final);
void rec_interval_close(struct rec *r, char *where, size_t wlen);
int rec_interval_signals(void); /* SIGHUP: --config read again (instead of ending the run) */
/*
 * The last back_s seconds and the open interval kept as the store's mark name (store__mark):
 * its directory ("marks/...") into dir, the segments kept into *ret_n. 0 or -errno with why.
 */
int rec_interval_mark(struct rec *r, const char *name, __u32 back_s, char *dir, size_t dir_len,
		      size_t *ret_n, char *why, size_t why_len);

/* the model's clock at the open interval's start (its segment's name and pprof time) */
void rec_interval_clock(struct rec *r);
/* the interval's length now (--interval, or --config's after a SIGHUP), in seconds */
unsigned int rec_interval_length(const struct rec *r);

/* record/triggers.c: the daemon's automatic marks (--mark-on-pause, -oom, -cpu) */
struct rec_triggers;
/* NULL: none asked for, or no memory (said) */
struct rec_triggers *rec_triggers_new(const struct jp_opts *o);
/* the sampling rate changed (SIGHUP): --mark-on-cpu's 100% of a core. NULL-safe */
void rec_triggers_set_rate(struct rec_triggers *t, unsigned int freq_hz);
void rec_triggers_tick(struct rec *r, struct rec_triggers *t, __u64 now_mono_ns);
void rec_triggers_free(struct rec_triggers *t); /* NULL-safe; says what it did */

/* record/summary.c */
void rec_mem_report(const struct rec *r);
void rec_kstats(const struct rec *r, __u64 *st);
void rec_status_tick(struct rec *r, __u64 now, __u64 t0, __u64 deadline);
void rec_summary(struct rec *r, double secs, const char *where);
__u64 rec_js_samples(const struct rec *r);

#endif /* JPROF_RECORD_INT_H */

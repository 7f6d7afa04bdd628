/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* opts.h: the command line, parsed into struct jp_opts with no side effects. */
#ifndef JPROF_OPTS_H
#define JPROF_OPTS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "jprof.h"

/* exit codes (README documents them) */
#define JP_EXIT_OK	   0
#define JP_EXIT_FAILURE	   1 /* runtime failure: BPF, permissions, I/O during the run */
#define JP_EXIT_USAGE	   2 /* bad command line */
#define JP_EXIT_NO_TARGET  3 /* a -p PID that does not exist */
#define JP_EXIT_OUTPUT	   4 /* the output cannot be written */

#define JP_MAX_OUTPUTS 8 /* -o given several times */

enum jp_cmd {
	JP_CMD_RECORD = 0,
	JP_CMD_LIST,
	JP_CMD_REPORT,
	JP_CMD_HELP,
	JP_CMD_VERSION,
	JP_CMD_DAEMON, /* record without end, one segment per --interval into --store */
	JP_CMD_DUMP,   /* a running daemon's recent segments and open interval, as report writes */
	JP_CMD_SERVE,  /* a web UI over the store (serve/serve.c) */
	JP_CMD_MARKS,  /* the marks a store keeps (daemon/dump.c) */
};

struct jp_opts {
	enum jp_cmd cmd;
	bool all;		/* -a, also the default without -p */
	__u32 pids[JP_MAX_PIDS];
	size_t npids;
	unsigned int freq_hz;	/* -F, default 99 */
	unsigned int duration_s; /* -d, 0 = until SIGINT/SIGTERM */
	const char *output;	/* the first -o, NULL = stdout */
	const char *outputs[JP_MAX_OUTPUTS]; /* every -o (record writes each) */
	int formats[JP_MAX_OUTPUTS];	     /* enum out_format of each */
	size_t noutputs;
	const char *input;	/* report: the saved profile */
	int format;		/* enum out_format, -1 = from -o's extension, else folded */
	unsigned int events;	/* bit per JP_EV_* */
	bool per_pid, per_thread, no_attach, dotted, lines, verbose;
	unsigned int verbosity;	/* -v once: the full report and debug messages; twice: libbpf's too */
	bool recompile;		  /* --recompile: have code compiled before the attach recompiled */
	bool perf_map;		  /* --perf-map: agents loaded now write perf maps for other tools */
	bool no_boost;		  /* --no-boost: keep the scheduling priority jprof was started with */
	unsigned int java_walk;	  /* --java-walk: JP_JWALK_* */
	bool aggregate;		  /* --aggregate: repeated cpu stacks counted in the kernel */
	bool json;		  /* -f json: the syscall table as JSON */
	unsigned int min_block_us; /* --min-block, off-CPU threshold (default 100) */
	unsigned int slow_us;	  /* --slow, syscall stacks threshold (default 10000, 0 = off) */
	const char *agent_path; /* --agent, default: libjprofagent.so beside the binary */
	/* report: filters (pids above: -p), view and the top table */
	__u32 tids[JP_MAX_PIDS];
	size_t ntids;
	const char *comm, *container, *include, *exclude; /* include/exclude: POSIX ERE */
	bool reverse;
	double min_percent;
	unsigned int top; /* --top N: the N hottest functions as a table on stdout */
	const char *diff_base; /* report --diff BASE: input compared with BASE */
	bool diff_absolute;    /* --diff-absolute: raw weights, not shares of each total */
	/* record: --cgroup PATH (cgroup v2 dir, absolute or below the mount); --container above */
	const char *cgroup;
	bool per_container;  /* --per-container: root frames "[container ID]" / "[host]" */
	bool list_containers; /* list --containers */
	bool cpu_time;	  /* --cpu-time: CPU samples weigh their CPU time (ns), not 1 */
	bool wall;	  /* -e wall: cpu + offcpu + runnable time, every block, per thread */
	bool min_block_set; /* --min-block was given (wall keeps every block otherwise) */
	/* events the JVM agent reports (JVMTI), not BPF: -e lock, alloc, live */
	unsigned int agent_events;   /* JP_AGENT_EV_* */
	bool cpu_hidden;	     /* only agent events asked: CPU sampled but not shown */
	unsigned int lock_threshold_ns; /* --lock-threshold */
	bool idle; /* --idle: -e lock/offcpu keep idle pool workers' waits for a task */
	unsigned int alloc_interval;	/* --alloc-interval, 0: the agent's 512 KiB */
	/* daemon, and report --store: the segments' directory (daemon default JP_STORE_DIR) */
	const char *store;
	unsigned int interval_s;   /* daemon --interval: seconds a segment covers (60) */
	__u64 max_age_s, max_size; /* daemon --max-age (24 h), --max-size (1 GiB); 0: none */
	const char *since, *until; /* report --store: the range as given (units_parse_time) */
	/* report --store: a base range to compare the range with (as --diff compares files) */
	const char *base_since, *base_until;
	__u64 last_s;		   /* dump --last: seconds back from now (default 5 min) */
	const char *mark;	   /* dump --mark NAME: the daemon keeps --last as a mark */
	__u32 mark_pause_ms;	   /* daemon --mark-on-pause MS: a GC pause this long makes a mark */
	const char *push_url;	   /* daemon --push-pyroscope URL: segments sent there, in order */
	const char *push_name;	   /* daemon --push-name NAME{labels} (default jprof{host=...}) */
	const char *push_otlp;	   /* daemon --push-otlp URL: segments as OTLP profiles, in order */
	const char *push_parca;	   /* daemon --push-parca URL: segments to Parca's writeraw */
	bool mark_oom;		   /* daemon --mark-on-oom: an OOM kill makes a mark */
	__u32 mark_cpu_pct, mark_cpu_s; /* daemon --mark-on-cpu PCT:SECONDS; 0: off */
	const char *metrics;	   /* daemon --metrics ADDR:PORT: Prometheus /metrics; NULL off */
	const char *config;	   /* daemon --config FILE: key = value lines, read again on SIGHUP */
	const char *listen;	   /* serve --listen ADDR:PORT (default SERVE_DEFAULT_ADDR) */
	const char *token_file;	   /* serve --token-file FILE: the token (default: a random one) */
	const char *recordings;	   /* serve --recordings DIR: saved recordings served too */
};

#define JP_STORE_DIR "/var/lib/jprof"
/*
 * The daemon's -F when none is given: always on, over 10 busy JVMs of a 2-CPU host jprof
 * took 1.03-1.09% of a core at 99 Hz and 0.50-0.53% at 19 Hz (bench/longrun.py --daemon --javac
 * jvm; docs/decisions.md). 19 Hz a CPU is 1,140 samples a busy core a minute.
 */
#define JP_DAEMON_HZ 19


#define JP_AGENT_EV_LOCK  1u
#define JP_AGENT_EV_ALLOC 2u
#define JP_AGENT_EV_LIVE  4u

/*
 * Parses argv into *o. Returns 0, or JP_EXIT_USAGE with a one-line message in
 * err. Help and version set o->cmd. Calls getopt_long (resets optind).
 */
int opts_parse(int argc, char **argv, struct jp_opts *o, char *err, size_t errlen);

/* strict unsigned parse: whole string, decimal, min <= v <= max. 0 or -EINVAL/-ERANGE */
int opts_parse_u32(const char *arg, unsigned int min, unsigned int max, unsigned int *ret);

void opts_usage(FILE *f);

/* "+5s", "+2500ms", "+2m": an offset from a recording's start (report --since/--until), in ns */
int opts_parse_offset_ns(const char *arg, __u64 *ret_ns);

#endif /* JPROF_OPTS_H */

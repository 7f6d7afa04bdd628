/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* trace.h: jprof trace: every call of chosen methods of a running JVM timed (issue 30). */
#ifndef JPROF_TRACE_TRACE_H
#define JPROF_TRACE_TRACE_H

#include <linux/types.h>
#include <stddef.h>

#define TRACE_PATTERNS_MAX 32
#define TRACE_PIDS_MAX	   16

struct trace_opts {
	__u32 pid; /* pids[0] */
	__u32 pids[TRACE_PIDS_MAX];
	size_t npids; /* -p PID[,PID...]: distinct */
	const char *patterns[TRACE_PATTERNS_MAX];
	size_t npatterns;
	unsigned int duration_s; /* 0: until SIGINT/SIGTERM or the JVM's exit */
	__u64 slow_ns;		 /* --slow: list the calls at least this long (0: off) */
	unsigned int top;	 /* --top: the N slowest calls (default 10) */
	const char *output;	 /* -o; NULL stdout */
	int json;		 /* -f json, or -o *.json */
	int html;		 /* -o *.html: the slow calls' flame graph; the table on stdout */
	int jfr;		 /* -o *.jfr: the slow calls as jdk.MethodTrace events; the same */
	const char *agent_path;
	int no_kernel; /* --no-kernel: no BPF split of the slow calls */
	unsigned int args; /* --args: the slow calls' first arguments (JP_MT_ARGS) */
	int verbose;
};

/*
 * Parses argv (argv[0] is "trace") into *o without side effects; 0, or JP_EXIT_USAGE with
 * a one-line reason in err
 */
int trace_parse(int argc, char **argv, struct trace_opts *o, char *err, size_t errlen);
/* "pkg.Class.method[(desc)]": 0, or -EINVAL with the reason in err */
int trace_check_pattern(const char *p, char *err, size_t errlen);
/* the command; an exit code (opts.h JP_EXIT_*) */
int trace_main(int argc, char **argv);

#endif /* JPROF_TRACE_TRACE_H */

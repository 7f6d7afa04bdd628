/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sctable.h: the syscall summary (per process, per call) and its text and JSON writers. */
#ifndef JPROF_SCTABLE_H
#define JPROF_SCTABLE_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>


#define SC_NAME_LEN 32
#define SC_COMM_LEN 16 /* a task's comm, as the kernel keeps it (TASK_COMM_LEN) */
/*
 * In sc_row.nr: a call jprof caused (its stack requests), not in the process's sums. The
 * syscall reader (kernel/syscalls.c) checks it is the BPF side's JP_SC_NR_JPROF: this
 * writer does not include the BPF ABI.
 */
#define SC_NR_JPROF 0x40000000

struct sc_errno_count {
	int err; /* positive errno */
	__u64 count;
};

/* one system call of one process (or thread) */
struct sc_row {
	int nr; /* with SC_NR_JPROF: caused by jprof, not in the process's sums */
	char name[SC_NAME_LEN];
	__u64 calls, errors, total_ns, max_ns;
	__u64 p50_ns, p90_ns, p99_ns;  /* interpolated within log2 buckets */
	struct sc_errno_count *errnos; /* sorted by count, descending */
	size_t nerrnos;
};

struct sc_proc {
	__u32 pid;
	__u32 tid; /* 0: the whole process */
	char comm[SC_COMM_LEN];
	__u64 calls, errors, total_ns; /* sums of the rows (sc_table_finish), not jprof's */
	struct sc_row *rows;
	size_t nrows;
	__u64 cgroup_id;		/* cgroup v2 id at the process's first call, 0 unknown */
	char container[48];		/* its container label, "" for the host (sc_table_group) */
};

/* plain data: filled by syscalls__read() (or a test), read by the writers */
struct sc_table {
	struct sc_proc *procs;
	size_t nprocs;
	bool per_container; /* grouped by container (sc_table_group): writers print the groups */
};

/* an empty table, or NULL with errno set */
struct sc_table *sc_table_new(void);
/* NULL-safe */
void sc_table_free(struct sc_table *t);
/*
 * The row of (pid, tid, nr), created zeroed (name from the caller) when missing;
 * comm is taken from the first call for a process. NULL on -ENOMEM.
 */
struct sc_row *sc_table_row(struct sc_table *t, __u32 pid, __u32 tid, const char *comm, int nr,
			    const char *name);
/* adds count calls that failed with err to r. 0 or -ENOMEM */
int sc_row_add_errno(struct sc_row *r, int err, __u64 count);
/* the proc of (pid, tid), NULL when it has no row */
struct sc_proc *sc_table_proc(struct sc_table *t, __u32 pid, __u32 tid);
/*
 * Groups the processes by their container label (set by the caller in each
 * sc_proc.container): containers by name, the host last, each group in its finished order.
 */
void sc_table_group(struct sc_table *t);
/* sums per process and sorts processes and calls by total time (then pid, nr), errnos by count */
void sc_table_finish(struct sc_table *t);

/*
 * The q-quantile (0..1) of a log2 histogram (bucket b: [2^b, 2^(b+1)) ns, bucket 0:
 * [0, 2)), interpolated linearly inside the bucket it falls in, capped at max_ns.
 * 0 for an empty histogram.
 */
__u64 sc_hist_quantile(const __u64 *hist, unsigned int nbuckets, double q, __u64 max_ns);

/* "ENOENT", "ERESTARTSYS", or "E<n>" when unknown; the returned string is buf or static */
const char *sc_errno_name(int err, char *buf, size_t len);

/*
 * Like `perf trace -s`: per process, then per call: calls, errors, total ms, avg,
 * p50, p90, p99, max (µs), errors by errno name. 0 or -errno (write errors included).
 */
int sctable_write_text(const struct sc_table *t, FILE *f);
/* The same as one JSON document; times in ns. 0 or -errno. */
int sctable_write_json(const struct sc_table *t, FILE *f);

#endif /* JPROF_SCTABLE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tsplit.h: a traced call's time split: on-CPU, off-CPU by reason, system calls, GC pauses. */
#ifndef JPROF_TRACE_TSPLIT_H
#define JPROF_TRACE_TSPLIT_H

#include <linux/types.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Events of one thread (from bpf/mtrace.bpf.c, CLOCK_MONOTONIC), kept per thread in a
 * bounded window; a call [start, start + dur) on that thread is split by clipping every
 * event to the call's bounds. Pure arithmetic: no BPF, no I/O (unit-tested).
 */

#define TSPLIT_OFF	1    /* off-CPU interval */
#define TSPLIT_SC	2    /* system call */
#define TSPLIT_SCB	3    /* short system calls in a row: count and sc_ns over [start, end) */
#define TSPLIT_LOST	4    /* [start, end) of the thread unsure: calls it overlaps incomplete */
#define TSPLIT_MIXED	(-2) /* TSPLIT_SCB's nr when the calls differ */
#define TSPLIT_RUNNABLE 1    /* off-CPU states (mtrace.h JP_MTK_*) */
#define TSPLIT_SLEEP	2
#define TSPLIT_DISK	3

struct tsplit_ev {
	__u64 start_ns, end_ns;
	__u64 kaddr; /* TSPLIT_OFF, blocking: the kernel function it blocked in, 0 unknown */
	__u64 sc_ns; /* TSPLIT_SCB: the calls' time (within [start, end)) */
	__u32 count; /* TSPLIT_SCB: the calls */
	__s32 nr;    /* the system call (TSPLIT_OFF: the one in flight), -1 none */
	__u8 kind, state;
	__u8 pad[6];
};

#define TSPLIT_TOP  4
#define TSPLIT_NAME 32

struct tsplit_part {
	char name[TSPLIT_NAME]; /* "futex", "fsync", "runnable", "fault" ... */
	const char *cls;	/* a reason class for off-CPU parts: "lock/park/sleep", ... */
	__u64 ns;
	__u32 count;
	__u64 kaddr;		 /* off-CPU: the kernel function of its longest interval, 0 none */
	char kfunc[TSPLIT_NAME]; /* ... named by the caller, "" unknown */
};

struct tsplit_res {
	__u64 dur_ns, cpu_ns, off_ns;
	__u64 runnable_ns, sleep_ns, disk_ns; /* off_ns by state */
	struct tsplit_part off[TSPLIT_TOP];   /* off-CPU by reason, longest first */
	unsigned int n_off;
	__u64 off_rest_ns;		   /* the reasons past the top ones */
	struct tsplit_part sc[TSPLIT_TOP]; /* system calls by name, longest first */
	unsigned int n_sc;
	__u32 sc_count; /* all calls, and their time */
	__u64 sc_ns;
	__u32 gc_count; /* GC pauses that overlapped the call, and the overlap */
	__u64 gc_ns;
	__u8 has_kernel; /* the kernel part ran (else only dur and gc) */
	__u8 has_gc;	 /* the JVM's GC pauses were read */
	__u8 incomplete; /* events of the call's span were lost or not yet seen */
	__u8 pad[5];
};

/*
 * The split of [start_ns, start_ns + dur_ns) from the thread's events ev[0..n) (any
 * order; overlapping off-CPU intervals, which a thread cannot have, are counted once: the
 * sum is capped at the duration). lost_until: events ending before it may be missing
 * (0: none); a call starting before it is marked incomplete. Writes *r (has_kernel set).
 */
void tsplit_compute(const struct tsplit_ev *ev, size_t n, __u64 start_ns, __u64 dur_ns,
		    __u64 lost_until, struct tsplit_res *r);

/*
 * The same over three runs of events, a, b then c (a circular array's two halves, and
 * what is still open in the kernel). A TSPLIT_SCB batch the call cuts counts in proportion
 * to the part of its span inside the call (its calls' times are not known one by one).
 */
void tsplit_compute3(const struct tsplit_ev *a, size_t na, const struct tsplit_ev *b, size_t nb,
		     const struct tsplit_ev *c, size_t nc, __u64 start_ns, __u64 dur_ns,
		     __u64 lost_until, struct tsplit_res *r);

/* the length of [a0, a1) within [b0, b1) */
__u64 tsplit_overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1);

/* the reason class of an off-CPU interval: the call in flight and the state */
const char *tsplit_class(__s32 nr, __u8 state);

/* GC pause [start, start + dur) into r if it overlaps the call (r->dur_ns and start_ns) */
void tsplit_add_pause(struct tsplit_res *r, __u64 call_start_ns, __u64 pause_start_ns,
		      __u64 pause_dur_ns);

/*
 * Two compact lines into buf (always terminated), line 0: "cpu 5.10 ms, off-cpu 33.10 ms:
 * futex 21.00 (lock/park/wait; futex_wait_queue), fsync 12.10 (file I/O); gc 0 ms",
 * line 1: "syscalls 5, 33.10 ms: futex 4 21.00 ms, fsync 1 12.10 ms"
 */
void tsplit_format(const struct tsplit_res *r, int line, char *buf, size_t n);

/* the same as a JSON object ({"cpu_ns":...}) to f */
void tsplit_write_json(const struct tsplit_res *r, FILE *f);

#endif /* JPROF_TRACE_TSPLIT_H */

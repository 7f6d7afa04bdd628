// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_ptable.c: the process table: O(1) entries by pid, each process's state dropped once
 * for every subscriber (exit after its linger, exec at once), memory that follows the live
 * processes through churn, and the sweep that finds exits the kernel could not tell.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "proc/ptable.h"
#include "util/procfs.h"

#define MAX_DROPS 4096

struct drops {
	__u32 pid[MAX_DROPS];
	enum pt_why why[MAX_DROPS];
	int tag[MAX_DROPS];
	size_t n;
	__u64 total;
};

static struct drops dr;

static void on_drop(void *ctx, const struct pt_proc *p, enum pt_why why, __u64 now)
{
	(void)now;
	dr.total++;
	if (dr.n == MAX_DROPS)
		return;
	dr.pid[dr.n] = p->pid;
	dr.why[dr.n] = why;
	dr.tag[dr.n++] = *(int *)ctx;
}

TEST(entries_by_pid)
{
	struct ptable *t = ptable__new(10);
	struct pt_proc *p;
	bool is_new;

	ASSERT_TRUE(t);
	EXPECT_TRUE(!ptable__get(t, 0, &is_new)); /* pid 0: the idle task, never a process */
	p = ptable__get(t, 42, &is_new);
	ASSERT_TRUE(p && is_new);
	p->samples = 7;
	memcpy(p->comm, "java", 5);
	p = ptable__get(t, 42, &is_new);
	ASSERT_TRUE(p && !is_new);
	EXPECT_EQ(p->samples, 7);
	EXPECT_TRUE(ptable__find(t, 42) == p);
	EXPECT_TRUE(!ptable__find(t, 43));
	ptable__free(t);
}

TEST(exit_after_linger_exec_at_once_each_subscriber_once)
{
	struct ptable *t = ptable__new(100);
	int a = 1, b = 2;
	bool is_new;

	ASSERT_TRUE(t);
	memset(&dr, 0, sizeof(dr));
	ASSERT_TRUE(!ptable__subscribe(t, on_drop, &a));
	ASSERT_TRUE(!ptable__subscribe(t, on_drop, &b));
	for (__u32 pid = 1; pid <= 3; pid++)
		ASSERT_TRUE(ptable__get(t, pid, &is_new));
	ptable__exited(t, 1, 1000);
	ptable__exited(t, 1, 1050);  /* told twice (kernel, then the sweep): once */
	ptable__exited(t, 99, 1000); /* never seen: nothing held, nothing to tell */
	EXPECT_EQ(ptable__tick(t, 1099), 0);
	EXPECT_EQ(dr.n, 0);
	EXPECT_EQ(ptable__tick(t, 1100), 1);
	ASSERT_TRUE(dr.n == 2);
	EXPECT_EQ(dr.pid[0], 1);
	EXPECT_EQ(dr.tag[0], 1); /* in subscription order */
	EXPECT_EQ(dr.tag[1], 2);
	EXPECT_EQ(dr.why[0], PT_EXITED);
	EXPECT_TRUE(!ptable__find(t, 1));
	/* an exec: dropped now; the pid's next sample is a new process */
	ptable__execed(t, 2, 1200);
	EXPECT_EQ(dr.n, 4);
	EXPECT_EQ(dr.why[2], PT_EXECED);
	ASSERT_TRUE(ptable__get(t, 2, &is_new));
	EXPECT_TRUE(is_new);
	/* exited, then exec'd by a reused pid before its linger: the new one stays */
	ptable__exited(t, 3, 1300);
	ptable__execed(t, 3, 1310);
	ASSERT_TRUE(ptable__get(t, 3, &is_new) && is_new);
	EXPECT_EQ(ptable__tick(t, 5000), 0);
	EXPECT_TRUE(ptable__find(t, 3) != NULL);
	EXPECT_EQ(dr.n, 6);
	ptable__free(t);
	EXPECT_EQ(dr.n, 6); /* the end tells no one */
}

/* 200,000 short processes, 3 long ones: the table stays the size of what lives */
TEST(churn_keeps_memory_of_the_live)
{
	struct ptable *t = ptable__new(0);
	struct ptable_stats st;
	int a = 0;
	bool is_new;

	ASSERT_TRUE(t);
	memset(&dr, 0, sizeof(dr));
	ASSERT_TRUE(!ptable__subscribe(t, on_drop, &a));
	for (__u32 pid = 1; pid <= 3; pid++)
		ASSERT_TRUE(ptable__get(t, pid, &is_new));
	for (__u32 k = 0; k < 200000; k++) {
		__u32 pid = 100 + k % 30000; /* pids reused, as the kernel does */
		struct pt_proc *p = ptable__get(t, pid, &is_new);

		ASSERT_TRUE(p && is_new);
		p->samples++;
		if (k >= 500) /* 500 alive at a time */
			ptable__exited(t, 100 + (k - 500) % 30000, k);
		(void)ptable__tick(t, k);
	}
	ptable__stats(t, &st);
	EXPECT_EQ(st.seen, 200003);
	EXPECT_EQ(st.exited, 200000 - 500);
	EXPECT_EQ(dr.total, 200000 - 500);
	EXPECT_EQ(st.live, 503);
	EXPECT_TRUE(st.peak <= 504); /* the new one comes before the old one goes */
	for (__u32 pid = 1; pid <= 3; pid++)
		EXPECT_TRUE(ptable__find(t, pid) != NULL);
	/* every live one still found after the moves of the deletions */
	for (__u32 k = 200000 - 500; k < 200000; k++)
		EXPECT_TRUE(ptable__find(t, 100 + k % 30000) != NULL);
	ptable__free(t);
}

/* a burst of 100,000 live processes, all gone: the table shrinks back */
TEST(burst_then_shrink)
{
	struct ptable *t = ptable__new(0);
	struct ptable_stats st;
	bool is_new;

	ASSERT_TRUE(t);
	for (__u32 pid = 1; pid <= 100000; pid++)
		ASSERT_TRUE(ptable__get(t, pid, &is_new));
	for (__u32 pid = 1; pid <= 100000; pid++)
		if (pid % 1000)
			ptable__exited(t, pid, 5);
	EXPECT_EQ(ptable__tick(t, 5), 99900);
	ptable__stats(t, &st);
	EXPECT_EQ(st.live, 100);
	EXPECT_EQ(st.peak, 100000);
	for (__u32 pid = 1000; pid <= 100000; pid += 1000)
		EXPECT_TRUE(ptable__find(t, pid) != NULL);
	EXPECT_TRUE(!ptable__find(t, 999));
	ptable__free(t);
}

/* exits the kernel could not tell: found by start time, never a live process */
TEST(sweep_finds_exited)
{
	struct ptable *t = ptable__new(0);
	struct pt_proc *self, *fake, *gone;
	__u64 ticks;
	bool is_new;

	ASSERT_TRUE(t);
	ASSERT_TRUE(!proc_start_ticks((__u32)getpid(), &ticks));
	self = ptable__get(t, (__u32)getpid(), &is_new);
	ASSERT_TRUE(self);
	self->start_ticks = ticks;
	fake = ptable__get(t, (__u32)getppid(), &is_new); /* the pid now: another process */
	ASSERT_TRUE(fake);
	fake->start_ticks = 1;
	gone = ptable__get(t, 4194303, &is_new); /* pid_max: no such process here */
	ASSERT_TRUE(gone);
	gone->start_ticks = 5;
	ASSERT_TRUE(ptable__get(t, 4194302, &is_new)); /* start unknown: not looked at */
	EXPECT_EQ(ptable__sweep(t, 10, 100), 2);
	EXPECT_EQ(ptable__tick(t, 10), 2);
	EXPECT_TRUE(ptable__find(t, (__u32)getpid()) != NULL);
	EXPECT_TRUE(ptable__find(t, 4194302) != NULL);
	EXPECT_TRUE(!ptable__find(t, (__u32)getppid()));
	ptable__free(t);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_join.c: the join without BPF or a JVM: native samples of this very process,
 * kernel frames from a fixture kallsyms, roots, event leaves, and JVM samples whose
 * Java stack is missing (they keep their natives under a marker and are counted).
 * Samples meet traces from an agent ring written here: many threads, many waiting,
 * the matching rule, bounded rounds and the budgets.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"

#include "capture.h"
#include "clock.h"
#include "harness.h"
#include "join.h"
#include "join/join_int.h" /* JOIN_JVM_NODES: the share a test floods */
#include "jvm/agent_ring.h"
#include "profile.h"
#include "model/model.h"
#include "model/view.h"
#include "opts.h"
#include "out/out.h"
#include "sym/syms.h"
#include "jvm/vmnames.h"
#include "vms_fixture.h"

/* symbols of this binary the user stacks point into */
__attribute__((noinline)) void join_leaf(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void join_caller(void)
{
	join_leaf();
}

/* a function of many instructions: pcs at +1 and +8 are both inside it */
__attribute__((noinline)) int join_busy(int k)
{
	volatile int x = 0;

	for (int i = 0; i < k; i++)
		x += i * 3;
	return x;
}

/* a fixture kallsyms beside the test binary (in the build directory) */
static char kallsyms_path[4096];

struct fixture {
	struct syms *syms;
	struct model *model;
	struct join *join;
	struct model_view view; /* how folded() looks at the model: CPU samples by default */
};

static int setup(struct fixture *f, const struct join_opts *o)
{
	static int made;

	if (!made) {
		ssize_t n = readlink("/proc/self/exe", kallsyms_path, sizeof(kallsyms_path) - 32);
		FILE *k;

		if (n <= 0)
			return -1;
		kallsyms_path[n] = '\0';
		strcat(kallsyms_path, ".kallsyms");
		k = fopen(kallsyms_path, "w");
		if (!k)
			return -1;
		fputs("ffffffff81000000 T _stext\n"
		      "ffffffff81001000 T do_syscall_64\n"
		      "ffffffff81002000 T schedule\n"
		      "ffffffff81003000 T bpf_trace_run4\n"
		      "ffffffff81004000 T ksys_write\n"
		      "ffffffff81005000 T _etext\n",
		      k);
		fclose(k);
		made = 1;
	}
	f->syms = syms__new(kallsyms_path);
	f->model = model__new();
	memset(&f->view, 0, sizeof(f->view));
	f->view.values = 1u << JP_VAL_CPU_SAMPLES;
	f->join = f->syms && f->model ? join__new(f->syms, f->model, o) : NULL;
	return f->join ? 0 : -1;
}

static void teardown(struct fixture *f)
{
	join__free(f->join);
	syms__free(f->syms);
	model__free(f->model);
}

static struct jp_sample sample(__u32 kind, __u32 klen, __u32 ulen)
{
	struct jp_sample s = {
		.time_ns = 1000,
		.weight = 1,
		.pid = (__u32)getpid(),
		.tid = (__u32)getpid(),
		.kind = kind,
		.kstack_len = klen,
		.ustack_len = ulen,
		.syscall_nr = -1,
	};

	memcpy(s.comm, "worker", 7);
	memcpy(s.pcomm, "testproc", 9);
	return s;
}

/* the model's flame-graph view as folded text */
static char *folded(struct fixture *f)
{
	struct profile *p = profile__new("test", "samples");
	char *out = NULL;
	int err;

	if (p && !model__to_profile(f->model, &f->view, p))
		out = capture(out_folded_write, p, &err);
	profile__free(p);
	return out;
}

/* leaf first: the interrupted IP, then a return address (past a call: +1 stays inside) */
static const __u64 ustack[] = { (__u64)(unsigned long)join_leaf,
				(__u64)(unsigned long)join_caller + 1 };
static const __u64 kstack[] = { 0xffffffff81004010ull, 0xffffffff81001020ull };

TEST(native_sample_kernel_above_user)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample s = sample(JP_EV_CPU, 2, 2);
	struct join_stats st;
	char *out;

	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__sample(f.join, &s, kstack, ustack), 0);
	out = folded(&f);
	ASSERT_TRUE(out != NULL);
	EXPECT_STREQ(out, "testproc;join_caller;join_leaf;do_syscall_64_[k];ksys_write_[k] 1\n");
	join__stats(f.join, &st);
	EXPECT_EQ(st.samples, 1);
	free(out);
	teardown(&f);
}

/* the leaf location of the model's row i */
static const struct jp_location *row_leaf(struct fixture *f, size_t i)
{
	struct jp_sample_row rb;
	const struct jp_sample_row *r = model__row(f->model, i, &rb);
	const jp_id *locs;
	size_t n = 0;

	if (!r)
		return NULL;
	locs = model__get_stack(f->model, r->stack, &n);
	return locs && n ? model__get_location(f->model, locs[0]) : NULL;
}

/*
 * A CPU sample's interrupted pc is keyed by its function's start: samples at two
 * instructions of one function are one stack. Return addresses, and the kernel frames of
 * a blocked thread's stack, keep theirs.
 */
TEST(cpu_leaf_keyed_by_its_function_start)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample cpu = sample(JP_EV_CPU, 2, 1), user = sample(JP_EV_CPU, 0, 2),
			 off = sample(JP_EV_OFFCPU, 2, 0);
	const __u64 busy = (__u64)(unsigned long)join_busy;
	const __u64 k1[] = { 0xffffffff81004010ull, 0xffffffff81001020ull },
		    k2[] = { 0xffffffff81004018ull, 0xffffffff81001020ull },
		    k3[] = { 0xffffffff81004010ull, 0xffffffff81001028ull };
	const __u64 u1[] = { busy + 1, (__u64)(unsigned long)join_caller + 1 },
		    u2[] = { busy + 8, (__u64)(unsigned long)join_caller + 1 },
		    u3[] = { (__u64)(unsigned long)join_leaf, busy + 1 },
		    u4[] = { (__u64)(unsigned long)join_leaf, busy + 8 };
	const struct jp_location *loc;

	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__sample(f.join, &cpu, k1, u1), 0);
	EXPECT_EQ(join__sample(f.join, &cpu, k2, u1), 0);
	EXPECT_EQ(model__rows(f.model), 1);
	loc = row_leaf(&f, 0);
	ASSERT_TRUE(loc != NULL);
	EXPECT_EQ(loc->addr, 0xffffffff81004000ull);
	/* the kernel's return address is a call site: a new stack */
	EXPECT_EQ(join__sample(f.join, &cpu, k3, u1), 0);
	EXPECT_EQ(model__rows(f.model), 2);
	/* a user pc: two instructions of join_busy, one stack */
	EXPECT_EQ(join__sample(f.join, &user, NULL, u1), 0);
	EXPECT_EQ(join__sample(f.join, &user, NULL, u2), 0);
	EXPECT_EQ(model__rows(f.model), 3);
	/* and again once the frames are cached */
	EXPECT_EQ(join__sample(f.join, &user, NULL, u2), 0);
	EXPECT_EQ(join__sample(f.join, &user, NULL, u1), 0);
	EXPECT_EQ(model__rows(f.model), 3);
	/* join_busy as a caller: its return addresses are its own */
	EXPECT_EQ(join__sample(f.join, &user, NULL, u3), 0);
	EXPECT_EQ(join__sample(f.join, &user, NULL, u4), 0);
	EXPECT_EQ(model__rows(f.model), 5);
	/* a blocked thread's kernel leaf is a return address too: kept */
	EXPECT_EQ(join__sample(f.join, &off, k1, NULL), 0);
	EXPECT_EQ(model__rows(f.model), 6);
	loc = row_leaf(&f, 5);
	ASSERT_TRUE(loc != NULL);
	EXPECT_EQ(loc->addr, 0xffffffff81004010ull);
	teardown(&f);
}

TEST(per_pid_and_thread_roots)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample s = sample(JP_EV_CPU, 0, 1);
	char *out, want[256];

	ASSERT_TRUE(setup(&f, &o) == 0);
	f.view.per_pid = f.view.per_thread = true;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	out = folded(&f);
	snprintf(want, sizeof(want), "testproc [%d];worker [%d];join_leaf 1\n", getpid(), getpid());
	EXPECT_STREQ(out, want);
	free(out);
	teardown(&f);
}

/*
 * A thread's labels are kept from one sample to its next (join.c memo_labels) only while
 * they say the same: a thread renamed, a process that exec'd, another cgroup each start
 * labels of their own, and the first ones are found again
 */
TEST(a_threads_labels_follow_its_name_process_and_cgroup)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample s = sample(JP_EV_CPU, 0, 1);
	char *out, want[512];

	ASSERT_TRUE(setup(&f, &o) == 0);
	f.view.per_pid = f.view.per_thread = true;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	memcpy(s.comm, "renamed", 8);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	memcpy(s.pcomm, "newprog", 8);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	memcpy(s.comm, "worker", 7);
	memcpy(s.pcomm, "testproc", 9);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	s.cgroup_id = 77;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	EXPECT_EQ(model__rows(f.model), 4);
	out = folded(&f);
	snprintf(want, sizeof(want),
		 "newprog [%d];renamed [%d];join_leaf 1\n"
		 "testproc [%d];renamed [%d];join_leaf 1\n"
		 "testproc [%d];worker [%d];join_leaf 4\n",
		 getpid(), getpid(), getpid(), getpid(), getpid(), getpid());
	EXPECT_STREQ(out, want);
	free(out);
	teardown(&f);
}

TEST(syscall_leaf_offcpu_marker_and_ns_weights)
{
	struct join_opts o = { .mark_offcpu = true };
	struct fixture f;
	struct jp_sample sc = sample(JP_EV_SYSCALL, 0, 1), off = sample(JP_EV_OFFCPU, 3, 1),
			 cpu = sample(JP_EV_CPU, 0, 1), tail = sample(JP_EV_CPU, 0, 0),
			 run = sample(JP_EV_OFFCPU, 0, 1), tail2 = sample(JP_EV_CPU, 0, 0);
	/* an off-CPU stack taken inside the tracepoint program: its glue is dropped */
	const __u64 okstack[] = { 0xffffffff81003010ull, 0xffffffff81002010ull,
				  0xffffffff81001010ull };
	char *out;

	ASSERT_TRUE(setup(&f, &o) == 0);
	f.view.values = 1u << JP_VAL_CPU_NS | 1u << JP_VAL_OFFCPU_NS | 1u << JP_VAL_SYSCALL_NS;
	sc.syscall_nr = 1; /* write */
	sc.weight = 5000000;
	off.weight = 7000000;
	/* a CPU sample weighs the CPU time BPF measured, not the period */
	cpu.weight = 3999999;
	/*
	 * The CPU time after a thread's last sample, at its exit: to that sample's stack, no
	 * sample count; a thread never sampled keeps it under a marker.
	 */
	tail.weight = 1234;
	tail.flags = JP_SF_CPU_TAIL;
	tail.tid += 1;
	tail2.weight = 1;
	tail2.flags = JP_SF_CPU_TAIL;
	/* -e wall: time spent preempted, waiting for a CPU */
	run.weight = 55;
	run.flags = JP_SF_RUNNABLE;
	EXPECT_EQ(join__sample(f.join, &sc, NULL, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &off, okstack, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &cpu, NULL, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &tail, NULL, NULL), 0);
	EXPECT_EQ(join__sample(f.join, &tail2, NULL, NULL), 0);
	EXPECT_EQ(join__sample(f.join, &run, NULL, ustack), 0);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_SAMPLES), 1);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_NS), 3999999 + 1234 + 1);
	out = folded(&f);
	EXPECT_STREQ(out, "testproc;[cpu after the last sample] 1234\n"
			  "testproc;join_leaf 4000000\n"
			  "testproc;join_leaf;[runnable] 55\n"
			  "testproc;join_leaf;do_syscall_64_[k];schedule_[k];[off-cpu] 7000000\n"
			  "testproc;join_leaf;write 5000000\n");
	free(out);
	teardown(&f);
}

TEST(cpu_time_of_a_thread_is_spread_by_its_samples)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample a = sample(JP_EV_CPU, 0, 1), b = sample(JP_EV_CPU, 0, 1),
			 tail = sample(JP_EV_CPU, 0, 0), c = sample(JP_EV_CPU, 0, 1);
	const __u64 other[] = { 0x402000 };
	char *out;

	ASSERT_TRUE(setup(&f, &o) == 0);
	f.view.values = 1u << JP_VAL_CPU_NS;
	f.view.per_thread = true;
	a.weight = 5000; /* a long unsampled stretch, then a short one */
	b.weight = 500;
	tail.weight = 7; /* after the last sample, at the thread's exit */
	tail.flags = JP_SF_CPU_TAIL;
	c.tid += 1; /* another thread: its time stays its own */
	c.weight = 900;
	EXPECT_EQ(join__sample(f.join, &a, NULL, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &b, NULL, other), 0);
	EXPECT_EQ(join__sample(f.join, &tail, NULL, NULL), 0);
	EXPECT_EQ(join__sample(f.join, &c, NULL, other), 0);
	EXPECT_EQ(join__flush(f.join), 0);
	/* the thread's 5507 ns, one sample each: 2753 | 2754 */
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_NS), 5000 + 500 + 7 + 900);
	out = folded(&f);
	EXPECT_TRUE(strstr(out, ";join_leaf 2753\n") != NULL);
	EXPECT_TRUE(strstr(out, ";[unknown] 2754\n") != NULL);
	EXPECT_TRUE(strstr(out, ";[unknown] 900\n") != NULL);
	free(out);
	teardown(&f);
}

static char *report(struct fixture *f);

/*
 * --aggregate: a count BPF made (JP_SF_COUNTED) is one record standing for count samples,
 * its weight theirs summed: added at once, as the same samples one by one would be
 */
TEST(a_count_is_joined_at_once_as_its_samples)
{
	struct join_opts o = {0};
	struct fixture f, g;
	struct jp_sample a = sample(JP_EV_CPU, 0, 1), b = sample(JP_EV_CPU, 0, 1),
			 one = sample(JP_EV_CPU, 0, 1), p = sample(JP_EV_CPU, 0, 1);
	const __u64 other[] = {0x402000};
	struct join_stats st;
	struct model_counts c;
	char *out, *out1, *rep;

	ASSERT_TRUE(setup(&f, &o) == 0);
	ASSERT_TRUE(setup(&g, &o) == 0);
	f.view.values = g.view.values = 1u << JP_VAL_CPU_NS | 1u << JP_VAL_CPU_SAMPLES;
	a.flags = JP_SF_COUNTED;
	a.count = 3;
	a.weight = 3001; /* three samples' CPU time */
	b.weight = 999;
	EXPECT_EQ(join__sample(f.join, &a, NULL, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &b, NULL, other), 0);
	/* the same three one by one */
	for (int i = 0; i < 3; i++) {
		one.weight = i ? 1000 : 1001;
		EXPECT_EQ(join__sample(g.join, &one, NULL, ustack), 0);
	}
	EXPECT_EQ(join__sample(g.join, &b, NULL, other), 0);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_SAMPLES), 4);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_NS), 4000);
	model__counts(f.model, &c);
	EXPECT_EQ(c.rows, 2);
	join__stats(f.join, &st);
	EXPECT_EQ(st.samples, 4);
	/* at the end the thread's 4000 ns go 3 : 1 by samples, as for the same samples apart */
	EXPECT_EQ(join__flush(f.join), 0);
	EXPECT_EQ(join__flush(g.join), 0);
	f.view.values = g.view.values = 1u << JP_VAL_CPU_NS;
	out = folded(&f);
	out1 = folded(&g);
	EXPECT_STREQ(out, "testproc;[unknown] 1000\ntestproc;join_leaf 3000\n");
	EXPECT_STREQ(out, out1);
	free(out);
	free(out1);
	/* a JVM's count: its figures count every sample it stands for */
	EXPECT_EQ(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", NULL), 0);
	join__set_jvm_pending(f.join, (__u32)getpid(), true);
	p.flags = JP_SF_COUNTED;
	p.count = 4;
	EXPECT_EQ(join__sample(f.join, &p, NULL, ustack), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 4);
	EXPECT_EQ(st.samples, 8);
	f.view.values = 1u << JP_VAL_CPU_SAMPLES;
	out = folded(&f);
	EXPECT_TRUE(out && strstr(out, "[no Java stack: agent not yet attached];join_leaf 4\n"));
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "4 samples, 4 in Java threads of which 0") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "4 agent not yet attached") != NULL);
	if (rep && !strstr(rep, "4 agent not yet attached"))
		fprintf(stderr, "%s", rep);
	free(rep);
	free(out);
	teardown(&f);
	teardown(&g);
}

TEST(jvm_without_agent_is_marked_and_counted)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample s = sample(JP_EV_CPU, 0, 2);
	struct join_stats st;
	char *out, *rep = NULL;
	size_t len = 0;
	FILE *m;

	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__add_jvm(f.join, s.pid, s.pid, "java", NULL), 0);
	EXPECT_TRUE(!join__has_jvm(f.join, s.pid));
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	out = folded(&f);
	EXPECT_STREQ(out, "testproc;[no Java stack: no agent];join_caller;join_leaf 1\n");
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 1);
	EXPECT_EQ(st.java_complete, 0);
	m = open_memstream(&rep, &len);
	ASSERT_TRUE(m != NULL);
	join__set_jvm_note(f.join, s.pid, "a note");
	join__report(f.join, m, true);
	fclose(m);
	EXPECT_TRUE(strstr(rep, "1 samples, 1 in Java threads of which 0 with complete") != NULL);
	EXPECT_TRUE(strstr(rep, "missing: 1 no agent") != NULL);
	EXPECT_TRUE(strstr(rep, ": a note\n") != NULL);
	free(rep);
	free(out);
	teardown(&f);
}

/*
 * No agent, BPF's walk found no Java frame to walk: a JavaThread without a last Java frame,
 * or (the JVM's thread list known) a thread in no entry of it: JVM-internal, its native
 * frames as they are; a thread not in a list BPF does not know is missing its stack
 */
TEST(jvm_without_agent_threads_with_no_java_frame_are_internal)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample s = sample(JP_EV_CPU, 0, 2);
	struct join_stats st;
	char *out, *rep = NULL;
	size_t len = 0;
	FILE *m;

	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__add_jvm(f.join, s.pid, s.pid, "java", NULL), 0);
	s.jstack_err = JP_JW_NO_THREAD; /* the list not known yet: missing */
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	join__set_jvm_threads_known(f.join, s.pid, true);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	s.jstack_err = JP_JW_NO_ANCHOR;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	s.jstack_err = JP_JW_IN_JAVA; /* Java code it could not walk: missing */
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	out = folded(&f);
	EXPECT_STREQ(out, "testproc;[no Java stack: no agent];join_caller;join_leaf 2\n"
			  "testproc;join_caller;join_leaf 2\n");
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 4);
	m = open_memstream(&rep, &len);
	ASSERT_TRUE(m != NULL);
	join__report(f.join, m, true);
	fclose(m);
	EXPECT_TRUE(strstr(rep, "4 samples, 2 in Java threads of which 0 with complete") != NULL);
	EXPECT_TRUE(strstr(rep, "2 in JVM-internal threads") != NULL);
	free(rep);
	free(out);
	teardown(&f);
}

TEST(jvm_being_attached_is_marked_pending)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample s = sample(JP_EV_CPU, 0, 1);
	char *out, *rep = NULL;
	size_t len = 0;
	FILE *m;

	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__add_jvm(f.join, s.pid, s.pid, "java", NULL), 0);
	join__set_jvm_pending(f.join, s.pid, true);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	join__set_jvm_pending(f.join, s.pid, false); /* given up: no agent from now on */
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	out = folded(&f);
	EXPECT_STREQ(out, "testproc;[no Java stack: agent not yet attached];join_leaf 1\n"
			  "testproc;[no Java stack: no agent];join_leaf 1\n");
	m = open_memstream(&rep, &len);
	ASSERT_TRUE(m != NULL);
	join__report(f.join, m, true);
	fclose(m);
	EXPECT_TRUE(strstr(rep, "1 no agent") != NULL);
	EXPECT_TRUE(strstr(rep, "1 agent not yet attached") != NULL);
	free(rep);
	free(out);
	teardown(&f);
}

TEST(signal_failures_are_reasons_not_silence)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample busy = sample(JP_EV_CPU, 0, 1), unsent = sample(JP_EV_CPU, 0, 1);
	char *out;

	ASSERT_TRUE(setup(&f, &o) == 0);
	/* a JVM whose agent never answers: registered without a channel, then given none */
	EXPECT_EQ(join__add_jvm(f.join, busy.pid, busy.pid, "java", NULL), 0);
	busy.flags = JP_SF_SIGNALED;
	busy.sig_err = -EBUSY;
	EXPECT_EQ(join__sample(f.join, &busy, NULL, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &unsent, NULL, ustack), 0);
	EXPECT_EQ(join__flush(f.join), 0);
	out = folded(&f);
	/* without an agent every sample says so, whatever the signal did */
	EXPECT_STREQ(out, "testproc;[no Java stack: no agent];join_leaf 2\n");
	free(out);
	teardown(&f);
}

/* ---- a fake agent: ring and dictionary files as a JVM's agent writes them ---- */

#define FA_DATA	  JP_RING_DATA_MIN
#define FA_METHOD 0x1000ull

struct fake_agent {
	char dir[64], ring[96], dict[96];
	unsigned char *mem; /* header + data */
	__u64 sent;	    /* traces written */
};

/* writes the ring file except the tail, which is the reader's */
static void fa_flush(struct fake_agent *a)
{
	size_t t = offsetof(struct jp_ring_hdr, tail), end = JP_RING_HDR_SIZE + FA_DATA;
	int fd = open(a->ring, O_WRONLY | O_CREAT, 0600);

	(void)!pwrite(fd, a->mem, t, 0);
	(void)!pwrite(fd, a->mem + t + 8, end - t - 8, (off_t)(t + 8));
	close(fd);
}

/* one class "Lpkg/Work;" with one method "run", then the reader */
static struct jvm_agent *fa_open(struct fake_agent *a)
{
	struct jp_dict_hdr dh = { JP_DICT_MAGIC, JP_RING_VERSION, sizeof(dh), 42, 0 };
	unsigned char d[256];
	size_t n = 0, at;
	struct jp_ring_hdr *h;
	int fd;

#define PUT(p, len) (memcpy(d + n, (p), (len)), n += (len))
#define PUTV(v)	    do { __typeof__(v) x_ = (v); PUT(&x_, sizeof(x_)); } while (0)
	memset(a, 0, sizeof(*a));
	snprintf(a->dir, sizeof(a->dir), "/tmp/jprof-utj-XXXXXX");
	if (!mkdtemp(a->dir))
		return NULL;
	snprintf(a->ring, sizeof(a->ring), "%s/r.ring", a->dir);
	snprintf(a->dict, sizeof(a->dict), "%s/r.dict", a->dir);
	PUT(&dh, sizeof(dh));
	at = n;
	PUTV(((struct jp_dict_rec){ 0, JP_DICT_CLASS, 0 }));
	PUTV((__u16)10);
	PUTV((__u16)9);
	PUTV((__u32)1);
	PUT("Lpkg/Work;", 10);
	PUT("Work.java", 9);
	PUTV((__u64)FA_METHOD);
	PUTV((__u16)3);
	PUTV((__u16)3);
	PUTV((__u32)0);
	PUT("run", 3);
	PUT("()V", 3);
	*(__u32 *)(d + at) = (__u32)(n - at);
#undef PUT
#undef PUTV
	fd = open(a->dict, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	(void)!write(fd, d, n);
	close(fd);
	a->mem = calloc(1, JP_RING_HDR_SIZE + FA_DATA);
	if (!a->mem)
		return NULL;
	h = (struct jp_ring_hdr *)a->mem;
	h->magic = JP_RING_MAGIC;
	h->version = JP_RING_VERSION;
	h->hdr_size = JP_RING_HDR_SIZE;
	h->data_size = FA_DATA;
	h->pid = 42;
	h->signo = 37;
	h->max_depth = 64;
	fd = open(a->ring, O_WRONLY | O_CREAT, 0600);
	(void)!pwrite(fd, a->mem, JP_RING_HDR_SIZE + FA_DATA, 0);
	close(fd);
	return jvm_agent__open_files(a->ring, a->dict, (unsigned int)-1);
}

/* setup() with this process registered as a JVM whose agent is fa (fa_open) */
static int setup_jvm(struct fixture *f, const struct join_opts *o, struct fake_agent *fa)
{
	if (setup(f, o))
		return -1;
	return join__add_jvm(f->join, (__u32)getpid(), (__u32)getpid(), "java", fa_open(fa));
}

static void fa_close(struct fake_agent *a)
{
	unlink(a->ring);
	unlink(a->dict);
	rmdir(a->dir);
	free(a->mem);
}

/* where a record of len bytes goes next: records never cross the end, a pad fills up to it */
static __u64 fa_reserve(struct fake_agent *a, __u32 len)
{
	__u64 pos = ((struct jp_ring_hdr *)a->mem)->head, room = FA_DATA - pos % FA_DATA;

	if (room < len) {
		struct jp_rec_hdr *p = (struct jp_rec_hdr *)(a->mem + JP_RING_HDR_SIZE + pos % FA_DATA);

		p->len = (__u32)room;
		p->type = JP_REC_PAD;
		p->seq = pos;
		pos += room;
	}
	return pos;
}

/* appends a committed trace of one frame (pkg/Work.run), or none when n <= 0 */
static void fa_trace(struct fake_agent *a, __u32 tid, __u64 time_ns, int n)
{
	struct jp_ring_hdr *h = (struct jp_ring_hdr *)a->mem;
	__u32 len = sizeof(struct jp_trace_rec) + (n > 0 ? sizeof(struct jp_frame) : 0);
	struct jp_frame fr = { .bci = 7, .method_id = FA_METHOD };
	__u64 pos = fa_reserve(a, len);
	struct jp_trace_rec *r;

	r = (struct jp_trace_rec *)(a->mem + JP_RING_HDR_SIZE + pos % FA_DATA);
	memset(r, 0, sizeof(*r));
	r->h.len = len;
	r->h.type = JP_REC_TRACE;
	r->h.seq = pos;
	r->time_ns = time_ns;
	r->tid = tid;
	r->num_frames = n > 0 ? 1 : n;
	if (n > 0)
		memcpy(r + 1, &fr, sizeof(fr));
	h->head = pos + len;
	a->sent++;
}

/* a signalled JVM sample of thread tid at t, native stack: this binary */
static struct jp_sample jsample(__u32 tid, __u64 t)
{
	struct jp_sample s = sample(JP_EV_CPU, 0, 1);

	s.tid = tid;
	s.time_ns = t;
	s.flags = JP_SF_SIGNALED;
	return s;
}

static char *report(struct fixture *f)
{
	char *rep = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&rep, &len);

	if (!m)
		return NULL;
	join__report(f->join, m, true);
	fclose(m);
	return rep;
}

#define SEC 1000000000ull

TEST(many_threads_many_waiting_all_paired)
{
	enum { THREADS = 400, ROUNDS = 6 };
	struct join_opts o = { 0 };
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 base = 100 * SEC;
	char *rep;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	ASSERT_TRUE(join__has_jvm(f.join, (__u32)getpid()));
	for (int r = 0; r < ROUNDS; r++) {
		__u64 t = base + (__u64)r * 10000000;

		/* every thread sampled, then the traces in the opposite thread order */
		for (__u32 i = 0; i < THREADS; i++) {
			s = jsample(10000 + i, t + i);
			EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
		}
		for (__u32 i = THREADS; i-- > 0;)
			fa_trace(&fa, 10000 + i, t + i + 50, 1);
		fa_flush(&fa);
		EXPECT_EQ(join__poll(f.join, t + 1000000), 0);
	}
	EXPECT_EQ(join__flush(f.join), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, THREADS * ROUNDS);
	EXPECT_EQ(st.java_complete, THREADS * ROUNDS);
	EXPECT_EQ(st.unmatched_traces, 0);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "complete Java stacks (100.0%)") != NULL);
	free(rep);
	teardown(&f);
	fa_close(&fa);
}

/* the ring's tail in its file: what the reader consumed */
static __u64 fa_tail(const struct fake_agent *a)
{
	__u64 tail = ~0ull;
	int fd = open(a->ring, O_RDONLY);

	(void)!pread(fd, &tail, sizeof(tail), offsetof(struct jp_ring_hdr, tail));
	close(fd);
	return tail;
}

/*
 * A ring whose JVM has no sample waiting (and no event asked for) is read every
 * JOIN_RING_IDLE_NS, not every round; a signalled sample has it read at the next round
 */
TEST(an_idle_ring_is_read_now_and_then_one_with_samples_waiting_every_round)
{
	/* the join's times 8-fold (idle: 2 s): a loaded host's stall between two polls does
	 * not pass for the idle time */
	struct timespec nap = {2, 200 * 1000 * 1000};
	struct join_opts o = {.time_scale = 8};
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 t = 100 * SEC, first;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	EXPECT_EQ(join__poll(f.join, t), 0); /* read: nothing there */
	fa_trace(&fa, 500, t + 50, 1);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, t + 1000), 0);
	EXPECT_EQ(fa_tail(&fa), 0); /* idle: not read this round */
	s = jsample(500, t + 10);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	EXPECT_EQ(join__poll(f.join, t + 2000), 0);
	first = fa_tail(&fa);
	EXPECT_TRUE(first > 0); /* a sample waits: read */
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, 1);
	/* records came last time: the next round reads too, then it is idle again */
	fa_trace(&fa, 501, t + 3000, 1);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, t + 3000), 0);
	EXPECT_TRUE(fa_tail(&fa) > first);
	first = fa_tail(&fa);
	EXPECT_EQ(join__poll(f.join, t + 4000), 0); /* found nothing */
	fa_trace(&fa, 502, t + 5000, 1);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, t + 5000), 0);
	EXPECT_EQ(fa_tail(&fa), first);
	nanosleep(&nap, NULL);
	EXPECT_EQ(join__poll(f.join, t + 6000), 0);
	EXPECT_TRUE(fa_tail(&fa) > first); /* its time came */
	EXPECT_EQ(join__flush(f.join), 0);
	teardown(&f);
	fa_close(&fa);
}

TEST(trace_goes_to_newest_sample_not_later)
{
	struct join_opts o = { 0 };
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 b = 100 * SEC;
	char *rep;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	/* a trace read before its sample waits for it */
	fa_trace(&fa, 7, b + 250, 1);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, b + 300), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, 0);
	/* samples at 100, 200, 300: the trace at 250 belongs to 200 */
	for (int i = 1; i <= 3; i++) {
		s = jsample(7, b + (__u64)i * 100);
		EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	}
	EXPECT_EQ(join__poll(f.join, b + 400), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, 1);
	/* the trace at 310 takes 300; 100 waits out the bound and has no trace */
	fa_trace(&fa, 7, b + 310, 1);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, b + 500), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, 2);
	EXPECT_EQ(st.jvm_samples, 2);
	EXPECT_EQ(join__poll(f.join, b + 10 * SEC), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 3);
	EXPECT_EQ(st.java_complete, 2);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "missing: 1 no trace from the agent") != NULL);
	free(rep);
	teardown(&f);
	fa_close(&fa);
}

TEST(samples_during_a_pending_request_take_its_trace)
{
	struct join_opts o = { 0 };
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 b = 100 * SEC;
	char *rep, *fo;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	/* a request, a sample while it is pending (read before its trace), then the trace */
	s = jsample(7, b + 100);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	s = jsample(7, b + 150);
	s.flags = JP_SF_FOLLOWS;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	fa_trace(&fa, 7, b + 200, 1);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, b + 250), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, 2);
	/* a request that met its trace, then a sample that followed it, read later */
	s = jsample(7, b + 300);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	fa_trace(&fa, 7, b + 310, 1);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, b + 320), 0);
	s = jsample(7, b + 350);
	s.flags = JP_SF_FOLLOWS;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, 4);
	/* a blocked signal without the agent's handler on the stack: not trusted */
	s = jsample(7, b + 360);
	s.flags = JP_SF_FOLLOWS | JP_SF_IN_HANDLER;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	/* a request whose walk failed: who follows it fails the same way */
	s = jsample(7, b + 400);
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	fa_trace(&fa, 7, b + 410, -5);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, b + 420), 0);
	s = jsample(7, b + 450);
	s.flags = JP_SF_FOLLOWS;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	/* another thread's follower whose request was never read: counted as such */
	s = jsample(8, b + 460);
	s.flags = JP_SF_FOLLOWS;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	EXPECT_EQ(join__flush(f.join), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 8);
	EXPECT_EQ(st.java_complete, 4);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "3 samples came while a stack request was pending") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "2 unknown, Java") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "1 agent not ready") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "1 during a pending request of unknown outcome") != NULL);
	if (rep && !strstr(rep, "3 samples came"))
		fprintf(stderr, "%s", rep);
	free(rep);
	/* the followers' Java frame is the request's */
	fo = folded(&f);
	EXPECT_TRUE(fo && strstr(fo, "pkg/Work.run") != NULL);
	free(fo);
	teardown(&f);
	fa_close(&fa);
}

/* what the join told the kernel side about native threads, taken as the record loop does */
struct told {
	int n;
	__u32 tid[8];
	bool native[8];
};

static void take_told(struct join *j, struct told *t)
{
	struct join_update u[4];
	size_t n;

	while ((n = join__take_updates(j, u, 4))) {
		for (size_t i = 0; i < n; i++) {
			if (u[i].kind != JOIN_UP_NATIVE_THREAD)
				continue;
			if (t->n < 8) {
				t->tid[t->n] = u[i].tid;
				t->native[t->n] = u[i].on;
			}
			t->n++;
		}
	}
}

/* one signalled sample of tid at t and its trace (n frames, or an error code) */
static void answer(struct fixture *f, struct fake_agent *fa, __u32 tid, __u64 t, int n,
		   __u32 flags)
{
	struct jp_sample s = jsample(tid, t);

	s.flags |= flags;
	EXPECT_EQ(join__sample(f->join, &s, NULL, ustack), 0);
	fa_trace(fa, tid, t + 10, n);
	fa_flush(fa);
	EXPECT_EQ(join__poll(f->join, t + 20), 0);
}

TEST(native_threads_are_told_after_a_while_and_again_when_java)
{
	struct told told = { 0 };
	struct join_opts o = { .native_threads = true };
	struct fake_agent fa;
	struct fixture f;
	struct jp_sample s;
	__u64 b = 100 * SEC, ms = 1000000;
	char *rep;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	/* a new Java thread: "not a Java thread" until ThreadStart, then Java: never told */
	answer(&f, &fa, 8, b, JAVA_TRACE_ERR_NOT_JAVA_THREAD, 0);
	answer(&f, &fa, 8, b + 5 * ms, 1, 0);
	answer(&f, &fa, 8, b + 300 * ms, 1, 0);
	/* a GC thread: told once it has answered so for 200 ms */
	answer(&f, &fa, 9, b, JAVA_TRACE_ERR_NOT_JAVA_THREAD, 0);
	answer(&f, &fa, 9, b + 100 * ms, JAVA_TRACE_ERR_NOT_JAVA_THREAD, 0);
	take_told(f.join, &told);
	EXPECT_EQ(told.n, 0);
	answer(&f, &fa, 9, b + 250 * ms, JAVA_TRACE_ERR_NOT_JAVA_THREAD, 0);
	take_told(f.join, &told);
	EXPECT_EQ(told.n, 1);
	EXPECT_EQ(told.tid[0], 9);
	EXPECT_TRUE(told.native[0]);
	/* its samples come unsignalled now, counted JVM-internal */
	s = jsample(9, b + 260 * ms);
	s.flags = JP_SF_NATIVE_THREAD;
	EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	/* a re-ask: still native, nothing to tell; then it has attached: told */
	answer(&f, &fa, 9, b + 400 * ms, JAVA_TRACE_ERR_NOT_JAVA_THREAD, JP_SF_NATIVE_RECHECK);
	take_told(f.join, &told);
	EXPECT_EQ(told.n, 1);
	answer(&f, &fa, 9, b + 500 * ms, 1, JP_SF_NATIVE_RECHECK);
	take_told(f.join, &told);
	EXPECT_EQ(told.n, 2);
	EXPECT_EQ(told.tid[1], 9);
	EXPECT_TRUE(!told.native[1]);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "6 in JVM-internal threads (1 not asked again)") != NULL);
	free(rep);
	teardown(&f);
	fa_close(&fa);
}

TEST(agent_rounds_are_bounded)
{
	/*
	 * 2 records per round, 64 rounds per poll at most: 128 a poll; the time bound far
	 * off, so that being scheduled out does not end a poll first (a loaded host)
	 */
	struct join_opts o = { .traces_per_round = 2, .time_scale = 100 };
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 b = 100 * SEC;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	for (__u32 i = 0; i < 250; i++) {
		s = jsample(20000 + i, b + i);
		EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
		fa_trace(&fa, 20000 + i, b + i + 1, 1);
	}
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, b + 1000), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, 128);
	/* the rest in the next poll: rounds go on while a ring holds more */
	EXPECT_EQ(join__poll(f.join, b + 2000), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, 250);
	teardown(&f);
	fa_close(&fa);
}

TEST(budgets_count_what_falls_out)
{
	/* room for about 10 waiting samples and 10 waiting traces */
	struct join_opts o = { .pend_budget_jvm = 10 * 200, .trace_budget_jvm = 10 * 120 };
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 b = 100 * SEC;
	char *rep;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	/* samples whose traces never come: the oldest stop waiting, natives kept, counted */
	for (__u32 i = 0; i < 100; i++) {
		s = jsample(30000 + i, b + i);
		EXPECT_EQ(join__sample(f.join, &s, NULL, ustack), 0);
	}
	join__stats(f.join, &st);
	EXPECT_TRUE(st.backlog >= 85 && st.backlog <= 95);
	EXPECT_EQ(st.jvm_samples, st.backlog);
	/* a flood of traces without samples: bounded, every one counted */
	for (__u32 r = 0; r < 4; r++) {
		for (__u32 i = 0; i < 500; i++)
			fa_trace(&fa, 40000 + r * 500 + i, b + 1000 + i, 1);
		fa_flush(&fa);
		EXPECT_EQ(join__poll(f.join, b + 2000), 0);
	}
	EXPECT_EQ(join__flush(f.join), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.trace_drops + st.unmatched_traces, 2000);
	EXPECT_TRUE(st.unmatched_traces <= 12);
	EXPECT_EQ(st.jvm_samples, 100);
	EXPECT_EQ(st.java_complete, 0);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "join backlog full") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "traces over budget") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "traces without sample") != NULL);
	free(rep);
	teardown(&f);
	fa_close(&fa);
}

/* appends a committed allocation event of one frame (pkg/Work.run) */
static void fa_alloc(struct fake_agent *a, __u32 tid, __u64 time_ns)
{
	struct jp_ring_hdr *h = (struct jp_ring_hdr *)a->mem;
	__u32 len = sizeof(struct jp_event_rec) + sizeof(struct jp_frame);
	struct jp_frame fr = { .bci = 7, .method_id = FA_METHOD };
	struct jp_event_rec *r;

	r = (struct jp_event_rec *)(a->mem + JP_RING_HDR_SIZE + h->head % FA_DATA);
	memset(r, 0, sizeof(*r));
	r->h.len = len;
	r->h.type = JP_REC_EVENT;
	r->h.seq = h->head;
	r->time_ns = time_ns;
	r->tid = tid;
	r->kind = JP_AEV_ALLOC;
	r->size = 16;
	r->weight = 1024;
	r->num_frames = 1;
	memcpy(r + 1, &fr, sizeof(fr));
	h->head += len;
}

/* agent events are joined only when -e asked for their kind; the others are counted */
TEST(agent_events_only_as_asked)
{
	static const __u32 asked[] = { 0, JP_AGENT_EV_LOCK, JP_AGENT_EV_ALLOC };
	__u64 b = 100 * SEC;

	for (size_t k = 0; k < sizeof(asked) / sizeof(asked[0]); k++) {
		struct join_opts o = { .agent_events = asked[k], .joined_events = asked[k] };
		struct fake_agent fa;
		struct fixture f;
		char *rep;

		ASSERT_TRUE(setup(&f, &o) == 0);
		ASSERT_TRUE(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java",
					  fa_open(&fa)) == 0);
		for (__u32 i = 0; i < 10; i++)
			fa_alloc(&fa, 50000 + i, b + i);
		fa_flush(&fa);
		EXPECT_EQ(join__poll(f.join, b + 1000), 0);
		EXPECT_EQ(join__flush(f.join), 0);
		rep = report(&f);
		if (asked[k] == JP_AGENT_EV_ALLOC) {
			EXPECT_EQ(model__total(f.model, JP_VAL_ALLOC_SPACE), 10 * 1024);
			EXPECT_TRUE(rep && !strstr(rep, "not asked for"));
		} else {
			EXPECT_EQ(model__total(f.model, JP_VAL_ALLOC_SPACE), 0);
			EXPECT_TRUE(rep && strstr(rep, "10 events not asked for (skipped)"));
		}
		free(rep);
		teardown(&f);
		fa_close(&fa);
	}
}

/*
 * appends an allocation event of depth frames, each pkg/Work.run interpreted or native as
 * the bits of seed say (a stack of its own per seed), padding to the ring's end as needed
 */
static void fa_alloc_deep(struct fake_agent *a, __u32 tid, __u64 time_ns, int depth, __u64 seed)
{
	struct jp_ring_hdr *h = (struct jp_ring_hdr *)a->mem;
	__u32 len = sizeof(struct jp_event_rec) + (__u32)depth * sizeof(struct jp_frame);
	__u64 pos = fa_reserve(a, len);
	struct jp_frame *fr;
	struct jp_event_rec *r;

	r = (struct jp_event_rec *)(a->mem + JP_RING_HDR_SIZE + pos % FA_DATA);
	memset(r, 0, sizeof(*r));
	r->h.len = len;
	r->h.type = JP_REC_EVENT;
	r->h.seq = pos;
	r->time_ns = time_ns;
	r->tid = tid;
	r->kind = JP_AEV_ALLOC;
	r->size = 16;
	r->weight = 1024;
	r->num_frames = depth;
	fr = (struct jp_frame *)(r + 1);
	for (int i = 0; i < depth; i++) {
		fr[i].method_id = FA_METHOD;
		fr[i].bci = seed >> (i % 64) & 1 ? -3 : 7;
		fr[i].pad = 0;
		if (i % 64 == 63)
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	}
	h->head = pos + len;
}

/*
 * An agent writing events of a thousand random frames (a hostile one): its JVM's share of
 * the stack trie is spent after a few hundred, then its new stacks are dropped and
 * counted while those the model has already still count
 */
TEST(a_jvm_of_deep_random_stacks_keeps_to_its_share)
{
	/* every event read (the time bounds far off: a loaded host), the share decides */
	struct join_opts o = { .agent_events = JP_AGENT_EV_ALLOC, .joined_events = JP_AGENT_EV_ALLOC,
			       .time_scale = 100 };
	enum { DEPTH = 1000, ROUNDS = 200, PER_ROUND = 3 };
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct model_mem mm;
	__u64 b = 100 * SEC, seed = 0x9e3779b97f4a7c15ull;
	char *rep;

	ASSERT_TRUE(setup(&f, &o) == 0);
	ASSERT_TRUE(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java",
				  fa_open(&fa)) == 0);
	fa_alloc(&fa, 50000, b); /* a stack of one frame, known before the flood */
	for (__u32 k = 0; k < ROUNDS; k++) {
		for (__u32 i = 0; i < PER_ROUND; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			fa_alloc_deep(&fa, 50001, b + 1 + k, DEPTH, seed);
		}
		fa_flush(&fa);
		EXPECT_EQ(join__poll(f.join, b + 1000 + k), 0);
	}
	fa_alloc(&fa, 50000, b + 5000);
	fa_flush(&fa);
	EXPECT_EQ(join__poll(f.join, b + 6000), 0);
	EXPECT_EQ(join__flush(f.join), 0);
	join__stats(f.join, &st);
	model__mem(f.model, &mm);
	/* 600 stacks would be 600,000 nodes: the share is 256 Ki nodes and 128 a stack */
	EXPECT_TRUE(mm.stack_nodes < JOIN_JVM_NODES + 400 * JOIN_JVM_NODES_PER_STACK + DEPTH);
	EXPECT_TRUE(mm.stack_nodes > JOIN_JVM_NODES);
	EXPECT_TRUE(st.share_drops > 200 && st.share_drops < 400); /* about 300 let in */
	EXPECT_EQ(st.model_drops, 0);
	/* the known stack: both its events, after the share was spent too */
	EXPECT_EQ(model__total(f.model, JP_VAL_ALLOC_SPACE),
		  (ROUNDS * PER_ROUND - st.share_drops + 2) * 1024);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "samples of new stacks dropped (the JVM's stack budget)"));
	free(rep);
	teardown(&f);
	fa_close(&fa);
}

/* JVMs come and go: the live ones are found by pid, retired ones are not, pids are reused */
TEST(jvms_by_pid_through_churn)
{
	enum { N = 3000 };
	struct join_opts o = { 0 };
	struct fixture f;
	int bad = 0;

	ASSERT_TRUE(setup(&f, &o) == 0);
	for (__u32 p = 1; p <= N; p++)
		ASSERT_TRUE(join__add_jvm(f.join, p * 7, p * 7, "java", NULL) == 0);
	/* every third retires: probe runs close over the holes */
	for (__u32 p = 1; p <= N; p += 3)
		EXPECT_EQ(join__retire_jvm(f.join, p * 7, 0), 0);
	for (__u32 p = 1; p <= N; p++)
		bad += join__knows_jvm(f.join, p * 7) != ((p - 1) % 3 != 0);
	EXPECT_EQ(bad, 0);
	/* a retired pid comes back as a new JVM; the others stay */
	for (__u32 p = 1; p <= N; p += 3)
		ASSERT_TRUE(join__add_jvm(f.join, p * 7, p * 7, "java", NULL) == 0);
	for (__u32 p = 1; p <= N; p++)
		bad += !join__knows_jvm(f.join, p * 7);
	for (__u32 p = 1; p <= N; p++)
		EXPECT_EQ(join__retire_jvm(f.join, p * 7, 0), 0);
	for (__u32 p = 1; p <= N; p++)
		bad += join__knows_jvm(f.join, p * 7);
	EXPECT_EQ(bad, 0);
	EXPECT_TRUE(!join__knows_jvm(f.join, 5));
	/* the newest 128 exited JVMs are listed one by one, the 3,872 before them in one line */
	{
		char *rep = NULL, name[128];
		size_t len = 0, lines = 0;
		FILE *m = open_memstream(&rep, &len);

		ASSERT_TRUE(m);
		join__report(f.join, m, false);
		fclose(m);
		for (char *c = rep; (c = strstr(c, "jprof: JVM ")); c++)
			lines++;
		EXPECT_EQ(lines, 128);
		EXPECT_TRUE(strstr(rep, "jprof: 3872 more JVMs that exited") != NULL);
		free(rep);
		EXPECT_TRUE(!join__only_jvm(f.join, name, sizeof(name)));
	}
	teardown(&f);
}

/*
 * Counting wrappers (the Makefile links this binary with --wrap for each): calls from
 * jprof's code while `counting` is set are counted, then passed on.
 */
static int counting;
static unsigned long n_alloc, n_fmt, n_sys;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
int __real_vsnprintf(char *s, size_t n, const char *fmt, va_list ap);
int __real_fstat(int fd, struct stat *st);
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __real_pread64(int fd, void *buf, size_t n, off_t off);
int __real_open(const char *path, int flags, ...);
int __real_openat(int dfd, const char *path, int flags, ...);
int __real_stat(const char *path, struct stat *st);

void *__wrap_malloc(size_t n)
{
	n_alloc += counting;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	n_alloc += counting;
	return __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	n_alloc += counting;
	return __real_realloc(p, n);
}

int __wrap_vsnprintf(char *s, size_t n, const char *fmt, va_list ap)
{
	n_fmt += counting;
	return __real_vsnprintf(s, n, fmt, ap);
}

int __wrap_snprintf(char *s, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	n_fmt += counting;
	va_start(ap, fmt);
	r = __real_vsnprintf(s, n, fmt, ap);
	va_end(ap);
	return r;
}

int __wrap_fstat(int fd, struct stat *st)
{
	n_sys += counting;
	return __real_fstat(fd, st);
}

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	n_sys += counting;
	return __real_read(fd, buf, n);
}

ssize_t __wrap_pread64(int fd, void *buf, size_t n, off_t off)
{
	n_sys += counting;
	return __real_pread64(fd, buf, n, off);
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	n_sys += counting;
	return __real_open(path, flags, mode);
}

int __wrap_openat(int dfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (mode_t)va_arg(ap, int);
	va_end(ap);
	n_sys += counting;
	return __real_openat(dfd, path, flags, mode);
}

int __wrap_stat(const char *path, struct stat *st)
{
	n_sys += counting;
	return __real_stat(path, st);
}

/*
 * The paths a steady-state sample takes allocate nothing, format no string and make no
 * file syscall: a native sample of frames seen before, a JVM sample whose Java stack the
 * agent's signal handler sent, and a JVM sample of a thread that has no Java stack (its
 * marker). Warmed up first (names, caches, thread slots), then counted: join__sample, and
 * join__poll (which completes the Java samples) apart. The threads here are ones the
 * agent's dictionary does not name (like a GC worker's): each looks at the dictionary file
 * once, then again only after it grew. A poll round reads the dictionary's size once.
 */
TEST(steady_state_samples_allocate_format_and_call_nothing)
{
	enum { THREADS = 8, WARM = 20, ROUNDS = 400 };
	unsigned long sa = 0, sf = 0, ss = 0, pa = 0, pf = 0, ps = 0, a0, f0, s0;
	/* the time bounds far off: a poll cut short on a loaded host leaves samples to grow */
	struct join_opts o = { .time_scale = 100 };
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	__u64 b = 100 * SEC, w0 = 0;
	double ms;

	ASSERT_TRUE(setup(&f, &o) == 0);
	/* as jprof record runs it: a lookup's miss leaves the re-read to the record loop */
	syms__defer_loads(f.syms, true);
	ASSERT_TRUE(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", fa_open(&fa)) == 0);
	for (int r = 0; r < WARM + ROUNDS; r++) {
		__u64 t = b + (__u64)r * 10000000;
		struct jp_sample s;

		if (r == WARM)
			w0 = mono_ns();
		for (__u32 i = 0; i < THREADS; i++)
			fa_trace(&fa, 20000 + i, t + i + 50, 1);
		fa_flush(&fa);
		a0 = n_alloc, f0 = n_fmt, s0 = n_sys;
		counting = r >= WARM;
		for (__u32 i = 0; i < THREADS; i++) {
			/* Java: its trace follows */
			s = jsample(20000 + i, t + i);
			EXPECT_EQ(join__sample(f.join, &s, kstack, ustack), 0);
			/* no Java stack: a JVM thread that was not signalled (a marker) */
			s = sample(JP_EV_CPU, 2, 2);
			s.tid = 30000 + i;
			s.time_ns = t + i;
			EXPECT_EQ(join__sample(f.join, &s, kstack, ustack), 0);
			/* another process: native and kernel frames only */
			s = sample(JP_EV_CPU, 2, 2);
			s.pid = s.tid = (__u32)getppid();
			s.time_ns = t + i;
			EXPECT_EQ(join__sample(f.join, &s, kstack, ustack), 0);
		}
		sa += n_alloc - a0, sf += n_fmt - f0, ss += n_sys - s0;
		a0 = n_alloc, f0 = n_fmt, s0 = n_sys;
		EXPECT_EQ(join__poll(f.join, t + 1000000), 0);
		pa += n_alloc - a0, pf += n_fmt - f0, ps += n_sys - s0;
		counting = 0;
	}
	ms = (double)(mono_ns() - w0) / 1e6;
	printf("    %d rounds of %d threads in %.1f ms: samples %lu allocations, %lu formatted, "
	       "%lu file syscalls; polls %lu, %lu, %lu\n",
	       ROUNDS, THREADS * 3, ms, sa, sf, ss, pa, pf, ps);
	EXPECT_EQ(sa + pa, 0);
	EXPECT_EQ(sf + pf, 0);
	EXPECT_EQ(ss, 0);
	EXPECT_TRUE(ps <= ROUNDS); /* one per poll round: the dictionary's size */
	EXPECT_EQ(join__flush(f.join), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.java_complete, (WARM + ROUNDS) * THREADS);
	teardown(&f);
	fa_close(&fa);
}

__attribute__((destructor)) static void cleanup(void)
{
	if (kallsyms_path[0])
		unlink(kallsyms_path);
}

/* pid 100001 is held by a new process when its fold comes (the pid space wrapped) */
static bool pid_taken_again(void *ctx, __u32 pid, const char *comm)
{
	(void)ctx;
	(void)comm;
	return pid == 100001;
}

/*
 * 5,000 short processes: the newest JOIN_EXITED_KEEP exited keep their own roots, older
 * ones fold into "testproc [N exited processes]"; totals stay, the model's label sets
 * stay bounded, and a folded thread's last stack is forgotten (its id may be reused)
 */
TEST(exited_processes_fold_by_name)
{
	struct join_opts o = {0};
	struct fixture f;
	struct model_mem mm;
	struct model_counts c;
	struct jp_sample tail;
	__u64 samples = 0;
	char *out, want[64];

	ASSERT_TRUE(setup(&f, &o) == 0);
	f.view.per_pid = true;
	for (__u32 pid = 100000; pid < 105000; pid++) {
		struct jp_sample s = sample(JP_EV_CPU, 2, 0);

		s.pid = s.tid = pid;
		s.weight = 1000;
		EXPECT_EQ(join__sample(f.join, &s, kstack, NULL), 0);
		samples++;
		EXPECT_EQ(join__process_exited(f.join, pid, pid_taken_again, NULL), 0);
	}
	model__mem(f.model, &mm);
	/* 5,000 - 2,048 - 512 < folded <= 5,000 - 2,048 */
	EXPECT_TRUE(mm.folded > 5000 - 2048 - 512 && mm.folded <= 5000 - 2048);
	EXPECT_TRUE(mm.labels <= 2048 + 512 + 1);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_SAMPLES), samples);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_NS), samples * 1000);
	out = folded(&f);
	snprintf(want, sizeof(want), "testproc [%llu exited processes];",
		 (unsigned long long)mm.folded);
	EXPECT_TRUE(out && strstr(out, want) != NULL);
	EXPECT_TRUE(out && strstr(out, "testproc [104999];") != NULL);
	EXPECT_TRUE(out && strstr(out, "testproc [100000];") == NULL);
	/* a pid a live process holds is not folded: its labels are that process's too */
	EXPECT_TRUE(out && strstr(out, "testproc [100001];") != NULL);
	EXPECT_EQ(join__fold_skipped(f.join), 1);
	free(out);

	/* the first process's thread ends now: its CPU tail must not go to a reused label set */
	tail = sample(JP_EV_CPU, 0, 0);
	tail.pid = tail.tid = 100000;
	tail.weight = 7;
	tail.flags = JP_SF_CPU_TAIL;
	EXPECT_EQ(join__sample(f.join, &tail, NULL, NULL), 0);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_NS), samples * 1000 + 7);
	model__counts(f.model, &c);
	for (jp_id id = 1; id <= c.labels; id++) {
		const struct jp_labels *l = model__get_labels(f.model, id);

		/* each set still a process of its own has its own pid's rows only */
		EXPECT_TRUE(!l || l->nfolded || l->pid == l->tid);
	}
	f.view.values = 1u << JP_VAL_CPU_NS;
	out = folded(&f);
	EXPECT_TRUE(out &&
		    strstr(out, "testproc [100000];[cpu after the last sample] 7\n") != NULL);
	free(out);
	teardown(&f);
}

/* pid 200001 runs under its old name again (a shell that exec'd a shell) */
static bool name_run_again(void *ctx, __u32 pid, const char *comm)
{
	(void)ctx;
	return pid == 200001 && comm && !strcmp(comm, "testproc");
}

/*
 * 5,000 forks that exec'd (samples as "testproc", the parent's name, then as "newprog")
 * and were never seen to exit (the process table no longer held them): the label sets of
 * their old name fold at the exec as an exited process's do, the new program's stay its
 * own; totals stay, label sets stay bounded, and a thread's last stack whose set was
 * folded is forgotten (its id may be reused), a live one's kept
 */
TEST(execed_processes_fold_their_old_name)
{
	struct join_opts o = {0};
	struct fixture f;
	struct model_mem mm;
	struct jp_sample tail;
	__u64 samples = 0;
	char *out, want[64];

	ASSERT_TRUE(setup(&f, &o) == 0);
	f.view.per_pid = true;
	for (__u32 pid = 200000; pid < 205000; pid++) {
		struct jp_sample s = sample(JP_EV_CPU, 2, 0);

		s.pid = s.tid = pid;
		s.weight = 1000;
		EXPECT_EQ(join__sample(f.join, &s, kstack, NULL), 0);
		samples++;
		EXPECT_EQ(join__process_execed(f.join, pid, "testproc", name_run_again, NULL), 0);
		if (pid < 200010) { /* a few are sampled after the exec too */
			memcpy(s.pcomm, "newprog", 8);
			EXPECT_EQ(join__sample(f.join, &s, kstack, NULL), 0);
			samples++;
		}
	}
	EXPECT_EQ(join__process_execed(f.join, 1, "", NULL, NULL), 0); /* never named: none */
	model__mem(f.model, &mm);
	EXPECT_EQ(mm.folded, 0);
	EXPECT_TRUE(mm.folded_execs > 5000 - 2048 - 512 && mm.folded_execs <= 5000 - 2048);
	EXPECT_TRUE(mm.labels <= 2048 + 512 + 1 + 10);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_SAMPLES), samples);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_NS), samples * 1000);
	EXPECT_EQ(join__fold_skipped(f.join), 1);
	out = folded(&f);
	snprintf(want, sizeof(want), "testproc [%llu exited processes];",
		 (unsigned long long)mm.folded_execs);
	EXPECT_TRUE(out && strstr(out, want) != NULL);
	EXPECT_TRUE(out && strstr(out, "testproc [200000];") == NULL);
	EXPECT_TRUE(out && strstr(out, "testproc [200001];") != NULL);
	EXPECT_TRUE(out && strstr(out, "newprog [200000];") != NULL);
	EXPECT_TRUE(out && strstr(out, "testproc [204999];") != NULL);
	free(out);

	/* 200000's thread ends: its CPU tail goes to its live set (newprog) */
	tail = sample(JP_EV_CPU, 0, 0);
	tail.pid = tail.tid = 200000;
	tail.weight = 7;
	tail.flags = JP_SF_CPU_TAIL;
	memcpy(tail.pcomm, "newprog", 8);
	EXPECT_EQ(join__sample(f.join, &tail, NULL, NULL), 0);
	/* 200020's slot held a folded set: forgotten, its tail goes to a new set of its own */
	tail.pid = tail.tid = 200020;
	memcpy(tail.pcomm, "testproc", 9);
	EXPECT_EQ(join__sample(f.join, &tail, NULL, NULL), 0);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_NS), samples * 1000 + 14);
	f.view.values = 1u << JP_VAL_CPU_NS;
	out = folded(&f);
	EXPECT_TRUE(out && strstr(out, "newprog [200000];[cpu after the last sample] 7\n") != NULL);
	EXPECT_TRUE(out &&
		    strstr(out, "testproc [200020];[cpu after the last sample] 7\n") != NULL);
	free(out);
	teardown(&f);
}

/* frames in no file are named, not addressed: two processes' unknown frames share a stack */
TEST(unknown_frames_of_two_processes_share_locations)
{
	struct join_opts o = {0};
	struct fixture f;
	struct jp_sample a = sample(JP_EV_CPU, 0, 1), b = sample(JP_EV_CPU, 0, 1);
	const __u64 ua[] = {0x7f1234560000ull}, ub[] = {0x7f6543210000ull};
	struct model_counts c;

	ASSERT_TRUE(setup(&f, &o) == 0);
	/* pids nothing runs as (above the largest pid_max): their addresses map to nothing */
	a.pid = a.tid = 0x7ffffff0;
	b.pid = b.tid = 0x7ffffff1;
	EXPECT_EQ(join__sample(f.join, &a, NULL, ua), 0);
	EXPECT_EQ(join__sample(f.join, &b, NULL, ub), 0);
	model__counts(f.model, &c);
	EXPECT_EQ(c.locations, 1);
	EXPECT_EQ(c.stacks, 1);
	EXPECT_EQ(c.rows, 2);
	teardown(&f);
}

/*
 * Samples BPF walked before the JVM's agent came (record/early.c): one interpreted frame,
 * its Method* and bci after the user stack
 */
#define EARLY_METHOD 0x7f00abc000ull

static const __u64 early_stack[] = { (__u64)(unsigned long)join_leaf, 7, EARLY_METHOD };

static struct jp_sample early_sample(__u32 tid, __u64 t)
{
	struct jp_sample s = sample(JP_EV_CPU, 0, 1);

	s.tid = tid;
	s.time_ns = t;
	s.jstack_err = JP_JW_ENTRY;
	s.jstack_len = 1;
	return s;
}

/*
 * a signalled sample of thread tid at t that BPF walked too, and the agent's trace of it:
 * read in one join__poll, their agreeing walks teach the join the frame's Method*
 */
static void teach_method(struct fixture *f, struct fake_agent *fa, __u32 tid, __u64 t)
{
	struct jp_sample s = early_sample(tid, t);

	s.flags = JP_SF_SIGNALED;
	EXPECT_EQ(join__sample(f->join, &s, NULL, early_stack), 0);
	fa_trace(fa, tid, t + 10, 1);
	fa_flush(fa);
	EXPECT_EQ(join__poll(f->join, t + 20), 0);
}

TEST(early_walks_are_held_and_named_when_the_agent_can)
{
	struct join_opts o = { 0 };
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 b = 100 * SEC;
	char *rep, *fo;

	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", NULL), 0);
	join__set_jvm_pending(f.join, (__u32)getpid(), true);
	for (int i = 0; i < 3; i++) {
		s = early_sample(7, b + (__u64)i);
		EXPECT_EQ(join__sample(f.join, &s, NULL, early_stack), 0);
	}
	/* held: nothing in the model yet, nothing counted missing */
	EXPECT_EQ(join__poll(f.join, b + 10), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 0);
	/* the agent comes; a signalled sample both walked teaches the Method* */
	ASSERT_TRUE(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", fa_open(&fa)) == 0);
	teach_method(&f, &fa, 7, b + 100);
	/* the held ones are named in the same round, before the end */
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 4);
	EXPECT_EQ(st.java_complete, 4);
	EXPECT_EQ(join__flush(f.join), 0);
	fo = folded(&f);
	EXPECT_TRUE(fo && strstr(fo, "pkg/Work.run") != NULL && strstr(fo, " 4\n") != NULL);
	EXPECT_TRUE(fo && !strstr(fo, "[unknown Java]"));
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "walked in BPF before its agent: 3 samples held, 3 named") != NULL);
	if (fo && !strstr(fo, " 4\n"))
		fprintf(stderr, "%s%s", fo, rep ? rep : "");
	free(rep);
	free(fo);
	teardown(&f);
	fa_close(&fa);
}

TEST(early_walks_never_named_show_unknown_java_and_budgets_count)
{
	/* room for about 2 held samples (each ~100 bytes and its frames) */
	struct join_opts o = { .early_budget_jvm = 400 };
	struct fixture f;
	struct jp_sample s;
	char *rep, *fo;

	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", NULL), 0);
	join__set_jvm_pending(f.join, (__u32)getpid(), true);
	for (int i = 0; i < 5; i++) {
		s = early_sample(7, 1000 + (__u64)i);
		EXPECT_EQ(join__sample(f.join, &s, NULL, early_stack), 0);
	}
	/* an agent that never came: the end shows them honestly */
	EXPECT_EQ(join__flush(f.join), 0);
	fo = folded(&f);
	EXPECT_TRUE(fo && strstr(fo, "testproc;[unknown Java]_[0];join_leaf 2\n") != NULL);
	EXPECT_TRUE(fo && strstr(fo, "[no Java stack: agent not yet attached];join_leaf 3\n") != NULL);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "2 samples held, 0 named by the agent's dictionary, 0 named "
				      "from the JVM's memory, 2 shown with [unknown Java] frames, 0 dropped (the agent's layout "
				      "differed), 3 not held (budget)") != NULL);
	if (fo && !strstr(fo, "[unknown Java]_[0];join_leaf 2"))
		fprintf(stderr, "%s%s", fo, rep ? rep : "");
	free(rep);
	free(fo);
	teardown(&f);
}

TEST(early_walks_by_a_contradicted_layout_are_dropped_and_counted)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct jp_sample s = early_sample(7, 1000);
	char *rep, *fo;

	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", NULL), 0);
	EXPECT_EQ(join__sample(f.join, &s, NULL, early_stack), 0);
	join__early_off(f.join, (__u32)getpid());
	/* and no more held */
	EXPECT_EQ(join__sample(f.join, &s, NULL, early_stack), 0);
	EXPECT_EQ(join__flush(f.join), 0);
	fo = folded(&f);
	EXPECT_TRUE(fo && strstr(fo, "[no Java stack: walked early, layout contradicted];join_leaf 1\n") != NULL);
	EXPECT_TRUE(fo && strstr(fo, "[no Java stack: no agent];join_leaf 1\n") != NULL);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "1 samples held, 0 named") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "1 dropped (the agent's layout differed)") != NULL);
	if (fo && !strstr(fo, "contradicted];join_leaf 1"))
		fprintf(stderr, "%s%s", fo, rep ? rep : "");
	free(rep);
	free(fo);
	teardown(&f);
}

TEST(early_walks_of_a_jvm_without_agent_are_named_from_its_memory)
{
	struct join_opts o = { 0 };
	struct fixture f;
	struct vf *v = malloc(sizeof(*v));
	struct vms_stats vst = { 0 };
	struct vms_names nl;
	struct jp_jwalk w;
	/* one interpreted frame whose Method* the fixture's memory names, then one it does not */
	const __u64 named[] = { (__u64)(unsigned long)join_leaf, 7, VF_BASE + VF_METHOD };
	const __u64 unnamed[] = { (__u64)(unsigned long)join_leaf, 7, VF_BASE + 0x10 };
	struct jp_sample s = early_sample(7, 1000);
	struct join_stats jst;
	char *rep, *fo;

	ASSERT_TRUE(v != NULL);
	vf_build(v);
	vf_method(v, "pkg/Mem", "walk");
	ASSERT_TRUE(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &vst) == 0);
	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", NULL), 0);
	join__set_jvm_vmnames(f.join, (__u32)getpid(), vmnames__new_reader(&w, &nl, vf_read, v));
	EXPECT_EQ(join__sample(f.join, &s, NULL, named), 0);
	EXPECT_EQ(join__sample(f.join, &s, NULL, named), 0);
	EXPECT_EQ(join__sample(f.join, &s, NULL, unnamed), 0);
	/* no agent is coming (not pending): they go at the next round, not at the end */
	EXPECT_EQ(join__poll(f.join, 2000), 0);
	join__stats(f.join, &jst);
	EXPECT_EQ(jst.jvm_samples, 3);
	EXPECT_EQ(join__flush(f.join), 0);
	fo = folded(&f);
	EXPECT_TRUE(fo && strstr(fo, "testproc;pkg/Mem.walk_[0];join_leaf 2\n") != NULL);
	EXPECT_TRUE(fo && strstr(fo, "testproc;[unknown Java]_[0];join_leaf 1\n") != NULL);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "3 samples held, 0 named by the agent's dictionary, 2 named "
				      "from the JVM's memory, 1 shown with [unknown Java]") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "of which 2 with complete Java stacks") != NULL);
	EXPECT_TRUE(rep && strstr(rep, "method names read from its memory: 1 methods, 1 could not "
				      "be read") != NULL);
	if (fo && !strstr(fo, "pkg/Mem.walk_[0];join_leaf 2"))
		fprintf(stderr, "%s%s", fo, rep ? rep : "");
	free(rep);
	free(fo);
	teardown(&f);
	free(v);
}

TEST(early_walks_the_agent_cannot_name_are_named_from_memory_at_the_end)
{
	struct join_opts o = { 0 };
	struct fake_agent fa;
	struct fixture f;
	struct vf *v = malloc(sizeof(*v));
	struct vms_stats vst = { 0 };
	struct vms_names nl;
	struct jp_jwalk w;
	const __u64 named[] = { (__u64)(unsigned long)join_leaf, 7, VF_BASE + VF_METHOD };
	struct jp_sample s = early_sample(7, 1000);
	char *rep, *fo;

	ASSERT_TRUE(v != NULL);
	vf_build(v);
	vf_method(v, "pkg/Mem", "walk");
	ASSERT_TRUE(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &vst) == 0);
	ASSERT_TRUE(setup(&f, &o) == 0);
	EXPECT_EQ(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", NULL), 0);
	join__set_jvm_pending(f.join, (__u32)getpid(), true);
	join__set_jvm_vmnames(f.join, (__u32)getpid(), vmnames__new_reader(&w, &nl, vf_read, v));
	EXPECT_EQ(join__sample(f.join, &s, NULL, named), 0);
	/* the agent comes, but no sample teaches it this Method*: the end names it from memory */
	ASSERT_TRUE(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", fa_open(&fa)) == 0);
	EXPECT_EQ(join__poll(f.join, 2000), 0);
	EXPECT_EQ(join__flush(f.join), 0);
	fo = folded(&f);
	EXPECT_TRUE(fo && strstr(fo, "testproc;pkg/Mem.walk_[0];join_leaf 1\n") != NULL);
	rep = report(&f);
	EXPECT_TRUE(rep && strstr(rep, "1 samples held, 0 named by the agent's dictionary, 1 named "
				      "from the JVM's memory, 0 shown with [unknown Java]") != NULL);
	if (fo && !strstr(fo, "pkg/Mem.walk_[0];join_leaf 1"))
		fprintf(stderr, "%s%s", fo, rep ? rep : "");
	free(rep);
	free(fo);
	teardown(&f);
	fa_close(&fa);
	free(v);
}

/*
 * A sample BPF walked and did not signal whose interpreted Method* the join does not know
 * (forgotten since BPF was told) waits; the join__poll in which an agreeing walk teaches
 * that Method* names it, long before the wait's bound, whatever the dictionary did. A
 * count (--aggregate) waits and is named as the samples it stands for.
 */
TEST(jwalked_samples_waiting_for_a_method_are_named_once_it_is_learned)
{
	struct join_opts o = {0};
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 b = 100 * SEC;
	char *fo;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	s = early_sample(7, b);
	s.flags = JP_SF_JWALK | JP_SF_COUNTED;
	s.count = 5;
	EXPECT_EQ(join__sample(f.join, &s, NULL, early_stack), 0);
	s = early_sample(8, b + 1);
	s.flags = JP_SF_JWALK;
	EXPECT_EQ(join__sample(f.join, &s, NULL, early_stack), 0);
	EXPECT_EQ(join__poll(f.join, b + 10), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 0); /* both wait */
	/* a signalled sample both walked: the agent's trace teaches the Method* */
	teach_method(&f, &fa, 7, b + 100);
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 7);
	EXPECT_EQ(st.java_complete, 7);
	EXPECT_EQ(join__flush(f.join), 0);
	fo = folded(&f);
	EXPECT_STREQ(fo, "testproc;pkg/Work.run_[0];join_leaf 7\n");
	free(fo);
	teardown(&f);
	fa_close(&fa);
}

/* a sample of thread tid at t (kind) that BPF walked whole and did not signal */
static void walked_sample(struct fixture *f, __u32 tid, __u64 t, __u32 kind)
{
	struct jp_sample s = early_sample(tid, t);

	s.kind = kind;
	s.flags = JP_SF_JWALK;
	EXPECT_EQ(join__sample(f->join, &s, NULL, early_stack), 0);
}

/*
 * Walked CPU samples whose raw frames came before take their stack from the memo: the
 * same stack as the first, named once; off-CPU ones are named each time. A new model
 * (a store's budget passed) and a new agent make every entry stale.
 */
TEST(walked_cpu_samples_repeat_their_stack_from_the_memo)
{
	struct join_opts o = {0};
	struct fake_agent fa, fb;
	struct model *fresh;
	struct fixture f;
	struct join_stats st;
	__u64 b = 100 * SEC;
	char *fo;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	teach_method(&f, &fa, 7, b);
	for (int i = 0; i < 5; i++)
		walked_sample(&f, 8 + (__u32)(i & 1), b + SEC + (__u64)i, JP_EV_CPU);
	walked_sample(&f, 8, b + 2 * SEC, JP_EV_OFFCPU);
	join__stats(f.join, &st);
	EXPECT_EQ(st.memo_tries, 5);
	EXPECT_EQ(st.memo_hits, 4);
	EXPECT_EQ(st.java_complete, 7);
	EXPECT_EQ(st.jvm_samples, 7);
	fo = folded(&f);
	EXPECT_STREQ(fo, "testproc;pkg/Work.run_[0];join_leaf 6\n");
	free(fo);

	/* a new model: the old one's stack ids mean nothing there */
	fresh = model__new();
	ASSERT_TRUE(fresh != NULL);
	join__model_reset(f.join, fresh);
	model__free(f.model);
	f.model = fresh;
	walked_sample(&f, 8, b + 3 * SEC, JP_EV_CPU);
	walked_sample(&f, 8, b + 3 * SEC, JP_EV_CPU);
	join__stats(f.join, &st);
	EXPECT_EQ(st.memo_tries, 7);
	EXPECT_EQ(st.memo_hits, 5);
	fo = folded(&f);
	EXPECT_STREQ(fo, "testproc;pkg/Work.run_[0];join_leaf 2\n");
	free(fo);

	/* another agent for the JVM (its frames looked up anew): named again, then remembered */
	ASSERT_TRUE(join__add_jvm(f.join, (__u32)getpid(), (__u32)getpid(), "java", fa_open(&fb)) ==
		    0);
	teach_method(&f, &fb, 7, b + 4 * SEC);
	for (int i = 0; i < 2; i++)
		walked_sample(&f, 8, b + 5 * SEC + (__u64)i, JP_EV_CPU);
	join__stats(f.join, &st);
	EXPECT_EQ(st.memo_tries, 9);
	EXPECT_EQ(st.memo_hits, 6);
	teardown(&f);
	fa_close(&fa);
	fa_close(&fb);
}

/*
 * Off-CPU samples BPF walked at the syscall's return and signalled all the same for the
 * park's blocker (-e lock, offcpu.bpf.c emit_held): the agent's trace when it comes with a
 * stack; BPF's frames when it answers "not a Java thread" or never answers
 */
TEST(offcpu_walked_and_signalled_keeps_bpf_frames_without_a_trace)
{
	struct join_opts o = {0};
	struct fake_agent fa;
	struct fixture f;
	struct join_stats st;
	struct jp_sample s;
	__u64 b = 100 * SEC;
	char *fo;

	ASSERT_TRUE(setup_jvm(&f, &o, &fa) == 0);
	f.view.values = 1u << JP_VAL_OFFCPU_NS;
	for (int i = 0; i < 3; i++) {
		s = early_sample(7, b + (__u64)i * SEC);
		s.kind = JP_EV_OFFCPU;
		s.weight = 10ull << i; /* 10, 20, 40 */
		s.flags = JP_SF_JWALK | JP_SF_SIGNALED;
		EXPECT_EQ(join__sample(f.join, &s, NULL, early_stack), 0);
		/* a whole trace (BPF's Method* learned from it), "not a Java thread", none */
		if (i < 2) {
			fa_trace(&fa, 7, b + (__u64)i * SEC + 10, i ? JP_ERR_NOT_JAVA_THREAD : 1);
			fa_flush(&fa);
		}
		EXPECT_EQ(join__poll(f.join, b + (__u64)i * SEC + 20), 0);
	}
	EXPECT_EQ(join__flush(f.join), 0);
	join__stats(f.join, &st);
	EXPECT_EQ(st.jvm_samples, 3);
	EXPECT_EQ(st.java_complete, 3);
	fo = folded(&f);
	EXPECT_TRUE(fo && strstr(fo, "pkg/Work.run") != NULL && !strstr(fo, "[no Java stack"));
	if (fo && (!strstr(fo, "pkg/Work.run") || strstr(fo, "[no Java stack")))
		fprintf(stderr, "%s", fo);
	free(fo);
	teardown(&f);
	fa_close(&fa);
}

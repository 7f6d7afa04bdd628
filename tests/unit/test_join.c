// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_join.c: the join without BPF or a JVM: native samples of this very process,
 * kernel frames from a fixture kallsyms, roots, event leaves, and JVM samples whose
 * Java stack is missing (they keep their natives under a marker and are counted).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "harness.h"
#include "join.h"
#include "profile.h"
#include "model/model.h"
#include "model/view.h"
#include "out/out.h"
#include "sym/syms.h"

/* symbols of this binary the user stacks point into */
__attribute__((noinline)) void join_leaf(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void join_caller(void)
{
	join_leaf();
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
	EXPECT_EQ(st.processes, 1);
	free(out);
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

TEST(syscall_leaf_offcpu_marker_and_ns_weights)
{
	struct join_opts o = { .mark_offcpu = true, .cpu_period_ns = 10101010 };
	struct fixture f;
	struct jp_sample sc = sample(JP_EV_SYSCALL, 0, 1), off = sample(JP_EV_OFFCPU, 3, 1),
			 cpu = sample(JP_EV_CPU, 0, 1);
	/* an off-CPU stack taken inside the tracepoint program: its glue is dropped */
	const __u64 okstack[] = { 0xffffffff81003010ull, 0xffffffff81002010ull,
				  0xffffffff81001010ull };
	char *out;

	ASSERT_TRUE(setup(&f, &o) == 0);
	f.view.values = 1u << JP_VAL_CPU_NS | 1u << JP_VAL_OFFCPU_NS | 1u << JP_VAL_SYSCALL_NS;
	sc.syscall_nr = 1; /* write */
	sc.weight = 5000000;
	off.weight = 7000000;
	EXPECT_EQ(join__sample(f.join, &sc, NULL, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &off, okstack, ustack), 0);
	EXPECT_EQ(join__sample(f.join, &cpu, NULL, ustack), 0);
	out = folded(&f);
	EXPECT_STREQ(out, "testproc;join_leaf 10101010\n"
			  "testproc;join_leaf;do_syscall_64_[k];schedule_[k];[off-cpu] 7000000\n"
			  "testproc;join_leaf;write 5000000\n");
	free(out);
	teardown(&f);
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
	join__report(f.join, m);
	fclose(m);
	EXPECT_TRUE(strstr(rep, "1 samples, 1 in Java threads of which 0 with complete") != NULL);
	EXPECT_TRUE(strstr(rep, "missing: 1 no agent") != NULL);
	EXPECT_TRUE(strstr(rep, ": a note\n") != NULL);
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

__attribute__((destructor)) static void cleanup(void)
{
	if (kallsyms_path[0])
		unlink(kallsyms_path);
}

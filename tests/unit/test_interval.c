// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_interval.c: how the daemon cuts a recording into intervals (record/interval.c), on
 * the join and the model without BPF: a segment holds only its interval's samples (the
 * rows are copied out, then dropped, the tables kept), and a model replaced when its
 * tables pass their budget is used correctly at once (join__model_reset drops every id
 * the join cached: frames, threads' last stacks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "harness.h"
#include "join.h"
#include "model/filter.h"
#include "model/model.h"
#include "model/view.h"
#include "out/out.h"
#include "profile.h"
#include "sym/syms.h"

__attribute__((noinline)) void iv_leaf_a(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void iv_leaf_b(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void iv_caller(void)
{
	iv_leaf_a();
	iv_leaf_b();
}

static char kallsyms_path[4096];

struct fixture {
	struct syms *syms;
	struct model *model;
	struct join *join;
};

static int setup(struct fixture *f)
{
	struct join_opts o = {0};
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
	      "ffffffff81004000 T ksys_write\n"
	      "ffffffff81005000 T _etext\n",
	      k);
	fclose(k);
	f->syms = syms__new(kallsyms_path);
	f->model = model__new();
	f->join = f->syms && f->model ? join__new(f->syms, f->model, &o) : NULL;
	return f->join ? 0 : -1;
}

static void teardown(struct fixture *f)
{
	join__free(f->join);
	syms__free(f->syms);
	model__free(f->model);
}

/* a CPU sample of this process: kernel frames, then leaf (a or b) called by iv_caller */
static int add_sample(struct fixture *f, bool a, __u64 t)
{
	static const __u64 kstack[] = {0xffffffff81004010ull, 0xffffffff81001020ull};
	__u64 ustack[] = {a ? (__u64)(unsigned long)iv_leaf_a : (__u64)(unsigned long)iv_leaf_b,
			  (__u64)(unsigned long)iv_caller + 1};
	struct jp_sample s = {
		.time_ns = t,
		.weight = 1000,
		.pid = (__u32)getpid(),
		.tid = (__u32)getpid(),
		.kind = JP_EV_CPU,
		.kstack_len = 2,
		.ustack_len = 2,
		.syscall_nr = -1,
	};

	memcpy(s.comm, "worker", 7);
	memcpy(s.pcomm, "testproc", 9);
	return join__sample(f->join, &s, kstack, ustack);
}

/* a model as folded text (CPU samples) */
static char *folded(const struct model *m)
{
	struct profile *p = profile__new("test", "samples");
	struct model_view v = {.values = 1u << JP_VAL_CPU_SAMPLES};
	char *out = NULL;
	int err;

	if (p && !model__to_profile(m, &v, p))
		out = capture(out_folded_write, p, &err);
	profile__free(p);
	return out;
}

/* what record/interval.c writes as a segment: the rows, with only the tables they use */
static struct model *cut(struct model *live)
{
	struct model_filter all = {0};
	struct model *m = model__new();

	if (m && model__filter(live, &all, m)) {
		model__free(m);
		return NULL;
	}
	model__reset(live);
	return m;
}

TEST(a_segment_holds_only_its_intervals_samples)
{
	struct model_counts c1, c2;
	struct model *seg1, *seg2;
	struct fixture f;
	char *out;

	ASSERT_TRUE(setup(&f) == 0);
	EXPECT_EQ(add_sample(&f, true, 1000), 0);
	EXPECT_EQ(add_sample(&f, true, 2000), 0);
	seg1 = cut(f.model);
	ASSERT_TRUE(seg1 != NULL);
	EXPECT_EQ(model__rows(f.model), 0);
	EXPECT_EQ(model__total(f.model, JP_VAL_CPU_SAMPLES), 0);
	/* the next interval: b three times, a not at all */
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(add_sample(&f, false, 3000 + i), 0);
	seg2 = cut(f.model);
	ASSERT_TRUE(seg2 != NULL);
	out = folded(seg1);
	EXPECT_STREQ(out, "testproc;iv_caller;iv_leaf_a;do_syscall_64_[k];ksys_write_[k] 2\n");
	free(out);
	out = folded(seg2);
	EXPECT_STREQ(out, "testproc;iv_caller;iv_leaf_b;do_syscall_64_[k];ksys_write_[k] 3\n");
	free(out);
	/* a segment's tables are its own: b's segment names no frame of a alone */
	model__counts(seg1, &c1);
	model__counts(seg2, &c2);
	EXPECT_EQ(c1.locations, 4);
	EXPECT_EQ(c2.locations, 4);
	EXPECT_EQ(c2.stacks, 1);
	model__free(seg1);
	model__free(seg2);
	teardown(&f);
}

TEST(a_replaced_model_gets_right_frames_at_once)
{
	struct fixture f;
	struct model *fresh;
	char *out;

	ASSERT_TRUE(setup(&f) == 0);
	/* frames cached, the thread's last stack set */
	EXPECT_EQ(add_sample(&f, true, 1000), 0);
	EXPECT_EQ(add_sample(&f, false, 2000), 0);
	fresh = model__new();
	ASSERT_TRUE(fresh != NULL);
	join__model_reset(f.join, fresh);
	model__free(f.model);
	f.model = fresh;
	/* ids of the old model would name nothing here, or the wrong frames */
	EXPECT_EQ(add_sample(&f, false, 3000), 0);
	EXPECT_EQ(add_sample(&f, true, 4000), 0);
	EXPECT_EQ(add_sample(&f, true, 5000), 0);
	out = folded(f.model);
	EXPECT_STREQ(out, "testproc;iv_caller;iv_leaf_a;do_syscall_64_[k];ksys_write_[k] 2\n"
			  "testproc;iv_caller;iv_leaf_b;do_syscall_64_[k];ksys_write_[k] 1\n");
	free(out);
	/* the end of a run settles each thread's carried CPU time on its (new) last stack */
	EXPECT_EQ(join__flush(f.join), 0);
	teardown(&f);
}

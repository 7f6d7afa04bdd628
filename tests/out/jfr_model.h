/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* jfr_model.h: the known profile models the JFR writer's unit test and e2e driver write. */
#ifndef JPROF_TESTS_JFR_MODEL_H
#define JPROF_TESTS_JFR_MODEL_H

#include <errno.h>
#include <stdio.h>

#include "model/model.h"

/* what jfr_known_model() holds, for the assertions */
#define KNOWN_CPU_SAMPLES 100
#define KNOWN_TOP_METHOD  "com.acme.Hot.spin" /* 60 of the samples, leaf of a JIT frame */
#define KNOWN_TOP_SAMPLES 60
#define KNOWN_OFFCPU_NS	  2500000000ull
#define KNOWN_SYSCALLS	  7
#define KNOWN_SYSCALL_NS  3000000ull
#define KNOWN_THREADS	  3

static inline jp_id known_loc(struct model *m, const char *name, const char *file, bool java,
			      enum jp_frame_kind kind, __s32 line, __u64 addr)
{
	struct jp_location l = {
		.func = model__func(m, name, file, java), .addr = addr, .line = line, .kind = kind};

	return model__location(m, &l);
}

/*
 * Two Java threads and one native process. CPU: Hot.spin (JIT) x60, Math.sqrt inlined into
 * Hot.compute x25, a native write into the kernel x15. Off-CPU: a worker parked in the kernel
 * under Object.wait. Syscalls: the native writes. 0 or -ENOMEM.
 */
static inline int jfr_known_model(struct model *m)
{
	struct jp_labels main_l = {
		.pid = 100, .tid = 101, .comm = "java", .thread = "main", .container = ""};
	struct jp_labels worker_l = {.pid = 100,
				     .tid = 102,
				     .comm = "java",
				     .thread = "worker-1",
				     .container = "c0ffee"};
	struct jp_labels native_l = {.pid = 200,
				     .tid = 200,
				     .comm = "hotab",
				     .thread = "",
				     .container = "",
				     .cgroup = 4242};
	jp_id main_ = known_loc(m, "com/acme/Hot.main", "Hot.java", true, JP_FK_INTERP, 5, 0);
	jp_id s1[] = {known_loc(m, "com/acme/Hot.spin", "Hot.java", true, JP_FK_JIT, 12, 0), main_};
	jp_id s2[] = {known_loc(m, "java/lang/Math.sqrt", "Math.java", true, JP_FK_INLINED, 0, 0),
		      known_loc(m, "com/acme/Hot.compute(I)D", "Hot.java", true, JP_FK_JIT, 20, 0),
		      main_};
	jp_id s3[] = {known_loc(m, "ksys_write", "[kernel]", false, JP_FK_KERNEL, 0,
				0xffffffff81000010ull),
		      known_loc(m, "__libc_write", "/usr/lib/x86_64-linux-gnu/libc.so.6", false,
				JP_FK_NATIVE, 0, 0x7f0000001234ull),
		      known_loc(m, "main", "/opt/app/hotab", false, JP_FK_NATIVE, 0, 0x401000)};
	/* a marker frame leads, as record puts it on off-CPU stacks: no frame in JFR */
	jp_id s4[] = {
		known_loc(m, "[off-cpu]", "", false, JP_FK_ROOT, 0, 0),
		known_loc(m, "schedule", "[kernel]", false, JP_FK_KERNEL, 0, 0xffffffff81000100ull),
		known_loc(m, "JVM_MonitorWait", "/usr/lib/jvm/lib/server/libjvm.so", false,
			  JP_FK_JVM, 0, 0x7f0000100000ull),
		known_loc(m, "java/lang/Object.wait", "Object.java", true, JP_FK_INTERP, 0, 0),
		main_};
	jp_id st1 = model__stack(m, s1, 2), st2 = model__stack(m, s2, 3);
	jp_id st3 = model__stack(m, s3, 3), st4 = model__stack(m, s4, 5);
	jp_id lm = model__labels(m, &main_l), lw = model__labels(m, &worker_l);
	jp_id ln = model__labels(m, &native_l);
	int err = 0;

	if (!st1 || !st2 || !st3 || !st4 || !lm || !lw || !ln)
		return -ENOMEM;
	err = err ?: model__add(m, st1, lm, JP_VAL_CPU_SAMPLES, 40);
	err = err ?: model__add(m, st1, lw, JP_VAL_CPU_SAMPLES, 20);
	err = err ?: model__add(m, st2, lw, JP_VAL_CPU_SAMPLES, 25);
	err = err ?: model__add(m, st3, ln, JP_VAL_CPU_SAMPLES, 15);
	err = err ?: model__add(m, st4, lw, JP_VAL_OFFCPU_NS, KNOWN_OFFCPU_NS);
	err = err ?: model__add(m, st3, ln, JP_VAL_SYSCALL_CALLS, KNOWN_SYSCALLS);
	err = err ?: model__add(m, st3, ln, JP_VAL_SYSCALL_NS, KNOWN_SYSCALL_NS);
	return err;
}

/*
 * n_samples CPU samples over n_stacks distinct stacks of depth 8..23 from 2,000 functions
 * (half Java, half native) on 64 threads: the writers' benchmark shape. 0 or -ENOMEM.
 */
static inline int jfr_bench_model(struct model *m, __u64 n_samples, __u32 n_stacks)
{
	jp_id locs[24], labels[64];
	__u64 rnd = 0x9e3779b97f4a7c15ull, left = n_samples;
	char name[64], comm[16];

	for (int t = 0; t < 64; t++) {
		struct jp_labels l = {.pid = 1000 + (__u32)t / 8,
				      .tid = 2000 + (__u32)t,
				      .comm = comm,
				      .thread = name,
				      .container = ""};

		snprintf(comm, sizeof(comm), "app%d", t / 8);
		snprintf(name, sizeof(name), "worker-%d", t);
		labels[t] = model__labels(m, &l);
		if (!labels[t])
			return -ENOMEM;
	}
	for (__u32 s = 0; s < n_stacks; s++) {
		__u32 depth = 8 + s % 16;
		__u64 n = left / (n_stacks - s);
		jp_id st;

		for (__u32 d = 0; d < depth; d++) {
			__u32 fn;

			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			fn = (__u32)(rnd >> 33) % 2000;
			/* a distinct leaf per stack keeps the stacks distinct */
			if (d == 0)
				fn = s % 2000;
			if (fn & 1)
				snprintf(name, sizeof(name), "com/bench/C%u.m%u", fn % 97, fn);
			else
				snprintf(name, sizeof(name), "native_fn_%u", fn);
			locs[d] = known_loc(m, name, fn & 1 ? "C.java" : "/usr/lib/libbench.so",
					    fn & 1, fn & 1 ? JP_FK_JIT : JP_FK_NATIVE,
					    fn & 1 ? (__s32)(d + 1) : 0,
					    fn & 1 ? 0 : 0x7f0000000000ull + fn * 64 + s % 7);
			if (!locs[d])
				return -ENOMEM;
		}
		st = model__stack(m, locs, depth);
		if (!st || model__add(m, st, labels[s % 64], JP_VAL_CPU_SAMPLES, n))
			return -ENOMEM;
		left -= n;
	}
	return 0;
}

#endif /* JPROF_TESTS_JFR_MODEL_H */

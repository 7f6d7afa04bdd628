// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jfr_driver.c: writes a known profile model as a .jfr file for tests/e2e/jfr.bats, whose
 * JDK tools must read it; `bench` times the writer on a large synthetic model.
 *   jfr_driver known FILE.jfr           prints the model's expected numbers as key=value
 *   jfr_driver bench FILE.jfr SAMPLES STACKS
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "out/jfr.h"
#include "jfr_model.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_file(const struct model *m, const struct jfr_opts *o, const char *path)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	err = out_jfr_write(m, o, f);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int main(int argc, char **argv)
{
	struct out_meta meta = {.title = "jprof: test model",
				.host = "testhost",
				.command = "jfr_driver",
				.events = "cpu,offcpu,syscalls",
				.freq_hz = 99,
				.samples = KNOWN_CPU_SAMPLES,
				.lost = 0};
	struct jfr_opts o = {.start_unix_ns = (__u64)time(NULL) * 1000000000ull,
			     .duration_ns = 5000000000ull,
			     .period_ns = 10101010,
			     .meta = &meta};
	struct model *m = model__new();
	struct rusage ru;
	int err;

	if (!m || argc < 3) {
		fprintf(stderr, "usage: %s known FILE.jfr | bench FILE.jfr SAMPLES STACKS\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "known")) {
		err = jfr_known_model(m);
		if (!err)
			err = write_file(m, &o, argv[2]);
		if (!err)
			printf("cpu_samples=%d\ntop_method=%s\ntop_samples=%d\noffcpu_ns=%llu\n"
			       "syscalls=%d\nsyscall_ns=%llu\nthreads=%d\n",
			       KNOWN_CPU_SAMPLES, KNOWN_TOP_METHOD, KNOWN_TOP_SAMPLES,
			       KNOWN_OFFCPU_NS, KNOWN_SYSCALLS, KNOWN_SYSCALL_NS, KNOWN_THREADS);
	} else if (!strcmp(argv[1], "bench") && argc == 5) {
		__u64 samples = strtoull(argv[3], NULL, 10);
		__u32 stacks = (__u32)strtoul(argv[4], NULL, 10);
		struct model_counts c;
		double t0, t1, t2;
		long rss_model;

		t0 = now_s();
		err = stacks ? jfr_bench_model(m, samples, stacks) : -EINVAL;
		t1 = now_s();
		getrusage(RUSAGE_SELF, &ru);
		rss_model = ru.ru_maxrss;
		o.duration_ns = 60000000000ull;
		meta.samples = samples;
		if (!err)
			err = write_file(m, &o, argv[2]);
		t2 = now_s();
		model__counts(m, &c);
		getrusage(RUSAGE_SELF, &ru);
		if (!err) {
			FILE *f = fopen(argv[2], "r");
			long size = -1;

			if (f && !fseek(f, 0, SEEK_END))
				size = ftell(f);
			if (f)
				fclose(f);
			printf("jfr bench: %llu samples, %zu stacks, %zu functions: model %.3f s, "
			       "write %.3f s, %.1f MB (%.1f bytes/sample), peak RSS %ld MB (%ld MB "
			       "more while "
			       "writing)\n",
			       (unsigned long long)samples, c.stacks, c.funcs, t1 - t0, t2 - t1,
			       (double)size / 1e6, (double)size / (double)(samples ? samples : 1),
			       ru.ru_maxrss / 1024, (ru.ru_maxrss - rss_model) / 1024);
		}
	} else {
		err = -EINVAL;
	}
	model__free(m);
	if (err) {
		fprintf(stderr, "jfr_driver: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}

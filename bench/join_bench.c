// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * join_bench.c: jprof's user-space cost per sample in the join, without BPF or a JVM.
 * THREADS threads are sampled round after round; their Java traces come from an agent
 * ring written here LAG rounds late (jprof behind on a saturated host), so THREADS*LAG
 * samples wait at any time. Prints ns per sample (sample + its trace, paired and added
 * to the profile). bench/suite.py builds it against this tree (-DJP_BENCH_MODEL) and the
 * last one before the model redesign.
 *   join_bench [THREADS] [ROUNDS] [LAG]
 * With "agg" first (--aggregate: counts BPF made, this tree only): THREADS threads of a
 * native process (this one, DEPTH frames) give COUNT samples of one stack a round, joined
 * one by one into one model and as one count (JP_SF_COUNTED) into another, interleaved;
 * prints ns per sample of each.
 *   join_bench agg [THREADS] [ROUNDS] [COUNT]
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* the agent's ABI names its frame like the profile's: renamed here */
#define jp_frame jp_ring_frame
#include "ring.h"
#undef jp_frame

#include "join.h"
/* built against this tree (the model) and against the tree before the model redesign */
#ifdef JP_BENCH_MODEL
#include "model/model.h"
#define SINK		     struct model
#define sink_new()	     model__new()
#define sink_free(m)	     model__free(m)
#else
#include "profile.h"
#define SINK		     struct profile
#define sink_new()	     profile__new("bench", "samples")
#define sink_free(p)	     profile__free(p)
#endif
#include "jvm/agent_ring.h"
#include "sym/syms.h"

#define DATA	 JP_RING_DATA_MAX
#define METHOD	 0x1000ull
#define DEPTH	 16

static unsigned char *mem;
static char ring_path[96], dict_path[96], dir[64];

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static void ring_flush(void)
{
	size_t t = offsetof(struct jp_ring_hdr, tail), end = JP_RING_HDR_SIZE + DATA;
	int fd = open(ring_path, O_WRONLY | O_CREAT, 0600);

	(void)!pwrite(fd, mem, t, 0);
	(void)!pwrite(fd, mem + t + 8, end - t - 8, (off_t)(t + 8));
	close(fd);
}

static struct jvm_agent *agent_open(void)
{
	struct jp_dict_hdr dh = { JP_DICT_MAGIC, JP_RING_VERSION, sizeof(dh), 42, 0 };
	struct jp_dict_rec rec = { 0, JP_DICT_CLASS, 0 };
	unsigned char d[256];
	size_t n = 0;
	struct jp_ring_hdr *h;
	int fd;

#define PUT(p, len) (memcpy(d + n, (p), (len)), n += (len))
#define PUTV(v)                                                                                    \
	do {                                                                                       \
		__typeof__(v) x_ = (v);                                                            \
		PUT(&x_, sizeof(x_));                                                              \
	} while (0)
	snprintf(dir, sizeof(dir), "/tmp/jprof-bench-XXXXXX");
	if (!mkdtemp(dir))
		return NULL;
	snprintf(ring_path, sizeof(ring_path), "%s/r.ring", dir);
	snprintf(dict_path, sizeof(dict_path), "%s/r.dict", dir);
	PUT(&dh, sizeof(dh));
	PUT(&rec, sizeof(rec));
	PUTV((__u16)10);
	PUTV((__u16)9);
	PUTV((__u32)1);
	PUT("Lpkg/Work;", 10);
	PUT("Work.java", 9);
	PUTV((__u64)METHOD);
	PUTV((__u16)3);
	PUTV((__u16)3);
	PUTV((__u32)0);
	PUT("run", 3);
	PUT("()V", 3);
	rec.len = (__u32)(n - sizeof(dh));
	memcpy(d + sizeof(dh), &rec, sizeof(rec));
#undef PUT
#undef PUTV
	fd = open(dict_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	(void)!write(fd, d, n);
	close(fd);
	mem = calloc(1, JP_RING_HDR_SIZE + DATA);
	if (!mem)
		return NULL;
	h = (struct jp_ring_hdr *)mem;
	h->magic = JP_RING_MAGIC;
	h->version = JP_RING_VERSION;
	h->hdr_size = JP_RING_HDR_SIZE;
	h->data_size = DATA;
	h->pid = 42;
	h->signo = 37;
	h->max_depth = DEPTH;
	fd = open(ring_path, O_WRONLY | O_CREAT, 0600);
	(void)!pwrite(fd, mem, JP_RING_HDR_SIZE + DATA, 0);
	close(fd);
	return jvm_agent__open_files(ring_path, dict_path, (unsigned int)-1);
}

static void put_trace(__u32 tid, __u64 time_ns)
{
	struct jp_ring_hdr *h = (struct jp_ring_hdr *)mem;
	__u32 len = sizeof(struct jp_trace_rec) + DEPTH * sizeof(struct jp_ring_frame);
	__u64 pos = h->head, room = DATA - pos % DATA;
	struct jp_trace_rec *r;

	if (room < len) {
		struct jp_rec_hdr *p = (struct jp_rec_hdr *)(mem + JP_RING_HDR_SIZE + pos % DATA);

		p->len = (__u32)room;
		p->type = JP_REC_PAD;
		p->seq = pos;
		pos += room;
	}
	r = (struct jp_trace_rec *)(mem + JP_RING_HDR_SIZE + pos % DATA);
	memset(r, 0, sizeof(*r));
	r->h.len = len;
	r->h.type = JP_REC_TRACE;
	r->h.seq = pos;
	r->time_ns = time_ns;
	r->tid = tid;
	r->num_frames = DEPTH;
	for (int i = 0; i < DEPTH; i++) {
		struct jp_ring_frame fr = { .bci = i, .method_id = METHOD };

		memcpy((unsigned char *)(r + 1) + i * sizeof(fr), &fr, sizeof(fr));
	}
	h->head = pos + len;
}

#ifdef JP_SF_COUNTED
/* one thread's stack: DEPTH return addresses in this binary (distinct locations) */
static void agg_stack(__u64 *u, int thread)
{
	for (int i = 0; i < DEPTH; i++)
		u[i] = (__u64)(unsigned long)agg_stack + 16 * (__u64)(i + thread % 4);
}

static int agg_main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 64;
	int rounds = argc > 3 ? atoi(argv[3]) : 200;
	int count = argc > 4 ? atoi(argv[4]) : 16;
	struct join_opts o = {0};
	struct syms *syms = syms__new("/dev/null");
	SINK *m1 = sink_new(), *mc = sink_new();
	struct join *one = syms && m1 ? join__new(syms, m1, &o) : NULL;
	struct join *cnt = syms && mc ? join__new(syms, mc, &o) : NULL;
	__u64 base = 1000ull * 1000000000ull, t0, el1 = 0, elc = 0, n = 0, u[DEPTH];
	struct join_stats st1, stc;

	if (!one || !cnt || count < 1) {
		fprintf(stderr, "join_bench: setup failed\n");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < threads; i++) {
			struct jp_sample s = {
				.time_ns = base + (__u64)r * 100000000 + i,
				.weight = 1000000,
				.pid = (__u32)getpid(),
				.tid = (__u32)getpid() + 1 + i,
				.kind = JP_EV_CPU,
				.syscall_nr = -1,
				.ustack_len = DEPTH,
			};

			memcpy(s.comm, "worker", 7);
			memcpy(s.pcomm, "native", 7);
			agg_stack(u, i);
			t0 = now_ns();
			for (int k = 0; k < count; k++)
				join__sample(one, &s, NULL, u);
			el1 += now_ns() - t0;
			s.flags = JP_SF_COUNTED;
			s.count = (__u64)count;
			s.weight *= (__u64)count;
			t0 = now_ns();
			join__sample(cnt, &s, NULL, u);
			elc += now_ns() - t0;
			n += (__u64)count;
		}
	}
	join__flush(one);
	join__flush(cnt);
	join__stats(one, &st1);
	join__stats(cnt, &stc);
	printf("join_bench agg: %d threads, %d rounds, %d samples a count: one by one %.0f ns per "
	       "sample, as counts %.0f ns per sample (samples %llu / %llu)\n",
	       threads, rounds, count, (double)el1 / (double)n, (double)elc / (double)n,
	       (unsigned long long)st1.samples, (unsigned long long)stc.samples);
	join__free(one);
	join__free(cnt);
	syms__free(syms);
	sink_free(m1);
	sink_free(mc);
	return st1.samples == stc.samples ? 0 : 1;
}
#endif

/* samples of a JVM's threads meeting their traces */
static int traces_main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 200;
	int rounds = argc > 2 ? atoi(argv[2]) : 200;
	int lag = argc > 3 ? atoi(argv[3]) : 5;
	struct join_opts o = { 0 };
	__u64 base = 1000ull * 1000000000ull, t0, el = 0, n = 0;
	struct syms *syms = syms__new("/dev/null");
	SINK *prof = sink_new();
	struct join *j = syms && prof ? join__new(syms, prof, &o) : NULL;
	struct jvm_agent *a = agent_open();
	struct join_stats st;

	if (!j || !a || join__add_jvm(j, 1, 1, "java", a)) {
		fprintf(stderr, "join_bench: setup failed\n");
		return 1;
	}
	for (int r = 0; r < rounds + lag; r++) {
		__u64 t = base + (__u64)r * 1000000; /* 1 ms per round */

		/* the traces of round r - lag: written (not timed), then read and paired */
		if (r >= lag) {
			for (int i = threads; i-- > 0;)
				put_trace(100 + i, base + (__u64)(r - lag) * 1000000 + i + 10);
			ring_flush();
		}
		t0 = now_ns();
		for (int i = 0; i < threads && r < rounds; i++) {
			struct jp_sample s = {
				.time_ns = t + i, .weight = 1, .pid = 1, .tid = 100 + i,
				.kind = JP_EV_CPU, .syscall_nr = -1, .flags = JP_SF_SIGNALED,
			};

			memcpy(s.comm, "worker", 7);
			memcpy(s.pcomm, "java", 5);
			join__sample(j, &s, NULL, NULL);
			n++;
		}
		/* poll with a clock that never expires what still waits */
		join__poll(j, t + 1000000);
		el += now_ns() - t0;
	}
	join__flush(j);
	join__stats(j, &st);
	printf("join_bench: %d threads, %d rounds, traces %d rounds late (%d samples waiting): "
	       "%.0f ns per sample, %llu of %llu complete\n",
	       threads, rounds, lag, threads * lag, (double)el / (double)n,
	       (unsigned long long)st.java_complete, (unsigned long long)n);
	join__free(j);
	syms__free(syms);
	sink_free(prof);
	unlink(ring_path);
	unlink(dict_path);
	rmdir(dir);
	free(mem);
	return 0;
}

int main(int argc, char **argv)
{
#ifdef JP_SF_COUNTED
	if (argc > 1 && !strcmp(argv[1], "agg"))
		return agg_main(argc, argv);
#endif
	return traces_main(argc, argv);
}

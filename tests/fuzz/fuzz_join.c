// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_join.c: arbitrary kernel samples and agent trace streams through the real join:
 * join__sample, traces from a real agent ring file (jvm_agent__open_files, join__add_jvm),
 * join__poll and join__flush, with budgets small enough to be reached. Every sample fed
 * must be in the profile at the end (join stats), none lost, nothing leaked.
 * Input: u8 budgets[4], u8 per_round (high bits: -e lock, alloc, live), u8 flags (high
 * nibble: ring depth; low 0xf: flush with samples still waiting, which naps), then ops until
 * the bytes run out (an op byte below 0xf0 is taken % 4, from 0xf0 it is 4 + % 2):
 *   0: sample  u8 who, u8 tid, u8 kind, u8 flags, u8 klen, u8 ulen, s8 sig_err, u16 dt,
 *              then klen + ulen u64 frames and 2 x jlen of the BPF Java walk (as far as the
 *              bytes go); flags: 3 JP_SF_SIGNALED/KERNEL_CTX, 4 JP_SF_JWALK, 8 walked
 *              (16: whole, else given up), >> 5 jlen
 *   1: trace   u8 jvm, u8 tid, s8 num_frames, u16 dt, then frames {s32 bci, u64 method}
 *   2: poll    u16 dt (ms)
 *   3: garbage u8 jvm, u8 len, len bytes written raw at the ring's head (committed or not)
 *   4: event   u8 jvm, u8 tid, u8 kind, u16 num_frames, u8 seed: frames of the methods op 5
 *              announces at bcis from seed (a few bytes make a 4,000-frame stack)
 *   5: method  u8 jvm, u8 which (of 4), u16 n_lines, u8 seed: a class record with one method
 *              whose line table (in no order, starts repeated) comes from seed
 * Models and time budgets are small (JP_FUZZ_BUDGETS): samples the model refuses are counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring.h"
#include "../common/agentfile.h"

#include "join.h"
#include "jvm/agent_ring.h"
#include "model/model.h"
#include "opts.h"
#include "sym/syms.h"

#define DATA_SIZE JP_RING_DATA_MIN
#define M_FUZZ	  0x5f0000ull /* the methods op 5 announces: M_FUZZ + 8 * (0..3) */
#define NJVMS	  3
/* beyond PID_MAX_LIMIT: no such process, so symbols and tid maps fail fast, never read a real one */
#define PID_BASE 4300000u

struct ring {
	char path[96], dict[96];
	unsigned char *mem; /* header + data, as the agent would have them */
	int fd;
};

static char dir[64], kallsyms[96];
static struct ring rings[NJVMS];

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes; i++) {
		v |= (uint64_t)(in->n ? *in->p : 0) << (8 * i);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

static void cleanup(void)
{
	for (int i = 0; i < NJVMS; i++) {
		unlink(rings[i].path);
		unlink(rings[i].dict);
	}
	unlink(kallsyms);
	rmdir(dir);
}

static void setup_once(void)
{
	FILE *k;

	snprintf(dir, sizeof(dir), "/tmp/fuzz-join-%d", (int)getpid());
	if (mkdir(dir, 0700) && errno != EEXIST)
		abort();
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", dir);
	k = fopen(kallsyms, "w");
	if (!k)
		abort();
	fputs("ffffffff81000000 T _stext\nffffffff81003000 T bpf_trace_run4\n"
	      "ffffffff81004000 T __bpf_trace_sched_switch\nffffffff81005000 T schedule\n"
	      "ffffffff81006000 T _etext\n",
	      k);
	fclose(k);
	for (int i = 0; i < NJVMS; i++) {
		snprintf(rings[i].path, sizeof(rings[i].path), "%s/jprof-%d.ring", dir, i);
		snprintf(rings[i].dict, sizeof(rings[i].dict), "%s/jprof-%d.dict", dir, i);
		rings[i].mem = malloc(JP_RING_HDR_SIZE + DATA_SIZE);
		if (!rings[i].mem)
			abort();
	}
	atexit(cleanup);
}

/* op 5's line table: bcis from seed, in no order, starts repeated */
static void seed_line(void *ctx, __u32 i, __s32 *bci, __s32 *line)
{
	unsigned int seed = *(const unsigned int *)ctx;

	*bci = (__s32)((seed * 2654435761u * (i + 1)) % 512);
	*line = (__s32)i;
}

/* op 5: appends a class record "LF;" with method M_FUZZ + 8 * which of n lines from seed */
static void dict_method(struct ring *r, unsigned int which, __u32 n, unsigned int seed)
{
	int fd = open(r->dict, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd < 0 ||
	    agentfile_put_class1(fd, "LF;", M_FUZZ + 8 * (__u64)which, "m", n, seed_line, &seed))
		abort();
	close(fd);
}

static struct jvm_agent *ring_open(struct ring *r, unsigned int max_depth)
{
	struct jp_dict_hdr dh;
	int fd;

	memset(r->mem, 0, JP_RING_HDR_SIZE + DATA_SIZE);
	agentfile_ring_hdr((struct jp_ring_hdr *)r->mem, DATA_SIZE, 1, 37, max_depth);
	agentfile_dict_hdr(&dh, 1);
	r->fd = open(r->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fd = open(r->dict, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->fd < 0 || fd < 0)
		abort();
	if (write(fd, &dh, sizeof(dh)) != sizeof(dh) ||
	    pwrite(r->fd, r->mem, JP_RING_HDR_SIZE + DATA_SIZE, 0) != JP_RING_HDR_SIZE + DATA_SIZE)
		abort();
	close(fd);
	return jvm_agent__open_files(r->path, r->dict, (unsigned int)-1);
}

/* a record the way the agent commits one: bytes first, then head; no room, no record */
static void ring_put(struct ring *r, const void *rec, __u32 len)
{
	struct jp_ring_hdr *h = (struct jp_ring_hdr *)r->mem;
	__u64 pos = h->head, tail = 0, room = DATA_SIZE - pos % DATA_SIZE;

	if (pread(r->fd, &tail, sizeof(tail), offsetof(struct jp_ring_hdr, tail)) != sizeof(tail))
		abort();
	if (room < len) {
		struct jp_rec_hdr pad = {.seq = pos, .len = (__u32)room, .type = JP_REC_PAD};

		if (pos + room + len - tail > DATA_SIZE)
			return;
		if (pwrite(r->fd, &pad, sizeof(pad), JP_RING_HDR_SIZE + pos % DATA_SIZE) !=
		    sizeof(pad))
			abort();
		pos += room;
	}
	if (pos + len - tail > DATA_SIZE)
		return;
	if (pwrite(r->fd, rec, len, JP_RING_HDR_SIZE + pos % DATA_SIZE) != (ssize_t)len)
		abort();
	h->head = pos + len;
	if (pwrite(r->fd, &h->head, sizeof(h->head), offsetof(struct jp_ring_hdr, head)) !=
	    sizeof(h->head))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static __u64 frames[2 * 256 + 2 * 8];
	static unsigned char rec[sizeof(struct jp_event_rec) +
				 JP_DEPTH_MAX * sizeof(struct jp_frame)];
	struct in in = {data, size};
	struct join_opts o = {.mark_offcpu = true};
	struct join_stats st;
	struct syms *syms;
	struct model *model;
	struct join *j;
	__u64 now = 1000ull * 1000000000, fed = 0;
	unsigned int max_depth;
	uint8_t flags, per;
	int err = 0;

	if (!dir[0])
		setup_once();
	/* budgets from a few hundred bytes (a sample or two) to a few KiB */
	o.pend_budget_jvm = 64 + take(&in, 1) * 32;
	o.pend_budget = 64 + take(&in, 1) * 64;
	o.trace_budget_jvm = 64 + take(&in, 1) * 32;
	o.trace_budget = 64 + take(&in, 1) * 64;
	per = (uint8_t)take(&in, 1);
	o.traces_per_round = 1 + per % 16;
	o.agent_events = (per >> 4) & (JP_AGENT_EV_LOCK | JP_AGENT_EV_ALLOC | JP_AGENT_EV_LIVE);
	o.joined_events = o.agent_events;
	flags = (uint8_t)take(&in, 1);
	max_depth = 1 + (flags >> 4) * 16;
	syms = syms__new(kallsyms);
	model = model__new();
	j = syms && model ? join__new(syms, model, &o) : NULL;
	if (!j)
		abort();
	/* JVM 0: same pid namespace; JVM 1: its own (tids mapped through /proc); JVM 2: no agent */
	for (int i = 0; i < NJVMS; i++) {
		struct jvm_agent *a = i < 2 ? ring_open(&rings[i], max_depth) : NULL;

		if (i < 2 && !a)
			abort();
		if (join__add_jvm(j, PID_BASE + i, i == 1 ? 7 : PID_BASE + i, "java", a))
			abort();
	}
	while (in.n && !err) {
		uint8_t op = (uint8_t)take(&in, 1);

		switch (op < 0xf0 ? op % 4 : 4 + op % 2) {
		case 0: {
			struct jp_sample s = {0};
			uint8_t who = (uint8_t)take(&in, 1), f;

			s.pid = who % 5 == 4 ? 0 : PID_BASE + who % 5; /* 3: not a JVM, 4: pid 0 */
			s.tid = (__u32)take(&in, 1) % 8;
			s.kind = (__u32)take(&in, 1) % 4;
			f = (uint8_t)take(&in, 1);
			s.flags = (f & 3) | (f & 4 ? JP_SF_JWALK : 0);
			if (f & 8) {
				s.jstack_err = f & 16 ? JP_JW_ENTRY : JP_JW_STUB;
				s.jstack_len = f >> 5;
			}
			s.kstack_len = (__u32)take(&in, 1);
			s.ustack_len = (__u32)take(&in, 1);
			s.sig_err = (__s8)take(&in, 1);
			s.syscall_nr = s.kind == JP_EV_SYSCALL ? (__s32)(s.sig_err & 0x1ff) : -1;
			s.sig_err = s.sig_err < -100 ? s.sig_err : 0;
			now += take(&in, 2) * 1000;
			s.time_ns = now;
			s.weight = 1000;
			memcpy(s.comm, who & 0x80 ? "C2 CompilerThre" : "worker", 7);
			for (__u32 i = 0; i < s.kstack_len + s.ustack_len + 2u * s.jstack_len; i++)
				frames[i] = take(&in, 8);
			err = join__sample(j, &s, frames, frames + s.kstack_len);
			fed++;
			break;
		}
		case 1: {
			struct jp_trace_rec *t = (struct jp_trace_rec *)rec;
			struct ring *r = &rings[take(&in, 1) % 2];
			int nf;

			memset(t, 0, sizeof(*t));
			t->tid = (__u32)take(&in, 1) % 8;
			t->num_frames = (__s8)take(&in, 1);
			now += take(&in, 2) * 1000;
			/* the answer follows the signal: mostly just after the sample */
			t->time_ns = now - (t->tid & 1) * 2000;
			nf = t->num_frames > 0 ? t->num_frames : 0;
			if ((unsigned int)nf > max_depth)
				nf = t->num_frames = (__s32)max_depth;
			for (int i = 0; i < nf; i++) {
				struct jp_frame *f = (struct jp_frame *)(t + 1) + i;

				f->bci = (__s32)take(&in, 4);
				f->pad = 0;
				f->method_id = take(&in, 8);
			}
			t->h.len = (__u32)(sizeof(*t) + (size_t)nf * sizeof(struct jp_frame));
			t->h.type = JP_REC_TRACE;
			/* where ring_put puts it: after a pad when it would cross the end */
			t->h.seq = ((struct jp_ring_hdr *)r->mem)->head;
			if (DATA_SIZE - t->h.seq % DATA_SIZE < t->h.len)
				t->h.seq += DATA_SIZE - t->h.seq % DATA_SIZE;
			ring_put(r, t, t->h.len);
			break;
		}
		case 2:
			now += take(&in, 2) * 1000000;
			err = join__poll(j, now);
			break;
		case 3: {
			struct ring *r = &rings[take(&in, 1) % 2];
			__u32 len = (__u32)take(&in, 1);
			unsigned char raw[256];

			for (__u32 i = 0; i < len; i++)
				raw[i] = (unsigned char)take(&in, 1);
			if (len)
				ring_put(r, raw, len);
			break;
		}
		case 4: {
			struct jp_event_rec *e = (struct jp_event_rec *)rec;
			struct ring *r = &rings[take(&in, 1) % 2];
			unsigned int seed;
			int nf;

			memset(e, 0, sizeof(*e));
			e->tid = (__u32)take(&in, 1) % 8;
			e->kind = (__u16)(take(&in, 1) % (JP_AEV_MAX + 1));
			nf = (int)(take(&in, 2) % (JP_DEPTH_MAX + 1));
			seed = (unsigned int)take(&in, 1);
			now += 1000;
			e->time_ns = now;
			e->size = 64;
			e->weight = 4096;
			e->tag = seed & 1 ? 0 : now;
			e->num_frames = nf;
			for (int i = 0; i < nf; i++) {
				struct jp_frame *f = (struct jp_frame *)(e + 1) + i;

				f->bci = (__s32)((seed + 1u) * 40503u * (unsigned int)(i + 1) % 600);
				f->pad = 0;
				f->method_id = M_FUZZ + 8 * ((seed + (unsigned int)i) % 4);
			}
			e->h.len = (__u32)(sizeof(*e) + (size_t)nf * sizeof(struct jp_frame));
			e->h.type = JP_REC_EVENT;
			e->h.seq = ((struct jp_ring_hdr *)r->mem)->head;
			if (DATA_SIZE - e->h.seq % DATA_SIZE < e->h.len)
				e->h.seq += DATA_SIZE - e->h.seq % DATA_SIZE;
			ring_put(r, e, e->h.len);
			break;
		}
		case 5: {
			struct ring *r = &rings[take(&in, 1) % 2];
			unsigned int which = (unsigned int)take(&in, 1) % 4;
			__u32 n = (__u32)take(&in, 2) % 4096;

			dict_method(r, which, n, (unsigned int)take(&in, 1));
			break;
		}
		}
	}
	/* everything still waiting gives up before the flush (no nap), unless the input says not */
	if (!err && (flags & 0x0f) != 0x0f)
		err = join__poll(j, now + 10ull * 1000000000);
	if (!err)
		err = join__flush(j);
	join__stats(j, &st);
	if (getenv("FUZZ_JOIN_VERBOSE")) /* to see what a corpus file reaches */
		fprintf(stderr,
			"fed %llu samples %llu jvm %llu complete %llu backlog %llu unmatched %llu "
			"trace_drops %llu model_drops %llu err %d\n",
			(unsigned long long)fed, (unsigned long long)st.samples,
			(unsigned long long)st.jvm_samples, (unsigned long long)st.java_complete,
			(unsigned long long)st.backlog, (unsigned long long)st.unmatched_traces,
			(unsigned long long)st.trace_drops, (unsigned long long)st.model_drops, err);
	if (getenv("FUZZ_JOIN_VERBOSE")) {
		fprintf(stderr, "model refusals %llu\n",
			(unsigned long long)model__over_budget(model));
		join__report(j, stderr, true);
	}
	/*
	 * no allocation fails here: every sample fed is in the profile, and counted as such,
	 * but those the model's budget refused (counted; a JVM's are still its samples)
	 */
	if (err || st.samples > fed || st.samples + st.model_drops < fed ||
	    st.jvm_samples > st.samples + st.model_drops ||
	    st.java_complete > st.jvm_samples || st.backlog > st.jvm_samples)
		abort();
	{
		FILE *dev = fopen("/dev/null", "w");

		if (dev) {
			join__report(j, dev, true);
			fclose(dev);
		}
	}
	join__free(j);
	model__free(model);
	syms__free(syms);
	for (int i = 0; i < 2; i++)
		close(rings[i].fd);
	return 0;
}

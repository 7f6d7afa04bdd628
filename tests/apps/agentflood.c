// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * agentflood.c: what a JVM's user can write into its own agent channel (jvmagent/ring.h)
 * to make root jprof work: "agentflood RING DICT SECONDS MODE".
 *   hang:  the dictionary gets a method whose line table has 1,000,000 entries and 16
 *          methods of 65,536 entries each in descending order; the ring gets allocation
 *          events of 4,000 frames naming them at random bytecode indexes
 *   bloat: the dictionary gets 64 methods of 100 lines; the ring gets allocation events
 *          of 256 random frames from random thread ids (every one a new stack and label)
 * Events are reserved as the agent does (CAS on head, PAD at the end of the data area),
 * so the JVM's own agent may write beside them; a full ring is waited on, not dropped.
 * Prints "flooding" once the dictionary is written, then the events written at the end.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>

#include "../../jvmagent/ring.h"
#include "../common/agentfile.h"

#define M_HUGE	 0x7e00000000000008ull /* the method of 1,000,000 lines */
#define M_BASE	 0x7e00000000001000ull /* the others: M_BASE + 8 * k */
#define HANG_N	 16
#define BLOAT_N	 64
#define FRAMES_H 4000
#define FRAMES_B 256

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static __u64 rnd(void)
{
	static __u64 x = 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* a table of n lines, bci step 10, in descending order */
static void desc_line(void *ctx, __u32 i, __s32 *bci, __s32 *line)
{
	__u32 n = *(const __u32 *)ctx;

	*bci = (__s32)((n - 1 - i) * 10);
	*line = (__s32)(n - i);
}

/* one class record "LFlood;" with one method of n lines (bci step 10, in descending order) */
static int put_method(int fd, __u64 id, __u32 n)
{
	return agentfile_put_class1(fd, "LFlood;", id, "m", n, desc_line, &n);
}

/* reserves n bytes at head as the agent does; NULL when time is up */
static unsigned char *reserve(struct jp_ring_hdr *h, unsigned char *data, __u32 n, __u64 end,
			      __u64 *ret_pos)
{
	__u64 mask = h->data_size - 1;

	while (now_ns() < end) {
		__u64 head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
		__u64 tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
		__u64 off = head & mask, take = n;
		int pad = off + n > h->data_size;

		if (pad)
			take = h->data_size - off;
		if (head + take - tail > h->data_size) {
			usleep(200);
			continue;
		}
		if (!__atomic_compare_exchange_n(&h->head, &head, head + take, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		if (pad) {
			struct jp_rec_hdr p = { 0, (__u32)take, JP_REC_PAD, 0 };

			memcpy(data + off + 8, &p.len, 8);
			__atomic_store_n((__u64 *)(data + off), head, __ATOMIC_RELEASE);
			continue;
		}
		*ret_pos = head;
		return data + off;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int hang, rfd, dfd, nm, nf;
	unsigned long long written = 0;
	struct jp_ring_hdr *h;
	unsigned char *map, *rec;
	struct stat st;
	__u64 end, pos;
	__u32 len;

	if (argc < 5 || (strcmp(argv[4], "hang") && strcmp(argv[4], "bloat"))) {
		fprintf(stderr, "usage: agentflood RING DICT SECONDS hang|bloat\n");
		return 2;
	}
	hang = !strcmp(argv[4], "hang");
	rfd = open(argv[1], O_RDWR | O_CLOEXEC);
	dfd = open(argv[2], O_WRONLY | O_APPEND | O_CLOEXEC);
	if (rfd < 0 || dfd < 0 || fstat(rfd, &st)) {
		perror("open");
		return 1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	h = (struct jp_ring_hdr *)map;
	if (h->magic != JP_RING_MAGIC || (size_t)h->hdr_size + h->data_size > (size_t)st.st_size) {
		fprintf(stderr, "not an agent ring\n");
		return 1;
	}
	nm = hang ? HANG_N : BLOAT_N;
	nf = hang ? FRAMES_H : FRAMES_B;
	if (hang && put_method(dfd, M_HUGE, 1000000)) {
		perror("write");
		return 1;
	}
	for (int k = 0; k < nm; k++) {
		if (put_method(dfd, M_BASE + 8 * (__u64)k, hang ? 65536 : 100)) {
			perror("write");
			return 1;
		}
	}
	printf("flooding\n");
	fflush(stdout);
	len = (__u32)(sizeof(struct jp_event_rec) + (size_t)nf * sizeof(struct jp_frame));
	end = now_ns() + (__u64)atoi(argv[3]) * 1000000000ull;
	while ((rec = reserve(h, map + h->hdr_size, len, end, &pos))) {
		struct jp_event_rec e = { 0 };

		e.h.len = len;
		e.h.type = JP_REC_EVENT;
		e.time_ns = now_ns();
		e.tid = hang ? 4242 : 100000 + (__u32)(rnd() % 1000000);
		e.kind = JP_AEV_ALLOC;
		e.size = 64;
		e.weight = 512 * 1024;
		e.class_id = rnd();
		e.num_frames = nf;
		for (int i = 0; i < nf; i++) {
			struct jp_frame f = { 0 };
			__u64 k = rnd();

			f.method_id = hang && i % 2 ? M_HUGE : M_BASE + 8 * (k % (__u64)nm);
			f.bci = (__s32)((k >> 32) % (hang ? 655360 : 1000));
			memcpy(rec + sizeof(e) + (size_t)i * sizeof(f), &f, sizeof(f));
		}
		memcpy(rec + 8, (unsigned char *)&e + 8, sizeof(e) - 8);
		__atomic_store_n((__u64 *)rec, pos, __ATOMIC_RELEASE);
		written++;
	}
	printf("%llu events written\n", written);
	return 0;
}

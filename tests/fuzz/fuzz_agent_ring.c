/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fuzz_agent_ring.c: bytes -> an agent's ring and dict files -> jvm_agent__open_files/poll.
 * Input: u8 flags, u64 head, u64 tail, u16 ring_len, ring data bytes, dict bytes.
 * flags&1: the dict bytes are the whole file (else a valid dict header comes first);
 * flags&2: the ring header is taken raw from the data bytes (else a valid one is built).
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm/agent_ring.h"
#include "ring.h"

#define DATA_SIZE JP_RING_DATA_MIN

static char ring_path[64], dict_path[64];

static int on_trace(void *ctx, const struct java_trace *t)
{
	struct jvm_agent *a = ctx;

	const __u64 *chain;
	const __s32 *bci;
	int n = jvm_agent__pc_chain(a, t->pc, t->num_frames & 1, &chain, &bci);

	for (int i = 0; i < n; i++)
		if (bci[i] >= -1)
			(void)jvm_agent__method_name(a, chain[i], 0);
	(void)jvm_agent__thread_name(a, t->tid);
	if (t->blocker && strlen(t->blocker) > JP_BLOCKER_MAX)
		__builtin_trap(); /* a park's blocker name is bounded */
	for (int i = 0; i < t->num_frames; i++) {
		const char *n = jvm_agent__method_name(a, t->frames[i].method_id, i & 1);

		if (n)
			(void)strlen(n);
		(void)jvm_agent__line(a, t->frames[i].method_id, t->frames[i].bci);
	}
	return 0;
}

static int on_event(void *ctx, const struct java_event *e)
{
	struct jvm_agent *a = ctx;
	const char *c = jvm_agent__class_name(a, e->class_id);

	if (c)
		(void)strlen(c);
	for (int i = 0; i < e->num_frames; i++) {
		const char *n = jvm_agent__method_name(a, e->frames[i].method_id, 0);

		if (n)
			(void)strlen(n);
		(void)jvm_agent__line(a, e->frames[i].method_id, e->frames[i].bci);
	}
	return 0;
}

static void put_file(const char *path, const void *p1, size_t n1, const void *p2, size_t n2)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		abort();
	if (n1 && write(fd, p1, n1) != (ssize_t)n1)
		abort();
	if (n2 && write(fd, p2, n2) != (ssize_t)n2)
		abort();
	close(fd);
}

/* the fixture's two files go with the process, not left in /tmp run after run */
static void remove_files(void)
{
	unlink(ring_path);
	unlink(dict_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char ring[JP_RING_HDR_SIZE + DATA_SIZE];
	struct jp_ring_hdr *h = (struct jp_ring_hdr *)ring;
	struct jp_dict_hdr dh = { JP_DICT_MAGIC, JP_RING_VERSION, sizeof(dh), 1, 0 };
	struct jvm_agent_stats st;
	struct jp_jwalk w;
	struct jvm_agent *a;
	__u64 head, tail;
	__u16 ring_len;
	__u8 flags;

	if (!ring_path[0]) {
		snprintf(ring_path, sizeof(ring_path), "/tmp/fuzz-agent-%d.ring", (int)getpid());
		snprintf(dict_path, sizeof(dict_path), "/tmp/fuzz-agent-%d.dict", (int)getpid());
		atexit(remove_files); /* libFuzzer ends a timed run with exit() */
	}
	if (size < 19)
		return 0;
	flags = data[0];
	memcpy(&head, data + 1, 8);
	memcpy(&tail, data + 9, 8);
	memcpy(&ring_len, data + 17, 2);
	data += 19;
	size -= 19;
	if (ring_len > size)
		ring_len = (__u16)size;
	memset(ring, 0, sizeof(ring));
	if (flags & 2) {
		memcpy(ring, data, ring_len);
	} else {
		memcpy(ring + JP_RING_HDR_SIZE, data, ring_len);
		h->magic = JP_RING_MAGIC;
		h->version = JP_RING_VERSION;
		h->hdr_size = JP_RING_HDR_SIZE;
		h->data_size = DATA_SIZE;
		h->max_depth = 1 + (flags >> 4) * 64;
		h->signo = 37;
		h->head = head;
		h->tail = tail;
	}
	put_file(ring_path, ring, sizeof(ring), NULL, 0);
	if (flags & 1)
		put_file(dict_path, data + ring_len, size - ring_len, NULL, 0);
	else
		put_file(dict_path, &dh, sizeof(dh), data + ring_len, size - ring_len);
	a = jvm_agent__open_files(ring_path, dict_path, (unsigned int)-1);
	if (!a)
		return 0;
	(void)jvm_agent__signo(a);
	(void)jvm_agent__walk(a, &w);
	for (int i = 0; i < 3; i++) {
		/* odd flags: events unread (counted), even: delivered */
		if (jvm_agent__poll_events(a, on_trace, (flags & 4) ? NULL : on_event, a) <= 0)
			break;
	}
	(void)jvm_agent__method_name(a, 0x1000, 0);
	(void)jvm_agent__thread_name(a, 1);
	if (jvm_agent__unread(a) > DATA_SIZE)
		__builtin_trap(); /* what a ring holds is at most its size */
	jvm_agent__stats(a, &st);
	jvm_agent__free(a);
	return 0;
}

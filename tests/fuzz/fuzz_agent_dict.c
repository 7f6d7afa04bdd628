/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fuzz_agent_dict.c: the agent dictionary reader (jvm_agent__open_files, poll, names) on
 * well-framed records with fuzzed bodies, under a fuzzed budget so small inputs reach it.
 * Input: u8 budget (4 KiB << b % 10), then records {u8 type, u16 len, body[len]}.
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

static char ring_path[64], dict_path[64];

static void put_ring(void)
{
	static unsigned char ring[JP_RING_HDR_SIZE + JP_RING_DATA_MIN];
	struct jp_ring_hdr *h = (struct jp_ring_hdr *)ring;
	int fd = open(ring_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		abort();
	h->magic = JP_RING_MAGIC;
	h->version = JP_RING_VERSION;
	h->hdr_size = JP_RING_HDR_SIZE;
	h->data_size = JP_RING_DATA_MIN;
	h->max_depth = 64;
	h->signo = 37;
	if (write(fd, ring, sizeof(ring)) != (ssize_t)sizeof(ring))
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
	struct jp_dict_hdr dh = {JP_DICT_MAGIC, JP_RING_VERSION, sizeof(dh), 1, 0};
	struct jvm_agent_stats st;
	struct jvm_agent *a;
	size_t i = 1;
	__u64 budget;
	int fd;

	if (!ring_path[0]) {
		snprintf(ring_path, sizeof(ring_path), "/tmp/fuzz-dict-%d.ring", (int)getpid());
		snprintf(dict_path, sizeof(dict_path), "/tmp/fuzz-dict-%d.dict", (int)getpid());
		atexit(remove_files); /* libFuzzer ends a timed run with exit() */
		put_ring();
	}
	if (size < 1)
		return 0;
	budget = 4096ull << (data[0] % 10);
	fd = open(dict_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, &dh, sizeof(dh)) != (ssize_t)sizeof(dh))
		abort();
	while (i + 3 <= size) {
		struct jp_dict_rec r = {.type = data[i] % (JP_DICT_MAX + 1)};
		size_t len = (size_t)data[i + 1] | (size_t)data[i + 2] << 8;

		i += 3;
		if (len > size - i)
			len = size - i;
		r.len = (__u32)(sizeof(r) + len);
		if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r) ||
		    write(fd, data + i, len) != (ssize_t)len)
			abort();
		i += len;
	}
	close(fd);
	a = jvm_agent__open_files(ring_path, dict_path, (unsigned int)-1);
	if (!a)
		return 0;
	jvm_agent__set_max_bytes(a, budget);
	(void)jvm_agent__poll(a, NULL, NULL);
	/* every 8-byte window is a candidate method id and code address; 4-byte ones thread ids */
	for (i = 0; i + 8 <= size && i < 4096; i++) {
		__u64 id;
		__u32 tid;
		bool java;

		memcpy(&id, data + i, sizeof(id));
		memcpy(&tid, data + i, sizeof(tid));
		(void)jvm_agent__method_name(a, id, (unsigned int)i & JVM_NAME_DOTTED);
		(void)jvm_agent__line(a, id, (__s32)(i * 3));
		(void)jvm_agent__thread_name(a, tid);
		(void)jvm_agent__class_name(a, id);
		(void)jvm_agent__code_name(a, id, &java);
	}
	jvm_agent__stats(a, &st);
	if (st.bytes > budget)
		__builtin_trap(); /* the budget is a bound, not a hint */
	jvm_agent__free(a);
	return 0;
}

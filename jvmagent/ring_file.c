/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ring_file.c: the trace ring's file: created, allocated and mapped, its header written
 * (jpa_ring_open), then handed to the handler's writers (stacks.c); the header's flags
 * and counters set from the agent's ordinary threads; the file's path, to unlink it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "stacks_int.h"

/* set once by jpa_ring_open; the mapping is never unmapped (the library is -z nodelete) */
static struct jp_ring_hdr *ring;
static char ring_file[512];

int jpa_ring_open(const char *dir, __u32 pid, __u32 data_size, __u32 max_depth, __u32 flags)
{
	struct timespec ts;
	size_t map_size;
	void *p;
	int fd, err;

	/* room for 4 traces of full depth at least, so big stacks still flow */
	while (data_size < 4 * (TRACE_BYTES(max_depth) + JP_BLOCKER_MAX) &&
	       data_size < JP_RING_DATA_MAX)
		data_size <<= 1;
	err = jpa_channel_path(ring_file, sizeof(ring_file), dir, pid, "ring");
	if (err)
		return err;
	fd = jpa_create(ring_file, O_RDWR, 0600);
	if (fd < 0) {
		ring_file[0] = '\0';
		return fd;
	}
	map_size = (size_t)JP_RING_HDR_SIZE + data_size;
	/*
	 * Every page now: a sparse tmpfs page that cannot be had on first touch is a SIGBUS
	 * inside the JVM (in a signal handler, even). No room means no agent, not a crash.
	 */
	err = -posix_fallocate(fd, 0, (off_t)map_size);
	if (err)
		goto out_unlink;
	p = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto out_unlink;
	}
	close(fd);
	ring = p;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ring->version = JP_RING_VERSION;
	ring->hdr_size = JP_RING_HDR_SIZE;
	ring->data_size = data_size;
	ring->pid = pid;
	ring->max_depth = max_depth;
	ring->flags = flags;
	ring->start_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	jpa_stacks_set_ring(ring, data_size, max_depth);
	__atomic_store_n(&ring->magic, JP_RING_MAGIC, __ATOMIC_RELEASE);
	return 0;
out_unlink:
	close(fd);
	unlink(ring_file);
	ring_file[0] = '\0';
	return err;
}

void jpa_ring_set_flags(__u32 flags)
{
	if (ring)
		__atomic_fetch_or(&ring->flags, flags, __ATOMIC_RELEASE);
}

const char *jpa_ring_path(void)
{
	return ring_file;
}

void jpa_ring_count(enum jpa_counter c, __u64 n)
{
	__u64 *v;

	if (!ring)
		return;
	switch (c) {
	case JPA_DICT_BYTES:
		v = &ring->dict_bytes;
		break;
	case JPA_DICT_DROPPED:
		v = &ring->dict_dropped;
		break;
	case JPA_THREADS_FULL:
		v = &ring->threads_full;
		break;
	case JPA_EVENTS_NS:
		v = &ring->events_ns;
		break;
	default:
		v = &ring->perfmap_dropped;
		break;
	}
	__atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

struct jp_ring_hdr *jpa_ring_hdr(void)
{
	return ring;
}

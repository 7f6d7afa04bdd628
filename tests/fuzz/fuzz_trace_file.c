/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fuzz_trace_file.c: jprof trace's reader of the agent's trace file (user/trace/tfile.c),
 * which the JVM writes. Input: the header (its magic, version and size kept valid when the
 * first byte is even, so the rest is reached), then bytes spread over the method table,
 * the record slots and the end of the file where the header's stack and name regions may
 * point. The file is small (64 slots); drained twice, finished, both outputs written.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/tfile.h"
#include "trace/tstats.h"

#define SLOTS 64u
#define TAIL  (64u * 1024)
#define SIZE  (JP_MT_DATA_OFF + SLOTS * sizeof(struct jp_mt_rec) + TAIL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t file[SIZE];
	struct jp_mt_hdr *h = (struct jp_mt_hdr *)file;
	struct jp_mt_hdr out;
	struct tstats_totals tot = {.stopped = "x"};
	struct tstats *s;
	struct tfile *t;
	size_t n, third;
	FILE *null;
	int fd;

	memset(file, 0, sizeof(file));
	n = size < sizeof(*h) ? size : sizeof(*h);
	memcpy(file, data, n);
	data += n;
	size -= n;
	if (!(file[0] & 1)) {
		h->magic = JP_MT_MAGIC;
		h->version = JP_MT_VERSION;
		h->hdr_size = JP_MT_HDR_SIZE;
		h->n_slots = SLOTS;
	}
	third = size / 3;
	memcpy(file + JP_MT_HDR_SIZE, data, third < JP_MT_METHODS_MAX * 256u ? third : 0);
	memcpy(file + JP_MT_DATA_OFF, data + third,
	       third < SLOTS * sizeof(struct jp_mt_rec) ? third : 0);
	n = size - 2 * third < TAIL ? size - 2 * third : TAIL;
	memcpy(file + SIZE - TAIL, data + 2 * third, n);
	fd = memfd_create("trace", MFD_CLOEXEC);
	if (fd < 0 || write(fd, file, sizeof(file)) != (ssize_t)sizeof(file))
		abort();
	s = tstats__new(5);
	if (!s)
		abort();
	tstats__set_slow(s, file[1]);
	if (tfile__open_fd(fd, sizeof(file), &t)) {
		tstats__free(s);
		return 0;
	}
	tfile__drain(t, s);
	tfile__drain(t, s);
	(void)tfile__finish(t, s, &out);
	null = fopen("/dev/null", "w");
	if (null) {
		tstats__write_text(s, &tot, null);
		tstats__write_json(s, &tot, null);
		fclose(null);
	}
	tfile__free(t);
	tstats__free(s);
	return 0;
}

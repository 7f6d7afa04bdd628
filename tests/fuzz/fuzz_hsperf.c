// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_hsperf.c: the hsperfdata parser on arbitrary bytes (and its layout, which must read
 * the same values back), then the pause tracker reading
 * them from a file twice (the second time with the input's halves swapped, as if the JVM
 * had rewritten its counters between two reads), with its reports and events.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jvm/hsperf.h"

static void report(const struct hsperf *h)
{
	const struct hsperf_gc_event *ev;
	char *txt = NULL;
	size_t len = 0, n;
	FILE *m = open_memstream(&txt, &len);

	if (!m)
		return;
	hsperf__report(h, 1, "fuzz", m);
	hsperf__report_json(h, 1, "fuzz", m);
	ev = hsperf__gc_events(h, &n);
	for (size_t i = 0; i < n; i++)
		fprintf(m, "%llu %llu %s %s\n", (unsigned long long)ev[i].start_rel_ns,
			(unsigned long long)ev[i].duration_ns, ev[i].collector, ev[i].cause);
	fclose(m);
	free(txt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hsperf_snap s, again;
	struct hsperf_layout lay;
	struct hsperf *h;
	uint8_t *swapped;
	size_t half = size / 2;
	int fd;

	/* the layout of a parse reads the same bytes back as the parse did */
	if (!hsperf_parse_layout(data, size, &s, &lay) && lay.n_entries &&
	    (hsperf_read_layout(data, size, &lay, &again) ||
	     memcmp(&s, &again, offsetof(struct hsperf_snap, entries))))
		abort();
	fd = memfd_create("fuzz-hsperf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	h = hsperf__open_fd(fd, size && (data[size - 1] & 1));
	if (!h)
		return 0;
	swapped = malloc(size + 1);
	if (swapped && write(fd, data, size) == (ssize_t)size) {
		(void)hsperf__poll(h, 1000);
		memcpy(swapped, data + half, size - half);
		memcpy(swapped + (size - half), data, half);
		if (pwrite(fd, swapped, size, 0) == (ssize_t)size)
			(void)hsperf__poll(h, 2000);
		/* the first read again: counters that went back */
		if (pwrite(fd, data, size, 0) == (ssize_t)size)
			(void)hsperf__poll(h, 3000);
	}
	report(h);
	free(swapped);
	hsperf__free(h);
	return 0;
}

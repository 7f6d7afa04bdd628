// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_perfmap.c: perf map parser on arbitrary bytes, fed in two pieces like a growing file,
 * then read from a file (perfmap__load_fd) holding the input repeated up to 256 times, so
 * the entry and name budgets (small in fuzz builds) are reached.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sym/perfmap.h"

static void from_file(const uint8_t *data, size_t size)
{
	int reps = size > 1 ? 1 + data[1] : 1, fd = memfd_create("fuzz-perfmap", MFD_CLOEXEC);
	struct perfmap *pm;
	__u64 off;

	if (fd < 0)
		return;
	for (int i = 0; i < reps; i++)
		if (write(fd, data, size) != (ssize_t)size)
			break;
	pm = perfmap__new();
	if (pm && perfmap__load_fd(pm, fd) >= 0) {
		/* appended to while being read */
		(void)!write(fd, data, size);
		(void)perfmap__load_fd(pm, fd);
	}
	if (size >= 8) {
		__u64 a;

		__builtin_memcpy(&a, data, sizeof(a));
		(void)perfmap__find(pm, a, &off);
	}
	(void)perfmap__dropped(pm);
	(void)perfmap__bytes(pm);
	perfmap__free(pm);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm = perfmap__new();
	size_t cut = size ? data[0] % (size + 1) : 0;
	const char *buf = (const char *)data;
	long used;
	__u64 off;

	if (!pm)
		return 0;
	used = perfmap__parse_buf(pm, buf, cut, false);
	if (used >= 0 && (size_t)used <= cut)
		(void)perfmap__parse_buf(pm, buf + used, size - (size_t)used, true);
	/* probe around every parsed start, and a few fixed points */
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		__u64 a;

		__builtin_memcpy(&a, data + i, sizeof(a));
		(void)perfmap__find(pm, a, &off);
	}
	(void)perfmap__find(pm, 0, &off);
	(void)perfmap__find(pm, ~0ull, &off);
	(void)perfmap__count(pm);
	(void)perfmap__bad_lines(pm);
	perfmap__free(pm);
	from_file(data, size);
	return 0;
}

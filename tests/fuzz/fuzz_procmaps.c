// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_procmaps.c: /proc/<pid>/maps parser on arbitrary bytes (and repeated: budgets). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sym/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jp_maps *m = NULL;
	size_t reps = size ? 1 + data[0] % 64 : 1;
	char *big;

	/* many copies of a line reach the map count budget (small in fuzz builds) */
	big = size && size * reps <= (1u << 20) ? malloc(size * reps) : NULL;
	if (big) {
		for (size_t i = 0; i < reps; i++)
			__builtin_memcpy(big + i * size, data, size);
		if (!procmaps_parse_buf(big, size * reps, true, &m))
			procmaps_free(m);
		m = NULL;
		free(big);
	}
	if (procmaps_parse_buf((const char *)data, size, size & 1, &m))
		return 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct jp_map *x = procmaps_find(m, m->maps[i].start);

		if (x != &m->maps[i] || x->start >= x->end)
			__builtin_trap(); /* sorted and disjoint, or lookups lie */
		if (i && m->maps[i - 1].end > x->start)
			__builtin_trap();
		(void)procmaps_find(m, x->end - 1);
	}
	procmaps_free(m);
	return 0;
}

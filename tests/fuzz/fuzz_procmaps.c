// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_procmaps.c: /proc/<pid>/maps parser on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "sym/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jp_maps *m = NULL;

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

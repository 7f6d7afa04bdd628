// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_kallsyms.c: kallsyms parser on arbitrary bytes (and repeated: budgets). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sym/ksyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *k;
	const char *name, *mod;
	size_t reps = size ? 1 + data[0] % 64 : 1;
	char *big;
	__u64 off;

	/* many copies reach the symbol count budget (small in fuzz builds) */
	big = size && size * reps <= (1u << 20) ? malloc(size * reps) : NULL;
	if (big) {
		for (size_t i = 0; i < reps; i++)
			__builtin_memcpy(big + i * size, data, size);
		ksyms__free(ksyms__load_buf(big, size * reps));
		free(big);
	}
	k = ksyms__load_buf((const char *)data, size);

	if (!k)
		return 0;
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		__u64 a;

		__builtin_memcpy(&a, data + i, sizeof(a));
		if (!ksyms__find(k, a, &name, &mod, &off) && (!name || !*name))
			__builtin_trap();
	}
	(void)ksyms__find(k, ~0ull, &name, &mod, &off);
	ksyms__free(k);
	return 0;
}

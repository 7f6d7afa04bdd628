// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_kallsyms.c: kallsyms parser on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "sym/ksyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *k = ksyms__load_buf((const char *)data, size);
	const char *name, *mod;
	__u64 off;

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

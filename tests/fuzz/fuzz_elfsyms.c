// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_elfsyms.c: ELF symbol loading (incl. .gnu_debugdata) on arbitrary images. */
#include <stddef.h>
#include <stdint.h>

#include "sym/elf_syms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_syms *e = NULL;
	__u64 off, v;

	if (elf_syms__load_mem(data, size, &e))
		return 0;
	for (size_t i = 0; i + 8 <= size && i < 128; i += 8) {
		__u64 a;

		__builtin_memcpy(&a, data + i, sizeof(a));
		(void)elf_syms__find(e, a, &off);
		(void)elf_syms__file_to_vaddr(e, a, &v);
	}
	(void)elf_syms__build_id(e);
	elf_syms__free(e);
	return 0;
}

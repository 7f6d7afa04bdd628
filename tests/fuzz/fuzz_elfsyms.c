// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_elfsyms.c: ELF symbol loading (incl. .gnu_debugdata) and the lookup of named symbols
 * of any type (libjvm's exported tables) from memory and from a file.
 * Input byte 0 picks: even, the rest is the image (both paths); odd, bytes 1..6 describe
 * a hostile ELF (tests/apps/elfgen.c: symbol count, shared name length, suffix names)
 * and the rest are (u32 offset, u8 value) patches on it, read from a file: the symbol
 * and name budgets (small in fuzz builds) are reached with small inputs.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sym/elf_syms.h"

#define ELFGEN_NO_MAIN
#include "../apps/elfgen.c"

static void probe(struct elf_syms *e, const uint8_t *data, size_t size)
{
	__u64 off, v;

	for (size_t i = 0; i + 8 <= size && i < 128; i += 8) {
		__u64 a;

		__builtin_memcpy(&a, data + i, sizeof(a));
		(void)elf_syms__find(e, a, &off);
		(void)elf_syms__file_to_vaddr(e, a, &v);
	}
	(void)elf_syms__find(e, 0x10000 + 16 * (size % 64), &off);
	(void)elf_syms__build_id(e);
	(void)elf_syms__bytes(e);
	(void)elf_syms__over_budget(e);
}

/* the exported data symbols jprof reads of libjvm (jvm/vmstructs.c) */
static const char *const data_names[] = { "gHotSpotVMStructs", "gHotSpotVMTypes", "fx_sink",
					  "jp_fx_alpha" };

static void from_fd(int fd, const uint8_t *data, size_t size)
{
	struct elf_syms *e = NULL;
	__u64 vals[4], base;

	if (!lseek(fd, 0, SEEK_SET))
		(void)elf_syms__lookup_fd(fd, data_names, 4, vals, &base);
	if (lseek(fd, 0, SEEK_SET) || elf_syms__load_fd(fd, &e))
		return;
	probe(e, data, size);
	elf_syms__free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct elf_syms *e = NULL;
	int fd;

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz-elf-%d", (int)getpid());
	if (size < 1)
		return 0;
	if (!(data[0] & 1)) {
		data++;
		size--;
		__u64 vals[4], base;

		(void)elf_syms__lookup_mem(data, size, data_names, 4, vals, &base);
		if (!elf_syms__load_mem(data, size, &e)) {
			probe(e, data, size);
			elf_syms__free(e);
		}
		fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
		if (fd < 0)
			return 0;
		if (write(fd, data, size) == (ssize_t)size)
			from_fd(fd, data, size);
		close(fd);
		return 0;
	}
	if (size < 7)
		return 0;
	{
		unsigned long nsyms = 1 + (data[1] | data[2] << 8) % 8192;
		unsigned long name_len = 1 + ((unsigned long)data[3] | data[4] << 8 | (data[5] & 1) << 16);

		if (elfgen_write(path, nsyms, name_len, data[6] & 1))
			return 0;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (size_t i = 7; i + 5 <= size; i += 5) {
		__u32 at;

		__builtin_memcpy(&at, data + i, sizeof(at));
		(void)!pwrite(fd, data + i + 4, 1, at % (1u << 20));
	}
	from_fd(fd, data, size);
	close(fd);
	unlink(path);
	return 0;
}

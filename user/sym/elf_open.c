// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * elf_open.c: an untrusted ELF file or image opened for libelf: the header's counts
 * checked with pread first, the file read with pread only. For elf_syms.c and
 * elf_lookup.c (elf_int.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_int.h"


/*
 * libelf sizes its section array from the header before we can look at it: a file that
 * claims billions of sections (cheap, as a sparse file) would make it allocate and touch
 * gigabytes. Check the counts first, with pread.
 */
static int precheck_fd(int fd)
{
	unsigned char ident[EI_NIDENT];
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} h;
	union {
		Elf64_Shdr s64;
		Elf32_Shdr s32;
	} s0;
	size_t hsize, ssize;
	__u64 shnum, phnum, shoff;
	bool is64;

	if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG) ||
	    (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32))
		return -ENOEXEC;
	is64 = ident[EI_CLASS] == ELFCLASS64;
	hsize = is64 ? sizeof(h.e64) : sizeof(h.e32);
	ssize = is64 ? sizeof(s0.s64) : sizeof(s0.s32);
	if (pread(fd, &h, hsize, 0) != (ssize_t)hsize)
		return -ENOEXEC;
	shnum = is64 ? h.e64.e_shnum : h.e32.e_shnum;
	phnum = is64 ? h.e64.e_phnum : h.e32.e_phnum;
	shoff = is64 ? h.e64.e_shoff : h.e32.e_shoff;
	/* more than 0xff00 sections or 0xffff headers: the real counts are in section 0 */
	if (shoff && (!shnum || phnum == PN_XNUM)) {
		if (pread(fd, &s0, ssize, (off_t)shoff) != (ssize_t)ssize)
			return -ENOEXEC;
		if (!shnum)
			shnum = is64 ? s0.s64.sh_size : s0.s32.sh_size;
		if (phnum == PN_XNUM)
			phnum = is64 ? s0.s64.sh_info : s0.s32.sh_info;
	}
	if (shnum > ELF_MAX_SECTIONS || phnum > ELF_MAX_PHDRS)
		return -E2BIG;
	return 0;
}

/*
 * An ELF of an fd, read with pread only. ELF_C_READ: libelf preads what it is asked for into
 * its own buffers. Never ELF_C_READ_MMAP: the file belongs to someone who may truncate it
 * under the mapping, and the next touch of a page past the end is a SIGBUS in root jprof.
 */
int elf_open_fd(int fd, Elf **ret)
{
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	err = precheck_fd(fd);
	if (err)
		return err;
	*ret = elf_begin(fd, ELF_C_READ, NULL);
	return *ret ? 0 : -ENOEXEC;
}

/* an ELF of a buffer, through a copy of it (libelf wants a writable image): free it after */
int elf_open_mem(const void *buf, size_t len, char **ret_copy, Elf **ret)
{
	char *copy;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	*ret = elf_memory(copy, len);
	if (!*ret) {
		free(copy);
		return -ENOEXEC;
	}
	*ret_copy = copy;
	return 0;
}

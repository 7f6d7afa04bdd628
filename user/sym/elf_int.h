/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * elf_int.h: what the ELF readers share (the API is elf_syms.h): one file's budgets, and
 * opening an untrusted file or image for libelf (elf_open.c), which both the symbol
 * tables' loader (elf_syms.c) and the lookup of named symbols (elf_lookup.c) do.
 */
#ifndef JPROF_SYM_ELF_INT_H
#define JPROF_SYM_ELF_INT_H

#include <linux/types.h>
#include <stddef.h>

#include <gelf.h>

/*
 * Budgets for one file (an untrusted one: any user's process maps what it likes). libelf
 * reads a table into memory when asked for it, so a table is refused before that.
 */
#ifndef JP_FUZZ_BUDGETS
#define ELF_MAX_SYMS	  (4u << 20)
#define ELF_MAX_TABLE	  (128u << 20) /* one symbol table or string table */
#define ELF_MAX_BYTES	  (256u << 20) /* all a file's symbols and names, as held */
#define ELF_MAX_DEMANGLED (16u << 20)  /* demangled names kept */
#else /* fuzzing: small enough for a fuzzer's inputs to reach */
#define ELF_MAX_SYMS	  4096u
#define ELF_MAX_TABLE	  (64u << 10)
#define ELF_MAX_BYTES	  (256u << 10)
#define ELF_MAX_DEMANGLED (16u << 10)
#endif
#define ELF_MAX_SECTIONS   (1u << 16)
#define ELF_MAX_PHDRS	   (1u << 16)
#define ELF_MAX_LOADS	   64

/*
 * An ELF of an fd, read with pread only (never mapped), its section and program header
 * counts checked before libelf sizes anything by them; 0, -ENOEXEC, -E2BIG or -ENOSYS
 */
int elf_open_fd(int fd, Elf **ret);
/* an ELF of a buffer, through a copy of it (libelf wants a writable image): free it after */
int elf_open_mem(const void *buf, size_t len, char **ret_copy, Elf **ret);

#endif /* JPROF_SYM_ELF_INT_H */

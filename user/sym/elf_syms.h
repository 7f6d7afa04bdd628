/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* elf_syms.h: function symbols of one ELF file (.symtab, .dynsym, .gnu_debugdata). */
#ifndef JPROF_SYM_ELF_SYMS_H
#define JPROF_SYM_ELF_SYMS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct elf_syms;

/*
 * Reads the symbols of an ELF file (fd stays the caller's) or of an image in
 * memory (copied as needed): STT_FUNC/STT_GNU_IFUNC, and sized objects or
 * untyped symbols in executable sections, from .symtab, .dynsym and the xz
 * MiniDebugInfo in .gnu_debugdata. Also keeps the PT_LOAD headers and the
 * GNU build-id. 0 and *ret, or -errno (-ENOEXEC: not an ELF file; -E2BIG: more
 * sections or program headers than any real file). From an fd the file is read with
 * pread only, never mapped, and a table larger than a budget is left out (counted).
 */
int elf_syms__load_fd(int fd, struct elf_syms **ret);
int elf_syms__load_mem(const void *buf, size_t len, struct elf_syms **ret);
void elf_syms__free(struct elf_syms *e); /* NULL-safe */

/*
 * Maps a file offset (mapping offset + addr - mapping start) to the ELF virtual
 * address through the PT_LOAD segment holding it. 0 or -ENOENT.
 */
int elf_syms__file_to_vaddr(const struct elf_syms *e, __u64 file_off, __u64 *ret_vaddr);

/*
 * The symbol covering vaddr, demangled (C++, without parameters) on first use;
 * *ret_offset = vaddr - its start. NULL when none. Names live as long as e.
 * Not thread-safe (demangling caches into e).
 */
const char *elf_syms__find(struct elf_syms *e, __u64 vaddr, __u64 *ret_offset);

/* symbols held; GNU build-id as lowercase hex ("" when absent) */
size_t elf_syms__count(const struct elf_syms *e);
/* bytes held (symbols, string tables, demangled names), for the caller's global budget */
size_t elf_syms__bytes(const struct elf_syms *e);
/* tables or symbols left out because a budget was reached (the rest is usable) */
unsigned int elf_syms__over_budget(const struct elf_syms *e);
const char *elf_syms__build_id(const struct elf_syms *e);
/* true when the file had a full .symtab (or MiniDebugInfo), not only the dynamic symbols */
bool elf_syms__has_symtab(const struct elf_syms *e);
/* the file name in .gnu_debuglink ("" when none): where a separate debug file may be */
const char *elf_syms__debuglink(const struct elf_syms *e);

/*
 * The values of the named symbols of any type (data too) in the file's .dynsym: ret[i] 0
 * when names[i] is not there; *ret_base the virtual address of the PT_LOAD at file offset
 * 0 (a mapping of offset 0 at START puts symbol value V at START - base + V). Same reading
 * and budgets as elf_syms__load_fd/_mem. 0 or -errno.
 */
int elf_syms__lookup_fd(int fd, const char *const *names, size_t n, __u64 *ret,
			__u64 *ret_base);
int elf_syms__lookup_mem(const void *buf, size_t len, const char *const *names, size_t n,
			 __u64 *ret, __u64 *ret_base);

#endif /* JPROF_SYM_ELF_SYMS_H */

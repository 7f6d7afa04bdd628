// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * elf_lookup.c: the addresses of named symbols of an ELF file or image (.dynsym, data
 * too) and its load base, without keeping a symbol table (elf_syms__lookup_*: libjvm's
 * VMStructs). Opened as elf_syms.c opens files (elf_int.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elf_int.h"
#include "elf_syms.h"

/*
 * The named symbols of any type in .dynsym (data too: the exported tables a debugger or
 * profiler reads, such as libjvm's gHotSpotVMStructs), and the virtual address the PT_LOAD
 * at file offset 0 starts at. Within the loaders' budgets: a dynamic symbol table larger
 * than ELF_MAX_TABLE is refused.
 */
static int lookup_elf(Elf *elf, const char *const *names, size_t n, __u64 *ret,
		      __u64 *ret_base)
{
	size_t nsec = 0, nphdr = 0, found = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	bool base = false;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (elf_getshdrnum(elf, &nsec) || nsec > ELF_MAX_SECTIONS)
		return -E2BIG;
	if (!elf_getphdrnum(elf, &nphdr)) {
		for (size_t i = 0; i < nphdr && i < ELF_MAX_PHDRS && !base; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && !ph.p_offset) {
				*ret_base = ph.p_vaddr;
				base = true;
			}
		}
	}
	if (!base)
		return -ENOEXEC;
	memset(ret, 0, n * sizeof(*ret));
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Scn *strscn;
		GElf_Shdr sh, ssh;
		Elf_Data *data, *strs;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    sh.sh_link >= nsec)
			continue;
		strscn = elf_getscn(elf, sh.sh_link);
		if (sh.sh_size > ELF_MAX_TABLE || !strscn || !gelf_getshdr(strscn, &ssh) ||
		    ssh.sh_type != SHT_STRTAB || ssh.sh_size > ELF_MAX_TABLE)
			return -E2BIG;
		data = elf_getdata(scn, NULL);
		strs = elf_getdata(strscn, NULL);
		if (!data || !strs || !strs->d_buf || !strs->d_size)
			return -ENOEXEC;
		count = data->d_size / sh.sh_entsize;
		for (size_t i = 0; i < count && i < ELF_MAX_SYMS && found < n; i++) {
			GElf_Sym sym;
			const char *name;
			size_t room;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			if (sym.st_shndx == SHN_UNDEF || !sym.st_value || !sym.st_name ||
			    sym.st_name >= strs->d_size)
				continue;
			name = (const char *)strs->d_buf + sym.st_name;
			room = strs->d_size - sym.st_name;
			for (size_t k = 0; k < n; k++) {
				if (!ret[k] && strnlen(name, room) == strlen(names[k]) &&
				    !strcmp(name, names[k])) {
					ret[k] = sym.st_value;
					found++;
					break;
				}
			}
		}
		break; /* one dynamic symbol table */
	}
	return 0;
}

int elf_syms__lookup_fd(int fd, const char *const *names, size_t n, __u64 *ret,
			__u64 *ret_base)
{
	Elf *elf;
	int err = elf_open_fd(fd, &elf);

	if (err)
		return err;
	err = lookup_elf(elf, names, n, ret, ret_base);
	elf_end(elf);
	return err;
}

int elf_syms__lookup_mem(const void *buf, size_t len, const char *const *names, size_t n,
			 __u64 *ret, __u64 *ret_base)
{
	char *copy;
	Elf *elf;
	int err = elf_open_mem(buf, len, &copy, &elf);

	if (err)
		return err;
	err = lookup_elf(elf, names, n, ret, ret_base);
	elf_end(elf);
	free(copy);
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* elfgen.c: writes a hostile but valid ELF: many function symbols sharing one huge name. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * An ET_DYN with one PT_LOAD (r-x, memsz covering every symbol, filesz just the
 * headers), .text as NOBITS, .symtab with nsyms STT_FUNC symbols 16 bytes apart and
 * .strtab = "\0" + name_len x 'A' + "\0". Every symbol names the one string
 * (suffix == 0) or a suffix of it (suffix != 0: st_name walks through the string, so no
 * two names are the same pointer). Returns 0 or -1.
 */
static int elfgen_write(const char *path, unsigned long nsyms, unsigned long name_len, int suffix)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	const unsigned long base = 0x10000, text_off = 0x1000;
	Elf64_Ehdr eh = {0};
	Elf64_Phdr ph = {0};
	Elf64_Shdr sh[5] = {0};
	unsigned long i, sym_off, str_off, shstr_off, sh_off;
	FILE *f = fopen(path, "we");
	Elf64_Sym sym = {0};
	char *chunk;

	if (!f)
		return -1;
	sym_off = text_off;
	str_off = sym_off + (nsyms + 1) * sizeof(Elf64_Sym);
	shstr_off = str_off + name_len + 2;
	sh_off = (shstr_off + sizeof(shstr) + 7) & ~7ul;
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = sh_off;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 5;
	eh.e_shstrndx = 4;
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_offset = 0;
	ph.p_vaddr = 0;
	ph.p_filesz = text_off;
	ph.p_memsz = base + nsyms * 16;
	ph.p_align = 0x1000;
	sh[1] = (Elf64_Shdr){.sh_name = 1,
			     .sh_type = SHT_NOBITS,
			     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_addr = base,
			     .sh_offset = text_off,
			     .sh_size = nsyms * 16,
			     .sh_addralign = 16};
	sh[2] = (Elf64_Shdr){.sh_name = 7,
			     .sh_type = SHT_SYMTAB,
			     .sh_offset = sym_off,
			     .sh_size = (nsyms + 1) * sizeof(Elf64_Sym),
			     .sh_link = 3,
			     .sh_info = 1,
			     .sh_addralign = 8,
			     .sh_entsize = sizeof(Elf64_Sym)};
	sh[3] = (Elf64_Shdr){.sh_name = 15,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = str_off,
			     .sh_size = name_len + 2,
			     .sh_addralign = 1};
	sh[4] = (Elf64_Shdr){.sh_name = 23,
			     .sh_type = SHT_STRTAB,
			     .sh_offset = shstr_off,
			     .sh_size = sizeof(shstr),
			     .sh_addralign = 1};
	if (fwrite(&eh, sizeof(eh), 1, f) != 1 || fwrite(&ph, sizeof(ph), 1, f) != 1 ||
	    fseek(f, (long)sym_off, SEEK_SET) || fwrite(&sym, sizeof(sym), 1, f) != 1)
		goto out_err;
	for (i = 0; i < nsyms; i++) {
		sym.st_name = (Elf64_Word)(1 + (suffix ? i % name_len : 0));
		sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sym.st_shndx = 1;
		sym.st_value = base + i * 16;
		sym.st_size = 16;
		if (fwrite(&sym, sizeof(sym), 1, f) != 1)
			goto out_err;
	}
	chunk = malloc(65536);
	if (!chunk)
		goto out_err;
	memset(chunk, 'A', 65536);
	if (fputc(0, f) == EOF)
		goto out_free;
	for (i = 0; i < name_len; i += 65536) {
		size_t n = name_len - i < 65536 ? name_len - i : 65536;

		if (fwrite(chunk, 1, n, f) != n)
			goto out_free;
	}
	free(chunk);
	if (fputc(0, f) == EOF || fwrite(shstr, sizeof(shstr), 1, f) != 1 ||
	    fseek(f, (long)sh_off, SEEK_SET) || fwrite(sh, sizeof(sh), 1, f) != 1)
		goto out_err;
	return fclose(f) ? -1 : 0;
out_free:
	free(chunk);
out_err:
	fclose(f);
	return -1;
}

#ifndef ELFGEN_NO_MAIN
int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: elfgen OUT NSYMS NAME_LEN [suffix]\n");
		return 2;
	}
	if (elfgen_write(argv[1], strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
			 argc > 4 && !strcmp(argv[4], "suffix"))) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
#endif

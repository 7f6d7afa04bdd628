// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* elf_syms.c: an ELF file's function symbols, sorted, plus what maps addresses to them. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>
#include <lzma.h>

#include "demangle.h"
#include "elf_syms.h"
#include "strpool.h"

#define ELF_MAX_SYMS	 (8u << 20)
#define ELF_MAX_SECTIONS (1u << 16)
#define ELF_MAX_LOADS	 64
/* MiniDebugInfo is a few hundred KiB in practice; refuse decompression bombs */
#define DEBUGDATA_MAX_OUT  (64u << 20)
#define DEBUGDATA_MEMLIMIT (128u << 20)
/* an unsized symbol extends to the next one, but not absurdly far */
#define UNSIZED_MAX_SPAN (64u * 1024)
/* how far back to look for an enclosing symbol when the nearest one is too short */
#define NESTED_LOOKBACK 16

struct elf_sym {
	__u64 addr, size;
	const char *name; /* in pool; replaced by the demangled form on first find */
	__u8 rank;	  /* alias preference, lower wins */
	__u8 demangled;	  /* 1 once name was looked at for demangling */
};

struct elf_load {
	__u64 offset, filesz, vaddr;
};

struct elf_syms {
	struct elf_sym *syms;
	size_t n, cap;
	struct elf_load loads[ELF_MAX_LOADS];
	size_t nloads;
	struct strpool pool;
	char build_id[2 * 64 + 1];
};

static int add_sym(struct elf_syms *e, __u64 addr, __u64 size, const char *name, __u8 rank)
{
	struct elf_sym *s;

	if (e->n == ELF_MAX_SYMS)
		return -E2BIG;
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 256;
		struct elf_sym *ns = reallocarray(e->syms, cap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		e->syms = ns;
		e->cap = cap;
	}
	s = &e->syms[e->n];
	s->name = strpool_add(&e->pool, name, strlen(name));
	if (!s->name)
		return -ENOMEM;
	s->addr = addr;
	s->size = size;
	s->rank = rank;
	s->demangled = 0;
	e->n++;
	return 0;
}

/* prefer global over weak over local names for aliases, then fewer leading '_' */
static __u8 sym_rank(const GElf_Sym *sym, const char *name)
{
	__u8 r;

	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		r = 0;
		break;
	case STB_WEAK:
		r = 8;
		break;
	default:
		r = 16;
		break;
	}
	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC && GELF_ST_TYPE(sym->st_info) != STT_GNU_IFUNC)
		r += 32;
	if (!sym->st_size)
		r += 64;
	for (int i = 0; i < 3 && name[i] == '_'; i++)
		r++;
	return r;
}

static int read_symtab(struct elf_syms *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       const bool *exec, size_t nsec)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;

	if (!data || !sh->sh_entsize || sh->sh_link >= nsec)
		return 0;
	count = data->d_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;
		int type, err;
		bool in_exec;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || !sym.st_value)
			continue;
		in_exec = sym.st_shndx < nsec && exec[sym.st_shndx];
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_FUNC || type == STT_GNU_IFUNC) {
			/* functions count wherever they are */
		} else if ((type == STT_OBJECT || type == STT_NOTYPE) && in_exec && sym.st_size) {
			/* code blobs described as data, e.g. hand-written stubs */
		} else {
			continue;
		}
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		err = add_sym(e, sym.st_value, sym.st_size, name, sym_rank(&sym, name));
		if (err)
			return err;
	}
	return 0;
}

static void read_build_id(struct elf_syms *e, Elf_Scn *scn)
{
	static const char hex[] = "0123456789abcdef";
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off, i;
	GElf_Nhdr nh;

	if (!data)
		return;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;

		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4))
			continue;
		if (!nh.n_descsz || nh.n_descsz > 64)
			return;
		for (i = 0; i < nh.n_descsz; i++) {
			e->build_id[2 * i] = hex[desc[i] >> 4];
			e->build_id[2 * i + 1] = hex[desc[i] & 15];
		}
		e->build_id[2 * i] = '\0';
		return;
	}
}

/* xz-decompresses buf into a new allocation of at most DEBUGDATA_MAX_OUT bytes */
static int xz_decompress(const void *buf, size_t len, char **ret, size_t *ret_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = len * 4 + 4096, n = 0;
	char *out = NULL, *tmp;
	lzma_ret lr;
	int err = 0;

	if (cap > DEBUGDATA_MAX_OUT)
		cap = DEBUGDATA_MAX_OUT;
	if (lzma_stream_decoder(&strm, DEBUGDATA_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	out = malloc(cap);
	if (!out) {
		err = -ENOMEM;
		goto out_end;
	}
	strm.next_in = buf;
	strm.avail_in = len;
	for (;;) {
		if (n == cap) {
			if (cap == DEBUGDATA_MAX_OUT) {
				err = -EFBIG;
				break;
			}
			cap = cap * 2 > DEBUGDATA_MAX_OUT ? DEBUGDATA_MAX_OUT : cap * 2;
			tmp = realloc(out, cap);
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			out = tmp;
		}
		strm.next_out = (uint8_t *)out + n;
		strm.avail_out = cap - n;
		lr = lzma_code(&strm, LZMA_FINISH);
		n = cap - strm.avail_out;
		if (lr == LZMA_STREAM_END)
			break;
		if (lr != LZMA_OK) {
			err = lr == LZMA_MEM_ERROR || lr == LZMA_MEMLIMIT_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
	}
	if (err) {
		free(out);
		goto out_end;
	}
	*ret = out;
	*ret_len = n;
out_end:
	lzma_end(&strm);
	return err;
}

static int load_elf(struct elf_syms *e, Elf *elf, bool is_debugdata);

/* .gnu_debugdata: an xz-compressed ELF whose .symtab adds what .dynsym lacks */
static int load_debugdata(struct elf_syms *e, Elf_Scn *scn)
{
	Elf_Data *data = elf_rawdata(scn, NULL);
	size_t len = 0;
	char *img = NULL;
	Elf *inner;
	int err;

	if (!data || !data->d_buf || !data->d_size)
		return 0;
	err = xz_decompress(data->d_buf, data->d_size, &img, &len);
	if (err)
		return err == -ENOMEM ? err : 0; /* a bad blob is not fatal */
	inner = elf_memory(img, len);
	if (!inner) {
		free(img);
		return 0;
	}
	err = load_elf(e, inner, true);
	elf_end(inner);
	free(img);
	return err == -ENOMEM ? err : 0;
}

static int load_elf(struct elf_syms *e, Elf *elf, bool is_debugdata)
{
	size_t nsec = 0, shstrndx = 0, nphdr = 0, i;
	Elf_Scn *scn = NULL, *debugdata = NULL;
	bool *exec = NULL;
	GElf_Ehdr eh;
	int err = 0;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (elf_getshdrnum(elf, &nsec) || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	if (nsec > ELF_MAX_SECTIONS)
		return -E2BIG;
	if (!is_debugdata && !elf_getphdrnum(elf, &nphdr)) {
		for (i = 0; i < nphdr && e->nloads < ELF_MAX_LOADS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			e->loads[e->nloads].offset = ph.p_offset;
			e->loads[e->nloads].filesz = ph.p_filesz;
			e->loads[e->nloads].vaddr = ph.p_vaddr;
			e->nloads++;
		}
	}
	exec = calloc(nsec ? nsec : 1, sizeof(*exec));
	if (!exec)
		return -ENOMEM;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		i = elf_ndxscn(scn);
		if (i < nsec)
			exec[i] = sh.sh_flags & SHF_EXECINSTR;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
			err = read_symtab(e, elf, scn, &sh, exec, nsec);
			if (err)
				break;
		} else if (sh.sh_type == SHT_NOTE && !is_debugdata && !e->build_id[0]) {
			read_build_id(e, scn);
		} else if (sh.sh_type == SHT_PROGBITS && !is_debugdata) {
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".gnu_debugdata"))
				debugdata = scn;
		}
	}
	free(exec);
	if (!err && debugdata)
		err = load_debugdata(e, debugdata);
	return err;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* sort, then keep one name per address: the best-ranked alias */
static void finish(struct elf_syms *e)
{
	size_t i, j = 0;

	if (!e->n)
		return;
	qsort(e->syms, e->n, sizeof(*e->syms), cmp_sym);
	for (i = 0; i < e->n; i++) {
		if (j && e->syms[j - 1].addr == e->syms[i].addr) {
			/* an unsized best alias borrows a size from a sized one */
			if (!e->syms[j - 1].size)
				e->syms[j - 1].size = e->syms[i].size;
			continue;
		}
		e->syms[j++] = e->syms[i];
	}
	e->n = j;
}

static int load_common(Elf *elf, struct elf_syms **ret)
{
	struct elf_syms *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	strpool_init(&e->pool, 0);
	err = load_elf(e, elf, false);
	if (err) {
		elf_syms__free(e);
		return err;
	}
	finish(e);
	*ret = e;
	return 0;
}

int elf_syms__load_fd(int fd, struct elf_syms **ret)
{
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	err = load_common(elf, ret);
	elf_end(elf);
	return err;
}

int elf_syms__load_mem(const void *buf, size_t len, struct elf_syms **ret)
{
	char *copy;
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	/* libelf wants a writable image */
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	elf = elf_memory(copy, len);
	if (!elf) {
		free(copy);
		return -ENOEXEC;
	}
	err = load_common(elf, ret);
	elf_end(elf);
	free(copy);
	return err;
}

void elf_syms__free(struct elf_syms *e)
{
	if (!e)
		return;
	free(e->syms);
	strpool_free(&e->pool);
	free(e);
}

int elf_syms__file_to_vaddr(const struct elf_syms *e, __u64 file_off, __u64 *ret_vaddr)
{
	size_t i;

	if (!e->nloads) {
		*ret_vaddr = file_off; /* no program headers: offsets are addresses */
		return 0;
	}
	for (i = 0; i < e->nloads; i++) {
		const struct elf_load *l = &e->loads[i];

		if (file_off >= l->offset && file_off - l->offset < l->filesz) {
			*ret_vaddr = file_off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

static const char *sym_name(struct elf_syms *e, struct elf_sym *s)
{
	char *dm;
	const char *copy;

	if (s->demangled)
		return s->name;
	s->demangled = 1;
	dm = jp_demangle(s->name, false);
	if (!dm)
		return s->name;
	copy = dm[0] ? strpool_add(&e->pool, dm, strlen(dm)) : NULL;
	free(dm);
	if (copy)
		s->name = copy;
	return s->name;
}

const char *elf_syms__find(struct elf_syms *e, __u64 vaddr, __u64 *ret_offset)
{
	size_t lo = 0, hi, i, k;

	if (!e || !e->n || vaddr < e->syms[0].addr)
		return NULL;
	hi = e->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	i = lo;
	if (!e->syms[i].size) {
		__u64 end = i + 1 < e->n ? e->syms[i + 1].addr : e->syms[i].addr + UNSIZED_MAX_SPAN;

		if (vaddr < end && vaddr - e->syms[i].addr < UNSIZED_MAX_SPAN)
			goto found;
	} else if (vaddr - e->syms[i].addr < e->syms[i].size) {
		goto found;
	}
	/* nearest start is too short: maybe an enclosing symbol starts earlier */
	for (k = 1; k <= NESTED_LOOKBACK && k <= lo; k++) {
		const struct elf_sym *s = &e->syms[lo - k];

		if (s->size && vaddr - s->addr < s->size) {
			i = lo - k;
			goto found;
		}
	}
	return NULL;
found:
	*ret_offset = vaddr - e->syms[i].addr;
	return sym_name(e, &e->syms[i]);
}

size_t elf_syms__count(const struct elf_syms *e)
{
	return e ? e->n : 0;
}

const char *elf_syms__build_id(const struct elf_syms *e)
{
	return e ? e->build_id : "";
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * elf_syms.c: an ELF file's function symbols, sorted, plus what maps addresses to them.
 * Files are opened by elf_open.c; named symbols alone are looked up by elf_lookup.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>
#include <lzma.h>

#include "demangle.h"
#include "elf_int.h"
#include "elf_syms.h"
#include "util/strpool.h"

#define DEMANGLE_MAX_INPUT 4096		/* longer names are shown as they are */
/* MiniDebugInfo is a few hundred KiB in practice; refuse decompression bombs */
#define DEBUGDATA_MAX_OUT  (64u << 20)
#define DEBUGDATA_MEMLIMIT (128u << 20)
/* an unsized symbol extends to the next one, but not absurdly far */
#define UNSIZED_MAX_SPAN (64u * 1024)
/* how far back to look for an enclosing symbol when the nearest one is too short */
#define NESTED_LOOKBACK 16

struct elf_sym {
	__u64 addr, size;
	const char *name; /* in a string table copy; replaced by the demangled form on first find */
	__u32 name_off;	  /* st_name: with table, a deterministic tie-break between aliases */
	__u8 table;	  /* which string table copy */
	__u8 rank;	  /* alias preference, lower wins */
	__u8 demangled;	  /* 1 once name was looked at for demangling */
};

/*
 * A symbol table's string table, copied once: every name points into it. Names are
 * never copied per symbol, so symbols sharing one huge name cost that name once.
 */
struct elf_strtab {
	struct elf_strtab *next;
	size_t size;
	char data[]; /* size bytes, the last one NUL */
};

struct elf_load {
	__u64 offset, filesz, vaddr;
};

struct elf_syms {
	struct elf_sym *syms;
	size_t n, cap;
	struct elf_load loads[ELF_MAX_LOADS];
	size_t nloads;
	struct elf_strtab *strtabs;
	__u8 ntables;
	size_t bytes;	     /* held: symbols and string tables, charged against ELF_MAX_BYTES */
	struct strpool pool; /* demangled names */
	__u32 over_budget;   /* tables or symbols left out by a budget */
	bool has_symtab;     /* a full .symtab (or MiniDebugInfo), not only .dynsym */
	char build_id[2 * 64 + 1];
	char debuglink[256]; /* .gnu_debuglink's file name, "" when none */
};

/* .gnu_debuglink: a NUL-terminated file name, then padding and a CRC (not used: build ids are) */
static void read_debuglink(struct elf_syms *e, Elf_Scn *scn)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *name;
	size_t n;

	if (!data || !data->d_buf || !data->d_size)
		return;
	name = data->d_buf;
	n = strnlen(name, data->d_size);
	if (n == data->d_size || n == 0 || n >= sizeof(e->debuglink) || memchr(name, '/', n))
		return; /* unterminated, empty, too long, or a path: not a debuglink name */
	memcpy(e->debuglink, name, n + 1);
}

/* -E2BIG: over a budget (counted; the symbols so far stay) */
static int add_sym(struct elf_syms *e, __u64 addr, __u64 size, const char *name, __u32 name_off,
		   __u8 rank)
{
	struct elf_sym *s;

	if (e->n == ELF_MAX_SYMS)
		return -E2BIG;
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 256;
		struct elf_sym *ns;

		if (cap > ELF_MAX_SYMS)
			cap = ELF_MAX_SYMS;
		if (e->bytes + (cap - e->cap) * sizeof(*ns) > ELF_MAX_BYTES)
			return -E2BIG;
		ns = reallocarray(e->syms, cap, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		e->bytes += (cap - e->cap) * sizeof(*ns);
		e->syms = ns;
		e->cap = cap;
	}
	s = &e->syms[e->n];
	s->name = name;
	s->name_off = name_off;
	s->table = e->ntables;
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

/* the string table a symbol table links to, copied whole (within the budgets), or NULL */
static const struct elf_strtab *copy_strtab(struct elf_syms *e, Elf *elf, size_t ndx)
{
	Elf_Scn *scn = elf_getscn(elf, ndx);
	struct elf_strtab *t;
	Elf_Data *data;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB || !sh.sh_size)
		return NULL;
	if (sh.sh_size > ELF_MAX_TABLE || e->bytes + sh.sh_size + 1 > ELF_MAX_BYTES ||
	    e->ntables == UINT8_MAX) {
		e->over_budget++;
		return NULL;
	}
	/* with ELF_C_READ this is a pread into libelf's buffer: a truncated file fails here */
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size || data->d_size > sh.sh_size)
		return NULL;
	t = malloc(sizeof(*t) + data->d_size + 1);
	if (!t)
		return NULL;
	memcpy(t->data, data->d_buf, data->d_size);
	t->data[data->d_size] = '\0'; /* a name running off the end stops here */
	t->size = data->d_size + 1;
	t->next = e->strtabs;
	e->strtabs = t;
	e->ntables++;
	e->bytes += sizeof(*t) + t->size;
	return t;
}

static int read_symtab(struct elf_syms *e, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       const bool *exec, size_t nsec)
{
	const struct elf_strtab *strs = NULL;
	Elf_Data *data;
	size_t i, count;

	if (!sh->sh_entsize || sh->sh_link >= nsec || !sh->sh_size)
		return 0;
	if (sh->sh_size > ELF_MAX_TABLE) {
		e->over_budget++;
		return 0;
	}
	data = elf_getdata(scn, NULL);
	if (!data)
		return 0;
	count = data->d_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
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
		if (!strs) {
			/* only tables that name something are copied */
			strs = copy_strtab(e, elf, sh->sh_link);
			if (!strs)
				return 0;
		}
		if (!sym.st_name || sym.st_name >= strs->size - 1)
			continue;
		err = add_sym(e, sym.st_value, sym.st_size, strs->data + sym.st_name, sym.st_name,
			      sym_rank(&sym, strs->data + sym.st_name));
		if (err == -E2BIG) {
			e->over_budget++;
			return 0;
		}
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
			if (sh.sh_type == SHT_SYMTAB)
				e->has_symtab = true;
		} else if (sh.sh_type == SHT_NOTE && !is_debugdata && !e->build_id[0]) {
			read_build_id(e, scn);
		} else if (sh.sh_type == SHT_PROGBITS && !is_debugdata) {
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".gnu_debugdata"))
				debugdata = scn;
			else if (name && !strcmp(name, ".gnu_debuglink"))
				read_debuglink(e, scn);
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
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	/*
	 * Bounded: untrusted names may share kilobytes of prefix. Past that, the table and
	 * offset order is as deterministic and costs nothing.
	 */
	c = strncmp(x->name, y->name, 256);
	if (c)
		return c;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return x->name_off < y->name_off ? -1 : (x->name_off > y->name_off ? 1 : 0);
}

/*
 * Only the kept symbols' names stay, in one table of their own, and the symbol array
 * shrinks to them: a string table holds every symbol's name (libjvm's is 2.7 MB, much of
 * it data and local symbols), and the array grew by doubling before aliases went. Done
 * only when it saves memory: names shared by many symbols (an untrusted file can point a
 * million symbols at one long name) would cost more copied, and the sum stops there.
 */
static void compact(struct elf_syms *e)
{
	size_t old = 0, need = 0, off = 0;
	struct elf_strtab *t, *next;
	struct elf_sym *ns;

	for (t = e->strtabs; t; t = t->next)
		old += sizeof(*t) + t->size;
	for (size_t i = 0; i < e->n && need < old; i++)
		need += strnlen(e->syms[i].name, old) + 1;
	if (need + sizeof(*t) < old && (t = malloc(sizeof(*t) + need))) {
		for (size_t i = 0; i < e->n; i++) {
			size_t len = strlen(e->syms[i].name) + 1;

			memcpy(t->data + off, e->syms[i].name, len);
			e->syms[i].name = t->data + off;
			off += len;
		}
		for (struct elf_strtab *o = e->strtabs; o; o = next) {
			next = o->next;
			free(o);
		}
		t->next = NULL;
		t->size = need;
		e->strtabs = t;
		e->bytes = e->bytes - old + sizeof(*t) + need;
	}
	if (e->n < e->cap && (ns = reallocarray(e->syms, e->n, sizeof(*ns)))) {
		e->bytes -= (e->cap - e->n) * sizeof(*ns);
		e->syms = ns;
		e->cap = e->n;
	}
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
	compact(e);
}

static int load_common(Elf *elf, struct elf_syms **ret)
{
	struct elf_syms *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	strpool_init(&e->pool, ELF_MAX_DEMANGLED);
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
	int err = elf_open_fd(fd, &elf);

	if (err)
		return err;
	err = load_common(elf, ret);
	elf_end(elf);
	return err;
}

int elf_syms__load_mem(const void *buf, size_t len, struct elf_syms **ret)
{
	char *copy;
	Elf *elf;
	int err = elf_open_mem(buf, len, &copy, &elf);

	if (err)
		return err;
	err = load_common(elf, ret);
	elf_end(elf);
	free(copy);
	return err;
}

void elf_syms__free(struct elf_syms *e)
{
	struct elf_strtab *t, *next;

	if (!e)
		return;
	for (t = e->strtabs; t; t = next) {
		next = t->next;
		free(t);
	}
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
	if (strnlen(s->name, DEMANGLE_MAX_INPUT) == DEMANGLE_MAX_INPUT)
		return s->name;
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

size_t elf_syms__bytes(const struct elf_syms *e)
{
	return e ? sizeof(*e) + e->bytes + e->pool.total : 0;
}

unsigned int elf_syms__over_budget(const struct elf_syms *e)
{
	return e ? e->over_budget : 0;
}

bool elf_syms__has_symtab(const struct elf_syms *e)
{
	return e && e->has_symtab;
}

const char *elf_syms__debuglink(const struct elf_syms *e)
{
	return e ? e->debuglink : "";
}

const char *elf_syms__build_id(const struct elf_syms *e)
{
	return e ? e->build_id : "";
}

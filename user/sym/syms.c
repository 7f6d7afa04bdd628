// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* syms.c: the symbolizer front: per-pid mapping snapshots over shared, cached ELF tables. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "elf_syms.h"
#include "../clock.h"
#include "ksyms.h"
#include "perfmap.h"
#include "procmaps.h"
#include "strpool.h"
#include "syms.h"

#define RELOAD_INTERVAL_NS_DEFAULT (100ull * 1000 * 1000)
#define HASH_MIN_BUCKETS	   64

/* one file on disk, shared by every process that maps it */
struct dso {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct elf_syms *es; /* NULL when not a readable ELF file */
};

/* one executable mapping of a process */
struct umap {
	__u64 start, end, offset;
	const char *path; /* interned; NULL for anonymous memory */
	struct dso *dso;  /* NULL for anonymous memory or unreadable files */
	enum jp_map_type type;
	bool is_jvm; /* libjvm.so */
};

struct pid_state {
	__u32 pid, nspid;
	struct umap *maps; /* sorted by start */
	size_t n;
	bool has_anon_exec; /* JIT code possible: look for a perf map */
	__u64 maps_read_ns;
	struct perfmap *pm; /* NULL until a perf map was found */
	__u64 pm_read_ns;
};

/* open-addressing hash set of pointers */
struct pset {
	void **slots;
	size_t cap, n; /* cap is 0 or a power of two */
};

struct syms {
	struct ksyms *ksyms;
	struct pid_state **pids; /* sorted by pid */
	size_t npids, cap_pids;
	struct pset dsos;  /* struct dso *, by dev/ino/size/mtime */
	struct pset paths; /* interned mapping paths (char *) */
	struct strpool path_pool;
	struct perfmap **dead_pms; /* perf maps of dropped pids: their names must outlive them */
	size_t ndead, cap_dead;
	struct elf_syms *vdso; /* our own vdso image, the same one the kernel gives everyone */
	bool vdso_tried;
	__u64 reload_interval_ns;
	struct syms_stats stats;
};

/* hashing -------------------------------------------------------------------- */

static __u64 hash_bytes(const void *p, size_t n, __u64 h)
{
	const unsigned char *b = p;

	/* FNV-1a */
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static __u64 dso_hash(const struct dso *d)
{
	__u64 h = 0xcbf29ce484222325ull;

	h = hash_bytes(&d->dev, sizeof(d->dev), h);
	h = hash_bytes(&d->ino, sizeof(d->ino), h);
	h = hash_bytes(&d->size, sizeof(d->size), h);
	h = hash_bytes(&d->mtime.tv_sec, sizeof(d->mtime.tv_sec), h);
	return hash_bytes(&d->mtime.tv_nsec, sizeof(d->mtime.tv_nsec), h);
}

static bool dso_eq(const struct dso *a, const struct dso *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static __u64 str_hash(const char *s)
{
	return hash_bytes(s, strlen(s), 0xcbf29ce484222325ull);
}

typedef __u64 (*pset_hash_fn)(const void *key);
typedef bool (*pset_eq_fn)(const void *a, const void *b);

static __u64 pset_dso_hash(const void *k)
{
	return dso_hash(k);
}

static bool pset_dso_eq(const void *a, const void *b)
{
	return dso_eq(a, b);
}

static __u64 pset_str_hash(const void *k)
{
	return str_hash(k);
}

static bool pset_str_eq(const void *a, const void *b)
{
	return !strcmp(a, b);
}

/* the slot holding key, or the empty slot where it would go */
static void **pset_slot(const struct pset *s, const void *key, pset_hash_fn hash, pset_eq_fn eq)
{
	size_t i = (size_t)hash(key) & (s->cap - 1);

	while (s->slots[i] && !eq(s->slots[i], key))
		i = (i + 1) & (s->cap - 1);
	return &s->slots[i];
}

static void *pset_get(const struct pset *s, const void *key, pset_hash_fn hash, pset_eq_fn eq)
{
	if (!s->cap)
		return NULL;
	return *pset_slot(s, key, hash, eq);
}

/* adds a key known to be absent */
static int pset_add(struct pset *s, void *key, pset_hash_fn hash, pset_eq_fn eq)
{
	if ((s->n + 1) * 2 > s->cap) {
		struct pset ns = {.cap = s->cap ? s->cap * 2 : HASH_MIN_BUCKETS};

		ns.slots = calloc(ns.cap, sizeof(*ns.slots));
		if (!ns.slots)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->slots[i])
				*pset_slot(&ns, s->slots[i], hash, eq) = s->slots[i];
		ns.n = s->n;
		free(s->slots);
		*s = ns;
	}
	*pset_slot(s, key, hash, eq) = key;
	s->n++;
	return 0;
}

static const char *intern_path(struct syms *s, const char *path)
{
	const char *p = pset_get(&s->paths, path, pset_str_hash, pset_str_eq);

	if (p)
		return p;
	p = strpool_add(&s->path_pool, path, strlen(path));
	if (!p || pset_add(&s->paths, (void *)p, pset_str_hash, pset_str_eq))
		return NULL;
	return p;
}

/* files of other processes --------------------------------------------------- */

/*
 * Opens path inside pid's root. With openat2 (5.6+) symlinks resolve inside
 * that root (as the process sees them), never via /proc magic links; with
 * no_symlinks none are followed at all. Older kernels: a plain open below
 * /proc/<pid>/root, with O_NOFOLLOW for the last component when no_symlinks.
 */
static int open_in_root(__u32 pid, const char *path, bool no_symlinks)
{
	struct open_how how = {
		.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
			   (no_symlinks ? RESOLVE_NO_SYMLINKS : 0),
	};
	char buf[4096 + 64];
	int root, fd, err;

	(void)snprintf(buf, sizeof(buf), "/proc/%u/root", pid);
	root = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	err = errno;
	close(root);
	if (fd >= 0)
		return fd;
	if (err != ENOSYS)
		return -err;
	if (snprintf(buf, sizeof(buf), "/proc/%u/root%s", pid, path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	fd = open(buf, (int)how.flags | (no_symlinks ? O_NOFOLLOW : 0));
	return fd < 0 ? -errno : fd;
}

/* a regular file, and the one the mapping names when its inode is known */
static bool fd_is_mapped_file(int fd, const struct jp_map *m, struct stat *st)
{
	if (fstat(fd, st) || !S_ISREG(st->st_mode))
		return false;
	return !m->inode || (__u64)st->st_ino == m->inode;
}

/* the file behind a mapping: via its path in the process's root, else map_files (root only) */
static int open_mapped_file(__u32 pid, const struct jp_map *m, struct stat *st)
{
	char buf[96];
	int fd;

	if (!m->deleted && m->path[0] == '/') {
		fd = open_in_root(pid, m->path, false);
		if (fd >= 0 && fd_is_mapped_file(fd, m, st))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	(void)snprintf(buf, sizeof(buf), "/proc/%u/map_files/%llx-%llx", pid,
		       (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (!fd_is_mapped_file(fd, m, st)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static struct dso *get_dso(struct syms *s, __u32 pid, const struct jp_map *m)
{
	struct dso key = {}, *d;
	struct stat st;
	int fd, err;

	fd = open_mapped_file(pid, m, &st);
	if (fd < 0)
		return NULL;
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.size = st.st_size;
	key.mtime = st.st_mtim;
	d = pset_get(&s->dsos, &key, pset_dso_hash, pset_dso_eq);
	if (d) {
		s->stats.dso_cache_hits++;
		goto out_close;
	}
	d = malloc(sizeof(*d));
	if (!d)
		goto out_close;
	*d = key;
	/* a file that is no ELF is remembered too, so it is not retried */
	err = elf_syms__load_fd(fd, &d->es);
	if (err)
		d->es = NULL;
	if (pset_add(&s->dsos, d, pset_dso_hash, pset_dso_eq)) {
		elf_syms__free(d->es);
		free(d);
		d = NULL;
		goto out_close;
	}
	s->stats.dsos++;
out_close:
	close(fd);
	return d;
}

static struct elf_syms *get_vdso(struct syms *s)
{
	const struct jp_map *m;
	struct jp_maps *mine;
	unsigned long base;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	base = getauxval(AT_SYSINFO_EHDR);
	if (!base || procmaps_read_pid((__u32)getpid(), true, &mine))
		return NULL;
	m = procmaps_find(mine, base);
	if (m && m->type == JP_MAP_SPECIAL && m->path && !strcmp(m->path, "[vdso]"))
		(void)elf_syms__load_mem((const void *)base, m->end - m->start, &s->vdso);
	procmaps_free(mine);
	return s->vdso;
}

static bool path_is_libjvm(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "libjvm.so");
}

/* pids -------------------------------------------------------------------------- */

static __u32 read_nspid(__u32 pid)
{
	char path[64], line[256];
	__u32 nspid = pid;
	FILE *f;

	(void)snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;
		unsigned long v;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* the last field is the pid in the innermost namespace */
		for (p = line + 6; *p; p = end) {
			while (*p == ' ' || *p == '\t')
				p++;
			errno = 0;
			v = strtoul(p, &end, 10);
			if (end == p || errno || v > UINT32_MAX)
				break;
			nspid = (__u32)v;
		}
		break;
	}
	fclose(f);
	return nspid;
}

/* builds ps->maps from a fresh /proc/<pid>/maps; keeps the old one on failure */
static int load_maps(struct syms *s, struct pid_state *ps)
{
	struct jp_maps *jm;
	struct umap *um;
	size_t i;
	int err;

	ps->maps_read_ns = mono_ns();
	err = procmaps_read_pid(ps->pid, true, &jm);
	if (err)
		return err;
	um = calloc(jm->n ? jm->n : 1, sizeof(*um));
	if (!um) {
		procmaps_free(jm);
		return -ENOMEM;
	}
	ps->has_anon_exec = false;
	for (i = 0; i < jm->n; i++) {
		const struct jp_map *m = &jm->maps[i];
		struct umap *u = &um[i];

		u->start = m->start;
		u->end = m->end;
		u->offset = m->offset;
		u->type = m->type;
		u->path = m->path ? intern_path(s, m->path) : NULL;
		if (m->type == JP_MAP_FILE) {
			u->dso = get_dso(s, ps->pid, m);
			u->is_jvm = path_is_libjvm(m->path);
		}
		if (m->type == JP_MAP_ANON || m->type == JP_MAP_ANON_NAMED)
			ps->has_anon_exec = true;
	}
	free(ps->maps);
	ps->maps = um;
	ps->n = jm->n;
	procmaps_free(jm);
	return 0;
}

static void load_perfmap(struct syms *s, struct pid_state *ps)
{
	char path[64];
	int fd, err;

	ps->pm_read_ns = mono_ns();
	(void)snprintf(path, sizeof(path), "/tmp/perf-%u.map", ps->nspid);
	/* written by an unprivileged process: no symlinks anywhere on the way */
	fd = open_in_root(ps->pid, path, true);
	if (fd < 0)
		return;
	if (!ps->pm)
		ps->pm = perfmap__new();
	if (ps->pm) {
		err = perfmap__load_fd(ps->pm, fd);
		if (err >= 0)
			s->stats.perfmap_reloads++;
	}
	close(fd);
}

static size_t pid_index(const struct syms *s, __u32 pid, bool *found)
{
	size_t lo = 0, hi = s->npids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->pids[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->npids && s->pids[lo]->pid == pid;
	return lo;
}

static void pid_state_free(struct pid_state *ps)
{
	if (!ps)
		return;
	free(ps->maps);
	perfmap__free(ps->pm);
	free(ps);
}

int syms__add_pid(struct syms *s, __u32 pid)
{
	struct pid_state *ps;
	bool found;
	size_t i;
	int err;

	i = pid_index(s, pid, &found);
	if (found)
		return 0;
	if (s->npids == s->cap_pids) {
		size_t cap = s->cap_pids ? s->cap_pids * 2 : 64;
		struct pid_state **np = reallocarray(s->pids, cap, sizeof(*np));

		if (!np)
			return -ENOMEM;
		s->pids = np;
		s->cap_pids = cap;
	}
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->pid = pid;
	err = load_maps(s, ps);
	if (err) {
		pid_state_free(ps);
		return err;
	}
	ps->nspid = read_nspid(pid);
	if (ps->has_anon_exec)
		load_perfmap(s, ps);
	memmove(&s->pids[i + 1], &s->pids[i], (s->npids - i) * sizeof(*s->pids));
	s->pids[i] = ps;
	s->npids++;
	s->stats.pids++;
	return 0;
}

void syms__drop_pid(struct syms *s, __u32 pid)
{
	struct pid_state *ps;
	bool found;
	size_t i;

	if (!s)
		return;
	i = pid_index(s, pid, &found);
	if (!found)
		return;
	ps = s->pids[i];
	/* names from its perf map may still be held by callers: park the map */
	if (ps->pm) {
		if (s->ndead == s->cap_dead) {
			size_t cap = s->cap_dead ? s->cap_dead * 2 : 16;
			struct perfmap **nd = reallocarray(s->dead_pms, cap, sizeof(*nd));

			if (!nd)
				return; /* keep the pid rather than free live names */
			s->dead_pms = nd;
			s->cap_dead = cap;
		}
		s->dead_pms[s->ndead++] = ps->pm;
		ps->pm = NULL;
	}
	pid_state_free(ps);
	memmove(&s->pids[i], &s->pids[i + 1], (s->npids - i - 1) * sizeof(*s->pids));
	s->npids--;
}

static const struct umap *find_umap(const struct pid_state *ps, __u64 addr)
{
	size_t lo = 0, hi = ps->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct umap *u = &ps->maps[mid];

		if (addr < u->start)
			hi = mid;
		else if (addr >= u->end)
			lo = mid + 1;
		else
			return u;
	}
	return NULL;
}

static bool due(const struct syms *s, __u64 last_ns)
{
	return mono_ns() - last_ns >= s->reload_interval_ns;
}

/* perf map lookup, re-reading the map (rate-limited) on a miss */
static bool lookup_jit(struct syms *s, struct pid_state *ps, __u64 addr, struct jp_sym *ret)
{
	const char *name;
	__u64 off;

	name = perfmap__find(ps->pm, addr, &off);
	if (!name && due(s, ps->pm_read_ns)) {
		load_perfmap(s, ps);
		name = perfmap__find(ps->pm, addr, &off);
	}
	if (!name)
		return false;
	ret->name = name;
	ret->offset = off;
	ret->dso = "[jit]";
	ret->kind = perfmap_name_is_jvm_stub(name) ? JP_FK_JVM : JP_FK_JIT;
	return true;
}

int syms__user(struct syms *s, __u32 pid, __u64 addr, struct jp_sym *ret)
{
	struct jp_sym r = {.kind = JP_FK_NATIVE};
	const struct umap *u;
	struct pid_state *ps;
	struct elf_syms *es;
	bool found;
	size_t i;
	__u64 vaddr;
	int err;

	i = pid_index(s, pid, &found);
	if (!found) {
		err = syms__add_pid(s, pid);
		if (err)
			return err == -ENOMEM ? err : -ESRCH;
		i = pid_index(s, pid, &found);
	}
	ps = s->pids[i];
	u = find_umap(ps, addr);
	if (!u && due(s, ps->maps_read_ns)) {
		/* dlopen or new JIT space since the snapshot */
		if (!load_maps(s, ps) && ps->has_anon_exec && !ps->pm)
			load_perfmap(s, ps);
		u = find_umap(ps, addr);
	}
	if (!u) {
		if (!lookup_jit(s, ps, addr, &r))
			s->stats.unresolved++;
		goto out;
	}
	switch (u->type) {
	case JP_MAP_ANON:
	case JP_MAP_ANON_NAMED:
		if (!lookup_jit(s, ps, addr, &r)) {
			r.dso = u->path;
			s->stats.unresolved++;
		}
		goto out;
	case JP_MAP_SPECIAL:
		es = u->path && !strcmp(u->path, "[vdso]") ? get_vdso(s) : NULL;
		break;
	default:
		es = u->dso ? u->dso->es : NULL;
		break;
	}
	r.dso = u->path;
	r.kind = u->is_jvm ? JP_FK_JVM : JP_FK_NATIVE;
	/* unnamed: offset is the ELF virtual address (else the file offset), as perf prints it */
	r.offset = addr - u->start + u->offset;
	if (es && !elf_syms__file_to_vaddr(es, r.offset, &vaddr)) {
		r.name = elf_syms__find(es, vaddr, &r.offset);
		if (!r.name)
			r.offset = vaddr;
	}
	if (!r.name)
		s->stats.unresolved++;
out:
	*ret = r;
	return 0;
}

/* kernel ------------------------------------------------------------------------- */

int syms__kernel(struct syms *s, __u64 addr, struct jp_sym *ret)
{
	const char *name, *mod;
	__u64 off;

	if (ksyms__find(s->ksyms, addr, &name, &mod, &off)) {
		s->stats.unresolved++;
		return -ENOENT;
	}
	ret->name = name;
	ret->dso = mod ? mod : "[kernel]";
	ret->offset = off;
	ret->kind = JP_FK_KERNEL;
	return 0;
}

/* lifetime ----------------------------------------------------------------------- */

struct syms *syms__new(const char *kallsyms_path)
{
	struct syms *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	strpool_init(&s->path_pool, 0);
	s->reload_interval_ns = RELOAD_INTERVAL_NS_DEFAULT;
	s->ksyms = ksyms__load_file(kallsyms_path);
	/* without /proc/kallsyms (no permission) user space still resolves */
	if (!s->ksyms && kallsyms_path) {
		err = errno;
		syms__free(s);
		errno = err;
		return NULL;
	}
	return s;
}

void syms__free(struct syms *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->npids; i++)
		pid_state_free(s->pids[i]);
	free(s->pids);
	for (i = 0; i < s->ndead; i++)
		perfmap__free(s->dead_pms[i]);
	free(s->dead_pms);
	for (i = 0; i < s->dsos.cap; i++) {
		struct dso *d = s->dsos.slots[i];

		if (d) {
			elf_syms__free(d->es);
			free(d);
		}
	}
	free(s->dsos.slots);
	free(s->paths.slots);
	strpool_free(&s->path_pool);
	elf_syms__free(s->vdso);
	ksyms__free(s->ksyms);
	free(s);
}

void syms__set_reload_interval_ms(struct syms *s, __u32 ms)
{
	s->reload_interval_ns = (__u64)ms * 1000000ull;
}

void syms__stats(const struct syms *s, struct syms_stats *ret)
{
	*ret = s->stats;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* syms.c: the symbolizer front: per-pid mapping snapshots over shared, cached ELF tables. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "elf_syms.h"
#include "../clock.h"
#include "ksyms.h"
#include "perfmap.h"
#include "procmaps.h"
#include "util/strpool.h"
#include "syms.h"
#include "util/safe_open.h"

#define RELOAD_INTERVAL_NS_DEFAULT (100ull * 1000 * 1000)
#define HASH_MIN_BUCKETS	   64
/*
 * Global budgets over all processes (each file and each perf map has its own, smaller
 * one): past them a file gets no symbols and a perf map is not read further, counted.
 */
#define SYMS_MAX_ELF_BYTES     (1ull << 30)
#define SYMS_MAX_PERFMAP_BYTES (512ull << 20)
/*
 * Versions (size, mtime) of one file (device, inode) whose symbols are kept: a user who
 * rewrites a library in place between the starts of its processes makes every process
 * load a new version, and the old ones stay in use by the processes that mapped them.
 */
#define SYMS_MAX_VERSIONS 4
/* distinct mapping paths kept (a process may map 65k files with 4 KiB paths) */
#define SYMS_MAX_PATH_BYTES (64u << 20)

/* one file on disk, shared by every process that maps it */
struct dso {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct elf_syms *es;  /* NULL when not a readable ELF file */
	struct elf_syms *dbg; /* its separate debug file's symbols (names only), or NULL */
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
	uid_t uid;	   /* effective uid: the only owner its perf map may have */
	struct umap *maps; /* sorted by start */
	size_t n;
	bool has_anon_exec; /* JIT code possible: look for a perf map */
	__u64 maps_read_ns;
	struct perfmap *pm; /* NULL until a perf map was found */
	__u64 pm_read_ns;
	bool no_perfmap; /* its JIT code is named elsewhere (the JVM's agent): never read one */
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
	/*
	 * syms__defer_loads: lookups read no file; what they would have read waits here for
	 * syms__load_wanted (pid, what), at most WANTS_MAX
	 */
	bool defer;
	struct want {
		__u32 pid;
		unsigned int what; /* WANT_* */
	} wants[256];
	size_t nwants;
	__u64 generation;	   /* see syms__generation */
	__u64 elf_bytes, pm_bytes; /* held, against the global budgets */
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
	if (!p) {
		s->stats.paths_over_budget++; /* the frame keeps its name, loses its DSO */
		return NULL;
	}
	if (pset_add(&s->paths, (void *)p, pset_str_hash, pset_str_eq))
		return NULL;
	return p;
}

/* files of other processes --------------------------------------------------- */

/* refusals by the safe-open checks, by kind, for the report */
static void count_refusal(struct syms *s, int err)
{
	switch (err) {
	case -ELOOP:  /* a symlink on the way */
	case -EXDEV:  /* a mount crossed */
	case -EBADFD: /* not a regular file (FIFO, device, directory) */
	case -ESTALE: /* not the inode the mapping names: swapped */
	case -EPERM:  /* wrong owner */
	case -EMLINK: /* another hard link */
		s->stats.unsafe_files++;
		break;
	default:
		break;
	}
}

/*
 * The file behind a mapping. First its path inside the process's root, resolved with no
 * symlink (the kernel's maps path has none) and accepted only if it is the regular file
 * with the device and inode the mapping names; only then opened. Else (deleted, another
 * mount namespace's device numbers, overlayfs) the kernel's own map_files link (root
 * only), which names the mapped inode, checked the same way except for the device
 * (btrfs and overlayfs report other device numbers through stat than through maps).
 */
static int open_mapped_file(struct syms *s, __u32 pid, const struct jp_map *m, struct stat *st)
{
	struct safe_expect exp = {
		.dev = makedev(m->dev_major, m->dev_minor),
		.ino = (ino_t)m->inode,
		.uid = (uid_t)-1,
	};
	char buf[96];
	int root, fd = -ENOENT;

	if (!m->deleted && m->path[0] == '/' && m->inode) {
		(void)snprintf(buf, sizeof(buf), "/proc/%u/root", pid);
		root = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root >= 0) {
			fd = safe_open_at(root, m->path, SAFE_IN_ROOT, &exp, st);
			close(root);
			count_refusal(s, fd);
		}
		if (fd >= 0)
			return fd;
	}
	exp.dev = 0;
	(void)snprintf(buf, sizeof(buf), "/proc/%u/map_files/%llx-%llx", pid,
		       (unsigned long long)m->start, (unsigned long long)m->end);
	fd = safe_open_proc_link(buf, &exp, st);
	count_refusal(s, fd);
	return fd;
}

/* versions of this file (device and inode) held with symbols */
static unsigned int dso_versions(const struct syms *s, const struct dso *key)
{
	unsigned int n = 0;

	for (size_t i = 0; i < s->dsos.cap; i++) {
		const struct dso *d = s->dsos.slots[i];

		if (d && d->es && d->dev == key->dev && d->ino == key->ino)
			n++;
	}
	return n;
}

/*
 * The separate debug file of a library that has only dynamic symbols, as gdb and perf look
 * for it, inside the process's own root: /usr/lib/debug/.build-id/xx/rest.debug, then the
 * .gnu_debuglink name in /usr/lib/debug/DIR/, DIR/.debug/ and DIR/. Taken only when it is a
 * regular file owned by root or by the library's owner, and carries the same build id.
 * Its load addresses are not the library's (its sections are NOBITS), so only its names
 * are used: addresses still go through the library's own program headers.
 */
static struct elf_syms *get_debug_file(struct syms *s, __u32 pid, const struct jp_map *m,
				       const struct elf_syms *es, uid_t lib_uid)
{
	const char *bid = elf_syms__build_id(es), *link = elf_syms__debuglink(es);
	char paths[4][PATH_MAX], buf[64];
	struct elf_syms *dbg = NULL;
	int root, n = 0;

	if (bid[0] && strlen(bid) > 2)
		n += snprintf(paths[n], PATH_MAX, "/usr/lib/debug/.build-id/%.2s/%s.debug", bid,
			      bid + 2) < PATH_MAX;
	if (link[0] && m->path[0] == '/') {
		const char *slash = strrchr(m->path, '/');
		int dlen = (int)(slash - m->path);

		if (dlen < PATH_MAX - 300) { /* room for /usr/lib/debug, /.debug/ and the name */
			n += snprintf(paths[n], PATH_MAX, "/usr/lib/debug%.*s/%s", dlen, m->path,
				      link) < PATH_MAX;
			n += snprintf(paths[n], PATH_MAX, "%.*s/.debug/%s", dlen, m->path, link) <
			     PATH_MAX;
			n += snprintf(paths[n], PATH_MAX, "%.*s/%s", dlen, m->path, link) < PATH_MAX;
		}
	}
	if (!n)
		return NULL;
	snprintf(buf, sizeof(buf), "/proc/%u/root", pid);
	root = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return NULL;
	for (int i = 0; i < n && !dbg; i++) {
		struct safe_expect exp = { .uid = (uid_t)-1, .max_size = 1ull << 30 };
		struct stat st;
		int fd = safe_open_at(root, paths[i], SAFE_IN_ROOT, &exp, &st);

		if (fd < 0)
			continue;
		if ((st.st_uid == 0 || st.st_uid == lib_uid) && !elf_syms__load_fd(fd, &dbg)) {
			/* the very build, and worth it: more names than the library itself has */
			if ((bid[0] && strcmp(bid, elf_syms__build_id(dbg))) ||
			    elf_syms__count(dbg) <= elf_syms__count(es) ||
			    s->elf_bytes + elf_syms__bytes(dbg) > SYMS_MAX_ELF_BYTES) {
				elf_syms__free(dbg);
				dbg = NULL;
			}
		}
		close(fd);
	}
	close(root);
	if (dbg)
		s->stats.debug_files++;
	return dbg;
}

static struct dso *get_dso(struct syms *s, __u32 pid, const struct jp_map *m)
{
	struct dso key = {}, *d;
	struct stat st;
	int fd, err;

	fd = open_mapped_file(s, pid, m, &st);
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
	d->es = NULL;
	d->dbg = NULL;
	if (dso_versions(s, &key) >= SYMS_MAX_VERSIONS) {
		s->stats.elf_over_budget++;
	} else {
		err = elf_syms__load_fd(fd, &d->es);
		if (err)
			d->es = NULL;
	}
	if (d->es && elf_syms__over_budget(d->es))
		s->stats.elf_over_budget++;
	if (d->es && s->elf_bytes + elf_syms__bytes(d->es) > SYMS_MAX_ELF_BYTES) {
		/* remembered without symbols, so it is not read again */
		s->stats.elf_over_budget++;
		elf_syms__free(d->es);
		d->es = NULL;
	}
	s->elf_bytes += elf_syms__bytes(d->es);
	if (d->es && !elf_syms__has_symtab(d->es))
		d->dbg = get_debug_file(s, pid, m, d->es, st.st_uid);
	s->elf_bytes += elf_syms__bytes(d->dbg);
	if (pset_add(&s->dsos, d, pset_dso_hash, pset_dso_eq)) {
		s->elf_bytes -= elf_syms__bytes(d->es) + elf_syms__bytes(d->dbg);
		elf_syms__free(d->es);
		elf_syms__free(d->dbg);
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

/* pid in its own namespace and effective uid (unknown: pid, and an owner no file has) */
static void read_status(struct pid_state *ps)
{
	char path[64], line[256];
	__u32 nspid = ps->pid;
	FILE *f;

	ps->nspid = ps->pid;
	ps->uid = (uid_t)-2;
	(void)snprintf(path, sizeof(path), "/proc/%u/status", ps->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;
		unsigned long v;

		if (!strncmp(line, "Uid:", 4)) {
			unsigned long r, e;

			/* real, effective, saved, fs: files are created with the fsuid */
			if (sscanf(line + 4, "%lu %lu", &r, &e) == 2 && e < UINT32_MAX)
				ps->uid = (uid_t)e;
			continue;
		}
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
	ps->nspid = nspid;
}

/* true when a file mapping of old (both sorted by start) is not in new as it was */
static bool file_maps_lost(const struct umap *old, size_t on, const struct umap *new, size_t nn)
{
	size_t k = 0;

	for (size_t i = 0; i < on; i++) {
		if (!old[i].dso)
			continue;
		while (k < nn && new[k].start < old[i].start)
			k++;
		if (k == nn || new[k].start != old[i].start || new[k].end != old[i].end ||
		    new[k].offset != old[i].offset || new[k].dso != old[i].dso)
			return true;
	}
	return false;
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
	/* what resolved before resolves alike unless a file mapping went or changed */
	if (file_maps_lost(ps->maps, ps->n, um, jm->n))
		s->generation++;
	free(ps->maps);
	ps->maps = um;
	ps->n = jm->n;
	procmaps_free(jm);
	return 0;
}

/*
 * Perf maps are written by the process itself (a JIT, or our agent inside a JVM) as its
 * own user: one owned by anybody else is a plant, never read. Past the global budget a
 * map is not read further.
 */
static void load_perfmap(struct syms *s, struct pid_state *ps)
{
	struct safe_expect exp = {.uid = ps->uid, .one_link = true};
	size_t before;
	char name[64];
	int fd, err;

	ps->pm_read_ns = mono_ns();
	if (ps->no_perfmap)
		return;
	if (s->pm_bytes >= SYMS_MAX_PERFMAP_BYTES) {
		s->stats.perfmap_over_budget++;
		return;
	}
	(void)snprintf(name, sizeof(name), "perf-%u.map", ps->nspid);
	fd = safe_open_proc_tmp(ps->pid, name, 0, &exp, NULL);
	if (fd == -EPERM)
		s->stats.perfmap_not_owned++;
	else
		count_refusal(s, fd);
	if (fd < 0)
		return;
	if (!ps->pm)
		ps->pm = perfmap__new();
	if (ps->pm) {
		before = perfmap__bytes(ps->pm);
		s->stats.perfmap_dropped -= perfmap__dropped(ps->pm);
		err = perfmap__load_fd(ps->pm, fd);
		if (err >= 0)
			s->stats.perfmap_reloads++;
		s->stats.perfmap_dropped += perfmap__dropped(ps->pm);
		s->pm_bytes += perfmap__bytes(ps->pm) - before;
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
	read_status(ps);
	if (ps->has_anon_exec)
		load_perfmap(s, ps);
	memmove(&s->pids[i + 1], &s->pids[i], (s->npids - i) * sizeof(*s->pids));
	s->pids[i] = ps;
	s->npids++;
	s->stats.pids++;
	return 0;
}

void syms__free_dropped(struct syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndead; i++) {
		__u64 b = perfmap__bytes(s->dead_pms[i]);

		s->pm_bytes -= b < s->pm_bytes ? b : s->pm_bytes;
		perfmap__free(s->dead_pms[i]);
	}
	s->ndead = 0;
}

/* names from ps's perf map may still be held by callers: the map waits for syms__free_dropped */
static int park_perfmap(struct syms *s, struct pid_state *ps)
{
	if (!ps->pm)
		return 0;
	if (s->ndead == s->cap_dead) {
		size_t cap = s->cap_dead ? s->cap_dead * 2 : 16;
		struct perfmap **nd = reallocarray(s->dead_pms, cap, sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		s->dead_pms = nd;
		s->cap_dead = cap;
	}
	s->dead_pms[s->ndead++] = ps->pm;
	ps->pm = NULL;
	return 0;
}

void syms__perfmap_off(struct syms *s, __u32 pid)
{
	bool found;
	size_t i;

	if (!s)
		return;
	i = pid_index(s, pid, &found);
	if (!found) {
		if (syms__add_pid(s, pid))
			return;
		i = pid_index(s, pid, &found);
	}
	s->pids[i]->no_perfmap = true;
	(void)park_perfmap(s, s->pids[i]); /* out of memory: the map stays, unread again */
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
	s->generation++;
	ps = s->pids[i];
	if (park_perfmap(s, ps))
		return; /* keep the pid rather than free live names */
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

#define WANT_PID     1u /* the pid's maps and files, first time */
#define WANT_MAPS    2u /* its maps again: a miss */
#define WANT_PERFMAP 4u /* its perf map again: a miss in JIT code */
#define WANTS_MAX    (sizeof(((struct syms *)0)->wants) / sizeof(((struct syms *)0)->wants[0]))

/* a load a lookup would have made, for syms__load_wanted; past WANTS_MAX it is not made */
static void want(struct syms *s, __u32 pid, unsigned int what)
{
	for (size_t i = 0; i < s->nwants; i++)
		if (s->wants[i].pid == pid) {
			s->wants[i].what |= what;
			return;
		}
	if (s->nwants == WANTS_MAX) {
		s->stats.loads_not_wanted++;
		return;
	}
	s->wants[s->nwants].pid = pid;
	s->wants[s->nwants++].what = what;
}

void syms__defer_loads(struct syms *s, bool on)
{
	s->defer = on;
}

void syms__want_pid(struct syms *s, __u32 pid)
{
	bool found;

	(void)pid_index(s, pid, &found);
	if (!found)
		want(s, pid, WANT_PID);
}

size_t syms__load_wanted(struct syms *s)
{
	size_t n = s->nwants;

	s->nwants = 0;
	for (size_t k = 0; k < n; k++) {
		struct want w = s->wants[k];
		struct pid_state *ps;
		bool found;
		size_t i = pid_index(s, w.pid, &found);

		if (!found) {
			(void)syms__add_pid(s, w.pid); /* gone already: its samples stay unnamed */
			continue;
		}
		ps = s->pids[i];
		if ((w.what & WANT_MAPS) && due(s, ps->maps_read_ns) && !load_maps(s, ps) &&
		    ps->has_anon_exec && !ps->pm)
			load_perfmap(s, ps);
		else if ((w.what & WANT_PERFMAP) && ps->has_anon_exec && due(s, ps->pm_read_ns))
			load_perfmap(s, ps);
	}
	return n;
}

/* perf map lookup, re-reading the map (rate-limited) on a miss */
static bool lookup_jit(struct syms *s, struct pid_state *ps, __u64 addr, struct jp_sym *ret)
{
	const char *name;
	__u64 off;

	name = perfmap__find(ps->pm, addr, &off);
	if (!name && s->defer && !ps->no_perfmap && due(s, ps->pm_read_ns)) {
		want(s, ps->pid, WANT_PERFMAP);
	} else if (!name && due(s, ps->pm_read_ns)) {
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

/*
 * The mapping of addr in pid (NULL: none), the pid's maps read again (rate-limited) when
 * none holds it: a dlopen or new JIT space since. *ret_ps: the pid's state. 0 or -errno.
 */
static int user_map(struct syms *s, __u32 pid, __u64 addr, struct pid_state **ret_ps,
		    const struct umap **ret_u, bool *ret_reread)
{
	struct pid_state *ps;
	bool found;
	size_t i;
	int err;

	*ret_reread = false;
	i = pid_index(s, pid, &found);
	if (!found && s->defer) {
		want(s, pid, WANT_PID);
		s->stats.deferred++;
		return -ESRCH;
	}
	if (!found) {
		err = syms__add_pid(s, pid);
		if (err)
			return err == -ENOMEM ? err : -ESRCH;
		i = pid_index(s, pid, &found);
	}
	ps = s->pids[i];
	*ret_ps = ps;
	*ret_u = find_umap(ps, addr);
	if (!*ret_u && s->defer && due(s, ps->maps_read_ns)) {
		want(s, pid, WANT_MAPS);
		s->stats.deferred++;
	} else if (!*ret_u && due(s, ps->maps_read_ns)) {
		*ret_reread = !load_maps(s, ps);
		*ret_u = find_umap(ps, addr);
	}
	return 0;
}

bool syms__user_anon(struct syms *s, __u32 pid, __u64 addr)
{
	const struct umap *u;
	struct pid_state *ps;
	bool reread;

	if (user_map(s, pid, addr, &ps, &u, &reread))
		return true;
	return !u || u->type == JP_MAP_ANON || u->type == JP_MAP_ANON_NAMED;
}

int syms__user(struct syms *s, __u32 pid, __u64 addr, struct jp_sym *ret)
{
	struct jp_sym r = {.kind = JP_FK_NATIVE};
	const struct umap *u;
	struct pid_state *ps;
	struct elf_syms *es, *names = NULL;
	bool reread;
	__u64 vaddr;
	int err;

	err = user_map(s, pid, addr, &ps, &u, &reread);
	if (err)
		return err;
	if (reread && ps->has_anon_exec && !ps->pm)
		load_perfmap(s, ps);
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
		names = u->dso ? u->dso->dbg : NULL;
		break;
	}
	r.dso = u->path;
	r.kind = u->is_jvm ? JP_FK_JVM : JP_FK_NATIVE;
	/* unnamed: offset is the ELF virtual address (else the file offset), as perf prints it */
	r.offset = addr - u->start + u->offset;
	r.file_addr = r.offset;
	if (es && !elf_syms__file_to_vaddr(es, r.offset, &vaddr)) {
		r.file_addr = vaddr;
		if (names)
			r.name = elf_syms__find(names, vaddr, &r.offset);
		if (!r.name)
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
	strpool_init(&s->path_pool, SYMS_MAX_PATH_BYTES);
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

void syms__release(struct syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->npids; i++)
		pid_state_free(s->pids[i]);
	s->npids = 0;
	syms__free_dropped(s);
	for (size_t i = 0; i < s->dsos.cap; i++) {
		struct dso *d = s->dsos.slots[i];

		if (d) {
			elf_syms__free(d->es);
			elf_syms__free(d->dbg);
			free(d);
			s->dsos.slots[i] = NULL;
		}
	}
	s->dsos.n = 0;
	ksyms__free(s->ksyms);
	s->ksyms = NULL;
	s->elf_bytes = s->pm_bytes = 0;
	s->generation++;
}

void syms__free(struct syms *s)
{
	if (!s)
		return;
	syms__release(s);
	free(s->pids);
	free(s->dead_pms);
	free(s->dsos.slots);
	free(s->paths.slots);
	strpool_free(&s->path_pool);
	elf_syms__free(s->vdso);
	free(s);
}

__u64 syms__generation(const struct syms *s)
{
	return s ? s->generation : 0;
}

void syms__set_reload_interval_ms(struct syms *s, __u32 ms)
{
	s->reload_interval_ns = (__u64)ms * 1000000ull;
}

void syms__stats(const struct syms *s, struct syms_stats *ret)
{
	*ret = s->stats;
	ret->elf_bytes = s->elf_bytes;
	ret->perfmap_bytes = s->pm_bytes;
}

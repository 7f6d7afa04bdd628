// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * syms_files.c: the files behind a process's mappings: opened through its root without
 * following links (untrusted), ELF tables parsed once per file (dev, inode, size, mtime)
 * and shared by every process that maps it, separate debug files, our own vdso; mapping
 * paths interned.
 */
#include "sym/syms_int.h"

/* the cache of files, and paths ----------------------------------------------- */

/* a file's identity, hashed with the process's key: paths and files are other users' */
static __u64 dso_hash(const struct dso *d)
{
	__u64 k[5] = {d->dev, d->ino, (__u64)d->size, (__u64)d->mtime.tv_sec,
		      (__u64)d->mtime.tv_nsec};

	return hash_keyed_bytes(k, sizeof(k));
}

static bool dso_eq(const struct dso *a, const struct dso *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* the cached file of key's identity, or NULL (util/hmap: (hash, inode) -> struct dso *) */
static struct dso *dso_find(const struct syms *s, const struct dso *key)
{
	__u64 h = dso_hash(key), *v;

	for (size_t pos = 0; (v = hmap_find_next2(&s->dsos, h, key->ino, &pos));)
		if (dso_eq((const struct dso *)(uintptr_t)*v, key))
			return (struct dso *)(uintptr_t)*v;
	return NULL;
}

const char *sy_intern_path(struct syms *s, const char *path)
{
	const char *p = intern_str(&s->paths, path, strlen(path));

	if (!p)
		s->stats.paths_over_budget++; /* the frame keeps its name, loses its DSO */
	return p;
}

/* files of other processes --------------------------------------------------- */

/* refusals by the safe-open checks, by kind, for the report */
void sy_count_refusal(struct syms *s, int err)
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
			sy_count_refusal(s, fd);
		}
		if (fd >= 0)
			return fd;
	}
	exp.dev = 0;
	(void)snprintf(buf, sizeof(buf), "/proc/%u/map_files/%llx-%llx", pid,
		       (unsigned long long)m->start, (unsigned long long)m->end);
	fd = safe_open_proc_link(buf, &exp, st);
	sy_count_refusal(s, fd);
	return fd;
}

/* versions of this file (device and inode) held with symbols */
static unsigned int dso_versions(const struct syms *s, const struct dso *key)
{
	unsigned int n = 0;

	const __u64 *v;

	for (size_t pos = 0; (v = hmap_next(&s->dsos, &pos, NULL, NULL));) {
		const struct dso *d = (const struct dso *)(uintptr_t)*v;

		if (d->es && d->dev == key->dev && d->ino == key->ino)
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
			n += snprintf(paths[n], PATH_MAX, "%.*s/%s", dlen, m->path, link) <
			     PATH_MAX;
		}
	}
	if (!n)
		return NULL;
	snprintf(buf, sizeof(buf), "/proc/%u/root", pid);
	root = open(buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return NULL;
	for (int i = 0; i < n && !dbg; i++) {
		struct safe_expect exp = {.uid = (uid_t)-1, .max_size = 1ull << 30};
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

/* d's ELF tables (and its debug file's) from fd, within the budgets */
static void dso_load(struct syms *s, struct dso *d, int fd, __u32 pid, const struct jp_map *m,
		     const struct stat *st)
{
	int err;

	d->es = NULL;
	d->dbg = NULL;
	if (dso_versions(s, d) >= SYMS_MAX_VERSIONS) {
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
		d->dbg = get_debug_file(s, pid, m, d->es, st->st_uid);
	s->elf_bytes += elf_syms__bytes(d->dbg);
}

struct dso *sy_get_dso(struct syms *s, __u32 pid, const struct jp_map *m)
{
	struct dso key = {}, *d;
	struct stat st;
	int fd;

	fd = open_mapped_file(s, pid, m, &st);
	if (fd < 0)
		return NULL;
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.size = st.st_size;
	key.mtime = st.st_mtim;
	d = dso_find(s, &key);
	if (d) {
		s->stats.dso_cache_hits++;
		if (d->unloaded) { /* no process mapped it for a while: its tables went */
			dso_load(s, d, fd, pid, m, &st);
			d->unloaded = false;
			s->stats.dsos_reloaded++;
		}
		goto out_close;
	}
	d = malloc(sizeof(*d));
	if (!d)
		goto out_close;
	*d = key;
	/* a file that is no ELF is remembered too, so it is not retried */
	dso_load(s, d, fd, pid, m, &st);
	if (hmap_add2(&s->dsos, dso_hash(d), d->ino, (uintptr_t)d)) {
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

void sy_unload_idle_dsos(struct syms *s, __u64 now)
{
	__u64 *v;

	if (now - s->dso_sweep_ns < DSO_SWEEP_EVERY_NS && now - s->dso_sweep_ns < s->dso_idle_ns)
		return;
	s->dso_sweep_ns = now;
	for (size_t pos = 0; (v = hmap_next(&s->dsos, &pos, NULL, NULL));) {
		struct dso *d = (struct dso *)(uintptr_t)*v;
		__u64 b;

		if (d->refs || d->unloaded || now - d->idle_ns < s->dso_idle_ns)
			continue;
		b = elf_syms__bytes(d->es) + elf_syms__bytes(d->dbg);
		s->elf_bytes -= b < s->elf_bytes ? b : s->elf_bytes;
		elf_syms__free(d->es);
		elf_syms__free(d->dbg);
		d->es = d->dbg = NULL;
		d->unloaded = true;
		s->stats.dsos_unloaded++;
	}
}

struct elf_syms *sy_get_vdso(struct syms *s)
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

bool sy_path_is_libjvm(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "libjvm.so");
}

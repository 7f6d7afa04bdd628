// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * syms.c: the symbolizer front: per-pid mapping snapshots over shared, cached ELF tables
 * (sym/syms_files.c); lookups, and the loads they may leave for later.
 */
#include "sym/syms_int.h"

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

/* true when new holds the very mappings of old (both sorted by start) */
static bool maps_same(const struct umap *old, size_t on, const struct umap *new, size_t nn)
{
	if (on != nn)
		return false;
	for (size_t i = 0; i < on; i++)
		if (old[i].start != new[i].start || old[i].end != new[i].end ||
		    old[i].offset != new[i].offset || old[i].path != new[i].path ||
		    old[i].type != new[i].type || old[i].dso != new[i].dso)
			return false;
	return true;
}

/* builds ps->maps from a fresh /proc/<pid>/maps; keeps the old one on failure */
/* the mappings um[0..n) go: the files they used lose a user */
static void maps_unref(struct umap *um, size_t n, __u64 now)
{
	for (size_t i = 0; i < n; i++)
		if (um[i].dso && !--um[i].dso->refs)
			um[i].dso->idle_ns = now;
}

/*
 * old, from the pid's last read, maps the file new does at the same place: the kernel's
 * device and inode of a mapping that never went (a mapped file's inode cannot be reused)
 */
static bool same_file_map(const struct umap *old, const struct umap *new)
{
	return old->dso && old->type == JP_MAP_FILE && old->start == new->start &&
	       old->end == new->end && old->offset == new->offset && old->path == new->path &&
	       old->inode == new->inode && old->dev_major == new->dev_major &&
	       old->dev_minor == new->dev_minor;
}

static int load_maps(struct syms *s, struct pid_state *ps)
{
	struct jp_maps *jm;
	struct umap *um;
	size_t i, k;
	int err;

	ps->maps_read_ns = mono_ns();
	err = procmaps_read_pid(ps->pid, true, &jm);
	if (err)
		return err;
	s->stats.maps_reads++;
	um = calloc(jm->n ? jm->n : 1, sizeof(*um));
	if (!um) {
		procmaps_free(jm);
		return -ENOMEM;
	}
	ps->has_anon_exec = false;
	for (i = 0, k = 0; i < jm->n; i++) {
		const struct jp_map *m = &jm->maps[i];
		struct umap *u = &um[i];

		u->start = m->start;
		u->end = m->end;
		u->offset = m->offset;
		u->inode = m->inode;
		u->dev_major = m->dev_major;
		u->dev_minor = m->dev_minor;
		u->type = m->type;
		u->path = m->path ? sy_intern_path(s, m->path) : NULL;
		while (k < ps->n && ps->maps[k].start < u->start)
			k++;
		if (m->type == JP_MAP_FILE && k < ps->n && same_file_map(&ps->maps[k], u)) {
			/* mapped there before: the file is the one it was (no open, no stat) */
			u->dso = ps->maps[k].dso;
			u->is_jvm = ps->maps[k].is_jvm;
			u->dso->refs++;
			s->stats.files_kept++;
		} else if (m->type == JP_MAP_FILE) {
			u->dso = sy_get_dso(s, ps->pid, m);
			u->is_jvm = sy_path_is_libjvm(m->path);
			if (u->dso)
				u->dso->refs++;
		}
		if (m->type == JP_MAP_ANON || m->type == JP_MAP_ANON_NAMED)
			ps->has_anon_exec = true;
	}
	/* what resolved before resolves alike unless a file mapping went or changed */
	if (file_maps_lost(ps->maps, ps->n, um, jm->n))
		s->generation++;
	/* a read that found nothing new: the next waits longer (see maps_wait_ns, maps_due) */
	if (ps->maps && maps_same(ps->maps, ps->n, um, jm->n))
		ps->maps_wait_ns = ps->maps_wait_ns * 2 < MAPS_WAIT_MAX_NS ? ps->maps_wait_ns * 2
									   : MAPS_WAIT_MAX_NS;
	else
		ps->maps_wait_ns = s->reload_interval_ns;
	maps_unref(ps->maps, ps->n, ps->maps_read_ns);
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
		sy_count_refusal(s, fd);
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

/* pid's state (util/hmap by pid: O(1) however many processes), NULL when it has none */
static struct pid_state *find_ps(const struct syms *s, __u32 pid)
{
	const __u64 *v = hmap_find(&s->pids, pid);

	return v ? (struct pid_state *)(uintptr_t)*v : NULL;
}

static void pid_state_free(struct pid_state *ps)
{
	if (!ps)
		return;
	maps_unref(ps->maps, ps->n, mono_ns());
	free(ps->maps);
	perfmap__free(ps->pm);
	free(ps);
}

int syms__add_pid(struct syms *s, __u32 pid)
{
	struct pid_state *ps;
	int err;

	if (find_ps(s, pid))
		return 0;
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
	err = hmap_put(&s->pids, pid, (uintptr_t)ps);
	if (err < 0) {
		pid_state_free(ps);
		return -ENOMEM;
	}
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
	/* no name is held here either: files no live process maps lose their tables */
	sy_unload_idle_dsos(s, mono_ns());
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
	struct pid_state *ps;

	if (!s)
		return;
	ps = find_ps(s, pid);
	if (!ps) {
		if (syms__add_pid(s, pid))
			return;
		ps = find_ps(s, pid);
	}
	ps->no_perfmap = true;
	(void)park_perfmap(s, ps); /* out of memory: the map stays, unread again */
}

void syms__drop_pid(struct syms *s, __u32 pid)
{
	struct pid_state *ps;

	if (!s)
		return;
	ps = find_ps(s, pid);
	if (!ps)
		return;
	s->generation++;
	if (park_perfmap(s, ps))
		return; /* keep the pid rather than free live names */
	(void)hmap_del(&s->pids, pid, NULL);
	pid_state_free(ps);
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

/* a miss may read pid's maps again (never sooner than the reload interval) */
static bool maps_due(const struct syms *s, const struct pid_state *ps)
{
	__u64 wait = ps->maps_wait_ns > s->reload_interval_ns ? ps->maps_wait_ns
							      : s->reload_interval_ns;

	return mono_ns() - ps->maps_read_ns >= wait;
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
	if (!find_ps(s, pid))
		want(s, pid, WANT_PID);
}

size_t syms__load_wanted(struct syms *s)
{
	size_t n = s->nwants;

	s->nwants = 0;
	for (size_t k = 0; k < n; k++) {
		struct want w = s->wants[k];
		struct pid_state *ps = find_ps(s, w.pid);

		if (!ps) {
			(void)syms__add_pid(s, w.pid); /* gone already: its samples stay unnamed */
			continue;
		}
		if ((w.what & WANT_MAPS) && maps_due(s, ps) && !load_maps(s, ps) &&
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
	int err;

	*ret_reread = false;
	ps = find_ps(s, pid);
	if (!ps && s->defer) {
		want(s, pid, WANT_PID);
		s->stats.deferred++;
		return -ESRCH;
	}
	if (!ps) {
		err = syms__add_pid(s, pid);
		if (err)
			return err == -ENOMEM ? err : -ESRCH;
		ps = find_ps(s, pid);
	}
	*ret_ps = ps;
	*ret_u = find_umap(ps, addr);
	if (!*ret_u && s->defer && maps_due(s, ps)) {
		want(s, pid, WANT_MAPS);
		s->stats.deferred++;
	} else if (!*ret_u && maps_due(s, ps)) {
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
		es = u->path && !strcmp(u->path, "[vdso]") ? sy_get_vdso(s) : NULL;
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
	intern_init(&s->paths, SYMS_MAX_PATH_BYTES);
	s->reload_interval_ns = RELOAD_INTERVAL_NS_DEFAULT;
	s->dso_idle_ns = DSO_IDLE_NS;
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
	__u64 *v;

	if (!s)
		return;
	for (size_t pos = 0; (v = hmap_next(&s->pids, &pos, NULL, NULL));)
		pid_state_free((struct pid_state *)(uintptr_t)*v);
	hmap_free(&s->pids);
	syms__free_dropped(s);
	for (size_t pos = 0; (v = hmap_next(&s->dsos, &pos, NULL, NULL));) {
		struct dso *d = (struct dso *)(uintptr_t)*v;

		elf_syms__free(d->es);
		elf_syms__free(d->dbg);
		free(d);
	}
	hmap_free(&s->dsos);
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
	free(s->dead_pms);
	intern_free(&s->paths);
	elf_syms__free(s->vdso);
	free(s);
}

__u64 syms__generation(const struct syms *s)
{
	return s ? s->generation : 0;
}

void syms__set_dso_idle_ms(struct syms *s, __u32 ms)
{
	s->dso_idle_ns = (__u64)ms * 1000000;
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

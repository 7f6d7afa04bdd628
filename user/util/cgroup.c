// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroup.c: the cgroup v2 tree: its mount, ids and depths, and the containers named in it. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"

#define WALK_MAX_DEPTH 32
#define WALK_MAX_DIRS  65536
#define WALK_USER_DIRS 4096 /* per non-root owner */
#define WALK_OWNERS    16   /* owners counted one by one; the others share a budget */
#define WALK_PICK_MAX  4096
#define MOUNTINFO_MAX  (1 << 20)
#define CT_ID_LEN      64
#define POD_UID_LEN    36
#define CT_SHORT       12

int cgroup_parse_mountinfo(const char *buf, size_t len, char *ret, size_t retlen)
{
	const char *line, *end = buf + len, *eol;

	for (line = buf; line < end; line = eol + 1) {
		char root[8], mnt[PATH_MAX], fstype[32], *sep, copy[PATH_MAX + 256];
		size_t l, o = 0;

		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		l = (size_t)(eol - line);
		if (l >= sizeof(copy))
			continue;
		memcpy(copy, line, l);
		copy[l] = '\0';
		/* "id parent maj:min root mountpoint opts [optional...] - fstype source super" */
		sep = strstr(copy, " - ");
		if (!sep || sscanf(sep + 3, "%31s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		*sep = '\0';
		if (sscanf(copy, "%*s %*s %*s %7s %4095s", root, mnt) != 2 || strcmp(root, "/"))
			continue;
		/* the kernel escapes space, tab, newline and backslash as \ooo */
		for (const char *p = mnt; *p && o + 1 < retlen; o++) {
			if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' &&
			    p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
				ret[o] =
					(char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
				p += 4;
			} else {
				ret[o] = *p++;
			}
		}
		if (!retlen)
			return -ENOSPC;
		ret[o] = '\0';
		return 0;
	}
	return -ENOENT;
}

int cgroup_find_mount(const char *mountinfo, char *ret, size_t len)
{
	char *buf = malloc(MOUNTINFO_MAX);
	ssize_t n;
	size_t got = 0;
	int fd, err;

	if (!buf)
		return -ENOMEM;
	fd = open(mountinfo, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	while (got < MOUNTINFO_MAX && (n = read(fd, buf + got, MOUNTINFO_MAX - got)) > 0)
		got += (size_t)n;
	close(fd);
	err = cgroup_parse_mountinfo(buf, got, ret, len);
	free(buf);
	return err;
}

static bool is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static size_t hex_run(const char *s)
{
	size_t n = 0;

	while (is_hex((unsigned char)s[n]))
		n++;
	return n;
}

/* s starts with a pod uid (8-4-4-4-12 hex, '-' or '_' between): copied with '-' */
static bool pod_uid(const char *s, char *out)
{
	static const int groups[] = {8, 4, 4, 4, 12};
	size_t o = 0;

	for (int g = 0; g < 5; g++) {
		for (int i = 0; i < groups[g]; i++) {
			if (!is_hex((unsigned char)*s))
				return false;
			out[o++] = *s++;
		}
		if (g < 4) {
			if (*s != '-' && *s != '_')
				return false;
			out[o++] = '-';
			s++;
		}
	}
	out[o] = '\0';
	return !*s || !strcmp(s, ".slice");
}

int cgroup_dir_container(const char *name, char *full, size_t full_len, char *label,
			 size_t label_len)
{
	static const char *const prefixes[] = {"docker-", "cri-containerd-", "crio-", "libpod-",
					       ""};
	char uid[POD_UID_LEN + 1];
	const char *p;

	if (full_len)
		full[0] = '\0';
	if (label_len)
		label[0] = '\0';
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);

		if (strncmp(name, prefixes[i], pl))
			continue;
		p = name + pl;
		if (hex_run(p) != CT_ID_LEN || (p[CT_ID_LEN] && strcmp(p + CT_ID_LEN, ".scope")))
			continue;
		snprintf(full, full_len, "%.*s", CT_ID_LEN, p);
		snprintf(label, label_len, "%.*s", CT_SHORT, p);
		return 1;
	}
	/* kubepods-burstable-pod<uid>.slice (systemd driver), pod<uid> (cgroupfs driver) */
	for (p = name; (p = strstr(p, "pod")); p += 3) {
		if (p != name && p[-1] != '-')
			continue;
		if (!pod_uid(p + 3, uid))
			continue;
		snprintf(full, full_len, "%s", uid);
		snprintf(label, label_len, "pod%s", uid);
		return 2;
	}
	return 0;
}

/* cgroup_path_label, and the container's full id into full ("" for none or a pod) */
static void path_label_full(const char *path, char *label, size_t len, char *full_ret,
			    size_t full_len);

void cgroup_path_label(const char *path, char *label, size_t len)
{
	path_label_full(path, label, len, NULL, 0);
}

static void path_label_full(const char *path, char *label, size_t len, char *full_ret,
			    size_t full_len)
{
	char comp[NAME_MAX + 1], full[72], l[CGROUP_NAME_LEN], ct[CGROUP_NAME_LEN] = "",
							       pod[CGROUP_NAME_LEN] = "";
	const char *p = path, *e;

	if (full_len)
		full_ret[0] = '\0';

	while (*p) {
		while (*p == '/')
			p++;
		e = strchrnul(p, '/');
		if (e > p && (size_t)(e - p) < sizeof(comp)) {
			memcpy(comp, p, (size_t)(e - p));
			comp[e - p] = '\0';
			switch (cgroup_dir_container(comp, full, sizeof(full), l, sizeof(l))) {
			case 1:
				memcpy(ct, l, sizeof(ct));
				if (full_len)
					snprintf(full_ret, full_len, "%.64s", full);
				break;
			case 2:
				memcpy(pod, l, sizeof(pod));
				break;
			}
		}
		p = e;
	}
	snprintf(label, len, "%s", ct[0] ? ct : pod);
}

/* the cgroup id is the directory's kernfs id: its file handle (as libbpf's tests read it) */
static int dir_id(int dirfd, const char *name, __u64 *ret)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 64];
	} h;
	struct stat st;
	int mount_id;

	h.fh.handle_bytes = 64;
	if (!name_to_handle_at(dirfd, name, &h.fh, &mount_id, 0) && h.fh.handle_bytes >= 8) {
		memcpy(ret, h.fh.f_handle, sizeof(*ret));
		return 0;
	}
	/* on 64-bit kernels the inode number is the same id */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*ret = st.st_ino;
	return 0;
}

int cgroup_stat(const char *mount, const char *path, __u64 *ret_id, __u32 *ret_level)
{
	size_t ml = strlen(mount);
	const char *rel = path;
	__u32 level = 0;
	struct stat st;
	char full[PATH_MAX];
	__u64 id;
	int err;

	/*
	 * A path below the mount is taken as it is; any other is relative to the mount, so
	 * the paths /proc/<pid>/cgroup shows ("/system.slice/x.scope", "/") work too.
	 */
	while (ml > 1 && mount[ml - 1] == '/')
		ml--;
	if (ml > 1 && !strncmp(path, mount, ml) && (!path[ml] || path[ml] == '/'))
		rel = path + ml;
	for (const char *p = rel; *p;) {
		const char *e;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		if ((e - p == 1 && p[0] == '.') || (e - p == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL; /* no way out of the tree, and depths stay exact */
		level++;
		p = e;
	}
	if (snprintf(full, sizeof(full), "%s/%s", mount, rel) >= (int)sizeof(full))
		return -ENAMETOOLONG;
	if (stat(full, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	err = dir_id(AT_FDCWD, full, &id);
	if (err)
		return err;
	*ret_id = id;
	*ret_level = level;
	return 0;
}

typedef int (*visit_fn)(const struct cgroup_dir *d, void *ctx);

struct walk {
	visit_fn fn;
	void *ctx;
	size_t dirs;
	unsigned long skipped;
	bool stop;
	unsigned int owners[WALK_OWNERS + 1]; /* [WALK_OWNERS]: all the others */
	size_t owner_dirs[WALK_OWNERS + 1];
	unsigned int nowners;
	unsigned int tree_owner; /* the mount's owner: its directories are not delegated */
	struct cgroup_dir d; /* one, reused: path grows and shrinks with the recursion */
};

/* a directory of a non-root owner: within its owner's budget? */
static bool owner_budget(struct walk *w, unsigned int uid)
{
	unsigned int i;

	if (uid == w->tree_owner)
		return true;
	for (i = 0; i < w->nowners && w->owners[i] != uid; i++)
		;
	if (i == w->nowners) {
		if (w->nowners < WALK_OWNERS)
			w->owners[w->nowners++] = uid;
		else
			i = WALK_OWNERS;
	}
	return ++w->owner_dirs[i] <= WALK_USER_DIRS;
}

/* the label of a container cgroup a user made in a delegated subtree: "<label>~u<uid>" */
static void owner_label(char *label, size_t len, bool delegated, unsigned int uid)
{
	size_t l = strlen(label);

	if (delegated && l && l < len)
		(void)snprintf(label + l, len - l, "~u%u", uid);
}

static int walk_dir(struct walk *w, int dfd, size_t plen, __u32 level)
{
	struct dirent *de;
	DIR *dir;
	int err = 0;

	struct stat dst;
	unsigned int dir_owner;

	dir_owner = fstat(dfd, &dst) ? w->tree_owner : dst.st_uid;
	dir = fdopendir(dfd);
	if (!dir) {
		err = -errno;
		close(dfd);
		return err;
	}
	while (!err && !w->stop && (de = readdir(dir))) {
		struct stat st;
		int cfd;
		size_t nl;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		nl = strlen(de->d_name);
		if (plen + 1 + nl >= sizeof(w->d.path))
			continue;
		if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue; /* removed meanwhile */
		if (!owner_budget(w, st.st_uid)) {
			w->skipped++;
			/* the rest of a user's own directory is the user's too: not read */
			if (st.st_uid == dir_owner)
				break;
			continue;
		}
		if (++w->dirs > WALK_MAX_DIRS) {
			w->skipped++;
			w->stop = true;
			break;
		}
		w->d.path[plen] = '/';
		memcpy(w->d.path + plen + 1, de->d_name, nl + 1);
		w->d.level = level + 1;
		w->d.owner = st.st_uid;
		w->d.delegated = st.st_uid != w->tree_owner;
		if (dir_id(dirfd(dir), de->d_name, &w->d.id))
			continue; /* removed meanwhile */
		cgroup_dir_container(de->d_name, w->d.id_full, sizeof(w->d.id_full), w->d.name,
				     sizeof(w->d.name));
		owner_label(w->d.name, sizeof(w->d.name), w->d.delegated, st.st_uid);
		err = w->fn(&w->d, w->ctx);
		if (err == -E2BIG) { /* the visitor's own budget: what it has stands */
			w->stop = true;
			err = 0;
		}
		if (err || level + 1 >= WALK_MAX_DEPTH)
			continue;
		cfd = openat(dirfd(dir), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		err = walk_dir(w, cfd, plen + 1 + nl, level + 1);
		w->d.path[plen + 1 + nl] = '\0';
	}
	closedir(dir);
	return err;
}

static int walk_tree(const char *mount, visit_fn fn, void *ctx, unsigned long *ret_skipped)
{
	struct walk *w = calloc(1, sizeof(*w));
	size_t ml = strlen(mount);
	int fd, err;

	if (!w)
		return -ENOMEM;
	while (ml > 1 && mount[ml - 1] == '/')
		ml--;
	if (ml >= sizeof(w->d.path)) {
		free(w);
		return -ENAMETOOLONG;
	}
	memcpy(w->d.path, mount, ml);
	w->d.path[ml] = '\0';
	w->fn = fn;
	w->ctx = ctx;
	fd = open(w->d.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		struct stat st;

		w->tree_owner = fstat(fd, &st) ? 0 : st.st_uid;
	}
	err = fd < 0 ? -errno : walk_dir(w, fd, ml, 0);
	if (ret_skipped)
		*ret_skipped = w->skipped;
	free(w);
	return err;
}

struct collect {
	cgroup_pick_fn pick;
	void *ctx;
	struct cgroup_dir *v;
	size_t n, cap;
	bool over;
};

static int collect_one(const struct cgroup_dir *d, void *vctx)
{
	struct collect *c = vctx;

	if (!c->pick(d, c->ctx))
		return 0;
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 8;
		struct cgroup_dir *nv;

		if (nc > WALK_PICK_MAX) {
			c->over = true;
			return -E2BIG;
		}
		nv = realloc(c->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = nc;
	}
	c->v[c->n++] = *d;
	return 0;
}

int cgroup_walk(const char *mount, cgroup_pick_fn fn, void *ctx, struct cgroup_dir **ret,
		unsigned long *ret_skipped)
{
	struct collect c = {.pick = fn, .ctx = ctx};
	unsigned long skipped = 0;
	int err = walk_tree(mount, collect_one, &c, &skipped);

	if (ret_skipped)
		*ret_skipped = skipped + (c.over ? 1 : 0);
	if (err) {
		free(c.v);
		return err;
	}
	*ret = c.v;
	return (int)c.n;
}

static bool prefix_pick(const struct cgroup_dir *d, void *ctx)
{
	const char *prefix = ctx;

	return d->id_full[0] && !strncmp(d->id_full, prefix, strlen(prefix));
}

int cgroup_find_container(const char *mount, const char *prefix, struct cgroup_dir **ret, char *err,
			  size_t errlen)
{
	char want[80];
	struct cgroup_dir *v = NULL;
	size_t o = 0, nids = 0;
	int n;

	if (errlen)
		err[0] = '\0';
	/* ids are lower-case hex; pod uids may be given with '_' as in systemd slice names */
	if (!strncmp(prefix, "pod", 3))
		prefix += 3;
	if (!*prefix || strlen(prefix) >= sizeof(want))
		return -EINVAL;
	for (size_t i = 0; prefix[i]; i++) {
		want[i] = prefix[i] == '_' ? '-' : (char)tolower((unsigned char)prefix[i]);
		want[i + 1] = '\0';
	}
	n = cgroup_walk(mount, prefix_pick, want, &v, NULL);
	if (n < 0)
		return n;
	if (!n) {
		free(v);
		return -ENOENT;
	}
	/* where root's directories match, a user's of the same id are a copy of the name */
	{
		int k = 0;
		bool any_root = false;

		for (int i = 0; i < n; i++)
			any_root |= !v[i].delegated;
		for (int i = 0; i < n; i++)
			if (!any_root || !v[i].delegated)
				v[k++] = v[i];
		n = k;
	}
	for (int i = 0; i < n; i++) {
		bool dup = false;

		for (int k = 0; k < i && !dup; k++)
			dup = !strcmp(v[k].id_full, v[i].id_full);
		if (dup)
			continue;
		if (nids++ < 8 && o < errlen)
			o += (size_t)snprintf(err + o, errlen - o, "%s%s", o ? " " : "",
					      v[i].id_full);
	}
	if (nids > 1) {
		free(v);
		return -EEXIST;
	}
	*ret = v;
	return n;
}

struct name_ent {
	__u64 id;
	char label[CGROUP_NAME_LEN];
	char full[CT_ID_LEN + 1]; /* the container's full id, "" for none */
};

struct cgroup_names {
	char mount[PATH_MAX];
	struct name_ent *v;
	size_t n, cap;
	__u64 last_walk_ns;
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static int names_visit(const struct cgroup_dir *d, void *vctx)
{
	struct cgroup_names *c = vctx;
	size_t ml = strlen(c->mount);

	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 256;
		struct name_ent *nv = realloc(c->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = nc;
	}
	c->v[c->n].id = d->id;
	path_label_full(d->path + ml, c->v[c->n].label, sizeof(c->v[c->n].label), c->v[c->n].full,
			sizeof(c->v[c->n].full));
	owner_label(c->v[c->n].label, sizeof(c->v[c->n].label), d->delegated, d->owner);
	c->n++;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct name_ent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int label_cmp(const void *a, const void *b)
{
	const struct name_ent *x = a, *y = b;
	int r = strcmp(x->label, y->label);

	return r ? r : strcmp(x->full, y->full);
}

/*
 * Two containers whose ids share the first 12 hex digits (and owner) would share a label:
 * anyone can name a cgroup after another's id. Those are labelled with their full id.
 */
static void names_disambiguate(struct cgroup_names *c)
{
	if (!c->n)
		return; /* no container: c->v may be NULL, which qsort must not get */
	qsort(c->v, c->n, sizeof(*c->v), label_cmp);
	for (size_t i = 0; i < c->n;) {
		size_t k = i + 1;
		bool mixed = false;

		while (k < c->n && !strcmp(c->v[k].label, c->v[i].label)) {
			mixed |= strcmp(c->v[k].full, c->v[i].full) != 0;
			k++;
		}
		for (size_t m = i; mixed && m < k; m++) {
			char tail[CGROUP_NAME_LEN];
			size_t sl = strlen(c->v[m].label);

			if (!c->v[m].full[0] || sl < CT_SHORT)
				continue;
			/* the short id, then the owner's mark if any: the full id, the same mark */
			snprintf(tail, sizeof(tail), "%s", c->v[m].label + CT_SHORT);
			snprintf(c->v[m].label, sizeof(c->v[m].label), "%.64s%.20s", c->v[m].full, tail);
		}
		i = k;
	}
}

static void names_refresh(struct cgroup_names *c)
{
	c->n = 0;
	c->last_walk_ns = mono_ns();
	/* a truncated walk (budget) still names what it saw */
	(void)walk_tree(c->mount, names_visit, c, NULL);
	names_disambiguate(c);
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), ent_cmp);
}

struct cgroup_names *cgroup_names__new(const char *mount)
{
	struct cgroup_names *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	snprintf(c->mount, sizeof(c->mount), "%s", mount);
	names_refresh(c);
	return c;
}

void cgroup_names__free(struct cgroup_names *c)
{
	if (!c)
		return;
	free(c->v);
	free(c);
}

static const struct name_ent *names_find(const struct cgroup_names *c, __u64 id)
{
	struct name_ent key = {.id = id};

	return c->n ? bsearch(&key, c->v, c->n, sizeof(*c->v), ent_cmp) : NULL;
}

const char *cgroup_names__get(struct cgroup_names *c, __u64 id)
{
	const struct name_ent *e;

	if (!c || !id)
		return "";
	e = names_find(c, id);
	/* a cgroup created since the last walk: walk again, at most once a second */
	if (!e && mono_ns() - c->last_walk_ns > 1000000000ull) {
		names_refresh(c);
		e = names_find(c, id);
	}
	return e ? e->label : "";
}

__u64 cgroup_names__id(const struct cgroup_names *c, const char *path)
{
	__u32 level;
	__u64 id;

	if (!c || !path || !path[0] || cgroup_stat(c->mount, path, &id, &level))
		return 0;
	return id;
}

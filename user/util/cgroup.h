/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* cgroup.h: the cgroup v2 tree: its mount, ids and depths, and the containers named in it. */
#ifndef JPROF_UTIL_CGROUP_H
#define JPROF_UTIL_CGROUP_H

#include <linux/types.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* a container label: 12-hex short id (the full 64 when two share it), or "pod<uid>" */
#define CGROUP_NAME_LEN 88

/* one directory of the cgroup v2 tree */
struct cgroup_dir {
	char path[PATH_MAX];	    /* absolute, below the mount */
	__u64 id;		    /* cgroup id (what bpf_get_current_cgroup_id returns) */
	__u32 level;		    /* depth: the mount's root is 0 */
	char name[CGROUP_NAME_LEN]; /* container label of the directory itself, "" if none */
	char id_full[72];	    /* the full container id or pod uid that matched, "" if none */
	unsigned int owner;	    /* the directory's owner */
	bool delegated;		    /* owned by another than the tree's owner (root): a user's */
};

/*
 * The cgroup2 mount point from a mountinfo file ("/proc/self/mountinfo"): the first
 * cgroup2 entry whose root is "/". 0, -ENOENT when cgroup v2 is not mounted, -errno.
 */
int cgroup_find_mount(const char *mountinfo, char *ret, size_t len);
/* The same from a mountinfo buffer (untrusted bytes, for tests). */
int cgroup_parse_mountinfo(const char *buf, size_t len, char *ret, size_t retlen);

/*
 * The container a single cgroup directory name stands for: docker-<id>.scope,
 * cri-containerd-<id>.scope, crio-<id>.scope, libpod-<id>.scope or a bare 64-hex <id>
 * (cgroupfs drivers) give the id; kubepods...-pod<uid>.slice or pod<uid> the pod uid
 * ('_' read as '-'). Writes the full id (lower-case) to full and the label (first 12
 * hex of an id, "pod<uid>" of a pod) to label. Returns 1 for a container, 2 for a pod,
 * 0 for anything else (full and label then "").
 */
int cgroup_dir_container(const char *name, char *full, size_t full_len, char *label,
			 size_t label_len);

/*
 * The container label of a cgroup path (relative or absolute): its innermost container
 * component, else its innermost pod, else "" (the host). The cgroup tree's labels
 * (cgroup_walk's name, cgroup_names__get) of a directory owned by another user than the
 * tree's owner (root) end in "~u<uid>": a user's own cgroup named after a real container
 * never shares its label.
 */
void cgroup_path_label(const char *path, char *label, size_t len);

/*
 * The id and depth of the cgroup directory path: below mount when it starts with it, else
 * relative to mount (as /proc/<pid>/cgroup shows paths). 0, -EINVAL for "." or "..", -errno.
 */
int cgroup_stat(const char *mount, const char *path, __u64 *ret_id, __u32 *ret_level);

/*
 * Every directory of the tree below mount for which fn returns true is appended to *ret
 * (malloc'ed; free()). Returns the count or -errno. fn sees each dir with path, id,
 * level, name, id_full and owner filled. The walk streams (one directory open per level)
 * and is bounded: depth 32, 65,536 directories, 4,096 per owner other than the tree's
 * (a user with a delegated subtree cannot hide the rest of the tree), 4,096 picked; past a budget it
 * stops or skips, never fails, and *ret_skipped (may be NULL) says how many directories
 * were not looked at.
 */
typedef bool (*cgroup_pick_fn)(const struct cgroup_dir *d, void *ctx);
int cgroup_walk(const char *mount, cgroup_pick_fn fn, void *ctx, struct cgroup_dir **ret,
		unsigned long *ret_skipped);

/*
 * The directories of the container (or pod) whose id or pod uid starts with prefix
 * (a leading "pod" is allowed). Several directories of the same id are all returned;
 * when some are not delegated (owned by the tree's owner, root), those only: a user's
 * delegated subtree may copy a real container's full id into a name of its own.
 * Returns the count; -ENOENT with none; -EEXIST when several ids match (their full ids,
 * up to 8, space-separated in err). *ret is malloc'ed.
 */
int cgroup_find_container(const char *mount, const char *prefix, struct cgroup_dir **ret, char *err,
			  size_t errlen);

/* id -> container label, learned by walking the tree; misses walk again at most once a second */
struct cgroup_names;
struct cgroup_names *cgroup_names__new(const char *mount); /* NULL + errno */
void cgroup_names__free(struct cgroup_names *n);	   /* NULL-safe */
/* the label of cgroup id ("" for the host or unknown); valid until the next call */
const char *cgroup_names__get(struct cgroup_names *n, __u64 id);
/* the id of a cgroup v2 path as /proc/<pid>/cgroup shows it, 0 when unknown or n is NULL */
__u64 cgroup_names__id(const struct cgroup_names *n, const char *path);

#endif /* JPROF_UTIL_CGROUP_H */

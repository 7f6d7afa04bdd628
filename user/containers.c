// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* containers.c: --cgroup/--container resolved to kernel filter entries; `jprof list --containers`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "log.h"
#include "jvm/discover.h"
#include "util/cgroup.h"
#include "util/ttysafe.h"

static int add_entry(struct ct_filter *f, const char *abs_path, __u64 id, __u32 level)
{
	size_t ml = strlen(f->mount);
	const char *rel;

	for (size_t i = 0; i < f->n; i++)
		if (f->ids[i] == id)
			return 0;
	if (f->n == JP_MAX_CGROUPS)
		return -E2BIG;
	while (ml > 1 && f->mount[ml - 1] == '/')
		ml--;
	rel = abs_path + (ml > 1 ? ml : 0);
	f->paths[f->n] = strdup(*rel ? rel : "/");
	if (!f->paths[f->n])
		return -ENOMEM;
	f->ids[f->n] = id;
	f->levels[f->n] = level;
	f->n++;
	return 0;
}

static int resolve_cgroup(const struct jp_opts *o, struct ct_filter *f)
{
	char abs[8192];
	__u64 id;
	__u32 level;
	int err;

	err = cgroup_stat(f->mount, o->cgroup, &id, &level);
	if (err == -EINVAL) {
		pr_err("--cgroup %s: '.' and '..' are not allowed", o->cgroup);
		return JP_EXIT_USAGE;
	}
	if (err) {
		pr_err("--cgroup %s: no such cgroup under %s (%s)", o->cgroup, f->mount,
		       strerror(-err));
		return JP_EXIT_NO_TARGET;
	}
	if (!strncmp(o->cgroup, f->mount, strlen(f->mount)) &&
	    (!o->cgroup[strlen(f->mount)] || o->cgroup[strlen(f->mount)] == '/'))
		snprintf(abs, sizeof(abs), "%s", o->cgroup);
	else
		snprintf(abs, sizeof(abs), "%s%s%s", f->mount, o->cgroup[0] == '/' ? "" : "/",
			 o->cgroup);
	/* trailing slashes would make the path prefix check miss */
	for (size_t l = strlen(abs); l > 1 && abs[l - 1] == '/'; l--)
		abs[l - 1] = '\0';
	err = add_entry(f, abs, id, level);
	if (err) {
		pr_err("--cgroup %s: %s", o->cgroup, strerror(-err));
		return JP_EXIT_FAILURE;
	}
	return 0;
}

static int resolve_container(const struct jp_opts *o, struct ct_filter *f)
{
	struct cgroup_dir *v = NULL;
	char matches[1024];
	int n, err = 0;

	n = cgroup_find_container(f->mount, o->container, &v, matches, sizeof(matches));
	if (n == -ENOENT) {
		pr_err("--container %s: no such container (no cgroup named after this id or pod "
		       "uid under %s)",
		       o->container, f->mount);
		return JP_EXIT_NO_TARGET;
	}
	if (n == -EEXIST) {
		pr_err("--container %s: ambiguous prefix; it matches %s", o->container, matches);
		return JP_EXIT_USAGE;
	}
	if (n == -EINVAL) {
		pr_err("--container %s: not a container id or pod uid", o->container);
		return JP_EXIT_USAGE;
	}
	if (n < 0) {
		pr_err("--container %s: reading the cgroup tree %s: %s", o->container, f->mount,
		       strerror(-n));
		return JP_EXIT_FAILURE;
	}
	/* several directories of one container (or a pod and its containers): one entry each */
	for (int i = 0; i < n && !err; i++) {
		pr_debug("--container %s: cgroup %s (id %llu, level %u)", o->container, v[i].path,
			 (unsigned long long)v[i].id, v[i].level);
		err = add_entry(f, v[i].path, v[i].id, v[i].level);
	}
	free(v);
	if (err) {
		pr_err("--container %s: %s", o->container, strerror(-err));
		return JP_EXIT_FAILURE;
	}
	return 0;
}

int ct_filter_resolve(const struct jp_opts *o, struct ct_filter **ret)
{
	struct ct_filter *f;
	int err, rc = 0;

	*ret = NULL;
	if (!o->cgroup && !o->container)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f) {
		pr_err("out of memory");
		return JP_EXIT_FAILURE;
	}
	err = cgroup_find_mount("/proc/self/mountinfo", f->mount, sizeof(f->mount));
	if (err) {
		pr_err("%s needs cgroup v2, which is not mounted%s: mount it, e.g. `mount -t "
		       "cgroup2 "
		       "none /sys/fs/cgroup/unified`",
		       o->cgroup ? "--cgroup" : "--container",
		       err == -ENOENT ? "" : " (or /proc/self/mountinfo is unreadable)");
		ct_filter_free(f);
		return JP_EXIT_FAILURE;
	}
	if (o->cgroup)
		rc = resolve_cgroup(o, f);
	if (!rc && o->container)
		rc = resolve_container(o, f);
	if (rc) {
		ct_filter_free(f);
		return rc;
	}
	*ret = f;
	return 0;
}

void ct_filter_free(struct ct_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		free(f->paths[i]);
	free(f);
}

bool ct_filter_has_path(const struct ct_filter *f, const char *path)
{
	if (!f)
		return true;
	for (size_t i = 0; i < f->n; i++) {
		size_t l = strlen(f->paths[i]);

		if (!strcmp(f->paths[i], "/"))
			return path[0] == '/';
		if (!strncmp(path, f->paths[i], l) && (path[l] == '\0' || path[l] == '/'))
			return true;
	}
	return false;
}

static bool pick_named(const struct cgroup_dir *d, void *ctx)
{
	(void)ctx;
	return d->name[0] != '\0';
}

int containers_list_run(const struct jp_opts *o)
{
	struct jvm_info *jvms = NULL;
	struct cgroup_dir *v = NULL;
	char mount[4096], safe[3][1024];
	unsigned long skipped = 0;
	int n, nj, err;

	(void)o;
	err = cgroup_find_mount("/proc/self/mountinfo", mount, sizeof(mount));
	if (err) {
		pr_err("listing containers needs cgroup v2, which is not mounted: mount it, e.g. "
		       "`mount -t cgroup2 none /sys/fs/cgroup/unified`");
		return JP_EXIT_FAILURE;
	}
	n = cgroup_walk(mount, pick_named, NULL, &v, &skipped);
	if (n < 0) {
		pr_err("reading the cgroup tree %s: %s", mount, strerror(-n));
		return JP_EXIT_FAILURE;
	}
	nj = jvm_discover("/proc", &jvms);
	if (nj < 0) {
		pr_warn("reading /proc: %s; JVMs not shown", strerror(-nj));
		nj = 0;
	}
	printf("%-14s %-9s %-6s %s\n", "CONTAINER", "KIND", "JVMS", "CGROUP");
	for (int i = 0; i < n; i++) {
		size_t ml = strlen(mount), pl;
		const char *rel = v[i].path + ml;
		int count = 0;

		pl = strlen(rel);
		for (int k = 0; k < nj; k++)
			if (!strncmp(jvms[k].cgroup, rel, pl) &&
			    (jvms[k].cgroup[pl] == '\0' || jvms[k].cgroup[pl] == '/'))
				count++;
		/* cgroup names are anyone's with a delegated subtree: escaped */
		printf("%-14s %-9s %-6d %s\n", tty_escape(v[i].name, safe[0], sizeof(safe[0]), 0),
		       !strncmp(v[i].name, "pod", 3) ? "pod" : "container", count,
		       tty_escape(rel, safe[1], sizeof(safe[1]), 0));
		for (int k = 0; k < nj; k++)
			if (!strncmp(jvms[k].cgroup, rel, pl) &&
			    (jvms[k].cgroup[pl] == '\0' || jvms[k].cgroup[pl] == '/'))
				printf("    JVM pid %u (nspid %u, user %s, Java %s) %s\n",
				       jvms[k].pid, jvms[k].nspid,
				       tty_escape(jvms[k].user, safe[0], sizeof(safe[0]), 0),
				       tty_escape(jvms[k].version, safe[1], sizeof(safe[1]), 0),
				       tty_escape(jvms[k].main, safe[2], sizeof(safe[2]), 0));
	}
	if (!n)
		printf("(no container cgroups under %s)\n", mount);
	if (skipped)
		pr_warn("%lu cgroup directories not looked at (budget: 65,536 in all, 4,096 per "
			"owner of a delegated subtree); containers there are not listed",
			skipped);
	free(v);
	free(jvms);
	return JP_EXIT_OK;
}

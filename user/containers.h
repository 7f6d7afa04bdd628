/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* containers.h: --cgroup/--container resolved to kernel filter entries; `jprof list --containers`. */
#ifndef JPROF_CONTAINERS_H
#define JPROF_CONTAINERS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "jprof.h"
#include "opts.h"

struct ct_filter {
	char mount[4096];	      /* the cgroup2 mount */
	size_t n;		      /* filter entries */
	__u64 ids[JP_MAX_CGROUPS];    /* cgroup ids */
	__u32 levels[JP_MAX_CGROUPS]; /* their depths (mount = 0) */
	char *paths[JP_MAX_CGROUPS];  /* their paths relative to the mount, "/a/b" (malloc'ed) */
};

/*
 * Resolves o->cgroup and o->container (record) into *ret (malloc'ed), or *ret = NULL
 * when neither is given. Logs one line and returns a JP_EXIT_* code on failure: no
 * cgroup v2 (what to mount), no such cgroup or container (JP_EXIT_NO_TARGET), an
 * ambiguous prefix with its matches (JP_EXIT_USAGE).
 */
int ct_filter_resolve(const struct jp_opts *o, struct ct_filter **ret);
void ct_filter_free(struct ct_filter *f); /* NULL-safe */
/* true when the cgroup v2 path (as in /proc/<pid>/cgroup) is a target or below one */
bool ct_filter_has_path(const struct ct_filter *f, const char *path);

/* `jprof list --containers`: containers on this host with their JVMs. A JP_EXIT_* code. */
int containers_list_run(const struct jp_opts *o);

#endif /* JPROF_CONTAINERS_H */

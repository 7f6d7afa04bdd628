// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_cgroup.c: the parsers of cgroup names and files on untrusted bytes: a mountinfo
 * buffer, a /proc/<pid>/cgroup buffer, and the same bytes as a directory name and a path
 * (users with a delegated subtree choose their cgroups' names).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/discover.h"
#include "util/cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char mnt[256], path[256], full[72], label[CGROUP_NAME_LEN], *s;

	(void)cgroup_parse_mountinfo((const char *)data, size, mnt, sizeof(mnt));
	(void)cgroup_parse_mountinfo((const char *)data, size, mnt, 1);
	jvm_parse_cgroup_v2((const char *)data, size, path, sizeof(path));
	cgroup_path_label(path, label, sizeof(label));
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	(void)cgroup_dir_container(s, full, sizeof(full), label, sizeof(label));
	(void)cgroup_dir_container(s, full, 1, label, 1);
	cgroup_path_label(s, label, sizeof(label));
	cgroup_path_label(s, label, 2);
	free(s);
	return 0;
}

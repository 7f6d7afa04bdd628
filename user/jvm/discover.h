/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* discover.h: finds JVMs (processes mapping libjvm.so) and what jprof needs to know of them. */
#ifndef JPROF_DISCOVER_H
#define JPROF_DISCOVER_H

#include <linux/types.h>
#include <sys/types.h>
#include "util/cgroup.h"

enum jvm_agent_state {
	JVM_AGENT_NONE = 0, /* no jprof agent loaded */
	JVM_AGENT_LOADED,   /* libjprofagent mapped and its channel present */
	JVM_AGENT_NO_ATTACH /* started with -XX:+DisableAttachMechanism */
};

struct jvm_info {
	__u32 pid;	     /* host (init namespace) pid */
	__u32 nspid;	     /* pid in the JVM's own pid namespace (last NSpid field) */
	uid_t uid;	     /* effective uid/gid of the JVM */
	gid_t gid;
	char user[32];	     /* user name, or the uid as text */
	char version[32];    /* e.g. "17.0.15", from the libjvm.so path's release file; "?" if unknown */
	char main[256];	     /* main class or -jar file, from the command line */
	char container[CGROUP_NAME_LEN];/* container / cgroup id when not in the root cgroup's tree, "" otherwise */
	char java_home[256]; /* directory that holds lib/server/libjvm.so, as seen by the JVM */
	enum jvm_agent_state agent;
	char cgroup[256];    /* cgroup v2 path ("0::" line of /proc/<pid>/cgroup), "" if none/too long */
};

/*
 * Reads /proc/<pid> of one process. Returns 0 and fills *ret for a JVM,
 * -ESRCH when the pid does not exist, -ENOEXEC when it is not a JVM.
 * proc_root: "/proc" normally (a fixture directory in tests).
 */
int jvm_probe(const char *proc_root, __u32 pid, struct jvm_info *ret);

/* All JVMs on the host, sorted by pid. *ret is malloc'ed (free() it). Returns count or -errno. */
int jvm_discover(const char *proc_root, struct jvm_info **ret);

/*
 * Opens path (relative or absolute) below root_fd as if root_fd were "/": symlinks,
 * "..", and absolute links stay inside (openat2 RESOLVE_IN_ROOT, kernel 5.6+; older
 * kernels fall back to openat with O_NOFOLLOW on the last component). For files of
 * other processes reached through /proc/<pid>/root. Returns an fd or -errno.
 */
int jvm_open_in_root(int root_fd, const char *path, int flags, mode_t mode);

/* 1 when the process catches signal sig (SigCgt in /proc/<pid>/status), 0 when not, -errno. */
int jvm_signal_caught(const char *proc_root, __u32 pid, int sig);
/* The same through an open /proc/<pid>/status (re-read from offset 0 at each call). */
int jvm_signal_caught_fd(int status_fd, int sig);

/*
 * Supplementary groups of the process (the "Groups:" line of /proc/<pid>/status), at most
 * max. Returns the count, -E2BIG when it has more, -ESRCH when gone, -errno.
 */
int jvm_read_groups(const char *proc_root, __u32 pid, gid_t *groups, int max);

/*
 * Parsers behind jvm_probe(), exposed for tests and fuzzing; inputs are untrusted bytes.
 * jvm_parse_cmdline: NUL-separated argv of a java launcher → main class, "-m" module/class
 * or "-jar" file in main ("" when none), *ret_no_attach = 1 when the last
 * -XX:[+-]DisableAttachMechanism before the main class is "+".
 * jvm_parse_cgroup: /proc/<pid>/cgroup → first 12 chars of the innermost 64-hex container
 * id (docker, containerd, cri-o, podman, kubepods), "" when none.
 */
void jvm_parse_cmdline(const char *buf, size_t len, char *main, size_t main_len,
		       int *ret_no_attach);
void jvm_parse_cgroup(const char *buf, size_t len, char *container, size_t container_len);
/* jvm_parse_cgroup_v2: the path of the "0::" line into path, "" when none or too long. */
void jvm_parse_cgroup_v2(const char *buf, size_t len, char *path, size_t path_len);
/* jvm_parse_groups: a status buffer's "Groups:" line; count, -E2BIG, -ENOENT or -EINVAL. */
int jvm_parse_groups(const char *buf, size_t len, gid_t *groups, int max);

#endif /* JPROF_DISCOVER_H */

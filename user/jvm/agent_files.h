/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* agent_files.h: find a JVM's agent channel files (jprof-<nspid>-<token>.{ring,dict}) through its maps. */
#ifndef JPROF_JVM_AGENT_FILES_H
#define JPROF_JVM_AGENT_FILES_H

#include <linux/types.h>
#include <stddef.h>
#include <sys/types.h>

/* what /proc/<pid>/maps is read for at most: more is not a JVM's (max_map_count is 65530) */
#define JVM_MAPS_MAX_LINES 70000u
#define JVM_MAPS_MAX_BYTES (16u << 20)

struct jvm_chan_files {
	char ring[64]; /* names in the JVM's /tmp */
	char dict[64];
};

/*
 * 1 when path (a maps line's path, or a bare name) ends in "jprof-<nspid>-<token>.ring"
 * (ring.h: JP_CHAN_TOKEN_LEN lowercase hex digits), then *ret_base points at that name;
 * 2 when it ends in "jprof-<nspid>.ring", an agent before JP_RING_VERSION 4; else 0
 */
int jvm_chan_name_match(const char *path, __u32 nspid, const char **ret_base);

/*
 * The channel of the agent that runs in JVM <pid>: the ring it maps (a "(deleted)" one is
 * given up), from /proc/<pid>/maps read within JVM_MAPS_MAX_*. 0 and *ret filled, -ENOENT
 * none mapped (yet), -EPROTO an agent of another version (said once with pr_warn),
 * -E2BIG the budget crossed before one was seen, or -errno.
 */
int jvm_chan_files_find(__u32 pid, __u32 nspid, struct jvm_chan_files *ret);

/* the entries of a JVM's /tmp looked at for stale channel files, at most */
#define JVM_TMP_MAX_ENTRIES 65536u

/*
 * In the JVM's /tmp (tmp_fd): removes the channel files (ring, and the dict of its token)
 * of the JVM's user uid whose ring began before start_ns, the start of the process now
 * in that pid (an earlier one killed with -9 left them). Other users' files are neither
 * opened nor removed. Root only. The number of files removed, or -errno.
 */
int jvm_chan_files_sweep(int tmp_fd, __u32 nspid, uid_t uid, __u64 start_ns);

#endif /* JPROF_JVM_AGENT_FILES_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* procfs.h: small readers of /proc/<pid> files that several modules need. */
#ifndef JPROF_UTIL_PROCFS_H
#define JPROF_UTIL_PROCFS_H

#include <linux/types.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * One read() of a small file (path relative to dir_fd, or AT_FDCWD) into buf, NUL-terminated:
 * its length, or -errno (-EIO: empty or unreadable)
 */
ssize_t proc_read_small(int dir_fd, const char *path, char *buf, size_t size);

/* field 22 of /proc/<pid>/stat: the start time in clock ticks. 0, or -errno (-EIO: unparsable) */
int proc_start_ticks(__u32 pid, __u64 *ret);

/*
 * The state letter of /proc/<pid>/stat (tid 0) or /proc/<pid>/task/<tid>/stat ('R', 'S',
 * 'D', 'Z', ...), -ENOENT when there is no such process or thread, -errno
 */
int proc_state(__u32 pid, __u32 tid);
/* the process has exited: gone, or a zombie its parent has not waited for yet */
bool proc_gone(__u32 pid);

/* when the process started, as CLOCK_MONOTONIC ns, never later than the real start; 0 unknown */
__u64 proc_start_mono_ns(__u32 pid);

/* field 1 of a schedstat file (path relative to dir_fd): the thread's runtime, ns. 0 or -errno */
int proc_runtime_at(int dir_fd, const char *path, __u64 *ret);
/* the thread's CPU time in ns: the scheduler's runtime (/proc/<pid>/task/<tid>/schedstat). 0 or -errno */
int proc_thread_runtime(__u32 pid, __u32 tid, __u64 *ret);

/*
 * the name of thread tid of pid (tid 0: of the process) into comm[16], NUL-padded; empty
 * when unreadable
 */
void proc_comm(__u32 pid, __u32 tid, char comm[16]);

/* a thread of a process in another pid namespace: its tid there, and here */
struct proc_nstid {
	__u32 nstid; /* the last field of its status's NSpid line: its own namespace's */
	__u32 tid;   /* the first: ours (its task directory's name) */
};

/*
 * The threads of a process by their tids in its own pid namespace, from its task directory
 * task_dfd (/proc/<pid>/task, or a fixture): at most cap of them into ret[], sorted by
 * nstid. Every status file is opened without following a link and read bounded; a thread
 * gone meanwhile, or one whose NSpid line does not parse or does not name its directory, is
 * left out (*ret_bad counts those that did not parse). 0 and *ret_n, -E2BIG more threads
 * than cap, -errno. Without NSpid (kernels before 4.1) nstid is tid.
 */
int proc_ns_tids_at(int task_dfd, struct proc_nstid *ret, size_t cap, size_t *ret_n,
		    size_t *ret_bad);
/* the same for /proc/<pid>/task */
int proc_ns_tids(__u32 pid, struct proc_nstid *ret, size_t cap, size_t *ret_n, size_t *ret_bad);
/* the tid here of the thread nstid in m[0..n) (sorted by proc_ns_tids), 0 none */
__u32 proc_nstid_host(const struct proc_nstid *m, size_t n, __u32 nstid);

#endif /* JPROF_UTIL_PROCFS_H */

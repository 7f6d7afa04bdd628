/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* safe_open.h: open a file that another user controls without following, blocking on or mapping it. */
#ifndef JPROF_UTIL_SAFE_OPEN_H
#define JPROF_UTIL_SAFE_OPEN_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* what the file must be; a zero field is not checked, except uid where (uid_t)-1 means "any" */
struct safe_expect {
	dev_t dev;		     /* st_dev, e.g. from /proc/<pid>/maps */
	ino_t ino;		     /* st_ino */
	uid_t uid;		     /* owner; (uid_t)-1: any */
	unsigned long long max_size; /* larger files are refused (-EFBIG) */
	bool one_link; /* no other hard link (-EMLINK): not a link to a file of another
					place (with fs.protected_hardlinks=0 anyone can link any file) */
};

#define SAFE_EXPECT_ANY ((struct safe_expect){.uid = (uid_t)-1})

/* how path is resolved below dirfd (RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS always) */
#define SAFE_BENEATH	0x1u /* RESOLVE_BENEATH: never leave dirfd */
#define SAFE_IN_ROOT	0x2u /* RESOLVE_IN_ROOT: dirfd is "/" for the path */
#define SAFE_SAME_MOUNT 0x4u /* RESOLVE_NO_XDEV: no mount crossed (no bind mount swapped in) */
#define SAFE_RDWR	0x8u /* reopen O_RDWR instead of O_RDONLY */

/*
 * Resolves path below dirfd with O_PATH (which opens nothing: no FIFO, device or tty
 * open ever happens), checks the inode with fstat (a regular file, and *exp), and only
 * then reopens that very inode through /proc/self/fd for reading, O_NONBLOCK|O_NOCTTY|
 * O_CLOEXEC (and O_NOATIME where allowed). Symlinks and magic links are never followed.
 * Returns the fd (stat in *ret_st when not NULL) or -errno: -ELOOP a symlink,
 * -EXDEV a mount crossed, -EBADFD not a regular file, -ESTALE not the expected inode,
 * -EPERM wrong owner, -EMLINK more than one link, -EFBIG too large, -ENOSYS no openat2
 * (kernel < 5.6).
 */
int safe_open_at(int dirfd, const char *path, unsigned int flags, const struct safe_expect *exp,
		 struct stat *ret_st);

/*
 * The same checks for a path the kernel itself resolves (a /proc magic link such as
 * /proc/<pid>/map_files/<range>): followed with O_PATH, checked, reopened.
 */
int safe_open_proc_link(const char *path, const struct safe_expect *exp, struct stat *ret_st);

/*
 * A file the process <pid> writes in its /tmp (perf map, agent channel): "tmp" resolved
 * inside its root without symlinks, then name below it with safe_open_at() and neither
 * symlinks nor mount crossings. flags: SAFE_RDWR or 0.
 */
int safe_open_proc_tmp(unsigned int pid, const char *name, unsigned int flags,
		       const struct safe_expect *exp, struct stat *ret_st);

/* the checks alone, on any fd: 0 or the -errno safe_open_at() gives */
int safe_check_fd(int fd, const struct safe_expect *exp, struct stat *ret_st);

#endif /* JPROF_UTIL_SAFE_OPEN_H */

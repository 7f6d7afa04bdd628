/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * outfile.h: the -o file, written atomically. A regular file (new or old) is written to a
 * temporary file in the same directory and renamed over the name at the end, so a failed
 * or interrupted run leaves the previous file as it was. A device or FIFO (/dev/null, a
 * pipe) is written in place. A symbolic link is followed only where the kernel's own
 * protected_symlinks rule would let the caller follow it: never one planted by another
 * user in a world-writable sticky directory such as /tmp.
 */
#ifndef JPROF_OUTFILE_H
#define JPROF_OUTFILE_H

#include <stdio.h>

struct outfile;

/*
 * Opens path for writing (nothing visible under path yet). 0 and *ret, or -errno with a
 * one-line reason in why (why may be empty: strerror says it then).
 */
int outfile__open(const char *path, struct outfile **ret, char *why, size_t why_len);
/* the stream to write to */
FILE *outfile__stream(const struct outfile *o);
/* flushes, syncs and puts the file in place; 0 or -errno (nothing replaced then). Frees o. */
int outfile__commit(struct outfile *o);
/* drops what was written (the temporary file goes away, the old file stays). NULL-safe. Frees o. */
void outfile__abort(struct outfile *o);

#endif /* JPROF_OUTFILE_H */

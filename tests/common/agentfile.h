/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agentfile.h: the tests' one writer of what an agent writes (jvmagent/ring.h): a ring's
 * header, a dictionary's header and its class records of one method with a line table.
 * Used by tests/unit, tests/fuzz and tests/apps/agentflood.c; not part of jprof.
 */
#ifndef JPROF_TESTS_AGENTFILE_H
#define JPROF_TESTS_AGENTFILE_H

#include <stddef.h>
#include <linux/types.h>

#include "../../jvmagent/ring.h"

/* the i-th (bci, line) pair of a method's line table */
typedef void (*agentfile_line_fn)(void *ctx, __u32 i, __s32 *ret_bci, __s32 *ret_line);

/* a ring header as the agent fills it: the data area of data_size bytes follows it */
void agentfile_ring_hdr(struct jp_ring_hdr *h, __u32 data_size, __u32 pid, __u32 signo,
			__u32 max_depth);

/* a dictionary's header, the first bytes of its file */
void agentfile_dict_hdr(struct jp_dict_hdr *h, __u32 pid);

/*
 * One JP_DICT_CLASS record: class sig (no source file) with one method, id, named name
 * with an empty descriptor, its n_lines (bci, line) pairs from line_of (may be NULL when
 * n_lines is 0). Returns the record (malloc'ed, *ret_len bytes) or NULL when out of memory.
 */
unsigned char *agentfile_class1(const char *sig, __u64 id, const char *name, __u32 n_lines,
				agentfile_line_fn line_of, void *ctx, size_t *ret_len);

/* the same record appended to fd with one write(), as the agent does; 0 or -1 (errno) */
int agentfile_put_class1(int fd, const char *sig, __u64 id, const char *name, __u32 n_lines,
			 agentfile_line_fn line_of, void *ctx);

#endif /* JPROF_TESTS_AGENTFILE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* procmaps.h: parse /proc/<pid>/maps text into a sorted array of mappings. */
#ifndef JPROF_SYM_PROCMAPS_H
#define JPROF_SYM_PROCMAPS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum jp_map_type {
	JP_MAP_FILE = 0,   /* a file path ("/usr/lib/libc.so.6", maybe " (deleted)") */
	JP_MAP_ANON,	   /* no path, or "//anon" */
	JP_MAP_ANON_NAMED, /* "[anon:name]" (prctl PR_SET_VMA_ANON_NAME) or "/memfd:..." */
	JP_MAP_SPECIAL,	   /* "[vdso]", "[heap]", "[stack]", ... */
	JP_MAP_TYPE_MAX
};

#define JP_MAP_R 0x1
#define JP_MAP_W 0x2
#define JP_MAP_X 0x4
#define JP_MAP_P 0x8 /* private (copy on write) */

struct jp_map {
	__u64 start, end; /* [start, end) */
	__u64 offset;	  /* file offset of start */
	__u64 inode;
	__u32 dev_major, dev_minor;
	__u32 perms; /* JP_MAP_* */
	enum jp_map_type type;
	bool deleted; /* path ended in " (deleted)", which is stripped */
	char *path;   /* NULL for JP_MAP_ANON; owned by the jp_maps */
};

struct jp_maps {
	struct jp_map *maps; /* sorted by start, non-overlapping */
	size_t n;
	size_t bad_lines;	      /* malformed lines skipped */
	unsigned long first_bad_line; /* line number of the first, 0 if none (debugging) */
};

/* Parses maps text from a stream or buffer. 0 and *ret, or -errno. only_exec keeps x mappings. */
int procmaps_parse_stream(FILE *f, bool only_exec, struct jp_maps **ret);
int procmaps_parse_buf(const char *buf, size_t len, bool only_exec, struct jp_maps **ret);
/* Reads /proc/<pid>/maps. -ESRCH when the process is gone. */
int procmaps_read_pid(__u32 pid, bool only_exec, struct jp_maps **ret);
void procmaps_free(struct jp_maps *m); /* NULL-safe */

/* The mapping containing addr, or NULL. Binary search. */
const struct jp_map *procmaps_find(const struct jp_maps *m, __u64 addr);

#endif /* JPROF_SYM_PROCMAPS_H */

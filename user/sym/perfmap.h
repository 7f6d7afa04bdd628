/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* perfmap.h: JIT symbols from perf maps (/tmp/perf-<pid>.map: "START SIZE name" lines). */
#ifndef JPROF_SYM_PERFMAP_H
#define JPROF_SYM_PERFMAP_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* a perf map larger than this is read only up to here */
#define JP_PERFMAP_MAX_FILE (256u << 20)

struct perfmap;

/* An empty map. NULL + errno on failure. Not thread-safe: one user at a time. */
struct perfmap *perfmap__new(void);
void perfmap__free(struct perfmap *pm); /* NULL-safe; names it returned die with it */

/*
 * Adds the lines of buf (an untrusted perf map or a piece of one); later entries
 * win over earlier overlapping ones. Malformed lines are counted and skipped.
 * With final false an unterminated last line is left for the next call.
 * Returns the number of bytes consumed, or -errno.
 */
long perfmap__parse_buf(struct perfmap *pm, const char *buf, size_t len, bool final);
/* Adds the lines of a stream, to its end. Returns 0 or -errno. */
int perfmap__parse_stream(struct perfmap *pm, FILE *f);

/*
 * (Re)reads the perf map at path incrementally: only what was appended since
 * the last call. path must be a regular file reached without symlinks (safe_open.h);
 * a different file at path, or one that shrank, starts the map over (names
 * handed out before stay valid). Returns the number of entries added, or -errno.
 */
int perfmap__load_path(struct perfmap *pm, const char *path);
/* Same, from an open file (the caller opened it safely and keeps fd). */
int perfmap__load_fd(struct perfmap *pm, int fd);

/* The name covering addr, with *ret_offset = addr - its start; NULL when none. */
const char *perfmap__find(const struct perfmap *pm, __u64 addr, __u64 *ret_offset);

/* entries (disjoint ranges) held, malformed lines skipped, and the last one's line number */
size_t perfmap__count(const struct perfmap *pm);
size_t perfmap__bad_lines(const struct perfmap *pm);
/* lines left out because the map's entry or name budget was spent */
size_t perfmap__dropped(const struct perfmap *pm);
/* bytes held (entries, names), for the caller's global budget */
size_t perfmap__bytes(const struct perfmap *pm);
unsigned long perfmap__last_bad_line(const struct perfmap *pm);

/* true when a perf-map name is a JVM stub or the interpreter rather than a Java method */
bool perfmap_name_is_jvm_stub(const char *name);

#endif /* JPROF_SYM_PERFMAP_H */

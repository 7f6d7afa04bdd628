/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* out.h: profile writers. Each reads only profile.h and writes to a FILE (a file or open_memstream). */
#ifndef JPROF_OUT_H
#define JPROF_OUT_H

#include <stdio.h>

#include "../profile.h"

enum out_format { OUT_FOLDED = 0, OUT_HTML, OUT_FORMAT_MAX };

/* "folded"/"collapsed"/"txt" -> OUT_FOLDED, "html" -> OUT_HTML; -EINVAL otherwise */
int out_format_parse(const char *name);
/*
 * format from a file name's extension (.folded .collapsed .txt .html .htm); -ENOENT when
 * the name has no extension, -EINVAL when the extension is unknown
 */
int out_format_from_path(const char *path);

/*
 * Folded stacks (FlameGraph): one line per leaf path, frames root first joined by ';',
 * kind suffixes from jp_frame_kind_suffix(), ' ', self weight. Lines sorted. ';' and
 * newlines inside names are replaced. Returns 0 or -errno (write errors included).
 */
int out_folded_write(const struct profile *p, FILE *f);

/* Self-contained interactive HTML flame graph (no network). Returns 0 or -errno. */
int out_html_write(const struct profile *p, FILE *f);

#endif /* JPROF_OUT_H */

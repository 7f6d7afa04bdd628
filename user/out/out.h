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

/* what was recorded, for the writers that show it (HTML header, JFR, pprof comments) */
struct out_meta {
	const char *title;   /* "jprof: CPU + off-CPU" */
	const char *unit;    /* unit of the weights: "samples", "ns", "bytes" */
	const char *host;    /* host name, NULL unknown */
	const char *command; /* the jprof command line, NULL unknown */
	const char *events;  /* "cpu", "cpu,offcpu", ... */
	__u32 freq_hz;	     /* CPU sampling rate, 0 when no CPU samples */
	__u64 start_unix_ns; /* wall-clock start of the recording, 0 unknown */
	__u64 duration_ns;   /* its length, 0 unknown */
	__u64 samples;	     /* samples recorded */
	__u64 lost;	     /* samples lost (ring buffer full, dropped, ...) */
	const char *losses;  /* one line detailing the losses, NULL none */
};

/* Self-contained interactive HTML flame graph (no network). Returns 0 or -errno. */
int out_html_write(const struct profile *p, FILE *f);
/* The same, with a header that says what was recorded (meta may be NULL). */
int out_html_write_meta(const struct profile *p, const struct out_meta *meta, FILE *f);

#endif /* JPROF_OUT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* out.h: profile writers. Each reads only profile.h and writes to a FILE (a file or open_memstream). */
#ifndef JPROF_OUT_H
#define JPROF_OUT_H

#include <stdio.h>

#include "../profile.h"
#include "../model/view.h"

/* the writer table (format.c): one entry per format; adding a format touches one file + it */
enum out_format { OUT_FOLDED = 0, OUT_HTML, OUT_PPROF, OUT_SPEEDSCOPE, OUT_JFR, OUT_FORMAT_MAX };

/* "folded"/"collapsed"/"txt", "html", "pprof", "speedscope", "jfr" -> OUT_*; -EINVAL otherwise */
int out_format_parse(const char *name);
const char *out_format_name(enum out_format fmt);
/*
 * format from a file name's extension (.folded .collapsed .txt .html .htm .pb.gz .pprof
 * .speedscope.json); -ENOENT when the name has no extension, -EINVAL when it is unknown
 */
int out_format_from_path(const char *path);

/*
 * Folded stacks (FlameGraph): one line per leaf path, frames root first joined by ';',
 * kind suffixes from jp_frame_kind_suffix(), ' ', self weight. Lines sorted. ';' and
 * newlines inside names are replaced. Returns 0 or -errno (write errors included).
 */
int out_folded_write(const struct profile *p, FILE *f);

/* what was recorded, for the writers that show it (HTML header, JFR, pprof comments) */
/* one stop-the-world GC pause of a JVM, as its hsperfdata counters showed it */
struct out_gc_pause {
	__u64 start_ns;	   /* since the recording's start (0 if before it) */
	__u64 duration_ns;
	__u32 pid;
	__u32 gc_id;	   /* unique per JVM */
	const char *name;  /* the collector's name ("G1 full collection pauses") */
	const char *cause; /* "System.gc()", "G1 Evacuation Pause", "unknown" */
};

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
	const char *filters; /* what jprof report selected ("--pid 42 --include X"), NULL none */
	/* GC pauses of the recorded JVMs (from their hsperfdata files), for writers that show them */
	const struct out_gc_pause *gc_pauses;
	size_t n_gc_pauses;
};

/* Self-contained interactive HTML flame graph (no network). Returns 0 or -errno. */
int out_html_write(const struct profile *p, FILE *f);
/* The same, with a header that says what was recorded (meta may be NULL). */
int out_html_write_meta(const struct profile *p, const struct out_meta *meta, FILE *f);

/* speedscope's "sampled" JSON profile of the trie (meta may be NULL). Returns 0 or -errno. */
int out_speedscope_write(const struct profile *p, const struct out_meta *meta, FILE *f);

/*
 * The HTML flame graph of a model with times: the trie of v, and when each node's samples
 * happened (the page's timeline, heatmap and range selection). 0 or -errno.
 */
int out_html_write_model(const struct model *m, const struct model_view *v,
			 const struct out_meta *meta, FILE *f);

/*
 * A model with times as speedscope JSON: one "sampled" profile per thread (a folded set of
 * ended programs is one), its samples in time order (then what it has untimed), weighted by
 * the view's columns in their unit (nanoseconds, bytes, or none for counts); Java names dotted
 * when the view says so. 0 or -errno.
 */
int out_speedscope_write_model(const struct model *m, const struct model_view *v,
			       const struct out_meta *meta, FILE *f);

/*
 * The limit hottest functions (by self weight, the view's values), like perf report --stdio:
 * self%, self, total% (each stack counts a function once), total, name [kind]. 0 or -errno.
 */
int out_top_write(const struct model *m, const struct model_view *v, size_t limit, FILE *f);

/* what a writer reads */
struct out_input {
	const struct model *model;   /* the recording; NULL when re-rendering a folded file */
	const struct profile *trie;  /* the flame-graph view; NULL: built from model and view */
	struct model_view view;	     /* values, root frames and names of the view (and pprof) */
	const struct out_meta *meta; /* may be NULL */
};

/* Writes in->model or in->trie in format fmt. -ENOTSUP when fmt needs a model and in has none. */
int out_write(enum out_format fmt, const struct out_input *in, FILE *f);
/*
 * m as pprof, every column it recorded, into a memfd of our own (read back as
 * /proc/self/fd/N by report: jprof dump, report --store --base-since). 0 and *ret_fd, or
 * -errno.
 */
int out_pprof_memfd(const struct model *m, const struct out_meta *meta, int *ret_fd);

#endif /* JPROF_OUT_H */

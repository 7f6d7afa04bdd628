/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * serve.h: `jprof serve`: a local web UI over the daemon's store. GET / is the page (a
 * timeline of the segments, a range brushed on it, filters, the flame graph or the diff of
 * two ranges below); /api/segments lists the segments with their sample counts as JSON;
 * /api/profile and /api/diff answer with what `jprof report --store` writes for a range
 * (HTML, folded, pprof, JFR, speedscope, a top table; a diff: report --store --base-since
 * --base-until), made by a child `jprof report`
 * process with bounded time, memory and output, so a bad segment or a heavy request never
 * takes the server down. Every request needs the token printed at start (or a cookie set
 * from it); the Host header must name the address served (no DNS rebinding).
 */
#ifndef JPROF_SERVE_H
#define JPROF_SERVE_H

#include "opts.h"

#define SERVE_DEFAULT_ADDR "127.0.0.1:7070"

/* runs until SIGINT or SIGTERM; a JP_EXIT_* code */
int serve_run(const struct jp_opts *o, const char *self_exe);

#endif /* JPROF_SERVE_H */

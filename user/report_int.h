/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * report_int.h: what the parts of `jprof report` share (the API is report.h): report.c
 * selects and writes, report_load.c reads a saved recording or a store's segments into a
 * model, with what they say about themselves.
 */
#ifndef JPROF_REPORT_INT_H
#define JPROF_REPORT_INT_H

#include "opts.h"
#include "out/out.h"
#include "model/model.h"

/* what a saved recording says about itself (times, host, command, ...), for report's outputs */
struct report_meta {
	struct out_meta meta;
	struct out_gc_pause *gc; /* malloc'ed */
	char strs[5][1024]; /* report --store: the first segment's strings, copied */
	char filters[1200], filters_now[600];
	bool folded; /* read from folded stacks: numbers of no known unit, read as samples */
	char title[512]; /* the recording's title with report's unit (report_set_unit) */
};

/* the recording in path: a JFR or pprof file (jprof's or another tool's), or folded stacks */
int report_load(const char *path, struct model *m, struct report_meta *rm);
/* report --store: the segments overlapping --since .. --until, merged into m */
int report_load_store(const struct jp_opts *o, struct model *m, struct report_meta *rm);

#endif /* JPROF_REPORT_INT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* report.h: `jprof report`. */
#ifndef JPROF_REPORT_H
#define JPROF_REPORT_H

#include "opts.h"

/*
 * `jprof report`: reads a saved recording (pprof, JFR, folded), applies the filters and
 * writes it in any format, with the recording's own account in the outputs' metadata.
 * Returns a JP_EXIT_* code.
 */
int report_run(const struct jp_opts *o);

#endif /* JPROF_REPORT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* record.h: one recording session: start, poll, stop, write. */
#ifndef JPROF_RECORD_H
#define JPROF_RECORD_H

#include "opts.h"

/* Runs `jprof record`; returns a JP_EXIT_* code. self_dir: directory of the jprof binary. */
int record_run(const struct jp_opts *o, const char *self_dir);

#endif /* JPROF_RECORD_H */

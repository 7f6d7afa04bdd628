/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* dump.h: `jprof dump`: a running daemon's open interval and recent segments, as report. */
#ifndef JPROF_DAEMON_DUMP_H
#define JPROF_DAEMON_DUMP_H

#include "opts.h"

/*
 * Asks the daemon of o->store for its open interval (daemon/ctl.h), merges it with the
 * segments of the last o->last_s seconds before it and writes them as `jprof report` does
 * (o's filters, -o, -f, --top). The output is opened by this process, never by the daemon.
 * Returns a JP_EXIT_* code.
 */
int dump_run(const struct jp_opts *o);
/* `jprof marks`: the marks o->store keeps (dump --mark), a line each. A JP_EXIT_* code. */
int marks_run(const struct jp_opts *o);

#endif /* JPROF_DAEMON_DUMP_H */

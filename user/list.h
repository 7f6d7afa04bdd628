/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* list.h: `jprof list`. */
#ifndef JPROF_LIST_H
#define JPROF_LIST_H

#include "opts.h"

/* `jprof list`: JVMs on this host (--containers: container cgroups). Returns a JP_EXIT_* code. */
int list_run(const struct jp_opts *o);

#endif /* JPROF_LIST_H */

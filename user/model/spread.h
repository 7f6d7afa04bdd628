/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* spread.h: each thread's CPU time spread over its stacks by their samples (see spread.c). */
#ifndef JPROF_MODEL_SPREAD_H
#define JPROF_MODEL_SPREAD_H

#include "model.h"

/* rewrites the rows' JP_VAL_CPU_NS; each thread's total is unchanged. 0 or -ENOMEM */
int model__spread_cpu(struct model *m);

#endif /* JPROF_MODEL_SPREAD_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pprof.h: writes the profile model as gzip'ed profile.proto, for `go tool pprof` and friends. */
#ifndef JPROF_OUT_PPROF_H
#define JPROF_OUT_PPROF_H

#include <stdbool.h>
#include <stdio.h>

#include "../model/model.h"

struct pprof_opts {
	__u32 values;	     /* (1u << JP_VAL_*) columns written as sample types, in enum order */
	bool dotted;	     /* Java names as java.lang.String.hashCode */
	__u64 time_ns;	     /* wall-clock start of the recording (ns since the epoch) */
	__u64 duration_ns;   /* its length */
	__u64 period_ns;     /* CPU sampling period, 0 when no CPU samples */
	const char *comment; /* e.g. the command line; NULL for none */
	/* further comments after it, "jprof:KEY=VALUE" (out_meta's fields, for jprof report) */
	const char *const *notes;
	size_t nnotes;
};

/*
 * Samples carry labels pid, tid (numbers), comm, thread and container (strings). Each
 * Function's system_name is the frame kind (java-jit, java-inlined, java-interpreted, native,
 * kernel, jvm, marker), which pprof has no field for. Returns 0 or -errno.
 */
int out_pprof_write(const struct model *m, const struct pprof_opts *o, FILE *f);

#endif /* JPROF_OUT_PPROF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* filter.h: a copy of the model with only the samples a report asks for. */
#ifndef JPROF_MODEL_FILTER_H
#define JPROF_MODEL_FILTER_H

#include <regex.h>
#include <stddef.h>

#include "model.h"

struct model_filter {
	const __u32 *pids; /* keep these processes (npids 0: all) */
	size_t npids;
	const __u32 *tids; /* keep these threads (ntids 0: all) */
	size_t ntids;
	const char *comm;	/* process name, exact; NULL: any */
	const char *container;	/* container id or name, or a prefix of the id; NULL: any */
	const regex_t *include; /* keep stacks with a frame whose name matches; NULL: all */
	const regex_t *exclude; /* drop stacks with a frame whose name matches */
	/*
	 * keep only the samples whose time slot starts in [since_ns, until_ns) (unix ns), the
	 * untimed left out; both 0: every sample, timed or not
	 */
	__u64 since_ns, until_ns;
};

/*
 * Adds to dst (a new model) the rows of src that pass f, with their tables. Frame names are
 * matched as written in internal form and, for Java, dotted (java.lang.String.hashCode).
 * Returns 0 or -ENOMEM.
 */
int model__filter(const struct model *src, const struct model_filter *f, struct model *dst);

#endif /* JPROF_MODEL_FILTER_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pprof_read.h: reads a pprof profile (jprof's own or another tool's) into the model. */
#ifndef JPROF_PPROF_READ_H
#define JPROF_PPROF_READ_H

#include <linux/types.h>
#include <stddef.h>

#include "model.h"

/*
 * Adds the profile in buf (profile.proto, gzip'ed or not) to m. Sample types named like the
 * model's columns (jp_value_type/unit) fill them; another tool's profile puts its first
 * column into JP_VAL_CPU_SAMPLES. Labels pid, tid, comm, thread and container are kept;
 * function system names give frame kinds. Returns 0, -ENOMEM, or -EINVAL with the reason in
 * why (malformed, or over one of the budgets: 256 MiB uncompressed, 4Mi samples, 2Mi strings,
 * locations and functions, 64Ki mappings, 4Mi location lines, 8192 frames a sample).
 */
int model__read_pprof(struct model *m, const void *buf, size_t len, char *why, size_t why_len);

#define PPROF_INFO_COMMENTS 16

/* what the profile says about itself, beside its samples */
struct pprof_read_info {
	__u64 time_ns;	   /* time_nanos: its start, ns since the epoch; 0 unknown */
	__u64 duration_ns; /* duration_nanos */
	__u64 period;	   /* period, in period_type's unit (jprof: CPU nanoseconds) */
	/* comment strings, the first PPROF_INFO_COMMENTS (jprof: its command, then jprof:KEY=VALUE) */
	const char *comments[PPROF_INFO_COMMENTS];
	size_t ncomments;
};

/* model__read_pprof, and the profile's own account into *info (its strings are m's) */
int model__read_pprof_info(struct model *m, const void *buf, size_t len,
			   struct pprof_read_info *info, char *why, size_t why_len);

/* the value of jprof's comment "jprof:KEY=VALUE" in info, NULL (0) when it has none */
const char *pprof_info_str(const struct pprof_read_info *info, const char *key);
__u64 pprof_info_u64(const struct pprof_read_info *info, const char *key);

#endif /* JPROF_PPROF_READ_H */

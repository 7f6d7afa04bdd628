/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* capture.h: runs a profile writer into memory, for the unit tests of writers and the join. */
#ifndef JPROF_CAPTURE_H
#define JPROF_CAPTURE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "profile.h"

typedef int (*profile_writer_fn)(const struct profile *p, FILE *f);

/* the writer's output as a string (free() it); NULL on error, which *ret_err says */
static inline char *capture(profile_writer_fn write, const struct profile *p, int *ret_err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		*ret_err = -errno;
		return NULL;
	}
	*ret_err = write(p, f);
	fclose(f);
	if (*ret_err) {
		free(buf);
		return NULL;
	}
	return buf;
}

#endif /* JPROF_CAPTURE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pprof_merge.h: pprof profiles (a store's segments) read one after another straight into one
 * model, each whole or not at all, without a model of their own to copy from.
 */
#ifndef JPROF_PPROF_MERGE_H
#define JPROF_PPROF_MERGE_H

#include <stddef.h>

#include "model.h"
#include "pprof_read.h"

struct pprof_merge;

/* a merge into m (not owned: it must outlive the merge); NULL + errno */
struct pprof_merge *pprof_merge__new(struct model *m);
void pprof_merge__free(struct pprof_merge *pm); /* NULL-safe; the model stays */

/*
 * Adds the profile in buf to the model: what model__read_pprof_info into a model of its own
 * and model__filter of that (no filter) into this one would add, the same tables, ids, rows
 * and times, the samples of no value left out. The file is checked whole first: a malformed
 * one (cut short, corrupt, over one of the reader's budgets) is refused with -EINVAL and why,
 * and the model is as it was. -ENOMEM, or -ENOSPC (the model's budget): the model may hold
 * part of the file. *info as model__read_pprof_info says it; its strings are valid until the
 * next call.
 */
int pprof_merge__add(struct pprof_merge *pm, const void *buf, size_t len,
		     struct pprof_read_info *info, char *why, size_t why_len);

/*
 * pprof_merge__add in two steps, so that the next file can be read while one is added (a
 * store's range, store_load.c): prepare reads and checks, touching no merge or model (any
 * thread), add_file adds (the merge's thread).
 */
struct pprof_merge_file;
/*
 * Reads and checks the profile in buf (a malloc'ed buffer, the result's from here on, freed
 * with it even on error): 0 and *ret, or -EINVAL with why (refused, as pprof_merge__add), or
 * -ENOMEM
 */
int pprof_merge_file__prepare(void *buf, size_t len, struct pprof_merge_file **ret, char *why,
			      size_t why_len);
/* adds it as pprof_merge__add does, and frees it; info as there (valid until the next call) */
int pprof_merge__add_file(struct pprof_merge *pm, struct pprof_merge_file *pf,
			  struct pprof_read_info *info);
void pprof_merge_file__free(struct pprof_merge_file *pf); /* not added; NULL-safe */

#endif /* JPROF_PPROF_MERGE_H */

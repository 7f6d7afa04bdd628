/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * intern.h: the tree's one string interner: a string's bytes to one stable copy and a dense
 * id (0, 1, 2... in first-seen order), built on hmap (keyed: names another user writes
 * cannot be aimed at one slot) and strpool (copies never move until intern_free). Strings
 * whose hashes collide are all kept, each its own id. A byte budget bounds copies and index.
 * Not thread-safe. The struct is embedded by its users; its fields are private to intern.c.
 */
#ifndef JPROF_UTIL_INTERN_H
#define JPROF_UTIL_INTERN_H

#include <stddef.h>

#include "util/hmap.h"
#include "util/strpool.h"

struct intern {
	struct hmap map; /* (keyed hash of the bytes, length) -> id */
	struct strpool pool;
	const char **strs; /* strs[id] */
	size_t n, cap;
	size_t max_bytes; /* 0: no limit */
	size_t map_bytes; /* what map holds, as charged */
};

/* an empty interner (allocates nothing); max_bytes: its budget, 0 for none */
void intern_init(struct intern *t, size_t max_bytes);
/* frees everything: the interner is empty and usable again, the copies are gone. NULL-safe */
void intern_free(struct intern *t);
/*
 * The id of s[0..n) (s need not be NUL-terminated; its copy is, after the n bytes), added
 * when new; -ENOMEM, or -ENOSPC over the budget (or n of 1 MiB and more, as strpool).
 */
long intern_id(struct intern *t, const char *s, size_t n);
/* the stable copy of s[0..n), added when new; NULL when intern_id would fail */
const char *intern_str(struct intern *t, const char *s, size_t n);
/* the id of s[0..n) if it is in, else -ENOENT */
long intern_find(const struct intern *t, const char *s, size_t n);
/* the copy of id (NULL when id is not one) */
const char *intern_get(const struct intern *t, size_t id);
/* strings in */
size_t intern_count(const struct intern *t);
/* bytes held: copies (in strpool's blocks) and the index */
size_t intern_bytes(const struct intern *t);

#endif /* JPROF_UTIL_INTERN_H */

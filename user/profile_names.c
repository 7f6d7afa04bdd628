// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profile_names.c: the trie's interned names, on the tree's one interner (util/intern:
 * hmap by keyed hash, copies in strpool, freed with the profile)
 */
#include <string.h>

#include "profile.h"
#include "profile_int.h"

void pf_names_init(struct intern *t)
{
	intern_init(t, 0); /* bounded by its sources: the model's budget, a read file's size */
}

/* returns the interned copy of s, or NULL when out of memory */
const char *pf_names_intern(struct intern *t, const char *s)
{
	return intern_str(t, s, strlen(s));
}

void pf_names_free(struct intern *t)
{
	intern_free(t);
}

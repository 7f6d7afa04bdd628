/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hashkey.h: a secret per-process key for hash tables whose keys another user chooses
 * (method and thread ids, tags, names): with it they cannot aim their keys at one slot
 * and make each lookup linear in what they wrote.
 */
#ifndef JPROF_HASHKEY_H
#define JPROF_HASHKEY_H

#include <linux/types.h>

/* the key: random, odd, the same for the whole process (thread-safe) */
__u64 hash_key(void);
/* x mixed with the key (a bijection of x for a given key) */
__u64 hash_keyed(__u64 x);

#endif /* JPROF_HASHKEY_H */

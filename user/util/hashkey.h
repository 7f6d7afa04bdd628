/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hashkey.h: a secret per-process key for hash tables whose keys another user chooses
 * (method and thread ids, tags, names): with it they cannot aim their keys at one slot
 * and make each lookup linear in what they wrote.
 */
#ifndef JPROF_HASHKEY_H
#define JPROF_HASHKEY_H

#include <linux/types.h>
#include <stddef.h>

/* the key: random, odd, the same for the whole process (thread-safe) */
__u64 hash_key(void);
/* x mixed with the key (a bijection of x for a given key) */
__u64 hash_keyed(__u64 x);
/*
 * n bytes at p hashed with the key, a word at a time through hash_keyed: equal bytes hash
 * equal; another user cannot compute which strings share a slot (it is no MAC: it only
 * has to keep the key out of their reach)
 */
__u64 hash_keyed_bytes(const void *p, size_t n);

#endif /* JPROF_HASHKEY_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hmap.h: the tree's one hash map. Keys are a u64 or a (u64, u64) pair, values a u64 (a
 * number, an index into the caller's array, or a pointer through uintptr_t). Open
 * addressing, linear probing, deletion by shifting the entries after a hole back (no
 * tombstones: a map where keys come and go for months stays as long as the live ones
 * need); it grows at 1/2 load and shrinks when under 1/8 full. Slots are placed by
 * hash_keyed (util/hashkey.h): keys another user chooses (pids, thread and method ids,
 * tags, string hashes) cannot be aimed at one run of slots.
 *
 * Find, put and delete are O(1) expected. A value's address, as find and get return it,
 * stays valid until the next put, get that adds, or delete. Not thread-safe.
 * The struct is embedded by its users; its fields are private to hmap.c.
 */
#ifndef JPROF_UTIL_HMAP_H
#define JPROF_UTIL_HMAP_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct hmap_ent {
	__u64 k1, k2, val;
};

/*
 * Charges (delta > 0) or gives back (delta < 0) the bytes of the map's arrays, before it
 * allocates and after it frees: 0, or nonzero to refuse (the change fails with -ENOSPC).
 */
typedef int (*hmap_charge_fn)(void *ctx, long delta);

struct hmap {
	struct hmap_ent *ents;
	__u64 *used; /* a bit per slot */
	size_t cap, n;
	size_t min_cap; /* a power of 2: the first allocation, and no shrinking below */
	size_t max_n;	/* entries at most (0: no limit); past it adds fail with -ENOSPC */
	unsigned int shift;
	bool no_shrink; /* set while hmap_filter runs */
	hmap_charge_fn charge;
	void *charge_ctx;
};

/*
 * an empty map (allocates nothing); min_cap is rounded up to a power of 2 (at least 8).
 * A zeroed struct hmap is an empty map too, of min_cap 8 and no limit.
 */
void hmap_init(struct hmap *m, size_t min_cap, size_t max_n);
/* a budget for the map's arrays (NULL: none); set before the first add */
void hmap_set_charge(struct hmap *m, hmap_charge_fn fn, void *ctx);
/* frees the arrays: the map is empty and usable again, with the same settings. NULL-safe */
void hmap_free(struct hmap *m);

/* the address of key's value, or NULL */
__u64 *hmap_find2(const struct hmap *m, __u64 k1, __u64 k2);
/*
 * The address of key's value, added (with value 0, *is_new set) when absent; NULL when
 * out of memory, over the map's budget or max_n (errno ENOMEM or ENOSPC).
 */
__u64 *hmap_get2(struct hmap *m, __u64 k1, __u64 k2, bool *is_new);
/* sets key's value: 1 when the key was there, 0 when added, -ENOMEM or -ENOSPC */
int hmap_put2(struct hmap *m, __u64 k1, __u64 k2, __u64 val);
/*
 * Adds an entry without looking for the key first: a key can then have several values
 * (an interner's hash with strings that collide), found in turn with hmap_find_next2.
 * 0, -ENOMEM or -ENOSPC.
 */
int hmap_add2(struct hmap *m, __u64 k1, __u64 k2, __u64 val);
/* the values of key in turn: *pos is 0 for the first call; NULL when there are no more */
__u64 *hmap_find_next2(const struct hmap *m, __u64 k1, __u64 k2, size_t *pos);
/* removes key (one of its entries, if added more than once): 0 (*ret_val set if not NULL) or -ENOENT */
int hmap_del2(struct hmap *m, __u64 k1, __u64 k2, __u64 *ret_val);
/* removes the entry whose value's address find, get or next returned */
void hmap_del_at(struct hmap *m, __u64 *val);

/* the u64-key forms: the pair (k, 0) */
__u64 *hmap_find(const struct hmap *m, __u64 k);
__u64 *hmap_get(struct hmap *m, __u64 k, bool *is_new);
int hmap_put(struct hmap *m, __u64 k, __u64 val);
int hmap_del(struct hmap *m, __u64 k, __u64 *ret_val);

/*
 * Iteration, in no particular order: the address of the next entry's value from *pos on
 * (*pos is 0 for the first call), its keys in *ret_k1 and *ret_k2 (either may be NULL); NULL at
 * the end. The map must not change meanwhile: to remove entries while walking, hmap_filter.
 */
__u64 *hmap_next(const struct hmap *m, size_t *pos, __u64 *ret_k1, __u64 *ret_k2);
/* removes every entry for which drop() returns true; each is seen exactly once */
typedef bool (*hmap_drop_fn)(void *ctx, __u64 k1, __u64 k2, __u64 val);
void hmap_filter(struct hmap *m, hmap_drop_fn drop, void *ctx);

/* entries in the map */
size_t hmap_count(const struct hmap *m);
/* bytes of its arrays */
size_t hmap_bytes(const struct hmap *m);

#endif /* JPROF_UTIL_HMAP_H */

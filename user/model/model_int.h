/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * model_int.h: what the parts of the model share, for them alone (the API is model.h):
 * struct model and the interning table its tables are (model_table.c), the keyed hashes,
 * and the comparisons one part defines and another uses. model.c interns strings,
 * functions, mappings, locations, label sets and stacks and reads them back; model_fold.c
 * names and folds label sets; model_rows.c keeps the rows' values and their times.
 */
#ifndef JPROF_MODEL_INT_H
#define JPROF_MODEL_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"
#include "tseries.h"
#include "util/strpool.h"
#include "util/hashkey.h"
#include "util/hmap.h"

/*
 * One table: elements in an array (id = index, element 0 unused) plus an open-addressing
 * index of ids by hash, so find-or-add is O(1) on average. Hashes are not stored: the
 * index is rebuilt from the elements (hash_of) when it grows, and a probe compares the
 * element itself; at under half load a probe meets 1.5 slots on average. That index costs
 * 4 bytes a slot. The table whose elements are deleted (labels, by model__fold) has its
 * index on util/hmap instead (hash -> id, colliding hashes each an entry, 24 bytes a slot):
 * deletes shift entries back and the map shrinks as sets fold.
 */
struct table;
typedef __u64 (*elem_hash_fn)(const struct table *t, const void *elem);

struct table {
	void *elems;
	size_t elem_size, n, cap; /* n counts element 0 too */
	jp_id *slots;		  /* 0 = empty */
	size_t nslots;
	elem_hash_fn hash_of;
	bool (*dead)(const void *elem); /* NULL: no element is ever freed (all but labels) */
	struct model *m; /* for hash_of, the comparisons that need the model, its budget */
	bool on_hmap;	 /* the index is map, not slots */
	struct hmap map; /* (hash of the element, 0) -> id */
};

typedef bool (*elem_eq_fn)(const void *ctx, const void *a, const void *b, size_t size);

/*
 * A stack is a node of a trie of its frames from the root (struct stack_node: the node of
 * the stack without its leaf, and the leaf's location; node 0 the empty stack) and its depth.
 * Distinct stacks mostly differ near their leaves, so a new one costs the nodes past the
 * callers it shares (issue 27: 115 bytes a stack as arrays of 14 frames).
 */
struct stack_ref {
	jp_id node, n;
};

struct stack_node {
	jp_id parent, loc;
};

struct row_key {
	jp_id stack, labels;
};

struct model {
	struct strpool pool;
	struct table strs;   /* const char * */
	struct table funcs;  /* struct jp_func */
	struct table maps;   /* struct jp_mapping */
	struct table locs;   /* struct jp_location */
	struct table labels; /* struct jp_labels */
	struct table stacks; /* struct stack_ref */
	struct table nodes;  /* struct stack_node, the stacks' trie */
	/*
	 * model__get_stack's answer: the deepest stack's room, grown by model__stack (so that
	 * a read never allocates); valid until the next model__get_stack
	 */
	jp_id *get_buf;
	size_t get_cap;
	/* label ids freed by model__fold_pids (their elements zeroed), reused first */
	jp_id *free_labels;
	size_t nfree_labels, cap_free_labels;
	__u64 folded;	    /* exited processes folded */
	__u64 folded_execs; /* programs folded at their exec (model__fold) */
	/*
	 * Rows: (stack, labels) and one value per column in use. A recording fills two or
	 * three of the JP_VAL_MAX columns, so a column is added when a value first comes.
	 */
	struct table rows;	     /* struct row_key + ncols __u64, keyed by the key */
	signed char col[JP_VAL_MAX]; /* column of a value, -1 none yet */
	enum jp_value col_val[JP_VAL_MAX];
	unsigned int ncols;
	__u64 totals[JP_VAL_MAX];
	/* the stack being interned: compared by stack_eq through this */
	const jp_id *probe_locs;
	size_t probe_n;
	/*
	 * What the tables may hold in all (MODEL_MAX_BYTES unless set): what would grow past
	 * is refused and counted, so no source of names, stacks or labels (a JVM's agent, a
	 * file being read) can make jprof grow without bound
	 */
	size_t max_bytes;
	__u64 over_budget;
	struct tseries ts; /* when the rows' samples happened */
	/*
	 * the row model__add found last: a sample's values (its count, its CPU time) go to
	 * one row one after the other. Cleared where the rows are laid out again.
	 */
	struct row_key last_key;
	jp_id last_row;
};

/* keyed (hashkey.h): names, addresses and stacks come from processes of other users */
static inline __u64 mix(__u64 h)
{
	h ^= hash_key();
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

#define FNV_OFFSET 0xcbf29ce484222325ull

/* FNV-1a over n more bytes: hash_bytes in parts (then mix) */
static inline __u64 fnv_bytes(__u64 h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline __u64 hash_bytes(const void *p, size_t n, __u64 h)
{
	return mix(fnv_bytes(h ^ FNV_OFFSET, p, n));
}

static inline void *table_at(const struct table *t, jp_id id)
{
	return (char *)t->elems + (size_t)id * t->elem_size;
}

/* model_table.c: the table, and the model's budget over all its tables */
void table_init(struct table *t, size_t elem_size, elem_hash_fn hash_of, struct model *m);
void table_free(struct table *t); /* empty again, same kind */
/* the index again from the live elements (an element's hash changed); 0 or -ENOMEM/-ENOSPC */
int table_rehash(struct table *t, size_t nslots);
/* id of the element equal to e (hash h), 0 when none */
jp_id table_find(const struct table *t, const void *e, __u64 h, elem_eq_fn eq, const void *ctx);
/* puts id (its element in place, hash h) into the index; 0, or -ENOMEM/-ENOSPC (hmap) */
int table_index(struct table *t, jp_id id, __u64 h);
/* a copy of e (hash h, known new) added; its id, 0 when out of memory */
jp_id table_add(struct table *t, const void *e, __u64 h);
/* id of the element equal to e (hash h), adding a copy when new; 0 when out of memory */
jp_id table_intern(struct table *t, const void *e, __u64 h, elem_eq_fn eq, const void *ctx);
/* takes id out of the index; its element is still in place */
void table_unindex(struct table *t, jp_id id);
size_t table_bytes(const struct table *t);
size_t model_bytes(const struct model *m);
/* true (counted) when more bytes would take the model past its budget */
bool model_refuse(struct model *m, size_t more);

/* model.c: label sets */
__u64 labels_hash_of(const struct table *t, const void *e);
bool labels_eq(const void *ctx, const void *a, const void *b, size_t size);
/* a set's id, a freed id reused for a new one; 0 when out of memory or budget */
jp_id labels_intern(struct model *m, const struct jp_labels *c);

/* model_rows.c: rows are keyed by (stack, labels) */
__u64 row_hash(jp_id stack, jp_id labels);
__u64 row_hash_of(const struct table *t, const void *e);
bool row_eq(const void *ctx, const void *a, const void *b, size_t size);

#endif /* JPROF_MODEL_INT_H */

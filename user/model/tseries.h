/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tseries.h: when a model's samples happened. Beside each row's totals, (row, slot, values)
 * entries in the order they came: a slot is res_ms of the recording's wall clock from
 * its start (100 ms at first). Bounded: past max_bytes (or TSERIES_MAX_ENTRIES) the slots
 * coarsen (100 -> 200 -> 400 ms ...: adjacent slots merge), nothing is dropped; the totals of a
 * row's entries never change. Private to model.c (model.h is the interface). Not thread-safe.
 */
#ifndef JPROF_MODEL_TSERIES_H
#define JPROF_MODEL_TSERIES_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#define TSERIES_RES_MS	    100u
#define TSERIES_MAX_BYTES   (64ull << 20)
#define TSERIES_MAX_ENTRIES (1u << 24)
/* with a target: room kept for this many entries a row, however small the target */
#define TSERIES_ROW_FLOOR 8u
/*
 * with a target: the recording's span in at most this many slots (100 ms up to 6.8 minutes,
 * then 200 ms ...), so that a row sampled all along holds this many entries at most and a
 * long recording's time data grows with its new rows only (issue 27: three busy threads'
 * rows took 1,800 entries a minute at 100 ms); finer than any timeline draws it
 */
#define TSERIES_TARGET_SLOTS 4096u
/* a coarsening gives back the pages past its last entry when they are this many bytes */
#define TSERIES_RELEASE_MIN (64u << 10)

/*
 * An entry: its row (a model row id; 0: dead, a dropped row's) and slot; a row's entries are
 * those with its id, in the array's order (the order they came). 16 bytes with two columns:
 * no link to the next, since only writers walk a row's entries (tseries_row_first), and they
 * get links built for the walk (issue 27: the links and their padding were a third of a long
 * recording's time data). A value is 4 bytes: below TSERIES_BIG the value itself, else
 * TSERIES_BIG | its index in big[], where the u64 is (a slot's CPU nanoseconds past 2.1 s, an
 * allocation's bytes past 2 GiB: issue 27, a third of each entry was high zero bytes).
 * Read a value with tseries_val.
 */
#define TSERIES_BIG 0x80000000u
struct tseries_ent {
	__u32 row, slot;
	__u32 v[]; /* ncols values */
};

struct tseries {
	char *ents; /* n entries of esize bytes */
	size_t n, cap, esize;
	unsigned int ncols;
	__u64 *big;	  /* the values of TSERIES_BIG or more, an entry's column each */
	size_t nbig, big_cap;
	__u32 *tail;	  /* per row id: its last entry (index + 1), 0 none */
	size_t nrows;	  /* tail has nrows slots */
	size_t rows_used; /* the highest row id with an entry + 1 */
	/*
	 * The walks' links, built by the first walk after the entries changed (a cache: building
	 * them changes no entry); chain_first per row id, chain_next per entry (index + 1, 0 none)
	 */
	__u32 *chain_first, *chain_next;
	size_t chain_rows, chain_cap;
	bool chains_ok;
	__u64 mono0, wall0; /* the clock: slot 0 starts at mono0 (wall0 by the wall clock) */
	__u64 now;	    /* the time of the adds (mono ns); 0: untimed */
	bool has_clock;
	__u32 res_ms;
	size_t max_bytes;
	size_t target_bytes; /* 0, or coarsened past this (or TSERIES_ROW_FLOOR a row): tseries_budget */
	__u32 coarsened; /* times the slots doubled */
	bool lost;	 /* coarsening could not fit: the time data was dropped (then untimed) */
};

void tseries_init(struct tseries *t);
void tseries_free(struct tseries *t); /* the entries gone; clock and settings kept */
size_t tseries_bytes(const struct tseries *t);
/*
 * What the entries may take: max_bytes; with a target, the target or TSERIES_ROW_FLOOR
 * entries a row, whichever is larger, and never more than max_bytes. A long recording's
 * slots coarsen once it is reached, so its time data stops growing with its length.
 */
size_t tseries_budget(const struct tseries *t);
static inline struct tseries_ent *tseries_at(const struct tseries *t, size_t i)
{
	return (struct tseries_ent *)(t->ents + i * t->esize);
}
static inline __u64 tseries_val(const struct tseries *t, const struct tseries_ent *e, unsigned int col)
{
	__u32 v = e->v[col];

	return v & TSERIES_BIG ? t->big[v & ~TSERIES_BIG] : v;
}
/* one more value column (the model added one): 0 or -ENOMEM */
int tseries_add_column(struct tseries *t);
/* adds value to column col of row at t->now; 0 (also when untimed) or -ENOMEM */
int tseries_add(struct tseries *t, __u32 row, unsigned int col, __u64 value);
/* rows renumbered: to[old row id] (nold of them) is the new id (0: dropped, its entries dead) */
int tseries_remap(struct tseries *t, const __u32 *to, size_t nold, size_t nnew);
/* the slots doubled (adjacent merged); false when every entry is in slot 0 already */
bool tseries_coarsen(struct tseries *t);
/*
 * A row's entries in the order they came: the first's index + 1 (0: none), then the next
 * after entry index k. The first call after a change links them all (O(entries), memory for
 * a u32 an entry and a row; without it, each step is a scan). Not for two threads at once.
 */
size_t tseries_row_first(const struct tseries *t, __u32 row);
size_t tseries_row_next(const struct tseries *t, size_t k);
/*
 * Row's column col gets value in all: its entries' col are set in proportion to their col
 * ref (what is not timed of the row's ref keeps its share untimed). ref_total: the row's ref.
 */
void tseries_fit(struct tseries *t, __u32 row, unsigned int col, unsigned int ref, __u64 value,
		 __u64 ref_total);

#endif /* JPROF_MODEL_TSERIES_H */

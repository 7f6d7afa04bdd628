/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_code.c: the JVM's compiled code as the dictionary announces it: the blob table
 * sorted by address, inline tables read when a sample falls in a blob, stubs, and the frame
 * kinds (interpreted, JIT, inlined) of a trace.
 * Part of the agent channel reader (agent_int.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jvm/agent_int.h"
#include "log.h"
#include "util/procfs.h"
#include "ring.h"
#include "util/hashkey.h"
#include "util/safe_open.h"

/*
 * The first of n sorted entries of size bytes whose key (a __u64, the entry's first
 * member: jm_bkey.addr, jm_pc.pc) is at or after key; n: none
 */
static size_t key_lower_bound(const void *arr, size_t n, size_t size, __u64 key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (*(const __u64 *)((const char *)arr + mid * size) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t blob_lower_bound(const struct jvm_agent *a, __u64 addr)
{
	return key_lower_bound(a->bkeys, a->n_blobs, sizeof(*a->bkeys), addr);
}

static struct jm_blob *blob_at(const struct jvm_agent *a, size_t i)
{
	return &a->bpool[a->bkeys[i].idx];
}

static __u64 bkey_end(const struct jm_bkey *k)
{
	return k->addr + k->size;
}

/*
 * A blob leaves the table (unloaded, or replaced by code over its range): cached chains
 * check their blob again (agent_names.c). A blob added where none was changes no pc's.
 */
static void blobs_changed(struct jvm_agent *a)
{
	if (++a->blob_gen == 0 && a->pcc_sets) /* wrapped: no entry may pass for current */
		memset(a->pcc_sets, 0, (size_t)PCC_SETS * sizeof(*a->pcc_sets));
}

static void blob_remove(struct jvm_agent *a, size_t i)
{
	struct jm_blob *b = blob_at(a, i);
	struct jm_side *m = ja_side_find(a, b->method_id);

	if (m && m->n_blobs)
		m->n_blobs--;
	blobs_changed(a);
	ja_blob_free(a, b);
	memset(b, 0, sizeof(*b));
	b->off = a->bfree;
	a->bfree = a->bkeys[i].idx;
	memmove(&a->bkeys[i], &a->bkeys[i + 1], (a->n_blobs - i - 1) * sizeof(a->bkeys[0]));
	a->moved += (a->n_blobs - i - 1) * sizeof(a->bkeys[0]);
	a->n_blobs--;
}

/* b goes in (its tables become the pool's), replacing the blobs it overlaps; 0 or -errno */
static int blob_insert(struct jvm_agent *a, struct jm_blob *b)
{
	size_t i = blob_lower_bound(a, b->addr);
	struct jm_side *m;
	__u32 idx;

	if (b->end - b->addr > UINT32_MAX)
		return -EINVAL;
	if (i > 0 && bkey_end(&a->bkeys[i - 1]) > b->addr)
		blob_remove(a, --i);
	while (i < a->n_blobs && a->bkeys[i].addr < b->end)
		blob_remove(a, i);
	if (ja_grow(a, (void **)&a->bkeys, &a->cap_bkeys, a->n_blobs, sizeof(*a->bkeys)))
		return -ENOMEM;
	if (a->bfree != BFREE_NONE) {
		idx = a->bfree;
		a->bfree = (__u32)a->bpool[idx].off;
	} else {
		if (a->n_bpool >= BFREE_NONE ||
		    ja_grow(a, (void **)&a->bpool, &a->cap_bpool, a->n_bpool, sizeof(*a->bpool)))
			return -ENOMEM;
		idx = (__u32)a->n_bpool++;
	}
	memmove(&a->bkeys[i + 1], &a->bkeys[i], (a->n_blobs - i) * sizeof(a->bkeys[0]));
	a->moved += (a->n_blobs - i) * sizeof(a->bkeys[0]);
	a->bkeys[i] = (struct jm_bkey){ b->addr, (__u32)(b->end - b->addr), idx };
	a->bpool[idx] = *b;
	a->n_blobs++;
	m = ja_method_find(a, b->method_id) ? ja_side_get(a, b->method_id) : NULL;
	if (m)
		m->n_blobs++;
	return 0;
}

struct jm_blob *ja_blob_find(const struct jvm_agent *a, __u64 pc)
{
	size_t i = blob_lower_bound(a, pc + 1);

	if (i == 0 || pc >= bkey_end(&a->bkeys[i - 1]))
		return NULL;
	return blob_at(a, i - 1);
}

/*
 * A code-load record's inline table: n_pcs of (u64 pc, u32 n, n of (u64 method, u32 bci)),
 * pcs ascending. Checked whole; with b->pcs set (room for n_pcs) and b->chain (room for
 * max_chain), stored there; else only its (callee, caller) pairs go to the edge map.
 */
#define EDGE_RECENT 64
static int parse_pcs(struct jvm_agent *a, struct cur *c, struct jm_blob *b, __u32 n_pcs,
		     size_t max_chain)
{
	__u64 prev = 0, last = 0;
	size_t n_chain = 0;
	/*
	 * The pairs put lately, direct-mapped: neighbouring pcs mostly repeat their chains,
	 * and a probe of the JVM's whole edge map is a cache miss (javac: 5% of jprof's CPU)
	 */
	__u64 recent[EDGE_RECENT][2];

	memset(recent, 0, sizeof(recent));
	for (__u32 i = 0; i < n_pcs && !c->bad; i++) {
		__u64 pc = ja_cur_u64(c);
		__u32 n = ja_cur_u32(c);

		if ((__u64)n * 12 > c->left || (i && pc < prev) ||
		    (b->chain && n > max_chain - n_chain)) {
			c->bad = 1;
			break;
		}
		prev = pc;
		if (b->pcs)
			b->pcs[i] = (struct jm_pc){ .pc = pc, .first = (__u32)n_chain, .n = n };
		for (__u32 j = 0; j < n; j++) {
			__u64 m = ja_cur_u64(c);
			__s32 bci = (__s32)ja_cur_u32(c);

			if (b->chain) {
				b->chain[n_chain + j] = m;
				b->chain_bci[n_chain + j] = bci;
			}
			/* the evidence for "inlined into its caller" used for deeper frames */
			else if (j > 0) {
				__u64 *r = recent[ja_kv_hash(last, m) % EDGE_RECENT];

				if ((r[0] != last || r[1] != m) &&
				    ja_kv_put(a, &a->edges, last, m, 1))
					c->bad = 1;
				r[0] = last;
				r[1] = m;
			}
			last = m;
		}
		n_chain += n;
		if (b->pcs)
			b->n_pcs = i + 1;
	}
	if (b->chain)
		b->n_chain = (__u32)n_chain;
	return c->bad ? -EINVAL : 0;
}

int ja_parse_code_load(struct jvm_agent *a, struct cur *c)
{
	struct jm_blob b = { 0 };
	const unsigned char *body = c->p;
	__u32 size, n_pcs;

	b.off = a->rec_off + (__u64)(c->p - a->rec_body);
	b.addr = ja_cur_u64(c);
	size = ja_cur_u32(c);
	n_pcs = ja_cur_u32(c);
	b.method_id = ja_cur_u64(c);
	if (c->bad || !size || b.addr + size < b.addr || !b.method_id)
		return -EINVAL;
	b.end = b.addr + size;
	/* 12 bytes per pc and per frame at least: bounded by the record's size */
	if ((__u64)n_pcs * 12 > c->left || parse_pcs(a, c, &b, n_pcs, 0))
		return -EINVAL;
	b.len = n_pcs ? (__u32)(c->p - body) : 0;
	return blob_insert(a, &b) ? -EINVAL : 0;
}

/*
 * The oldest table in the queue of tables held, freed unless it is keep's (its blob went,
 * or its table was freed or read again since: nothing to free). One that answered a
 * lookup since it was queued goes to the back instead, once (the clock's second chance):
 * a compiling JVM's hot methods stay held while its cold ones come and go. Each pop
 * either frees or clears a mark: at most twice the queue's length of them.
 */
static void tables_pop(struct jvm_agent *a, const struct jm_blob *keep)
{
	for (size_t tries = 2 * (size_t)a->tq_n; tries && a->tq_n; tries--) {
		__u32 idx = a->tq[a->tq_head];
		struct jm_blob *b = idx < a->n_bpool ? &a->bpool[idx] : NULL;

		a->tq_head = (a->tq_head + 1) % TABLES_QUEUE;
		a->tq_n--;
		if (!b || !b->pcs || b == keep)
			return;
		if (b->used) {
			b->used = false;
			a->tq[(a->tq_head + a->tq_n++) % TABLES_QUEUE] = idx;
			continue;
		}
		ja_blob_free(a, b);
		a->tables_evicted++;
		__atomic_add_fetch(&ja_tables_evicted, 1, __ATOMIC_RELAXED);
		return;
	}
}

/* b's table (just read, held bytes) in the queue of tables held, the oldest freed if full */
static void tables_note(struct jvm_agent *a, const struct jm_blob *b, size_t bytes)
{
	a->tables_bytes += bytes;
	__atomic_add_fetch(&ja_tables_bytes, bytes, __ATOMIC_RELAXED);
	if (!a->tq && !(a->tq = malloc(TABLES_QUEUE * sizeof(*a->tq))))
		return; /* not evicted: held until its blob goes, as before */
	if (a->tq_n == TABLES_QUEUE)
		tables_pop(a, b);
	a->tq[(a->tq_head + a->tq_n++) % TABLES_QUEUE] = (__u32)(b - a->bpool);
}

/*
 * b's inline table, read again from its record in the dictionary file (the JVM's user
 * writes that file: the record must still be b's, and is checked again whole). False
 * when b has none or it cannot be had; then it is never tried again. The tables read
 * longest ago are freed first while it would pass TABLES_MAX.
 */
bool ja_blob_pcs(struct jvm_agent *a, struct jm_blob *b)
{
	unsigned char *body;
	size_t max_chain;
	struct cur c;
	__u32 n_pcs;

	if (b->pcs) {
		b->used = true;
		return true;
	}
	if (!b->len || b->len > JP_DICT_REC_MAX)
		return false;
	/* a table takes at most twice its record's bytes (16 a pc, 12 a chain entry) */
	while (a->tq_n && a->tables_bytes + 2 * (size_t)b->len > TABLES_MAX)
		tables_pop(a, NULL);
	if (ja_charge(a, b->len)) { /* the read buffer, given back below */
		b->len = 0;
		return false;
	}
	body = malloc(b->len);
	if (!body || pread(a->dict_fd, body, b->len, (off_t)b->off) != (ssize_t)b->len)
		goto out;
	c = (struct cur){ .p = body, .left = b->len };
	if (ja_cur_u64(&c) != b->addr || ja_cur_u32(&c) != b->end - b->addr)
		goto out;
	n_pcs = ja_cur_u32(&c);
	if (ja_cur_u64(&c) != b->method_id || !n_pcs || (__u64)n_pcs * 12 > c.left)
		goto out;
	max_chain = c.left / 12;
	if (ja_charge(a, (size_t)n_pcs * sizeof(*b->pcs) + max_chain * CHAIN_BYTES))
		goto out;
	b->pcs = calloc(n_pcs, sizeof(*b->pcs));
	b->chain = calloc(max_chain ? max_chain : 1, sizeof(*b->chain));
	b->chain_bci = calloc(max_chain ? max_chain : 1, sizeof(*b->chain_bci));
	if (!b->pcs || !b->chain || !b->chain_bci || parse_pcs(a, &c, b, n_pcs, max_chain)) {
		ja_uncharge(a, (size_t)n_pcs * sizeof(*b->pcs) + max_chain * CHAIN_BYTES);
		free(b->pcs);
		free(b->chain);
		free(b->chain_bci);
		b->pcs = NULL;
		b->chain = NULL;
		b->chain_bci = NULL;
		b->n_pcs = b->n_chain = 0;
		goto out;
	}
	/* keep what the table has: the ja_charge follows n_pcs and n_chain from here */
	ja_uncharge(a, (size_t)(n_pcs - b->n_pcs) * sizeof(*b->pcs) +
			    (max_chain - b->n_chain) * CHAIN_BYTES);
	if (b->n_chain && b->n_chain < max_chain) {
		__u64 *ch = realloc(b->chain, (size_t)b->n_chain * sizeof(*ch));
		__s32 *bci = realloc(b->chain_bci, (size_t)b->n_chain * sizeof(*bci));

		if (ch)
			b->chain = ch;
		if (bci)
			b->chain_bci = bci;
	}
	tables_note(a, b, (size_t)b->n_pcs * sizeof(*b->pcs) + (size_t)b->n_chain * CHAIN_BYTES);
	ja_uncharge(a, b->len);
	free(body);
	return true;
out:
	ja_uncharge(a, b->len);
	free(body);
	b->len = 0;
	return false;
}

int ja_parse_code_unload(struct jvm_agent *a, struct cur *c)
{
	__u64 addr = ja_cur_u64(c), id = ja_cur_u64(c);
	size_t i;

	if (c->bad)
		return -EINVAL;
	i = blob_lower_bound(a, addr);
	if (i < a->n_blobs && a->bkeys[i].addr == addr && blob_at(a, i)->method_id == id)
		blob_remove(a, i);
	return 0;
}

int ja_parse_stub(struct jvm_agent *a, struct cur *c)
{
	struct jm_blob b = { 0 };
	__u32 size;
	__u16 n;

	b.addr = ja_cur_u64(c);
	size = ja_cur_u32(c);
	n = ja_cur_u16(c);
	(void)ja_cur_u16(c);
	/* interned: a JVM's few hundred stubs share a few dozen names */
	b.stub = ja_cur_istr(a, c, n);
	if (c->bad || !size || b.addr + size < b.addr)
		return -EINVAL;
	b.end = b.addr + size;
	b.is_interp = !strcmp(b.stub, "Interpreter");
	return blob_insert(a, &b);
}

/* frame kinds ----------------------------------------------------------------- */

static int method_is_compiled(const struct jvm_agent *a, __u64 id)
{
	const struct jm_side *m = ja_side_find(a, id);

	return m && m->n_blobs > 0;
}

/* the first of b's recorded pcs at or after pc (b->n_pcs: none) */
size_t ja_pc_lower_bound(const struct jm_blob *b, __u64 pc)
{
	return key_lower_bound(b->pcs, b->n_pcs, sizeof(*b->pcs), pc);
}

/*
 * Leaf group: a PC inside a compiled blob tells for sure. The blob's inline chain at the
 * PC (the first recorded pc at or after it, as HotSpot's pc_desc_near does) names how many
 * leaf frames are inlined; if that chain does not match AGCT's frames (no non-safepoint
 * info, or the table was truncated), the frames up to the first one that is the blob's
 * root method are inlined and that one is the JIT frame. Returns frames classified.
 */
static int classify_leaf(struct jvm_agent *a, __u64 pc, struct java_frame *f, int n)
{
	struct jm_blob *b = ja_blob_find(a, pc);
	int k = -1;

	if (!b || n <= 0)
		return 0;
	if (!b->method_id) {
		if (b->is_interp && f[0].bci != -3) {
			f[0].kind = JP_FK_INTERP;
			return 1;
		}
		return 0;
	}
	if (ja_blob_pcs(a, b) && b->n_pcs) {
		size_t lo = ja_pc_lower_bound(b, pc);

		if (lo < b->n_pcs) {
			const struct jm_pc *p = &b->pcs[lo];
			__u32 len = p->n;

			if (len && len <= (__u32)n && b->chain[p->first + len - 1] == b->method_id) {
				k = (int)len - 1;
				for (__u32 j = 0; j < len; j++) {
					if (b->chain[p->first + j] != f[j].method_id)
						k = -1;
				}
			}
		}
	}
	for (int i = 0; k < 0 && i < n && i < INLINE_MAX; i++) {
		if (f[i].method_id == b->method_id)
			k = i;
	}
	if (k < 0)
		return 0;
	for (int i = 0; i < k; i++)
		f[i].kind = JP_FK_INLINED;
	f[k].kind = JP_FK_JIT;
	return k + 1;
}

/*
 * Kinds of AGCT frames (leaf first). Deeper frames have no PC, so it is evidence, not
 * proof: bci -3 is a Java native method; a frame whose (method, caller) pair appears in
 * some blob's inline chain is inlined; else a method with a live compiled blob is JIT;
 * else interpreted. A frame above an inlined one is at least JIT (it holds the code).
 * OSR and deoptimised frames can be misfiled; the leaf group is exact when the PC is
 * in a known blob.
 */
void ja_classify(struct jvm_agent *a, __u64 pc, struct java_frame *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		f[i].kind = JP_FK_INTERP;
	i = classify_leaf(a, pc, f, n);
	for (; i < n; i++) {
		if (f[i].bci == -3)
			f[i].kind = JP_FK_NATIVE;
		else if (i + 1 < n && !ja_kv_get(&a->edges, f[i].method_id, f[i + 1].method_id,
					      &(__u32){ 0 }))
			f[i].kind = JP_FK_INLINED;
		else if (method_is_compiled(a, f[i].method_id) ||
			 (i > 0 && f[i - 1].kind == JP_FK_INLINED))
			f[i].kind = JP_FK_JIT;
	}
}

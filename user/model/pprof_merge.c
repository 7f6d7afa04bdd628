// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof_merge.c: profiles read one after another straight into one model (a store's range).
 * The reader checks each file whole before it adds a sample (pprof_read.c), so a bad segment
 * is skipped without a model of its own to read it into first and copy from: each string,
 * function, location and stack is made once, in the model that keeps it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pprof_merge.h"
#include "pprof_read_int.h"
#include "util/hashkey.h"

#define PM_MAX_FUNCS	  (1u << 20)  /* functions the index finds; more are found by name */
#define PM_MAX_LOCS	  (1u << 20)  /* locations the index finds; more are made by name */
#define PM_MAX_LOC_BYTES  (64u << 20) /* ... and the bytes of their keys (offset / 8 in 32 bits) */
#define PM_KEY_MAX	  4096	      /* a location's key: its names (< 1 KiB each) and numbers */
#define PM_FILE_KEY_BYTES (64u << 20) /* keys the reader makes a file; more: at the look-up */

struct pm_slot {
	__u32 tag, off8;
};

/* a location's key and its model id, in pprof_merge.keys */
struct pm_key {
	__u64 h;
	jp_id id;
	__u32 len;
	unsigned char key[];
};

struct pprof_merge {
	struct model *m;
	/*
	 * The model's functions by the bytes of their name and file (and java): the next file's
	 * function is found with one look-up instead of two strings' and its own (most functions
	 * of one segment are in the next one). (hash, 0) -> model function id; hashes that
	 * collide are entries of their own, each checked against the model's strings.
	 */
	struct hmap funcs;
	/*
	 * The model's locations by what makes them: kind, line, address, the function's name and
	 * file, the mapping's numbers and names, as bytes (a key): a location the model has is
	 * found with one look-up and one comparison, no function or mapping looked up first.
	 * An index of 8-byte slots (a cache line holds 8 of them; the model's own tables and
	 * util/hmap's 24-byte entries miss the cache more: this look-up is the merge's hottest):
	 * (the top half of the key's hash, offset / 8 of its entry in keys; 0 empty), probed
	 * linearly from the keyed hash (another user cannot aim names at one run of slots).
	 */
	struct pm_slot *slots;
	size_t nslots, nlocs;
	char *keys; /* pm_key entries, 8-aligned, from offset 8 */
	size_t nkeys, cap_keys;
	unsigned char key[PM_KEY_MAX];		  /* the one being looked up */
	char comments[PPROF_INFO_COMMENTS][1024]; /* the last file's, for its info */
};

struct pprof_merge *pprof_merge__new(struct model *m)
{
	struct pprof_merge *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	pm->m = m;
	hmap_init(&pm->funcs, 1024, PM_MAX_FUNCS);
	return pm;
}

void pprof_merge__free(struct pprof_merge *pm)
{
	if (!pm)
		return;
	hmap_free(&pm->funcs);
	free(pm->slots);
	free(pm->keys);
	free(pm);
}

const char *pp_merge_keep(struct pprof_merge *pm, size_t i, const char *s)
{
	if (i >= PPROF_INFO_COMMENTS)
		return NULL;
	snprintf(pm->comments[i], sizeof(pm->comments[i]), "%s", s);
	return pm->comments[i];
}

/* s is the model's string t (pp_str_at's copy of s would be t: s holds no NUL, is not cut) */
static bool same_str(const struct span *s, const char *t)
{
	return !strncmp(t, (const char *)s->p, s->n) && !t[s->n];
}

/* a span pp_str_at copies as it is: shorter than its buffer, no NUL inside */
static bool plain(const struct span *s)
{
	return s->n < 1024 && !memchr(s->p, 0, s->n);
}

jp_id pp_merge_func(struct pprof_merge *pm, struct parse *ps, const struct pfunc *f, bool java)
{
	const struct span *name = &ps->strs[f->name], *file = &ps->strs[f->file];
	char nb[1024], fb[1024];
	size_t pos = 0;
	const __u64 *v;
	__u64 h;
	jp_id id;

	/* strings pp_str_at would change: by name, as the reader does */
	if (!plain(name) || !plain(file))
		return model__func(pm->m, pp_str_at(ps, f->name, nb, sizeof(nb)),
				   pp_str_at(ps, f->file, fb, sizeof(fb)), java);
	h = hash_keyed_bytes(name->p, name->n) ^
	    hash_keyed(hash_keyed_bytes(file->p, file->n) + java);
	while ((v = hmap_find_next2(&pm->funcs, h, 0, &pos))) {
		const struct jp_func *mf = model__get_func(pm->m, (jp_id)*v);

		if (mf && mf->java == java && same_str(name, mf->name) && same_str(file, mf->file))
			return (jp_id)*v;
	}
	id = model__func(pm->m, pp_str_at(ps, f->name, nb, sizeof(nb)),
			 pp_str_at(ps, f->file, fb, sizeof(fb)), java);
	if (id)
		(void)hmap_add2(&pm->funcs, h, 0, id); /* past its room: found by name */
	return id;
}

/* appends n bytes of p to the key in buf at *len; false past its room */
static bool key_put(unsigned char *buf, size_t *len, const void *p, size_t n)
{
	if (n > PM_KEY_MAX - *len)
		return false;
	memcpy(buf + *len, p, n);
	*len += n;
	return true;
}

/* a name with its length; false for one pp_str_at would change (max: its buffer) */
static bool key_str(unsigned char *buf, size_t *len, const struct span *s, size_t max)
{
	__u32 n = (__u32)s->n;

	return s->n < max && !memchr(s->p, 0, s->n) && key_put(buf, len, &n, sizeof(n)) &&
	       key_put(buf, len, s->p, s->n);
}

/*
 * what makes line k of l a model location, as bytes into buf (PM_KEY_MAX): its kind, line,
 * address, its function's name and file, its mapping's numbers and names; 0 when it has
 * names a key does not hold (too long, a NUL)
 */
static size_t loc_key(const struct parse *ps, const struct ploc *l, size_t k, const struct pfunc *f,
		      const struct pmap *mp, unsigned char *buf)
{
	struct {
		__u64 addr;
		__s32 line;
		__u8 kind, has_func, has_map, pad;
	} head = {.addr = l->addr,
		  .kind = f ? (__u8)f->kind : JP_FK_NATIVE,
		  .has_func = !!f,
		  .has_map = !!mp};
	size_t len = 0;

	if (f)
		head.line = ps->lines[l->line0 + k].line <= 0x7fffffff
				    ? (__s32)ps->lines[l->line0 + k].line
				    : 0;
	if (!key_put(buf, &len, &head, sizeof(head)))
		return 0;
	/* the names as pp_str_at would copy them, so no longer than its buffers (1024, 256) */
	if (f && (!key_str(buf, &len, &ps->strs[f->name], 1024) ||
		  !key_str(buf, &len, &ps->strs[f->file], 1024)))
		return 0;
	if (mp && (!key_put(buf, &len, &mp->start, sizeof(mp->start)) ||
		   !key_put(buf, &len, &mp->limit, sizeof(mp->limit)) ||
		   !key_put(buf, &len, &mp->offset, sizeof(mp->offset)) ||
		   !key_str(buf, &len, &ps->strs[mp->file], 1024) ||
		   !key_str(buf, &len, &ps->strs[mp->build_id], 256)))
		return 0;
	return len;
}

int pp_merge_keys(struct parse *ps)
{
	unsigned char key[PM_KEY_MAX];

	for (size_t i = 0; i < ps->nlocs_raw; i++) {
		struct ploc *l = &ps->locs[i];
		struct pmap *mp = l->mapping ? pp_find_map(ps, l->mapping) : NULL;

		if (!l->checked) /* no sample names it */
			continue;
		for (size_t k = 0; k < (l->nlines ? l->nlines : 1); k++) {
			struct pfunc *f = l->nlines ? ps->lines[l->line0 + k].fn : NULL;
			struct pp_lkey *lk = l->nlines ? &ps->lines[l->line0 + k].key : &l->key0;
			size_t len;

			if (f && !f->has_kind) {
				f->kind = pp_kind_of_func(ps, f);
				f->has_kind = true;
			}
			len = loc_key(ps, l, k, f, mp, key);
			if (!len || ps->nlkeys + len > PM_FILE_KEY_BYTES)
				continue; /* made at the merge's own look-up */
			if (ps->nlkeys + len > ps->cap_lkeys) {
				size_t cap = ps->cap_lkeys ? ps->cap_lkeys * 2 : 64u << 10;
				unsigned char *nk;

				while (cap < ps->nlkeys + len)
					cap *= 2;
				nk = realloc(ps->lkeys, cap);
				if (!nk)
					return -ENOMEM;
				ps->lkeys = nk;
				ps->cap_lkeys = cap;
			}
			memcpy(ps->lkeys + ps->nlkeys, key, len);
			lk->off = (__u32)ps->nlkeys;
			lk->len = (__u32)len;
			lk->h = hash_keyed_bytes(key, len);
			ps->nlkeys += len;
		}
	}
	return 0;
}

/* the index twice as large (or its first 4096 slots); false out of memory */
static bool grow_slots(struct pprof_merge *pm)
{
	size_t n = pm->nslots ? pm->nslots * 2 : 4096;
	struct pm_slot *s = calloc(n, sizeof(*s));

	if (!s)
		return false;
	for (size_t i = 0; i < pm->nslots; i++) {
		const struct pm_key *e;
		size_t j;

		if (!pm->slots[i].off8)
			continue;
		e = (const struct pm_key *)(pm->keys + (size_t)pm->slots[i].off8 * 8);
		for (j = e->h & (n - 1); s[j].off8; j = (j + 1) & (n - 1))
			;
		s[j] = pm->slots[i];
	}
	free(pm->slots);
	pm->slots = s;
	pm->nslots = n;
	return true;
}

/* keeps the key (hash h) of location id; nothing when past the budgets or out of memory */
static void keep_loc(struct pprof_merge *pm, __u64 h, const unsigned char *key, size_t len,
		     jp_id id)
{
	size_t need = (sizeof(struct pm_key) + len + 7) & ~(size_t)7, at, j;
	struct pm_key *e;

	if (!pm->nkeys)
		pm->nkeys = 8; /* offset 0 is an empty slot's */
	if (pm->nlocs >= PM_MAX_LOCS || pm->nkeys + need > PM_MAX_LOC_BYTES)
		return;
	if ((pm->nlocs + 1) * 2 > pm->nslots && !grow_slots(pm))
		return;
	if (pm->nkeys + need > pm->cap_keys) {
		size_t cap = pm->cap_keys ? pm->cap_keys * 2 : 64u << 10;
		char *nk;

		while (cap < pm->nkeys + need)
			cap *= 2;
		nk = realloc(pm->keys, cap);
		if (!nk)
			return;
		pm->keys = nk;
		pm->cap_keys = cap;
	}
	at = pm->nkeys;
	e = (struct pm_key *)(pm->keys + at);
	e->h = h;
	e->id = id;
	e->len = (__u32)len;
	memcpy(e->key, key, len);
	pm->nkeys += need;
	for (j = h & (pm->nslots - 1); pm->slots[j].off8; j = (j + 1) & (pm->nslots - 1))
		;
	pm->slots[j] = (struct pm_slot){.tag = (__u32)(h >> 32), .off8 = (__u32)(at / 8)};
	pm->nlocs++;
}

jp_id pp_merge_loc(struct pprof_merge *pm, struct parse *ps, const struct ploc *l, size_t k,
		   struct pfunc *f, struct pmap *mp)
{
	const struct pp_lkey *lk = l->nlines ? &ps->lines[l->line0 + k].key : &l->key0;
	const unsigned char *key = pm->key;
	size_t len;
	jp_id id;
	__u64 h;

	if (lk->len) { /* made by the reader (pp_merge_keys) */
		key = ps->lkeys + lk->off;
		len = lk->len;
		h = lk->h;
	} else {
		len = loc_key(ps, l, k, f, mp, pm->key);
		if (!len)
			return pp_make_loc(ps, l, k, f, mp);
		h = hash_keyed_bytes(pm->key, len);
	}
	for (size_t j = pm->nslots ? h & (pm->nslots - 1) : 0; pm->nslots && pm->slots[j].off8;
	     j = (j + 1) & (pm->nslots - 1)) {
		const struct pm_key *e;

		if (pm->slots[j].tag != (__u32)(h >> 32))
			continue;
		e = (const struct pm_key *)(pm->keys + (size_t)pm->slots[j].off8 * 8);
		if (e->len == len && !memcmp(e->key, key, len))
			return e->id;
	}
	/* a location the model may have, but not from a key: made, then kept by its key */
	id = pp_make_loc(ps, l, k, f, mp);
	if (id)
		keep_loc(pm, h, key, len, id);
	return id;
}

/* a profile read and checked, not added yet */
struct pprof_merge_file {
	struct parse ps;
	struct pprof_read_info info;
	void *buf; /* the file's bytes: its strings point into them */
};

int pprof_merge_file__prepare(void *buf, size_t len, struct pprof_merge_file **ret, char *why,
			      size_t why_len)
{
	struct pprof_merge_file *pf = calloc(1, sizeof(*pf));
	int err;

	if (!pf) {
		free(buf);
		return -ENOMEM;
	}
	pf->buf = buf;
	pf->ps = (struct parse){.why = why, .why_len = why_len, .info = &pf->info, .whole = true};
	err = pp_prepare(&pf->ps, buf, len);
	if (err) {
		pprof_merge_file__free(pf);
		return err;
	}
	pf->ps.why = NULL; /* the caller's, for this call only */
	pf->ps.why_len = 0;
	*ret = pf;
	return 0;
}

void pprof_merge_file__free(struct pprof_merge_file *pf)
{
	if (!pf)
		return;
	pp_parse_free(&pf->ps);
	free(pf->buf);
	free(pf);
}

int pprof_merge__add_file(struct pprof_merge *pm, struct pprof_merge_file *pf,
			  struct pprof_read_info *info)
{
	int err;

	pf->ps.m = pm->m;
	pf->ps.pm = pm;
	err = pp_commit(&pf->ps);
	if (!err && info)
		*info = pf->info;
	pprof_merge_file__free(pf);
	return err;
}

int pprof_merge__add(struct pprof_merge *pm, const void *buf, size_t len,
		     struct pprof_read_info *info, char *why, size_t why_len)
{
	struct parse ps = {
		.m = pm->m, .why = why, .why_len = why_len, .info = info, .whole = true, .pm = pm};

	return pp_read(&ps, buf, len);
}

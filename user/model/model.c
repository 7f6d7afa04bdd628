// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* model.c: interned tables (strings, functions, mappings, locations, labels, stacks) and rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "tseries.h"
#include "util/strpool.h"
#include "util/hashkey.h"
#include "util/hmap.h"

static const struct {
	const char *type, *unit;
} value_names[JP_VAL_MAX] = {
	[JP_VAL_CPU_SAMPLES] = {"samples", "count"},
	[JP_VAL_CPU_NS] = {"cpu", "nanoseconds"},
	[JP_VAL_OFFCPU_NS] = {"offcpu", "nanoseconds"},
	[JP_VAL_SYSCALL_CALLS] = {"syscalls", "count"},
	[JP_VAL_SYSCALL_NS] = {"syscall_time", "nanoseconds"},
	[JP_VAL_ALLOC_SPACE] = {"alloc_space", "bytes"},
	[JP_VAL_ALLOC_OBJECTS] = {"alloc_objects", "count"},
	[JP_VAL_INUSE_SPACE] = {"inuse_space", "bytes"},
	[JP_VAL_INUSE_OBJECTS] = {"inuse_objects", "count"},
	[JP_VAL_CONTENTIONS] = {"contentions", "count"},
	[JP_VAL_DELAY_NS] = {"delay", "nanoseconds"},
	[JP_VAL_PAUSE_NS] = {"pause", "nanoseconds"},
};

const char *jp_value_type(enum jp_value v)
{
	return v < JP_VAL_MAX ? value_names[v].type : "?";
}

const char *jp_value_unit(enum jp_value v)
{
	return v < JP_VAL_MAX ? value_names[v].unit : "?";
}

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

static bool bytes_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	(void)ctx;
	return !memcmp(a, b, size);
}

/* keyed (hashkey.h): names, addresses and stacks come from processes of other users */
static __u64 mix(__u64 h)
{
	h ^= hash_key();
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static __u64 hash_bytes(const void *p, size_t n, __u64 h)
{
	const unsigned char *s = p;

	h ^= 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return mix(h);
}

static bool model_refuse(struct model *m, size_t more);

/* the model's budget over an hmap index's arrays */
static int charge_map(void *ctx, long delta)
{
	return delta > 0 && model_refuse(ctx, (size_t)delta) ? -ENOSPC : 0;
}

static void table_init(struct table *t, size_t elem_size, elem_hash_fn hash_of,
		       struct model *m)
{
	memset(t, 0, sizeof(*t));
	t->elem_size = elem_size;
	t->hash_of = hash_of;
	t->m = m;
	hmap_init(&t->map, 64, 0);
	hmap_set_charge(&t->map, charge_map, m);
}

static void table_free(struct table *t)
{
	bool (*dead)(const void *elem) = t->dead;
	bool on_hmap = t->on_hmap;

	free(t->elems);
	free(t->slots);
	hmap_free(&t->map);
	table_init(t, t->elem_size, t->hash_of, t->m);
	t->dead = dead;
	t->on_hmap = on_hmap;
}

static void *table_at(const struct table *t, jp_id id)
{
	return (char *)t->elems + (size_t)id * t->elem_size;
}

/* the index again from the live elements (an element's hash changed) */
static int table_rehash(struct table *t, size_t nslots)
{
	jp_id *slots;

	if (t->on_hmap) {
		struct hmap old = t->map;
		int err = 0;

		hmap_init(&t->map, 64, 0);
		hmap_set_charge(&t->map, charge_map, t->m);
		for (size_t id = 1; id < t->n && !err; id++)
			if (!t->dead || !t->dead(table_at(t, (jp_id)id)))
				err = hmap_add2(&t->map, t->hash_of(t, table_at(t, (jp_id)id)), 0,
						id);
		if (err) { /* the old index stays: its hashes are off for the changed */
			hmap_free(&t->map);
			t->map = old;
			return err;
		}
		hmap_free(&old);
		return 0;
	}
	if (model_refuse(t->m, nslots * sizeof(*slots)))
		return -ENOSPC;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t id = 1; id < t->n; id++) {
		size_t i;

		if (t->dead && t->dead(table_at(t, (jp_id)id)))
			continue; /* freed: not found, its id waits for reuse */
		i = t->hash_of(t, table_at(t, (jp_id)id)) & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = (jp_id)id;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

static int table_reserve(struct table *t)
{
	if (t->n + 1 > t->cap) {
		/* by half again: the last growth of a large table leaves a third unused, not half */
		size_t cap = t->cap ? t->cap + t->cap / 2 : 64;
		void *e;

		if (model_refuse(t->m, (cap - t->cap) * t->elem_size))
			return -ENOSPC;
		e = realloc(t->elems, cap * t->elem_size);
		if (!e)
			return -ENOMEM;
		t->elems = e;
		t->cap = cap;
		if (!t->n) {
			memset(t->elems, 0, t->elem_size); /* element 0: "none" */
			t->n = 1;
		}
	}
	if (!t->on_hmap && (t->n + 1) * 2 > t->nslots)
		return table_rehash(t, t->nslots ? t->nslots * 2 : 128);
	return 0;
}

/* id of the element equal to e (hash h), 0 when none */
static jp_id table_find(const struct table *t, const void *e, __u64 h, elem_eq_fn eq,
			const void *ctx)
{
	if (t->on_hmap) {
		size_t pos = 0;
		const __u64 *v;

		while ((v = hmap_find_next2(&t->map, h, 0, &pos)))
			if (eq(ctx, table_at(t, (jp_id)*v), e, t->elem_size))
				return (jp_id)*v;
		return 0;
	}
	if (!t->nslots)
		return 0;
	for (size_t i = h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		jp_id id = t->slots[i];

		if (eq(ctx, table_at(t, id), e, t->elem_size))
			return id;
	}
	return 0;
}

/* puts id (its element in place, hash h) into the index; 0, or -ENOMEM/-ENOSPC (hmap) */
static int table_index(struct table *t, jp_id id, __u64 h)
{
	size_t i;

	if (t->on_hmap)
		return hmap_add2(&t->map, h, 0, id);
	for (i = h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		;
	t->slots[i] = id;
	return 0;
}

/* id of the element equal to e (hash h), adding a copy when new; 0 when out of memory */
static jp_id table_intern(struct table *t, const void *e, __u64 h, elem_eq_fn eq, const void *ctx)
{
	size_t i;
	jp_id id = table_find(t, e, h, eq, ctx);

	if (id)
		return id;
	if (t->n >= 0xffffffffu || table_reserve(t))
		return 0;
	memcpy(table_at(t, (jp_id)t->n), e, t->elem_size);
	if (t->on_hmap) {
		if (hmap_add2(&t->map, h, 0, t->n) < 0)
			return 0;
		return (jp_id)t->n++;
	}
	for (i = h & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		;
	t->slots[i] = (jp_id)t->n;
	return (jp_id)t->n++;
}

struct stack_ref {
	size_t off, n; /* into model.stack_locs */
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
	jp_id *stack_locs;
	size_t nstack_locs, cap_stack_locs;
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
};

static size_t table_bytes(const struct table *t);
static size_t count(const struct table *t);

static size_t model_bytes(const struct model *m)
{
	return m->pool.total + table_bytes(&m->strs) + table_bytes(&m->funcs) +
	       table_bytes(&m->maps) + table_bytes(&m->locs) + table_bytes(&m->labels) +
	       table_bytes(&m->stacks) + table_bytes(&m->rows) +
	       m->cap_stack_locs * sizeof(*m->stack_locs) +
	       m->cap_free_labels * sizeof(*m->free_labels);
}

/* true (counted) when more bytes would take the model past its budget */
static bool model_refuse(struct model *m, size_t more)
{
	if (model_bytes(m) + more <= m->max_bytes)
		return false;
	m->over_budget++;
	return true;
}

static __u64 str_hash(const char *s)
{
	return hash_bytes(s, strlen(s), 0);
}

/* interned strings compare by pointer from here on */
static __u64 ptr_hash(const void *p, __u64 h)
{
	return mix(h ^ (__u64)(unsigned long)p);
}

static __u64 strs_hash_of(const struct table *t, const void *e)
{
	(void)t;
	return str_hash(*(const char *const *)e);
}

static __u64 func_hash_of(const struct table *t, const void *e)
{
	const struct jp_func *f = e;

	(void)t;
	return ptr_hash(f->file, ptr_hash(f->name, f->java));
}

static __u64 map_hash_of(const struct table *t, const void *e)
{
	const struct jp_mapping *c = e;

	(void)t;
	return ptr_hash(c->file, mix(c->start ^ mix(c->limit ^ mix(c->offset))));
}

static __u64 loc_hash_of(const struct table *t, const void *e)
{
	const struct jp_location *c = e;

	(void)t;
	return mix(c->addr ^ mix(((__u64)c->func << 32 | c->mapping) ^
				 ((__u64)(__u32)c->line << 8 | c->kind)));
}

/* a folded set is found by its name whatever its count: nfolded is hashed as "folded or not" */
static __u64 labels_hash_of(const struct table *t, const void *e)
{
	const struct jp_labels *c = e;
	__u64 h = ptr_hash(c->comm, ptr_hash(c->thread, ptr_hash(c->container, mix(c->cgroup))));

	h = ptr_hash(c->main, h ^ (c->nfolded != 0));

	(void)t;
	return mix(h ^ ((__u64)c->pid << 32 | c->tid));
}

static bool labels_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	const struct jp_labels *x = a, *y = b;

	(void)ctx;
	(void)size;
	return x->pid == y->pid && x->tid == y->tid && x->comm == y->comm &&
	       x->thread == y->thread && x->cgroup == y->cgroup && x->container == y->container &&
	       x->main == y->main && !x->nfolded == !y->nfolded;
}

/* a label set freed by a fold: zeroed, so its comm is NULL */
static bool labels_dead(const void *e)
{
	return !((const struct jp_labels *)e)->comm;
}

static __u64 locs_hash(const jp_id *locs, size_t n)
{
	return hash_bytes(locs, n * sizeof(*locs), n);
}

static __u64 stack_hash_of(const struct table *t, const void *e)
{
	const struct stack_ref *r = e;

	return locs_hash(r->n ? t->m->stack_locs + r->off : NULL, r->n);
}

static __u64 row_hash(jp_id stack, jp_id labels)
{
	return mix((__u64)stack << 32 | labels);
}

static __u64 row_hash_of(const struct table *t, const void *e)
{
	const struct row_key *k = e;

	(void)t;
	return row_hash(k->stack, k->labels);
}

struct model *model__new(void)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	strpool_init(&m->pool, 0);
	m->max_bytes = MODEL_MAX_BYTES;
	table_init(&m->strs, sizeof(const char *), strs_hash_of, m);
	table_init(&m->funcs, sizeof(struct jp_func), func_hash_of, m);
	table_init(&m->maps, sizeof(struct jp_mapping), map_hash_of, m);
	table_init(&m->locs, sizeof(struct jp_location), loc_hash_of, m);
	table_init(&m->labels, sizeof(struct jp_labels), labels_hash_of, m);
	m->labels.dead = labels_dead;
	m->labels.on_hmap = true;
	table_init(&m->stacks, sizeof(struct stack_ref), stack_hash_of, m);
	table_init(&m->rows, sizeof(struct row_key), row_hash_of, m);
	memset(m->col, -1, sizeof(m->col));
	tseries_init(&m->ts);
	return m;
}

void model__free(struct model *m)
{
	if (!m)
		return;
	table_free(&m->strs);
	table_free(&m->funcs);
	table_free(&m->maps);
	table_free(&m->locs);
	table_free(&m->labels);
	table_free(&m->stacks);
	table_free(&m->rows);
	free(m->stack_locs);
	free(m->free_labels);
	tseries_free(&m->ts);
	strpool_free(&m->pool);
	free(m);
}

/* strings: compared by content (the probe is a not-yet-interned pointer) */
static bool str_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	(void)ctx;
	(void)size;
	return !strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *model__str(struct model *m, const char *s)
{
	size_t n, i;
	__u64 h;
	jp_id id;

	if (!s)
		s = "";
	n = strlen(s);
	h = hash_bytes(s, n, 0);
	/* look up first, so a known string costs no copy */
	if (m->strs.nslots) {
		for (i = h & (m->strs.nslots - 1); m->strs.slots[i];
		     i = (i + 1) & (m->strs.nslots - 1)) {
			const char *t = *(const char **)table_at(&m->strs, m->strs.slots[i]);

			if (!strcmp(t, s))
				return t;
		}
	}
	/* a new block of the pool at most (util/strpool.c: 64 KiB, or the string's own) */
	if (model_refuse(m, n + 1 + (64u << 10)))
		return NULL;
	s = strpool_add(&m->pool, s, n);
	if (!s)
		return NULL;
	id = table_intern(&m->strs, &s, h, str_eq, NULL);
	return id ? s : NULL;
}

jp_id model__func(struct model *m, const char *name, const char *file, bool java)
{
	struct jp_func f;

	memset(&f, 0, sizeof(f)); /* padding compares too */
	f.name = model__str(m, name);
	f.file = model__str(m, file);
	f.java = java;
	if (!f.name || !f.file)
		return 0;
	return table_intern(&m->funcs, &f, func_hash_of(&m->funcs, &f), bytes_eq, NULL);
}

jp_id model__mapping(struct model *m, const struct jp_mapping *mp)
{
	struct jp_mapping c;

	memset(&c, 0, sizeof(c));
	c.start = mp->start;
	c.limit = mp->limit;
	c.offset = mp->offset;
	c.file = model__str(m, mp->file);
	c.build_id = model__str(m, mp->build_id);
	if (!c.file || !c.build_id)
		return 0;
	return table_intern(&m->maps, &c, map_hash_of(&m->maps, &c), bytes_eq, NULL);
}

jp_id model__location(struct model *m, const struct jp_location *loc)
{
	struct jp_location c;

	memset(&c, 0, sizeof(c)); /* padding compares too */
	c.func = loc->func;
	c.mapping = loc->mapping;
	c.addr = loc->addr;
	c.line = loc->line;
	c.kind = loc->kind;
	return table_intern(&m->locs, &c, loc_hash_of(&m->locs, &c), bytes_eq, NULL);
}

/* a set's id, a freed id reused for a new one (the index has room: it holds no freed id) */
static jp_id labels_intern(struct model *m, const struct jp_labels *c)
{
	__u64 h = labels_hash_of(&m->labels, c);
	jp_id id = table_find(&m->labels, c, h, labels_eq, NULL);

	if (id || !m->nfree_labels)
		return id ? id : table_intern(&m->labels, c, h, labels_eq, NULL);
	id = m->free_labels[m->nfree_labels - 1];
	memcpy(table_at(&m->labels, id), c, sizeof(*c));
	if (table_index(&m->labels, id, h)) {
		memset(table_at(&m->labels, id), 0, sizeof(*c)); /* freed again */
		return 0;
	}
	m->nfree_labels--;
	return id;
}

jp_id model__labels(struct model *m, const struct jp_labels *l)
{
	struct jp_labels c;

	memset(&c, 0, sizeof(c));
	c.pid = l->pid;
	c.tid = l->tid;
	c.cgroup = l->cgroup;
	c.comm = model__str(m, l->comm);
	c.thread = model__str(m, l->thread);
	c.container = model__str(m, l->container);
	c.main = model__str(m, l->main);
	c.nfolded = l->nfolded;
	if (!c.comm || !c.thread || !c.container || !c.main)
		return 0;
	return labels_intern(m, &c);
}

int model__name_process(struct model *m, __u32 pid, const char *main)
{
	const char *s;
	bool changed = false;

	if (!main || !*main)
		return 0;
	s = model__str(m, main);
	if (!s)
		return -ENOSPC;
	for (size_t id = 1; id < m->labels.n; id++) {
		struct jp_labels *l = table_at(&m->labels, (jp_id)id);

		if (l->comm && !l->nfolded && l->pid == pid && !l->main[0]) {
			l->main = s;
			changed = true;
		}
	}
	/* same labels twice now (named and unnamed before) are two ids of one content: harmless */
	return changed ? table_rehash(&m->labels, m->labels.nslots) : 0;
}

/* takes id out of the index (backward shift: no tombstones); its element is still in place */
static void table_unindex(struct table *t, jp_id id)
{
	size_t mask = t->nslots - 1, i, j;

	if (t->on_hmap) {
		__u64 h = t->hash_of(t, table_at(t, id)), *v;
		size_t pos = 0;

		while ((v = hmap_find_next2(&t->map, h, 0, &pos)))
			if (*v == id) {
				hmap_del_at(&t->map, v);
				return;
			}
		return;
	}
	i = t->hash_of(t, table_at(t, id)) & mask;

	while (t->slots[i] != id) {
		if (!t->slots[i])
			return;
		i = (i + 1) & mask;
	}
	for (j = i;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!t->slots[j])
			break;
		k = t->hash_of(t, table_at(t, t->slots[j])) & mask;
		/* slots[j] may move to i when its home k is not cyclically within (i, j] */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i] = 0;
}

static bool row_eq(const void *ctx, const void *a, const void *b, size_t size);

/* the rows again, with labels mapped by to[] (0: kept), equal keys merged; 0 or -errno */
static int rows_remap(struct model *m, const jp_id *to, size_t nto)
{
	struct table nr;
	char *buf;
	__u32 *rto;
	int err = 0;

	if (!m->rows.n)
		return 0;
	buf = malloc(m->rows.elem_size);
	rto = calloc(m->rows.n, sizeof(*rto));
	if (!buf || !rto) {
		free(buf);
		free(rto);
		return -ENOMEM;
	}
	table_init(&nr, m->rows.elem_size, row_hash_of, m);
	for (size_t id = 1; id < m->rows.n; id++) {
		struct row_key *k = (struct row_key *)buf;
		__u64 *v = (__u64 *)(buf + sizeof(*k)), *dv;
		jp_id nid;

		memcpy(buf, table_at(&m->rows, (jp_id)id), m->rows.elem_size);
		if (k->labels < nto && to[k->labels])
			k->labels = to[k->labels];
		nid = table_find(&nr, buf, row_hash(k->stack, k->labels), row_eq, NULL);
		if (nid) {
			dv = (__u64 *)((char *)table_at(&nr, nid) + sizeof(*k));
			for (unsigned int c = 0; c < m->ncols; c++)
				dv[c] += v[c];
			rto[id] = nid;
			continue;
		}
		nid = table_intern(&nr, buf, row_hash(k->stack, k->labels), row_eq, NULL);
		if (!nid) {
			err = -ENOMEM; /* or -ENOSPC: the caller knows by the budget's count */
			break;
		}
		rto[id] = nid;
	}
	free(buf);
	/* the merged rows' times join (last: nothing fails after it) */
	if (!err)
		err = tseries_remap(&m->ts, rto, m->rows.n, nr.n);
	free(rto);
	if (err) {
		table_free(&nr);
		return err;
	}
	table_free(&m->rows);
	m->rows = nr;
	return 0;
}

#define FOLD_NEW    (1ull << 63)
#define SEEN_EXITED 2 /* in seen: one of the pid's entries that matched is an exit */

/*
 * the entry of ends[] (values of pid in set) that ends label set l, NULL when none: the exec
 * that left its name (counted as such), else the pid's exit
 */
static const struct model_end *end_of(const struct hmap *set, const struct model_end *ends,
				      const struct jp_labels *l)
{
	const struct model_end *exited = NULL;
	size_t pos = 0;
	__u64 *v;

	while ((v = hmap_find_next2(set, l->pid, 0, &pos))) {
		const struct model_end *e = &ends[*v];

		if (!e->comm)
			exited = e;
		else if (!strcmp(e->comm, l->comm))
			return e;
	}
	return exited;
}

int model__fold(struct model *m, const struct model_end *ends, size_t n)
{
	struct hmap set = {0}, seen = {0}, add = {0};
	size_t nl = m->labels.n, nfree = 0, pos = 0;
	const char *empty = model__str(m, "");
	jp_id *to = NULL;
	__u64 *v, k1;
	__u64 over = m->over_budget;
	int err = -ENOMEM;

	if (!empty)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (hmap_add2(&set, ends[i].pid, 0, i) < 0)
			goto out;
	to = calloc(nl ? nl : 1, sizeof(*to));
	if (!to)
		goto out;
	/*
	 * each set a program's end ends: the folded set of its name, found or added (with count
	 * 1, flagged in add: FOLD_NEW); add counts the processes that fold into each
	 */
	for (size_t id = 1; id < nl; id++) {
		const struct jp_labels *l = table_at(&m->labels, (jp_id)id);
		const struct model_end *e;
		struct jp_labels f;
		__u32 pid = l->pid;
		bool is_new;

		if (!l->comm || l->nfolded || !hmap_find(&set, pid))
			continue;
		e = end_of(&set, ends, l);
		if (!e)
			continue;
		memset(&f, 0, sizeof(f));
		f.comm = l->comm;
		f.thread = empty;
		f.container = l->container;
		f.main = l->main;
		f.nfolded = 1;
		to[id] =
			table_find(&m->labels, &f, labels_hash_of(&m->labels, &f), labels_eq, NULL);
		if (!to[id]) {
			/*
			 * a new folded set, perhaps in an id an earlier fold freed (below nl:
			 * the walk skips it, as a folded set)
			 */
			to[id] = labels_intern(m, &f);
			if (!to[id] || hmap_put(&add, to[id], FOLD_NEW) < 0)
				goto out_fail;
		}
		nfree++;
		v = hmap_get2(&seen, to[id], pid, &is_new);
		if (!v)
			goto out_fail;
		if (!e->comm)
			*v |= SEEN_EXITED;
		if (is_new) {
			v = hmap_get(&add, to[id], &is_new);
			if (!v)
				goto out_fail;
			++*v;
		}
	}
	if (!nfree) {
		err = 0;
		goto out;
	}
	if (m->nfree_labels + nfree > m->cap_free_labels) {
		size_t cap = m->nfree_labels + nfree + 64;
		jp_id *p;

		if (model_refuse(m, (cap - m->cap_free_labels) * sizeof(*p))) {
			err = -ENOSPC;
			goto out_fail;
		}
		p = realloc(m->free_labels, cap * sizeof(*p));
		if (!p)
			goto out_fail;
		m->free_labels = p;
		m->cap_free_labels = cap;
	}
	err = rows_remap(m, to, nl);
	if (err)
		goto out_fail;
	/* from here nothing fails: the counts, then the dropped sets freed */
	while ((v = hmap_next(&add, &pos, &k1, NULL))) {
		struct jp_labels *f = table_at(&m->labels, (jp_id)k1);

		f->nfolded += (__u32)(*v & ~FOLD_NEW) - (*v & FOLD_NEW ? 1 : 0);
	}
	for (size_t id = 1; id < nl; id++) {
		if (!to[id])
			continue;
		table_unindex(&m->labels, (jp_id)id);
		memset(table_at(&m->labels, (jp_id)id), 0, sizeof(struct jp_labels));
		m->free_labels[m->nfree_labels++] = (jp_id)id;
	}
	for (pos = 0; (v = hmap_next(&seen, &pos, NULL, NULL));)
		if (*v & SEEN_EXITED)
			m->folded++;
		else
			m->folded_execs++;
	err = 0;
	goto out;
out_fail:
	/* a folded set added here stays, with no row yet: harmless */
	if (err != -ENOSPC)
		err = m->over_budget != over ? -ENOSPC : -ENOMEM;
out:
	free(to);
	hmap_free(&set);
	hmap_free(&seen);
	hmap_free(&add);
	return err;
}

int model__fold_pids(struct model *m, const __u32 *pids, size_t n)
{
	struct model_end *ends = calloc(n ? n : 1, sizeof(*ends));
	int err;

	if (!ends)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ends[i].pid = pids[i];
	err = model__fold(m, ends, n);
	free(ends);
	return err;
}

/* ctx: the model, whose probe_locs/probe_n hold the stack being looked up */
static bool stack_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	const struct stack_ref *r = a;
	const struct model *m = ctx;

	(void)b;
	(void)size;
	/* an empty stack (both walks failed) has no storage: stack_locs may still be NULL */
	return r->n == m->probe_n &&
	       (!r->n || !memcmp(m->stack_locs + r->off, m->probe_locs, r->n * sizeof(jp_id)));
}

jp_id model__stack(struct model *m, const jp_id *locs, size_t n)
{
	struct stack_ref r = {.off = m->nstack_locs, .n = n};
	size_t before = m->stacks.n;
	jp_id id;

	if (m->nstack_locs + n > m->cap_stack_locs) {
		size_t cap = m->cap_stack_locs ? m->cap_stack_locs : 1024;
		jp_id *p;

		while (cap < m->nstack_locs + n)
			cap += cap / 2;
		if (model_refuse(m, (cap - m->cap_stack_locs) * sizeof(*p)))
			return 0;
		p = realloc(m->stack_locs, cap * sizeof(*p));
		if (!p)
			return 0;
		m->stack_locs = p;
		m->cap_stack_locs = cap;
	}
	m->probe_locs = locs;
	m->probe_n = n;
	id = table_intern(&m->stacks, &r, locs_hash(locs, n), stack_eq, m);
	if (id && m->stacks.n != before) { /* new: keep its locations */
		if (n)
			memcpy(m->stack_locs + m->nstack_locs, locs, n * sizeof(*locs));
		m->nstack_locs += n;
	}
	return id;
}

static bool row_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	(void)ctx;
	(void)size;
	return !memcmp(a, b, sizeof(struct row_key));
}

static __u64 *row_vals(const struct model *m, jp_id id)
{
	return (__u64 *)((char *)table_at(&m->rows, id) + sizeof(struct row_key));
}

/* a column for v: the rows are laid out again one value wider */
static int add_column(struct model *m, enum jp_value v)
{
	size_t old = m->rows.elem_size, size = old + sizeof(__u64);
	char *e = NULL;

	if (m->rows.cap) {
		if (model_refuse(m, m->rows.cap * size))
			return -ENOSPC;
		e = malloc(m->rows.cap * size);
		if (!e)
			return -ENOMEM;
	}
	/* the time entries too: a failure there leaves both as they were */
	if (tseries_add_column(&m->ts)) {
		free(e);
		return -ENOMEM;
	}
	if (e) {
		for (size_t id = 0; id < m->rows.n; id++) {
			memcpy(e + id * size, (char *)m->rows.elems + id * old, old);
			memset(e + id * size + old, 0, sizeof(__u64));
		}
		free(m->rows.elems);
		m->rows.elems = e;
	}
	m->rows.elem_size = size;
	m->col[v] = (signed char)m->ncols;
	m->col_val[m->ncols++] = v;
	return 0;
}

int model__add(struct model *m, jp_id stack, jp_id labels, enum jp_value v, __u64 value)
{
	union {
		struct row_key k;
		__u64 all[1 + JP_VAL_MAX];
	} r;
	__u64 over;
	jp_id id;
	int err;

	if (v >= JP_VAL_MAX || !stack || !model__get_labels(m, labels))
		return -EINVAL;
	if (m->col[v] < 0 && (err = add_column(m, v)))
		return err;
	memset(&r, 0, sizeof(r));
	r.k.stack = stack;
	r.k.labels = labels;
	over = m->over_budget;
	id = table_intern(&m->rows, &r, row_hash(stack, labels), row_eq, NULL);
	if (!id)
		return m->over_budget != over ? -ENOSPC : -ENOMEM;
	row_vals(m, id)[m->col[v]] += value;
	m->totals[v] += value;
	/* a time entry that cannot be had (out of memory) leaves the row's time short: not an error */
	(void)tseries_add(&m->ts, id, (unsigned int)m->col[v], value);
	return 0;
}

int model__set(struct model *m, size_t i, enum jp_value v, __u64 value)
{
	__u64 *val;

	if (v >= JP_VAL_MAX || m->col[v] < 0 || i >= model__rows(m))
		return -EINVAL;
	val = &row_vals(m, (jp_id)(i + 1))[m->col[v]];
	/* CPU time goes to a row's slots by their samples (model/spread.c), others keep their shape */
	if (v == JP_VAL_CPU_NS && m->col[JP_VAL_CPU_SAMPLES] >= 0)
		tseries_fit(&m->ts, (__u32)(i + 1), (unsigned int)m->col[v],
			    (unsigned int)m->col[JP_VAL_CPU_SAMPLES], value,
			    row_vals(m, (jp_id)(i + 1))[m->col[JP_VAL_CPU_SAMPLES]]);
	else
		tseries_fit(&m->ts, (__u32)(i + 1), (unsigned int)m->col[v],
			    (unsigned int)m->col[v], value, *val);
	m->totals[v] += value - *val;
	*val = value;
	return 0;
}

void model__reset(struct model *m)
{
	table_free(&m->rows);
	tseries_free(&m->ts);
	/* the next rows (a store's next segment) start at 100 ms again */
	m->ts.res_ms = TSERIES_RES_MS;
	m->ts.coarsened = 0;
	m->ts.lost = false;
	memset(m->totals, 0, sizeof(m->totals));
}

size_t model__rows(const struct model *m)
{
	return m->rows.n ? m->rows.n - 1 : 0;
}

const struct jp_sample_row *model__row(const struct model *m, size_t i, struct jp_sample_row *buf)
{
	const struct row_key *k;
	const __u64 *vals;

	if (i >= model__rows(m))
		return NULL;
	k = table_at(&m->rows, (jp_id)(i + 1));
	vals = row_vals(m, (jp_id)(i + 1));
	memset(buf, 0, sizeof(*buf));
	buf->stack = k->stack;
	buf->labels = k->labels;
	for (unsigned int c = 0; c < m->ncols; c++)
		buf->values[m->col_val[c]] = vals[c];
	return buf;
}

const struct jp_func *model__get_func(const struct model *m, jp_id id)
{
	return id && id < m->funcs.n ? table_at(&m->funcs, id) : NULL;
}

const struct jp_mapping *model__get_mapping(const struct model *m, jp_id id)
{
	return id && id < m->maps.n ? table_at(&m->maps, id) : NULL;
}

const struct jp_location *model__get_location(const struct model *m, jp_id id)
{
	return id && id < m->locs.n ? table_at(&m->locs, id) : NULL;
}

const struct jp_labels *model__get_labels(const struct model *m, jp_id id)
{
	const struct jp_labels *l = id && id < m->labels.n ? table_at(&m->labels, id) : NULL;

	return l && l->comm ? l : NULL;
}

const jp_id *model__get_stack(const struct model *m, jp_id id, size_t *n)
{
	const struct stack_ref *r;

	*n = 0;
	if (!id || id >= m->stacks.n)
		return NULL;
	r = table_at(&m->stacks, id);
	*n = r->n;
	/* an empty stack may come before any location was stored (stack_locs still NULL) */
	return r->n ? m->stack_locs + r->off : NULL;
}

static size_t count(const struct table *t)
{
	return t->n ? t->n - 1 : 0;
}

void model__counts(const struct model *m, struct model_counts *ret)
{
	ret->strings = count(&m->strs);
	ret->funcs = count(&m->funcs);
	ret->mappings = count(&m->maps);
	ret->locations = count(&m->locs);
	ret->labels = count(&m->labels);
	ret->stacks = count(&m->stacks);
	ret->rows = count(&m->rows);
}

__u64 model__total(const struct model *m, enum jp_value v)
{
	return v < JP_VAL_MAX ? m->totals[v] : 0;
}

static size_t table_bytes(const struct table *t)
{
	return t->cap * t->elem_size + t->nslots * sizeof(*t->slots) + hmap_bytes(&t->map);
}

void model__mem(const struct model *m, struct model_mem *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!m)
		return;
	ret->strs = m->strs.n;
	ret->funcs = m->funcs.n;
	ret->maps = m->maps.n;
	ret->locs = m->locs.n;
	ret->labels = count(&m->labels) - m->nfree_labels;
	ret->labels_free = m->nfree_labels;
	ret->folded = m->folded;
	ret->folded_execs = m->folded_execs;
	ret->stacks = m->stacks.n;
	ret->stack_locs = m->nstack_locs;
	ret->rows = m->rows.n;
	ret->str_bytes = m->pool.total + table_bytes(&m->strs);
	ret->loc_bytes = table_bytes(&m->locs);
	ret->stack_bytes = table_bytes(&m->stacks) + m->cap_stack_locs * sizeof(*m->stack_locs);
	ret->row_bytes = table_bytes(&m->rows);
	ret->time_bytes = tseries_bytes(&m->ts);
	ret->time_entries = m->ts.n;
	ret->bytes = model_bytes(m);
	ret->over_budget = m->over_budget;
}

void model__set_max_bytes(struct model *m, size_t max_bytes)
{
	m->max_bytes = max_bytes;
}

__u64 model__over_budget(const struct model *m)
{
	return m->over_budget;
}

void model__set_clock(struct model *m, __u64 mono_ns, __u64 wall_ns)
{
	struct tseries *t = &m->ts;
	__u64 res = (__u64)t->res_ms * 1000000ull, d;

	if (t->has_clock && t->n) {
		/*
		 * entries exist: slot 0 moves by whole slots (to the one mono_ns is in), so each
		 * entry keeps its slot's bounds; those before the new start go to slot 0
		 */
		if (mono_ns >= t->mono0) {
			d = (mono_ns - t->mono0) / res;
			for (size_t k = 0; k < t->n; k++)
				tseries_at(t, k)->slot = tseries_at(t, k)->slot > d
								 ? tseries_at(t, k)->slot - (__u32)d
								 : 0;
			/* the wall time at slot d's start */
			wall_ns -= mono_ns - (t->mono0 + d * res);
			mono_ns = t->mono0 + d * res;
		} else {
			return; /* an earlier start with entries: kept as it is */
		}
	}
	t->mono0 = mono_ns;
	t->wall0 = wall_ns;
	t->has_clock = true;
}

void model__set_time_res(struct model *m, __u32 res_ms)
{
	__u32 r = TSERIES_RES_MS;

	if (m->ts.n || !res_ms)
		return;
	while (r < res_ms && r <= (1u << 30))
		r *= 2;
	m->ts.res_ms = r;
	m->ts.coarsened = 0;
	for (__u32 x = TSERIES_RES_MS; x < r; x *= 2)
		m->ts.coarsened++;
}

void model__at(struct model *m, __u64 mono_ns)
{
	m->ts.now = mono_ns;
}

__u64 model__mono_of(const struct model *m, __u64 wall_ns)
{
	const struct tseries *t = &m->ts;

	if (!t->has_clock)
		return 0;
	if (wall_ns >= t->wall0)
		return t->mono0 + (wall_ns - t->wall0);
	/* before the start: slot 0 (and never 0, "untimed") */
	return t->mono0 > t->wall0 - wall_ns ? t->mono0 - (t->wall0 - wall_ns) : 1;
}

void model__time_info(const struct model *m, struct model_time *ret)
{
	const struct tseries *t = &m->ts;

	memset(ret, 0, sizeof(*ret));
	ret->has_clock = t->has_clock;
	ret->start_unix_ns = t->wall0;
	ret->res_ms = t->res_ms;
	ret->coarsened = t->coarsened;
	ret->lost = t->lost;
	ret->entries = t->n;
	ret->bytes = tseries_bytes(t);
	for (size_t k = 0; k < t->n; k++)
		if (tseries_at(t, k)->row && tseries_at(t, k)->slot > ret->max_slot)
			ret->max_slot = tseries_at(t, k)->slot;
}

size_t model__time_first(const struct model *m, size_t i)
{
	return i + 1 < m->ts.nrows ? m->ts.head[i + 1] : 0;
}

const struct jp_time_ent *model__time(const struct model *m, size_t k, struct jp_time_ent *buf)
{
	const struct tseries_ent *e;

	if (k >= m->ts.n)
		return NULL;
	e = tseries_at(&m->ts, k);
	memset(buf, 0, sizeof(*buf));
	buf->row = e->row ? e->row - 1 : (size_t)-1; /* a dead entry (row 0) belongs to no row */
	buf->slot = e->slot;
	buf->next = e->next;
	for (unsigned int c = 0; c < m->ncols && c < m->ts.ncols; c++)
		buf->values[m->col_val[c]] = e->v[c];
	return buf;
}

void model__set_time_max_bytes(struct model *m, size_t max_bytes)
{
	m->ts.max_bytes = max_bytes;
}

static int add_row(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
		   size_t src_i, bool all, __u64 since_ns, __u64 until_ns);

int model__add_row_timed(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
			 size_t src_i)
{
	return add_row(dst, stack, labels, src, src_i, true, 0, 0);
}

int model__add_row_range(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
			 size_t src_i, __u64 since_ns, __u64 until_ns)
{
	return add_row(dst, stack, labels, src, src_i, false, since_ns, until_ns);
}

/* all: every value, the untimed rest too; else the entries of the range only */
static int add_row(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
		   size_t src_i, bool all, __u64 since_ns, __u64 until_ns)
{
	struct jp_sample_row rb;
	const struct jp_sample_row *r = model__row(src, src_i, &rb);
	__u64 left[JP_VAL_MAX], now = dst->ts.now;
	struct jp_time_ent eb;
	int err = 0;

	if (!r)
		return -EINVAL;
	if (!dst->ts.has_clock && src->ts.has_clock) {
		model__set_clock(dst, src->ts.mono0, src->ts.wall0);
		if (!dst->ts.n)
			dst->ts.res_ms = src->ts.res_ms;
	}
	memcpy(left, r->values, sizeof(left));
	for (size_t k = model__time_first(src, src_i); k && !err; k = eb.next) {
		const struct jp_time_ent *e = model__time(src, k - 1, &eb);
		__u64 wall = src->ts.wall0 + (__u64)e->slot * src->ts.res_ms * 1000000ull;

		bool in = all || (wall >= since_ns && wall < until_ns);

		model__at(dst, model__mono_of(dst, wall));
		for (int v = 0; v < JP_VAL_MAX && !err; v++) {
			__u64 x = e->values[v] < left[v] ? e->values[v] : left[v];

			if (x && in)
				err = model__add(dst, stack, labels, (enum jp_value)v, x);
			left[v] -= x;
		}
	}
	model__at(dst, 0);
	for (int v = 0; v < JP_VAL_MAX && !err && all; v++)
		if (left[v])
			err = model__add(dst, stack, labels, (enum jp_value)v, left[v]);
	model__at(dst, now);
	return err;
}

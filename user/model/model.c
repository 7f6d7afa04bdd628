// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * model.c: the model's interned tables (strings, functions, mappings, locations, labels,
 * stacks): find-or-add, reading back, and what they hold. The table itself is
 * model_table.c; the rows of values are model_rows.c, folds of label sets model_fold.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

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

static bool bytes_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	(void)ctx;
	return !memcmp(a, b, size);
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
__u64 labels_hash_of(const struct table *t, const void *e)
{
	const struct jp_labels *c = e;
	__u64 h = ptr_hash(c->comm, ptr_hash(c->thread, ptr_hash(c->container, mix(c->cgroup))));

	h = ptr_hash(c->main, h ^ (c->nfolded != 0));

	(void)t;
	return mix(h ^ ((__u64)c->pid << 32 | c->tid));
}

bool labels_eq(const void *ctx, const void *a, const void *b, size_t size)
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

/* locs_hash of a stack in the trie, walked from its leaf up (the order of its locations) */
static __u64 node_locs_hash(const struct model *m, jp_id node, size_t n)
{
	__u64 h = n ^ FNV_OFFSET;

	for (size_t i = 0; i < n && node; i++) {
		const struct stack_node *d = table_at(&m->nodes, node);

		h = fnv_bytes(h, &d->loc, sizeof(d->loc));
		node = d->parent;
	}
	return mix(h);
}

static __u64 stack_hash_of(const struct table *t, const void *e)
{
	const struct stack_ref *r = e;

	return node_locs_hash(t->m, r->node, r->n);
}

static __u64 node_hash(jp_id parent, jp_id loc)
{
	return mix((__u64)parent << 32 | loc);
}

static __u64 node_hash_of(const struct table *t, const void *e)
{
	const struct stack_node *d = e;

	(void)t;
	return node_hash(d->parent, d->loc);
}

static bool node_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	const struct stack_node *x = a, *y = b;

	(void)ctx;
	(void)size;
	return x->parent == y->parent && x->loc == y->loc;
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
	table_init(&m->nodes, sizeof(struct stack_node), node_hash_of, m);
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
	table_free(&m->nodes);
	table_free(&m->rows);
	free(m->get_buf);
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
jp_id labels_intern(struct model *m, const struct jp_labels *c)
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

/* ctx: the model, whose probe_locs/probe_n hold the stack being looked up */
static bool stack_eq(const void *ctx, const void *a, const void *b, size_t size)
{
	const struct stack_ref *r = a;
	const struct model *m = ctx;
	jp_id node = r->node;

	(void)b;
	(void)size;
	if (r->n != m->probe_n)
		return false;
	for (size_t i = 0; i < r->n; i++) {
		const struct stack_node *d;

		if (!node)
			return false;
		d = table_at(&m->nodes, node);
		if (d->loc != m->probe_locs[i])
			return false;
		node = d->parent;
	}
	return true;
}

static jp_id stack_find(struct model *m, const jp_id *locs, size_t n, __u64 h)
{
	struct stack_ref r = {.node = 0, .n = (jp_id)n};

	if (n > 0xffffffffu)
		return 0;
	m->probe_locs = locs;
	m->probe_n = n;
	return table_find(&m->stacks, &r, h, stack_eq, m);
}

jp_id model__stack_find(struct model *m, const jp_id *locs, size_t n)
{
	return stack_find(m, locs, n, locs_hash(locs, n));
}

size_t model__stack_nodes(const struct model *m)
{
	return m->nodes.n;
}

jp_id model__stack(struct model *m, const jp_id *locs, size_t n)
{
	struct stack_ref r = {.node = 0, .n = (jp_id)n};
	__u64 h = locs_hash(locs, n);
	jp_id id = stack_find(m, locs, n, h);

	if (id || n > 0xffffffffu)
		return id;
	/* new: its nodes from the root (those of its callers are there already, mostly) */
	if (n > m->get_cap) {
		size_t cap = m->get_cap ? m->get_cap : 64;
		jp_id *p;

		while (cap < n)
			cap *= 2;
		if (model_refuse(m, (cap - m->get_cap) * sizeof(*p)))
			return 0;
		p = realloc(m->get_buf, cap * sizeof(*p));
		if (!p)
			return 0;
		m->get_buf = p;
		m->get_cap = cap;
	}
	for (size_t i = n; i-- > 0;) {
		struct stack_node d = {.parent = r.node, .loc = locs[i]};

		r.node = table_intern(&m->nodes, &d, node_hash(d.parent, d.loc), node_eq, NULL);
		if (!r.node)
			return 0;
	}
	return table_add(&m->stacks, &r, h);
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
	jp_id node, *buf = m->get_buf; /* the model's own room: see model_int.h */

	*n = 0;
	if (!id || id >= m->stacks.n)
		return NULL;
	r = table_at(&m->stacks, id);
	if (!r->n || r->n > m->get_cap)
		return NULL;
	node = r->node;
	for (size_t i = 0; i < r->n; i++) {
		const struct stack_node *d = table_at(&m->nodes, node);

		buf[i] = d->loc;
		node = d->parent;
	}
	*n = r->n;
	return buf;
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
	ret->stack_nodes = m->nodes.n ? m->nodes.n - 1 : 0;
	ret->rows = m->rows.n;
	ret->str_bytes = m->pool.total + table_bytes(&m->strs);
	ret->loc_bytes = table_bytes(&m->locs);
	ret->stack_bytes = table_bytes(&m->stacks) + table_bytes(&m->nodes) +
			   m->get_cap * sizeof(*m->get_buf);
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

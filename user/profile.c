// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile.c: the aggregate trie (sorted child arrays, interned names), merge and folded reader. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

#define NODES_PER_SLAB	 1024
#define STR_CHUNK_SIZE	 (64 * 1024)
#define STRTAB_MIN_SLOTS 256

/*
 * 48 bytes: most nodes of a Java profile sit on a chain (one child), so the only child is
 * held in the node and an array is allocated from the second on; siblings are found through
 * the parent's sorted array, not a link.
 */
struct profile_node {
	const char *name; /* interned in profile->strs */
	struct profile_node *parent;
	union {
		struct profile_node *one;  /* nkids == 1 */
		struct profile_node **arr; /* nkids >= 2, sorted by (name, kind) */
	} kids;
	__u64 self;
	__u64 total;
	__u32 nkids;
	__u32 kind; /* enum jp_frame_kind */
};

struct node_slab {
	struct node_slab *next;
	size_t used;
	struct profile_node nodes[NODES_PER_SLAB];
};

struct str_chunk {
	struct str_chunk *next;
	size_t used;
	size_t cap;
	char data[];
};

struct str_slot {
	const char *s; /* NULL: empty slot */
	__u64 hash;
};

/* open-addressing hash set of names; the bytes live in chunks freed with the profile */
struct strtab {
	struct str_slot *slots;
	size_t cap; /* power of two */
	size_t n;
	struct str_chunk *chunks;
};

struct profile {
	char *title;
	char *unit;
	struct profile_node root;
	size_t nnodes;
	struct node_slab *slabs;
	struct strtab strs;
};

static __u64 sat_add(__u64 a, __u64 b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* FNV-1a, 64 bit */
static __u64 str_hash(const char *s, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int strtab_grow(struct strtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : STRTAB_MIN_SLOTS;
	struct str_slot *ns;

	if (ncap < t->cap || ncap > SIZE_MAX / sizeof(*ns))
		return -ENOMEM;
	ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i].s)
			continue;
		for (j = t->slots[i].hash & (ncap - 1); ns[j].s; j = (j + 1) & (ncap - 1))
			;
		ns[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = ns;
	t->cap = ncap;
	return 0;
}

static char *strtab_store(struct strtab *t, const char *s, size_t len)
{
	struct str_chunk *c = t->chunks;
	char *dst;

	if (len >= SIZE_MAX - sizeof(*c) - STR_CHUNK_SIZE)
		return NULL;
	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > STR_CHUNK_SIZE ? len + 1 : STR_CHUNK_SIZE;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		/* a one-off big chunk goes behind the current one, so its free space stays in use */
		if (t->chunks && cap > STR_CHUNK_SIZE) {
			c->next = t->chunks->next;
			t->chunks->next = c;
		} else {
			c->next = t->chunks;
			t->chunks = c;
		}
	}
	dst = c->data + c->used;
	memcpy(dst, s, len);
	dst[len] = '\0';
	c->used += len + 1;
	return dst;
}

/* returns the interned copy of s, or NULL when out of memory */
static const char *strtab_intern(struct strtab *t, const char *s)
{
	size_t len = strlen(s), i;
	__u64 h = str_hash(s, len);
	char *copy;

	if ((t->n + 1) * 2 > t->cap && strtab_grow(t))
		return NULL;
	for (i = h & (t->cap - 1); t->slots[i].s; i = (i + 1) & (t->cap - 1)) {
		if (t->slots[i].hash == h && !strcmp(t->slots[i].s, s))
			return t->slots[i].s;
	}
	copy = strtab_store(t, s, len);
	if (!copy)
		return NULL;
	t->slots[i].s = copy;
	t->slots[i].hash = h;
	t->n++;
	return copy;
}

static void strtab_free(struct strtab *t)
{
	struct str_chunk *c, *next;

	for (c = t->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(t->slots);
}

const char *profile__intern(struct profile *p, const char *s)
{
	return strtab_intern(&p->strs, s);
}

struct profile *profile__new(const char *title, const char *unit)
{
	struct profile *p;

	p = calloc(1, sizeof(*p));
	if (!p)
		goto out_nomem;
	p->title = strdup(title ? title : "");
	p->unit = strdup(unit ? unit : "samples");
	if (!p->title || !p->unit)
		goto out_free;
	p->root.name = "all";
	p->root.kind = JP_FK_ROOT;
	return p;
out_free:
	profile__free(p);
out_nomem:
	errno = ENOMEM;
	return NULL;
}

static void node_free_kids(struct profile_node *n)
{
	if (n->nkids >= 2)
		free(n->kids.arr);
}

/* child i of n (i < n->nkids) */
static struct profile_node *kid_at(const struct profile_node *n, __u32 i)
{
	return n->nkids == 1 ? n->kids.one : n->kids.arr[i];
}

void profile__free(struct profile *p)
{
	struct node_slab *s, *next;

	if (!p)
		return;
	node_free_kids(&p->root);
	for (s = p->slabs; s; s = next) {
		next = s->next;
		for (size_t i = 0; i < s->used; i++)
			node_free_kids(&s->nodes[i]);
		free(s);
	}
	strtab_free(&p->strs);
	free(p->title);
	free(p->unit);
	free(p);
}

static struct profile_node *node_alloc(struct profile *p)
{
	struct node_slab *s = p->slabs;

	if (!s || s->used == NODES_PER_SLAB) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		s->next = p->slabs;
		p->slabs = s;
	}
	return &s->nodes[s->used++];
}

static int frame_cmp(const char *name, enum jp_frame_kind kind, const struct profile_node *n)
{
	int c;

	if (name != n->name) {
		c = strcmp(name, n->name);
		if (c)
			return c;
	}
	return (int)kind - (int)n->kind;
}

/* binary search among parent's children: true and its place, or false and the insertion point */
static bool kid_index(const struct profile_node *parent, const char *name, enum jp_frame_kind kind,
		      __u32 *ret_pos)
{
	__u32 lo = 0, hi = parent->nkids;

	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;
		int c = frame_cmp(name, kind, kid_at(parent, mid));

		if (!c) {
			*ret_pos = mid;
			return true;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*ret_pos = lo;
	return false;
}

/* the child (name, kind) of parent, or NULL with *ret_pos its insertion point */
static struct profile_node *kid_find(const struct profile_node *parent, const char *name,
				     enum jp_frame_kind kind, __u32 *ret_pos)
{
	return kid_index(parent, name, kind, ret_pos) ? kid_at(parent, *ret_pos) : NULL;
}

static struct profile_node *kid_get(struct profile *p, struct profile_node *parent,
				    const char *name, enum jp_frame_kind kind)
{
	struct profile_node *n;
	__u32 pos = 0;

	n = kid_find(parent, name, kind, &pos);
	if (n)
		return n;
	/* arrays hold 2, 4, 8 ... children: one grows when its count is a power of two */
	if (parent->nkids >= 2 && !(parent->nkids & (parent->nkids - 1))) {
		struct profile_node **nk;
		size_t sz;

		if (parent->nkids > UINT32_MAX / 2 ||
		    __builtin_mul_overflow((size_t)parent->nkids * 2, sizeof(*nk), &sz))
			return NULL;
		nk = realloc(parent->kids.arr, sz);
		if (!nk)
			return NULL;
		parent->kids.arr = nk;
	} else if (parent->nkids == 1) {
		struct profile_node **nk = malloc(2 * sizeof(*nk));

		if (!nk)
			return NULL;
		nk[0] = parent->kids.one;
		parent->kids.arr = nk;
	}
	name = strtab_intern(&p->strs, name);
	n = name ? node_alloc(p) : NULL;
	if (!n) {
		/* the array may have been made for this child: back to the one it had */
		if (parent->nkids == 1) {
			struct profile_node *one = parent->kids.arr[0];

			free(parent->kids.arr);
			parent->kids.one = one;
		}
		return NULL;
	}
	n->name = name;
	n->kind = kind;
	n->parent = parent;
	if (!parent->nkids) {
		parent->kids.one = n;
	} else {
		memmove(&parent->kids.arr[pos + 1], &parent->kids.arr[pos],
			(parent->nkids - pos) * sizeof(*parent->kids.arr));
		parent->kids.arr[pos] = n;
	}
	parent->nkids++;
	p->nnodes++;
	return n;
}

static enum jp_frame_kind kind_valid(enum jp_frame_kind k)
{
	return (unsigned int)k < JP_FK_MAX ? k : JP_FK_NATIVE;
}

/* adds w to n's self weight and to the totals of n and its ancestors */
static void weigh_path(struct profile_node *n, __u64 w)
{
	n->self = sat_add(n->self, w);
	for (; n; n = n->parent)
		n->total = sat_add(n->total, w);
}

int profile__add(struct profile *p, const struct jp_frame *frames, size_t n, __u64 weight)
{
	struct profile_node *cur = &p->root;

	/* create the whole path first, so a failure leaves every weight untouched */
	for (size_t i = 0; i < n; i++) {
		const char *name = frames[i].name ? frames[i].name : "";

		cur = kid_get(p, cur, name, kind_valid(frames[i].kind));
		if (!cur)
			return -ENOMEM;
	}
	weigh_path(cur, weight);
	return 0;
}

const char *profile__title(const struct profile *p)
{
	return p->title;
}

const char *profile__unit(const struct profile *p)
{
	return p->unit;
}

__u64 profile__total(const struct profile *p)
{
	return p->root.total;
}

size_t profile__node_count(const struct profile *p)
{
	return p->nnodes;
}

const struct profile_node *profile__root(const struct profile *p)
{
	return &p->root;
}

int profile__walk(const struct profile *p, profile_walk_fn fn, void *ctx)
{
	const struct profile_node **path = NULL, *n = profile_node__child(&p->root);
	size_t depth = 0, cap = 0;
	int ret = 0;

	while (n) {
		if (depth == cap) {
			size_t nc = cap ? cap * 2 : 256;
			const struct profile_node **np = realloc(path, nc * sizeof(*np));

			if (!np) {
				ret = -ENOMEM;
				break;
			}
			path = np;
			cap = nc;
		}
		path[depth++] = n;
		ret = fn(ctx, path, depth);
		if (ret < 0)
			break;
		if (ret == 0 && profile_node__child(n)) {
			n = profile_node__child(n);
			continue;
		}
		ret = 0;
		/* the next sibling of the node or of its nearest ancestor that has one */
		for (n = NULL; depth && !n; depth--)
			n = profile_node__next(path[depth - 1]);
	}
	free(path);
	return ret;
}

const struct profile_node *profile_node__child(const struct profile_node *n)
{
	return n->nkids ? kid_at(n, 0) : NULL;
}

/* the sibling after n: found by n's key in its parent's sorted array */
const struct profile_node *profile_node__next(const struct profile_node *n)
{
	const struct profile_node *p = n->parent;
	__u32 pos;

	if (!p || p->nkids < 2 || !kid_index(p, n->name, n->kind, &pos) || pos + 1 == p->nkids)
		return NULL;
	return p->kids.arr[pos + 1];
}

const struct profile_node *profile_node__parent(const struct profile_node *n)
{
	return n->parent;
}

size_t profile_node__child_count(const struct profile_node *n)
{
	return n->nkids;
}

const char *profile_node__name(const struct profile_node *n)
{
	return n->name;
}

enum jp_frame_kind profile_node__kind(const struct profile_node *n)
{
	return n->kind;
}

__u64 profile_node__total(const struct profile_node *n)
{
	return n->total;
}

__u64 profile_node__self(const struct profile_node *n)
{
	return n->self;
}

/*
 * Walks src depth first, keeping d as the dst node matching s's parent. Pass 0 creates the
 * missing nodes (so running out of memory leaves dst's weights as they were), pass 1 adds.
 */
static int merge_pass(struct profile *dst, const struct profile *src, profile_map_fn map, void *ctx,
		      int adding)
{
	const struct profile_node *s = profile_node__child(&src->root), *next;
	struct profile_node *d = &dst->root, *dc;
	struct jp_frame f;
	__u32 pos;
	int err;

	while (s) {
		f.name = s->name;
		f.kind = s->kind;
		if (map) {
			err = map(ctx, s->name, s->kind, &f);
			if (err)
				return err;
			f.kind = kind_valid(f.kind);
		}
		if (adding) {
			dc = kid_find(d, f.name, f.kind, &pos);
			if (!dc) /* pass 0 created it */
				return -EFAULT;
			dc->self = sat_add(dc->self, s->self);
			dc->total = sat_add(dc->total, s->total);
		} else {
			dc = kid_get(dst, d, f.name, f.kind);
			if (!dc)
				return -ENOMEM;
		}
		if (s->nkids) {
			s = kid_at(s, 0);
			d = dc;
			continue;
		}
		/* the next sibling of s or of its nearest ancestor below the root */
		for (next = profile_node__next(s); !next && s->parent != &src->root;
		     next = profile_node__next(s)) {
			s = s->parent;
			d = d->parent;
		}
		s = next;
	}
	if (adding) {
		dst->root.self = sat_add(dst->root.self, src->root.self);
		dst->root.total = sat_add(dst->root.total, src->root.total);
	}
	return 0;
}

int profile__merge_mapped(struct profile *dst, const struct profile *src, profile_map_fn map,
			  void *ctx)
{
	int err;

	if (dst == src)
		return -EINVAL;
	err = merge_pass(dst, src, map, ctx, 0);
	if (err)
		return err;
	return merge_pass(dst, src, map, ctx, 1);
}

int profile__merge(struct profile *dst, const struct profile *src)
{
	return profile__merge_mapped(dst, src, NULL, NULL);
}

/* folded reader ---------------------------------------------------------------------------- */

static const struct {
	const char *suffix;
	enum jp_frame_kind kind;
} folded_suffixes[] = {
	{"_[k]", JP_FK_KERNEL},
	{"_[j]", JP_FK_JIT},
	{"_[i]", JP_FK_INLINED},
	{"_[0]", JP_FK_INTERP},
};

/* strips a kind suffix off name (in place); leading "[...]" frames without one are root markers */
static enum jp_frame_kind folded_kind(char *name, int leading)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(folded_suffixes) / sizeof(folded_suffixes[0]); i++) {
		size_t sl = strlen(folded_suffixes[i].suffix);

		/* a bare "_[k]" is a name, not an empty name with a suffix */
		if (len > sl && !memcmp(name + len - sl, folded_suffixes[i].suffix, sl)) {
			name[len - sl] = '\0';
			return folded_suffixes[i].kind;
		}
	}
	if (leading && len >= 2 && name[0] == '[' && name[len - 1] == ']' &&
	    strcmp(name, "[unknown]"))
		return JP_FK_ROOT;
	return JP_FK_NATIVE;
}

/* parses a decimal u64 of exactly len digits */
static int parse_weight(const char *s, size_t len, __u64 *ret_w)
{
	__u64 w = 0;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d = (unsigned char)s[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (w > (UINT64_MAX - d) / 10)
			return -ERANGE;
		w = w * 10 + d;
	}
	*ret_w = w;
	return 0;
}

/* parses one line (without its newline) into p; -EINVAL when malformed */
static int folded_line(struct profile *p, char *line, size_t len, struct jp_frame **frames,
		       size_t *cap)
{
	size_t nf = 0, sep;
	__u64 w;
	char *s, *end;
	int leading = 1;

	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (memchr(line, '\0', len))
		return -EINVAL;
	for (sep = len; sep > 0 && line[sep - 1] != ' ' && line[sep - 1] != '\t'; sep--)
		;
	if (!sep || parse_weight(line + sep, len - sep, &w))
		return -EINVAL;
	line[sep - 1] = '\0';
	/* "a;b;c": frames; an empty stack ("" before the weight) is the root's own weight */
	for (s = line; *line; s = end + 1) {
		end = strchr(s, ';');
		if (nf == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			struct jp_frame *nfr;

			if (ncap > SIZE_MAX / sizeof(*nfr))
				return -ENOMEM;
			nfr = realloc(*frames, ncap * sizeof(*nfr));
			if (!nfr)
				return -ENOMEM;
			*frames = nfr;
			*cap = ncap;
		}
		if (end)
			*end = '\0';
		(*frames)[nf].kind = folded_kind(s, leading);
		(*frames)[nf].name = s;
		leading = leading && (*frames)[nf].kind == JP_FK_ROOT;
		nf++;
		if (!end)
			break;
	}
	return profile__add(p, *frames, nf, w);
}

int profile__read_folded(struct profile *p, FILE *f, size_t *ret_bad_line)
{
	struct jp_frame *frames = NULL;
	size_t cap = 0, bufsz = 0, lineno = 0;
	char *buf = NULL;
	ssize_t len;
	int err = 0;

	errno = 0;
	while ((len = getline(&buf, &bufsz, f)) >= 0) {
		lineno++;
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (!len || (len == 1 && buf[0] == '\r'))
			continue; /* blank line */
		err = folded_line(p, buf, (size_t)len, &frames, &cap);
		if (err) {
			if (err == -EINVAL && ret_bad_line)
				*ret_bad_line = lineno;
			goto out_free;
		}
	}
	/* getline returns -1 at EOF and on errors (ENOMEM, EIO) alike */
	if (ferror(f) || !feof(f))
		err = errno ? -errno : -EIO;
out_free:
	free(buf);
	free(frames);
	return err;
}

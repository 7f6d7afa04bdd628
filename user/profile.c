// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * profile.c: the aggregate trie (child arrays sorted when read, a hash of (parent, name, kind) to
 * find a child, interned names), merge and folded reader.
 */
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
 * the parent's sorted array, not a link. A new child is appended (a child is found through
 * the profile's hash, not the array) and the array sorted when it is next read: inserting
 * into the sorted array made 2 million distinct roots in random order quadratic (issue 26).
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
	__u32 kind : 8;	    /* enum jp_frame_kind */
	__u32 unsorted : 1; /* kids.arr is not sorted yet */
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
	struct profile_node **kidtab; /* open addressing, by (parent, name, kind); cap power of 2 */
	size_t kidcap;
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
	free(p->kidtab);
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

static size_t kid_hash(const struct profile_node *parent, const char *name, __u32 kind)
{
	__u64 h = (__u64)(uintptr_t)parent * 0x9e3779b97f4a7c15ULL;

	h ^= (__u64)(uintptr_t)name * 0xc2b2ae3d27d4eb4fULL + kind;
	h ^= h >> 29;
	return (size_t)h;
}

/* the slot of child (parent, interned name, kind) in the hash, or of the empty slot to fill */
static size_t kid_slot(const struct profile *p, const struct profile_node *parent, const char *name,
		       __u32 kind)
{
	size_t i = kid_hash(parent, name, kind) & (p->kidcap - 1);

	for (; p->kidtab[i]; i = (i + 1) & (p->kidcap - 1)) {
		const struct profile_node *n = p->kidtab[i];

		if (n->parent == parent && n->name == name && n->kind == kind)
			break;
	}
	return i;
}

/* room for one more node in the hash */
static int kidtab_reserve(struct profile *p)
{
	struct profile_node **nt;
	size_t ncap;

	if ((p->nnodes + 1) * 2 <= p->kidcap)
		return 0;
	ncap = p->kidcap ? p->kidcap * 2 : 1024;
	if (ncap < p->kidcap || ncap > SIZE_MAX / sizeof(*nt))
		return -ENOMEM;
	nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < p->kidcap; i++) {
		struct profile_node *n = p->kidtab[i];
		size_t j;

		if (!n)
			continue;
		for (j = kid_hash(n->parent, n->name, n->kind) & (ncap - 1); nt[j];
		     j = (j + 1) & (ncap - 1))
			;
		nt[j] = n;
	}
	free(p->kidtab);
	p->kidtab = nt;
	p->kidcap = ncap;
	return 0;
}

static int kid_ptr_cmp(const void *a, const void *b)
{
	const struct profile_node *x = *(struct profile_node *const *)a;
	const struct profile_node *y = *(struct profile_node *const *)b;

	return frame_cmp(x->name, x->kind, y);
}

/* sorts n's children if some came out of order; a reader's view, so n may be const there */
static void kids_sort(const struct profile_node *cn)
{
	struct profile_node *n = (struct profile_node *)cn;

	if (!n->unsorted)
		return;
	qsort(n->kids.arr, n->nkids, sizeof(*n->kids.arr), kid_ptr_cmp);
	n->unsorted = 0;
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
	size_t slot;

	name = strtab_intern(&p->strs, name);
	if (!name || kidtab_reserve(p))
		return NULL;
	slot = kid_slot(p, parent, name, kind);
	if (p->kidtab[slot])
		return p->kidtab[slot];
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
	n = node_alloc(p);
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
		parent->kids.arr[parent->nkids] = n;
		if (!parent->unsorted &&
		    frame_cmp(name, kind, parent->kids.arr[parent->nkids - 1]) < 0)
			parent->unsorted = 1;
	}
	p->kidtab[slot] = n;
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

int profile__add(struct profile *p, const struct prof_frame *frames, size_t n, __u64 weight)
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
	if (!n->nkids)
		return NULL;
	kids_sort(n);
	return kid_at(n, 0);
}

/* the sibling after n: found by n's key in its parent's sorted array */
const struct profile_node *profile_node__next(const struct profile_node *n)
{
	const struct profile_node *p = n->parent;
	__u32 pos;

	if (!p || p->nkids < 2)
		return NULL;
	kids_sort(p);
	if (!kid_index(p, n->name, n->kind, &pos) || pos + 1 == p->nkids)
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
	struct prof_frame f;
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
			kids_sort(d);
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
			s = profile_node__child(s);
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

/*
 * Budgets of the folded reader: the file may come from another user (report is often run as
 * root). Crossing one stops the read with -E2BIG and a reason naming it and its limit. Fuzz
 * builds lower them so that small inputs reach them.
 */
#ifndef JP_FUZZ_BUDGETS
#define FOLDED_MAX_BYTES (256u << 20) /* bytes of the whole input */
#define FOLDED_MAX_NAME	 (64u << 10)  /* bytes of one frame name */
#define FOLDED_MAX_DEPTH 8192	      /* frames in one stack */
#define FOLDED_MAX_NODES (1u << 20)   /* distinct nodes of the trie */
#else
#define FOLDED_MAX_BYTES (1u << 20)
#define FOLDED_MAX_NAME	 1024
#define FOLDED_MAX_DEPTH 256
#define FOLDED_MAX_NODES 4096
#endif

struct folded_why {
	char *buf;
	size_t len;
};

static int folded_over(struct folded_why *w, const char *what, unsigned long long limit)
{
	if (w->buf && w->len)
		snprintf(w->buf, w->len, "%s %llu (a budget of jprof report)", what, limit);
	return -E2BIG;
}

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
static int folded_line(struct profile *p, char *line, size_t len, struct prof_frame **frames,
		       size_t *cap, struct folded_why *why)
{
	size_t nf = 0, sep;
	__u64 w;
	char *s, *end;
	int leading = 1, err;

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
			struct prof_frame *nfr;

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
		if (nf >= FOLDED_MAX_DEPTH)
			return folded_over(why, "a stack deeper than", FOLDED_MAX_DEPTH);
		if ((end ? (size_t)(end - s) : strlen(s)) > FOLDED_MAX_NAME)
			return folded_over(why, "a frame name longer than", FOLDED_MAX_NAME);
		(*frames)[nf].kind = folded_kind(s, leading);
		(*frames)[nf].name = s;
		leading = leading && (*frames)[nf].kind == JP_FK_ROOT;
		nf++;
		if (!end)
			break;
	}
	err = profile__add(p, *frames, nf, w);
	if (!err && profile__node_count(p) > FOLDED_MAX_NODES)
		err = folded_over(why, "more distinct frames in the tree than", FOLDED_MAX_NODES);
	return err;
}

int profile__read_folded_why(struct profile *p, FILE *f, size_t *ret_bad_line, char *why_buf,
			     size_t why_len)
{
	struct folded_why why = {why_buf, why_len};
	struct prof_frame *frames = NULL;
	size_t cap = 0, bufsz = 0, lineno = 0, bytes = 0;
	char *buf = NULL;
	ssize_t len;
	int err = 0;

	if (why_buf && why_len)
		why_buf[0] = '\0';
	errno = 0;
	while ((len = getline(&buf, &bufsz, f)) >= 0) {
		lineno++;
		bytes += (size_t)len;
		if (bytes > FOLDED_MAX_BYTES) {
			err = folded_over(&why, "more bytes than", FOLDED_MAX_BYTES);
			if (ret_bad_line)
				*ret_bad_line = lineno;
			goto out_free;
		}
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (!len || (len == 1 && buf[0] == '\r'))
			continue; /* blank line */
		err = folded_line(p, buf, (size_t)len, &frames, &cap, &why);
		if (err) {
			if ((err == -EINVAL || err == -E2BIG) && ret_bad_line)
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

int profile__read_folded(struct profile *p, FILE *f, size_t *ret_bad_line)
{
	return profile__read_folded_why(p, f, ret_bad_line, NULL, 0);
}

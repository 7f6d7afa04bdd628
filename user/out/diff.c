// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* diff.c: two tries compared: the functions that grew or shrank, and folded `stack base new`. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "util/intern.h"

/* the names of both tries: their bytes are copied once (the tries' budgets bound them) */
#define DIFF_MAX_NAME_BYTES (512u << 20)

struct diff_table {
	struct intern names;
	struct diff_ent *ents; /* by (name id * JP_FK_MAX + kind) while building, then sorted */
	size_t n, cap;
	bool absolute;
	__u64 base_all, new_all; /* the tries' totals */
};

/* the walk of one trie: the entries on the path from the root, to count totals once */
struct walk_ctx {
	struct diff_table *t;
	int side; /* 0 base, 1 new */
	size_t *path, sp, path_cap;
	__u32 *on_path; /* per entry: how often it is on the current path */
	size_t on_cap;
};

static int ent_index(struct diff_table *t, const struct profile_node *node, size_t *ret_i)
{
	const char *name = profile_node__name(node);
	long id = intern_id(&t->names, name, strlen(name));
	enum jp_frame_kind kind;
	size_t i;

	if (id < 0)
		return (int)id;
	/*
	 * frames that print alike in folded lines (no suffix: native, JVM-internal, markers) are
	 * one: a folded file reads them all back as native, its pprof twin keeps their kinds
	 */
	kind = profile_node__kind(node);
	if (!*jp_frame_kind_suffix(kind))
		kind = JP_FK_NATIVE;
	i = (size_t)id * JP_FK_MAX + (size_t)kind;
	if (i >= t->cap) {
		size_t ncap = t->cap ? t->cap : 1024;
		struct diff_ent *ne;

		while (ncap <= i)
			ncap *= 2;
		if (ncap > SIZE_MAX / sizeof(*ne))
			return -ENOMEM;
		ne = realloc(t->ents, ncap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		memset(ne + t->cap, 0, (ncap - t->cap) * sizeof(*ne));
		t->ents = ne;
		t->cap = ncap;
	}
	if (!t->ents[i].name) {
		t->ents[i].name = intern_get(&t->names, (size_t)id);
		t->ents[i].kind = profile_node__kind(node);
	}
	*ret_i = i;
	return 0;
}

static int grow_u32(__u32 **a, size_t *cap, size_t need)
{
	size_t ncap = *cap ? *cap : 1024;
	__u32 *na;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	na = realloc(*a, ncap * sizeof(*na));
	if (!na)
		return -ENOMEM;
	memset(na + *cap, 0, (ncap - *cap) * sizeof(*na));
	*a = na;
	*cap = ncap;
	return 0;
}

static int on_node(void *ctx, const struct profile_node *const *path, size_t depth)
{
	struct walk_ctx *c = ctx;
	const struct profile_node *node = path[depth - 1];
	struct diff_ent *e;
	size_t i = 0;
	int err;

	/* leave the frames of the path that are not this node's ancestors */
	while (c->sp >= depth)
		c->on_path[c->path[--c->sp]]--;
	err = ent_index(c->t, node, &i);
	if (err)
		return err;
	if (grow_u32(&c->on_path, &c->on_cap, c->t->cap))
		return -ENOMEM;
	if (c->sp == c->path_cap) {
		size_t ncap = c->path_cap ? c->path_cap * 2 : 256;
		size_t *np = realloc(c->path, ncap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		c->path = np;
		c->path_cap = ncap;
	}
	e = &c->t->ents[i];
	if (c->side) {
		e->new_self += profile_node__self(node);
		if (!c->on_path[i])
			e->new_total += profile_node__total(node);
	} else {
		e->base_self += profile_node__self(node);
		if (!c->on_path[i])
			e->base_total += profile_node__total(node);
	}
	c->on_path[i]++;
	c->path[c->sp++] = i;
	return 0;
}

/* new vs base of one measure: the difference and the factor */
static void compare(__u64 b, __u64 n, __u64 b_all, __u64 n_all, bool absolute, double *ret_d,
		    double *ret_f)
{
	double bv = (double)b, nv = (double)n;

	if (!absolute) {
		bv = b_all ? 100.0 * (double)b / (double)b_all : 0;
		nv = n_all ? 100.0 * (double)n / (double)n_all : 0;
	}
	*ret_d = nv - bv;
	*ret_f = bv > 0 ? nv / bv : nv > 0 ? INFINITY : 1.0;
}

int diff_ent__sign(const struct diff_ent *e)
{
	double d = e->d_total != 0 ? e->d_total : e->d_self;

	return d > 0 ? 1 : d < 0 ? -1 : 0;
}

static int cmp_change(const void *a, const void *b)
{
	const struct diff_ent *x = a, *y = b;

	if (x->d_total != y->d_total)
		return x->d_total < y->d_total ? 1 : -1;
	if (x->d_self != y->d_self)
		return x->d_self < y->d_self ? 1 : -1;
	if (x->new_total != y->new_total)
		return x->new_total < y->new_total ? 1 : -1;
	return strcmp(x->name, y->name);
}

int diff_table__new(const struct profile *base, const struct profile *new, bool absolute,
		    struct diff_table **ret_t)
{
	struct diff_table *t = calloc(1, sizeof(*t));
	struct walk_ctx c = {0};
	__u64 b_all = profile__total(base), n_all = profile__total(new);
	size_t k = 0;
	int err;

	if (!t)
		return -ENOMEM;
	intern_init(&t->names, DIFF_MAX_NAME_BYTES);
	t->absolute = absolute;
	t->base_all = b_all;
	t->new_all = n_all;
	c.t = t;
	err = profile__walk(base, on_node, &c);
	if (!err) {
		if (c.on_path)
			memset(c.on_path, 0, c.on_cap * sizeof(*c.on_path));
		c.sp = 0;
		c.side = 1;
		err = profile__walk(new, on_node, &c);
	}
	free(c.path);
	free(c.on_path);
	if (err)
		goto out_free;
	/* packed: the used slots only, each compared, then ordered */
	for (size_t i = 0; i < t->cap; i++) {
		struct diff_ent e = t->ents[i];

		if (!e.name)
			continue;
		compare(e.base_self, e.new_self, b_all, n_all, absolute, &e.d_self, &e.f_self);
		compare(e.base_total, e.new_total, b_all, n_all, absolute, &e.d_total, &e.f_total);
		t->ents[k++] = e;
	}
	t->n = k;
	if (t->n)
		qsort(t->ents, t->n, sizeof(*t->ents), cmp_change);
	*ret_t = t;
	return 0;
out_free:
	diff_table__free(t);
	return err;
}

void diff_table__free(struct diff_table *t)
{
	if (!t)
		return;
	intern_free(&t->names);
	free(t->ents);
	free(t);
}

const struct diff_ent *diff_table__ents(const struct diff_table *t, size_t *ret_n)
{
	*ret_n = t->n;
	return t->ents;
}

static double share(__u64 v, __u64 all)
{
	return all ? 100.0 * (double)v / (double)all : 0;
}

/* "2.00x", "new" (only in NEW), "gone" (only in BASE) */
static const char *factor_text(double f, char *buf, size_t len)
{
	if (isinf(f))
		return "new";
	if (f == 0)
		return "gone";
	snprintf(buf, len, "%.2fx", f);
	return buf;
}

static void top_line(const struct diff_table *t, const struct diff_ent *e, FILE *f)
{
	char fb[32];
	const char *fs = factor_text(e->f_total, fb, sizeof(fb));

	if (t->absolute)
		fprintf(f, "%+14.0f %14" PRIu64 " %14" PRIu64 " %+14.0f %8s  %s%s\n", e->d_total,
			(uint64_t)e->base_total, (uint64_t)e->new_total, e->d_self, fs, e->name,
			jp_frame_kind_suffix(e->kind));
	else
		fprintf(f, "%+8.2f%% %7.2f%% %7.2f%% %+8.2f%% %7.2f%% %7.2f%% %8s  %s%s\n",
			e->d_total, share(e->base_total, t->base_all),
			share(e->new_total, t->new_all), e->d_self,
			share(e->base_self, t->base_all), share(e->new_self, t->new_all), fs,
			e->name, jp_frame_kind_suffix(e->kind));
}

int out_diff_top_write(const struct diff_table *t, size_t limit, FILE *f)
{
	size_t grew = 0, shrank = 0;

	errno = 0;
	for (size_t i = 0; i < t->n && diff_ent__sign(&t->ents[i]) > 0; i++)
		grew++;
	for (size_t i = t->n; i > grew && diff_ent__sign(&t->ents[i - 1]) < 0; i--)
		shrank++;
	if (t->absolute)
		fprintf(f, "%14s %14s %14s %14s %8s  %s\n", "d.total", "base total", "new total",
			"d.self", "factor", "function");
	else
		fprintf(f, "%9s %8s %8s %9s %8s %8s %8s  %s\n", "d.total%", "base", "new",
			"d.self%", "base", "new", "factor", "function");
	fprintf(f, "grew: %zu function%s\n", grew, grew == 1 ? "" : "s");
	for (size_t i = 0; i < grew && i < limit; i++)
		top_line(t, &t->ents[i], f);
	fprintf(f, "shrank: %zu function%s\n", shrank, shrank == 1 ? "" : "s");
	for (size_t i = 0; i < shrank && i < limit; i++)
		top_line(t, &t->ents[t->n - 1 - i], f);
	return ferror(f) ? (errno ? -errno : -EIO) : 0;
}

/* one side's folded lines: "stack weight", split at the last space */
struct fline {
	const char *stack;
	size_t len;
	__u64 w[2];
};

struct flines {
	char *text[2];
	struct fline *v;
	size_t n, cap;
};

static int flines_add(struct flines *l, int side, __u64 all_new, __u64 all_base, bool absolute)
{
	char *s = l->text[side];

	while (s && *s) {
		char *eol = strchr(s, '\n'), *sp;
		struct fline *fl;

		if (!eol)
			eol = s + strlen(s);
		for (sp = eol; sp > s && sp[-1] != ' '; sp--)
			;
		if (sp > s) {
			__u64 w = strtoull(sp, NULL, 10);

			if (l->n == l->cap) {
				size_t ncap = l->cap ? l->cap * 2 : 1024;
				struct fline *nv;

				if (ncap > SIZE_MAX / sizeof(*nv))
					return -ENOMEM;
				nv = realloc(l->v, ncap * sizeof(*nv));
				if (!nv)
					return -ENOMEM;
				l->v = nv;
				l->cap = ncap;
			}
			fl = &l->v[l->n++];
			fl->stack = s;
			fl->len = (size_t)(sp - 1 - s);
			/* difffolded.pl -n: the base scaled to the new total */
			if (!side && !absolute && all_base && all_new)
				w = (__u64)(((unsigned __int128)w * all_new + all_base / 2) /
					    all_base);
			fl->w[side] = w;
			fl->w[!side] = 0;
		}
		s = *eol ? eol + 1 : eol;
	}
	return 0;
}

static int fline_cmp(const void *a, const void *b)
{
	const struct fline *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->stack, y->stack, n);

	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	/* the base's line first, then the new one's: merged below */
	return x->w[0] < y->w[0] ? 1 : x->w[0] > y->w[0] ? -1 : 0;
}

/* a trie's folded text, in memory (NUL-terminated) */
static int folded_text(const struct profile *p, char **ret)
{
	size_t len = 0;
	FILE *f = open_memstream(ret, &len);
	int err;

	if (!f)
		return -errno;
	err = out_folded_write(p, f);
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

int out_diff_folded_write(const struct profile *base, const struct profile *new, bool absolute,
			  FILE *f)
{
	struct flines l = {0};
	__u64 b_all = profile__total(base), n_all = profile__total(new);
	int err;

	err = folded_text(base, &l.text[0]);
	if (!err)
		err = folded_text(new, &l.text[1]);
	if (!err)
		err = flines_add(&l, 0, n_all, b_all, absolute);
	if (!err)
		err = flines_add(&l, 1, n_all, b_all, absolute);
	if (err)
		goto out_free;
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), fline_cmp);
	errno = 0;
	for (size_t i = 0; i < l.n; i++) {
		__u64 bw = l.v[i].w[0], nw = l.v[i].w[1];

		/* a stack in both: two lines in a row, the base's first */
		if (i + 1 < l.n &&
		    !fline_cmp(&(struct fline){l.v[i].stack, l.v[i].len, {0, 0}},
			       &(struct fline){l.v[i + 1].stack, l.v[i + 1].len, {0, 0}})) {
			bw += l.v[i + 1].w[0];
			nw += l.v[i + 1].w[1];
			i++;
		}
		fprintf(f, "%.*s %" PRIu64 " %" PRIu64 "\n", (int)l.v[i].len, l.v[i].stack,
			(uint64_t)bw, (uint64_t)nw);
	}
	if (ferror(f))
		err = errno ? -errno : -EIO;
out_free:
	free(l.text[0]);
	free(l.text[1]);
	free(l.v);
	return err;
}

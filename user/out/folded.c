// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* folded.c: FlameGraph folded-stack writer, sorted and safe to parse back. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

#define WEIGHT_DIGITS 21 /* UINT64_MAX has 20, plus the separating space */

struct render_buf {
	char *s;
	size_t cap;
};

/*
 * A frame as it appears in a line: ';' becomes ':', control bytes '?', leading and trailing
 * spaces '_' (so the weight stays the last field), an empty name "[unknown]"; then the suffix.
 */
static int render_frame(void *ctx, const char *name, enum jp_frame_kind kind, struct prof_frame *out)
{
	struct render_buf *b = ctx;
	const char *suffix = jp_frame_kind_suffix(kind);
	size_t len, slen = strlen(suffix), need;

	if (!*name)
		name = "[unknown]";
	len = strlen(name);
	if (__builtin_add_overflow(len, slen + 1, &need))
		return -ENOMEM;
	if (need > b->cap) {
		char *ns = realloc(b->s, need);

		if (!ns)
			return -ENOMEM;
		b->s = ns;
		b->cap = need;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		b->s[i] = (char)c;
	}
	for (size_t i = 0; i < len && b->s[i] == ' '; i++)
		b->s[i] = '_';
	for (size_t i = len; i > 0 && b->s[i - 1] == ' '; i--)
		b->s[i - 1] = '_';
	memcpy(b->s + len, suffix, slen + 1);
	out->name = b->s;
	out->kind = JP_FK_NATIVE;
	return 0;
}

/* one sort item: a child's own line (key "name weight") or its subtree (key "name;") */
struct entry {
	const struct profile_node *node;
	const char *key;
	int is_own;
};

struct level {
	struct entry *ents;
	char *keys;
	size_t n;
	size_t i;
	size_t path_len; /* path length before this level's frames */
};

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->key, ((const struct entry *)b)->key);
}

/*
 * Sorting children by name is not enough: "a" sorts before "a b", but the line "a 7" sorts
 * after "a b 3" ... and "a;x" after "a b". Sorting the keys that start each child's lines
 * orders whole lines, since names hold no ';' and keys of one parent are distinct.
 */
static int level_build(struct level *l, const struct profile_node *parent, size_t path_len)
{
	const struct profile_node *c;
	size_t n = 0, keys_len = 0, off = 0, k = 0;

	for (c = profile_node__child(parent); c; c = profile_node__next(c)) {
		size_t one = strlen(profile_node__name(c)) +
			     strlen(jp_frame_kind_suffix(profile_node__kind(c))) + WEIGHT_DIGITS + 1;

		n += (profile_node__self(c) > 0) + (profile_node__child(c) != NULL);
		/* each child has at most two keys */
		if (__builtin_add_overflow(keys_len, 2 * one, &keys_len))
			return -ENOMEM;
	}
	l->n = n;
	l->i = 0;
	l->path_len = path_len;
	l->ents = calloc(n ? n : 1, sizeof(*l->ents));
	l->keys = malloc(keys_len ? keys_len : 1);
	if (!l->ents || !l->keys)
		return -ENOMEM;
	for (c = profile_node__child(parent); c; c = profile_node__next(c)) {
		const char *name = profile_node__name(c);
		const char *sfx = jp_frame_kind_suffix(profile_node__kind(c));

		if (profile_node__self(c) > 0) {
			l->ents[k++] = (struct entry){c, l->keys + off, 1};
			off += (size_t)sprintf(l->keys + off, "%s%s %" PRIu64, name, sfx,
					       (uint64_t)profile_node__self(c)) +
			       1;
		}
		if (profile_node__child(c)) {
			l->ents[k++] = (struct entry){c, l->keys + off, 0};
			off += (size_t)sprintf(l->keys + off, "%s%s;", name, sfx) + 1;
		}
	}
	qsort(l->ents, n, sizeof(*l->ents), entry_cmp);
	return 0;
}

static void level_free(struct level *l)
{
	free(l->ents);
	free(l->keys);
	l->ents = NULL;
	l->keys = NULL;
}

static int path_put(char **path, size_t *cap, size_t at, const char *s, size_t len)
{
	size_t need;

	if (__builtin_add_overflow(at, len, &need))
		return -ENOMEM;
	if (need > *cap) {
		size_t ncap = *cap ? *cap : 256;
		char *np;

		while (ncap < need) {
			if (ncap > SIZE_MAX / 2)
				return -ENOMEM;
			ncap *= 2;
		}
		np = realloc(*path, ncap);
		if (!np)
			return -ENOMEM;
		*path = np;
		*cap = ncap;
	}
	memcpy(*path + at, s, len);
	return 0;
}

static int emit_lines(const struct profile *r, FILE *f)
{
	struct level *lv = NULL;
	size_t depth = 0, lv_cap = 0, path_cap = 0;
	char *path = NULL;
	int err = 0;

	if (profile_node__self(profile__root(r)) &&
	    fprintf(f, " %" PRIu64 "\n", (uint64_t)profile_node__self(profile__root(r))) < 0)
		return errno > 0 ? -errno : -EIO;
	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return -ENOMEM;
	lv_cap = 1;
	err = level_build(&lv[0], profile__root(r), 0);
	depth = 1;
	while (!err && depth) {
		struct level *l = &lv[depth - 1];
		struct entry *e;
		size_t klen;

		if (l->i == l->n) {
			level_free(l);
			depth--;
			continue;
		}
		e = &l->ents[l->i++];
		klen = strlen(e->key);
		if (e->is_own) {
			if ((l->path_len && fwrite(path, 1, l->path_len, f) != l->path_len) ||
			    fwrite(e->key, 1, klen, f) != klen || fputc('\n', f) == EOF)
				err = errno > 0 ? -errno : -EIO;
			continue;
		}
		err = path_put(&path, &path_cap, l->path_len, e->key, klen);
		if (err)
			break;
		if (depth == lv_cap) {
			struct level *nl;

			if (lv_cap > SIZE_MAX / 2 / sizeof(*lv)) {
				err = -ENOMEM;
				break;
			}
			nl = realloc(lv, 2 * lv_cap * sizeof(*lv));
			if (!nl) {
				err = -ENOMEM;
				break;
			}
			lv = nl;
			lv_cap *= 2;
			l = &lv[depth - 1];
		}
		memset(&lv[depth], 0, sizeof(lv[depth]));
		err = level_build(&lv[depth], e->node, l->path_len + klen);
		depth++;
	}
	while (depth)
		level_free(&lv[--depth]);
	free(lv);
	free(path);
	return err;
}

/*
 * true when the frame prints as its name and suffix, and no other name can print alike: no
 * byte render_frame() changes, not empty (that prints "[unknown]"), not ending in what
 * reads as a kind suffix
 */
static bool prints_as_is(const char *name)
{
	static const char *const sfx[] = {"_[k]", "_[j]", "_[i]", "_[0]"};
	size_t len = strlen(name);

	if (!len || name[0] == ' ' || name[len - 1] == ' ')
		return false;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (len >= 4 && !memcmp(name + len - 4, sfx[i], 4))
			return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == ';' || c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * true when no two children of n print alike: names are distinct per kind, and the kinds
 * without a suffix (native, JVM, root markers) share the printed name. *names: scratch.
 */
static bool kids_print_apart(const struct profile_node *n, const char ***names, size_t *cap)
{
	size_t k = 0;

	for (const struct profile_node *c = profile_node__child(n); c; c = profile_node__next(c)) {
		if (*jp_frame_kind_suffix(profile_node__kind(c)))
			continue;
		if (k == *cap) {
			size_t ncap = *cap ? 2 * *cap : 64;
			const char **nn = realloc(*names, ncap * sizeof(*nn));

			if (!nn)
				return false;
			*names = nn;
			*cap = ncap;
		}
		(*names)[k++] = profile_node__name(c);
	}
	if (k < 2)
		return true;
	qsort(*names, k, sizeof(**names), name_cmp);
	for (size_t i = 1; i < k; i++)
		if (!strcmp((*names)[i - 1], (*names)[i]))
			return false;
	return true;
}

/* every frame of the trie prints as is, and no two siblings alike: no copy needed */
static bool trie_prints_as_is(const struct profile *p)
{
	const struct profile_node *root = profile__root(p), *n;
	const char **names = NULL;
	size_t cap = 0;
	bool ok = kids_print_apart(root, &names, &cap);

	/* depth first, by the parent links: no stack */
	n = profile_node__child(root);
	while (ok && n) {
		if (!prints_as_is(profile_node__name(n))) {
			ok = false;
			break;
		}
		if (profile_node__child(n)) {
			if (!kids_print_apart(n, &names, &cap)) {
				ok = false;
				break;
			}
			n = profile_node__child(n);
			continue;
		}
		while (n != root && !profile_node__next(n))
			n = profile_node__parent(n);
		n = n == root ? NULL : profile_node__next(n);
	}
	free(names);
	return ok;
}

int out_folded_write(const struct profile *p, FILE *f)
{
	struct render_buf b = {NULL, 0};
	struct profile *r;
	int err;

	if (trie_prints_as_is(p)) {
		/* the common case: lines straight from the trie, with no copy of it */
		err = emit_lines(p, f);
	} else {
		/* a copy keyed by the rendered frame text: frames that print alike share one line */
		r = profile__new(profile__title(p), profile__unit(p));
		if (!r)
			return -ENOMEM;
		err = profile__merge_mapped(r, p, render_frame, &b);
		free(b.s);
		if (!err)
			err = emit_lines(r, f);
		profile__free(r);
	}
	/* ENOSPC and friends often only show at flush time */
	errno = 0;
	if (fflush(f) && !err)
		err = errno > 0 ? -errno : -EIO;
	if (!err && ferror(f))
		err = -EIO;
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ksyms.c: parse /proc/kallsyms into a sorted array of text symbols. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "lines.h"
#include "util/strpool.h"

#define KSYMS_MAX_FILE (256u << 20)
#ifndef JP_FUZZ_BUDGETS
#define KSYMS_MAX_SYMS (16u << 20)
#else /* fuzzing: small enough for a fuzzer's inputs to reach */
#define KSYMS_MAX_SYMS 4096u
#endif
/* the last symbol has no successor to bound it; kernel functions are far smaller */
#define KSYMS_LAST_SPAN (1u << 20)

struct ksym {
	__u64 addr;
	const char *name;   /* in pool */
	const char *module; /* NULL: core kernel */
};

struct ksyms {
	struct ksym *syms;
	size_t n, cap;
	struct strpool pool;
	const char *last_module; /* modules come in runs: reuse the last one's string */
	size_t bad_lines;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_line(const char *line, size_t len, unsigned long lineno, void *ctx)
{
	struct ksyms *k = ctx;
	const char *p = line, *name, *mod = NULL;
	size_t name_len, mod_len = 0;
	__u64 addr = 0;
	int digits = 0, v;
	char type;

	(void)lineno;
	if (!line)
		goto bad;
	/* "ffffffff81000000 T _text" or "ffffffffc0a01000 t fn\t[module]" */
	while ((v = hexval(*p)) >= 0) {
		if (++digits > 16)
			goto bad;
		addr = addr << 4 | (__u64)v;
		p++;
	}
	if (!digits || *p != ' ')
		goto bad;
	type = p[1];
	if (!type || p[2] != ' ')
		goto bad;
	name = p + 3;
	name_len = strcspn(name, " \t");
	if (!name_len)
		goto bad;
	p = name + name_len;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '[') {
		mod = p + 1;
		mod_len = strcspn(mod, "]");
		if (mod[mod_len] != ']' || !mod_len)
			goto bad;
	} else if (*p) {
		goto bad;
	}
	(void)len;
	/* text only; addresses are all 0 when kptr_restrict hides them */
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	if (!addr)
		return 0;
	if (k->n == KSYMS_MAX_SYMS)
		return -E2BIG;
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4096;
		struct ksym *ns = reallocarray(k->syms, cap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		k->syms = ns;
		k->cap = cap;
	}
	struct ksym *s = &k->syms[k->n];

	s->addr = addr;
	s->name = strpool_add(&k->pool, name, name_len);
	if (!s->name)
		return -ENOMEM;
	s->module = NULL;
	if (mod) {
		const char *last = k->last_module;

		if (last && strlen(last) == mod_len && !memcmp(last, mod, mod_len)) {
			s->module = k->last_module;
		} else {
			s->module = strpool_add(&k->pool, mod, mod_len);
			if (!s->module)
				return -ENOMEM;
			k->last_module = s->module;
		}
	}
	k->n++;
	return 0;
bad:
	k->bad_lines++;
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* stable among aliases: the first listed wins after dedup */
	return x < y ? -1 : (x > y ? 1 : 0);
}

static void finish(struct ksyms *k)
{
	size_t i, j = 0;

	if (!k->n)
		return;
	qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	for (i = 0; i < k->n; i++) {
		if (j && k->syms[j - 1].addr == k->syms[i].addr)
			continue;
		k->syms[j++] = k->syms[i];
	}
	k->n = j;
}

static struct ksyms *ksyms_alloc(void)
{
	struct ksyms *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	strpool_init(&k->pool, 0);
	return k;
}

struct ksyms *ksyms__load_stream(FILE *f)
{
	struct ksyms *k = ksyms_alloc();
	long r;

	if (!k)
		return NULL;
	r = lines_read_file(f, KSYMS_MAX_FILE, parse_line, k);
	if (r < 0) {
		ksyms__free(k);
		errno = (int)-r;
		return NULL;
	}
	finish(k);
	return k;
}

struct ksyms *ksyms__load_buf(const char *buf, size_t len)
{
	struct lines_state st = {};
	struct ksyms *k;
	long r;

	if (len > KSYMS_MAX_FILE) {
		errno = EFBIG;
		return NULL;
	}
	k = ksyms_alloc();
	if (!k)
		return NULL;
	r = lines_split(&st, buf, len, true, parse_line, k);
	if (r < 0) {
		ksyms__free(k);
		errno = (int)-r;
		return NULL;
	}
	finish(k);
	return k;
}

struct ksyms *ksyms__load_file(const char *path)
{
	struct ksyms *k;
	FILE *f;
	int err;

	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		return NULL;
	k = ksyms__load_stream(f);
	err = errno;
	fclose(f);
	errno = err;
	return k;
}

void ksyms__free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	strpool_free(&k->pool);
	free(k);
}

int ksyms__find(const struct ksyms *k, __u64 addr, const char **ret_name, const char **ret_module,
		__u64 *ret_offset)
{
	size_t lo = 0, hi, i;

	if (!k || !k->n || addr < k->syms[0].addr)
		return -ENOENT;
	/* last symbol with addr <= target */
	hi = k->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	i = lo;
	if (i == k->n - 1 && addr - k->syms[i].addr >= KSYMS_LAST_SPAN)
		return -ENOENT;
	*ret_name = k->syms[i].name;
	*ret_module = k->syms[i].module;
	*ret_offset = addr - k->syms[i].addr;
	return 0;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k ? k->n : 0;
}

size_t ksyms__bad_lines(const struct ksyms *k)
{
	return k ? k->bad_lines : 0;
}

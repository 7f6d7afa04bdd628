// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* procmaps.c: /proc/<pid>/maps parser; every line is untrusted and bounds-checked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "procmaps.h"

/* vm.max_map_count defaults to 65530; allow generous headroom, not unbounded growth */
#ifndef JP_FUZZ_BUDGETS
#define PROCMAPS_MAX (1u << 20)
#else /* fuzzing: small enough for a fuzzer's inputs to reach */
#define PROCMAPS_MAX 2048u
#endif
#define PROCMAPS_MAX_FILE (256u << 20)
#define DELETED_SUFFIX	  " (deleted)"

struct parse_ctx {
	struct jp_maps *m;
	size_t cap;
	bool only_exec;
};

static const char *parse_dec(const char *p, __u64 *ret)
{
	__u64 v = 0;
	int n = 0;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (++n > 20 || v > (~0ull - 9) / 10)
			return NULL;
		v = v * 10 + (__u64)(*p - '0');
	}
	if (!n)
		return NULL;
	*ret = v;
	return p;
}

static void note_bad(struct jp_maps *m, unsigned long lineno)
{
	if (!m->bad_lines++)
		m->first_bad_line = lineno;
}

/* "start-end perms offset major:minor inode   path" */
static int parse_line(const char *line, size_t len, unsigned long lineno, void *vctx)
{
	struct parse_ctx *ctx = vctx;
	struct jp_maps *m = ctx->m;
	__u64 start, end, off, major, minor, inode;
	struct jp_map map = {};
	const char *p = line;
	size_t plen;

	if (!line)
		goto bad;
	if (!len)
		return 0; /* blank lines are harmless */
	p = lines_parse_hex(p, false, 16, &start);
	if (!p || *p++ != '-')
		goto bad;
	p = lines_parse_hex(p, false, 16, &end);
	if (!p || *p++ != ' ' || end <= start)
		goto bad;
	if (strlen(p) < 5 || p[4] != ' ')
		goto bad;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		goto bad;
	map.perms = (p[0] == 'r' ? JP_MAP_R : 0) | (p[1] == 'w' ? JP_MAP_W : 0) |
		    (p[2] == 'x' ? JP_MAP_X : 0) | (p[3] == 'p' ? JP_MAP_P : 0);
	p += 5;
	p = lines_parse_hex(p, false, 16, &off);
	if (!p || *p++ != ' ')
		goto bad;
	p = lines_parse_hex(p, false, 8, &major);
	if (!p || *p++ != ':')
		goto bad;
	p = lines_parse_hex(p, false, 8, &minor);
	if (!p || *p++ != ' ')
		goto bad;
	p = parse_dec(p, &inode);
	if (!p || (*p && *p != ' '))
		goto bad;
	while (*p == ' ')
		p++;
	if (ctx->only_exec && !(map.perms & JP_MAP_X))
		return 0;

	map.start = start;
	map.end = end;
	map.offset = off;
	map.dev_major = (__u32)major;
	map.dev_minor = (__u32)minor;
	map.inode = inode;
	plen = strlen(p);
	if (!plen || !strcmp(p, "//anon")) {
		map.type = JP_MAP_ANON;
	} else {
		if (p[0] == '[')
			map.type = strncmp(p, "[anon:", 6) ? JP_MAP_SPECIAL : JP_MAP_ANON_NAMED;
		else if (!strncmp(p, "/memfd:", 7))
			map.type = JP_MAP_ANON_NAMED;
		else
			map.type = JP_MAP_FILE;
		if (plen > strlen(DELETED_SUFFIX) &&
		    !strcmp(p + plen - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
			map.deleted = true;
			plen -= strlen(DELETED_SUFFIX);
		}
		map.path = strndup(p, plen);
		if (!map.path)
			return -ENOMEM;
	}

	if (m->n == PROCMAPS_MAX) {
		free(map.path);
		return -E2BIG;
	}
	if (m->n == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 64;
		struct jp_map *nm = reallocarray(m->maps, cap, sizeof(*nm));

		if (!nm) {
			free(map.path);
			return -ENOMEM;
		}
		m->maps = nm;
		ctx->cap = cap;
	}
	m->maps[m->n++] = map;
	return 0;
bad:
	note_bad(m, lineno);
	return 0;
}

static int cmp_map(const void *a, const void *b)
{
	const struct jp_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* the kernel emits sorted, disjoint ranges; anything else is junk: keep the first */
static void finish(struct jp_maps *m)
{
	size_t i, j = 0;
	bool sorted = true;

	for (i = 1; i < m->n && sorted; i++)
		sorted = m->maps[i - 1].start < m->maps[i].start;
	if (!sorted)
		qsort(m->maps, m->n, sizeof(*m->maps), cmp_map);
	for (i = 0; i < m->n; i++) {
		if (j && m->maps[i].start < m->maps[j - 1].end) {
			free(m->maps[i].path);
			m->bad_lines++;
			continue;
		}
		m->maps[j++] = m->maps[i];
	}
	m->n = j;
}

static struct jp_maps *maps_alloc(void)
{
	return calloc(1, sizeof(struct jp_maps));
}

int procmaps_parse_stream(FILE *f, bool only_exec, struct jp_maps **ret)
{
	struct parse_ctx ctx = {.only_exec = only_exec};
	long r;

	ctx.m = maps_alloc();
	if (!ctx.m)
		return -ENOMEM;
	r = lines_read_file(f, PROCMAPS_MAX_FILE, parse_line, &ctx);
	if (r < 0) {
		procmaps_free(ctx.m);
		return (int)r;
	}
	finish(ctx.m);
	*ret = ctx.m;
	return 0;
}

int procmaps_parse_buf(const char *buf, size_t len, bool only_exec, struct jp_maps **ret)
{
	struct parse_ctx ctx = {.only_exec = only_exec};
	struct lines_state st = {};
	long r;

	if (len > PROCMAPS_MAX_FILE)
		return -EFBIG;
	ctx.m = maps_alloc();
	if (!ctx.m)
		return -ENOMEM;
	r = lines_split(&st, buf, len, true, parse_line, &ctx);
	if (r < 0) {
		procmaps_free(ctx.m);
		return (int)r;
	}
	finish(ctx.m);
	*ret = ctx.m;
	return 0;
}

int procmaps_read_pid(__u32 pid, bool only_exec, struct jp_maps **ret)
{
	char path[64];
	FILE *f;
	int err;

	(void)snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	err = procmaps_parse_stream(f, only_exec, ret);
	fclose(f);
	return err;
}

void procmaps_free(struct jp_maps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->maps[i].path);
	free(m->maps);
	free(m);
}

const struct jp_map *procmaps_find(const struct jp_maps *m, __u64 addr)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct jp_map *x = &m->maps[mid];

		if (addr < x->start)
			hi = mid;
		else if (addr >= x->end)
			lo = mid + 1;
		else
			return x;
	}
	return NULL;
}

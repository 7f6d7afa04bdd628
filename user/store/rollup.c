// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rollup.c: roll-ups, a range's segments merged into one file: names, list, build, put in place. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"
#include "store_load.h"
#include "model/pprof_read.h"
#include "out/out.h"
#include "util/units.h"

/* roll-ups looked at in rollups/: 20 years of hours */
#define STORE_MAX_ROLLUPS (256u << 10)

int store_rollup_name(__u64 start_s, __u64 end_s, __u64 hash, char *buf, size_t len)
{
	char a[32], b[32];

	if (start_s >= end_s || units_format_utc(start_s, a, sizeof(a)) ||
	    units_format_utc(end_s, b, sizeof(b)))
		return -EINVAL;
	if (snprintf(buf, len, "%s-%s.%016llx%s", a, b, (unsigned long long)hash,
		     STORE_SEG_SUFFIX) >= (int)len)
		return -EINVAL;
	return 0;
}

int store_rollup_parse(const char *name, struct store_rollup *ret)
{
	char seg[STORE_NAME_LEN], hex[17], *end;
	struct store_rollup r = {0};
	struct store_seg sg;

	/* exactly START-END.HASH.pb.gz: 33 + 1 + 16 + the suffix, HASH lowercase hex */
	if (strlen(name) != 50 + strlen(STORE_SEG_SUFFIX) || name[33] != '.' ||
	    strcmp(name + 50, STORE_SEG_SUFFIX) || strspn(name + 34, "0123456789abcdef") != 16)
		return -EINVAL;
	memcpy(seg, name, 33);
	memcpy(seg + 33, STORE_SEG_SUFFIX, sizeof(STORE_SEG_SUFFIX));
	if (store_seg_parse(seg, &sg))
		return -EINVAL;
	memcpy(hex, name + 34, 16);
	hex[16] = '\0';
	r.hash = strtoull(hex, &end, 16);
	if (*end)
		return -EINVAL;
	r.start_s = sg.start_s;
	r.end_s = sg.end_s;
	memcpy(r.name, name, strlen(name) + 1);
	*ret = r;
	return 0;
}

/* FNV-1a, 64 bits: the store is private to its user, nobody aims names at it */
static __u64 fnv(__u64 h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

size_t store__span(const struct store *s, __u64 start_s, __u64 end_s, size_t *ret_first,
		   __u64 *ret_hash)
{
	size_t lo = 0, hi = s->n, n = 0;
	__u64 h = 0xcbf29ce484222325ull;

	/* the first that starts at start_s or later (oldest first, by start) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->segs[mid].start_s < start_s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->n && s->segs[i].start_s < end_s; i++) {
		const struct store_seg *g = &s->segs[i];

		if (g->end_s > end_s) {
			if (i + 1 < s->n && s->segs[i + 1].start_s < end_s)
				return 0; /* overlapping segments: none is rolled up */
			break;
		}
		h = fnv(h, g->name, strlen(g->name) + 1);
		h = fnv(h, &g->bytes, sizeof(g->bytes));
		n++;
	}
	*ret_first = lo;
	*ret_hash = h;
	return n;
}

const struct store_rollup *store__rollups(const struct store *s, size_t *ret_n)
{
	*ret_n = s->nroll;
	return s->rolls;
}

bool store__rollup_valid(const struct store *s, const struct store_rollup *r, size_t *ret_first,
			 size_t *ret_n)
{
	size_t first, n;
	__u64 h;

	n = store__span(s, r->start_s, r->end_s, &first, &h);
	if (!n || h != r->hash)
		return false;
	*ret_first = first;
	*ret_n = n;
	return true;
}

int store__read_rollup(const struct store *s, const struct store_rollup *r, size_t max,
		       char **ret_buf, size_t *ret_len)
{
	if (s->rollfd < 0)
		return -ENOENT;
	return store_read_at(s->rollfd, r->name, max, ret_buf, ret_len);
}

static int roll_cmp(const void *a, const void *b)
{
	const struct store_rollup *x = a, *y = b;

	if (x->start_s != y->start_s)
		return x->start_s < y->start_s ? -1 : 1;
	if (x->end_s != y->end_s)
		return x->end_s < y->end_s ? -1 : 1;
	return 0;
}

/* r in the list, in order; -ENOMEM */
static int roll_add(struct store *s, const struct store_rollup *r)
{
	size_t i;

	if (s->nroll == s->caproll) {
		size_t nc = s->caproll ? s->caproll * 2 : 64;
		struct store_rollup *nv;

		if (nc > STORE_MAX_ROLLUPS || !(nv = realloc(s->rolls, nc * sizeof(*nv))))
			return -ENOMEM;
		s->rolls = nv;
		s->caproll = nc;
	}
	for (i = s->nroll; i > 0 && roll_cmp(&s->rolls[i - 1], r) > 0; i--)
		s->rolls[i] = s->rolls[i - 1];
	s->rolls[i] = *r;
	s->nroll++;
	s->bytes += r->bytes;
	return 0;
}

/* removes roll-up i (file and entry); one removed by someone else meanwhile counts too */
static bool roll_remove(struct store *s, size_t i)
{
	if (unlinkat(s->rollfd, s->rolls[i].name, 0) && errno != ENOENT)
		return false;
	s->bytes -= s->rolls[i].bytes;
	memmove(s->rolls + i, s->rolls + i + 1, (s->nroll - i - 1) * sizeof(*s->rolls));
	s->nroll--;
	s->st.rollups_removed++;
	return true;
}

void store_rollups_drop_before(struct store *s, __u64 end_s)
{
	size_t i = 0;

	while (i < s->nroll && s->rolls[i].start_s < end_s)
		if (!roll_remove(s, i))
			i++; /* left: the next rotation tries again */
}

static int scan_roll(struct store *s, const char *name, __u64 bytes)
{
	struct store_rollup r;

	if (store_rollup_parse(name, &r))
		return 0;
	r.bytes = bytes;
	return roll_add(s, &r);
}

int store_rollups_scan(struct store *s, bool writer)
{
	int err = store_scan_dir(s, s->rollfd, writer, scan_roll);

	/* the writer keeps only roll-ups of its segments as they are (and one per range) */
	for (size_t i = 0; writer && !err && i < s->nroll;) {
		size_t first, n;

		if ((i + 1 < s->nroll && !roll_cmp(&s->rolls[i], &s->rolls[i + 1])) ||
		    !store__rollup_valid(s, &s->rolls[i], &first, &n)) {
			if (roll_remove(s, i))
				continue;
		}
		i++;
	}
	return err;
}

/* what the merged segments said of themselves, for the roll-up's own account */
struct build_meta {
	struct out_meta meta;
	char strs[5][256];
	size_t seen, bad;
};

static const char *keep(struct build_meta *b, int i, const char *s)
{
	if (!s)
		return NULL;
	snprintf(b->strs[i], sizeof(b->strs[i]), "%s", s);
	return b->strs[i];
}

/* as report --store reads them: the first segment's strings, the counts summed */
static void on_seg(void *ctx, const struct store_seg *seg, const struct pprof_read_info *info,
		   int err, const char *why)
{
	struct build_meta *b = ctx;
	__u64 hz;

	(void)seg;
	(void)why;
	if (err) {
		b->bad++;
		return;
	}
	if (!b->seen++) {
		b->meta.title = keep(b, 0, pprof_info_str(info, "title"));
		b->meta.unit = keep(b, 1, pprof_info_str(info, "unit"));
		b->meta.host = keep(b, 2, pprof_info_str(info, "host"));
		b->meta.events = keep(b, 3, pprof_info_str(info, "events"));
		if (info->ncomments && strncmp(info->comments[0], "jprof:", 6))
			b->meta.command = keep(b, 4, info->comments[0]);
		hz = pprof_info_u64(info, "freq_hz");
		if (!hz && info->period)
			hz = (1000000000ull + info->period / 2) / info->period;
		b->meta.freq_hz = hz < 1000000 ? (__u32)hz : 0;
	}
	b->meta.samples += pprof_info_u64(info, "samples");
	b->meta.lost += pprof_info_u64(info, "lost");
}

int store_rollup_build(const struct store *s, __u64 start_s, __u64 end_s,
		       const volatile bool *stop, struct store_rollup *ret)
{
	struct build_meta b = {0};
	struct store_load_result res;
	struct out_input in = {.meta = &b.meta};
	struct store_rollup r = {.start_s = start_s, .end_s = end_s};
	struct model *m = NULL;
	char tmp[STORE_ROLLUP_NAME_LEN + 8];
	size_t first, n;
	struct stat st;
	FILE *f = NULL;
	int fd, err;

	n = store__span(s, start_s, end_s, &first, &r.hash);
	if (s->rollfd < 0)
		return -ENOENT;
	if (n < 2)
		return -ENODATA;
	err = store_rollup_name(start_s, end_s, r.hash, r.name, sizeof(r.name));
	if (err)
		return err;
	m = model__new();
	if (!m)
		return -ENOMEM;
	err = store__load_span(s, first, n, m, on_seg, &b, stop, &res);
	if (!err && (b.bad || res.loaded != n))
		err = -ENODATA; /* read as segments, each skipped one is told to the reader */
	if (!err && stop && *stop)
		err = -ECANCELED;
	if (err)
		goto out_free;
	b.meta.start_unix_ns = s->segs[first].start_s * 1000000000ull;
	b.meta.duration_ns = (s->segs[first + n - 1].end_s - s->segs[first].start_s) * 1000000000ull;
	in.model = m;
	for (int c = 0; c < JP_VAL_MAX; c++) /* every column recorded, as the segments have */
		if (model__total(m, c))
			in.view.values |= 1u << c;
	snprintf(tmp, sizeof(tmp), "%s%s", TMP_PREFIX, r.name);
	(void)unlinkat(s->rollfd, tmp, 0);
	fd = openat(s->rollfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out_unlink;
	}
	err = out_write(OUT_PPROF, &in, f);
	if (!err && fflush(f))
		err = -errno;
	if (!err && fsync(fd))
		err = -errno;
	if (!err && fstat(fd, &st))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && (__u64)st.st_size > STORE_READ_MAX)
		err = -EFBIG;
	if (err)
		goto out_unlink;
	r.bytes = (__u64)st.st_size;
	model__free(m);
	*ret = r;
	return 0;
out_unlink:
	(void)unlinkat(s->rollfd, tmp, 0);
out_free:
	model__free(m);
	return err;
}

int store__add_rollup(struct store *s, const struct store_rollup *r, __u64 now_s)
{
	char tmp[STORE_ROLLUP_NAME_LEN + 8];
	size_t first, n;
	int err = 0;

	if (s->rollfd < 0)
		return -ENOENT;
	snprintf(tmp, sizeof(tmp), "%s%s", TMP_PREFIX, r->name);
	if (!store__rollup_valid(s, r, &first, &n)) {
		err = -ESTALE;
		goto out_unlink;
	}
	if (s->lim.max_size && r->bytes > s->lim.max_size) {
		err = -EFBIG;
		goto out_unlink;
	}
	/* one roll-up a range: an older one's segments differed (it is stale) */
	for (size_t i = 0; i < s->nroll; i++)
		if (s->rolls[i].start_s == r->start_s && s->rolls[i].end_s == r->end_s &&
		    roll_remove(s, i))
			break;
	(void)store_rotate(s, now_s, r->bytes);
	if (!store__rollup_valid(s, r, &first, &n)) { /* the limits took some of its segments */
		err = -ESTALE;
		goto out_unlink;
	}
	if (renameat(s->rollfd, tmp, s->rollfd, r->name)) {
		err = -errno;
		goto out_unlink;
	}
	(void)fsync(s->rollfd);
	s->st.rollups_written++;
	if (roll_add(s, r))
		s->bytes += r->bytes; /* not listed (no memory): the next open lists it */
	return 0;
out_unlink:
	(void)unlinkat(s->rollfd, tmp, 0);
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * store_load.c: the segments of a time range, each checked whole, read into one model. A
 * reader thread reads and checks the next segment (file, gunzip, tables: nothing of the
 * model) while this one adds the last to the model; one segment waits at most, so two are
 * held at once. Without the thread (it could not start), one after the other. Valid roll-ups
 * stand for their segments, the cheapest set of them (plan); one that cannot be read is
 * replaced by its segments, in the reader.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_load.h"
#include "log.h"
#include "model/pprof_merge.h"

/* what is read in turn: segment first, or the n from first that roll-up ru holds */
struct item {
	size_t first, n;
	const struct store_rollup *ru;
};

/* one segment or roll-up read and checked: pf, or err with why; it stands for n segments */
struct prepared {
	struct pprof_merge_file *pf;
	int err;
	char why[256];
	struct store_seg seg; /* a roll-up's: its range and name */
	size_t n;
};

/* the items, read in turn (by the reader thread) and added (by the caller's) */
struct reader {
	const struct store *s;
	const struct store_seg *segs;
	const struct item *items;
	size_t nitems;
	const volatile bool *stop_at; /* the caller's: stop between two */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct prepared slot; /* the next one, when full */
	bool full, stop, done;
	/* the adding side */
	struct pprof_merge *pm;
	store_seg_fn fn;
	void *ctx;
	struct store_load_result res;
	int err;
};

static void prepare_bytes(struct prepared *p, int err, char *buf, size_t len)
{
	p->err = err;
	if (p->err)
		snprintf(p->why, sizeof(p->why), "%s",
			 p->err == -EFBIG ? "larger than 268435456 bytes" : strerror(-p->err));
	else
		p->err = pprof_merge_file__prepare(buf, len, &p->pf, p->why, sizeof(p->why));
}

static void prepare(const struct store *s, const struct store_seg *seg, struct prepared *p)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	memset(p, 0, sizeof(*p));
	p->seg = *seg;
	p->n = 1;
	err = store__read(s, seg, STORE_READ_MAX, &buf, &len);
	prepare_bytes(p, err, buf, len);
}

static void prepare_rollup(const struct store *s, const struct item *it, struct prepared *p)
{
	const struct store_seg *segs = s->segs + it->first;
	char *buf = NULL;
	size_t len = 0;
	int err;

	memset(p, 0, sizeof(*p));
	p->seg.start_s = segs[0].start_s;
	p->seg.end_s = segs[it->n - 1].end_s;
	p->seg.bytes = it->ru->bytes;
	snprintf(p->seg.name, sizeof(p->seg.name), "%.*s", (int)sizeof(p->seg.name) - 1,
		 it->ru->name);
	p->n = it->n;
	err = store__read_rollup(s, it->ru, STORE_READ_MAX, &buf, &len);
	prepare_bytes(p, err, buf, len);
}

/* each item read and handed to put (false: stop); a roll-up unread, its segments instead */
static void produce(struct reader *r, bool (*put)(struct reader *, struct prepared *))
{
	for (size_t i = 0; i < r->nitems; i++) {
		const struct item *it = &r->items[i];
		struct prepared p;

		if (it->ru) {
			prepare_rollup(r->s, it, &p);
			if (!p.err) {
				if (!put(r, &p))
					return;
				continue;
			}
			pr_debug("store: roll-up %s not read (%s): its %zu segments instead",
				 it->ru->name, p.why, it->n);
		}
		for (size_t k = it->first; k < it->first + (it->ru ? it->n : 1); k++) {
			prepare(r->s, &r->segs[k], &p);
			if (!put(r, &p))
				return;
		}
	}
}

/* one read and checked into the model: a bad one is skipped, told to fn; false: stop */
static bool add(struct reader *r, struct prepared *p)
{
	struct pprof_read_info info;

	if (p->err == -ENOMEM) {
		r->err = p->err;
		return false;
	}
	if (p->err) {
		if (r->fn)
			r->fn(r->ctx, &p->seg, NULL, p->err, p->why[0] ? p->why : strerror(-p->err));
		r->res.skipped += p->n;
	} else {
		r->err = pprof_merge__add_file(r->pm, p->pf, &info);
		if (r->err)
			return false; /* -ENOMEM, -ENOSPC: out of memory or over the model's budget */
		if (r->fn)
			r->fn(r->ctx, &p->seg, &info, 0, NULL);
		if (!r->res.loaded)
			r->res.start_s = p->seg.start_s;
		r->res.loaded += p->n;
		if (p->seg.end_s > r->res.end_s)
			r->res.end_s = p->seg.end_s;
	}
	return !(r->stop_at && *r->stop_at);
}

/* the reader thread's put: into the slot, when the last was taken */
static bool put_slot(struct reader *r, struct prepared *p)
{
	bool stop;

	pthread_mutex_lock(&r->mu);
	while (r->full && !r->stop)
		pthread_cond_wait(&r->cv, &r->mu);
	stop = r->stop;
	if (!stop) {
		r->slot = *p;
		r->full = true;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	if (stop)
		pprof_merge_file__free(p->pf);
	return !stop;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	produce(r, put_slot);
	pthread_mutex_lock(&r->mu);
	r->done = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* the next one from the reader thread; false: there is none */
static bool take(struct reader *r, struct prepared *p)
{
	bool got;

	pthread_mutex_lock(&r->mu);
	while (!r->full && !r->done)
		pthread_cond_wait(&r->cv, &r->mu);
	got = r->full;
	if (got) {
		*p = r->slot;
		r->full = false;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	return got;
}

/* the reader told to stop, gone, and what it held freed */
static void reader_stop(struct reader *r, pthread_t th)
{
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(th, NULL);
	if (r->full)
		pprof_merge_file__free(r->slot.pf);
}

/* the reader thread started, with every signal blocked (they are the caller's thread's) */
static bool reader_start(struct reader *r, pthread_t *th)
{
	sigset_t all, old;
	bool ok;

	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old))
		return false;
	ok = !pthread_create(th, NULL, reader_main, r);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ok;
}

/* the items into dst: read ahead by a thread when there are two or more */
static int load_items(const struct store *s, const struct item *items, size_t nitems,
		      struct model *dst, store_seg_fn fn, void *ctx, const volatile bool *stop,
		      struct store_load_result *ret)
{
	struct reader r = {.s = s, .items = items, .nitems = nitems, .stop_at = stop,
			   .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
			   .fn = fn, .ctx = ctx};
	size_t n;
	pthread_t th;

	r.segs = store__segments(s, &n);
	r.pm = pprof_merge__new(dst);
	if (!r.pm)
		return -ENOMEM;
	if ((nitems > 1 || (nitems == 1 && items[0].ru)) && reader_start(&r, &th)) {
		struct prepared p;

		while (take(&r, &p))
			if (!add(&r, &p))
				break;
		reader_stop(&r, th);
	} else {
		produce(&r, add);
	}
	pprof_merge__free(r.pm);
	*ret = r.res;
	return r.err;
}

/*
 * What a file costs to read beyond its bytes, in bytes: its open and read, the hand-over
 * between the threads, its tables looked up once more. It makes a roll-up worth taking over
 * the few segments it stands for even when it is a little larger than they are together.
 */
#define FILE_COST (64u << 10)

/* a valid roll-up of the range: it stands for the segments at positions [k, k + n) */
struct jump {
	size_t k, n;
	const struct store_rollup *ru;
};

/* the cheapest way found to position k of the range: from position from, by ru or a segment */
struct step {
	__u64 cost;
	size_t from;
	const struct store_rollup *ru;
};

/*
 * the valid roll-ups whose segments are idx[k..k + n) for some k, k ascending (the roll-ups
 * are oldest first): how many in *ret_n
 */
static int jumps(const struct store *s, const size_t *idx, size_t nidx, struct jump **ret,
		 size_t *ret_n)
{
	struct jump *js = NULL;
	size_t nj = 0, cap = 0;

	for (size_t j = 0; nidx && j < s->nroll; j++) {
		const struct store_rollup *ru = &s->rolls[j];
		size_t first, n, lo = 0, hi = nidx;

		if (ru->end_s <= s->segs[idx[0]].start_s)
			continue;
		if (ru->start_s >= s->segs[idx[nidx - 1]].end_s)
			break; /* oldest first: none after it lies in the range */
		if (!store__rollup_valid(s, ru, &first, &n))
			continue;
		while (lo < hi) { /* first's position in idx */
			size_t mid = lo + (hi - lo) / 2;

			if (idx[mid] < first)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == nidx || idx[lo] != first || n > nidx - lo ||
		    idx[lo + n - 1] != first + n - 1)
			continue; /* a segment of it is out of the range */
		if (nj == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct jump *nv = realloc(js, nc * sizeof(*nv));

			if (!nv) {
				free(js);
				return -ENOMEM;
			}
			js = nv;
			cap = nc;
		}
		js[nj++] = (struct jump){.k = lo, .n = n, .ru = ru};
	}
	*ret = js;
	*ret_n = nj;
	return 0;
}

/*
 * The segments idx[0..nidx) (store__segments' indices, ascending) as the cheapest run of
 * items, each a segment or a valid roll-up that holds segments of the range only (ranges
 * stay exact): fewest bytes read, FILE_COST a file. Roll-ups of each period nest (an
 * hour's, its ten minutes'), so a range that cuts hours reads the periods it holds whole
 * and segments at its ends only. items: room for nidx. How many in *ret_nitems.
 */
static int plan(const struct store *s, const size_t *idx, size_t nidx, struct item *items,
		size_t *ret_nitems)
{
	struct step *best;
	struct jump *js;
	size_t nj, j = 0, k, nitems = 0;
	int err = jumps(s, idx, nidx, &js, &nj);

	if (err)
		return err;
	best = calloc(nidx + 1, sizeof(*best));
	if (!best) {
		free(js);
		return -ENOMEM;
	}
	for (k = 1; k <= nidx; k++)
		best[k].cost = ~0ull;
	for (k = 0; k < nidx; k++) { /* every way out of position k, reached at its cheapest */
		__u64 c = best[k].cost + s->segs[idx[k]].bytes + FILE_COST;

		if (c < best[k + 1].cost)
			best[k + 1] = (struct step){.cost = c, .from = k};
		for (; j < nj && js[j].k == k; j++) {
			c = best[k].cost + js[j].ru->bytes + FILE_COST;
			if (c < best[k + js[j].n].cost)
				best[k + js[j].n] =
					(struct step){.cost = c, .from = k, .ru = js[j].ru};
		}
	}
	/* back from the end: the items in reverse, then turned around */
	for (k = nidx; k > 0; k = best[k].from)
		items[nitems++] = (struct item){
			.first = idx[best[k].from], .n = k - best[k].from, .ru = best[k].ru};
	for (size_t a = 0, b = nitems; a + 1 < b; a++, b--) {
		struct item t = items[a];

		items[a] = items[b - 1];
		items[b - 1] = t;
	}
	free(best);
	free(js);
	*ret_nitems = nitems;
	return 0;
}

/*
 * idx[0..nidx) into dst: planned (with roll-ups), or each segment alone; stop, from a thread's
 * store_rollup_build (a roll-up made of the roll-ups of the shorter periods inside it)
 */
static int load_idx(const struct store *s, const size_t *idx, size_t nidx, bool rollups,
		    struct model *dst, store_seg_fn fn, void *ctx, const volatile bool *stop,
		    struct store_load_result *ret)
{
	struct item *items = calloc(nidx ? nidx : 1, sizeof(*items));
	size_t nitems = nidx;
	int err = 0;

	*ret = (struct store_load_result){0};
	if (!items)
		return -ENOMEM;
	if (rollups)
		err = plan(s, idx, nidx, items, &nitems);
	else
		for (size_t i = 0; i < nidx; i++)
			items[i] = (struct item){.first = idx[i], .n = 1};
	if (!err)
		err = load_items(s, items, nitems, dst, fn, ctx, stop, ret);
	ret->in_range = nidx;
	free(items);
	return err;
}

int store__load(const struct store *s, __u64 since_s, __u64 until_s, struct model *dst,
		store_seg_fn fn, void *ctx, struct store_load_result *ret)
{
	const struct store_seg *segs;
	size_t n, nidx = 0, *idx;
	int err;

	segs = store__segments(s, &n);
	idx = calloc(n ? n : 1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (segs[i].end_s > since_s && segs[i].start_s < until_s)
			idx[nidx++] = i;
	err = load_idx(s, idx, nidx, true, dst, fn, ctx, NULL, ret);
	free(idx);
	return err;
}

/* segments first .. first + n - 1, with roll-ups or without */
static int load_run(const struct store *s, size_t first, size_t n, bool rollups, struct model *dst,
		    store_seg_fn fn, void *ctx, const volatile bool *stop,
		    struct store_load_result *ret)
{
	size_t total, *idx;
	int err;

	(void)store__segments(s, &total);
	if (first > total || n > total - first)
		return -EINVAL;
	idx = calloc(n ? n : 1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = first + i;
	err = load_idx(s, idx, n, rollups, dst, fn, ctx, stop, ret);
	free(idx);
	return err;
}

int store__load_span(const struct store *s, size_t first, size_t n, struct model *dst,
		     store_seg_fn fn, void *ctx, const volatile bool *stop,
		     struct store_load_result *ret)
{
	return load_run(s, first, n, true, dst, fn, ctx, stop, ret);
}

int store__load_segs(const struct store *s, size_t first, size_t n, struct model *dst,
		     store_seg_fn fn, void *ctx, const volatile bool *stop,
		     struct store_load_result *ret)
{
	return load_run(s, first, n, false, dst, fn, ctx, stop, ret);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * store_load.c: the segments of a time range, each checked whole, read into one model. A
 * reader thread reads and checks the next segment (file, gunzip, tables: nothing of the
 * model) while this one adds the last to the model; one segment waits at most, so two are
 * held at once. Without the thread (it could not start), one after the other.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "store_load.h"
#include "model/pprof_merge.h"

/* one segment read and checked: pf, or err with why */
struct prepared {
	struct pprof_merge_file *pf;
	int err;
	char why[256];
};

/* the segments in range (indices into segs), read in turn by the reader thread */
struct reader {
	const struct store *s;
	const struct store_seg *segs;
	const size_t *idx;
	size_t n;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct prepared slot; /* the next one, when full */
	bool full, stop;
};

static void prepare(const struct store *s, const struct store_seg *seg, struct prepared *p)
{
	char *buf = NULL;
	size_t len = 0;

	memset(p, 0, sizeof(*p));
	p->err = store__read(s, seg, STORE_READ_MAX, &buf, &len);
	if (p->err)
		snprintf(p->why, sizeof(p->why), "%s",
			 p->err == -EFBIG ? "larger than 268435456 bytes" : strerror(-p->err));
	else
		p->err = pprof_merge_file__prepare(buf, len, &p->pf, p->why, sizeof(p->why));
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	for (size_t i = 0; i < r->n; i++) {
		struct prepared p;

		prepare(r->s, &r->segs[r->idx[i]], &p);
		pthread_mutex_lock(&r->mu);
		while (r->full && !r->stop)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop) {
			pthread_mutex_unlock(&r->mu);
			pprof_merge_file__free(p.pf);
			break;
		}
		r->slot = p;
		r->full = true;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	return NULL;
}

/* the next segment from the reader thread */
static void take(struct reader *r, struct prepared *p)
{
	pthread_mutex_lock(&r->mu);
	while (!r->full)
		pthread_cond_wait(&r->cv, &r->mu);
	*p = r->slot;
	r->full = false;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
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

/* one segment, read and checked, into the model: a bad one is skipped, told to fn */
static int add_one(struct pprof_merge *pm, const struct store_seg *seg, struct prepared *p,
		   store_seg_fn fn, void *ctx, bool *ret_ok)
{
	struct pprof_read_info info;
	int err = p->err;

	*ret_ok = false;
	if (err == -ENOMEM)
		return err;
	if (err) {
		if (fn)
			fn(ctx, seg, NULL, err, p->why[0] ? p->why : strerror(-err));
		return 0;
	}
	err = pprof_merge__add_file(pm, p->pf, &info);
	if (err)
		return err; /* -ENOMEM, -ENOSPC: out of memory or over the model's budget */
	if (fn)
		fn(ctx, seg, &info, 0, NULL);
	*ret_ok = true;
	return 0;
}

int store__load(const struct store *s, __u64 since_s, __u64 until_s, struct model *dst,
		store_seg_fn fn, void *ctx, struct store_load_result *ret)
{
	struct reader r = {.s = s, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	struct pprof_merge *pm = pprof_merge__new(dst);
	struct store_load_result res = {0};
	size_t n, *idx = NULL;
	bool threaded = false;
	pthread_t th;
	int err = 0;

	r.segs = store__segments(s, &n);
	idx = pm ? calloc(n ? n : 1, sizeof(*idx)) : NULL;
	if (!idx) {
		pprof_merge__free(pm);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (r.segs[i].end_s > since_s && r.segs[i].start_s < until_s)
			idx[r.n++] = i;
	r.idx = idx;
	res.in_range = r.n;
	threaded = r.n > 1 && reader_start(&r, &th);
	for (size_t k = 0; k < r.n && !err; k++) {
		const struct store_seg *seg = &r.segs[idx[k]];
		struct prepared p;
		bool ok;

		if (threaded)
			take(&r, &p);
		else
			prepare(s, seg, &p);
		err = add_one(pm, seg, &p, fn, ctx, &ok);
		if (!ok) {
			if (p.err != -ENOMEM && !err)
				res.skipped++;
			continue;
		}
		if (!res.loaded++)
			res.start_s = seg->start_s;
		if (seg->end_s > res.end_s)
			res.end_s = seg->end_s;
	}
	if (threaded)
		reader_stop(&r, th);
	pprof_merge__free(pm);
	free(idx);
	*ret = res;
	return err;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rollups.c: the daemon's roll-ups, each period's segments merged by an idle thread. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rollups.h"
#include "log.h"

/* periods looked at in one round (each a binary search and its segments' names hashed) */
#define ROLLUP_LOOKS 64

struct rollups {
	char dir[PATH_MAX];
	__u64 period_s;
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu: a job [job_start_s, +period_s) handed over, its result */
	bool busy, done, quit;
	__u64 job_start_s;
	struct store_rollup result;
	int result_err;
	volatile bool stop; /* read by the merge between two segments */
	/* the loop's: periods from low_s to high_s looked at already */
	bool init;
	__u64 low_s, high_s;
	__u64 written, failed;
};

struct rollups *rollups__new(const char *dir, unsigned int period_s)
{
	struct rollups *ru;

	if (!period_s)
		return NULL;
	ru = calloc(1, sizeof(*ru));
	if (!ru)
		return NULL;
	if (snprintf(ru->dir, sizeof(ru->dir), "%s", dir) >= (int)sizeof(ru->dir)) {
		free(ru);
		return NULL;
	}
	ru->period_s = period_s;
	pthread_mutex_init(&ru->mu, NULL);
	pthread_cond_init(&ru->cv, NULL);
	return ru;
}

/* one period merged, with a store of its own (the writer's list is the loop thread's) */
static int build(struct rollups *ru, __u64 start_s, struct store_rollup *ret)
{
	struct store *s = NULL;
	char why[256];
	int err = store__open_reader(ru->dir, &s, why, sizeof(why));

	if (!err)
		err = store_rollup_build(s, start_s, start_s + ru->period_s, &ru->stop, ret);
	store__free(s);
	(void)malloc_trim(0); /* an hour's model gone: its pages back to the system */
	return err;
}

static void *rollups_main(void *arg)
{
	struct rollups *ru = arg;

	/*
	 * nice 19, this thread only: out of the recording's way (SCHED_IDLE would starve it on a
	 * busy host, and an hour's roll-up is worth a few seconds of CPU)
	 */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&ru->mu);
	for (;;) {
		struct store_rollup r;
		__u64 start_s;
		int err;

		while (!ru->quit && (!ru->busy || ru->done))
			pthread_cond_wait(&ru->cv, &ru->mu);
		if (ru->quit)
			break;
		start_s = ru->job_start_s;
		pthread_mutex_unlock(&ru->mu);
		err = build(ru, start_s, &r);
		pthread_mutex_lock(&ru->mu);
		ru->result = r;
		ru->result_err = err;
		ru->done = true;
	}
	pthread_mutex_unlock(&ru->mu);
	return NULL;
}

/* the thread started with every signal blocked (they are the loop's) */
static bool start_thread(struct rollups *ru)
{
	sigset_t all, old;

	if (ru->started)
		return true;
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old))
		return false;
	ru->started = !pthread_create(&ru->th, NULL, rollups_main, ru);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ru->started;
}

/* a finished job's roll-up put in place (the loop's thread) */
static void commit(struct rollups *ru, struct store *s, __u64 now_s)
{
	struct store_rollup r;
	int err;
	bool done;

	pthread_mutex_lock(&ru->mu);
	done = ru->done;
	r = ru->result;
	err = ru->result_err;
	if (done)
		ru->busy = ru->done = false;
	pthread_mutex_unlock(&ru->mu);
	if (!done)
		return;
	if (!err)
		err = store__add_rollup(s, &r, now_s);
	if (!err) {
		ru->written++;
		pr_debug("store: roll-up %s (%.1f MB) written", r.name, r.bytes / 1e6);
	} else if (err != -ENODATA && err != -ECANCELED) {
		ru->failed++;
		pr_debug("store: no roll-up of %llu + %llu s: %s", (unsigned long long)ru->job_start_s,
			 (unsigned long long)ru->period_s, strerror(-err));
	}
}

/* the period from start_s wants a roll-up: 2 segments or more, and none valid of them */
static bool wanted(const struct store *s, __u64 start_s, __u64 period_s)
{
	const struct store_rollup *rs;
	size_t first, nr;
	__u64 h;

	if (store__span(s, start_s, start_s + period_s, &first, &h) < 2)
		return false;
	rs = store__rollups(s, &nr);
	for (size_t i = 0; i < nr; i++)
		if (rs[i].start_s == start_s && rs[i].end_s == start_s + period_s && rs[i].hash == h)
			return false;
	return true;
}

void rollups__tick(struct rollups *ru, struct store *s, __u64 open_start_s, __u64 now_s)
{
	const struct store_seg *segs;
	__u64 p, end_s, a;
	size_t n;

	if (!ru)
		return;
	commit(ru, s, now_s);
	if (ru->busy)
		return;
	p = ru->period_s;
	end_s = open_start_s / p * p; /* the periods before it are complete */
	if (!ru->init) {
		ru->low_s = ru->high_s = end_s;
		ru->init = true;
	}
	segs = store__segments(s, &n);
	for (int look = 0; look < ROLLUP_LOOKS; look++) {
		if (ru->high_s + p <= end_s) { /* a period completed since: newer ones first */
			a = ru->high_s;
			ru->high_s += p;
		} else if (n && ru->low_s > segs[0].start_s && ru->low_s >= p) {
			ru->low_s -= p; /* then back to the oldest segment */
			a = ru->low_s;
		} else {
			return;
		}
		if (!wanted(s, a, p))
			continue;
		if (!start_thread(ru))
			return; /* tried again next round */
		pthread_mutex_lock(&ru->mu);
		ru->job_start_s = a;
		ru->busy = true;
		pthread_cond_broadcast(&ru->cv);
		pthread_mutex_unlock(&ru->mu);
		return;
	}
}

void rollups__free(struct rollups *ru, struct store *s, __u64 now_s)
{
	if (!ru)
		return;
	if (ru->started) {
		pthread_mutex_lock(&ru->mu);
		ru->quit = true;
		ru->stop = true;
		pthread_cond_broadcast(&ru->cv);
		pthread_mutex_unlock(&ru->mu);
		pthread_join(ru->th, NULL);
		commit(ru, s, now_s);
	}
	pthread_cond_destroy(&ru->cv);
	pthread_mutex_destroy(&ru->mu);
	free(ru);
}

void rollups__counts(const struct rollups *ru, __u64 *ret_written, __u64 *ret_failed)
{
	*ret_written = ru ? ru->written : 0;
	*ret_failed = ru ? ru->failed : 0;
}

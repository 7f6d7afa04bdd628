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
	__u64 period_s; /* an hour */
	__u64 part_s;	/* its parts' period, ten minutes (period_s: none) */
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu: a job [job_start_s, + job_len_s) handed over, its result */
	bool busy, done, quit;
	__u64 job_start_s, job_len_s;
	struct store_rollup result;
	int result_err;
	volatile bool stop; /* read by the merge between two files */
	/*
	 * The loop's: the parts ending at or before high_s looked at (and the period ending
	 * there when whole_due); going back, the periods from low_s on, and of the one before
	 * it, low_k parts (low_k == parts: all of them, the period itself next)
	 */
	bool init, whole_due;
	__u64 high_s, low_s;
	__u64 low_k;
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
	ru->part_s = period_s % STORE_ROLLUP_PARTS ? period_s : period_s / STORE_ROLLUP_PARTS;
	pthread_mutex_init(&ru->mu, NULL);
	pthread_cond_init(&ru->cv, NULL);
	return ru;
}

/* one period merged, with a store of its own (the writer's list is the loop thread's) */
static int build(struct rollups *ru, __u64 start_s, __u64 len_s, struct store_rollup *ret)
{
	struct store *s = NULL;
	char why[256];
	int err = store__open_reader(ru->dir, &s, why, sizeof(why));

	if (!err)
		err = store_rollup_build(s, start_s, start_s + len_s, &ru->stop, ret);
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
		__u64 start_s, len_s;
		int err;

		while (!ru->quit && (!ru->busy || ru->done))
			pthread_cond_wait(&ru->cv, &ru->mu);
		if (ru->quit)
			break;
		start_s = ru->job_start_s;
		len_s = ru->job_len_s;
		pthread_mutex_unlock(&ru->mu);
		err = build(ru, start_s, len_s, &r);
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
		pr_debug("store: no roll-up of %llu + %llu s: %s",
			 (unsigned long long)ru->job_start_s, (unsigned long long)ru->job_len_s,
			 strerror(-err));
	}
}

/*
 * [start_s, + len_s) wants a roll-up: 2 segments or more, and none of the same segments (its
 * hash) there, of its period or of a shorter one inside it (an hour of one part's segments)
 */
static bool wanted(const struct store *s, __u64 start_s, __u64 len_s)
{
	const struct store_rollup *rs;
	size_t first, nr, lo = 0, hi;
	__u64 h;

	if (store__span(s, start_s, start_s + len_s, &first, &h) < 2)
		return false;
	rs = store__rollups(s, &nr);
	for (hi = nr; lo < hi;) { /* the first that starts at start_s or later (oldest first) */
		size_t mid = lo + (hi - lo) / 2;

		if (rs[mid].start_s < start_s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < nr && rs[i].start_s < start_s + len_s; i++)
		if (rs[i].end_s <= start_s + len_s && rs[i].hash == h)
			return false;
	return true;
}

/*
 * The next period to look at into *ret_start, *ret_len: the parts completed before end_s
 * (the open interval's start), newest first, each period once its last part is; then back
 * to oldest_s (the oldest segment's start), a period's parts before it. false: none.
 */
static bool next_look(struct rollups *ru, __u64 end_s, __u64 oldest_s, __u64 *ret_start,
		      __u64 *ret_len)
{
	__u64 p = ru->period_s, f = ru->part_s, parts = p / f;

	if (ru->whole_due) {
		ru->whole_due = false;
		*ret_start = ru->high_s - p;
		*ret_len = p;
		return true;
	}
	if (ru->high_s + f <= end_s) {
		*ret_start = ru->high_s;
		*ret_len = f;
		ru->high_s += f;
		ru->whole_due = f < p && ru->high_s % p == 0;
		return true;
	}
	if (!ru->low_k && (ru->low_s <= oldest_s || ru->low_s < p))
		return false;
	if (ru->low_k < parts && f < p) {
		*ret_start = ru->low_s - p + ru->low_k * f;
		*ret_len = f;
		ru->low_k++;
		return true;
	}
	ru->low_k = 0;
	ru->low_s -= p;
	*ret_start = ru->low_s;
	*ret_len = p;
	return true;
}

void rollups__tick(struct rollups *ru, struct store *s, __u64 open_start_s, __u64 now_s)
{
	const struct store_seg *segs;
	__u64 a, len;
	size_t n;

	if (!ru)
		return;
	commit(ru, s, now_s);
	if (ru->busy)
		return;
	if (!ru->init) { /* the current period's parts from its start, then back */
		ru->low_s = ru->high_s = open_start_s / ru->period_s * ru->period_s;
		ru->init = true;
	}
	if (!start_thread(ru))
		return; /* tried again next round, before any period is looked at */
	segs = store__segments(s, &n);
	for (int look = 0; look < ROLLUP_LOOKS; look++) {
		if (!next_look(ru, open_start_s, n ? segs[0].start_s : ~0ull, &a, &len))
			return;
		if (!wanted(s, a, len))
			continue;
		pthread_mutex_lock(&ru->mu);
		ru->job_start_s = a;
		ru->job_len_s = len;
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pauses.c: one hsperf reader per recorded JVM, polled at a modest rate from the record loop. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pauses.h"
#include "util/fdlimit.h"
#include "util/procfs.h"

#define PAUSES_MAX    4096	     /* JVMs watched per recording */
#define READ_EVERY_NS 100000000ull   /* a JVM's file: 10 reads per second */
#define READ_QUIET_NS 1000000000ull  /* ... one a second after QUIET_READS without a pause */
#define QUIET_READS   20
#define LOOK_EVERY_NS 200000000ull   /* a file not found yet */
#define LOOK_FOR_NS   10000000000ull /* give up after (-XX:-UsePerfData, PerfDisableSharedMem) */
#define ALIVE_EVERY_NS 1000000000ull /* is the process still there? */
/*
 * ... and still the one watched: its start time from /proc/PID/stat, which sums the CPU
 * time of every thread (about 50 us for a JVM of 30), at every this many looks; the others
 * ask the kernel whether the pid is in use (kill 0). A reused pid is seen within 10 s, and
 * until then the old JVM's file, which no process writes any more, is read.
 */
#define START_EVERY 10u
#define BAD_READS_MAX  20	      /* reads in a row that are not PerfData: the file is dropped */
#define BIG_READ       (64u << 10)    /* a file read costs more than a JVM's: read it once a second */
#define EXITED_KEPT    256	      /* exited JVMs whose pauses stay for the report */
/* per pauses__poll call: a host full of hostile files costs at most this, the rest waits */
#define ROUND_NS       2000000ull
#define ROUND_BYTES    (2u << 20)

struct watched {
	struct jvm_info jvm;
	struct hsperf *h;
	__u64 start_ticks; /* the process's start: a pid reused later is another process */
	bool started_during;
	bool gone;   /* no more reads: the JVM exited (its last read stands) or gave up */
	bool exited; /* the process is gone: its reader is closed */
	__u32 quiet; /* reads in a row that counted no pause (at most QUIET_READS) */
	__u32 looks; /* still_there's, for START_EVERY */
	__u64 first_ns, next_ns, alive_ns;
};

struct pauses {
	struct watched *w;
	size_t n, cap;
	size_t next;  /* where the next round starts: rounds cut short are fair */
	size_t nexited; /* exited JVMs kept (with pauses) */
	__u64 dropped, exited_dropped, exited_freed, not_perfdata, no_fd, rounds_cut;
};

struct pauses *pauses__new(void)
{
	return calloc(1, sizeof(struct pauses));
}

void pauses__free(struct pauses *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		hsperf__free(p->w[i].h);
	free(p->w);
	free(p);
}

/* the live entry of pid (an exited one of the same pid was another process) */
static struct watched *find(const struct pauses *p, __u32 pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->w[i].jvm.pid == pid && !p->w[i].exited)
			return &p->w[i];
	return NULL;
}

static void remove_at(struct pauses *p, size_t i)
{
	if (p->w[i].exited && p->w[i].h)
		p->nexited--;
	hsperf__free(p->w[i].h);
	memmove(&p->w[i], &p->w[i + 1], (p->n - i - 1) * sizeof(p->w[0]));
	p->n--;
	if (p->next > i)
		p->next--;
}

/*
 * The process watched is gone (or its pid is another process now): its reader is closed
 * at once (an fd per JVM that came and went is what ran jprof out of fds), after a last
 * read, which the open fd still allows. What it counted stays for the report when it
 * counted a pause, within EXITED_KEPT JVMs (the oldest go first, counted); the rest is
 * freed.
 */
static void retire(struct pauses *p, size_t i, __u64 now_ns)
{
	struct watched *w = &p->w[i];

	if (w->h && hsperf__is_open(w->h))
		(void)hsperf__poll(w->h, now_ns);
	w->gone = w->exited = true;
	if (!w->h || !hsperf__pause_count(w->h)) {
		p->exited_freed++;
		remove_at(p, i);
		return;
	}
	hsperf__close_file(w->h);
	p->nexited++;
	while (p->nexited > EXITED_KEPT) {
		size_t k;

		for (k = 0; k < p->n && !(p->w[k].exited && p->w[k].h); k++)
			;
		if (k == p->n)
			break;
		p->exited_dropped++;
		remove_at(p, k);
	}
}

/* 1: the process watched is alive (and the same one), 0: gone */
static int still_there(struct watched *w)
{
	__u64 ticks;

	if (w->looks++ % START_EVERY)
		return !kill((pid_t)w->jvm.pid, 0) || errno != ESRCH;
	if (proc_start_ticks(w->jvm.pid, &ticks))
		return 0;
	return !w->start_ticks || ticks == w->start_ticks;
}

static struct watched *insert(struct pauses *p, const struct jvm_info *jvm, bool started_during,
			      int *ret)
{
	struct watched *w = find(p, jvm->pid);
	__u64 ticks = 0;

	*ret = 0;
	(void)proc_start_ticks(jvm->pid, &ticks);
	if (w && (!ticks || !w->start_ticks || ticks == w->start_ticks))
		return w;
	if (w) /* the pid is another process now: the old one exited */
		retire(p, (size_t)(w - p->w), 0);
	if (p->n == PAUSES_MAX) {
		p->dropped++;
		*ret = -ENOSPC;
		return NULL;
	}
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 16;
		struct watched *nw = realloc(p->w, nc * sizeof(*nw));

		if (!nw) {
			*ret = -ENOMEM;
			return NULL;
		}
		p->w = nw;
		p->cap = nc;
	}
	w = &p->w[p->n++];
	memset(w, 0, sizeof(*w));
	w->jvm = *jvm;
	w->start_ticks = ticks;
	w->started_during = started_during;
	*ret = 1;
	return w;
}

static void try_open(struct pauses *p, struct watched *w)
{
	if (w->h || w->exited)
		return;
	/* an fd per JVM: only while half of the fds are free (attaching needs the rest) */
	if (!fdlimit_room()) {
		p->no_fd++;
		return;
	}
	w->h = hsperf__open(w->jvm.pid, w->jvm.nspid, w->jvm.uid, w->jvm.user, w->started_during);
}

int pauses__add(struct pauses *p, const struct jvm_info *jvm, bool started_during)
{
	int ret;

	(void)insert(p, jvm, started_during, &ret);
	return ret;
}

int pauses__probe(struct pauses *p, const struct jvm_info *jvm, bool started_during, __u64 now_ns)
{
	struct watched *w;
	int ret;

	w = insert(p, jvm, started_during, &ret);
	if (!w)
		return ret;
	try_open(p, w);
	if (!w->h)
		return -ENOENT;
	ret = hsperf__poll(w->h, now_ns);
	if (ret)
		return ret;
	w->next_ns = now_ns + READ_EVERY_NS;
	return hsperf__vm_created(w->h);
}

static __u64 mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* one watched JVM's turn; the bytes it read */
static __u64 poll_one(struct pauses *p, size_t i, __u64 now_ns, bool final)
{
	struct watched *w = &p->w[i];
	struct hsperf_counters c0, c1;
	__u64 before;
	int err;

	if (!w->first_ns)
		w->first_ns = now_ns;
	if (!w->h) {
		try_open(p, w);
		if (!w->h) {
			/* not there (yet): look again for a while, then give up */
			w->next_ns = now_ns + LOOK_EVERY_NS;
			if (now_ns - w->first_ns > LOOK_FOR_NS)
				w->gone = true;
			return 0;
		}
	}
	/*
	 * The fd keeps the file readable after the JVM exits and removes it. An idle
	 * JVM (no GC, no safepoint for 2 s) is read once a second: its counts stay
	 * exact, and a pause is timed one by one unless two come within that second.
	 */
	hsperf__counters(w->h, &c0);
	before = hsperf__pause_count(w->h);
	err = hsperf__poll(w->h, now_ns);
	hsperf__counters(w->h, &c1);
	if (err == -EIO || err == -EBADF) {
		w->gone = true;
	} else if (c1.bad_in_a_row >= BAD_READS_MAX) {
		/* not PerfData for 2 s: not a JVM's file, or not one jprof can read */
		p->not_perfdata++;
		w->gone = true;
		hsperf__close_file(w->h);
	}
	if (hsperf__pause_count(w->h) != before)
		w->quiet = 0;
	else if (w->quiet < QUIET_READS)
		w->quiet++;
	w->next_ns = now_ns + (w->quiet < QUIET_READS ? READ_EVERY_NS : READ_QUIET_NS);
	/* a file far larger than a JVM's is read once a second, at most */
	if (!final && c1.bytes_read - c0.bytes_read > BIG_READ)
		w->next_ns = now_ns + READ_QUIET_NS;
	return c1.bytes_read - c0.bytes_read;
}

void pauses__poll(struct pauses *p, __u64 now_ns, bool final)
{
	__u64 t0 = mono_now(), bytes = 0;
	size_t start = p->next < p->n ? p->next : 0;

	(void)fdlimit_check(now_ns);
	/*
	 * A round-robin from where the last round stopped: when the budget (time, bytes)
	 * cuts a round short, the next one starts with the JVMs it did not reach. The final
	 * round reads every file (still within a budget 50 times larger: -d is kept).
	 */
	for (size_t i = start, left = p->n; left && p->n; left--) {
		struct watched *w;

		if (i >= p->n)
			i = 0;
		w = &p->w[i];
		if (!w->exited && now_ns >= w->alive_ns) {
			size_t n = p->n;

			w->alive_ns = now_ns + ALIVE_EVERY_NS;
			if (!still_there(w)) {
				retire(p, i, now_ns);
				if (p->n < n)
					continue; /* removed: i is the next one now */
			}
		}
		if (w->gone || (!final && now_ns < w->next_ns)) {
			i++;
			continue;
		}
		bytes += poll_one(p, i, now_ns, final);
		i++;
		if (bytes > (final ? 50ull : 1ull) * ROUND_BYTES ||
		    mono_now() - t0 > (final ? 50ull : 1ull) * ROUND_NS) {
			if (left > 1)
				p->rounds_cut++;
			p->next = i;
			return;
		}
	}
	p->next = 0;
}

void pauses__report(const struct pauses *p, FILE *f)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->w[i].h)
			hsperf__report(p->w[i].h, p->w[i].jvm.pid, p->w[i].jvm.main, f);
	if (p->dropped)
		fprintf(f, "jprof: pauses: %llu JVMs beyond %d not watched\n",
			(unsigned long long)p->dropped, PAUSES_MAX);
	if (p->no_fd)
		fprintf(f,
			"jprof: pauses: %llu hsperfdata files not opened: over half of the file "
			"descriptors in use (ulimit -n %lu)\n",
			(unsigned long long)p->no_fd, fdlimit_soft());
	if (p->not_perfdata)
		fprintf(f, "jprof: pauses: %llu hsperfdata files dropped: not PerfData\n",
			(unsigned long long)p->not_perfdata);
	if (p->exited_dropped)
		fprintf(f, "jprof: pauses: %llu exited JVMs' pauses not kept (budget %d)\n",
			(unsigned long long)p->exited_dropped, EXITED_KEPT);
	if (p->rounds_cut)
		fprintf(f,
			"jprof: pauses: %llu rounds of hsperfdata reads cut short by their budget "
			"(%u KiB, %llu ms a round)\n",
			(unsigned long long)p->rounds_cut, ROUND_BYTES >> 10, ROUND_NS / 1000000);
}

void pauses__report_json(const struct pauses *p, FILE *f)
{
	bool first = true;

	fputc('[', f);
	for (size_t i = 0; i < p->n; i++) {
		if (!p->w[i].h)
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		hsperf__report_json(p->w[i].h, p->w[i].jvm.pid, p->w[i].jvm.main, f);
	}
	fputc(']', f);
}

void pauses__for_each_gc(const struct pauses *p, pauses_gc_fn fn, void *ctx)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct hsperf_gc_event *ev;
		__u64 origin;
		size_t n;

		if (!p->w[i].h)
			continue;
		origin = hsperf__clock_origin_ns(p->w[i].h);
		ev = hsperf__gc_events(p->w[i].h, &n);
		for (size_t k = 0; k < n; k++)
			fn(ctx, p->w[i].jvm.pid, origin + ev[k].start_rel_ns, &ev[k]);
	}
}

void pauses__for_each_jvm(const struct pauses *p, pauses_jvm_fn fn, void *ctx)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->w[i].h)
			fn(ctx, &p->w[i].jvm, p->w[i].h);
}

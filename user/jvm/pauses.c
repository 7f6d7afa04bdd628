// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pauses.c: one hsperf reader per recorded JVM, polled at a modest rate from the record loop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pauses.h"

#define PAUSES_MAX    4096	     /* JVMs watched per recording */
#define READ_EVERY_NS 100000000ull   /* a JVM's file: 10 reads per second */
#define READ_QUIET_NS 1000000000ull  /* ... one a second after QUIET_READS without a pause */
#define QUIET_READS   20
#define LOOK_EVERY_NS 200000000ull   /* a file not found yet */
#define LOOK_FOR_NS   10000000000ull /* give up after (-XX:-UsePerfData, PerfDisableSharedMem) */

struct watched {
	struct jvm_info jvm;
	struct hsperf *h;
	bool started_during;
	bool gone; /* read failed after the JVM exited: its last read stands */
	__u32 quiet; /* reads in a row that counted no pause (at most QUIET_READS) */
	__u64 first_ns, next_ns;
};

struct pauses {
	struct watched *w;
	size_t n, cap;
	__u64 dropped;
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

static struct watched *find(const struct pauses *p, __u32 pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->w[i].jvm.pid == pid)
			return &p->w[i];
	return NULL;
}

static struct watched *insert(struct pauses *p, const struct jvm_info *jvm, bool started_during,
			      int *ret)
{
	struct watched *w = find(p, jvm->pid);

	*ret = 0;
	if (w)
		return w;
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
	w->started_during = started_during;
	*ret = 1;
	return w;
}

static void try_open(struct watched *w)
{
	if (w->h)
		return;
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
	try_open(w);
	if (!w->h)
		return -ENOENT;
	ret = hsperf__poll(w->h, now_ns);
	if (ret)
		return ret;
	w->next_ns = now_ns + READ_EVERY_NS;
	return hsperf__vm_created(w->h);
}

void pauses__poll(struct pauses *p, __u64 now_ns, bool final)
{
	for (size_t i = 0; i < p->n; i++) {
		struct watched *w = &p->w[i];
		__u64 before;

		if (w->gone || (!final && now_ns < w->next_ns))
			continue;
		if (!w->first_ns)
			w->first_ns = now_ns;
		if (!w->h) {
			try_open(w);
			if (!w->h) {
				/* not there (yet): look again for a while, then give up */
				w->next_ns = now_ns + LOOK_EVERY_NS;
				if (now_ns - w->first_ns > LOOK_FOR_NS)
					w->gone = true;
				continue;
			}
		}
		/*
		 * The fd keeps the file readable after the JVM exits and removes it. An idle
		 * JVM (no GC, no safepoint for 2 s) is read once a second: its counts stay
		 * exact, and a pause is timed one by one unless two come within that second.
		 */
		before = hsperf__pause_count(w->h);
		if (hsperf__poll(w->h, now_ns) == -EIO)
			w->gone = true;
		if (hsperf__pause_count(w->h) != before)
			w->quiet = 0;
		else if (w->quiet < QUIET_READS)
			w->quiet++;
		w->next_ns = now_ns + (w->quiet < QUIET_READS ? READ_EVERY_NS : READ_QUIET_NS);
	}
}

void pauses__report(const struct pauses *p, FILE *f)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->w[i].h)
			hsperf__report(p->w[i].h, p->w[i].jvm.pid, p->w[i].jvm.main, f);
	if (p->dropped)
		fprintf(f, "jprof: pauses: %llu JVMs beyond %d not watched\n",
			(unsigned long long)p->dropped, PAUSES_MAX);
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

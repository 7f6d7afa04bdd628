/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tstats.c: jprof trace's per-method statistics and their text and JSON outputs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "model/model.h"
#include "out/jfr.h"
#include "trace/tsplit.h"
#include "trace/tstats.h"

/*
 * A log-linear histogram per method: durations in ns, 128 linear buckets per power of two
 * (values below 128 ns exact), so a quantile read back at its bucket's middle is within
 * 1/256 of a true value of that bucket. 64 powers x 128 = 8192 counters (64 KiB) for a
 * method that has calls, allocated at its first call: 512 methods at most (32 MiB).
 */
#define SUB_BITS 7
#define SUB	 (1u << SUB_BITS)
#define BUCKETS	 (64u * SUB)

struct method {
	char *name, *why;
	__u64 calls, thrown, min, max, sum;
	__u64 *hist;
};

struct slow {
	__u64 dur_ns, start_ns;
	__u32 tid;
	unsigned int id;
	int thrown;
	char **stack; /* NULL none */
	unsigned int n_stack;
	char *args;		  /* --args: "#0 7, #1 \"abc\"", NULL none */
	struct tsplit_res *split; /* NULL none */
};

struct tname {
	__u32 tid;
	char *name;
};

struct tstats {
	struct method m[TSTATS_METHODS_MAX];
	struct slow slow[TSTATS_SLOWEST_MAX];
	unsigned int n_slow, max_slow;
	__u64 slow_min_ns;
	struct tname *threads;
	size_t n_threads;
	__u64 lost_nomem;
};

static unsigned int bucket_of(__u64 v)
{
	unsigned int e;

	if (v < SUB)
		return (unsigned int)v;
	e = 63u - (unsigned int)__builtin_clzll(v); /* >= SUB_BITS */
	return (e - SUB_BITS + 1) * SUB + (unsigned int)((v >> (e - SUB_BITS)) - SUB);
}

/* the middle of bucket b's values */
static __u64 bucket_mid(unsigned int b)
{
	unsigned int e;
	__u64 lo, width;

	if (b < SUB)
		return b;
	e = b / SUB + SUB_BITS - 1;
	width = 1ull << (e - SUB_BITS);
	lo = (1ull << e) + (__u64)(b % SUB) * width;
	return lo + width / 2;
}

struct tstats *tstats__new(unsigned int slowest)
{
	struct tstats *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->max_slow = slowest < TSTATS_SLOWEST_MAX ? slowest : TSTATS_SLOWEST_MAX;
	return s;
}

static void free_stack(struct slow *c)
{
	for (unsigned int i = 0; i < c->n_stack; i++)
		free(c->stack[i]);
	free(c->stack);
	c->stack = NULL;
	c->n_stack = 0;
	free(c->split);
	c->split = NULL;
	free(c->args);
	c->args = NULL;
}

void tstats__set_slow(struct tstats *s, __u64 min_ns)
{
	s->slow_min_ns = min_ns;
}

void tstats__free(struct tstats *s)
{
	if (!s)
		return;
	for (unsigned int i = 0; i < TSTATS_METHODS_MAX; i++) {
		free(s->m[i].name);
		free(s->m[i].why);
		free(s->m[i].hist);
	}
	for (size_t i = 0; i < s->n_threads; i++)
		free(s->threads[i].name);
	for (unsigned int i = 0; i < s->n_slow; i++)
		free_stack(&s->slow[i]);
	free(s->threads);
	free(s);
}

int tstats__add(struct tstats *s, unsigned int id, __u32 tid, __u64 start_ns, __u64 dur_ns,
		int thrown)
{
	struct method *m;
	unsigned int k;

	if (id >= TSTATS_METHODS_MAX)
		return -EINVAL;
	m = &s->m[id];
	if (!m->hist) {
		m->hist = calloc(BUCKETS, sizeof(*m->hist));
		if (!m->hist) {
			s->lost_nomem++;
			return -ENOMEM;
		}
	}
	if (!m->calls || dur_ns < m->min)
		m->min = dur_ns;
	if (dur_ns > m->max)
		m->max = dur_ns;
	m->calls++;
	m->thrown += thrown ? 1 : 0;
	m->sum += dur_ns;
	m->hist[bucket_of(dur_ns)]++;
	/* the slowest, kept sorted longest first */
	if (!s->max_slow || dur_ns < s->slow_min_ns ||
	    (s->n_slow == s->max_slow && dur_ns <= s->slow[s->n_slow - 1].dur_ns))
		return 0;
	if (s->n_slow == s->max_slow)
		free_stack(&s->slow[s->n_slow - 1]); /* the one that drops out */
	k = s->n_slow < s->max_slow ? s->n_slow++ : s->n_slow - 1;
	while (k > 0 && s->slow[k - 1].dur_ns < dur_ns) {
		s->slow[k] = s->slow[k - 1];
		k--;
	}
	s->slow[k] = (struct slow){
		.dur_ns = dur_ns, .start_ns = start_ns, .tid = tid, .id = id, .thrown = thrown};
	return 0;
}

static char *dup_str(const char *s)
{
	return s ? strdup(s) : NULL;
}

int tstats__name(struct tstats *s, unsigned int id, const char *name, const char *why)
{
	struct method *m;

	if (id >= TSTATS_METHODS_MAX)
		return -EINVAL;
	m = &s->m[id];
	free(m->name);
	free(m->why);
	m->name = dup_str(name);
	m->why = dup_str(why);
	return (name && !m->name) || (why && !m->why) ? -ENOMEM : 0;
}

int tstats__thread(struct tstats *s, __u32 tid, const char *name)
{
	struct tname *t;

	for (size_t i = 0; i < s->n_threads; i++)
		if (s->threads[i].tid == tid)
			return 0;
	t = realloc(s->threads, (s->n_threads + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	s->threads = t;
	t[s->n_threads].tid = tid;
	t[s->n_threads].name = strdup(name);
	if (!t[s->n_threads].name)
		return -ENOMEM;
	s->n_threads++;
	return 0;
}

int tstats__set_stack(struct tstats *s, unsigned int id, __u32 tid, __u64 start_ns,
		      const char *const *frames, unsigned int n)
{
	for (unsigned int i = 0; i < s->n_slow; i++) {
		struct slow *c = &s->slow[i];

		if (c->id != id || c->tid != tid || c->start_ns != start_ns || c->stack)
			continue;
		c->stack = calloc(n ? n : 1, sizeof(*c->stack));
		if (!c->stack)
			return -ENOMEM;
		for (unsigned int k = 0; k < n; k++) {
			c->stack[k] = strdup(frames[k] ? frames[k] : "?");
			if (!c->stack[k]) {
				c->n_stack = k;
				free_stack(c);
				return -ENOMEM;
			}
		}
		c->n_stack = n;
		return 1;
	}
	return 0;
}

int tstats__set_args(struct tstats *s, unsigned int id, __u32 tid, __u64 start_ns, const char *args)
{
	for (unsigned int i = 0; i < s->n_slow; i++) {
		struct slow *c = &s->slow[i];

		if (c->id != id || c->tid != tid || c->start_ns != start_ns || c->args)
			continue;
		c->args = strdup(args);
		return c->args ? 1 : -ENOMEM;
	}
	return 0;
}

int tstats__slow_at(const struct tstats *s, unsigned int i, struct tstats_call *ret)
{
	const struct slow *c;

	if (i >= s->n_slow)
		return -ENOENT;
	c = &s->slow[i];
	*ret = (struct tstats_call){.id = c->id,
				    .tid = c->tid,
				    .start_ns = c->start_ns,
				    .dur_ns = c->dur_ns,
				    .has_split = c->split != NULL};
	return 0;
}

int tstats__set_split(struct tstats *s, unsigned int i, const struct tsplit_res *r)
{
	struct slow *c;

	if (i >= s->n_slow)
		return -ENOENT;
	c = &s->slow[i];
	if (!c->split) {
		c->split = malloc(sizeof(*c->split));
		if (!c->split)
			return -ENOMEM;
	}
	*c->split = *r;
	return 0;
}

struct tsplit_res *tstats__split(struct tstats *s, unsigned int i)
{
	return i < s->n_slow ? s->slow[i].split : NULL;
}

int tstats__slow_tid(const struct tstats *s, unsigned int i, __u32 *ret)
{
	if (i >= s->n_slow)
		return -ENOENT;
	*ret = s->slow[i].tid;
	return 0;
}

static const char *thread_name(const struct tstats *s, __u32 tid);
#define TSTATS_STACK_MAX 64

int tstats__add_slow_stacks(const struct tstats *s, const char *root, struct profile *p)
{
	struct prof_frame f[64]; /* the stack cut at 62 frames below the roots */
	char tbuf[32];

	for (unsigned int i = 0; i < s->n_slow; i++) {
		const struct slow *c = &s->slow[i];
		const char *tn = thread_name(s, c->tid);
		size_t n = 0;
		int err;

		if (root)
			f[n++] = (struct prof_frame){root, JP_FK_ROOT};
		if (!tn) {
			snprintf(tbuf, sizeof(tbuf), "tid %u", c->tid);
			tn = tbuf;
		}
		f[n++] = (struct prof_frame){tn, JP_FK_ROOT};
		if (c->stack && c->n_stack) {
			for (unsigned int k = c->n_stack; k-- > 0 && n < sizeof(f) / sizeof(f[0]);)
				f[n++] = (struct prof_frame){c->stack[k], JP_FK_JIT};
		} else if (s->m[c->id].name) {
			f[n++] = (struct prof_frame){s->m[c->id].name, JP_FK_JIT};
		}
		err = profile__add(p, f, n, c->dur_ns);
		if (err)
			return err;
	}
	return 0;
}

/* a Java frame of the agent's ("pkg.Class.method[(desc)]") as a model location */
static jp_id java_loc(struct model *m, const char *dotted)
{
	char name[512];
	const char *paren = strchr(dotted, '(');
	size_t end = paren ? (size_t)(paren - dotted) : strlen(dotted);
	struct jp_location loc = {.kind = JP_FK_JIT};

	if (snprintf(name, sizeof(name), "%s", dotted) >= (int)sizeof(name))
		return 0;
	/* internal form: the class's dots become slashes, up to the method's dot */
	for (char *c = name, *last = memrchr(name, '.', end); last && c < last; c++)
		if (*c == '.')
			*c = '/';
	loc.func = model__func(m, name, "", true);
	return loc.func ? model__location(m, &loc) : 0;
}

int tstats__add_slow_events(const struct tstats *s, __u32 pid, const char *main, __u64 t0_ns,
			    struct model *m, struct out_method_trace *ev, size_t cap, size_t *n)
{
	jp_id locs[TSTATS_STACK_MAX];
	char line[2][512];

	for (unsigned int i = 0; i < s->n_slow; i++) {
		const struct slow *c = &s->slow[i];
		struct jp_labels l = {.pid = pid, .tid = c->tid, .comm = "java", .main = main};
		const struct tsplit_res *r = c->split;
		struct out_method_trace *t;
		size_t k = 0;

		if (*n >= cap)
			return -ENOSPC;
		t = &ev[*n];
		l.thread = thread_name(s, c->tid);
		if (s->m[c->id].name)
			locs[k++] = java_loc(m, s->m[c->id].name);
		for (unsigned int f = k; c->stack && f < c->n_stack && k < TSTATS_STACK_MAX; f++)
			locs[k++] = java_loc(m, c->stack[f]);
		for (size_t f = 0; f < k; f++)
			if (!locs[f])
				return -ENOMEM;
		*t = (struct out_method_trace){
			.start_ns = c->start_ns > t0_ns ? c->start_ns - t0_ns : 0,
			.dur_ns = c->dur_ns,
			.stack = k ? model__stack(m, locs, k) : 0,
			.labels = model__labels(m, &l),
			.thrown = c->thrown,
			.args = c->args ? model__str(m, c->args) : NULL,
		};
		if ((k && !t->stack) || !t->labels || (c->args && !t->args))
			return -ENOMEM;
		if (r) {
			tsplit_format(r, 0, line[0], sizeof(line[0]));
			tsplit_format(r, 1, line[1], sizeof(line[1]));
			t->has_split = r->has_kernel;
			t->cpu_ns = r->cpu_ns;
			t->off_ns = r->off_ns;
			t->sc_count = r->sc_count;
			t->sc_ns = r->sc_ns;
			t->gc_count = r->gc_count;
			t->gc_ns = r->gc_ns;
			t->split = model__str(m, line[0]);
			t->syscalls = model__str(m, line[1]);
			if (!t->split || !t->syscalls)
				return -ENOMEM;
		}
		(*n)++;
	}
	return 0;
}

static const char *thread_name(const struct tstats *s, __u32 tid)
{
	for (size_t i = 0; i < s->n_threads; i++)
		if (s->threads[i].tid == tid)
			return s->threads[i].name;
	return NULL;
}

__u64 tstats__calls(const struct tstats *s, unsigned int id)
{
	return id < TSTATS_METHODS_MAX ? s->m[id].calls : 0;
}

__u64 tstats__quantile(const struct tstats *s, unsigned int id, double q)
{
	const struct method *m;
	__u64 rank, seen = 0, v;

	if (id >= TSTATS_METHODS_MAX || !s->m[id].calls)
		return 0;
	m = &s->m[id];
	if (q <= 0)
		return m->min;
	if (q >= 1)
		return m->max;
	/* the smallest value with at least q of the calls at or below it */
	rank = (__u64)(q * (double)m->calls + 0.999999);
	if (rank < 1)
		rank = 1;
	for (unsigned int b = 0; b < BUCKETS; b++) {
		seen += m->hist[b];
		if (seen >= rank) {
			v = bucket_mid(b);
			return v < m->min ? m->min : v > m->max ? m->max : v;
		}
	}
	return m->max;
}

static void fmt_ns(char *buf, size_t n, __u64 ns)
{
	if (ns < 1000)
		snprintf(buf, n, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, n, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000ull)
		snprintf(buf, n, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, n, "%.2f s", (double)ns / 1e9);
}

static const double quantiles[] = {0.5, 0.9, 0.99, 0.999};
static const char *const qnames[] = {"p50", "p90", "p99", "p99_9"};

void tstats__write_text(const struct tstats *s, const struct tstats_totals *t, FILE *f)
{
	char b[7][32];

	if (t->pid)
		fprintf(f, "JVM %u:\n", t->pid);
	fprintf(f, "%-10s %-10s %10s %10s %10s %10s %10s %10s  %s\n", "calls", "thrown", "min",
		"p50", "p90", "p99", "p99.9", "max", "method");
	for (unsigned int i = 0; i < TSTATS_METHODS_MAX; i++) {
		const struct method *m = &s->m[i];

		if (!m->name || m->why)
			continue;
		fmt_ns(b[0], sizeof(b[0]), m->calls ? m->min : 0);
		for (int q = 0; q < 4; q++)
			fmt_ns(b[1 + q], sizeof(b[1]), tstats__quantile(s, i, quantiles[q]));
		fmt_ns(b[5], sizeof(b[5]), m->max);
		fprintf(f, "%-10llu %-10llu %10s %10s %10s %10s %10s %10s  %s\n",
			(unsigned long long)m->calls, (unsigned long long)m->thrown, b[0], b[1],
			b[2], b[3], b[4], b[5], m->name);
	}
	for (unsigned int i = 0; i < TSTATS_METHODS_MAX; i++)
		if (s->m[i].name && s->m[i].why)
			fprintf(f, "refused: %s: %s\n", s->m[i].name, s->m[i].why);
	if (s->n_slow) {
		fprintf(f, "\nslowest calls:\n%12s  %-8s %-24s %s\n", "duration", "tid", "thread",
			"method");
		for (unsigned int k = 0; k < s->n_slow; k++) {
			const struct slow *c = &s->slow[k];
			const char *tn = thread_name(s, c->tid);

			fmt_ns(b[6], sizeof(b[6]), c->dur_ns);
			fprintf(f, "%12s  %-8u %-24s %s%s\n", b[6], c->tid, tn ? tn : "?",
				s->m[c->id].name ? s->m[c->id].name : "?",
				c->thrown ? " (threw)" : "");
			for (int l = 0; c->split && l < 2; l++) {
				char line[512];

				tsplit_format(c->split, l, line, sizeof(line));
				if (line[0])
					fprintf(f, "%14s %s %s\n", "",
						l ? "        " : "split:", line);
			}
			if (c->args)
				fprintf(f, "%14s args: %s\n", "", c->args);
			for (unsigned int i = 0; i < c->n_stack; i++)
				fprintf(f, "%14s at %s\n", "", c->stack[i]);
		}
	}
	fprintf(f,
		"\ntraced %.1f s, %s; calls not recorded: %llu (buffer full), %llu (deeper than "
		"the agent's stack), %llu exits without entry; ~%llu ns per timed call\n",
		t->seconds, t->stopped ? t->stopped : "stopped",
		(unsigned long long)(t->dropped + s->lost_nomem), (unsigned long long)t->lost_depth,
		(unsigned long long)t->unmatched, (unsigned long long)t->cost_ns);
	if (t->classes_failed || t->retransform_failed)
		fprintf(f, "classes left unchanged: %llu unreadable, %llu retransforms failed\n",
			(unsigned long long)t->classes_failed,
			(unsigned long long)t->retransform_failed);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/*
 * "hist":[[FROM_NS,CALLS],...]: the calls by powers of two of their duration, the non-empty
 * ones, each [FROM_NS, 2 x FROM_NS) (the first, FROM_NS 0, is [0, 2))
 */
static void write_hist_json(const struct method *m, FILE *f)
{
	__u64 pow[64] = {0};
	int first = 1;

	for (unsigned int b = 0; m->hist && b < BUCKETS; b++) {
		__u64 v;

		if (!m->hist[b])
			continue; /* (bucket_of never reaches the top ones) */
		v = bucket_mid(b);
		pow[v > 1 ? 63 - __builtin_clzll(v) : 0] += m->hist[b];
	}
	fprintf(f, ",\"hist\":[");
	for (int e = 0; e < 64; e++) {
		if (!pow[e])
			continue;
		fprintf(f, "%s[%llu,%llu]", first ? "" : ",", e ? 1ull << e : 0ull,
			(unsigned long long)pow[e]);
		first = 0;
	}
	fputc(']', f);
}

void tstats__write_json(const struct tstats *s, const struct tstats_totals *t, FILE *f)
{
	int first = 1;

	fputc('{', f);
	if (t->pid)
		fprintf(f, "\"pid\":%u,", t->pid);
	fprintf(f, "\"seconds\":%.3f,\"stopped\":", t->seconds);
	json_str(f, t->stopped ? t->stopped : "stopped");
	fprintf(f,
		",\"dropped\":%llu,\"lost_depth\":%llu,\"unmatched\":%llu,\"cost_ns\":%llu,"
		"\"methods\":[",
		(unsigned long long)(t->dropped + s->lost_nomem), (unsigned long long)t->lost_depth,
		(unsigned long long)t->unmatched, (unsigned long long)t->cost_ns);
	for (unsigned int i = 0; i < TSTATS_METHODS_MAX; i++) {
		const struct method *m = &s->m[i];

		if (!m->name)
			continue;
		fprintf(f, "%s{\"method\":", first ? "" : ",");
		first = 0;
		json_str(f, m->name);
		if (m->why) {
			fprintf(f, ",\"refused\":");
			json_str(f, m->why);
			fputc('}', f);
			continue;
		}
		fprintf(f, ",\"calls\":%llu,\"thrown\":%llu,\"min_ns\":%llu,\"max_ns\":%llu",
			(unsigned long long)m->calls, (unsigned long long)m->thrown,
			(unsigned long long)(m->calls ? m->min : 0), (unsigned long long)m->max);
		for (int q = 0; q < 4; q++)
			fprintf(f, ",\"%s_ns\":%llu", qnames[q],
				(unsigned long long)tstats__quantile(s, i, quantiles[q]));
		write_hist_json(m, f);
		fputc('}', f);
	}
	fprintf(f, "],\"slowest\":[");
	for (unsigned int k = 0; k < s->n_slow; k++) {
		const struct slow *c = &s->slow[k];

		fprintf(f, "%s{\"method\":", k ? "," : "");
		json_str(f, s->m[c->id].name ? s->m[c->id].name : "?");
		fprintf(f, ",\"tid\":%u,\"thread\":", c->tid);
		json_str(f, thread_name(s, c->tid) ? thread_name(s, c->tid) : "");
		fprintf(f, ",\"start_ns\":%llu,\"duration_ns\":%llu,\"thrown\":%s",
			(unsigned long long)c->start_ns, (unsigned long long)c->dur_ns,
			c->thrown ? "true" : "false");
		if (c->split) {
			fprintf(f, ",\"split\":");
			tsplit_write_json(c->split, f);
		}
		if (c->args) {
			fprintf(f, ",\"args\":");
			json_str(f, c->args);
		}
		if (c->stack) {
			fprintf(f, ",\"stack\":[");
			for (unsigned int i = 0; i < c->n_stack; i++) {
				if (i)
					fputc(',', f);
				json_str(f, c->stack[i]);
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fprintf(f, "]}\n");
}

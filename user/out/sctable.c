// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sctable.c: the syscall summary table, its percentiles and its text and JSON writers. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "out/sctable.h"

struct sc_table *sc_table_new(void)
{
	return calloc(1, sizeof(struct sc_table));
}

void sc_table_free(struct sc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nprocs; i++) {
		for (size_t j = 0; j < t->procs[i].nrows; j++)
			free(t->procs[i].rows[j].errnos);
		free(t->procs[i].rows);
	}
	free(t->procs);
	free(t);
}

/* arr (n elements of sz bytes) grown by one zeroed element; NULL on overflow or ENOMEM */
static void *grow(void *arr, size_t n, size_t sz)
{
	char *na;

	if (n >= SIZE_MAX / sz - 1)
		return NULL;
	na = realloc(arr, (n + 1) * sz);
	if (!na)
		return NULL;
	memset(na + n * sz, 0, sz);
	return na;
}

struct sc_proc *sc_table_proc(struct sc_table *t, __u32 pid, __u32 tid)
{
	for (size_t i = t->nprocs; i > 0; i--)
		if (t->procs[i - 1].pid == pid && t->procs[i - 1].tid == tid)
			return &t->procs[i - 1];
	return NULL;
}

struct sc_row *sc_table_row(struct sc_table *t, __u32 pid, __u32 tid, const char *comm, int nr,
			    const char *name)
{
	struct sc_proc *p = NULL;
	struct sc_row *r;

	for (size_t i = t->nprocs; i > 0; i--) {
		if (t->procs[i - 1].pid == pid && t->procs[i - 1].tid == tid) {
			p = &t->procs[i - 1];
			break;
		}
	}
	if (!p) {
		p = grow(t->procs, t->nprocs, sizeof(*p));
		if (!p)
			return NULL;
		t->procs = p;
		p = &t->procs[t->nprocs++];
		p->pid = pid;
		p->tid = tid;
		snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	}
	for (size_t j = 0; j < p->nrows; j++)
		if (p->rows[j].nr == nr)
			return &p->rows[j];
	r = grow(p->rows, p->nrows, sizeof(*r));
	if (!r)
		return NULL;
	p->rows = r;
	r = &p->rows[p->nrows++];
	r->nr = nr;
	snprintf(r->name, sizeof(r->name), "%s", name ? name : "");
	return r;
}

int sc_row_add_errno(struct sc_row *r, int err, __u64 count)
{
	struct sc_errno_count *e;

	for (size_t i = 0; i < r->nerrnos; i++) {
		if (r->errnos[i].err == err) {
			r->errnos[i].count += count;
			return 0;
		}
	}
	e = grow(r->errnos, r->nerrnos, sizeof(*e));
	if (!e)
		return -ENOMEM;
	r->errnos = e;
	e = &r->errnos[r->nerrnos++];
	e->err = err;
	e->count = count;
	return 0;
}

static int cmp_u64_desc(__u64 a, __u64 b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct sc_row *x = a, *y = b;
	int c = cmp_u64_desc(x->total_ns, y->total_ns);

	return c ? c : (x->nr > y->nr) - (x->nr < y->nr);
}

static int cmp_proc(const void *a, const void *b)
{
	const struct sc_proc *x = a, *y = b;
	int c = cmp_u64_desc(x->total_ns, y->total_ns);

	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_errno(const void *a, const void *b)
{
	const struct sc_errno_count *x = a, *y = b;
	int c = cmp_u64_desc(x->count, y->count);

	return c ? c : (x->err > y->err) - (x->err < y->err);
}

static int cmp_group(const void *a, const void *b)
{
	const struct sc_proc *x = a, *y = b;
	int c;

	if (!x->container[0] != !y->container[0])
		return x->container[0] ? -1 : 1; /* the host last */
	c = strcmp(x->container, y->container);
	return c ? c : cmp_proc(a, b);
}

void sc_table_group(struct sc_table *t)
{
	qsort(t->procs, t->nprocs, sizeof(*t->procs), cmp_group);
	t->per_container = true;
}

void sc_table_finish(struct sc_table *t)
{
	for (size_t i = 0; i < t->nprocs; i++) {
		struct sc_proc *p = &t->procs[i];

		p->calls = p->errors = p->total_ns = 0;
		for (size_t j = 0; j < p->nrows; j++) {
			struct sc_row *r = &p->rows[j];

			if (r->nr & SC_NR_JPROF)
				goto sort_errnos;
			p->calls += r->calls;
			p->errors += r->errors;
			p->total_ns += r->total_ns;
sort_errnos:
			if (r->nerrnos > 1)
				qsort(r->errnos, r->nerrnos, sizeof(*r->errnos), cmp_errno);
		}
		if (p->nrows > 1)
			qsort(p->rows, p->nrows, sizeof(*p->rows), cmp_row);
	}
	if (t->nprocs > 1)
		qsort(t->procs, t->nprocs, sizeof(*t->procs), cmp_proc);
}

__u64 sc_hist_quantile(const __u64 *hist, unsigned int nbuckets, double q, __u64 max_ns)
{
	double rank, cum = 0, lo, hi, v;
	__u64 total = 0;

	for (unsigned int b = 0; b < nbuckets; b++)
		total += hist[b];
	if (!total)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	rank = q * (double)total;
	for (unsigned int b = 0; b < nbuckets; b++) {
		if (!hist[b] || cum + (double)hist[b] < rank) {
			cum += (double)hist[b];
			continue;
		}
		lo = b ? (double)(1ull << b) : 0;
		hi = b < 63 ? (double)(1ull << (b + 1)) : 18446744073709551615.0;
		v = lo + (hi - lo) * (rank - cum) / (double)hist[b];
		if (max_ns && v > (double)max_ns)
			return max_ns;
		return (__u64)v;
	}
	return max_ns;
}

const char *sc_errno_name(int err, char *buf, size_t len)
{
	const char *n = NULL;

	/* kernel-internal restart codes, seen at sys_exit before signal handling */
	switch (err) {
	case 512:
		return "ERESTARTSYS";
	case 513:
		return "ERESTARTNOINTR";
	case 514:
		return "ERESTARTNOHAND";
	case 516:
		return "ERESTART_RESTARTBLOCK";
	default:
		break;
	}
	if (err > 0 && err < 4096)
		n = strerrorname_np(err);
	if (n)
		return n;
	snprintf(buf, len, "E%d", err);
	return buf;
}

/* a FILE plus the first write error */
struct w {
	FILE *f;
	int err;
};

__attribute__((format(printf, 2, 3))) static void wr(struct w *w, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return;
	va_start(ap, fmt);
	if (vfprintf(w->f, fmt, ap) < 0)
		w->err = errno ? -errno : -EIO;
	va_end(ap);
}

static int wr_end(struct w *w)
{
	if (!w->err && fflush(w->f))
		w->err = errno ? -errno : -EIO;
	if (!w->err && ferror(w->f))
		w->err = -EIO;
	return w->err;
}

static double us(__u64 ns)
{
	return (double)ns / 1e3;
}

/* p's rows that jprof caused (jprof), or the others; jprof's under a heading of their own */
static void write_rows(struct w *w, const struct sc_proc *p, bool jprof)
{
	bool head = false;
	char eb[16];

	for (size_t j = 0; j < p->nrows; j++) {
		const struct sc_row *r = &p->rows[j];

		if (!(r->nr & SC_NR_JPROF) != !jprof)
			continue;
		if (jprof && !head) {
			wr(w, "   caused by jprof (its stack requests; not in the process's "
			      "totals):\n");
			head = true;
		}
		wr(w, "   %-20s %10llu %8llu %11.3f %10.3f %10.3f %10.3f %10.3f %11.3f\n", r->name,
		   (unsigned long long)r->calls, (unsigned long long)r->errors,
		   (double)r->total_ns / 1e6, r->calls ? us(r->total_ns) / (double)r->calls : 0.0,
		   us(r->p50_ns), us(r->p90_ns), us(r->p99_ns), us(r->max_ns));
		for (size_t k = 0; k < r->nerrnos; k++)
			wr(w, "   %-20s %10s %8llu  %s\n", "", "",
			   (unsigned long long)r->errnos[k].count,
			   sc_errno_name(r->errnos[k].err, eb, sizeof(eb)));
	}
}

int sctable_write_text(const struct sc_table *t, FILE *f)
{
	struct w w = {.f = f};

	wr(&w, "# syscalls: times in µs unless marked; p50/p90/p99 are interpolated within "
	       "log2 latency buckets, max is exact\n");
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct sc_proc *p = &t->procs[i];

		if (t->per_container && (!i || strcmp(p->container, t->procs[i - 1].container))) {
			if (p->container[0])
				wr(&w, "\n[container %s]\n", p->container);
			else
				wr(&w, "\n[host]\n");
		}
		if (p->tid)
			wr(&w, "\n %s (%u/%u), %llu calls, %llu errors, %.3f ms\n\n", p->comm,
			   p->pid, p->tid, (unsigned long long)p->calls,
			   (unsigned long long)p->errors, (double)p->total_ns / 1e6);
		else
			wr(&w, "\n %s (%u), %llu calls, %llu errors, %.3f ms\n\n", p->comm, p->pid,
			   (unsigned long long)p->calls, (unsigned long long)p->errors,
			   (double)p->total_ns / 1e6);
		wr(&w, "   %-20s %10s %8s %11s %10s %10s %10s %10s %11s\n", "syscall", "calls",
		   "errors", "total(ms)", "avg", "p50", "p90", "p99", "max");
		wr(&w, "   %-20s %10s %8s %11s %10s %10s %10s %10s %11s\n", "--------------------",
		   "----------", "--------", "-----------", "----------", "----------",
		   "----------", "----------", "-----------");
		write_rows(&w, p, false);
		write_rows(&w, p, true);
	}
	return wr_end(&w);
}

/* a JSON string; bytes >= 0x80 are escaped as code points so any comm stays valid UTF-8 */
static void wr_json_str(struct w *w, const char *s, size_t max)
{
	wr(w, "\"");
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			wr(w, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			wr(w, "\\u%04x", c);
		else
			wr(w, "%c", c);
	}
	wr(w, "\"");
}

/* p's rows that jprof caused (jprof), or the others, as JSON array elements */
static void json_rows(struct w *w, const struct sc_proc *p, bool jprof)
{
	bool first = true;
	char eb[16];

	for (size_t j = 0; j < p->nrows; j++) {
		const struct sc_row *r = &p->rows[j];

		if (!(r->nr & SC_NR_JPROF) != !jprof)
			continue;
		wr(w, "%s\n {\"nr\":%d,\"name\":", first ? "" : ",", r->nr & ~SC_NR_JPROF);
		first = false;
		wr_json_str(w, r->name, sizeof(r->name));
		wr(w,
		   ",\"calls\":%llu,\"errors\":%llu,\"total_ns\":%llu,\"avg_ns\":%llu,"
		   "\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,\"max_ns\":%llu,"
		   "\"errnos\":{",
		   (unsigned long long)r->calls, (unsigned long long)r->errors,
		   (unsigned long long)r->total_ns,
		   (unsigned long long)(r->calls ? r->total_ns / r->calls : 0),
		   (unsigned long long)r->p50_ns, (unsigned long long)r->p90_ns,
		   (unsigned long long)r->p99_ns, (unsigned long long)r->max_ns);
		for (size_t k = 0; k < r->nerrnos; k++) {
			wr(w, "%s", k ? "," : "");
			wr_json_str(w, sc_errno_name(r->errnos[k].err, eb, sizeof(eb)), SIZE_MAX);
			wr(w, ":%llu", (unsigned long long)r->errnos[k].count);
		}
		wr(w, "}}");
	}
}

/* "syscalls": the process's own calls; "caused_by_jprof": those of jprof's stack requests */
int sctable_write_json(const struct sc_table *t, FILE *f)
{
	struct w w = {.f = f};

	wr(&w, "{\"unit\":\"ns\",\"percentiles\":\"interpolated within log2 buckets\","
	       "\"processes\":[");
	for (size_t i = 0; i < t->nprocs; i++) {
		const struct sc_proc *p = &t->procs[i];

		wr(&w, "%s\n{\"pid\":%u,\"tid\":%u,\"comm\":", i ? "," : "", p->pid, p->tid);
		wr_json_str(&w, p->comm, sizeof(p->comm));
		if (t->per_container) {
			wr(&w, ",\"container\":");
			wr_json_str(&w, p->container, sizeof(p->container));
		}
		wr(&w, ",\"calls\":%llu,\"errors\":%llu,\"total_ns\":%llu,\"syscalls\":[",
		   (unsigned long long)p->calls, (unsigned long long)p->errors,
		   (unsigned long long)p->total_ns);
		json_rows(&w, p, false);
		wr(&w, "],\"caused_by_jprof\":[");
		json_rows(&w, p, true);
		wr(&w, "]}");
	}
	wr(&w, "]}\n");
	return wr_end(&w);
}

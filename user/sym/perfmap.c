// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perfmap.c: read perf maps written by JITs; untrusted, appended to while we read. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lines.h"
#include "perfmap.h"
#include "util/strpool.h"
#include "util/safe_open.h"

/*
 * Bounds memory per map: entries held and bytes of names kept (stale names included).
 * HotSpot's code cache (240 MiB at most) holds far fewer blobs than this.
 */
#ifndef JP_FUZZ_BUDGETS
#define PERFMAP_MAX_ENTRIES (1u << 20)
#define PERFMAP_MAX_NAMES   (64u << 20)
#else /* fuzzing: small enough for a fuzzer's inputs to reach */
#define PERFMAP_MAX_ENTRIES 2048u
#define PERFMAP_MAX_NAMES   (128u << 10)
#endif
#define PERFMAP_CHUNK	    (64 * 1024)

struct pm_entry {
	__u64 start, end; /* [start, end): the part of the symbol still visible */
	__u64 sym_start;  /* where the symbol itself starts, for offsets */
	const char *name; /* in pool */
};

/* a parsed line waiting to be merged; seq orders lines, later wins */
struct pm_item {
	struct pm_entry e;
	size_t seq;
};

struct perfmap {
	struct pm_entry *e; /* sorted, disjoint */
	size_t n;
	struct pm_item *batch; /* lines parsed since the last merge */
	size_t nb, bcap;
	struct strpool pool;
	struct lines_state st;
	size_t bad_lines;
	unsigned long last_bad_line;
	size_t dropped; /* lines left out by a budget */
	/* the file being followed */
	dev_t dev;
	ino_t ino;
	__u64 offset; /* bytes consumed so far */
	bool has_file;
};

struct perfmap *perfmap__new(void)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	strpool_init(&pm->pool, PERFMAP_MAX_NAMES);
	return pm;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->e);
	free(pm->batch);
	strpool_free(&pm->pool);
	free(pm);
}

static int parse_line(const char *line, size_t len, unsigned long lineno, void *ctx)
{
	struct perfmap *pm = ctx;
	const char *p = line, *name;
	__u64 start, size;
	struct pm_item *it;

	if (!line)
		goto bad;
	if (!len)
		return 0;
	p = lines_parse_hex(p, true, 16, &start);
	if (!p || (*p != ' ' && *p != '\t'))
		goto bad;
	while (*p == ' ' || *p == '\t')
		p++;
	p = lines_parse_hex(p, true, 16, &size);
	if (!p || (*p != ' ' && *p != '\t'))
		goto bad;
	while (*p == ' ' || *p == '\t')
		p++;
	name = p;
	len = strlen(name);
	while (len && (name[len - 1] == '\r' || name[len - 1] == ' ' || name[len - 1] == '\t'))
		len--;
	if (!len || start + size < start)
		goto bad;
	if (!size)
		return 0; /* covers nothing */
	if (pm->n + pm->nb >= PERFMAP_MAX_ENTRIES) {
		pm->dropped++;
		return 0; /* full: keep what we have */
	}
	if (pm->nb == pm->bcap) {
		size_t cap = pm->bcap ? pm->bcap * 2 : 256;
		struct pm_item *nb = reallocarray(pm->batch, cap, sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		pm->batch = nb;
		pm->bcap = cap;
	}
	it = &pm->batch[pm->nb];
	it->e.name = strpool_add(&pm->pool, name, len);
	if (!it->e.name) {
		pm->dropped++;
		return 0; /* name budget spent: keep what we have */
	}
	it->e.start = start;
	it->e.end = start + size;
	it->e.sym_start = start;
	it->seq = pm->nb + 1; /* existing entries are seq 0 */
	pm->nb++;
	return 0;
bad:
	pm->bad_lines++;
	pm->last_bad_line = lineno;
	return 0;
}

static int cmp_item(const void *a, const void *b)
{
	const struct pm_item *x = a, *y = b;

	if (x->e.start != y->e.start)
		return x->e.start < y->e.start ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq ? 1 : 0);
}

/* index of the first entry with end > addr */
static size_t first_ending_after(const struct pm_entry *e, size_t n, __u64 addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* true when the sorted batch overlaps neither itself nor the current entries */
static bool batch_is_disjoint(const struct perfmap *pm)
{
	size_t i, j;

	for (i = 0; i < pm->nb; i++) {
		const struct pm_entry *b = &pm->batch[i].e;

		if (i && pm->batch[i - 1].e.end > b->start)
			return false;
		j = first_ending_after(pm->e, pm->n, b->start);
		if (j < pm->n && pm->e[j].start < b->end)
			return false;
	}
	return true;
}

static void merge_disjoint(const struct perfmap *pm, struct pm_entry *out)
{
	size_t i = 0, j = 0, k = 0;

	while (i < pm->n || j < pm->nb) {
		if (j == pm->nb || (i < pm->n && pm->e[i].start < pm->batch[j].e.start))
			out[k++] = pm->e[i++];
		else
			out[k++] = pm->batch[j++].e;
	}
}

/* a max-heap of item indexes, ordered by seq */
static void heap_push(size_t *h, size_t *hn, const struct pm_item *it, size_t v)
{
	size_t i = (*hn)++;

	while (i) {
		size_t p = (i - 1) / 2;

		if (it[h[p]].seq >= it[v].seq)
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = v;
}

static void heap_pop(size_t *h, size_t *hn, const struct pm_item *it)
{
	size_t n = --(*hn), i = 0, v = h[n];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && it[h[c + 1]].seq > it[h[c]].seq)
			c++;
		if (it[v].seq >= it[h[c]].seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (n)
		h[i] = v;
}

/*
 * Paints every interval in seq order (newest on top) with a sweep over starts:
 * the visible piece between two change points belongs to the newest active
 * interval. O(n log n). Writes at most 2n - 1 pieces to out.
 */
static size_t paint(struct pm_item *it, size_t n, size_t *heap, struct pm_entry *out)
{
	size_t i = 0, hn = 0, k = 0, last = (size_t)-1;
	__u64 pos = 0;

	qsort(it, n, sizeof(*it), cmp_item);
	while (i < n || hn) {
		const struct pm_item *top;
		__u64 next;

		if (!hn)
			pos = it[i].e.start;
		while (i < n && it[i].e.start <= pos)
			heap_push(heap, &hn, it, i++);
		while (hn && it[heap[0]].e.end <= pos)
			heap_pop(heap, &hn, it);
		if (!hn)
			continue;
		top = &it[heap[0]];
		next = top->e.end;
		if (i < n && it[i].e.start < next)
			next = it[i].e.start;
		if (k && last == heap[0] && out[k - 1].end == pos) {
			out[k - 1].end = next;
		} else {
			out[k] = top->e;
			out[k].start = pos;
			out[k].end = next;
			k++;
			last = heap[0];
		}
		pos = next;
	}
	return k;
}

static int commit(struct perfmap *pm)
{
	struct pm_entry *out = NULL;
	struct pm_item *all = NULL;
	size_t *heap = NULL, n, i, cap;
	int err = 0;

	if (!pm->nb)
		return 0;
	qsort(pm->batch, pm->nb, sizeof(*pm->batch), cmp_item);
	if (batch_is_disjoint(pm)) {
		/* the common case: new code in fresh space */
		out = reallocarray(NULL, pm->n + pm->nb, sizeof(*out));
		if (!out)
			return -ENOMEM;
		merge_disjoint(pm, out);
		n = pm->n + pm->nb;
		goto out_swap;
	}
	n = pm->n + pm->nb;
	cap = 2 * n;
	all = reallocarray(NULL, n, sizeof(*all));
	heap = reallocarray(NULL, n, sizeof(*heap));
	out = reallocarray(NULL, cap, sizeof(*out));
	if (!all || !heap || !out) {
		err = -ENOMEM;
		free(out);
		goto out_free;
	}
	for (i = 0; i < pm->n; i++) {
		all[i].e = pm->e[i];
		all[i].seq = 0;
	}
	memcpy(all + pm->n, pm->batch, pm->nb * sizeof(*all));
	n = paint(all, n, heap, out);
out_swap:
	free(pm->e);
	pm->e = out;
	pm->n = n;
	pm->nb = 0;
out_free:
	free(all);
	free(heap);
	return err;
}

long perfmap__parse_buf(struct perfmap *pm, const char *buf, size_t len, bool final)
{
	long used;
	int err;

	used = lines_split(&pm->st, buf, len, final, parse_line, pm);
	err = commit(pm);
	if (used < 0)
		return used;
	return err ? err : used;
}

int perfmap__parse_stream(struct perfmap *pm, FILE *f)
{
	long r;
	int err;

	r = lines_read_file(f, JP_PERFMAP_MAX_FILE, parse_line, pm);
	err = commit(pm);
	if (r < 0)
		return (int)r;
	return err;
}

static void reset_file(struct perfmap *pm, const struct stat *st)
{
	/* names stay in the pool: callers may still hold them */
	pm->n = 0;
	pm->nb = 0;
	pm->offset = 0;
	memset(&pm->st, 0, sizeof(pm->st));
	pm->dev = st->st_dev;
	pm->ino = st->st_ino;
	pm->has_file = true;
}

int perfmap__load_fd(struct perfmap *pm, int fd)
{
	size_t before, have = 0;
	struct stat st;
	char *buf = NULL;
	int err = 0;
	long used;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (!pm->has_file || st.st_dev != pm->dev || st.st_ino != pm->ino ||
	    (__u64)st.st_size < pm->offset)
		reset_file(pm, &st);
	before = pm->n;
	if ((__u64)st.st_size == pm->offset)
		return 0; /* nothing new */
	buf = malloc(PERFMAP_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		__u64 at = pm->offset + have;
		size_t want = PERFMAP_CHUNK - have;
		ssize_t r;

		if (at >= JP_PERFMAP_MAX_FILE)
			break;
		if (want > JP_PERFMAP_MAX_FILE - at)
			want = JP_PERFMAP_MAX_FILE - at;
		r = pread(fd, buf + have, want, (off_t)at);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		/* the writer may be mid-line: leave an unterminated tail for next time */
		used = lines_split(&pm->st, buf, have + (size_t)r, false, parse_line, pm);
		if (used < 0) {
			err = (int)used;
			break;
		}
		pm->offset += (__u64)used;
		have = have + (size_t)r - (size_t)used;
		memmove(buf, buf + used, have);
	}
	free(buf);
	if (!err)
		err = commit(pm);
	else
		(void)commit(pm);
	if (err)
		return err;
	return pm->n > before ? (int)(pm->n - before) : 0;
}

int perfmap__load_path(struct perfmap *pm, const char *path)
{
	int fd, err;

	/* no symlink anywhere, and only a regular file is ever opened */
	fd = safe_open_at(AT_FDCWD, path, 0, &SAFE_EXPECT_ANY, NULL);
	if (fd < 0)
		return fd;
	err = perfmap__load_fd(pm, fd);
	close(fd);
	return err;
}

const char *perfmap__find(const struct perfmap *pm, __u64 addr, __u64 *ret_offset)
{
	size_t i;

	if (!pm)
		return NULL;
	i = first_ending_after(pm->e, pm->n, addr);
	if (i == pm->n || pm->e[i].start > addr)
		return NULL;
	*ret_offset = addr - pm->e[i].sym_start;
	return pm->e[i].name;
}

size_t perfmap__count(const struct perfmap *pm)
{
	return pm ? pm->n : 0;
}

size_t perfmap__dropped(const struct perfmap *pm)
{
	return pm ? pm->dropped : 0;
}

size_t perfmap__bytes(const struct perfmap *pm)
{
	if (!pm)
		return 0;
	return sizeof(*pm) + pm->n * sizeof(*pm->e) + pm->bcap * sizeof(*pm->batch) +
	       pm->pool.total;
}

size_t perfmap__bad_lines(const struct perfmap *pm)
{
	return pm ? pm->bad_lines : 0;
}

unsigned long perfmap__last_bad_line(const struct perfmap *pm)
{
	return pm ? pm->last_bad_line : 0;
}

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

bool perfmap_name_is_jvm_stub(const char *name)
{
	/* HotSpot's DynamicCodeGenerated / Compiler.perfmap names for non-method code */
	static const char *const stubs[] = {
		"Interpreter",
		"StubRoutines",
		"I2C/C2I",
		"RuntimeStub",
		"SafepointBlob",
		"ExceptionBlob",
		"DeoptimizationBlob",
		"UncommonTrapBlob",
		"BufferBlob",
		"AdapterBlob",
		"MethodHandlesAdapterBlob",
		"VtableBlob",
		"vtable",
		"itable",
		"method entry point",
		"flush_icache",
		"native_call",
		"nep_invoker",
		"UpcallStub",
		"CodeBlob",
		"SingletonBlob",
		"Stub",
		"[",
		"{",
	};
	size_t i;

	if (!name || !*name)
		return true;
	for (i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++)
		if (has_prefix(name, stubs[i]))
			return true;
	/* a Java method is Class::method or class.method (with a package or a signature) */
	return !strstr(name, "::") && !strchr(name, '.') && !strchr(name, '/');
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* lists.c: jprof serve's lists: the store's segments (counted once, the index, the marks) and the saved recordings. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve_int.h"
#include "clock.h"
#include "model/model.h"
#include "model/pprof_read.h"

static struct seg_count *count_find(struct server *s, const struct store_seg *seg)
{
	for (size_t i = 0; i < s->ncounts; i++)
		if (!strcmp(s->counts[i].name, seg->name) && s->counts[i].bytes == seg->bytes)
			return &s->counts[i];
	return NULL;
}

/* reads one segment's own account: its samples */
static void count_segment(const struct store *st, const struct store_seg *seg,
			  struct seg_count *ret)
{
	struct pprof_read_info info;
	struct model *m = model__new();
	char why[128], *buf = NULL;
	size_t len = 0;

	memset(ret, 0, sizeof(*ret));
	memcpy(ret->name, seg->name, sizeof(ret->name));
	ret->bytes = seg->bytes;
	ret->bad = true;
	if (m && !store__read(st, seg, STORE_READ_MAX, &buf, &len) &&
	    !model__read_pprof_info(m, buf, len, &info, why, sizeof(why))) {
		ret->samples = pprof_info_u64(&info, "samples");
		ret->bad = false;
	}
	free(buf);
	model__free(m);
}

static void count_keep(struct server *s, const struct seg_count *c, size_t live)
{
	struct store_seg key = {.bytes = c->bytes};

	memcpy(key.name, c->name, sizeof(key.name));
	pthread_mutex_lock(&s->lock);
	if (count_find(s, &key)) /* another request counted it meanwhile */
		goto out;
	/* at most about twice the segments the store holds: the oldest entries go */
	if (s->ncounts >= 2 * live + 64) {
		size_t drop = s->ncounts / 2;

		memmove(s->counts, s->counts + drop, (s->ncounts - drop) * sizeof(*s->counts));
		s->ncounts -= drop;
	}
	if (s->ncounts == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct seg_count *p = realloc(s->counts, cap * sizeof(*p));

		if (!p)
			goto out;
		s->counts = p;
		s->cap = cap;
	}
	s->counts[s->ncounts++] = *c;
out:
	pthread_mutex_unlock(&s->lock);
}

/* the store's index (store__index_read): name -> samples, sorted by name */
struct idx_ent {
	char name[STORE_NAME_LEN];
	__u64 samples, bytes;
};

struct idx {
	struct idx_ent *e;
	size_t n, cap;
};

static void idx_add(void *ctx, const char *name, __u64 samples, __u64 bytes)
{
	struct idx *x = ctx;

	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 1024;
		struct idx_ent *e = cap <= (1u << 22) ? realloc(x->e, cap * sizeof(*e)) : NULL;

		if (!e)
			return;
		x->e = e;
		x->cap = cap;
	}
	snprintf(x->e[x->n].name, sizeof(x->e[x->n].name), "%s", name);
	x->e[x->n].bytes = bytes;
	x->e[x->n++].samples = samples;
}

static int idx_cmp(const void *a, const void *b)
{
	return strcmp(((const struct idx_ent *)a)->name, ((const struct idx_ent *)b)->name);
}

static const struct idx_ent *idx_find(const struct idx *x, const char *name)
{
	struct idx_ent key;

	snprintf(key.name, sizeof(key.name), "%s", name);
	return x->n ? bsearch(&key, x->e, x->n, sizeof(*x->e), idx_cmp) : NULL;
}

/* the store's marks (dump --mark): "<UTC>-NAME" directories, as {name, at} */
static void put_marks(struct jbuf *b, int dirfd)
{
	int fd = openat(dirfd, STORE_MARKS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)) && n < STORE_MARKS_MAX) {
		struct tm tm = {0};
		const char *rest = strptime(de->d_name, "%Y%m%dT%H%M%SZ-", &tm);

		if (de->d_name[0] == '.' || !rest || !store_mark_name_ok(rest))
			continue;
		sv_jput(b, "%s{\"name\":", n++ ? "," : "");
		sv_jstr(b, rest);
		sv_jput(b, ",\"at\":%lld,\"dir\":", (long long)timegm(&tm));
		sv_jstr(b, de->d_name);
		sv_jput(b, "}");
	}
	closedir(d);
}

enum MHD_Result sv_segments(struct server *s, struct MHD_Connection *conn)
{
	const struct store_seg *segs;
	struct jbuf b = {0};
	struct store *st = NULL;
	char why[512], host[256];
	__u64 t0 = mono_ns(), pending = 0;
	struct idx ix = {0};
	size_t n;
	int err;

	if (gethostname(host, sizeof(host)))
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	if (!s->store) { /* --recordings alone */
		sv_jput(&b, "{\"store\":null,\"host\":");
		sv_jstr(&b, host);
		sv_jput(&b, ",\"now\":%llu,\"segments\":[],\"pending\":0,\"marks\":[]}\n",
		     (unsigned long long)time(NULL));
		return sv_answer_json(conn, &b);
	}
	err = store__open_reader(s->store, &st, why, sizeof(why));
	if (err)
		return sv_answer_fmt(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the store %s: %s\n",
				  s->store, why[0] ? why : strerror(-err));
	segs = store__segments(st, &n);
	/* the daemon's index gives most counts without reading a segment */
	if (!store__index_read(st, idx_add, &ix) && ix.n)
		qsort(ix.e, ix.n, sizeof(*ix.e), idx_cmp);
	sv_jput(&b, "{\"store\":");
	sv_jstr(&b, s->store);
	sv_jput(&b, ",\"host\":");
	sv_jstr(&b, host);
	sv_jput(&b, ",\"now\":%llu,\"segments\":[", (unsigned long long)time(NULL));
	for (size_t i = 0; i < n; i++) {
		const struct idx_ent *ie;
		struct seg_count c, *hit;
		bool known;

		pthread_mutex_lock(&s->lock);
		hit = count_find(s, &segs[i]);
		known = hit != NULL;
		if (hit)
			c = *hit;
		pthread_mutex_unlock(&s->lock);
		/* the index's line, when it is of this very file (not one cut short since) */
		if (!known && (ie = idx_find(&ix, segs[i].name)) && ie->bytes == segs[i].bytes) {
			memset(&c, 0, sizeof(c));
			memcpy(c.name, segs[i].name, sizeof(c.name));
			c.bytes = segs[i].bytes;
			c.samples = ie->samples;
			count_keep(s, &c, n);
			known = true;
		}
		if (!known && mono_ns() - t0 < COUNT_BUDGET_MS * 1000000ull) {
			count_segment(st, &segs[i], &c);
			count_keep(s, &c, n);
			known = true;
		}
		sv_jput(&b, "%s{\"start\":%llu,\"end\":%llu,\"bytes\":%llu,\"samples\":", i ? "," : "",
		     (unsigned long long)segs[i].start_s, (unsigned long long)segs[i].end_s,
		     (unsigned long long)segs[i].bytes);
		if (known && !c.bad)
			sv_jput(&b, "%llu}", (unsigned long long)c.samples);
		else
			sv_jput(&b, "null%s}", known ? ",\"unreadable\":true" : "");
		pending += !known;
	}
	sv_jput(&b, "],\"pending\":%llu,\"marks\":[", (unsigned long long)pending);
	put_marks(&b, store__dirfd(st));
	sv_jput(&b, "]}\n");
	store__free(st);
	free(ix.e);
	return sv_answer_json(conn, &b);
}

/* a saved recording of --recordings, as /api/recordings lists it */
struct rec_ent {
	char name[SQ_REC_LEN];
	__u64 bytes;
	__s64 mtime;
};

static int rec_newest_first(const void *a, const void *b)
{
	const struct rec_ent *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime > y->mtime ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * /api/recordings: the regular files of --recordings whose names report reads (never a
 * link, a directory or a device), newest first, RECS_MAX at most
 */
enum MHD_Result sv_recordings(struct server *s, struct MHD_Connection *conn)
{
	struct rec_ent *e = malloc(2 * RECS_MAX * sizeof(*e));
	struct jbuf b = {0};
	struct dirent *de;
	size_t n = 0, seen = 0;
	DIR *d = NULL;
	int fd = -1;

	if (!e)
		return sv_answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	if (s->recfd >= 0)
		fd = openat(s->recfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && !(d = fdopendir(fd)))
		close(fd);
	while (d && (de = readdir(d))) {
		struct stat st;

		if (!sq_rec_name_ok(de->d_name) ||
		    fstatat(s->recfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		seen++;
		if (n == 2 * RECS_MAX) { /* the newest RECS_MAX so far stay */
			qsort(e, n, sizeof(*e), rec_newest_first);
			n = RECS_MAX;
		}
		memcpy(e[n].name, de->d_name, strlen(de->d_name) + 1); /* checked: < SQ_REC_LEN */
		e[n].bytes = (__u64)st.st_size;
		e[n++].mtime = (__s64)st.st_mtime;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(e, n, sizeof(*e), rec_newest_first);
	sv_jput(&b, "{\"dir\":");
	if (s->recordings)
		sv_jstr(&b, s->recordings);
	else
		sv_jput(&b, "null");
	sv_jput(&b, ",\"total\":%zu,\"recordings\":[", seen);
	for (size_t i = 0; i < n && i < RECS_MAX; i++) {
		sv_jput(&b, "%s{\"name\":", i ? "," : "");
		sv_jstr(&b, e[i].name);
		sv_jput(&b, ",\"bytes\":%llu,\"mtime\":%lld}", (unsigned long long)e[i].bytes,
		     (long long)e[i].mtime);
	}
	sv_jput(&b, "]}\n");
	free(e);
	return sv_answer_json(conn, &b);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * serve.c: `jprof serve`, a web UI over the store and saved recordings: the page, the
 * segments, the recordings, ranges and recordings as report writes them.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve/serve.h"
#include "serve/query.h"
#include "clock.h"
#include "log.h"
#include "daemon/metrics.h"
#include "model/model.h"
#include "model/pprof_read.h"
#include "store/store.h"
#include "util/units.h"

#include "serve_ui_html.h" /* serve_ui_html[]: user/serve/ui.html (mk/serve.mk) */

#define CONN_MAX      16	 /* connections at once */
#define CONN_TIMEOUT  120	 /* s: an idle connection is closed */
#define CONN_MEM      (64 << 10) /* bytes a connection may take for its request */
#define CHILDREN_MAX  2		 /* report processes at once; more requests wait for one */
#define CHILD_WAIT_S  60	 /* a report that runs longer is killed */
#define CHILD_CPU_S   60	 /* RLIMIT_CPU of a report */
#define CHILD_MEM     (4ull << 30) /* RLIMIT_AS of a report */
#define OUT_MAX	      (512ull << 20) /* RLIMIT_FSIZE: the bytes one answer may have */
#define ERR_MAX	      2048	 /* bytes of a report's stderr shown in an error answer */
#define COUNT_BUDGET_MS 1000	 /* /api/segments reads uncounted segments this long at most */
#define TOKEN_LEN     32	 /* hex digits */
#define RECS_MAX      4096	 /* recordings /api/recordings lists (the newest) */

/* a segment's sample count, read once (by name and size: a name is never written twice) */
struct seg_count {
	char name[STORE_NAME_LEN];
	__u64 bytes, samples;
	bool bad; /* unreadable: counted as 0 */
};

struct server {
	struct MHD_Daemon *d;
	const char *exe, *store; /* store: NULL with --recordings alone */
	/*
	 * --recordings: the directory, opened once; reports read its files through
	 * /proc/<serve>/fd/<recfd>/NAME, the directory this fd holds whatever its path
	 * becomes (a rename of a parent cannot put another directory under it)
	 */
	const char *recordings;
	int recfd;
	char recpath[64];
	char token[TOKEN_LEN + 1];
	bool loopback;	     /* bound to a loopback address: the Host header must name it */
	char hosts[3][64]; /* "127.0.0.1:7070", "localhost:7070", "[::1]:7070" */
	sem_t children;
	pthread_mutex_t lock; /* counts */
	struct seg_count *counts;
	size_t ncounts, cap;
};

/* ---- answers ---- */

static enum MHD_Result answer_text(struct MHD_Connection *conn, unsigned int status,
				   const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	(void)MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		(void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result answer_fmt(struct MHD_Connection *conn, unsigned int status,
				  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static enum MHD_Result answer_fmt(struct MHD_Connection *conn, unsigned int status,
				  const char *fmt, ...)
{
	char buf[ERR_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return answer_text(conn, status, buf);
}

/* a page of ours: inline script and style only, framed by ourselves only */
#define CSP                                                                                    \
	"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "          \
	"img-src data:; connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; "        \
	"base-uri 'none'; form-action 'none'"

/* fd (a memfd of size bytes) as the answer; MHD closes it */
static enum MHD_Result answer_fd(struct MHD_Connection *conn, int fd, enum sq_format f,
				 const char *name)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char disp[128];
	struct stat st;

	if (fstat(fd, &st) || lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "the answer was lost\n");
	}
	r = MHD_create_response_from_fd((uint64_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, sq_content_type(f));
	(void)MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (f == SQ_HTML) {
		(void)MHD_add_response_header(r, "Content-Security-Policy", CSP);
	} else if (f != SQ_FOLDED && f != SQ_TOP) {
		snprintf(disp, sizeof(disp), "attachment; filename=\"%s.%s\"", name,
			 sq_extension(f));
		(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
	}
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- report children ---- */

/* a report's stderr: its last line, without the "jprof: error: " it starts with */
static void tidy_why(char *why)
{
	size_t n = strlen(why);
	char *last;

	while (n && (why[n - 1] == '\n' || why[n - 1] == '\r'))
		why[--n] = '\0';
	last = strrchr(why, '\n');
	last = last ? last + 1 : why;
	if (!strncmp(last, "jprof: error: ", 14))
		last += 14;
	else if (!strncmp(last, "jprof: ", 7))
		last += 7;
	memmove(why, last, strlen(last) + 1);
}

/*
 * Runs `exe argv...` with stdout into out_fd, stderr into err_fd, every other fd closed,
 * bounded in CPU, memory, output and wall time. 0 when it exited 0; else 1 and why (its
 * stderr's end, or how it ended).
 */
static int run_child(struct server *s, char **argv, int out_fd, int err_fd, char *why,
		     size_t why_len)
{
	__u64 t0 = mono_ns();
	int status = 0, devnull;
	pid_t pid, w;

	why[0] = '\0';
	sem_wait(&s->children);
	pid = fork();
	if (pid == 0) {
		struct rlimit cpu = {CHILD_CPU_S, CHILD_CPU_S + 1}, as = {CHILD_MEM, CHILD_MEM},
			      fsz = {OUT_MAX, OUT_MAX};

		/* async-signal-safe calls only until the exec: this process has threads */
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 ||
		    dup2(err_fd, 2) < 0)
			_exit(126);
		(void)close_range(3, ~0u, 0);
		if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_AS, &as) ||
		    setrlimit(RLIMIT_FSIZE, &fsz))
			_exit(126);
		execv(s->exe, argv);
		_exit(127);
	}
	if (pid < 0) {
		sem_post(&s->children);
		snprintf(why, why_len, "cannot start a report: %s", strerror(errno));
		return 1;
	}
	for (;;) {
		struct timespec nap = {0, 10 * 1000 * 1000};

		w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (mono_ns() - t0 > CHILD_WAIT_S * 1000000000ull) {
			kill(pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			snprintf(why, why_len, "the report took longer than %d s and was stopped",
				 CHILD_WAIT_S);
			sem_post(&s->children);
			return 1;
		}
		nanosleep(&nap, NULL);
	}
	sem_post(&s->children);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ)
		snprintf(why, why_len, "the answer would be larger than %llu MiB",
			 (unsigned long long)(OUT_MAX >> 20));
	else if (WIFSIGNALED(status))
		snprintf(why, why_len, "the report ended by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	if (!why[0]) { /* its own words: the end of its stderr */
		off_t end = lseek(err_fd, 0, SEEK_END);
		off_t from = end > (off_t)why_len - 1 ? end - (off_t)why_len + 1 : 0;
		ssize_t n = end > 0 ? pread(err_fd, why, (size_t)(end - from), from) : 0;

		why[n > 0 ? n : 0] = '\0';
		tidy_why(why);
		if (!why[0])
			snprintf(why, why_len, "the report failed (exit status %d)",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	return 1;
}

static int new_memfd(const char *name)
{
	return memfd_create(name, MFD_CLOEXEC);
}

/* the status of a report that failed: nothing in the range is 404, the rest 500 */
static unsigned int fail_status(const char *why)
{
	return strstr(why, "no segment") || strstr(why, "no readable segment") ||
			       strstr(why, "match nothing") || strstr(why, "matched nothing") ||
			       strstr(why, "No such file")
		       ? MHD_HTTP_NOT_FOUND
		       : MHD_HTTP_INTERNAL_SERVER_ERROR;
}

static const char *lookup_arg(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static bool rec_is_file(const struct server *s, const char *name)
{
	struct stat st;

	return !fstatat(s->recfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
}

/*
 * /api/profile (one range, or rec) and /api/diff (two: report --store's own diff,
 * --base-since and --base-until; or rec against base_rec): the request checked, one report
 * child, its output as the answer
 */
static enum MHD_Result do_report(struct server *s, struct MHD_Connection *conn,
				 enum sq_kind kind)
{
	char bufs[10][SQ_ARG_LEN], *argv[SQ_MAX_ARGS + 14], why[ERR_MAX], name[96];
	struct sq_request *r = malloc(sizeof(*r));
	int out = -1, err = -1, n;
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (sq_parse(kind, lookup_arg, conn, r, why, sizeof(why))) {
		ret = answer_fmt(conn, MHD_HTTP_BAD_REQUEST, "%s\n", why);
		goto out;
	}
	if (r->rec[0] ? s->recfd < 0 : !s->store) {
		ret = answer_text(conn, MHD_HTTP_NOT_FOUND,
				  r->rec[0] ? "this server has no --recordings\n"
					    : "this server has no --store\n");
		goto out;
	}
	/* what the list shows: a regular file, never a link the report would follow */
	if (r->rec[0] && (!rec_is_file(s, r->rec) || (kind == SQ_DIFF && !rec_is_file(s, r->base_rec)))) {
		ret = answer_fmt(conn, MHD_HTTP_NOT_FOUND, "no recording %s in %s\n",
				 rec_is_file(s, r->rec) ? r->base_rec : r->rec, s->recordings);
		goto out;
	}
	n = sq_report_argv(r, s->exe, r->rec[0] ? s->recpath : s->store, r->since_s, r->until_s,
			   -1, bufs, 8, argv, SQ_MAX_ARGS + 12);
	if (n < 0) {
		ret = answer_text(conn, MHD_HTTP_BAD_REQUEST, "too many parameters\n");
		goto out;
	}
	if (kind == SQ_DIFF && !r->rec[0]) {
		snprintf(bufs[8], SQ_ARG_LEN, "--base-since=@%llu",
			 (unsigned long long)r->base_since_s);
		snprintf(bufs[9], SQ_ARG_LEN, "--base-until=@%llu",
			 (unsigned long long)r->base_until_s);
		argv[n++] = bufs[8];
		argv[n++] = bufs[9];
		argv[n] = NULL;
	}
	out = new_memfd("jprof-serve-out");
	err = new_memfd("jprof-serve-err");
	if (out < 0 || err < 0) {
		ret = answer_fmt(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s\n", strerror(errno));
		goto out;
	}
	if (run_child(s, argv, out, err, why, sizeof(why))) {
		ret = answer_fmt(conn, fail_status(why), "%s\n", why);
		goto out;
	}
	if (r->rec[0])
		snprintf(name, sizeof(name), "%s%.*s", kind == SQ_DIFF ? "diff-" : "",
			 (int)strcspn(r->rec, "."), r->rec);
	else
		snprintf(name, sizeof(name), "jprof-%s%llu-%llu", kind == SQ_DIFF ? "diff-" : "",
			 (unsigned long long)r->since_s, (unsigned long long)r->until_s);
	ret = answer_fd(conn, out, r->format, name);
	out = -1; /* MHD's now */
out:
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	free(r);
	return ret;
}

/* ---- the segments ---- */

struct jbuf {
	char *p;
	size_t n, cap;
	bool failed;
};

static void jput(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jput(struct jbuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		if (b->failed)
			return;
		va_start(ap, fmt);
		k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (k >= 0 && (size_t)k < b->cap - b->n) {
			b->n += (size_t)k;
			return;
		}
		{
			size_t cap = b->cap ? b->cap * 2 : 4096;
			char *p = k < 0 ? NULL : realloc(b->p, cap);

			if (!p) {
				b->failed = true;
				return;
			}
			b->p = p;
			b->cap = cap;
		}
	}
}

/* a JSON string of ours (store path, host): escaped */
static void jstr(struct jbuf *b, const char *s)
{
	jput(b, "\"");
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			jput(b, "\\%c", *c);
		else if (*c < 0x20 || *c >= 0x7f)
			jput(b, "\\u%04x", *c);
		else
			jput(b, "%c", *c);
	}
	jput(b, "\"");
}

/* b (JSON) as the answer; frees it */
static enum MHD_Result answer_json(struct MHD_Connection *conn, struct jbuf *b)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (b->failed) {
		free(b->p);
		return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	r = MHD_create_response_from_buffer(b->n, b->p, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(b->p);
		return MHD_NO;
	}
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	(void)MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

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
		jput(b, "%s{\"name\":", n++ ? "," : "");
		jstr(b, rest);
		jput(b, ",\"at\":%lld,\"dir\":", (long long)timegm(&tm));
		jstr(b, de->d_name);
		jput(b, "}");
	}
	closedir(d);
}

static enum MHD_Result do_segments(struct server *s, struct MHD_Connection *conn)
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
		jput(&b, "{\"store\":null,\"host\":");
		jstr(&b, host);
		jput(&b, ",\"now\":%llu,\"segments\":[],\"pending\":0,\"marks\":[]}\n",
		     (unsigned long long)time(NULL));
		return answer_json(conn, &b);
	}
	err = store__open_reader(s->store, &st, why, sizeof(why));
	if (err)
		return answer_fmt(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the store %s: %s\n",
				  s->store, why[0] ? why : strerror(-err));
	segs = store__segments(st, &n);
	/* the daemon's index gives most counts without reading a segment */
	if (!store__index_read(st, idx_add, &ix) && ix.n)
		qsort(ix.e, ix.n, sizeof(*ix.e), idx_cmp);
	jput(&b, "{\"store\":");
	jstr(&b, s->store);
	jput(&b, ",\"host\":");
	jstr(&b, host);
	jput(&b, ",\"now\":%llu,\"segments\":[", (unsigned long long)time(NULL));
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
		jput(&b, "%s{\"start\":%llu,\"end\":%llu,\"bytes\":%llu,\"samples\":", i ? "," : "",
		     (unsigned long long)segs[i].start_s, (unsigned long long)segs[i].end_s,
		     (unsigned long long)segs[i].bytes);
		if (known && !c.bad)
			jput(&b, "%llu}", (unsigned long long)c.samples);
		else
			jput(&b, "null%s}", known ? ",\"unreadable\":true" : "");
		pending += !known;
	}
	jput(&b, "],\"pending\":%llu,\"marks\":[", (unsigned long long)pending);
	put_marks(&b, store__dirfd(st));
	jput(&b, "]}\n");
	store__free(st);
	free(ix.e);
	return answer_json(conn, &b);
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
static enum MHD_Result do_recordings(struct server *s, struct MHD_Connection *conn)
{
	struct rec_ent *e = malloc(2 * RECS_MAX * sizeof(*e));
	struct jbuf b = {0};
	struct dirent *de;
	size_t n = 0, seen = 0;
	DIR *d = NULL;
	int fd = -1;

	if (!e)
		return answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
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
	jput(&b, "{\"dir\":");
	if (s->recordings)
		jstr(&b, s->recordings);
	else
		jput(&b, "null");
	jput(&b, ",\"total\":%zu,\"recordings\":[", seen);
	for (size_t i = 0; i < n && i < RECS_MAX; i++) {
		jput(&b, "%s{\"name\":", i ? "," : "");
		jstr(&b, e[i].name);
		jput(&b, ",\"bytes\":%llu,\"mtime\":%lld}", (unsigned long long)e[i].bytes,
		     (long long)e[i].mtime);
	}
	jput(&b, "]}\n");
	free(e);
	return answer_json(conn, &b);
}

static enum MHD_Result do_page(struct MHD_Connection *conn)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		sizeof(serve_ui_html), (void *)serve_ui_html, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
	(void)MHD_add_response_header(r, "Content-Security-Policy", CSP);
	(void)MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- who may ask ---- */

/* the token from the query, "Authorization: Bearer", or the cookie the page set */
static bool token_ok(struct server *s, struct MHD_Connection *conn, bool *from_query)
{
	const char *q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	const char *c = MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "jprof_token");

	*from_query = false;
	if (q && sq_token_equal(q, s->token))
		return *from_query = true;
	if (a && !strncmp(a, "Bearer ", 7) && sq_token_equal(a + 7, s->token))
		return true;
	return c && sq_token_equal(c, s->token);
}

static bool host_ok(struct server *s, struct MHD_Connection *conn)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

	if (!s->loopback) /* any name of this host: the token is the gate */
		return true;
	if (!h)
		return false;
	for (size_t i = 0; i < sizeof(s->hosts) / sizeof(s->hosts[0]); i++)
		if (!strcmp(h, s->hosts[i]))
			return true;
	return false;
}

/* ?token=... on the page: a cookie instead, and the token out of the address bar */
static enum MHD_Result redirect_with_cookie(struct server *s, struct MHD_Connection *conn)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
								 MHD_RESPMEM_PERSISTENT);
	char cookie[TOKEN_LEN + 96];
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	snprintf(cookie, sizeof(cookie), "jprof_token=%s; Path=/; HttpOnly; SameSite=Strict",
		 s->token);
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_SET_COOKIE, cookie);
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, "/");
	(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(conn, MHD_HTTP_SEE_OTHER, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct server *s = cls;
	bool from_query;
	const char *cl;

	(void)version;
	(void)upload;
	if (*upload_size) { /* a body is never read */
		*upload_size = 0;
		if (*con_cls)
			return MHD_YES;
		*con_cls = conn;
		return answer_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no request body\n");
	}
	if (*con_cls)
		return MHD_YES;
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return answer_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
	    ((cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					       MHD_HTTP_HEADER_CONTENT_LENGTH)) &&
	     strcmp(cl, "0")))
		return answer_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no request body\n");
	if (!host_ok(s, conn))
		return answer_text(conn, MHD_HTTP_MISDIRECTED_REQUEST,
				   "the Host header does not name this server\n");
	if (!token_ok(s, conn, &from_query))
		return answer_text(conn, MHD_HTTP_FORBIDDEN,
				   "this needs the token jprof serve printed: open the address it "
				   "printed, or send Authorization: Bearer TOKEN\n");
	if (!strcmp(url, "/"))
		return from_query ? redirect_with_cookie(s, conn) : do_page(conn);
	if (!strcmp(url, "/api/segments"))
		return do_segments(s, conn);
	if (!strcmp(url, "/api/recordings"))
		return do_recordings(s, conn);
	if (!strcmp(url, "/api/profile"))
		return do_report(s, conn, SQ_PROFILE);
	if (!strcmp(url, "/api/diff"))
		return do_report(s, conn, SQ_DIFF);
	return answer_text(conn, MHD_HTTP_NOT_FOUND, "not here: /, /api/segments, "
						     "/api/recordings, /api/profile, /api/diff\n");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

/* the token: --token-file's first line, or 16 random bytes in hex */
static int make_token(const struct jp_opts *o, char *tok)
{
	unsigned char raw[TOKEN_LEN / 2];

	if (o->token_file) {
		char line[TOKEN_LEN * 4];
		struct stat st;
		size_t n;
		int fd = open(o->token_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		ssize_t k;

		if (fd < 0) {
			pr_err("--token-file %s: %s", o->token_file, strerror(errno));
			return -1;
		}
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    (st.st_mode & 077)) {
			close(fd);
			pr_err("--token-file %s: must be a regular file of yours that only you can "
			       "read (chmod 600)",
			       o->token_file);
			return -1;
		}
		k = read(fd, line, sizeof(line) - 1);
		close(fd);
		line[k > 0 ? k : 0] = '\0';
		n = strcspn(line, "\r\n");
		line[n] = '\0';
		if (n < 16 || n > TOKEN_LEN || strspn(line, "0123456789abcdefghijklmnopqrstuvwxyz"
							"ABCDEFGHIJKLMNOPQRSTUVWXYZ-_") != n) {
			pr_err("--token-file %s: the token must be 16 to %d letters, digits, '-' or "
			       "'_'",
			       o->token_file, TOKEN_LEN);
			return -1;
		}
		memcpy(tok, line, n + 1);
		return 0;
	}
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		pr_err("no random bytes for the token: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(tok + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

/*
 * --recordings DIR: a directory of the user serve runs as (or root's) that no one else can
 * write, so every name in it is one that user put there; opened once (see struct server)
 */
static int open_recordings(struct server *s)
{
	struct stat st;

	s->recfd = open(s->recordings, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->recfd < 0) {
		pr_err("--recordings %s: %s", s->recordings, strerror(errno));
		return -1;
	}
	if (fstat(s->recfd, &st) || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & 022)) {
		pr_err("--recordings %s: must be a directory of yours that no other user can write "
		       "(another could put there a link to a file you may read and they may not)",
		       s->recordings);
		close(s->recfd);
		s->recfd = -1;
		return -1;
	}
	snprintf(s->recpath, sizeof(s->recpath), "/proc/%d/fd/%d", (int)getpid(), s->recfd);
	return 0;
}

int serve_run(const struct jp_opts *o, const char *self_exe)
{
	const char *addr = o->listen ? o->listen : SERVE_DEFAULT_ADDR;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_POLL | MHD_USE_ERROR_LOG;
	struct server s = {.exe = self_exe, .store = o->store, .recordings = o->recordings,
			   .recfd = -1};
	struct sockaddr_in6 sa;
	struct store *st = NULL;
	char why[512], shown[128];
	sigset_t set;
	size_t sa_len;
	unsigned int port;
	int err, sig;

	if (metrics_parse_addr(addr, &sa, sizeof(sa), &sa_len)) {
		pr_err("--listen: '%s' is not ADDR:PORT or PORT", addr);
		return JP_EXIT_USAGE;
	}
	if (s.store) {
		err = store__open_reader(s.store, &st, why, sizeof(why));
		if (err) {
			pr_err("cannot read the store %s: %s", s.store,
			       why[0] ? why : strerror(-err));
			return JP_EXIT_FAILURE;
		}
		store__free(st);
	}
	if (s.recordings && open_recordings(&s))
		return JP_EXIT_FAILURE;
	if (make_token(o, s.token))
		return JP_EXIT_USAGE;
	if (sa.sin6_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
		port = ntohs(sa.sin6_port);
		s.loopback = IN6_IS_ADDR_LOOPBACK(&sa.sin6_addr);
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&sa;

		port = ntohs(s4->sin_port);
		s.loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	}
	snprintf(s.hosts[0], sizeof(s.hosts[0]), "127.0.0.1:%u", port);
	snprintf(s.hosts[1], sizeof(s.hosts[1]), "localhost:%u", port);
	snprintf(s.hosts[2], sizeof(s.hosts[2]), "[::1]:%u", port);
	sem_init(&s.children, 0, CHILDREN_MAX);
	pthread_mutex_init(&s.lock, NULL);
	/* the signals that end us are taken by sigwait; no thread of MHD's gets them */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	errno = 0;
	s.d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &s, MHD_OPTION_SOCK_ADDR, &sa,
			       MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONN_MAX,
			       MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONN_TIMEOUT,
			       MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEM,
			       MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!s.d) {
		pr_err("cannot listen on %s: %s", addr, strerror(errno ? errno : EADDRINUSE));
		if (s.recfd >= 0)
			close(s.recfd);
		pthread_mutex_destroy(&s.lock);
		sem_destroy(&s.children);
		return JP_EXIT_FAILURE;
	}
	snprintf(shown, sizeof(shown), "%s", s.loopback ? s.hosts[0] : addr);
	pr_info("serving %s%s%s at http://%s/?token=%s (Ctrl-C ends)", s.store ? s.store : "",
		s.store && s.recordings ? " and " : "", s.recordings ? s.recordings : "", shown,
		s.token);
	fflush(stderr);
	do {
		if (sigwait(&set, &sig))
			sig = SIGTERM;
	} while (sig != SIGINT && sig != SIGTERM);
	MHD_stop_daemon(s.d);
	pr_info("%s: stopped", strsignal(sig));
	pthread_mutex_destroy(&s.lock);
	sem_destroy(&s.children);
	free(s.counts);
	if (s.recfd >= 0)
		close(s.recfd);
	return JP_EXIT_OK;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * push.c: the store's segments sent to Grafana Pyroscope and to an OTLP receiver, each target
 * in order and once, by one thread of our own.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zlib.h>

#include "push.h"
#include "otlp.h"
#include "log.h"
#include "store/store.h"
#include "util/why.h"

#define PUSH_DIR "push"
/*
 * At the daemon's stop a request under way may finish for this long: cut short, the server
 * may have taken a segment whose answer never came, and the next start would send it again
 */
#define STOP_GRACE_NS (800ull * 1000 * 1000) /* under the 1 s a SIGTERM may take */

/* one server the segments go to; its cursor and backoff are its own */
struct target {
	enum push_kind kind;
	char *url;
	struct push_stats st; /* under the pusher's lock */
	__u64 cursor;	      /* end of the last segment taken (or skipped for good) */
	unsigned int wait_s;  /* the backoff now; 0: none */
	__u64 next_ns;	      /* the next pass, not before (CLOCK_MONOTONIC) */
};

struct pusher {
	pthread_t th;
	pthread_mutex_t lock; /* targets' st, stop, kick, rate_hz */
	pthread_cond_t cond;
	bool stop, kick, started;
	__u64 stop_ns; /* when stop was asked (CLOCK_MONOTONIC) */
	char *dir, *app, *host;
	unsigned int rate_hz;
	struct target t[PUSH_KIND_MAX];
	size_t nt;
};

const char *push_kind_name(enum push_kind k)
{
	return k == PUSH_OTLP ? "otlp" : k == PUSH_PARCA ? "parca" : "pyroscope";
}

int push_url_ok(const char *url)
{
	size_t n = strlen(url);

	if ((strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) || n >= PUSH_URL_MAX ||
	    n <= 8 || strpbrk(url, "?# \t\r\n"))
		return -EINVAL;
	return 0;
}

/* RFC 3986 unreserved bytes as they are, every other byte %XX */
static int escape(const char *s, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    *c == '-' || *c == '.' || *c == '_' || *c == '~') {
			if (n + 1 >= len)
				return -ENOSPC;
			out[n++] = (char)*c;
		} else {
			if (n + 3 >= len)
				return -ENOSPC;
			out[n++] = '%';
			out[n++] = hex[*c >> 4];
			out[n++] = hex[*c & 15];
		}
	}
	out[n] = '\0';
	return (int)n;
}

int push_ingest_url(const char *base, const char *app, __u64 from_s, __u64 until_s,
		    unsigned int rate_hz, char *buf, size_t len)
{
	char name[3 * 256 + 1];
	size_t b = strlen(base);
	int n;

	while (b && base[b - 1] == '/')
		b--;
	if (strlen(app) > 256 || escape(app, name, sizeof(name)) < 0)
		return -ENOSPC;
	n = snprintf(buf, len,
		     "%.*s/ingest?name=%s&from=%llu&until=%llu&format=pprof&spyName=jprof"
		     "&sampleRate=%u",
		     (int)b, base, name, (unsigned long long)from_s, (unsigned long long)until_s,
		     rate_hz ? rate_hz : 99);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

int push_otlp_url(const char *base, char *buf, size_t len)
{
	size_t b = strlen(base);
	int n;

	while (b && base[b - 1] == '/')
		b--;
	n = snprintf(buf, len, "%.*s/v1development/profiles", (int)b, base);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

int push_parca_url(const char *base, char *buf, size_t len)
{
	size_t b = strlen(base);
	int n;

	while (b && base[b - 1] == '/')
		b--;
	n = snprintf(buf, len, "%.*s/profiles/writeraw", (int)b, base);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

#define ADD_LIT(b, lit) bytebuf_add(b, lit, sizeof(lit) - 1)

/* s[0..n) as the inside of a JSON string */
static void json_str(struct bytebuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			bytebuf_u8(b, '\\');
			bytebuf_u8(b, c);
		} else if (c < 0x20 || c == 0x7f) {
			char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};

			bytebuf_add(b, u, sizeof(u));
		} else {
			bytebuf_u8(b, c);
		}
	}
}

static void json_label(struct bytebuf *b, bool first, const char *k, size_t kn, const char *v,
		       size_t vn)
{
	if (!first)
		ADD_LIT(b, ",");
	ADD_LIT(b, "{\"name\":\"");
	json_str(b, k, kn);
	ADD_LIT(b, "\",\"value\":\"");
	json_str(b, v, vn);
	ADD_LIT(b, "\"}");
}

int push_parca_body(const char *app, const void *pprof, size_t len, struct bytebuf *out)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = pprof;
	const char *brace = strchr(app, '{');
	size_t name_n = brace ? (size_t)(brace - app) : strlen(app);

	bytebuf_reserve(out, 128 + strlen(app) * 2 + (len + 2) / 3 * 4);
	ADD_LIT(out, "{\"series\":[{\"labels\":{\"labels\":[");
	json_label(out, true, "__name__", 8, app, name_n);
	if (brace) { /* k=v,k=v} */
		const char *q = brace + 1, *end = strchr(q, '}');

		if (!end)
			end = q + strlen(q);
		while (q < end) {
			const char *comma = memchr(q, ',', (size_t)(end - q)), *eq;

			if (!comma)
				comma = end;
			eq = memchr(q, '=', (size_t)(comma - q));
			if (eq && eq > q)
				json_label(out, false, q, (size_t)(eq - q), eq + 1,
					   (size_t)(comma - eq - 1));
			q = comma + 1;
		}
	}
	ADD_LIT(out, "]},\"samples\":[{\"rawProfile\":\"");
	for (size_t i = 0; i < len; i += 3) {
		__u32 v = (__u32)p[i] << 16 | (i + 1 < len ? (__u32)p[i + 1] << 8 : 0) |
			  (i + 2 < len ? p[i + 2] : 0);
		char q[4] = {b64[v >> 18 & 63], b64[v >> 12 & 63],
			     i + 1 < len ? b64[v >> 6 & 63] : '=', i + 2 < len ? b64[v & 63] : '='};

		bytebuf_add(out, q, 4);
	}
	ADD_LIT(out, "\"}]}],\"normalized\":true}");
	return out->err;
}

/* ---- the cursor ---- */

static int push_dirfd(const char *dir)
{
	char path[4096];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, PUSH_DIR) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static __u64 read_cursor(const char *dir, enum push_kind k)
{
	char buf[32] = "", name[64];
	int dfd = push_dirfd(dir), fd;
	ssize_t n = 0;

	if (dfd < 0)
		return 0;
	snprintf(name, sizeof(name), "%s.cursor", push_kind_name(k));
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	close(dfd);
	buf[n > 0 ? n : 0] = '\0';
	return strtoull(buf, NULL, 10);
}

/* the new cursor: a temporary file, synced, renamed over the old one */
static int write_cursor(const char *dir, enum push_kind k, __u64 end_s)
{
	char buf[32], name[64], tmp[80];
	int dfd = push_dirfd(dir), fd, n, err = 0;

	if (dfd < 0)
		return dfd;
	snprintf(name, sizeof(name), "%s.cursor", push_kind_name(k));
	snprintf(tmp, sizeof(tmp), ".tmp-%s", name);
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)end_s);
	if (write(fd, buf, (size_t)n) != n || fsync(fd))
		err = -EIO;
	close(fd);
	if (!err && renameat(dfd, tmp, dfd, name))
		err = -errno;
out:
	close(dfd);
	return err;
}

/* ---- one request ---- */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* the daemon stops: true at once (no new request), or past the grace (cut this one short) */
static bool stopping(struct pusher *p, bool grace_over)
{
	bool stop;

	pthread_mutex_lock(&p->lock);
	stop = p->stop && (!grace_over || now_ns() - p->stop_ns > STOP_GRACE_NS);
	pthread_mutex_unlock(&p->lock);
	return stop;
}

static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return stopping(ctx, true); /* non-zero: curl gives up now */
}

static size_t on_body(char *ptr, size_t size, size_t n, void *ctx)
{
	(void)ptr;
	(void)ctx;
	return size * n; /* the server's answer body is not kept */
}

/* 0 taken, 1 refused for good, -1 to be tried again (why set) */
static int post(struct pusher *p, const struct target *t, const struct store_seg *seg,
		const char *body, size_t len, char *why, size_t why_len)
{
	static const char *const types[PUSH_KIND_MAX] = {
		[PUSH_PYROSCOPE] = "Content-Type: binary/octet-stream",
		[PUSH_OTLP] = "Content-Type: application/x-protobuf",
		[PUSH_PARCA] = "Content-Type: application/json",
	};
	struct curl_slist *h = curl_slist_append(NULL, types[t->kind]);
	char url[PUSH_URL_MAX + 1024];
	long code = 0;
	CURLcode rc;
	CURL *c;
	unsigned int rate_hz;
	int n;

	if (h && t->kind == PUSH_OTLP) /* send_seg gzip'ed it */
		h = curl_slist_append(h, "Content-Encoding: gzip");

	pthread_mutex_lock(&p->lock);
	rate_hz = p->rate_hz;
	pthread_mutex_unlock(&p->lock);
	if (t->kind == PUSH_OTLP)
		n = push_otlp_url(t->url, url, sizeof(url));
	else if (t->kind == PUSH_PARCA)
		n = push_parca_url(t->url, url, sizeof(url));
	else
		n = push_ingest_url(t->url, p->app, seg->start_s, seg->end_s, rate_hz, url,
				    sizeof(url));
	if (n < 0) {
		curl_slist_free_all(h);
		snprintf(why, why_len, "the address is too long");
		return 1;
	}
	c = curl_easy_init();
	if (!c || !h) {
		curl_slist_free_all(h);
		if (c)
			curl_easy_cleanup(c);
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)PUSH_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "jprof");
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	if (rc != CURLE_OK) {
		snprintf(why, why_len, "%s", curl_easy_strerror(rc));
		return -1;
	}
	if (code >= 200 && code < 300)
		return 0;
	snprintf(why, why_len, "the server answered %ld", code);
	/* OTLP/HTTP and Pyroscope alike: 408, 429 and 5xx are tried again, other 4xx are not */
	return code >= 400 && code < 500 && code != 408 && code != 429 ? 1 : -1;
}

/* in[0..n) gzip'ed into out, in one call (deflateBound's room); 0, -ENOMEM, -EFBIG, -EIO */
static int gzip_buf(const unsigned char *in, size_t n, struct bytebuf *out)
{
	z_stream z;
	int zr;

	if (n > (1u << 30)) /* deflate's counts are 32 bits; no segment comes near */
		return -EFBIG;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16 /* gzip wrapper */, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	bytebuf_reserve(out, deflateBound(&z, (uLong)n));
	if (out->err) {
		deflateEnd(&z);
		return out->err;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = out->p + out->n;
	z.avail_out = (uInt)(out->cap - out->n);
	zr = deflate(&z, Z_FINISH);
	out->n += z.total_out;
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

/* segment seg (its pprof in buf) as target t sends it: 0, 1 refused for good (why) */
static int send_seg(struct pusher *p, const struct target *t, const struct store_seg *seg,
		    const char *buf, size_t len, size_t *ret_sent, char *why, size_t why_len)
{
	struct bytebuf body = {0};
	int r;

	*ret_sent = len;
	if (t->kind == PUSH_PYROSCOPE)
		return post(p, t, seg, buf, len, why, why_len);
	if (t->kind == PUSH_PARCA && push_parca_body(p->app, buf, len, &body)) {
		bytebuf_free(&body);
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	if (t->kind == PUSH_OTLP) {
		struct bytebuf gz = {0};

		if (otlp_from_pprof(buf, len, p->host, &body, why, why_len)) {
			bytebuf_free(&body);
			return 1; /* a segment we cannot read as a profile: counted as refused */
		}
		/* OTLP/HTTP's Content-Encoding: gzip: a 10 s host-wide profile's 181 KB became 61 KB */
		r = gzip_buf(body.p, body.n, &gz);
		bytebuf_free(&body);
		if (r) {
			bytebuf_free(&gz);
			snprintf(why, why_len, "gzip: %s", strerror(-r));
			return r == -EFBIG ? 1 : -1;
		}
		body = gz;
	}
	*ret_sent = body.n;
	r = post(p, t, seg, (const char *)body.p, body.n, why, why_len);
	bytebuf_free(&body);
	return r;
}

/* ---- the thread ---- */

/* one pass of target t over the store: what waits is sent in order until one fails; 0, or -1 */
static int push_pass(struct pusher *p, struct target *t)
{
	const struct store_seg *segs;
	struct store *s = NULL;
	char why[128];
	size_t n, waiting = 0;
	int ret = 0;

	if (store__open_reader(p->dir, &s, why, sizeof(why))) {
		pthread_mutex_lock(&p->lock);
		snprintf(t->st.last_error, sizeof(t->st.last_error), "the store: %s", why);
		pthread_mutex_unlock(&p->lock);
		return -1;
	}
	segs = store__segments(s, &n);
	for (size_t i = 0; i < n; i++)
		waiting += segs[i].end_s > t->cursor;
	pthread_mutex_lock(&p->lock);
	t->st.backlog = waiting;
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < n; i++) {
		char *buf = NULL;
		size_t len = 0, sent = 0;
		int r;

		if (segs[i].end_s <= t->cursor)
			continue;
		if (t->cursor && segs[i].start_s > t->cursor) {
			/* the limits removed what came between: counted, in seconds */
			pthread_mutex_lock(&p->lock);
			t->st.expired += segs[i].start_s - t->cursor;
			pthread_mutex_unlock(&p->lock);
		}
		r = store__read(s, &segs[i], STORE_READ_MAX, &buf, &len);
		if (r == -ENOENT) { /* the limits removed it since the listing */
			pthread_mutex_lock(&p->lock);
			t->st.expired += segs[i].end_s - segs[i].start_s;
			pthread_mutex_unlock(&p->lock);
			t->cursor = segs[i].end_s;
			continue;
		}
		if (r) {
			r = 1; /* unreadable (too large, I/O): skipped, counted as refused */
			snprintf(why, sizeof(why), "%s could not be read", segs[i].name);
		} else {
			r = send_seg(p, t, &segs[i], buf, len, &sent, why, sizeof(why));
		}
		free(buf);
		pthread_mutex_lock(&p->lock);
		if (r < 0) {
			t->st.failed++;
			snprintf(t->st.last_error, sizeof(t->st.last_error), "%s", why);
		} else {
			t->st.sent += !r;
			t->st.sent_bytes += r ? 0 : sent;
			t->st.rejected += r;
			if (r)
				snprintf(t->st.last_error, sizeof(t->st.last_error),
					 "%s refused for good: %s", segs[i].name, why);
			t->st.backlog -= t->st.backlog > 0;
		}
		pthread_mutex_unlock(&p->lock);
		if (r < 0) {
			ret = -1;
			break;
		}
		t->cursor = segs[i].end_s;
		(void)write_cursor(p->dir, t->kind, t->cursor);
		pthread_mutex_lock(&p->lock);
		t->st.last_sent_end_s = t->cursor;
		pthread_mutex_unlock(&p->lock);
		if (stopping(p, false)) /* the rest at the next start */
			break;
	}
	store__free(s);
	return ret;
}

static void *push_main(void *arg)
{
	struct pusher *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec until;
		__u64 now = now_ns(), wake = now + 1000000000ull;
		bool kicked = p->kick;

		p->kick = false;
		/* each target whose time has come (a kick: each that is not backing off) */
		for (size_t i = 0; i < p->nt && !p->stop; i++) {
			struct target *t = &p->t[i];
			bool failed;

			if (now < t->next_ns && !(kicked && !t->wait_s))
				continue;
			pthread_mutex_unlock(&p->lock);
			failed = push_pass(p, t) < 0;
			pthread_mutex_lock(&p->lock);
			if (failed)
				t->wait_s = t->wait_s ? (t->wait_s * 2 > PUSH_BACKOFF_MAX_S
								 ? PUSH_BACKOFF_MAX_S
								 : t->wait_s * 2)
						      : 1;
			else
				t->wait_s = 0;
			t->next_ns = now_ns() + (__u64)(t->wait_s ? t->wait_s : 1) * 1000000000ull;
		}
		for (size_t i = 0; i < p->nt; i++)
			if (p->t[i].next_ns < wake)
				wake = p->t[i].next_ns;
		now = now_ns();
		if (wake <= now)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)((wake - now) / 1000000000ull);
		until.tv_nsec += (long)((wake - now) % 1000000000ull);
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		/* a kick (a segment written) wakes the thread; targets backing off still wait */
		while (!p->stop && !p->kick &&
		       pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void pusher_free_fields(struct pusher *p)
{
	for (size_t i = 0; i < p->nt; i++)
		free(p->t[i].url);
	free(p->dir);
	free(p->app);
	free(p->host);
	free(p);
}

int pusher__start(const char *dir, const struct push_conf *c, struct pusher **ret, char *why,
		  size_t why_len)
{
	static bool curl_ready;
	pthread_condattr_t ca;
	struct pusher *p;
	int err;

	for (int k = 0; k < PUSH_KIND_MAX; k++)
		if (c->urls[k] && push_url_ok(c->urls[k]))
			return set_why(why, why_len, -EINVAL,
				       "'%s' is not an http:// or https:// address without ? or #",
				       c->urls[k]);
	if (!curl_ready) { /* once, before any thread of ours uses curl */
		if (curl_global_init(CURL_GLOBAL_DEFAULT))
			return set_why(why, why_len, -EIO, "libcurl would not start");
		curl_ready = true;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->dir = strdup(dir);
	p->app = strdup(c->app ? c->app : "jprof");
	p->host = strdup(c->host ? c->host : "");
	p->rate_hz = c->rate_hz;
	err = !p->dir || !p->app || !p->host ? -ENOMEM : 0;
	for (int k = 0; k < PUSH_KIND_MAX && !err; k++) {
		struct target *t = &p->t[p->nt];

		if (!c->urls[k])
			continue;
		p->nt++;
		t->kind = (enum push_kind)k;
		t->url = strdup(c->urls[k]);
		if (!t->url)
			err = -ENOMEM;
		t->cursor = read_cursor(dir, t->kind);
		t->st.last_sent_end_s = t->cursor;
	}
	if (!err && !p->nt)
		err = set_why(why, why_len, -EINVAL, "no target to push to");
	if (err)
		goto out_free;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = -pthread_create(&p->th, NULL, push_main, p);
	if (err) {
		set_why(why, why_len, err, "no thread: %s", strerror(-err));
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		goto out_free;
	}
	p->started = true;
	*ret = p;
	return 0;
out_free:
	pusher_free_fields(p);
	return err;
}

void pusher__kick(struct pusher *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->kick = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void pusher__set_rate(struct pusher *p, unsigned int rate_hz)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->rate_hz = rate_hz;
	pthread_mutex_unlock(&p->lock);
}

bool pusher__stats(struct pusher *p, enum push_kind k, struct push_stats *ret)
{
	bool found = false;

	memset(ret, 0, sizeof(*ret));
	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->nt; i++)
		if (p->t[i].kind == k) {
			*ret = p->t[i].st;
			found = true;
		}
	pthread_mutex_unlock(&p->lock);
	return found;
}

void pusher__free(struct pusher *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	p->stop_ns = now_ns();
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (p->started)
		pthread_join(p->th, NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	pusher_free_fields(p);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* metrics.c: the daemon's Prometheus endpoint: GET /metrics, nothing else, small answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "metrics.h"

#define CONN_MAX     8	   /* scrapers at once */
#define CONN_TIMEOUT 5	   /* s: an idle or slow connection is closed */
#define CONN_MEM     16384 /* bytes a connection may take for its request */

struct metrics {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	struct metrics_values v;
};

static int parse_port(const char *s, unsigned int *ret)
{
	char *end;
	unsigned long p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	p = strtoul(s, &end, 10);
	if (errno || *end || p < 1 || p > 65535)
		return -EINVAL;
	*ret = (unsigned int)p;
	return 0;
}

int metrics_parse_addr(const char *arg, void *sa, size_t sa_len, size_t *ret_len)
{
	char host[64];
	const char *colon;
	unsigned int port;
	size_t hl;

	if (sa_len < sizeof(struct sockaddr_in6))
		return -EINVAL;
	memset(sa, 0, sa_len);
	if (arg[0] == '[') { /* [IPv6]:PORT */
		const char *close = strchr(arg, ']');
		struct sockaddr_in6 *s6 = sa;

		if (!close || close[1] != ':' || (hl = (size_t)(close - arg - 1)) >= sizeof(host))
			return -EINVAL;
		memcpy(host, arg + 1, hl);
		host[hl] = '\0';
		if (parse_port(close + 2, &port) || inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -EINVAL;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*s6);
		return 0;
	}
	colon = strrchr(arg, ':');
	if (!colon) {
		snprintf(host, sizeof(host), "127.0.0.1"); /* a port alone: this host only */
		if (parse_port(arg, &port))
			return -EINVAL;
	} else {
		hl = (size_t)(colon - arg);
		if (hl >= sizeof(host) || parse_port(colon + 1, &port))
			return -EINVAL;
		memcpy(host, arg, hl);
		host[hl] = '\0';
	}
	{
		struct sockaddr_in *s4 = sa;

		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -EINVAL;
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		*ret_len = sizeof(*s4);
	}
	return 0;
}

struct buf {
	char *p;
	size_t len, n;
	bool over;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (b->over)
		return;
	va_start(ap, fmt);
	k = vsnprintf(b->p + b->n, b->len - b->n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= b->len - b->n) {
		b->over = true;
		return;
	}
	b->n += (size_t)k;
}

/* one metric: HELP, TYPE, then the line(s) the caller adds */
static void head(struct buf *b, const char *name, const char *type, const char *help)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(struct buf *b, const char *name, const char *type, const char *help, __u64 v)
{
	head(b, name, type, help);
	put(b, "%s %llu\n", name, (unsigned long long)v);
}

/* the push targets' counters, a line per target (target="pyroscope", "otlp", "parca") */
static void push_metrics(struct buf *b, const struct metrics_values *v)
{
	static const char *const names[] = {"pyroscope", "otlp", "parca"};
	const size_t nt = sizeof(v->push) / sizeof(v->push[0]);
	bool any = false;

	for (size_t k = 0; k < nt; k++)
		any |= v->push[k].on;
	if (!any)
		return;
	head(b, "jprof_push_segments_sent_total", "counter", "Segments a push target took.");
	for (size_t k = 0; k < nt; k++)
		if (v->push[k].on)
			put(b, "jprof_push_segments_sent_total{target=\"%s\"} %llu\n", names[k],
			    (unsigned long long)v->push[k].sent);
	head(b, "jprof_push_failures_total", "counter", "Pushes that failed and are tried again.");
	for (size_t k = 0; k < nt; k++)
		if (v->push[k].on)
			put(b, "jprof_push_failures_total{target=\"%s\"} %llu\n", names[k],
			    (unsigned long long)v->push[k].failed);
	head(b, "jprof_push_dropped_total", "counter",
	     "What was never sent, by reason (refused: segments; expired: seconds).");
	for (size_t k = 0; k < nt; k++) {
		if (!v->push[k].on)
			continue;
		put(b, "jprof_push_dropped_total{target=\"%s\",reason=\"refused\"} %llu\n",
		    names[k], (unsigned long long)v->push[k].rejected);
		put(b,
		    "jprof_push_dropped_total{target=\"%s\",reason=\"expired_seconds\"} "
		    "%llu\n",
		    names[k], (unsigned long long)v->push[k].expired_s);
	}
	head(b, "jprof_push_backlog_segments", "gauge", "Segments waiting to be sent.");
	for (size_t k = 0; k < nt; k++)
		if (v->push[k].on)
			put(b, "jprof_push_backlog_segments{target=\"%s\"} %llu\n", names[k],
			    (unsigned long long)v->push[k].backlog);
}

int metrics_format(const struct metrics_values *v, __u64 rss_bytes, double cpu_s, char *buf,
		   size_t len)
{
	struct buf b = {.p = buf, .len = len};

	if (!len)
		return -ENOSPC;
	one(&b, "jprof_samples_total", "counter", "Samples jprof took (and joined).", v->samples);
	head(&b, "jprof_samples_lost_total", "counter", "Samples lost, by reason.");
	put(&b, "jprof_samples_lost_total{reason=\"ring_buffer_full\"} %llu\n",
	    (unsigned long long)v->lost_ringbuf);
	put(&b, "jprof_samples_lost_total{reason=\"offcpu_not_stored\"} %llu\n",
	    (unsigned long long)v->lost_offcpu);
	one(&b, "jprof_jvms_attached", "gauge", "JVMs whose jprof agent answers.",
	    v->jvms_attached);
	one(&b, "jprof_processes_held", "gauge", "Processes jprof's process table holds.",
	    v->processes_held);
	one(&b, "jprof_segments_written_total", "counter", "Segments written to the store.",
	    v->segments_written);
	head(&b, "jprof_segments_dropped_total", "counter",
	     "Segments not written to the store, by reason.");
	put(&b, "jprof_segments_dropped_total{reason=\"no_space\"} %llu\n",
	    (unsigned long long)v->dropped_full);
	put(&b, "jprof_segments_dropped_total{reason=\"too_big\"} %llu\n",
	    (unsigned long long)v->dropped_big);
	put(&b, "jprof_segments_dropped_total{reason=\"error\"} %llu\n",
	    (unsigned long long)v->dropped_error);
	one(&b, "jprof_store_bytes", "gauge", "Bytes of the segments in the store.",
	    v->store_bytes);
	one(&b, "jprof_last_segment_timestamp_seconds", "gauge",
	    "When the newest segment was written (Unix seconds; 0: none yet).",
	    v->last_segment_unix_s);
	one(&b, "jprof_dumps_total", "counter", "Dumps answered on the control socket.", v->dumps);
	head(&b, "jprof_control_rejected_total", "counter",
	     "Control socket clients not answered, by reason.");
	put(&b, "jprof_control_rejected_total{reason=\"peer\"} %llu\n",
	    (unsigned long long)v->ctl_refused);
	put(&b, "jprof_control_rejected_total{reason=\"request\"} %llu\n",
	    (unsigned long long)v->ctl_bad);
	push_metrics(&b, v);
	one(&b, "jprof_resident_memory_bytes", "gauge", "jprof's resident memory.", rss_bytes);
	head(&b, "jprof_cpu_seconds_total", "counter", "CPU time jprof used, user and system.");
	put(&b, "jprof_cpu_seconds_total %.3f\n", cpu_s);
	return b.over ? -ENOSPC : (int)b.n;
}

static __u64 rss_bytes(void)
{
	unsigned long long size, rss;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu", &size, &rss);
	fclose(f);
	return n == 2 ? rss * (__u64)sysconf(_SC_PAGESIZE) : 0;
}

static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned int status, const char *text,
			      size_t len)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (status == MHD_HTTP_OK)
		(void)MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					      "text/plain; version=0.0.4; charset=utf-8");
	else if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		(void)MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct metrics *m = cls;
	struct metrics_values v;
	char body[METRICS_BODY_MAX];
	const char *cl;
	int n;

	(void)version;
	(void)upload;
	/* a body is never read: its first piece ends the request */
	if (*upload_size) {
		*upload_size = 0;
		if (*con_cls)
			return MHD_YES;
		*con_cls = conn;
		return answer(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no request body\n", 16);
	}
	if (*con_cls) /* the end of a request whose body was refused */
		return MHD_YES;
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics only\n", 18);
	/* a GET that announces a body is refused before any of it is read */
	if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
	    ((cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					       MHD_HTTP_HEADER_CONTENT_LENGTH)) &&
	     strcmp(cl, "0")))
		return answer(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no request body\n", 16);
	if (strcmp(url, "/metrics"))
		return answer(conn, MHD_HTTP_NOT_FOUND, "GET /metrics only\n", 18);
	pthread_mutex_lock(&m->lock);
	v = m->v;
	pthread_mutex_unlock(&m->lock);
	n = metrics_format(&v, rss_bytes(), cpu_seconds(), body, sizeof(body));
	if (n < 0)
		return answer(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "too long\n", 9);
	return answer(conn, MHD_HTTP_OK, body, (size_t)n);
}

/* libmicrohttpd's own complaints go to stderr only with -v: jprof says what failed */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	(void)fmt;
	(void)ap;
}

int metrics__start(const char *addr, struct metrics **ret, char *why, size_t why_len)
{
	struct sockaddr_in6 sa;
	size_t sa_len;
	struct metrics *m;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG;

	if (metrics_parse_addr(addr, &sa, sizeof(sa), &sa_len)) {
		snprintf(why, why_len, "'%s' is not ADDR:PORT or PORT", addr);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	if (sa.sin6_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	m->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR, &sa,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONN_MAX,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONN_TIMEOUT,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEM,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!m->d) {
		int err = errno ? -errno : -EADDRINUSE;

		snprintf(why, why_len, "cannot listen on %s: %s", addr, strerror(-err));
		pthread_mutex_destroy(&m->lock);
		free(m);
		return err;
	}
	*ret = m;
	return 0;
}

void metrics__update(struct metrics *m, const struct metrics_values *v)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->v = *v;
	pthread_mutex_unlock(&m->lock);
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->d);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

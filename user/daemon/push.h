/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * push.h: `jprof daemon --push-pyroscope URL` and `--push-otlp URL`: every segment the store
 * holds is sent, in order, to each target: a Grafana Pyroscope server (POST
 * URL/ingest?name=...&from=&until=&format=pprof, the segment's own gzip'ed pprof as the body)
 * and an OpenTelemetry receiver (POST URL/v1development/profiles, the segment as an OTLP
 * ExportProfilesServiceRequest, daemon/otlp.h) and a Parca server (POST
 * URL/profiles/writeraw, the segment's pprof in a JSON WriteRawRequest), by one thread of its own (libcurl) that never
 * holds up the recording. What each target took is remembered in DIR/push/TARGET.cursor (the
 * end of the last segment it took; written to a temporary name, synced, renamed), so a
 * restarted daemon goes on where it stopped and sends nothing twice; a target that is down
 * holds up neither the other one nor the recording. While the server is down
 * the segments wait in the store (its limits still apply) and go in order when it is back;
 * each failed try waits longer (1 s doubling to 5 min). A segment the server refuses for good
 * (a 4xx answer other than 408 and 429) is skipped and counted; one the limits removed before
 * it was sent is counted too: nothing is lost silently.
 */
#ifndef JPROF_DAEMON_PUSH_H
#define JPROF_DAEMON_PUSH_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/bytebuf.h"

#define PUSH_URL_MAX	  512
#define PUSH_TIMEOUT_S	  30  /* one request, connection included */
#define PUSH_BACKOFF_MAX_S 300

enum push_kind { PUSH_PYROSCOPE = 0, PUSH_OTLP, PUSH_PARCA, PUSH_KIND_MAX };

/* "pyroscope", "otlp", "parca": its cursor file's name, its metrics' target label */
const char *push_kind_name(enum push_kind k);

struct push_stats {
	__u64 sent, sent_bytes;	   /* segments the server took */
	__u64 failed;		   /* tries that failed (to be tried again) */
	__u64 rejected;		   /* segments the server refused for good: skipped */
	__u64 expired;		   /* segments the store's limits removed before they were sent */
	__u64 backlog;		   /* gauge: segments waiting to be sent */
	__u64 last_sent_end_s;	   /* the cursor */
	char last_error[256];	   /* the last failure, said in one line */
};

/* "http://host:4040" or "https://..." with no query or fragment; 0 or -EINVAL */
int push_url_ok(const char *url);

/*
 * The ingest address for a segment [from_s, until_s) of app name app (Pyroscope's
 * "name{labels}" form, escaped) into buf; its length, or -ENOSPC.
 */
int push_ingest_url(const char *base, const char *app, __u64 from_s, __u64 until_s,
		    unsigned int rate_hz, char *buf, size_t len);

/* the OTLP export address: base without trailing '/' + /v1development/profiles; or -ENOSPC */
int push_otlp_url(const char *base, char *buf, size_t len);

/* Parca's write address: base without trailing '/' + /profiles/writeraw; or -ENOSPC */
int push_parca_url(const char *base, char *buf, size_t len);

/*
 * Parca's WriteRawRequest as its HTTP gateway takes it (JSON): one series labelled by app
 * ("name{k=v,...}": __name__=name, k=v, ...), the segment's gzip'ed pprof as its one raw
 * sample (base64), normalized. Appended to out; 0 or -ENOMEM.
 */
int push_parca_body(const char *app, const void *pprof, size_t len, struct bytebuf *out);

/* where to push: urls[k] NULL for a target not wanted */
struct push_conf {
	const char *urls[PUSH_KIND_MAX];
	const char *app;  /* Pyroscope's application, with its labels ("jprof.cpu{host=db1}") */
	const char *host; /* OTLP's resource attribute host.name */
	unsigned int rate_hz;
};

struct pusher;

/*
 * Starts the thread that pushes the store at dir to the targets of c (at least one). 0 and
 * *ret, or -errno with why.
 */
int pusher__start(const char *dir, const struct push_conf *c, struct pusher **ret, char *why,
		  size_t why_len);
/* a segment was written: look now rather than at the next second */
void pusher__kick(struct pusher *p);
/* the sampling rate changed (SIGHUP): Pyroscope's sampleRate from now on. NULL-safe */
void pusher__set_rate(struct pusher *p, unsigned int rate_hz);
/* target k's counts; NULL-safe and false (zeros) for a target not pushed to */
bool pusher__stats(struct pusher *p, enum push_kind k, struct push_stats *ret);
/* NULL-safe: stops the thread (a request under way may finish within 0.8 s, then is cut short) */
void pusher__free(struct pusher *p);

#endif /* JPROF_DAEMON_PUSH_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * push.h: `jprof daemon --push-pyroscope URL`: every segment the store holds is sent, in
 * order, to a Grafana Pyroscope server (POST URL/ingest?name=...&from=&until=&format=pprof,
 * the segment's own gzip'ed pprof as the body), by a thread of its own (libcurl) that never
 * holds up the recording. What was sent is remembered in DIR/push/pyroscope.cursor (the end
 * of the last segment the server took; written to a temporary name, synced, renamed), so a
 * restarted daemon goes on where it stopped and sends nothing twice. While the server is down
 * the segments wait in the store (its limits still apply) and go in order when it is back;
 * each failed try waits longer (1 s doubling to 5 min). A segment the server refuses for good
 * (a 4xx answer other than 408 and 429) is skipped and counted; one the limits removed before
 * it was sent is counted too: nothing is lost silently.
 */
#ifndef JPROF_DAEMON_PUSH_H
#define JPROF_DAEMON_PUSH_H

#include <linux/types.h>
#include <stddef.h>

#define PUSH_URL_MAX	  512
#define PUSH_TIMEOUT_S	  30  /* one request, connection included */
#define PUSH_BACKOFF_MAX_S 300

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

struct pusher;

/*
 * Starts the thread that pushes the store at dir to url as application app (its labels in
 * Pyroscope's form, e.g. "jprof.cpu{host=db1}"). 0 and *ret, or -errno with why.
 */
int pusher__start(const char *dir, const char *url, const char *app, unsigned int rate_hz,
		  struct pusher **ret, char *why, size_t why_len);
/* a segment was written: look now rather than at the next second */
void pusher__kick(struct pusher *p);
void pusher__stats(struct pusher *p, struct push_stats *ret); /* NULL-safe: zeros */
/* NULL-safe: stops the thread (a request under way may finish within 0.8 s, then is cut short) */
void pusher__free(struct pusher *p);

#endif /* JPROF_DAEMON_PUSH_H */

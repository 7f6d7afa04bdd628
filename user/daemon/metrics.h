/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * metrics.h: `jprof daemon --metrics ADDR:PORT`: GET /metrics in the Prometheus text format
 * (libmicrohttpd, its own thread). The record loop hands its counters over with
 * metrics__update (a copy under a mutex held for that copy only); the HTTP thread formats
 * the last copy, and jprof's RSS and CPU seconds, into a bounded buffer. Nothing else is
 * served: another path is 404, another method 405, a request body 413.
 */
#ifndef JPROF_DAEMON_METRICS_H
#define JPROF_DAEMON_METRICS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#define METRICS_BODY_MAX 8192 /* a response's bytes, at most */

/* what the daemon counts; all since it started except the gauges (jvms, processes, bytes) */
struct metrics_values {
	__u64 samples;			 /* samples taken */
	__u64 lost_ringbuf, lost_offcpu; /* lost, by reason: ring buffer full, off-CPU not stored */
	__u64 jvms_attached;		 /* gauge: JVMs whose agent answers now */
	__u64 processes_held;		 /* gauge: entries of the process table */
	__u64 segments_written;
	__u64 dropped_full, dropped_big, dropped_error; /* segments not written, by reason */
	__u64 store_bytes;				/* gauge: the segments' bytes */
	__u64 last_segment_unix_s;			/* 0: none yet */
	__u64 dumps, ctl_refused, ctl_bad;		/* control socket */
	/*
	 * per push target (daemon/push.h's enum push_kind): segments sent, failed tries, refused
	 * for good; seconds expired unsent; segments waiting
	 */
	struct {
		__u64 sent, failed, rejected, expired_s, backlog;
		bool on;
	} push[3];
};

/*
 * "9100" (127.0.0.1), "127.0.0.1:9100", "0.0.0.0:9100", "[::1]:9100" into a socket address.
 * 0 or -EINVAL. sa must have room for a struct sockaddr_in6.
 */
int metrics_parse_addr(const char *arg, void *sa, size_t sa_len, size_t *ret_len);

/* the text format of v (and rss_bytes, cpu_s) into buf; its length, or -ENOSPC */
int metrics_format(const struct metrics_values *v, __u64 rss_bytes, double cpu_s, char *buf,
		   size_t len);

struct metrics;

/* Serves GET /metrics on addr (metrics_parse_addr's form). 0 and *ret, or -errno with why. */
int metrics__start(const char *addr, struct metrics **ret, char *why, size_t why_len);
/* the loop's counters, copied for the next scrape (a mutex held for the copy); NULL-safe */
void metrics__update(struct metrics *m, const struct metrics_values *v);
/* NULL-safe: stops the server's thread */
void metrics__free(struct metrics *m);

#endif /* JPROF_DAEMON_METRICS_H */

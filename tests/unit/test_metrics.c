// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_metrics.c: the daemon's Prometheus endpoint without the daemon: addresses as given
 * to --metrics, the text format (every metric with HELP and TYPE, bounded), and a real
 * server on a loopback port: GET /metrics answered with the last counters, any other path
 * 404, another method 405, a body 413.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "daemon/metrics.h"

TEST(parse_addr)
{
	struct sockaddr_in6 sa;
	struct sockaddr_in *s4 = (void *)&sa;
	size_t len;

	EXPECT_EQ(metrics_parse_addr("9100", &sa, sizeof(sa), &len), 0);
	EXPECT_EQ(s4->sin_family, AF_INET);
	EXPECT_EQ(ntohs(s4->sin_port), 9100);
	EXPECT_EQ(s4->sin_addr.s_addr, htonl(INADDR_LOOPBACK)); /* a port alone: loopback */
	EXPECT_EQ(metrics_parse_addr("0.0.0.0:80", &sa, sizeof(sa), &len), 0);
	EXPECT_EQ(s4->sin_addr.s_addr, 0);
	EXPECT_EQ(len, sizeof(*s4));
	EXPECT_EQ(metrics_parse_addr("[::1]:9100", &sa, sizeof(sa), &len), 0);
	EXPECT_EQ(sa.sin6_family, AF_INET6);
	EXPECT_EQ(len, sizeof(sa));
	EXPECT_EQ(metrics_parse_addr("0", &sa, sizeof(sa), &len), -EINVAL);
	EXPECT_EQ(metrics_parse_addr("65536", &sa, sizeof(sa), &len), -EINVAL);
	EXPECT_EQ(metrics_parse_addr("-1", &sa, sizeof(sa), &len), -EINVAL);
	EXPECT_EQ(metrics_parse_addr("9100x", &sa, sizeof(sa), &len), -EINVAL);
	EXPECT_EQ(metrics_parse_addr("localhost:9100", &sa, sizeof(sa), &len), -EINVAL);
	EXPECT_EQ(metrics_parse_addr("1.2.3:9100", &sa, sizeof(sa), &len), -EINVAL);
	EXPECT_EQ(metrics_parse_addr("127.0.0.1:", &sa, sizeof(sa), &len), -EINVAL);
	EXPECT_EQ(metrics_parse_addr("[::1]9100", &sa, sizeof(sa), &len), -EINVAL);
	EXPECT_EQ(metrics_parse_addr("", &sa, sizeof(sa), &len), -EINVAL);
}

TEST(format)
{
	struct metrics_values v = {.samples = 12345, .lost_ringbuf = 7, .segments_written = 3,
				   .dropped_full = 2, .store_bytes = 4096,
				   .last_segment_unix_s = 1795752000, .jvms_attached = 1};
	char buf[METRICS_BODY_MAX], small[200];
	int n = metrics_format(&v, 1 << 20, 1.5, buf, sizeof(buf));

	ASSERT_TRUE(n > 0);
	EXPECT_TRUE(strstr(buf, "# TYPE jprof_samples_total counter\njprof_samples_total 12345\n"));
	EXPECT_TRUE(strstr(buf, "jprof_samples_lost_total{reason=\"ring_buffer_full\"} 7\n"));
	EXPECT_TRUE(strstr(buf, "jprof_segments_dropped_total{reason=\"no_space\"} 2\n"));
	EXPECT_TRUE(strstr(buf, "jprof_store_bytes 4096\n"));
	EXPECT_TRUE(strstr(buf, "jprof_last_segment_timestamp_seconds 1795752000\n"));
	EXPECT_TRUE(strstr(buf, "jprof_resident_memory_bytes 1048576\n"));
	EXPECT_TRUE(strstr(buf, "jprof_cpu_seconds_total 1.500\n"));
	EXPECT_TRUE(strstr(buf, "jprof_jvms_attached 1\n"));
	EXPECT_TRUE(!strstr(buf, "jprof_push_")); /* no push target: no push metric */
	EXPECT_EQ(buf[n - 1], '\n');
	EXPECT_EQ((size_t)n, strlen(buf));
	/* bounded: a buffer too small is an error, never a cut line */
	EXPECT_EQ(metrics_format(&v, 0, 0, small, sizeof(small)), -ENOSPC);
}

TEST(push_targets)
{
	struct metrics_values v = {0};
	char buf[METRICS_BODY_MAX];

	v.push[1].on = true; /* OTLP only */
	v.push[1].sent = 5;
	v.push[1].backlog = 2;
	v.push[1].expired_s = 60;
	ASSERT_TRUE(metrics_format(&v, 0, 0, buf, sizeof(buf)) > 0);
	EXPECT_TRUE(strstr(buf, "jprof_push_segments_sent_total{target=\"otlp\"} 5\n"));
	EXPECT_TRUE(strstr(buf, "jprof_push_backlog_segments{target=\"otlp\"} 2\n"));
	EXPECT_TRUE(strstr(buf,
			   "jprof_push_dropped_total{target=\"otlp\",reason=\"expired_seconds\"} "
			   "60\n"));
	EXPECT_TRUE(!strstr(buf, "pyroscope"));
	/* each metric's HELP and TYPE once, with both targets */
	v.push[0].on = true;
	ASSERT_TRUE(metrics_format(&v, 0, 0, buf, sizeof(buf)) > 0);
	EXPECT_TRUE(strstr(buf, "jprof_push_failures_total{target=\"pyroscope\"} 0\n"));
	EXPECT_TRUE(strstr(buf, "# TYPE jprof_push_failures_total counter\n"
				"jprof_push_failures_total{target=\"pyroscope\"} 0\n"
				"jprof_push_failures_total{target=\"otlp\"} 0\n"));
}

/* one HTTP request to 127.0.0.1:port, the whole answer into buf */
static int http(unsigned int port, const char *req, char *buf, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t got = 0;
	ssize_t n;

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
	return 0;
}

TEST(server)
{
	struct metrics *m = NULL;
	struct metrics_values v = {.samples = 42, .segments_written = 5};
	char why[256], addr[32], buf[16384];
	unsigned int port = 0;
	int err = -1;

	/* a free port of the ephemeral range, tried a few times */
	for (int i = 0; i < 20 && err; i++) {
		port = 20000 + (unsigned int)((getpid() * 31 + i * 977) % 30000);
		snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
		err = metrics__start(addr, &m, why, sizeof(why));
	}
	ASSERT_TRUE(!err);
	metrics__update(m, &v);
	EXPECT_EQ(http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf,
		       sizeof(buf)),
		  0);
	EXPECT_TRUE(!strncmp(buf, "HTTP/1.1 200", 12));
	EXPECT_TRUE(strstr(buf, "text/plain; version=0.0.4") != NULL);
	EXPECT_TRUE(strstr(buf, "\njprof_samples_total 42\n") != NULL);
	EXPECT_TRUE(strstr(buf, "\njprof_segments_written_total 5\n") != NULL);
	EXPECT_EQ(http(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf,
		       sizeof(buf)),
		  0);
	EXPECT_TRUE(!strncmp(buf, "HTTP/1.1 404", 12));
	EXPECT_EQ(http(port,
		       "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
		       "Connection: close\r\n\r\nhello",
		       buf, sizeof(buf)),
		  0);
	EXPECT_TRUE(!strncmp(buf, "HTTP/1.1 405", 12));
	EXPECT_EQ(http(port,
		       "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n"
		       "Connection: close\r\n\r\nhello",
		       buf, sizeof(buf)),
		  0);
	EXPECT_TRUE(!strncmp(buf, "HTTP/1.1 413", 12));
	/* the same port twice: a clear error */
	{
		struct metrics *m2 = NULL;

		EXPECT_TRUE(metrics__start(addr, &m2, why, sizeof(why)) < 0);
		EXPECT_TRUE(strstr(why, "cannot listen on") != NULL);
		EXPECT_TRUE(m2 == NULL);
	}
	metrics__free(m);
}

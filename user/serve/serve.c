// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * serve.c: `jprof serve`, a web UI over the store and saved recordings: the server, who may
 * ask (the token, the Host header), the page, the routes. Its parts: answers.c, reports.c,
 * lists.c (serve_int.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve/serve.h"
#include "serve/query.h"
#include "serve/serve_int.h"
#include "log.h"
#include "daemon/metrics.h"
#include "store/store.h"
#include "util/units.h"

#include "serve_ui_html.h" /* serve_ui_html[]: user/serve/ui.html (mk/serve.mk) */

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
		return sv_answer_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no request body\n");
	}
	if (*con_cls)
		return MHD_YES;
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return sv_answer_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) ||
	    ((cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					       MHD_HTTP_HEADER_CONTENT_LENGTH)) &&
	     strcmp(cl, "0")))
		return sv_answer_text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "no request body\n");
	if (!host_ok(s, conn))
		return sv_answer_text(conn, MHD_HTTP_MISDIRECTED_REQUEST,
				   "the Host header does not name this server\n");
	if (!token_ok(s, conn, &from_query))
		return sv_answer_text(conn, MHD_HTTP_FORBIDDEN,
				   "this needs the token jprof serve printed: open the address it "
				   "printed, or send Authorization: Bearer TOKEN\n");
	if (!strcmp(url, "/"))
		return from_query ? redirect_with_cookie(s, conn) : do_page(conn);
	if (!strcmp(url, "/api/segments"))
		return sv_segments(s, conn);
	if (!strcmp(url, "/api/recordings"))
		return sv_recordings(s, conn);
	if (!strcmp(url, "/api/profile"))
		return sv_report(s, conn, SQ_PROFILE);
	if (!strcmp(url, "/api/diff"))
		return sv_report(s, conn, SQ_DIFF);
	return sv_answer_text(conn, MHD_HTTP_NOT_FOUND, "not here: /, /api/segments, "
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

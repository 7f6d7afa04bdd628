/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * serve_int.h: `jprof serve`'s parts: the server and who may ask (serve.c), answers and JSON
 * (answers.c), report children (reports.c), the segments and recordings lists (lists.c).
 */
#ifndef JPROF_SERVE_INT_H
#define JPROF_SERVE_INT_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "serve/query.h"
#include "store/store.h"

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

/* a page of ours: inline script and style only, framed by ourselves only */
#define CSP                                                                                    \
	"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "          \
	"img-src data:; connect-src 'self'; frame-src 'self'; frame-ancestors 'self'; "        \
	"base-uri 'none'; form-action 'none'"

/* answers.c: an answer of text, a memfd (a report's output) or JSON */
enum MHD_Result sv_answer_text(struct MHD_Connection *conn, unsigned int status, const char *text);
enum MHD_Result sv_answer_fmt(struct MHD_Connection *conn, unsigned int status, const char *fmt,
			      ...) __attribute__((format(printf, 3, 4)));
/* fd (a memfd of size bytes) as the answer; MHD closes it */
enum MHD_Result sv_answer_fd(struct MHD_Connection *conn, int fd, enum sq_format f,
			     const char *name);

/* a JSON answer built in memory; failed: out of memory (the answer says so) */
struct jbuf {
	char *p;
	size_t n, cap;
	bool failed;
};
void sv_jput(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sv_jstr(struct jbuf *b, const char *s); /* a JSON string, escaped */
/* b as the answer; frees it */
enum MHD_Result sv_answer_json(struct MHD_Connection *conn, struct jbuf *b);

/* reports.c: /api/profile and /api/diff, each one bounded report child */
enum MHD_Result sv_report(struct server *s, struct MHD_Connection *conn, enum sq_kind kind);

/* lists.c: /api/segments (the store's, counted once) and /api/recordings (--recordings) */
enum MHD_Result sv_segments(struct server *s, struct MHD_Connection *conn);
enum MHD_Result sv_recordings(struct server *s, struct MHD_Connection *conn);

#endif /* JPROF_SERVE_INT_H */

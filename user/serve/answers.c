// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* answers.c: jprof serve's answers: text, a report's memfd, JSON built in memory. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/serve_int.h"

enum MHD_Result sv_answer_text(struct MHD_Connection *conn, unsigned int status,
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

enum MHD_Result sv_answer_fmt(struct MHD_Connection *conn, unsigned int status,
				  const char *fmt, ...)
{
	char buf[ERR_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return sv_answer_text(conn, status, buf);
}


/* fd (a memfd of size bytes) as the answer; MHD closes it */
enum MHD_Result sv_answer_fd(struct MHD_Connection *conn, int fd, enum sq_format f,
				 const char *name)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char disp[128];
	struct stat st;

	if (fstat(fd, &st) || lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return sv_answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "the answer was lost\n");
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

void sv_jput(struct jbuf *b, const char *fmt, ...)
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
void sv_jstr(struct jbuf *b, const char *s)
{
	sv_jput(b, "\"");
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			sv_jput(b, "\\%c", *c);
		else if (*c < 0x20 || *c >= 0x7f)
			sv_jput(b, "\\u%04x", *c);
		else
			sv_jput(b, "%c", *c);
	}
	sv_jput(b, "\"");
}

/* b (JSON) as the answer; frees it */
enum MHD_Result sv_answer_json(struct MHD_Connection *conn, struct jbuf *b)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (b->failed) {
		free(b->p);
		return sv_answer_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
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

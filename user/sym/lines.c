// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* lines.c: split untrusted text into bounded, NUL-terminated lines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"

#define LINES_CHUNK (64 * 1024)

static int emit(struct lines_state *st, const char *p, size_t n, lines_cb cb, void *ctx)
{
	char line[JP_LINE_MAX];
	size_t len;

	st->lineno++;
	if (n >= JP_LINE_MAX)
		return cb(NULL, n, st->lineno, ctx);
	memcpy(line, p, n);
	line[n] = '\0';
	len = strlen(line);
	return cb(line, len, st->lineno, ctx);
}

long lines_split(struct lines_state *st, const char *buf, size_t len, bool final, lines_cb cb,
		 void *ctx)
{
	size_t pos = 0;
	int err;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;

		if (st->skipping) {
			/* the rest of an overlong line that was already reported */
			if (!nl)
				return (long)len;
			st->skipping = false;
			pos += n + 1;
			continue;
		}
		if (!nl && !final) {
			if (n < JP_LINE_MAX)
				break; /* partial line: wait for more input */
			/* overlong and unterminated: report it now and drop the rest */
			st->skipping = true;
			st->lineno++;
			err = cb(NULL, n, st->lineno, ctx);
			if (err < 0)
				return err;
			return (long)len;
		}
		err = emit(st, buf + pos, n, cb, ctx);
		if (err < 0)
			return err;
		pos += n + (nl ? 1 : 0);
	}
	return (long)pos;
}

long lines_read_file(FILE *f, size_t max_bytes, lines_cb cb, void *ctx)
{
	struct lines_state st = {};
	size_t have = 0, total = 0;
	long used, err = 0;
	char *buf;

	buf = malloc(LINES_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t n = fread(buf + have, 1, LINES_CHUNK - have, f);
		bool eof = n == 0;

		if (eof && ferror(f)) {
			err = -EIO;
			break;
		}
		total += n;
		if (total > max_bytes) {
			err = -EFBIG;
			break;
		}
		used = lines_split(&st, buf, have + n, eof, cb, ctx);
		if (used < 0) {
			err = used;
			break;
		}
		have = have + n - (size_t)used;
		/* lines_split keeps at most JP_LINE_MAX - 1 bytes, so the chunk never fills */
		memmove(buf, buf + used, have);
		if (eof)
			break;
	}
	free(buf);
	return err ? err : (long)total;
}

const char *lines_parse_hex(const char *p, bool allow_0x, int max_digits, __u64 *ret)
{
	__u64 v = 0;
	int n = 0;

	if (allow_0x && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (;; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (++n > max_digits)
			return NULL;
		v = v << 4 | (__u64)d;
	}
	if (!n)
		return NULL;
	*ret = v;
	return p;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile_folded.c: the folded reader: FlameGraph's folded stacks into a trie, within budgets */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "profile_int.h"

/* folded reader ---------------------------------------------------------------------------- */

/*
 * Budgets of the folded reader: the file may come from another user (report is often run as
 * root). Crossing one stops the read with -E2BIG and a reason naming it and its limit. Fuzz
 * builds lower them so that small inputs reach them.
 */
#ifndef JP_FUZZ_BUDGETS
#define FOLDED_MAX_BYTES (256u << 20) /* bytes of the whole input */
#define FOLDED_MAX_NAME	 (64u << 10)  /* bytes of one frame name */
#define FOLDED_MAX_DEPTH 8192	      /* frames in one stack */
#define FOLDED_MAX_NODES (1u << 20)   /* distinct nodes of the trie */
#else
#define FOLDED_MAX_BYTES (1u << 20)
#define FOLDED_MAX_NAME	 1024
#define FOLDED_MAX_DEPTH 256
#define FOLDED_MAX_NODES 4096
#endif

struct folded_why {
	char *buf;
	size_t len;
};

static int folded_over(struct folded_why *w, const char *what, unsigned long long limit)
{
	if (w->buf && w->len)
		snprintf(w->buf, w->len, "%s %llu (a budget of jprof report)", what, limit);
	return -E2BIG;
}

static const struct {
	const char *suffix;
	enum jp_frame_kind kind;
} folded_suffixes[] = {
	{"_[k]", JP_FK_KERNEL},
	{"_[j]", JP_FK_JIT},
	{"_[i]", JP_FK_INLINED},
	{"_[0]", JP_FK_INTERP},
};

/* strips a kind suffix off name (in place); leading "[...]" frames without one are root markers */
static enum jp_frame_kind folded_kind(char *name, int leading)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(folded_suffixes) / sizeof(folded_suffixes[0]); i++) {
		size_t sl = strlen(folded_suffixes[i].suffix);

		/* a bare "_[k]" is a name, not an empty name with a suffix */
		if (len > sl && !memcmp(name + len - sl, folded_suffixes[i].suffix, sl)) {
			name[len - sl] = '\0';
			return folded_suffixes[i].kind;
		}
	}
	if (leading && len >= 2 && name[0] == '[' && name[len - 1] == ']' &&
	    strcmp(name, "[unknown]"))
		return JP_FK_ROOT;
	return JP_FK_NATIVE;
}

/* parses a decimal u64 of exactly len digits */
static int parse_weight(const char *s, size_t len, __u64 *ret_w)
{
	__u64 w = 0;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d = (unsigned char)s[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (w > (UINT64_MAX - d) / 10)
			return -ERANGE;
		w = w * 10 + d;
	}
	*ret_w = w;
	return 0;
}

/* parses one line (without its newline) into p; -EINVAL when malformed */
static int folded_line(struct profile *p, char *line, size_t len, struct prof_frame **frames,
		       size_t *cap, struct folded_why *why)
{
	size_t nf = 0, sep;
	__u64 w;
	char *s, *end;
	int leading = 1, err;

	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	if (memchr(line, '\0', len))
		return -EINVAL;
	for (sep = len; sep > 0 && line[sep - 1] != ' ' && line[sep - 1] != '\t'; sep--)
		;
	if (!sep || parse_weight(line + sep, len - sep, &w))
		return -EINVAL;
	line[sep - 1] = '\0';
	/* "a;b;c": frames; an empty stack ("" before the weight) is the root's own weight */
	for (s = line; *line; s = end + 1) {
		end = strchr(s, ';');
		if (nf == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			struct prof_frame *nfr;

			if (ncap > SIZE_MAX / sizeof(*nfr))
				return -ENOMEM;
			nfr = realloc(*frames, ncap * sizeof(*nfr));
			if (!nfr)
				return -ENOMEM;
			*frames = nfr;
			*cap = ncap;
		}
		if (end)
			*end = '\0';
		if (nf >= FOLDED_MAX_DEPTH)
			return folded_over(why, "a stack deeper than", FOLDED_MAX_DEPTH);
		if ((end ? (size_t)(end - s) : strlen(s)) > FOLDED_MAX_NAME)
			return folded_over(why, "a frame name longer than", FOLDED_MAX_NAME);
		(*frames)[nf].kind = folded_kind(s, leading);
		(*frames)[nf].name = s;
		leading = leading && (*frames)[nf].kind == JP_FK_ROOT;
		nf++;
		if (!end)
			break;
	}
	err = profile__add(p, *frames, nf, w);
	if (!err && profile__node_count(p) > FOLDED_MAX_NODES)
		err = folded_over(why, "more distinct frames in the tree than", FOLDED_MAX_NODES);
	return err;
}

int profile__read_folded_why(struct profile *p, FILE *f, size_t *ret_bad_line, char *why_buf,
			     size_t why_len)
{
	struct folded_why why = {why_buf, why_len};
	struct prof_frame *frames = NULL;
	size_t cap = 0, bufsz = 0, lineno = 0, bytes = 0;
	char *buf = NULL;
	ssize_t len;
	int err = 0;

	if (why_buf && why_len)
		why_buf[0] = '\0';
	errno = 0;
	while ((len = getline(&buf, &bufsz, f)) >= 0) {
		lineno++;
		bytes += (size_t)len;
		if (bytes > FOLDED_MAX_BYTES) {
			err = folded_over(&why, "more bytes than", FOLDED_MAX_BYTES);
			if (ret_bad_line)
				*ret_bad_line = lineno;
			goto out_free;
		}
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (!len || (len == 1 && buf[0] == '\r'))
			continue; /* blank line */
		err = folded_line(p, buf, (size_t)len, &frames, &cap, &why);
		if (err) {
			if ((err == -EINVAL || err == -E2BIG) && ret_bad_line)
				*ret_bad_line = lineno;
			goto out_free;
		}
	}
	/* getline returns -1 at EOF and on errors (ENOMEM, EIO) alike */
	if (ferror(f) || !feof(f))
		err = errno ? -errno : -EIO;
out_free:
	free(buf);
	free(frames);
	return err;
}

int profile__read_folded(struct profile *p, FILE *f, size_t *ret_bad_line)
{
	return profile__read_folded_why(p, f, ret_bad_line, NULL, 0);
}

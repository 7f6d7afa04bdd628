// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * index.c: the store's index, DIR/index: one line per segment the daemon wrote, "NAME
 * SAMPLES BYTES\n", appended after the segment is in place, so a timeline of a day's 1,440
 * segments is drawn without reading them (jprof serve). It is a hint: a segment without a
 * line is counted by reading it, a line without a segment, or of another size (a segment cut
 * short or replaced), is the reader's to ignore; the writer drops lines of segments no
 * longer there when it opens the store. Read with a budget; every line checked.
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_int.h"

#define INDEX_FILE "index"
#define INDEX_MAX  (16u << 20) /* bytes of the index read at most: 200,000 lines and more */

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, ((const struct store_seg *)elem)->name);
}

/* the listed segment of that name (the list is oldest first; names sort by time), or NULL */
static const struct store_seg *listed(const struct store *s, const char *name)
{
	return s->n ? bsearch(name, s->segs, s->n, sizeof(*s->segs), by_name) : NULL;
}

int store__index_add(struct store *s, const char *name, __u64 samples)
{
	const struct store_seg *seg = listed(s, name);
	char line[STORE_NAME_LEN + 48];
	int fd, n, err = 0;

	if (s->lockfd < 0)
		return -EPERM;
	if (!seg)
		return -ENOENT;
	fd = openat(s->dirfd, INDEX_FILE,
		    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%s %llu %llu\n", name, (unsigned long long)samples,
		     (unsigned long long)seg->bytes);
	if (n < 0 || n >= (int)sizeof(line) || write(fd, line, (size_t)n) != n)
		err = -EIO;
	close(fd);
	return err;
}

/* the index's bytes, at most INDEX_MAX, into a malloc'ed NUL-terminated buffer */
static int read_index(int dirfd, char **ret, size_t *ret_len)
{
	int fd = openat(dirfd, INDEX_FILE, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	size_t len = 0, cap;
	struct stat st;
	char *buf;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	cap = (size_t)st.st_size < INDEX_MAX ? (size_t)st.st_size : INDEX_MAX;
	buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

int store_index_parse(char *buf, size_t len, store_index_fn fn, void *ctx)
{
	char *line, *next;
	size_t n = 0;

	for (line = buf; line < buf + len; line = next) {
		char *nl = memchr(line, '\n', (size_t)(buf + len - line)), *sp, *end;
		struct store_seg seg;
		unsigned long long v, b;

		if (!nl)
			break; /* a line cut short (a crash while appending): ignored */
		*nl = '\0';
		next = nl + 1;
		sp = memchr(line, ' ', (size_t)(nl - line));
		if (!sp || sp - line >= STORE_NAME_LEN)
			continue;
		*sp = '\0';
		if (store_seg_parse(line, &seg) || sp[1] < '0' || sp[1] > '9')
			continue;
		errno = 0;
		v = strtoull(sp + 1, &end, 10);
		if (errno || *end != ' ' || end[1] < '0' || end[1] > '9')
			continue;
		b = strtoull(end + 1, &end, 10);
		if (errno || *end)
			continue;
		fn(ctx, line, v, b);
		n++;
	}
	return (int)(n > INT32_MAX ? INT32_MAX : n);
}

int store__index_read(const struct store *s, store_index_fn fn, void *ctx)
{
	char *buf = NULL;
	size_t len = 0;
	int err = read_index(s->dirfd, &buf, &len);

	if (err)
		return err;
	(void)store_index_parse(buf, len, fn, ctx);
	free(buf);
	return 0;
}

struct keep_ctx {
	const struct store *s;
	FILE *out;
};

static void keep_listed(void *ctx, const char *name, __u64 samples, __u64 bytes)
{
	struct keep_ctx *k = ctx;

	if (listed(k->s, name))
		fprintf(k->out, "%s %llu %llu\n", name, (unsigned long long)samples,
			(unsigned long long)bytes);
}

int store_index_compact(struct store *s)
{
	struct keep_ctx k = {.s = s};
	int fd, err;

	(void)unlinkat(s->dirfd, TMP_PREFIX INDEX_FILE, 0);
	fd = openat(s->dirfd, TMP_PREFIX INDEX_FILE,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	k.out = fdopen(fd, "w");
	if (!k.out) {
		err = -errno;
		close(fd);
		goto out_unlink;
	}
	err = store__index_read(s, keep_listed, &k);
	if (fclose(k.out) && !err)
		err = -EIO;
	if (err)
		goto out_unlink;
	if (renameat(s->dirfd, TMP_PREFIX INDEX_FILE, s->dirfd, INDEX_FILE))
		err = -errno;
	if (!err)
		return 0;
out_unlink:
	(void)unlinkat(s->dirfd, TMP_PREFIX INDEX_FILE, 0);
	return err == -ENOENT ? 0 : err;
}

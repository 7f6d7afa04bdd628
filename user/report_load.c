// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report_load.c: what `jprof report` reads: a saved recording (JFR, pprof, folded; within
 * a budget) or the segments of a daemon's store, into a model, and what each says about
 * itself (times, host, command, GC pauses) for report.c's outputs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "report_int.h"
#include "model/jfr_read.h"
#include "model/pprof_read.h"
#include "profile.h"
#include "store/store.h"
#include "store/store_load.h"
#include "util/units.h"

#define REPORT_MAX_BYTES (256u << 20) /* a saved recording jprof report reads: its budget */

/* reads all of path (at most max bytes): a malloc'ed buffer, or NULL + errno */
static char *read_all(const char *path, size_t max, size_t *ret_len)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0 || !buf) {
		int e = errno;

		free(buf);
		if (fd >= 0)
			close(fd);
		errno = e;
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap) {
			char *nb;

			if (cap >= max) {
				free(buf);
				close(fd);
				errno = EFBIG;
				return NULL;
			}
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				close(fd);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
		}
	}
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	*ret_len = len;
	return buf;
}

/* a JFR file's own account: jprof's jprof.Recording event, the chunks' times, GC pauses */
static void meta_from_jfr(struct report_meta *rm, struct jfr_read_info *in)
{
	struct out_meta *mt = &rm->meta;

	mt->start_unix_ns = in->start_unix_ns;
	mt->duration_ns = in->duration_ns;
	mt->freq_hz = in->period_ns ? (__u32)((1000000000ull + in->period_ns / 2) / in->period_ns) : 0;
	mt->title = in->title;
	mt->host = in->host;
	mt->command = in->command;
	mt->events = in->events_list;
	mt->losses = in->losses;
	mt->samples = in->samples;
	mt->lost = in->lost;
	rm->gc = in->n_gc ? calloc(in->n_gc, sizeof(*rm->gc)) : NULL;
	for (size_t i = 0; rm->gc && i < in->n_gc; i++)
		rm->gc[i] = (struct out_gc_pause){ .start_ns = in->gc[i].start_ns,
						   .duration_ns = in->gc[i].duration_ns,
						   .pid = in->gc[i].pid, .gc_id = in->gc[i].gc_id,
						   .name = in->gc[i].name, .cause = in->gc[i].cause };
	mt->gc_pauses = rm->gc;
	mt->n_gc_pauses = rm->gc ? in->n_gc : 0;
}

/*
 * A pprof file's own account: time_nanos, duration_nanos, period, and jprof's comments
 * (the command, then jprof:KEY=VALUE, out/format.c meta_notes)
 */
static void meta_from_pprof(struct report_meta *rm, const struct pprof_read_info *in)
{
	struct out_meta *mt = &rm->meta;

	mt->start_unix_ns = in->time_ns;
	mt->duration_ns = in->duration_ns;
	mt->freq_hz = in->period ? (__u32)((1000000000ull + in->period / 2) / in->period) : 0;
	for (size_t i = 0; i < in->ncomments; i++) {
		const char *c = in->comments[i], *eq;
		unsigned long long v;

		if (strncmp(c, "jprof:", 6) || !(eq = strchr(c, '='))) {
			if (i == 0 && *c)
				mt->command = c; /* jprof's first comment: its command line */
			continue;
		}
		c += 6;
		v = strtoull(eq + 1, NULL, 10);
#define KEY(k) ((size_t)(eq - c) == strlen(k) && !strncmp(c, k, strlen(k)))
		if (KEY("title"))
			mt->title = eq + 1;
		else if (KEY("unit"))
			mt->unit = eq + 1;
		else if (KEY("host"))
			mt->host = eq + 1;
		else if (KEY("events"))
			mt->events = eq + 1;
		else if (KEY("losses"))
			mt->losses = eq + 1;
		else if (KEY("filters"))
			mt->filters = eq + 1;
		else if (KEY("freq_hz") && v < 1000000)
			mt->freq_hz = (__u32)v;
		else if (KEY("samples"))
			mt->samples = v;
		else if (KEY("lost"))
			mt->lost = v;
#undef KEY
	}
}

int report_load(const char *path, struct model *m, struct report_meta *rm)
{
	char why[256];
	size_t len = 0, bad_line = 0;
	char *buf = read_all(path, REPORT_MAX_BYTES, &len);
	struct profile *p;
	FILE *f;
	int err;

	if (!buf) {
		pr_err("cannot read %s: %s", path,
		       errno == EFBIG ? "larger than 268435456 bytes (a budget of jprof report)"
				      : strerror(errno));
		return -errno;
	}
	if (jfr_read_is_jfr(buf, len)) {
		struct jfr_read_info info = { 0 };

		err = model__read_jfr_info(m, buf, len, &info, why, sizeof(why));
		if (!err)
			meta_from_jfr(rm, &info);
		free(info.gc);
		if (err == -EINVAL)
			pr_err("%s: not a usable JFR recording: %s", path, why);
		else if (err)
			pr_err("reading %s: %s", path, strerror(-err));
		free(buf);
		return err;
	}
	/* gzip, or a protobuf whose first field is a sample type: not folded text */
	if (len >= 2 && (((unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b) ||
			 (unsigned char)buf[0] == 0x0a)) {
		struct pprof_read_info info;

		err = model__read_pprof_info(m, buf, len, &info, why, sizeof(why));
		if (!err)
			meta_from_pprof(rm, &info);
		if (err == -EINVAL)
			pr_err("%s: not a usable pprof profile: %s", path, why);
		else if (err)
			pr_err("reading %s: %s", path, strerror(-err));
		free(buf);
		return err;
	}
	p = profile__new("jprof", "samples");
	f = p ? fmemopen(buf, len, "r") : NULL;
	err = f ? profile__read_folded_why(p, f, &bad_line, why, sizeof(why)) : -ENOMEM;
	if (f)
		fclose(f);
	if (err == -E2BIG) {
		pr_err("%s:%zu: %s", path, bad_line, why);
		err = -EINVAL;
	} else if (err == -EINVAL) {
		pr_err("%s:%zu: not a folded-stack line (nor a pprof file)", path, bad_line);
	} else if (err) {
		pr_err("reading %s: %s", path, strerror(-err));
	}
	if (!err)
		err = model__from_profile(m, p, JP_VAL_CPU_SAMPLES);
	rm->folded = true;
	profile__free(p);
	free(buf);
	return err;
}

/* the segments of report --store, as they are read (store__load) */
struct store_meta_ctx {
	struct report_meta *rm;
	const char *dir;
	size_t seen;
};

/* a string of a segment's account, kept beyond it (the first segment's say what was recorded) */
static const char *keep_str(struct report_meta *rm, int i, const char *s)
{
	if (!s)
		return NULL;
	snprintf(rm->strs[i], sizeof(rm->strs[i]), "%s", s);
	return rm->strs[i];
}

static void on_segment(void *ctx, const struct store_seg *seg, const struct pprof_read_info *info,
		       int err, const char *why)
{
	struct store_meta_ctx *c = ctx;
	struct report_meta one = { 0 };
	struct out_meta *mt = &c->rm->meta;

	if (err) {
		pr_warn("%s/segments/%s: skipped: %s (a segment cut short by a crash or a power "
			"loss, or damaged)",
			c->dir, seg->name, why);
		return;
	}
	meta_from_pprof(&one, info);
	if (!c->seen++) {
		mt->title = keep_str(c->rm, 0, one.meta.title);
		mt->host = keep_str(c->rm, 1, one.meta.host);
		mt->command = keep_str(c->rm, 2, one.meta.command);
		mt->events = keep_str(c->rm, 3, one.meta.events);
		mt->unit = keep_str(c->rm, 4, one.meta.unit);
		mt->freq_hz = one.meta.freq_hz;
	}
	mt->samples += one.meta.samples;
	mt->lost += one.meta.lost;
}

int report_load_store(const struct jp_opts *o, struct model *m, struct report_meta *rm)
{
	__u64 now_s = (__u64)time(NULL), since = 0, until = ~0ull;
	struct store_meta_ctx c = { .rm = rm, .dir = o->store };
	struct store_load_result res;
	struct store *s = NULL;
	char why[512], a[32], b[32];
	size_t n;
	int err;

	/* checked by opts_parse already; durations count back from now */
	if ((o->since && units_parse_time(o->since, now_s, &since)) ||
	    (o->until && units_parse_time(o->until, now_s, &until)))
		return -EINVAL;
	err = store__open_reader(o->store, &s, why, sizeof(why));
	if (err) {
		pr_err("cannot read the store %s: %s", o->store, why[0] ? why : strerror(-err));
		return err;
	}
	err = store__load(s, since, until, m, on_segment, &c, &res);
	if (err) {
		pr_err("reading the store %s: %s", o->store, strerror(-err));
		goto out_free;
	}
	if (!res.loaded) {
		const struct store_seg *segs = store__segments(s, &n);

		if (n && !units_format_utc(segs[0].start_s, a, sizeof(a)) &&
		    !units_format_utc(segs[n - 1].end_s, b, sizeof(b)))
			pr_err("%s: no readable segment in the range (%zu in it; the store holds %zu, "
			       "%s to %s)",
			       o->store, res.in_range, n, a, b);
		else
			pr_err("%s: no segment in the store", o->store);
		err = -ENOENT;
		goto out_free;
	}
	rm->meta.start_unix_ns = res.start_s * 1000000000ull;
	rm->meta.duration_ns = (res.end_s - res.start_s) * 1000000000ull;
	pr_info("%s: %zu segments merged%s", o->store, res.loaded,
		res.skipped ? ", the unreadable skipped" : "");
out_free:
	store__free(s);
	return err;
}

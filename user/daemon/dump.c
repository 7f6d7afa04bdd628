// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dump.c: `jprof dump`: the daemon's open interval, passed as a memfd over its control
 * socket, and the store's segments before it, merged into one pprof profile (a memfd of our
 * own) that report_run then reads and writes in any format, with report's filters.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "ctl.h"
#include "log.h"
#include "report.h"
#include "model/filter.h"
#include "model/model.h"
#include "model/pprof_read.h"
#include "out/out.h"
#include "store/store.h"
#include "store/store_load.h"
#include "util/units.h"

#define DUMP_TIMEOUT_MS 3000 /* the daemon answers within a round (100 ms) and a snapshot */
#define NS_PER_S	1000000000ull

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* the store opened to read, with what went wrong said in one line */
static int open_store(const char *dir, struct store **ret)
{
	char why[512];
	int err = store__open_reader(dir, ret, why, sizeof(why));

	if (!err)
		return 0;
	if (err == -ENOENT)
		pr_err("%s: no such store: no jprof daemon writes there", dir);
	else if (err == -EACCES)
		pr_err("%s: permission denied: the store is its owner's alone (0700); run jprof "
		       "dump as root or as the daemon's user",
		       dir);
	else
		pr_err("cannot read the store %s: %s", dir, why[0] ? why : strerror(-err));
	return err;
}

/* the snapshot the daemon passed: a regular file (its memfd), read whole */
static int read_snapshot(int fd, char **ret_buf, size_t *ret_len)
{
	size_t len = 0;
	struct stat st;
	char *buf;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADFD;
	if ((__u64)st.st_size > STORE_READ_MAX)
		return -EFBIG;
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf)
		return -ENOMEM;
	while (len < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		len += (size_t)n;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

/* a jprof:KEY=N comment of a segment's (out/format.c meta_notes), 0 when absent */
struct seg_ctx {
	const char *dir;
	__u64 samples, lost;
};

static void on_segment(void *ctx, const struct store_seg *seg, const struct pprof_read_info *info,
		       int err, const char *why)
{
	struct seg_ctx *c = ctx;

	if (err) {
		pr_warn("%s/segments/%s: skipped: %s", c->dir, seg->name, why);
		return;
	}
	c->samples += pprof_info_u64(info, "samples");
	c->lost += pprof_info_u64(info, "lost");
}

/* jprof dump --mark NAME: the daemon keeps the last --last and its open interval */
static int mark_run(const struct jp_opts *o)
{
	char why[512], dir[256], age[32];
	struct store *s = NULL;
	size_t n = 0;
	int err;

	if (open_store(o->store, &s))
		return JP_EXIT_FAILURE;
	err = ctl_mark_request(store__dirfd(s), DUMP_TIMEOUT_MS, o->mark, (__u32)o->last_s, dir,
			       sizeof(dir), &n, why, sizeof(why));
	store__free(s);
	if (err) {
		pr_err("%s: %s", o->store, why);
		return JP_EXIT_FAILURE;
	}
	snprintf(age, sizeof(age), "%llu %s",
		 (unsigned long long)(o->last_s % 3600 ? o->last_s % 60 ? o->last_s : o->last_s / 60
						       : o->last_s / 3600),
		 o->last_s % 3600 ? o->last_s % 60 ? "s" : "min" : "h");
	pr_info("kept the last %s and the open interval as %s/%s (%zu segments), outside the "
		"store's limits; jprof report --store %s/%s reads it",
		age, o->store, dir, n, o->store, dir);
	return JP_EXIT_OK;
}

int marks_run(const struct jp_opts *o)
{
	char path[PATH_MAX], a[32], b[32], why[512];
	struct dirent **names = NULL;
	struct store *s = NULL;
	int n, shown = 0;

	if (snprintf(path, sizeof(path), "%s/%s", o->store, STORE_MARKS_DIR) >= (int)sizeof(path))
		return JP_EXIT_USAGE;
	/* the store itself first: its checks (owner, no link) and errors */
	if (open_store(o->store, &s))
		return JP_EXIT_FAILURE;
	store__free(s);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0 && errno != ENOENT) {
		pr_err("%s: %s", path, strerror(errno));
		return JP_EXIT_FAILURE;
	}
	for (int i = 0; i < n; i++) {
		const struct store_seg *segs;
		size_t k;

		if (names[i]->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s/%s", o->store, STORE_MARKS_DIR,
			     names[i]->d_name) < (int)sizeof(path) &&
		    !store__open_reader(path, &s, why, sizeof(why))) {
			segs = store__segments(s, &k);
			if (!shown++)
				printf("%-40s %-20s %-20s %8s %10s\n", "MARK", "FROM (UTC)", "TO",
				       "SEGMENTS", "BYTES");
			if (!k || units_format_utc(segs[0].start_s, a, sizeof(a)) ||
			    units_format_utc(segs[k - 1].end_s, b, sizeof(b)))
				a[0] = b[0] = '\0';
			printf("%-40s %-20s %-20s %8zu %10llu\n", names[i]->d_name, a, b, k,
			       (unsigned long long)store__bytes(s));
			store__free(s);
		}
		free(names[i]);
	}
	free(names);
	if (!shown)
		pr_info("%s: no marks (jprof dump --mark NAME keeps one)", o->store);
	return JP_EXIT_OK;
}

int dump_run(const struct jp_opts *o)
{
	struct model *m = model__new(), *snap = model__new();
	struct model_filter all = {0};
	struct store *s = NULL;
	struct pprof_read_info info;
	struct store_load_result res = {0};
	struct seg_ctx sc = {.dir = o->store};
	struct out_meta meta = {0};
	__u64 open_s = 0, now_s = 0, since;
	char why[512], path[64], a[32];
	char *buf = NULL;
	size_t len = 0;
	int sfd = -1, mfd = -1, err, ret = JP_EXIT_FAILURE;
	double t0 = mono_ms(), t_reply, t_merged;

	if (o->mark) {
		model__free(m);
		model__free(snap);
		return mark_run(o);
	}
	if (!m || !snap) {
		pr_err("out of memory");
		goto out_free;
	}
	if (open_store(o->store, &s))
		goto out_free;
	err = ctl_dump_request(store__dirfd(s), DUMP_TIMEOUT_MS, &sfd, &open_s, &now_s, why,
			       sizeof(why));
	store__free(s);
	s = NULL;
	if (err) {
		pr_err("%s: %s", o->store, why);
		goto out_free;
	}
	t_reply = mono_ms();
	err = read_snapshot(sfd, &buf, &len);
	if (!err)
		err = model__read_pprof_info(snap, buf, len, &info, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", strerror(-err));
	if (err) {
		pr_err("%s: the daemon's snapshot is not readable: %s", o->store, why);
		goto out_free;
	}
	/* the segments read now: every one the daemon wrote before its open interval is there */
	if (open_store(o->store, &s))
		goto out_free;
	since = now_s > o->last_s ? now_s - o->last_s : 0;
	err = since < open_s ? store__load(s, since, open_s, m, on_segment, &sc, &res) : 0;
	if (!err)
		err = model__filter(snap, &all, m);
	if (err) {
		pr_err("reading the store %s: %s", o->store, strerror(-err));
		goto out_free;
	}
	meta.title = pprof_info_str(&info, "title");
	meta.host = pprof_info_str(&info, "host");
	meta.events = pprof_info_str(&info, "events");
	meta.command =
		info.ncomments && strncmp(info.comments[0], "jprof:", 6) ? info.comments[0] : NULL;
	meta.freq_hz = (__u32)pprof_info_u64(&info, "freq_hz");
	meta.samples = sc.samples + pprof_info_u64(&info, "samples");
	meta.lost = sc.lost + pprof_info_u64(&info, "lost");
	meta.start_unix_ns = (res.loaded ? res.start_s : open_s) * NS_PER_S;
	meta.duration_ns = now_s * NS_PER_S - meta.start_unix_ns;
	if (units_format_utc(open_s, a, sizeof(a)))
		a[0] = '\0';
	pr_info("%s: the open interval (since %s, %llu s) and %zu segment%s before it%s", o->store,
		a, (unsigned long long)(now_s - open_s), res.loaded, res.loaded == 1 ? "" : "s",
		res.skipped ? " (the unreadable skipped)" : "");
	err = out_pprof_memfd(m, &meta, &mfd);
	if (err) {
		pr_err("merging the dump: %s", strerror(-err));
		goto out_free;
	}
	t_merged = mono_ms();
	/* model and snapshot go before the report reads the merged copy */
	model__free(m);
	model__free(snap);
	m = snap = NULL;
	{
		struct jp_opts ro = *o;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", mfd);
		ro.cmd = JP_CMD_REPORT;
		ro.input = path;
		ro.store = NULL;
		ret = report_run(&ro);
	}
	/* -v: where a dump's time goes (the daemon's answer, the merge, the report) */
	pr_debug("dump: the daemon answered in %.0f ms, merged in %.0f ms, written in %.0f ms",
		 t_reply - t0, t_merged - t_reply, mono_ms() - t_merged);
out_free:
	if (mfd >= 0)
		close(mfd);
	if (sfd >= 0)
		close(sfd);
	free(buf);
	store__free(s);
	model__free(snap);
	model__free(m);
	return ret;
}

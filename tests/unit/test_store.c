// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_store.c: the daemon's store without the daemon: names of segments, durations, sizes
 * and times as given on the command line, writes and their modes, rotation by age and by
 * size with tiny limits, the writer's lock, temporary files swept, failed writes counted,
 * and segments cut short or damaged skipped whole when a range is read back.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "model/model.h"
#include "out/out.h"
#include "store/store.h"
#include "store/store_load.h"
#include "util/units.h"

#define T0 1795752000ull /* 2026-11-27T04:00:00Z */

static char dir[64];

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/jprof-test-store-XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = '\0';
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_dir(void)
{
	if (dir[0])
		(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* DIR/store/segments/name */
static void seg_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/store/segments/%s", dir, name);
}

static void store_path(char *buf, size_t len)
{
	snprintf(buf, len, "%s/store", dir);
}

/* a segment's content: n bytes of 'x' */
static int write_bytes(void *ctx, FILE *f)
{
	size_t n = *(const size_t *)ctx;

	for (size_t i = 0; i < n; i++)
		if (fputc('x', f) == EOF)
			return -EIO;
	return 0;
}

static int write_fails(void *ctx, FILE *f)
{
	(void)f;
	return *(const int *)ctx;
}

TEST(segment_names_and_parsing)
{
	char name[STORE_NAME_LEN];
	struct store_seg s;

	EXPECT_EQ(store_seg_name(T0, T0 + 60, name, sizeof(name)), 0);
	EXPECT_STREQ(name, "20261127T040000Z-20261127T040100Z.pb.gz");
	EXPECT_EQ(store_seg_parse(name, &s), 0);
	EXPECT_EQ(s.start_s, T0);
	EXPECT_EQ(s.end_s, T0 + 60);
	EXPECT_STREQ(s.name, name);
	/* an empty or backwards interval has no name */
	EXPECT_EQ(store_seg_name(T0, T0, name, sizeof(name)), -EINVAL);
	/* anything else in the directory is not a segment */
	EXPECT_EQ(store_seg_parse("20261127T040100Z-20261127T040000Z.pb.gz", &s), -EINVAL);
	EXPECT_EQ(store_seg_parse("20261127T040000Z-20261127T040000Z.pb.gz", &s), -EINVAL);
	EXPECT_EQ(store_seg_parse(".tmp-20261127T040000Z-20261127T040100Z.pb.gz", &s), -EINVAL);
	EXPECT_EQ(store_seg_parse("20261127T040000Z-20261127T040100Z.pb", &s), -EINVAL);
	EXPECT_EQ(store_seg_parse("20261127T040000Z-20261127T040060Z.pb.gz", &s), -EINVAL);
	EXPECT_EQ(store_seg_parse("20261127T040000Z_20261127T040100Z.pb.gz", &s), -EINVAL);
	EXPECT_EQ(store_seg_parse("2026112XT040000Z-20261127T040100Z.pb.gz", &s), -EINVAL);
	EXPECT_EQ(store_seg_parse("lock", &s), -EINVAL);
}

TEST(durations_sizes_and_times)
{
	__u64 v = 0;

	EXPECT_EQ(units_parse_duration("90", &v), 0);
	EXPECT_EQ(v, 90);
	EXPECT_EQ(units_parse_duration("10m", &v), 0);
	EXPECT_EQ(v, 600);
	EXPECT_EQ(units_parse_duration("24h", &v), 0);
	EXPECT_EQ(v, 86400);
	EXPECT_EQ(units_parse_duration("7d", &v), 0);
	EXPECT_EQ(v, 7 * 86400);
	EXPECT_EQ(units_parse_duration("0", &v), 0);
	EXPECT_EQ(v, 0);
	EXPECT_EQ(units_parse_duration("10x", &v), -EINVAL);
	EXPECT_EQ(units_parse_duration("-1m", &v), -EINVAL);
	EXPECT_EQ(units_parse_duration("m", &v), -EINVAL);
	EXPECT_EQ(units_parse_duration("99999999999d", &v), -ERANGE);

	EXPECT_EQ(units_parse_size("4096", &v), 0);
	EXPECT_EQ(v, 4096);
	EXPECT_EQ(units_parse_size("512K", &v), 0);
	EXPECT_EQ(v, 512 * 1024);
	EXPECT_EQ(units_parse_size("100M", &v), 0);
	EXPECT_EQ(v, 100ull << 20);
	EXPECT_EQ(units_parse_size("1G", &v), 0);
	EXPECT_EQ(v, 1ull << 30);
	EXPECT_EQ(units_parse_size("2GiB", &v), 0);
	EXPECT_EQ(v, 2ull << 30);
	EXPECT_EQ(units_parse_size("1g", &v), 0);
	EXPECT_EQ(v, 1ull << 30);
	EXPECT_EQ(units_parse_size("1X", &v), -EINVAL);
	EXPECT_EQ(units_parse_size("1Gx", &v), -EINVAL);
	EXPECT_EQ(units_parse_size("", &v), -EINVAL);
	EXPECT_EQ(units_parse_size("99999999T", &v), -ERANGE);

	EXPECT_EQ(units_parse_time("10m", T0, &v), 0);
	EXPECT_EQ(v, T0 - 600);
	EXPECT_EQ(units_parse_time("now", T0, &v), 0);
	EXPECT_EQ(v, T0);
	EXPECT_EQ(units_parse_time("@1795752000", 0, &v), 0);
	EXPECT_EQ(v, T0);
	EXPECT_EQ(units_parse_time("2026-11-27T04:00:00Z", 0, &v), 0);
	EXPECT_EQ(v, T0);
	EXPECT_EQ(units_parse_time("2026-11-27T04:01Z", 0, &v), 0);
	EXPECT_EQ(v, T0 + 60);
	EXPECT_EQ(units_parse_time("20261127T040002Z", 0, &v), 0);
	EXPECT_EQ(v, T0 + 2);
	EXPECT_EQ(units_parse_time("2026-13-27T04:00:00Z", 0, &v), -EINVAL);
	EXPECT_EQ(units_parse_time("2026-11-27T04:00:00", 0, &v), -EINVAL);
	EXPECT_EQ(units_parse_time("2026-11-27 04:00:00Z", 0, &v), -EINVAL);
	EXPECT_EQ(units_parse_time("@12x", 0, &v), -EINVAL);
	EXPECT_EQ(units_parse_time("", 0, &v), -EINVAL);
}

TEST(write_private_files_and_list_them_in_order)
{
	struct store_limits lim = {0};
	const struct store_seg *segs;
	struct store *s = NULL, *r = NULL;
	char path[256], why[256];
	size_t n = 10, count;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;

	make_dir();
	ASSERT_TRUE(dir[0]);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, &lim, T0, &s, why, sizeof(why)) == 0);
	/* written out of order: listed by time */
	EXPECT_EQ(store__write(s, T0 + 60, T0 + 120, T0 + 120, write_bytes, &n), 0);
	EXPECT_EQ(store__write(s, T0, T0 + 60, T0 + 120, write_bytes, &n), 0);
	/* one name, one segment: a second write of it is refused, the first stays */
	EXPECT_EQ(store__write(s, T0, T0 + 60, T0 + 120, write_bytes, &n), -EEXIST);
	segs = store__segments(s, &count);
	ASSERT_TRUE(count == 2);
	EXPECT_EQ(segs[0].start_s, T0);
	EXPECT_EQ(segs[1].start_s, T0 + 60);
	EXPECT_EQ(store__newest_end(s), T0 + 120);
	EXPECT_EQ(store__bytes(s), 20);
	/* nobody else may read it: 0600 files in 0700 directories */
	seg_path(path, sizeof(path), "20261127T040000Z-20261127T040100Z.pb.gz");
	ASSERT_TRUE(stat(path, &st) == 0);
	EXPECT_EQ(st.st_mode & 0777, 0600);
	EXPECT_EQ(st.st_size, 10);
	snprintf(path, sizeof(path), "%s/store", dir);
	ASSERT_TRUE(stat(path, &st) == 0);
	EXPECT_EQ(st.st_mode & 0777, 0700);
	snprintf(path, sizeof(path), "%s/store/segments", dir);
	ASSERT_TRUE(stat(path, &st) == 0);
	EXPECT_EQ(st.st_mode & 0777, 0700);

	/* a reader beside the writer sees both, and reads one whole */
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_reader(path, &r, why, sizeof(why)) == 0);
	segs = store__segments(r, &count);
	ASSERT_TRUE(count == 2);
	EXPECT_EQ(store__read(r, &segs[1], 1 << 20, &buf, &len), 0);
	EXPECT_EQ(len, 10);
	EXPECT_TRUE(buf && !memcmp(buf, "xxxxxxxxxx", 10));
	free(buf);
	EXPECT_EQ(store__read(r, &segs[1], 5, &buf, &len), -EFBIG);
	store__free(r);
	store__free(s);
	remove_dir();
}

TEST(one_writer_at_a_time)
{
	struct store *a = NULL, *b = NULL;
	char path[256], why[256];

	make_dir();
	ASSERT_TRUE(dir[0]);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, NULL, T0, &a, why, sizeof(why)) == 0);
	EXPECT_EQ(store__open_writer(path, NULL, T0, &b, why, sizeof(why)), -EBUSY);
	EXPECT_TRUE(strstr(why, "another jprof daemon") != NULL);
	store__free(a);
	/* its lock went with it */
	EXPECT_EQ(store__open_writer(path, NULL, T0, &b, why, sizeof(why)), 0);
	store__free(b);
	remove_dir();
}

TEST(no_symlink_on_the_path_and_a_loose_mode_tightened)
{
	struct store *s = NULL;
	char path[256], link[256], why[256];
	struct stat st;

	make_dir();
	ASSERT_TRUE(dir[0]);
	snprintf(path, sizeof(path), "%s/real", dir);
	ASSERT_TRUE(mkdir(path, 0755) == 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	ASSERT_TRUE(symlink("real", link) == 0);
	/* the store itself a link, or a link above it: refused, never followed */
	EXPECT_EQ(store__open_writer(link, NULL, T0, &s, why, sizeof(why)), -ELOOP);
	snprintf(link, sizeof(link), "%s/link/store", dir);
	EXPECT_EQ(store__open_writer(link, NULL, T0, &s, why, sizeof(why)), -ELOOP);
	EXPECT_TRUE(stat(link, &st) != 0); /* nothing made through it */
	/* a store directory made by hand with 0755 becomes 0700 */
	ASSERT_TRUE(store__open_writer(path, NULL, T0, &s, why, sizeof(why)) == 0);
	ASSERT_TRUE(stat(path, &st) == 0);
	EXPECT_EQ(st.st_mode & 0777, 0700);
	store__free(s);
	remove_dir();
}

TEST(rotation_by_size_removes_the_oldest_first)
{
	struct store_limits lim = {.max_size = 250};
	const struct store_seg *segs;
	struct store_stats st;
	struct store *s = NULL;
	char path[256], why[256];
	size_t n = 100, big = 300, count;

	make_dir();
	ASSERT_TRUE(dir[0]);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, &lim, T0, &s, why, sizeof(why)) == 0);
	for (int i = 0; i < 5; i++)
		EXPECT_EQ(store__write(s, T0 + i, T0 + i + 1, T0 + i + 1, write_bytes, &n), 0);
	/* 250 bytes hold two of 100: the newest two are left */
	segs = store__segments(s, &count);
	ASSERT_TRUE(count == 2);
	EXPECT_EQ(segs[0].start_s, T0 + 3);
	EXPECT_EQ(segs[1].start_s, T0 + 4);
	EXPECT_TRUE(store__bytes(s) <= 250);
	seg_path(path, sizeof(path), "20261127T040000Z-20261127T040001Z.pb.gz");
	EXPECT_TRUE(access(path, F_OK) != 0);
	/* a segment larger than the whole limit is dropped (counted), the store kept */
	EXPECT_EQ(store__write(s, T0 + 5, T0 + 6, T0 + 6, write_bytes, &big), -EFBIG);
	(void)store__segments(s, &count);
	EXPECT_EQ(count, 2);
	store__stats(s, &st);
	EXPECT_EQ(st.written, 5);
	EXPECT_EQ(st.removed_size, 3);
	EXPECT_EQ(st.dropped_big, 1);
	store__free(s);
	remove_dir();
}

TEST(rotation_by_age_at_open_and_at_each_write)
{
	struct store_limits none = {0}, lim = {.max_age_s = 60};
	const struct store_seg *segs;
	struct store_stats st;
	struct store *s = NULL;
	char path[256], why[256];
	size_t n = 10, count;

	make_dir();
	ASSERT_TRUE(dir[0]);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, &none, T0, &s, why, sizeof(why)) == 0);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(store__write(s, T0 + 30 * i, T0 + 30 * (i + 1), T0, write_bytes, &n), 0);
	store__free(s);
	/* reopened at T0 + 150 with 60 s: what ended before T0 + 90 goes (ends 30, 60) */
	ASSERT_TRUE(store__open_writer(path, &lim, T0 + 150, &s, why, sizeof(why)) == 0);
	segs = store__segments(s, &count);
	ASSERT_TRUE(count == 2);
	EXPECT_EQ(segs[0].end_s, T0 + 90);
	/* a write at T0 + 170 removes the one that ended at T0 + 90, not the one at T0 + 120 */
	EXPECT_EQ(store__write(s, T0 + 120, T0 + 150, T0 + 170, write_bytes, &n), 0);
	segs = store__segments(s, &count);
	ASSERT_TRUE(count == 2);
	EXPECT_EQ(segs[0].end_s, T0 + 120);
	store__stats(s, &st);
	EXPECT_EQ(st.removed_age, 3);
	store__free(s);
	remove_dir();
}

TEST(temporary_files_of_a_killed_writer_are_swept)
{
	struct store_stats st;
	struct store *s = NULL;
	char path[256], tmp[256], other[256], why[256];
	size_t count;
	int fd;

	make_dir();
	ASSERT_TRUE(dir[0]);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, NULL, T0, &s, why, sizeof(why)) == 0);
	store__free(s);
	/* what a kill -9 in the middle of a write leaves, and a file that is not the store's */
	seg_path(tmp, sizeof(tmp), ".tmp-20261127T040000Z-20261127T040100Z.pb.gz");
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(write(fd, "\x1f\x8b", 2) == 2);
	close(fd);
	seg_path(other, sizeof(other), "notes.txt");
	fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT_TRUE(fd >= 0);
	close(fd);
	/* a reader leaves it (a writer may be running) and does not list it */
	ASSERT_TRUE(store__open_reader(path, &s, why, sizeof(why)) == 0);
	(void)store__segments(s, &count);
	EXPECT_EQ(count, 0);
	store__free(s);
	EXPECT_EQ(access(tmp, F_OK), 0);
	/* the next writer removes it */
	ASSERT_TRUE(store__open_writer(path, NULL, T0, &s, why, sizeof(why)) == 0);
	store__stats(s, &st);
	EXPECT_EQ(st.swept, 1);
	EXPECT_TRUE(access(tmp, F_OK) != 0);
	EXPECT_EQ(access(other, F_OK), 0);
	store__free(s);
	remove_dir();
}

TEST(a_failed_write_leaves_nothing_and_is_counted)
{
	struct store_stats st;
	struct store *s = NULL;
	char path[256], why[256], cmd[300];
	size_t count, n = 10;
	int nospc = -ENOSPC, eio = -EIO;
	FILE *p;

	make_dir();
	ASSERT_TRUE(dir[0]);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, NULL, T0, &s, why, sizeof(why)) == 0);
	EXPECT_EQ(store__write(s, T0, T0 + 1, T0 + 1, write_fails, &nospc), -ENOSPC);
	EXPECT_EQ(store__write(s, T0 + 1, T0 + 2, T0 + 2, write_fails, &eio), -EIO);
	/* and the next one goes in, as if nothing happened */
	EXPECT_EQ(store__write(s, T0 + 2, T0 + 3, T0 + 3, write_bytes, &n), 0);
	(void)store__segments(s, &count);
	EXPECT_EQ(count, 1);
	store__stats(s, &st);
	EXPECT_EQ(st.dropped_full, 1);
	EXPECT_EQ(st.dropped_error, 1);
	EXPECT_EQ(st.written, 1);
	/* no temporary file left: the segment and nothing else */
	snprintf(cmd, sizeof(cmd), "ls -A %s/store/segments | wc -l", dir);
	p = popen(cmd, "r");
	ASSERT_TRUE(p != NULL);
	EXPECT_TRUE(fgets(why, sizeof(why), p) && atoi(why) == 1);
	pclose(p);
	store__free(s);
	remove_dir();
}

/* a segment's pprof: one sample of "frame" with n CPU samples */
static int write_profile(void *ctx, FILE *f)
{
	const char *frame = ctx;
	struct model *m = model__new();
	struct jp_location loc = {.kind = JP_FK_NATIVE};
	struct jp_labels l = {.pid = 7, .tid = 7, .comm = "app", .thread = "app"};
	struct out_meta meta = {.host = "h", .events = "cpu", .samples = 3};
	struct out_input in = {.model = m, .meta = &meta};
	jp_id id, stack;
	int err;

	if (!m)
		return -ENOMEM;
	loc.func = model__func(m, frame, "", false);
	id = model__location(m, &loc);
	stack = model__stack(m, &id, 1);
	err = model__add(m, stack, model__labels(m, &l), JP_VAL_CPU_SAMPLES, 3);
	in.view.values = 1u << JP_VAL_CPU_SAMPLES;
	if (!err)
		err = out_write(OUT_PPROF, &in, f);
	model__free(m);
	return err;
}

struct seen {
	int ok, bad;
	__u64 samples;
	char why[256];
};

static void on_seg(void *ctx, const struct store_seg *seg, const struct pprof_read_info *info,
		   int err, const char *why)
{
	struct seen *s = ctx;

	(void)seg;
	if (err) {
		s->bad++;
		snprintf(s->why, sizeof(s->why), "%s", why);
		return;
	}
	s->ok++;
	(void)info;
}

/* the whole model as "frame=samples " of its rows, sorted by frame name */
static __u64 samples_of(const struct model *m, const char *frame)
{
	__u64 sum = 0;

	for (size_t i = 0; i < model__rows(m); i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(m, i, &rb);
		size_t n;
		const jp_id *locs = model__get_stack(m, r->stack, &n);
		const struct jp_location *l = n ? model__get_location(m, locs[0]) : NULL;
		const struct jp_func *f = l ? model__get_func(m, l->func) : NULL;

		if (f && !strcmp(f->name, frame))
			sum += r->values[JP_VAL_CPU_SAMPLES];
	}
	return sum;
}

TEST(a_range_merges_its_segments_and_skips_the_damaged)
{
	struct store_load_result res;
	struct seen seen = {0};
	struct store *s = NULL;
	struct model *m = model__new();
	char path[256], why[256], full[256], cut[256], buf[4096];
	FILE *f;
	size_t len;
	int fd;

	make_dir();
	ASSERT_TRUE(dir[0] && m);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, NULL, T0, &s, why, sizeof(why)) == 0);
	EXPECT_EQ(store__write(s, T0, T0 + 60, T0, write_profile, "alpha"), 0);
	EXPECT_EQ(store__write(s, T0 + 60, T0 + 120, T0, write_profile, "beta"), 0);
	EXPECT_EQ(store__write(s, T0 + 120, T0 + 180, T0, write_profile, "gamma"), 0);
	EXPECT_EQ(store__write(s, T0 + 180, T0 + 240, T0, write_profile, "delta"), 0);
	store__free(s);
	/* power loss: beta's file cut in half; gamma's bytes damaged in the middle */
	seg_path(full, sizeof(full), "20261127T040100Z-20261127T040200Z.pb.gz");
	f = fopen(full, "r");
	ASSERT_TRUE(f != NULL);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ASSERT_TRUE(truncate(full, (off_t)(len / 2)) == 0);
	seg_path(cut, sizeof(cut), "20261127T040200Z-20261127T040300Z.pb.gz");
	fd = open(cut, O_RDWR);
	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(pwrite(fd, "\xff\xff\xff\xff\xff\xff\xff\xff", 8, 24) == 8);
	close(fd);

	ASSERT_TRUE(store__open_reader(path, &s, why, sizeof(why)) == 0);
	/* the range [T0 + 30, T0 + 200) overlaps alpha, beta, gamma and delta */
	EXPECT_EQ(store__load(s, T0 + 30, T0 + 200, m, on_seg, &seen, &res), 0);
	EXPECT_EQ(res.in_range, 4);
	EXPECT_EQ(res.loaded, 2);
	EXPECT_EQ(res.skipped, 2);
	EXPECT_EQ(seen.ok, 2);
	EXPECT_EQ(seen.bad, 2);
	EXPECT_EQ(res.start_s, T0);
	EXPECT_EQ(res.end_s, T0 + 240);
	/* the damaged ones added nothing, not even half of their samples */
	EXPECT_EQ(samples_of(m, "alpha"), 3);
	EXPECT_EQ(samples_of(m, "beta"), 0);
	EXPECT_EQ(samples_of(m, "gamma"), 0);
	EXPECT_EQ(samples_of(m, "delta"), 3);
	model__free(m);

	/* a range that touches only alpha's end: [T0 + 60, ...) starts where beta does */
	m = model__new();
	ASSERT_TRUE(m != NULL);
	memset(&seen, 0, sizeof(seen));
	EXPECT_EQ(store__load(s, T0 + 200, T0 + 1000, m, on_seg, &seen, &res), 0);
	EXPECT_EQ(res.in_range, 1);
	EXPECT_EQ(samples_of(m, "delta"), 3);
	EXPECT_EQ(samples_of(m, "alpha"), 0);
	model__free(m);
	store__free(s);
	remove_dir();
}

/* a mark: the window's segments linked, the snapshot beside them, a store of its own */
TEST(a_mark_keeps_its_window_outside_the_limits)
{
	struct store_limits lim = {0};
	const struct store_seg *segs;
	struct store *s = NULL, *m = NULL;
	char path[256], why[256], mdir[128], name[16];
	size_t n = 10, kept = 0, count;
	struct stat a, b;
	int snap;

	make_dir();
	ASSERT_TRUE(dir[0]);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, &lim, T0, &s, why, sizeof(why)) == 0);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(store__write(s, T0 + 60 * i, T0 + 60 * (i + 1), T0 + 240, write_bytes, &n),
			  0);
	snap = memfd_create("snap", MFD_CLOEXEC);
	ASSERT_TRUE(snap >= 0);
	EXPECT_EQ(write(snap, "open!", 5), 5);
	/* the last 150 s at T0 + 250: segments 2 and 3 (and 1's end), and the open interval */
	EXPECT_EQ(store__mark(s, "deploy-2", T0 + 100, T0 + 250, snap, T0 + 240, T0 + 250, mdir,
			      sizeof(mdir), &kept, why, sizeof(why)),
		  0);
	EXPECT_STREQ(mdir, "marks/20261127T040410Z-deploy-2");
	EXPECT_EQ(kept, 4);
	/* the same files: a link, not a copy */
	seg_path(path, sizeof(path), "20261127T040200Z-20261127T040300Z.pb.gz");
	ASSERT_TRUE(stat(path, &a) == 0);
	snprintf(path, sizeof(path), "%s/store/%s/segments/20261127T040200Z-20261127T040300Z.pb.gz",
		 dir, mdir);
	ASSERT_TRUE(stat(path, &b) == 0);
	EXPECT_TRUE(a.st_ino == b.st_ino && a.st_nlink == 2);
	/* the limits remove every segment of the store: the mark's stay, readable as a store */
	lim.max_size = 1;
	store__set_limits(s, &lim);
	(void)store__rotate(s, T0 + 300);
	(void)store__segments(s, &count);
	EXPECT_EQ(count, 0);
	snprintf(path, sizeof(path), "%s/store/%s", dir, mdir);
	ASSERT_TRUE(store__open_reader(path, &m, why, sizeof(why)) == 0);
	segs = store__segments(m, &count);
	ASSERT_TRUE(count == 4);
	EXPECT_EQ(segs[0].start_s, T0 + 60);
	EXPECT_EQ(segs[3].start_s, T0 + 240);
	EXPECT_EQ(segs[3].bytes, 5);
	store__free(m);
	snprintf(path, sizeof(path), "%s/store/%s", dir, mdir);
	ASSERT_TRUE(stat(path, &a) == 0);
	EXPECT_EQ(a.st_mode & 0777, 0700);
	/* a bad name; the same name in the same second; no snapshot (-1) is fine */
	EXPECT_EQ(store__mark(s, "../x", T0, T0 + 250, snap, 0, 0, mdir, sizeof(mdir), &kept, why,
			      sizeof(why)),
		  -EINVAL);
	EXPECT_EQ(store__mark(s, "deploy-2", T0, T0 + 250, -1, 0, 0, mdir, sizeof(mdir), &kept, why,
			      sizeof(why)),
		  -EEXIST);
	/* STORE_MARKS_MAX at most */
	for (int i = 1; i < STORE_MARKS_MAX; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		EXPECT_EQ(store__mark(s, name, T0, T0 + 250, -1, 0, 0, mdir, sizeof(mdir), &kept,
				      why, sizeof(why)),
			  0);
	}
	EXPECT_EQ(store__mark(s, "one-more", T0, T0 + 250, -1, 0, 0, mdir, sizeof(mdir), &kept, why,
			      sizeof(why)),
		  -ENOSPC);
	EXPECT_TRUE(strstr(why, "marks are kept already") != NULL);
	close(snap);
	store__free(s);
	/* a reader may not mark; a link planted as marks/ is not followed */
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_reader(path, &m, why, sizeof(why)) == 0);
	EXPECT_EQ(store__mark(m, "x", T0, T0 + 250, -1, 0, 0, mdir, sizeof(mdir), &kept, why,
			      sizeof(why)),
		  -EPERM);
	store__free(m);
	remove_dir();
	make_dir();
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, &lim, T0, &s, why, sizeof(why)) == 0);
	snprintf(path, sizeof(path), "%s/store/marks", dir);
	ASSERT_TRUE(symlink("/tmp", path) == 0);
	EXPECT_EQ(store__mark(s, "x", T0, T0 + 250, -1, 0, 0, mdir, sizeof(mdir), &kept, why,
			      sizeof(why)),
		  -ELOOP);
	store__free(s);
	remove_dir();
}

static void on_index(void *ctx, const char *name, __u64 samples, __u64 bytes)
{
	char *out = ctx;

	snprintf(out + strlen(out), 1024 - strlen(out), "%s=%llu/%llu;", name,
		 (unsigned long long)samples, (unsigned long long)bytes);
}

/* the index: a line per segment, bad lines ignored, the lines of removed segments dropped */
TEST(the_index_counts_segments_without_reading_them)
{
	struct store_limits lim = {0};
	struct store *s = NULL, *r = NULL;
	char path[256], why[256], got[1024] = "";
	size_t n = 10;
	FILE *f;

	make_dir();
	ASSERT_TRUE(dir[0]);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, &lim, T0, &s, why, sizeof(why)) == 0);
	EXPECT_EQ(store__write(s, T0, T0 + 60, T0 + 60, write_bytes, &n), 0);
	EXPECT_EQ(store__index_add(s, "20261127T040000Z-20261127T040100Z.pb.gz", 42), 0);
	EXPECT_EQ(store__write(s, T0 + 60, T0 + 120, T0 + 120, write_bytes, &n), 0);
	EXPECT_EQ(store__index_add(s, "20261127T040100Z-20261127T040200Z.pb.gz", 7), 0);
	/* what a crash or a stranger leaves: garbage, a bad count, a line cut short */
	snprintf(path, sizeof(path), "%s/store/index", dir);
	f = fopen(path, "a");
	ASSERT_TRUE(f != NULL);
	fputs("../../etc/passwd 1 1\n20261127T040100Z-20261127T040200Z.pb.gz -5 1\nnonsense\n"
	      "20261127T040100Z-20261127T040200Z.pb.gz 5\n"
	      "20261127T040200Z-20261127T040300Z.pb.gz 9 9",
	      f);
	fclose(f);
	EXPECT_EQ(store__index_read(s, on_index, got), 0);
	EXPECT_STREQ(got, "20261127T040000Z-20261127T040100Z.pb.gz=42/10;"
			  "20261127T040100Z-20261127T040200Z.pb.gz=7/10;");
	/* only segments in the list are indexed */
	EXPECT_EQ(store__index_add(s, "20261127T050000Z-20261127T050100Z.pb.gz", 1), -ENOENT);
	/* the first segment goes by the limits; the next writer's open keeps only the second */
	lim.max_size = 15;
	store__set_limits(s, &lim);
	(void)store__rotate(s, T0 + 130);
	store__free(s);
	store_path(path, sizeof(path));
	ASSERT_TRUE(store__open_writer(path, &lim, T0 + 130, &s, why, sizeof(why)) == 0);
	got[0] = '\0';
	ASSERT_TRUE(store__open_reader(path, &r, why, sizeof(why)) == 0);
	EXPECT_EQ(store__index_read(r, on_index, got), 0);
	EXPECT_STREQ(got, "20261127T040100Z-20261127T040200Z.pb.gz=7/10;");
	EXPECT_EQ(store__index_add(r, "x", 1), -EPERM); /* a reader writes nothing */
	store__free(r);
	store__free(s);
	remove_dir();
}

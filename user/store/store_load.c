// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* store_load.c: the segments of a time range, each checked whole, read into one model. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_load.h"
#include "model/pprof_merge.h"

/* one segment into dst, whole: a bad one is skipped (dst as it was), told to fn */
static int load_one(const struct store *s, const struct store_seg *seg, struct pprof_merge *pm,
		    store_seg_fn fn, void *ctx, bool *ret_ok)
{
	struct pprof_read_info info;
	char why[256] = "";
	char *buf = NULL;
	size_t len = 0;
	int err;

	*ret_ok = false;
	err = store__read(s, seg, STORE_READ_MAX, &buf, &len);
	if (err)
		snprintf(why, sizeof(why), "%s",
			 err == -EFBIG ? "larger than 268435456 bytes" : strerror(-err));
	else
		err = pprof_merge__add(pm, buf, len, &info, why, sizeof(why));
	free(buf);
	if (err == -ENOMEM || err == -ENOSPC)
		return err;
	if (err) {
		if (fn)
			fn(ctx, seg, NULL, err, why[0] ? why : strerror(-err));
		return 0;
	}
	if (fn)
		fn(ctx, seg, &info, 0, NULL);
	*ret_ok = true;
	return 0;
}

int store__load(const struct store *s, __u64 since_s, __u64 until_s, struct model *dst,
		store_seg_fn fn, void *ctx, struct store_load_result *ret)
{
	struct store_load_result r = {0};
	struct pprof_merge *pm = pprof_merge__new(dst);
	const struct store_seg *segs;
	size_t n;
	int err = 0;

	if (!pm)
		return -ENOMEM;
	segs = store__segments(s, &n);
	for (size_t i = 0; i < n && !err; i++) {
		bool ok;

		if (segs[i].end_s <= since_s || segs[i].start_s >= until_s)
			continue;
		r.in_range++;
		err = load_one(s, &segs[i], pm, fn, ctx, &ok);
		if (!ok) {
			r.skipped += !err;
			continue;
		}
		if (!r.loaded++)
			r.start_s = segs[i].start_s;
		if (segs[i].end_s > r.end_s)
			r.end_s = segs[i].end_s;
	}
	pprof_merge__free(pm);
	*ret = r;
	return err;
}

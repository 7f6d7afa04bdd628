// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jfr_read.c: a JDK Flight Recorder file back into the model, for `jprof report`. A file is
 * chunks; a chunk is a 68-byte header (big endian), then events, each its size and type
 * first. The metadata event describes every type as a class with fields (an element tree
 * over a string table); checkpoint events hold the constant pools (type, key -> value); an
 * event's fields are laid out as its class says. The reader follows the metadata, as the
 * JDK's own parser does, so any writer's layout is read. The file may come from anywhere:
 * every offset, length, count, index and nesting depth is checked, the work spent on values
 * and the tables' sizes are capped, and a malformed file is refused with one reason.
 *
 * Per chunk: the header, the metadata, then three walks over its events: the checkpoints
 * (constant pool entries are kept as offsets, decoded when first used and cached), the
 * events that say how to read the others (threads' processes, the sampling period), then
 * the samples.
 *
 * This file reads the chunks and walks their events; jfr_read_values.c reads values,
 * jfr_read_meta.c the metadata and the constant pools, jfr_read_stacks.c makes frames,
 * stacks and threads model ids, jfr_read_events.c puts the events into the model
 * (jfr_read_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_read_int.h"

enum walk { W_CHECKPOINTS, W_INFO, W_SAMPLES };

static bool is_info(enum ckind k)
{
	return k == E_THREADINFO || k == E_RECORDING || k == E_GC || k == E_SETTING ||
	       k == E_JVMINFO;
}

static bool is_sample(enum ckind k)
{
	return k >= E_EXEC && k <= E_SYSCALL;
}

static int walk_events(struct ctx *c, enum walk w)
{
	size_t pos = c->c0 + JFR_HEADER;
	int err = 0;

	while (!err && pos < c->c_end) {
		struct rd r = {c->buf, pos, c->c_end, 0};
		__u64 size = jr_rd_int(c, &r), type;
		size_t hdr = r.pos - pos;
		__u32 ci;

		if (r.err || size <= hdr || size > c->c_end - pos)
			return jr_bad(c, "an event's size runs past its chunk", pos);
		r.end = pos + (size_t)size;
		type = jr_rd_long(c, &r);
		if (r.err)
			return jr_bad(c, "malformed event header", pos);
		if (type == 1 || type == 0) {
			if (type == 1 && w == W_CHECKPOINTS)
				err = jr_read_checkpoint(c, &r, pos);
		} else if (w != W_CHECKPOINTS) {
			ci = jr_class_index(c, type);
			if (ci == ~0u) {
				if (w == W_SAMPLES)
					c->info->skipped++;
			} else if (w == W_INFO && is_info(c->cls[ci].kind)) {
				err = jr_info_event(c, &r, &c->cls[ci], pos, r.pos);
			} else if (w == W_SAMPLES && is_sample(c->cls[ci].kind)) {
				err = jr_sample_event(c, &r, &c->cls[ci], pos);
			} else if (w == W_SAMPLES && !is_info(c->cls[ci].kind)) {
				c->info->skipped++;
			}
		}
		pos += (size_t)size;
	}
	return err;
}

static int read_chunk(struct ctx *c, size_t at, size_t *ret_size)
{
	struct rd r = {c->buf, at, c->len, 0};
	__u64 major, size, cp_off, meta_off, start_ns, dur_ns, end_ns;
	__u32 flags;
	int err;

	if (c->len - at < JFR_HEADER || memcmp(c->buf + at, "FLR", 4))
		return jr_bad(c,
			      at ? "bytes after the last chunk that are no chunk" : "no JFR chunk",
			      at);
	r.pos += 4;
	major = jr_rd_be(&r, 2);
	(void)jr_rd_be(&r, 2); /* minor */
	size = jr_rd_be(&r, 8);
	cp_off = jr_rd_be(&r, 8);
	meta_off = jr_rd_be(&r, 8);
	start_ns = jr_rd_be(&r, 8);
	dur_ns = jr_rd_be(&r, 8);
	c->start_ticks = jr_rd_be(&r, 8);
	c->tps = jr_rd_be(&r, 8);
	flags = (__u32)jr_rd_be(&r, 4);
	if (major != 2)
		return jr_bad(c, "not JFR format 2 (JDK 11 and later, async-profiler, jprof)", at);
	if (size > c->len - at)
		return jr_bad(c, "truncated: the chunk is larger than the file", at);
	if (size < JFR_HEADER || !cp_off || !meta_off)
		return jr_bad(c, "an unfinished chunk (its recording was not stopped)", at);
	if (meta_off < JFR_HEADER || meta_off >= size || cp_off < JFR_HEADER || cp_off >= size ||
	    !c->tps)
		return jr_bad(c, "malformed chunk header", at);
	c->c0 = at;
	c->c_end = at + (size_t)size;
	c->compressed = flags & 1;
	c->start_ns = start_ns;
	end_ns = start_ns + dur_ns >= start_ns ? start_ns + dur_ns : ~0ull;
	if (!c->info->chunks) {
		c->first_start_ns = c->min_start_ns = start_ns;
		c->max_end_ns = end_ns;
	}
	if (start_ns < c->min_start_ns)
		c->min_start_ns = start_ns;
	if (end_ns > c->max_end_ns)
		c->max_end_ns = end_ns;
	c->info->start_unix_ns = c->min_start_ns;
	c->info->duration_ns = c->max_end_ns - c->min_start_ns;
	c->info->chunks++;
	c->ncp = 0;
	if (c->slots)
		memset(c->slots, 0, c->nslots * sizeof(*c->slots));
	c->period_ns = c->info->period_ns;
	err = jr_read_metadata(c, at + (size_t)meta_off);
	if (!err)
		err = walk_events(c, W_CHECKPOINTS);
	if (!err)
		err = walk_events(c, W_INFO);
	if (!err)
		err = walk_events(c, W_SAMPLES);
	if (c->jprof)
		c->info->jprof = true;
	jr_meta_free(c);
	*ret_size = (size_t)size;
	return err;
}

bool jfr_read_is_jfr(const void *buf, size_t len)
{
	/* 3 bytes are no folded line either: say it is a cut JFR file */
	return len >= 3 && !memcmp(buf, "FLR", len < 4 ? len : 4);
}

int model__read_jfr_info(struct model *m, const void *buf, size_t len, struct jfr_read_info *info,
			 char *why, size_t why_len)
{
	struct ctx c = {.m = m, .buf = buf, .len = len, .why = why, .why_len = why_len};
	size_t at = 0, size = 0;
	int err = 0;

	if (why && why_len)
		why[0] = '\0';
	c.info = info ? info : &c.own;
	memset(c.info, 0, sizeof(*c.info));
	c.work = (__u64)len * 16 + (1u << 20);
	c.stack_buf = malloc(JFR_MAX_DEPTH * sizeof(*c.stack_buf));
	if (!c.stack_buf)
		return -ENOMEM;
	do {
		c.jprof = false;
		err = read_chunk(&c, at, &size);
		at += size;
	} while (!err && at < len);
	free(c.stack_buf);
	free(c.cp);
	free(c.slots);
	if (err || !info) {
		free(c.info->gc);
		c.info->gc = NULL;
		c.info->n_gc = 0;
	}
	return err;
}

int model__read_jfr(struct model *m, const void *buf, size_t len, char *why, size_t why_len)
{
	return model__read_jfr_info(m, buf, len, NULL, why, why_len);
}

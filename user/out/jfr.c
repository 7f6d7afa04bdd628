// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jfr.c: the model as a JDK Flight Recorder chunk. Layout: the 68-byte header, the constant
 * pool event, the events, then the metadata event (our type descriptions as an element tree):
 * last, because JMC before 8.x stops reading events at the metadata event.
 * Integers are LEB128 varints (header flag 1), strings UTF-8. The events are encoded twice, once
 * to learn their size for the header and once to write them, so memory stays proportional to
 * the model, not to the number of samples; the output needs no seek (pipes work).
 *
 * This file lays out the chunk; jfr_enc.c encodes values, jfr_types.c our types and the
 * metadata event, jfr_events.c the events, jfr_pools.c the constant pools (jfr_int.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_int.h"

static __u64 max_samples = OUT_JFR_MAX_SAMPLES, last_scaled;

__u64 out_jfr_max_samples(__u64 max)
{
	__u64 was = max_samples;

	max_samples = max ? max : OUT_JFR_MAX_SAMPLES;
	return was;
}

__u64 out_jfr_samples_scaled(void)
{
	return last_scaled;
}

static void write_header(struct bytebuf *b, const struct jfr_opts *o, __u64 chunk_size,
			 __u64 cp_off, __u64 meta_off)
{
	bytebuf_add(b, "FLR", 4); /* with its '\0' */
	jb_be(b, JFR_MAJOR, 2);
	jb_be(b, JFR_MINOR, 2);
	jb_be(b, chunk_size, 8);
	jb_be(b, cp_off, 8);
	jb_be(b, meta_off, 8);
	jb_be(b, o->start_unix_ns, 8);
	jb_be(b, o->duration_ns, 8);
	jb_be(b, JFR_START_TICKS, 8);
	jb_be(b, JFR_TICKS_PER_SEC, 8);
	jb_be(b, 0, 3); /* file state 0: finished */
	bytebuf_u8(b, JFR_FLAGS);
}

int out_jfr_write(const struct model *m, const struct jfr_opts *o, FILE *f)
{
	struct jfr x = {.m = m, .o = o};
	struct bytebuf meta = {0}, cp = {0}, head = {0};
	unsigned char cp_size[9];
	size_t cp_size_len = 0;
	int err;

	if (!m || !o || !f)
		return -EINVAL;
	model__counts(m, &x.c);
	last_scaled = 0;
	if (model__total(m, JP_VAL_CPU_SAMPLES) > max_samples) {
		x.smp_num = max_samples;
		x.smp_den = model__total(m, JP_VAL_CPU_SAMPLES);
		last_scaled = x.smp_den;
	}
	x.stack_used = calloc(x.c.stacks + 1, 1);
	x.labels_used = calloc(x.c.labels + 1, 1);
	x.func_kind = calloc(x.c.funcs + 2, 1);
	x.methods = calloc(x.c.funcs + 2, sizeof(*x.methods));
	if (!x.stack_used || !x.labels_used || !x.func_kind || !x.methods) {
		err = -ENOMEM;
		goto out_free;
	}
	/* first pass: sizes only, and what the events use */
	jw_events(&x);
	jw_resolve_methods(&x);
	err = x.err;
	if (!err)
		err = jw_write_metadata(&meta, JFR_START_TICKS);
	if (!err)
		err = jw_write_constant_pool(&x, &cp);
	if (err)
		goto out_free;
	/* the constant pool's size prefix is written apart from it: no copy of the largest part */
	cp_size_len = jw_varint_enc(cp_size, jw_event_size(cp.n));
	write_header(&head, o, JFR_HEADER_SIZE + cp_size_len + cp.n + x.ev_bytes + meta.n,
		     JFR_HEADER_SIZE, JFR_HEADER_SIZE + cp_size_len + cp.n + x.ev_bytes);
	if (head.err) {
		err = head.err;
		goto out_free;
	}
	if (fwrite(head.p, 1, head.n, f) != head.n ||
	    fwrite(cp_size, 1, cp_size_len, f) != cp_size_len || fwrite(cp.p, 1, cp.n, f) != cp.n) {
		err = errno ? -errno : -EIO;
		goto out_free;
	}
	/* second pass: the same events, written */
	x.f = f;
	x.ev_bytes = 0;
	jw_events(&x);
	err = x.err;
	/* the metadata last: older JMC reads events up to the metadata event */
	if (!err && fwrite(meta.p, 1, meta.n, f) != meta.n)
		err = errno ? -errno : -EIO;
	if (!err && fflush(f))
		err = -errno ? -errno : -EIO;
out_free:
	bytebuf_free(&head);
	bytebuf_free(&meta);
	bytebuf_free(&cp);
	bytebuf_free(&x.ev);
	free(x.stack_used);
	free(x.labels_used);
	free(x.func_kind);
	free(x.methods);
	free(x.class_info);
	free(x.pkg_name);
	strindex_free(&x.syms);
	strindex_free(&x.classes);
	strindex_free(&x.pkgs);
	return err;
}

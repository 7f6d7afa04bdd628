// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hsperf.c: HotSpot's hsperfdata (PerfData v2) reader and the GC/safepoint pauses derived from it.
 * This file parses a file's bytes; hsperf_file.c finds and opens a JVM's file,
 * hsperf_pauses.c derives the pauses from two reads and reports them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include <time.h>

#include "hsperf.h"
#include "hsperf_int.h"
#include "util/procfs.h"
#include "util/safe_open.h"

/*
 * The format (HotSpot perfMemory.hpp, perfData.hpp; jdk.internal.perf readers):
 * prologue (32 bytes): u32 magic 0xcafec0c0 (always big-endian), u8 byte order (0 big,
 * 1 little: of every other field), u8 major (2), u8 minor, u8 accessible, s32 used,
 * s32 overflow, s64 mod time, s32 entry offset, s32 entry count.
 * entry (20-byte header): s32 entry length, s32 name offset, s32 vector length (0: a
 * scalar), u8 type ('J' jlong, 'B' byte vector: strings), u8 flags, u8 units,
 * u8 variability, s32 data offset; offsets count from the entry's start.
 */

__u32 hp_rd32(const unsigned char *p, bool big)
{
	return big ? (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3]
		   : (__u32)p[3] << 24 | (__u32)p[2] << 16 | (__u32)p[1] << 8 | p[0];
}

static __u64 rd64(const unsigned char *p, bool big)
{
	return big ? (__u64)hp_rd32(p, true) << 32 | hp_rd32(p + 4, true)
		   : (__u64)hp_rd32(p + 4, false) << 32 | hp_rd32(p, false);
}

/* a counter's value; negative (corrupt) values read as 0 */
static __u64 as_count(__u64 v)
{
	return (__s64)v < 0 ? 0 : v;
}

/* "sun.gc.collector.<N>.<field>": N and field, or -1 */
static int collector_field(const char *name, const char **field)
{
	static const char pre[] = "sun.gc.collector.";
	const char *p = name + sizeof(pre) - 1;

	if (strncmp(name, pre, sizeof(pre) - 1) || p[0] < '0' || p[0] > '9' || p[1] != '.')
		return -1;
	*field = p + 2;
	return p[0] - '0';
}

/* the fields read, by id: a collector's fields are F_COLL + c * F_COLL_N + field */
enum {
	F_NONE = -1,
	F_CAUSE,
	F_LAST_CAUSE,
	F_FREQ,
	F_TICKS,
	F_VM_END,
	F_SAFEPOINTS,
	F_SP_TIME,
	F_SP_SYNC,
	F_COLL,
};
enum { FC_NAME, FC_INVOCATIONS, FC_TIME, FC_ENTRY, FC_EXIT, F_COLL_N };

static int field_id(const char *name, char type)
{
	static const struct {
		const char *name;
		int id;
	} scalars[] = {
		{"sun.os.hrt.frequency", F_FREQ},     {"sun.os.hrt.ticks", F_TICKS},
		{"sun.rt.createVmEndTime", F_VM_END}, {"sun.rt.safepoints", F_SAFEPOINTS},
		{"sun.rt.safepointTime", F_SP_TIME},  {"sun.rt.safepointSyncTime", F_SP_SYNC},
	};
	static const char *const coll[F_COLL_N] = {"name", "invocations", "time", "lastEntryTime",
						   "lastExitTime"};
	const char *field;
	int c;

	if (type == 'B' && !strcmp(name, "sun.gc.cause"))
		return F_CAUSE;
	if (type == 'B' && !strcmp(name, "sun.gc.lastCause"))
		return F_LAST_CAUSE;
	if ((c = collector_field(name, &field)) >= 0 && c < HSPERF_COLLECTORS) {
		for (int f = 0; f < F_COLL_N; f++)
			if (!strcmp(field, coll[f]) && (type == 'B') == (f == FC_NAME))
				return F_COLL + c * F_COLL_N + f;
		return F_NONE;
	}
	if (type != 'J')
		return F_NONE;
	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (!strcmp(name, scalars[i].name))
			return scalars[i].id;
	return F_NONE;
}

static void store(struct hsperf_snap *s, int id, __u64 v, const char *str, size_t slen)
{
	struct hsperf_collector *k;
	char *dst = NULL;
	int c, f;

	if (id == F_CAUSE)
		dst = s->cause;
	else if (id == F_LAST_CAUSE)
		dst = s->last_cause;
	else if (id >= F_COLL && (id - F_COLL) % F_COLL_N == FC_NAME)
		dst = s->coll[(id - F_COLL) / F_COLL_N].name;
	if (dst) {
		size_t n = strnlen(str, slen < HSPERF_STR_LEN ? slen : HSPERF_STR_LEN - 1);

		/* keep it printable: it goes into reports and JSON */
		for (size_t i = 0; i < n; i++)
			dst[i] = str[i] >= 0x20 && str[i] < 0x7f ? str[i] : '?';
		dst[n] = 0;
		return;
	}
	v = as_count(v);
	switch (id) {
	case F_FREQ:
		s->freq_hz = v;
		return;
	case F_TICKS:
		s->hrt_ticks = v;
		return;
	case F_VM_END:
		s->vm_created = v != 0;
		return;
	case F_SAFEPOINTS:
		s->safepoints = v;
		s->has_safepoints = true;
		return;
	case F_SP_TIME:
		s->safepoint_ticks = v;
		return;
	case F_SP_SYNC:
		s->safepoint_sync_ticks = v;
		return;
	}
	if (id < F_COLL)
		return;
	c = (id - F_COLL) / F_COLL_N;
	f = (id - F_COLL) % F_COLL_N;
	k = &s->coll[c];
	if (f == FC_INVOCATIONS)
		k->invocations = v, k->present = true;
	else if (f == FC_TIME)
		k->time_ticks = v;
	else if (f == FC_ENTRY)
		k->last_entry = v;
	else
		k->last_exit = v;
	if ((unsigned int)c + 1 > s->ncollectors)
		s->ncollectors = (unsigned int)c + 1;
}

/* the prologue's byte order, entry offset and count, used bytes: what a layout is of */
static void layout_key(const unsigned char *b, bool big, struct hsperf_layout *lay)
{
	lay->big = big;
	lay->used = hp_rd32(b + 8, big);
	lay->entry_off = hp_rd32(b + 24, big);
	lay->n_entries = hp_rd32(b + 28, big);
}

int hsperf_parse_layout(const void *buf, size_t len, struct hsperf_snap *ret,
			struct hsperf_layout *lay)
{
	const unsigned char *b = buf;
	struct hsperf_snap s;
	__u32 off, n;
	bool big;

	memset(ret, 0, sizeof(*ret));
	if (lay)
		memset(lay, 0, sizeof(*lay));
	if (!buf || len < PROLOGUE_LEN)
		return -ENODATA;
	if (hp_rd32(b, true) != PERFDATA_MAGIC || b[4] > 1 || b[5] != 2)
		return -EINVAL;
	big = b[4] == 0;
	memset(&s, 0, sizeof(s));
	off = hp_rd32(b + 24, big);
	n = hp_rd32(b + 28, big);
	if (n > ENTRIES_MAX)
		n = ENTRIES_MAX;
	for (__u32 i = 0; i < n; i++) {
		const unsigned char *e = b + off;
		__u32 elen, noff, vlen, doff, dlen;
		char name[NAME_MAX_LEN];
		size_t nlen;
		int id;

		/* the walk needs a sane header and length; without one it cannot go on */
		if (off < PROLOGUE_LEN || off > len || len - off < ENTRY_HDR_LEN) {
			s.bad_entries++;
			break;
		}
		elen = hp_rd32(e, big);
		if (elen < ENTRY_HDR_LEN || elen > len - off) {
			s.bad_entries++;
			break;
		}
		noff = hp_rd32(e + 4, big);
		vlen = hp_rd32(e + 8, big);
		doff = hp_rd32(e + 16, big);
		off += elen;
		if (noff < ENTRY_HDR_LEN || noff >= elen || doff < ENTRY_HDR_LEN || doff > elen) {
			s.bad_entries++;
			continue;
		}
		nlen = strnlen((const char *)e + noff, elen - noff);
		if (nlen == elen - noff || nlen >= sizeof(name)) {
			s.bad_entries++;
			continue;
		}
		memcpy(name, e + noff, nlen + 1);
		dlen = e[12] == 'J' ? (vlen ? 0 : 8) : e[12] == 'B' ? vlen : 0;
		if (!dlen || dlen > elen - doff) {
			/* other types (vectors of longs...) are valid PerfData we do not read */
			if (e[12] == 'J' || e[12] == 'B')
				s.bad_entries += dlen > elen - doff;
			s.entries++;
			continue;
		}
		s.entries++;
		id = field_id(name, (char)e[12]);
		if (id == F_NONE)
			continue;
		store(&s, id, e[12] == 'J' ? rd64(e + doff, big) : 0, (const char *)e + doff, dlen);
		if (lay && lay->n < HSPERF_LAYOUT_MAX)
			lay->f[lay->n] = (struct hsperf_field){
				.off = (__u32)(e + doff - b), .len = dlen, .id = id};
		if (lay)
			lay->n++;
	}
	/* a layout only of a file read whole and cleanly, and of no more fields than it holds */
	if (lay && (s.bad_entries || lay->n > HSPERF_LAYOUT_MAX))
		lay->n = 0;
	else if (lay)
		layout_key(b, big, lay);
	*ret = s;
	return 0;
}

int hsperf_parse(const void *buf, size_t len, struct hsperf_snap *ret)
{
	return hsperf_parse_layout(buf, len, ret, NULL);
}

size_t hsperf_layout_end(const struct hsperf_layout *lay)
{
	size_t end = PROLOGUE_LEN;

	for (unsigned int i = 0; i < lay->n && i < HSPERF_LAYOUT_MAX; i++)
		if ((size_t)lay->f[i].off + lay->f[i].len > end)
			end = (size_t)lay->f[i].off + lay->f[i].len;
	return end < HSPERF_FILE_MAX ? end : HSPERF_FILE_MAX;
}

int hsperf_read_layout(const void *buf, size_t len, const struct hsperf_layout *lay,
		       struct hsperf_snap *ret)
{
	const unsigned char *b = buf;
	struct hsperf_layout now;
	struct hsperf_snap s;

	if (!lay->n_entries || !buf || len < PROLOGUE_LEN || hp_rd32(b, true) != PERFDATA_MAGIC ||
	    b[4] > 1 || b[5] != 2)
		return -ESTALE;
	layout_key(b, b[4] == 0, &now);
	if (now.big != lay->big || now.used != lay->used || now.entry_off != lay->entry_off ||
	    now.n_entries != lay->n_entries)
		return -ESTALE;
	memset(&s, 0, sizeof(s));
	for (unsigned int i = 0; i < lay->n; i++) {
		const struct hsperf_field *f = &lay->f[i];

		if (f->off > len || f->len > len - f->off)
			return -ESTALE;
		store(&s, f->id, f->len == 8 ? rd64(b + f->off, lay->big) : 0,
		      (const char *)b + f->off, f->len);
	}
	s.entries = lay->n_entries < ENTRIES_MAX ? lay->n_entries : ENTRIES_MAX;
	*ret = s;
	return 0;
}

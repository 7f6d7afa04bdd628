// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsperf.c: HotSpot's hsperfdata (PerfData v2) reader and the GC/safepoint pauses derived from it. */
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
#define PROLOGUE_LEN   32
#define ENTRY_HDR_LEN  20
#define PERFDATA_MAGIC 0xcafec0c0u
#define ENTRIES_MAX    65536 /* HotSpot has about 600 */
#define NAME_MAX_LEN   256   /* longer names are none we read */
#define EVENTS_MAX     65536 /* observed pauses kept per JVM for percentiles and JFR */
#define CAUSES_MAX     32    /* distinct cause strings interned per JVM */
#define DIR_SCAN_NAMES 4096
#define DIR_SCAN_TRIES 64

static __u32 rd32(const unsigned char *p, bool big)
{
	return big ? (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3]
		   : (__u32)p[3] << 24 | (__u32)p[2] << 16 | (__u32)p[1] << 8 | p[0];
}

static __u64 rd64(const unsigned char *p, bool big)
{
	return big ? (__u64)rd32(p, true) << 32 | rd32(p + 4, true)
		   : (__u64)rd32(p + 4, false) << 32 | rd32(p, false);
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
		{ "sun.os.hrt.frequency", F_FREQ },
		{ "sun.os.hrt.ticks", F_TICKS },
		{ "sun.rt.createVmEndTime", F_VM_END },
		{ "sun.rt.safepoints", F_SAFEPOINTS },
		{ "sun.rt.safepointTime", F_SP_TIME },
		{ "sun.rt.safepointSyncTime", F_SP_SYNC },
	};
	static const char *const coll[F_COLL_N] = { "name", "invocations", "time",
						    "lastEntryTime", "lastExitTime" };
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
	lay->used = rd32(b + 8, big);
	lay->entry_off = rd32(b + 24, big);
	lay->n_entries = rd32(b + 28, big);
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
	if (rd32(b, true) != PERFDATA_MAGIC || b[4] > 1 || b[5] != 2)
		return -EINVAL;
	big = b[4] == 0;
	memset(&s, 0, sizeof(s));
	off = rd32(b + 24, big);
	n = rd32(b + 28, big);
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
		elen = rd32(e, big);
		if (elen < ENTRY_HDR_LEN || elen > len - off) {
			s.bad_entries++;
			break;
		}
		noff = rd32(e + 4, big);
		vlen = rd32(e + 8, big);
		doff = rd32(e + 16, big);
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
				.off = (__u32)(e + doff - b), .len = dlen, .id = id };
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

	if (!lay->n_entries || !buf || len < PROLOGUE_LEN || rd32(b, true) != PERFDATA_MAGIC ||
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

/* ---- one JVM's file and its pauses ---- */

struct kind {
	char name[HSPERF_STR_LEN];
	__u64 count, total_ticks, observed;
	__u64 *durs; /* observed durations, ticks */
	size_t ndurs, cap;
};

struct hsperf {
	int fd;
	unsigned char *buf;
	bool have_prev, from_zero, vm_created;
	struct hsperf_snap prev;
	struct hsperf_layout lay; /* where the last full parse found the fields read */
	__u64 freq_hz;
	__u64 t0_mono_ns;    /* the JVM's tick 0 on CLOCK_MONOTONIC; 0 unknown */
	__u64 start_mono_ns; /* the process's start (10 ms ticks), when the JVM has no hrt.ticks */
	struct kind kinds[HSPERF_COLLECTORS + 1]; /* collectors, then safepoints */
	struct hsperf_gc_event *events;
	size_t nevents, cap_events;
	char causes[CAUSES_MAX][HSPERF_STR_LEN];
	unsigned int ncauses;
	struct hsperf_counters ctr;
};

static int try_open(int tmp, const char *dir, __u32 nspid, uid_t uid)
{
	struct safe_expect exp = {.uid = uid, .max_size = 256ull << 20, .one_link = true};
	char path[320];

	if (strchr(dir, '/') ||
	    snprintf(path, sizeof(path), "%s/%u", dir, nspid) >= (int)sizeof(path))
		return -EINVAL;
	return safe_open_at(tmp, path, SAFE_BENEATH | SAFE_SAME_MOUNT, &exp, NULL);
}

/* the JVM's /tmp, resolved in its root; -errno */
static int open_tmp(__u32 pid)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char path[64];
	int root, tmp;

	(void)snprintf(path, sizeof(path), "/proc/%u/root", pid);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	tmp = (int)syscall(SYS_openat2, root, "tmp", &how, sizeof(how));
	if (tmp < 0)
		tmp = -errno;
	close(root);
	return tmp;
}

/* the hsperfdata_* directories of tmp, bounded: a hostile /tmp may hold millions of names */
static int scan_tmp(int tmp, __u32 nspid, uid_t uid)
{
	int dfd = dup(tmp), fd = -ENOENT, seen = 0, tries = 0;
	struct dirent *d;
	DIR *dir;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -errno;
	}
	while (fd < 0 && seen++ < DIR_SCAN_NAMES && tries < DIR_SCAN_TRIES && (d = readdir(dir))) {
		if (strncmp(d->d_name, "hsperfdata_", 11))
			continue;
		tries++;
		fd = try_open(tmp, d->d_name, nspid, uid);
		if (fd == -EPERM) /* another user's file with this pid's name: keep looking */
			fd = -ENOENT;
	}
	closedir(dir);
	return fd;
}

/*
 * One read buffer for all JVMs (HSPERF_FILE_MAX each would be 1 MiB per JVM, for files
 * of 32 KiB): each poll parses what it read before the next read. Not thread-safe,
 * like the rest of a recording's main loop; freed with the last JVM.
 */
static unsigned char *shared_buf;
static unsigned int shared_users;

static unsigned char *buf_get(void)
{
	if (!shared_buf)
		shared_buf = malloc(HSPERF_FILE_MAX);
	if (shared_buf)
		shared_users++;
	return shared_buf;
}

static void buf_put(void)
{
	if (shared_users && !--shared_users) {
		free(shared_buf);
		shared_buf = NULL;
	}
}

struct hsperf *hsperf__open_fd(int fd, bool from_zero)
{
	struct hsperf *h = calloc(1, sizeof(*h));

	if (h)
		h->buf = buf_get();
	if (!h || !h->buf) {
		free(h);
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	h->fd = fd;
	h->from_zero = from_zero;
	(void)snprintf(h->kinds[HSPERF_COLLECTORS].name, HSPERF_STR_LEN, "safepoints");
	return h;
}

struct hsperf *hsperf__open(__u32 pid, __u32 nspid, uid_t uid, const char *user, bool from_zero)
{
	char dir[HSPERF_STR_LEN + 16];
	struct hsperf *h;
	int tmp, fd = -ENOENT;

	tmp = open_tmp(pid);
	if (tmp < 0) {
		errno = -tmp;
		return NULL;
	}
	if (user && user[0] && snprintf(dir, sizeof(dir), "hsperfdata_%s", user) < (int)sizeof(dir))
		fd = try_open(tmp, dir, nspid, uid);
	if (fd == -ENOENT)
		fd = scan_tmp(tmp, nspid, uid);
	close(tmp);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	h = hsperf__open_fd(fd, from_zero);
	if (h)
		h->start_mono_ns = proc_start_mono_ns(pid);
	return h;
}

void hsperf__close_file(struct hsperf *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	if (h->buf)
		buf_put();
	h->buf = NULL;
}

bool hsperf__is_open(const struct hsperf *h)
{
	return h->fd >= 0;
}

void hsperf__free(struct hsperf *h)
{
	if (!h)
		return;
	if (h->fd >= 0)
		close(h->fd);
	for (size_t i = 0; i <= HSPERF_COLLECTORS; i++)
		free(h->kinds[i].durs);
	free(h->events);
	if (h->buf)
		buf_put();
	free(h);
}

static __u64 ticks_ns(const struct hsperf *h, __u64 t)
{
	/* frequency 1e9 on Linux: nanoseconds; split to avoid overflow otherwise */
	if (!h->freq_hz)
		return t;
	return t / h->freq_hz * 1000000000ull + t % h->freq_hz * 1000000000ull / h->freq_hz;
}

static void add_dur(struct hsperf *h, struct kind *k, __u64 ticks)
{
	k->observed++;
	if (k->ndurs == k->cap) {
		size_t nc = k->cap ? k->cap * 2 : 64;
		__u64 *nd;

		if (nc > EVENTS_MAX || !(nd = realloc(k->durs, nc * sizeof(*nd)))) {
			h->ctr.events_dropped++;
			return;
		}
		k->durs = nd;
		k->cap = nc;
	}
	k->durs[k->ndurs++] = ticks;
}

static const char *intern_cause(struct hsperf *h, const char *cause)
{
	for (unsigned int i = 0; i < h->ncauses; i++)
		if (!strcmp(h->causes[i], cause))
			return h->causes[i];
	if (h->ncauses == CAUSES_MAX)
		return "other";
	(void)snprintf(h->causes[h->ncauses], HSPERF_STR_LEN, "%s", cause);
	return h->causes[h->ncauses++];
}

static void add_event(struct hsperf *h, unsigned int c, const struct hsperf_collector *k,
		      const char *cause)
{
	struct hsperf_gc_event *ev;

	if (h->nevents == h->cap_events) {
		size_t nc = h->cap_events ? h->cap_events * 2 : 64;

		if (nc > EVENTS_MAX || !(ev = realloc(h->events, nc * sizeof(*ev)))) {
			h->ctr.events_dropped++;
			return;
		}
		h->events = ev;
		h->cap_events = nc;
	}
	ev = &h->events[h->nevents++];
	ev->start_rel_ns = ticks_ns(h, k->last_entry);
	ev->duration_ns = ticks_ns(h, k->last_exit - k->last_entry);
	ev->collector = h->kinds[c].name;
	ev->cause = intern_cause(h, cause[0] ? cause : "unknown");
	ev->gc_id = (__u32)(k->invocations * HSPERF_COLLECTORS + c);
}

/* one collector's change between two reads */
static void collector_delta(struct hsperf *h, unsigned int c, const struct hsperf_collector *old,
			    const struct hsperf_collector *cur, const char *cause)
{
	struct kind *k = &h->kinds[c];
	__u64 done = cur->invocations, old_done = old->invocations, dn, dt;

	if (!cur->present)
		return;
	if (cur->name[0])
		memcpy(k->name, cur->name, HSPERF_STR_LEN);
	else if (!k->name[0])
		(void)snprintf(k->name, HSPERF_STR_LEN, "collector %u", c);
	/* a pause in progress is counted when it ends (its exit time then moves) */
	if (cur->last_entry > cur->last_exit && done)
		done--;
	if (old->last_entry > old->last_exit && old_done)
		old_done--;
	if (done < old_done || cur->time_ticks < old->time_ticks)
		return; /* went backwards: not a counter we trust; the next read is the base */
	dn = done - old_done;
	dt = cur->time_ticks - old->time_ticks;
	if (!dn)
		return;
	k->count += dn;
	k->total_ticks += dt;
	if (cur->last_exit != old->last_exit && cur->last_exit >= cur->last_entry) {
		add_dur(h, k, cur->last_exit - cur->last_entry);
		add_event(h, c, cur, cause);
		h->ctr.gc_missed += dn - 1;
	} else {
		h->ctr.gc_missed += dn;
	}
}

int hsperf__poll(struct hsperf *h, __u64 now_ns)
{
	struct hsperf_snap cur, zero;
	const struct hsperf_snap *old;
	struct kind *sp = &h->kinds[HSPERF_COLLECTORS];
	__u64 latest_exit = 0;
	int latest = -1;
	bool in_gc;
	ssize_t len;
	int err;

	/*
	 * The entries stay where they are while the prologue says nothing was added: then
	 * only the bytes up to the last value read are read (12 KiB of a JVM's 32 KiB)
	 */
	if (h->fd < 0 || !h->buf)
		return -EBADF;
	err = -ESTALE;
	if (h->lay.n_entries) {
		len = pread(h->fd, h->buf, hsperf_layout_end(&h->lay), 0);
		if (len < 0)
			return -errno;
		h->ctr.bytes_read += (__u64)len;
		err = hsperf_read_layout(h->buf, (size_t)len, &h->lay, &cur);
	}
	if (err) {
		/*
		 * The prologue first: a file that is not PerfData costs 32 bytes, not
		 * HSPERF_FILE_MAX; one that is is read up to what its prologue says is used
		 */
		size_t want = HSPERF_FILE_MAX;

		len = pread(h->fd, h->buf, PROLOGUE_LEN, 0);
		if (len < 0)
			return -errno;
		h->ctr.bytes_read += (__u64)len;
		err = hsperf_parse_layout(h->buf, (size_t)len, &cur, NULL);
		if (err != -ENODATA && err != -EINVAL) {
			__u32 used = rd32(h->buf + 8, h->buf[4] == 0);

			if (used >= PROLOGUE_LEN && used < HSPERF_FILE_MAX)
				want = used;
			len = pread(h->fd, h->buf, want, 0);
			if (len < 0)
				return -errno;
			h->ctr.bytes_read += (__u64)len;
			err = hsperf_parse_layout(h->buf, (size_t)len, &cur, &h->lay);
		}
	}
	h->ctr.reads++;
	if (err) {
		h->ctr.bad_reads++;
		h->ctr.bad_in_a_row++;
		return err;
	}
	h->ctr.bad_in_a_row = 0;
	h->ctr.bad_entries += cur.bad_entries;
	h->vm_created = cur.vm_created;
	if (cur.freq_hz && !h->freq_hz)
		h->freq_hz = cur.freq_hz;
	if (h->freq_hz && cur.hrt_ticks) {
		/* the JVM samples its tick clock every 50 ms: the tightest bound is the best */
		__u64 t = ticks_ns(h, cur.hrt_ticks);

		if (t < now_ns && (!h->t0_mono_ns || now_ns - t < h->t0_mono_ns))
			h->t0_mono_ns = now_ns - t;
	}
	if (!h->have_prev && !h->from_zero) {
		h->prev = cur;
		h->have_prev = true;
		return 0;
	}
	memset(&zero, 0, sizeof(zero));
	old = h->have_prev ? &h->prev : &zero;
	/*
	 * sun.gc.lastCause is the cause of the JVM's last GC, of any collector: it names the
	 * pause of the collector that ended last (the latest exit time), if that pause is
	 * the one seen now; the others' causes are not known (HotSpot's GCCauseSetter:
	 * lastCause = cause, cause = the new one at a GC's start; back at its end)
	 */
	for (unsigned int c = 0; c < cur.ncollectors; c++)
		if (cur.coll[c].last_exit > latest_exit) {
			latest_exit = cur.coll[c].last_exit;
			latest = (int)c;
		}
	/* while a GC runs, sun.gc.cause is its cause and lastCause is not a finished GC's */
	in_gc = cur.cause[0] && strcmp(cur.cause, "No GC");
	for (unsigned int c = 0; c < cur.ncollectors; c++)
		collector_delta(h, c, &old->coll[c], &cur.coll[c],
				(int)c == latest && !in_gc ? cur.last_cause : "unknown");
	if (cur.has_safepoints && cur.safepoints > old->safepoints &&
	    cur.safepoint_ticks >= old->safepoint_ticks) {
		__u64 dn = cur.safepoints - old->safepoints;
		__u64 dt = cur.safepoint_ticks - old->safepoint_ticks;

		sp->count += dn;
		sp->total_ticks += dt;
		/* one safepoint between two reads: its duration is exact */
		if (dn == 1)
			add_dur(h, sp, dt);
		else
			h->ctr.sp_merged += dn;
	}
	h->prev = cur;
	h->have_prev = true;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

unsigned int hsperf__stats(const struct hsperf *h, struct hsperf_kind_stats *ret, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i <= HSPERF_COLLECTORS && n < max; i++) {
		const struct kind *k = &h->kinds[i];
		struct hsperf_kind_stats *s = &ret[n];

		if (i < HSPERF_COLLECTORS && !k->name[0])
			continue;
		memset(s, 0, sizeof(*s));
		s->name = k->name;
		s->count = k->count;
		s->total_ns = ticks_ns(h, k->total_ticks);
		s->observed = k->observed;
		if (k->ndurs) {
			/* sorting in place is fine: the array only feeds these numbers */
			qsort(k->durs, k->ndurs, sizeof(*k->durs), cmp_u64);
			s->p50_ns = ticks_ns(h, k->durs[(k->ndurs - 1) / 2]);
			s->p99_ns = ticks_ns(h, k->durs[(k->ndurs * 99 + 99) / 100 - 1]);
			s->max_ns = ticks_ns(h, k->durs[k->ndurs - 1]);
		}
		n++;
	}
	return n;
}

const struct hsperf_gc_event *hsperf__gc_events(const struct hsperf *h, size_t *ret_n)
{
	*ret_n = h->nevents;
	return h->events;
}

__u64 hsperf__pause_count(const struct hsperf *h)
{
	__u64 n = 0;

	for (size_t i = 0; i <= HSPERF_COLLECTORS; i++)
		n += h->kinds[i].count;
	return n;
}

bool hsperf__vm_created(const struct hsperf *h)
{
	return h->vm_created;
}

__u64 hsperf__clock_origin_ns(const struct hsperf *h)
{
	return h->t0_mono_ns ? h->t0_mono_ns : h->start_mono_ns;
}

void hsperf__counters(const struct hsperf *h, struct hsperf_counters *ret)
{
	*ret = h->ctr;
}

static void fmt_ms(char *buf, size_t len, __u64 ns)
{
	(void)snprintf(buf, len, "%.3f", ns / 1e6);
}

void hsperf__report(const struct hsperf *h, __u32 pid, const char *main, FILE *f)
{
	struct hsperf_kind_stats st[HSPERF_COLLECTORS + 1];
	unsigned int n = hsperf__stats(h, st, HSPERF_COLLECTORS + 1);
	char tot[32], p50[32], p99[32], max[32];

	__u64 any = 0;

	for (unsigned int i = 0; i < n; i++)
		any += st[i].count;
	/* a host-wide recording sees many JVMs: those without pauses take no room */
	if (!h->ctr.reads || !any)
		return;
	fprintf(f, "jprof: JVM %u (%s) pauses (hsperfdata, %llu reads):\n", pid, main,
		(unsigned long long)h->ctr.reads);
	fprintf(f, "  %-32s %8s %12s %10s %10s %10s %9s\n", "kind", "count", "total_ms", "p50_ms",
		"p99_ms", "max_ms", "observed");
	for (unsigned int i = 0; i < n; i++) {
		fmt_ms(tot, sizeof(tot), st[i].total_ns);
		fmt_ms(p50, sizeof(p50), st[i].p50_ns);
		fmt_ms(p99, sizeof(p99), st[i].p99_ns);
		fmt_ms(max, sizeof(max), st[i].max_ns);
		fprintf(f, "  %-32s %8llu %12s %10s %10s %10s %9llu\n", st[i].name,
			(unsigned long long)st[i].count, tot, p50, p99, max,
			(unsigned long long)st[i].observed);
	}
	if (h->ctr.gc_missed || h->ctr.sp_merged || h->ctr.events_dropped || h->ctr.bad_reads ||
	    h->ctr.bad_entries)
		fprintf(f,
			"  (%llu GC pauses and %llu safepoints between two reads: in count and "
			"total, not in p50/p99/max; %llu events over budget, %llu unreadable "
			"reads, %llu malformed entries)\n",
			(unsigned long long)h->ctr.gc_missed, (unsigned long long)h->ctr.sp_merged,
			(unsigned long long)h->ctr.events_dropped,
			(unsigned long long)h->ctr.bad_reads,
			(unsigned long long)h->ctr.bad_entries);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void hsperf__report_json(const struct hsperf *h, __u32 pid, const char *main, FILE *f)
{
	struct hsperf_kind_stats st[HSPERF_COLLECTORS + 1];
	unsigned int n = hsperf__stats(h, st, HSPERF_COLLECTORS + 1);

	fprintf(f, "{\"pid\":%u,\"main\":", pid);
	json_str(f, main ? main : "");
	fprintf(f,
		",\"reads\":%llu,\"gc_missed\":%llu,\"safepoints_merged\":%llu,"
		"\"events_dropped\":%llu,\"bad_reads\":%llu,\"bad_entries\":%llu,\"kinds\":[",
		(unsigned long long)h->ctr.reads, (unsigned long long)h->ctr.gc_missed,
		(unsigned long long)h->ctr.sp_merged, (unsigned long long)h->ctr.events_dropped,
		(unsigned long long)h->ctr.bad_reads, (unsigned long long)h->ctr.bad_entries);
	for (unsigned int i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, st[i].name);
		fprintf(f,
			",\"count\":%llu,\"total_ns\":%llu,\"observed\":%llu,\"p50_ns\":%llu,"
			"\"p99_ns\":%llu,\"max_ns\":%llu}",
			(unsigned long long)st[i].count, (unsigned long long)st[i].total_ns,
			(unsigned long long)st[i].observed, (unsigned long long)st[i].p50_ns,
			(unsigned long long)st[i].p99_ns, (unsigned long long)st[i].max_ns);
	}
	fputs("]}", f);
}

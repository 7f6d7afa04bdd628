// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsperf_pauses.c: GC and safepoint pauses from two reads of the counters; stats, reports */
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
			__u32 used = hp_rd32(h->buf + 8, h->buf[4] == 0);

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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tsplit.c: a traced call's time split from its thread's off-CPU and system-call events. */
#include <stdio.h>
#include <string.h>

#include "kernel/syscalls.h"
#include "trace/tsplit.h"

__u64 tsplit_overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	__u64 lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static int name_in(const char *n, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(n, *list))
			return 1;
	return 0;
}

/* by name, not number: the same on every architecture */
const char *tsplit_class(__s32 nr, __u8 state)
{
	static const char *const net[] = {
		"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll",	 "ppoll",  "select",
		"pselect6",   "recvfrom",    "recvmsg",	     "recvmmsg", "accept", "accept4",
		"connect",    "sendto",	     "sendmsg",	     "sendmmsg", NULL};
	static const char *const sync[] = {
		"fsync", "fdatasync", "sync_file_range", "sync", "syncfs", "msync", NULL};
	static const char *const rw[] = {"read",    "write",	 "pread64",   "pwrite64",
					 "readv",   "writev",	 "preadv",    "pwritev",
					 "preadv2", "pwritev2",	 "openat",    "open",
					 "close",   "fallocate", "ftruncate", NULL};
	const char *n;

	if (state == TSPLIT_RUNNABLE)
		return "waiting for a CPU";
	if (nr < 0)
		return state == TSPLIT_DISK ? "page fault or I/O" : "other";
	n = syscall_name(nr);
	if (!strcmp(n, "futex") || !strcmp(n, "futex_waitv"))
		return "lock/park/wait";
	if (!strcmp(n, "nanosleep") || !strcmp(n, "clock_nanosleep"))
		return "sleep";
	if (name_in(n, net))
		return "network";
	if (name_in(n, sync))
		return "file I/O";
	if (name_in(n, rw))
		return state == TSPLIT_DISK ? "file I/O" : "pipe/socket I/O";
	return state == TSPLIT_DISK ? "I/O (D)" : "other";
}

static void off_label(const struct tsplit_ev *e, char *buf, size_t n)
{
	if (e->state == TSPLIT_RUNNABLE)
		snprintf(buf, n, "runnable");
	else if (e->nr >= 0)
		snprintf(buf, n, "%s", syscall_name(e->nr));
	else
		snprintf(buf, n, "%s", e->state == TSPLIT_DISK ? "fault" : "sleep");
}

/* the part named name in parts[0..*np), added when there is room; NULL when full */
static struct tsplit_part *part_of(struct tsplit_part *parts, unsigned int *np, unsigned int cap,
				   const char *name)
{
	for (unsigned int i = 0; i < *np; i++)
		if (!strcmp(parts[i].name, name))
			return &parts[i];
	if (*np == cap)
		return NULL;
	memset(&parts[*np], 0, sizeof(parts[0]));
	snprintf(parts[*np].name, sizeof(parts[0].name), "%s", name);
	return &parts[(*np)++];
}

static void sort_parts(struct tsplit_part *p, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int k = i; k > 0 && p[k - 1].ns < p[k].ns; k--) {
			struct tsplit_part t = p[k];

			p[k] = p[k - 1];
			p[k - 1] = t;
		}
}

#define WORK_PARTS 64 /* distinct reasons or calls in one call's split before "the rest" */

void tsplit_compute(const struct tsplit_ev *ev, size_t n, __u64 start_ns, __u64 dur_ns,
		    __u64 lost_until, struct tsplit_res *r)
{
	tsplit_compute3(ev, n, NULL, 0, NULL, 0, start_ns, dur_ns, lost_until, r);
}

/* a batch's share inside the call: d of its span's len (all of it when the span is 0) */
static __u64 share(__u64 v, __u64 d, __u64 len)
{
	if (!len || d >= len)
		return v;
	return (__u64)((double)v * (double)d / (double)len + 0.5);
}

void tsplit_compute3(const struct tsplit_ev *a, size_t na, const struct tsplit_ev *b, size_t nb,
		     const struct tsplit_ev *c, size_t nc, __u64 start_ns, __u64 dur_ns,
		     __u64 lost_until, struct tsplit_res *r)
{
	static __thread struct tsplit_part off[WORK_PARTS], sc[WORK_PARTS];
	__u64 end = start_ns + dur_ns, longest[WORK_PARTS] = {0};
	unsigned int n_off = 0, n_sc = 0;
	char label[TSPLIT_NAME];

	memset(r, 0, sizeof(*r));
	r->dur_ns = dur_ns;
	r->has_kernel = 1;
	r->incomplete = lost_until > start_ns;
	for (size_t i = 0; i < na + nb + nc; i++) {
		const struct tsplit_ev *e = i < na	  ? &a[i]
					    : i < na + nb ? &b[i - na]
							  : &c[i - na - nb];
		__u64 d = tsplit_overlap(e->start_ns, e->end_ns, start_ns, end);
		struct tsplit_part *p;

		/* a call of 0 ns inside the span still counts */
		if (!d && !(e->kind != TSPLIT_OFF && e->start_ns >= start_ns && e->start_ns < end))
			continue;
		if (e->kind == TSPLIT_LOST) {
			r->incomplete = 1;
			continue;
		}
		if (e->kind == TSPLIT_OFF) {
			r->off_ns += d;
			if (e->state == TSPLIT_RUNNABLE)
				r->runnable_ns += d;
			else if (e->state == TSPLIT_DISK)
				r->disk_ns += d;
			else
				r->sleep_ns += d;
			off_label(e, label, sizeof(label));
			p = part_of(off, &n_off, WORK_PARTS, label);
			if (!p) {
				r->off_rest_ns += d;
				continue;
			}
			p->ns += d;
			p->count++;
			if (!p->cls)
				p->cls = tsplit_class(e->nr, e->state);
			if (e->kaddr && d > longest[p - off]) {
				longest[p - off] = d;
				p->kaddr = e->kaddr;
			}
		} else if (e->kind == TSPLIT_SC || e->kind == TSPLIT_SCB) {
			__u32 k = 1;
			__u64 t = d;

			if (e->kind == TSPLIT_SCB) {
				__u64 len = e->end_ns - e->start_ns;

				k = (__u32)share(e->count, d, len);
				t = share(e->sc_ns, d, len);
				if (t > d)
					t = d;
				if (!k)
					continue;
			}
			r->sc_count += k;
			r->sc_ns += t;
			p = part_of(sc, &n_sc, WORK_PARTS,
				    e->nr == TSPLIT_MIXED ? "(short, mixed)" : syscall_name(e->nr));
			if (!p)
				continue; /* counted in sc_count and sc_ns only */
			p->ns += t;
			p->count += k;
		}
	}
	/* one thread is off the CPU once at a time: more is a broken input, capped */
	if (r->off_ns > dur_ns)
		r->off_ns = dur_ns;
	r->cpu_ns = dur_ns - r->off_ns;
	sort_parts(off, n_off);
	sort_parts(sc, n_sc);
	r->n_off = n_off < TSPLIT_TOP ? n_off : TSPLIT_TOP;
	for (unsigned int i = r->n_off; i < n_off; i++)
		r->off_rest_ns += off[i].ns;
	memcpy(r->off, off, r->n_off * sizeof(off[0]));
	r->n_sc = n_sc < TSPLIT_TOP ? n_sc : TSPLIT_TOP;
	memcpy(r->sc, sc, r->n_sc * sizeof(sc[0]));
}

void tsplit_add_pause(struct tsplit_res *r, __u64 call_start_ns, __u64 pause_start_ns,
		      __u64 pause_dur_ns)
{
	__u64 d = tsplit_overlap(pause_start_ns, pause_start_ns + pause_dur_ns, call_start_ns,
				 call_start_ns + r->dur_ns);

	r->has_gc = 1;
	if (!d)
		return;
	r->gc_count++;
	r->gc_ns += d;
}

static double ms(__u64 ns)
{
	return (double)ns / 1e6;
}

#define APPEND(...)                                                         \
	do {                                                                \
		if (len < n) {                                              \
			int w_ = snprintf(buf + len, n - len, __VA_ARGS__); \
			len += w_ > 0 ? (size_t)w_ : 0;                     \
		}                                                           \
	} while (0)

void tsplit_format(const struct tsplit_res *r, int line, char *buf, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	buf[0] = '\0';
	if (line == 0) {
		if (r->has_kernel)
			APPEND("cpu %.2f ms, off-cpu %.2f ms", ms(r->cpu_ns), ms(r->off_ns));
		for (unsigned int i = 0; r->has_kernel && i < r->n_off; i++) {
			const struct tsplit_part *p = &r->off[i];

			APPEND("%s%s %.2f (%s%s%s)", i ? ", " : ": ", p->name, ms(p->ns),
			       p->cls ? p->cls : "?", p->kfunc[0] ? "; " : "", p->kfunc);
		}
		if (r->has_kernel && r->off_rest_ns)
			APPEND(", other %.2f", ms(r->off_rest_ns));
		if (r->has_gc && r->gc_count)
			APPEND("%sgc %u %.2f ms", r->has_kernel ? "; " : "", r->gc_count,
			       ms(r->gc_ns));
		else if (r->has_gc)
			APPEND("%sgc 0", r->has_kernel ? "; " : "");
		if (r->incomplete)
			APPEND(" (incomplete: events lost or unsure)");
		return;
	}
	if (!r->has_kernel)
		return;
	APPEND("syscalls %u, %.2f ms", r->sc_count, ms(r->sc_ns));
	for (unsigned int i = 0; i < r->n_sc; i++)
		APPEND("%s%s %u %.2f ms", i ? ", " : ": ", r->sc[i].name, r->sc[i].count,
		       ms(r->sc[i].ns));
}

static void json_name(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	fputc('"', f);
}

void tsplit_write_json(const struct tsplit_res *r, FILE *f)
{
	fprintf(f, "{\"kernel\":%s,\"incomplete\":%s", r->has_kernel ? "true" : "false",
		r->incomplete ? "true" : "false");
	if (r->has_kernel) {
		fprintf(f,
			",\"cpu_ns\":%llu,\"offcpu_ns\":%llu,\"runnable_ns\":%llu,"
			"\"sleeping_ns\":%llu,\"uninterruptible_ns\":%llu,\"offcpu\":[",
			(unsigned long long)r->cpu_ns, (unsigned long long)r->off_ns,
			(unsigned long long)r->runnable_ns, (unsigned long long)r->sleep_ns,
			(unsigned long long)r->disk_ns);
		for (unsigned int i = 0; i < r->n_off; i++) {
			fprintf(f, "%s{\"reason\":", i ? "," : "");
			json_name(f, r->off[i].name);
			fprintf(f, ",\"class\":");
			json_name(f, r->off[i].cls ? r->off[i].cls : "");
			fprintf(f, ",\"kfunc\":");
			json_name(f, r->off[i].kfunc);
			fprintf(f, ",\"ns\":%llu,\"count\":%u}", (unsigned long long)r->off[i].ns,
				r->off[i].count);
		}
		fprintf(f,
			"],\"offcpu_other_ns\":%llu,\"syscalls_count\":%u,\"syscalls_ns\":%llu,"
			"\"syscalls\":[",
			(unsigned long long)r->off_rest_ns, r->sc_count,
			(unsigned long long)r->sc_ns);
		for (unsigned int i = 0; i < r->n_sc; i++) {
			fprintf(f, "%s{\"name\":", i ? "," : "");
			json_name(f, r->sc[i].name);
			fprintf(f, ",\"count\":%u,\"ns\":%llu}", r->sc[i].count,
				(unsigned long long)r->sc[i].ns);
		}
		fputc(']', f);
	}
	if (r->has_gc)
		fprintf(f, ",\"gc_count\":%u,\"gc_ns\":%llu", r->gc_count,
			(unsigned long long)r->gc_ns);
	fputc('}', f);
}

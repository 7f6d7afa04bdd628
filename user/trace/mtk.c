// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mtk.c: loader of mtrace.bpf.c and reader of its events into per-thread windows (tstore). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "kernel/syscalls.h"
#include "kernel/tp_probe.h"
#include "mtrace.h"
#include "sym/ksyms.h"
#include "trace/mtk.h"
#include "trace/tstore.h"
#include "mtrace.skel.h"

_Static_assert(sizeof(struct jp_mtk_ev) == 48 + 8 * JP_MTK_KSTACK, "mtk event");
_Static_assert(TSPLIT_MIXED == JP_MTK_NR_MIXED, "tsplit mixed");
_Static_assert(TSPLIT_RUNNABLE == JP_MTK_RUNNABLE && TSPLIT_SLEEP == JP_MTK_SLEEP &&
		       TSPLIT_DISK == JP_MTK_DISK,
	       "tsplit states");

#define EV_HEAD	       __builtin_offsetof(struct jp_mtk_ev, kstack)
#define BUDGET_DEFAULT (64u << 20)
#define WINDOW_DEFAULT (30ull * 1000000000ull)
#define THREADS_BPF    16384u

struct mtk {
	struct mtrace_bpf *skel;
	struct ring_buffer *rb;
	struct tstore *st;
	struct ksyms *ks; /* NULL: kernel functions not named */
	__u64 bad;	  /* events of a size not ours */
	__u64 last_lost;  /* the kernel's drops seen so far */
	__u64 end_exit;	  /* intervals ended at their call's return (switch-in not seen) */
	__u64 unsure;	  /* spans sent as unsure: the calls they overlap are incomplete */
};

/* a wait whose return after the wake-up is the call's exit path alone (no copy, no I/O) */
static int wait_call(__s32 nr)
{
	static const char *const waits[] = {"futex", "futex_waitv", "nanosleep", "clock_nanosleep",
					    NULL};
	const char *n;

	if (nr < 0)
		return 0;
	n = syscall_name(nr);
	for (const char *const *w = waits; *w; w++)
		if (!strcmp(n, *w))
			return 1;
	return 0;
}

/*
 * The scheduler's and the tracing's own frames, above where a thread blocked (seen on
 * 6.18: bpf_prog_*, bpf_trace_run4, __schedule, schedule, then futex_do_wait, do_nanosleep,
 * io_schedule + folio_wait_bit, schedule_timeout + unix_stream_read_generic ...)
 */
static int sched_frame(const char *n)
{
	static const char *const pre[] = {
		"__schedule",	  "schedule",		"preempt_schedule",
		"io_schedule",	  "__traceiter_",	"bpf_",
		"__bpf_",	  "__cond_resched",	"_cond_resched",
		"__switch_to",	  "finish_task_switch", "__sched_text",
		"trace_call_bpf", "_einittext",		NULL};

	for (const char *const *p = pre; *p; p++)
		if (!strncmp(n, *p, strlen(*p)))
			return 1;
	return 0;
}

/* the first frame below the scheduler's: where the thread blocked */
static __u64 top_frame(const struct mtk *m, const struct jp_mtk_ev *e)
{
	unsigned int n = e->n_kstack < JP_MTK_KSTACK ? e->n_kstack : JP_MTK_KSTACK;

	for (unsigned int i = 0; i < n; i++) {
		const char *name, *mod;
		__u64 off;

		if (!m->ks)
			return e->kstack[i];
		/* not found, or past the last symbol (a BPF program loaded since) */
		if (ksyms__find(m->ks, e->kstack[i], &name, &mod, &off) || off > (1u << 20))
			continue;
		if (!sched_frame(name))
			return e->kstack[i];
	}
	return 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct mtk *m = ctx;
	const struct jp_mtk_ev *e = data;
	struct tsplit_ev ev = {0};

	if (size < EV_HEAD || e->kind < JP_MTK_OFF || e->kind > JP_MTK_LOST ||
	    e->end_ns < e->start_ns) {
		m->bad++;
		return 0;
	}
	ev.start_ns = e->start_ns;
	ev.end_ns = e->end_ns;
	ev.nr = e->nr;
	ev.kind = e->kind == JP_MTK_OFF	  ? TSPLIT_OFF
		  : e->kind == JP_MTK_SC  ? TSPLIT_SC
		  : e->kind == JP_MTK_SCB ? TSPLIT_SCB
					  : TSPLIT_LOST;
	/*
	 * an interval whose switch-in was not seen, ended at its call's return (mtrace.bpf.c
	 * close_unseen): kept for waits whose way out is a few us, else its span is unsure
	 */
	if (e->kind == JP_MTK_OFF && (e->flags & JP_MTK_F_END_EXIT)) {
		if (wait_call(e->nr)) {
			m->end_exit++;
		} else {
			ev.kind = TSPLIT_LOST;
			m->unsure++;
		}
	} else if (e->kind == JP_MTK_LOST) {
		m->unsure++;
	}
	ev.state = e->state;
	ev.count = e->count;
	ev.sc_ns = e->sc_ns;
	if (e->kind == JP_MTK_OFF && e->n_kstack && size >= sizeof(*e))
		ev.kaddr = top_frame(m, e);
	tstore__add(m->st, e->tgid, e->ns_tid, e->tid, &ev);
	return 0;
}

static void read_stats(struct mtk *m, __u64 *v)
{
	int fd = bpf_map__fd(m->skel->maps.mt_stats), ncpu = libbpf_num_possible_cpus();
	__u64 *per;

	memset(v, 0, JP_MTK_ST_MAX * sizeof(*v));
	if (ncpu <= 0)
		return;
	per = calloc((size_t)ncpu, sizeof(*per));
	if (!per)
		return;
	for (__u32 k = 0; k < JP_MTK_ST_MAX; k++) {
		if (bpf_map_lookup_elem(fd, &k, per))
			continue;
		for (int c = 0; c < ncpu; c++)
			v[k] += per[c];
	}
	free(per);
}

int mtk__start(const __u32 *tgids, size_t n, const struct mtk_opts *o, struct mtk **ret)
{
	struct mtk *m;
	bool btf;
	int err;

	if (n > JP_MTK_PIDS_MAX)
		return -E2BIG;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->st = tstore__new(o->budget_bytes ? o->budget_bytes : BUDGET_DEFAULT,
			    o->window_ns ? o->window_ns : WINDOW_DEFAULT);
	if (!m->st) {
		err = -ENOMEM;
		goto out_free;
	}
	m->ks = ksyms__load_file(NULL); /* NULL: the kernel functions go unnamed */
	m->skel = mtrace_bpf__open();
	if (!m->skel) {
		err = -errno;
		goto out_free;
	}
	if (o->ring_bytes)
		(void)bpf_map__set_max_entries(m->skel->maps.mt_events, (__u32)o->ring_bytes);
	err = bpf_map__set_max_entries(m->skel->maps.mt_thr, THREADS_BPF);
	if (err)
		goto out_free;
	/* tp_btf where the kernel has it (5.5+); raw_tp otherwise */
	btf = tp_btf_supported("sched_switch") && tp_btf_supported("sys_enter") &&
	      tp_btf_supported("sys_exit");
	bpf_program__set_autoload(m->skel->progs.mt_switch_btf, btf);
	bpf_program__set_autoload(m->skel->progs.mt_enter_btf, btf);
	bpf_program__set_autoload(m->skel->progs.mt_exit_btf, btf);
	bpf_program__set_autoload(m->skel->progs.mt_switch_raw, !btf);
	bpf_program__set_autoload(m->skel->progs.mt_enter_raw, !btf);
	bpf_program__set_autoload(m->skel->progs.mt_exit_raw, !btf);
	m->skel->rodata->n_tgids = (__u32)n;
	for (size_t i = 0; i < n; i++)
		m->skel->rodata->tgids[i] = tgids[i];
	err = mtrace_bpf__load(m->skel);
	if (err)
		goto out_free;
	m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.mt_events), on_event, m, NULL);
	if (!m->rb) {
		err = -errno;
		goto out_free;
	}
	err = mtrace_bpf__attach(m->skel);
	if (err)
		goto out_free;
	*ret = m;
	return 0;
out_free:
	mtk__free(m);
	return err;
}

void mtk__free(struct mtk *m)
{
	if (!m)
		return;
	ring_buffer__free(m->rb);
	mtrace_bpf__destroy(m->skel);
	tstore__free(m->st);
	ksyms__free(m->ks);
	free(m);
}

int mtk__poll(struct mtk *m, __u64 now_ns)
{
	__u64 v[JP_MTK_ST_MAX];
	int n = ring_buffer__consume(m->rb);

	/* drops in the kernel name no thread: the calls up to now may miss events */
	read_stats(m, v);
	/* and a malformed record, which cannot be told apart from a lost one */
	if (v[JP_MTK_ST_RB_OFF] + v[JP_MTK_ST_RB_SC] + v[JP_MTK_ST_THR_FULL] + m->bad !=
	    m->last_lost) {
		m->last_lost =
			v[JP_MTK_ST_RB_OFF] + v[JP_MTK_ST_RB_SC] + v[JP_MTK_ST_THR_FULL] + m->bad;
		tstore__mark_lost(m->st, now_ns);
	}
	tstore__prune(m->st, now_ns);
	return n < 0 ? n : 0;
}

void mtk__split(struct mtk *m, __u32 tgid, __u32 ns_tid, __u64 start_ns, __u64 dur_ns,
		struct tsplit_res *r)
{
	struct tsplit_ev open = {0};
	struct jp_mtk_thr thr;
	__u32 tid;
	size_t n_open = 0;

	/*
	 * the thread's batch of short calls still open in the kernel (sent at its next switch,
	 * longer call or after 1 ms): the call's last calls may be in it
	 */
	(void)ring_buffer__consume(m->rb);
	if (!tstore__host_tid(m->st, tgid, ns_tid, &tid) &&
	    !bpf_map_lookup_elem(bpf_map__fd(m->skel->maps.mt_thr), &tid, &thr) && thr.b_count &&
	    thr.off.ns_tid == ns_tid && thr.off.tgid == tgid && thr.b_end >= thr.b_start) {
		open = (struct tsplit_ev){.start_ns = thr.b_start,
					  .end_ns = thr.b_end,
					  .sc_ns = thr.b_ns,
					  .count = thr.b_count,
					  .nr = thr.b_nr,
					  .kind = TSPLIT_SCB};
		n_open = 1;
	}
	tstore__split_with(m->st, tgid, ns_tid, start_ns, dur_ns, &open, n_open, r);
	for (unsigned int i = 0; i < r->n_off; i++) {
		const char *name, *mod;
		__u64 off;

		if (r->off[i].kaddr && m->ks &&
		    !ksyms__find(m->ks, r->off[i].kaddr, &name, &mod, &off))
			snprintf(r->off[i].kfunc, sizeof(r->off[i].kfunc), "%s", name);
	}
}

void mtk__stats(struct mtk *m, struct mtk_stats *ret)
{
	struct tstore_stats ts;
	__u64 v[JP_MTK_ST_MAX];

	read_stats(m, v);
	tstore__stats(m->st, &ts);
	*ret = (struct mtk_stats){.off = v[JP_MTK_ST_OFF],
				  .batched = v[JP_MTK_ST_BATCHED],
				  .batches = v[JP_MTK_ST_BATCHES],
				  .sc = v[JP_MTK_ST_SC],
				  .rb_full = v[JP_MTK_ST_RB_OFF] + v[JP_MTK_ST_RB_SC],
				  .thr_full = v[JP_MTK_ST_THR_FULL],
				  .no_enter = v[JP_MTK_ST_NO_ENTER],
				  .kstack_err = v[JP_MTK_ST_KSTACK],
				  .no_in = v[JP_MTK_ST_NO_IN],
				  .end_exit = m->end_exit,
				  .unsure = m->unsure,
				  .bad = m->bad,
				  .kept_dropped = ts.dropped_budget,
				  .pruned = ts.pruned,
				  .bytes_peak = ts.bytes_peak,
				  .threads = ts.threads};
}

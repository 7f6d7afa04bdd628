// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * interval.c: `jprof daemon`: the recording cut into intervals, each written to the store
 * (store/store.h) as one segment. Intervals end on multiples of --interval in UTC
 * (04:00:00, 04:01:00, ...); each starts where the one before ended, so the segments'
 * ranges are adjacent and never overlap, across restarts too (the first starts no earlier
 * than the newest segment's end).
 *
 * What an interval recorded is what the model's rows hold: at its end they are copied into
 * a model of their own (model__filter: only the functions, locations, stacks and labels
 * they use), written, and dropped (model__reset). The model's tables stay, so the model ids
 * the join caches (frames, threads' last stacks, agent events waiting) stay valid, and a
 * sample committed after the cut counts in the next interval only. The tables grow with
 * every new frame, so once they pass DICT_MAX_BYTES the model is replaced by an empty one
 * and the join drops every id it cached (join__model_reset). Samples waiting in the join
 * for their Java trace (up to 3 s) land in the interval in which they are joined.
 */
#include <sys/mman.h>

#include "record/record_int.h"
#include "ring.h" /* JP_RING_F_EV_*: join__missing_events */
#include "model/filter.h"
#include "model/spread.h"
#include "store/store.h"
#include "daemon/ctl.h"
#include "daemon/metrics.h"
#include "daemon/config.h"
#include "daemon/push.h"
#include "daemon/rollups.h"
#include "util/why.h"

#define NS_PER_S 1000000000ull
/*
 * The model's tables (without rows) past this are replaced. A host's frames of a day fit
 * in far less; JIT code that moves makes new locations, which is what this bounds. A daemon
 * lives in 64 MB with everything else (10 JVMs: agent dictionaries and symbols 20-30 MB);
 * replacing costs the next interval's stacks interned again. JPROF_MODEL_MAX_KB: a test's.
 */
#define DICT_MAX_BYTES (16ull << 20)

static __u64 model_max_bytes(void)
{
	const char *e = getenv("JPROF_MODEL_MAX_KB");
	unsigned long v;
	char *end;

	if (!e || !*e || e[0] == '-')
		return DICT_MAX_BYTES;
	errno = 0;
	v = strtoul(e, &end, 10);
	return errno || *end || !v || v > (1ul << 30) ? DICT_MAX_BYTES : (__u64)v << 10;
}

struct rec_interval {
	struct store *store;
	__u64 start_s, next_end_s; /* the open interval, UTC seconds */
	__u64 open_mono_ns;	   /* when it opened, by the monotonic clock */
	/* the counters at its start: a segment says what its interval took and lost */
	__u64 samples0, kst0[JP_STAT_MAX];
	bool failing; /* the last write failed: said once, until one succeeds */
	__u64 dropped, dropped_samples, failing_since;
	unsigned int resets; /* models replaced (their tables past model_max_bytes) */
	struct ctl_server *ctl; /* DIR/control.sock: jprof dump; NULL when it could not listen */
	struct metrics *metrics; /* --metrics: GET /metrics; NULL: off */
	__u64 metrics_ns;	 /* the counters' last hand-over (CLOCK_MONOTONIC) */
	__u64 last_write_s;	 /* when the newest segment was written (UTC seconds) */
	/* what SIGHUP may change: the interval's length, the store's limits, the rate */
	unsigned int interval_s;
	unsigned int freq_hz; /* the CPU sampler's rate now (-F, or --config's rate) */
	bool offcpu_off;      /* the off-CPU programs loaded at the start, detached by a SIGHUP */
	char events[64];      /* offcpu_off: the events recorded now, as segments say them */
	struct store_limits lim;
	struct rec_triggers *triggers; /* --mark-on-pause, -oom, -cpu; NULL: off */
	struct pusher *pusher;	       /* --push-pyroscope, -otlp, -parca; NULL: off */
	struct rollups *rollups;       /* each completed hour's segments merged; NULL: none */
};

unsigned int rec_interval_length(const struct rec *r)
{
	if (r->iv && r->iv->interval_s)
		return r->iv->interval_s;
	return r->o->interval_s ? r->o->interval_s : 60;
}

static volatile sig_atomic_t hup; /* SIGHUP: --config read again at the next round */

static void on_hup(int sig)
{
	(void)sig;
	hup = 1;
}

int rec_interval_signals(void)
{
	struct sigaction sa = {.sa_handler = on_hup}; /* no SA_RESTART: poll sees EINTR */

	sigemptyset(&sa.sa_mask);
	return sigaction(SIGHUP, &sa, NULL) ? -errno : 0;
}

/*
 * The roll-ups' period: an hour, JPROF_ROLLUP_S seconds for tests (1 to 86400, 0: none), so
 * that a test sees them in seconds
 */
static unsigned int rollup_period(void)
{
	const char *e = getenv("JPROF_ROLLUP_S");
	unsigned long v;
	char *end;

	if (!e || !*e)
		return STORE_ROLLUP_S;
	errno = 0;
	v = strtoul(e, &end, 10);
	if (errno || *end || v > 86400 || e[0] == '-') {
		pr_warn("JPROF_ROLLUP_S=%.32s is not 0 to 86400 seconds: an hour", e);
		return STORE_ROLLUP_S;
	}
	return (unsigned int)v;
}

static __u64 real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * NS_PER_S + (__u64)ts.tv_nsec;
}

/* the first multiple of interval_s after t_s */
static __u64 next_boundary(__u64 t_s, unsigned int interval_s)
{
	return (t_s / interval_s + 1) * interval_s;
}

int rec_interval_open(struct rec *r)
{
	const struct jp_opts *o = r->o;
	struct store_limits lim = {.max_age_s = o->max_age_s, .max_size = o->max_size};
	struct rec_interval *iv = calloc(1, sizeof(*iv));
	__u64 now_s = real_ns() / NS_PER_S, newest;
	struct store_stats st;
	char why[512];
	size_t n;
	int err;

	if (!iv)
		return -ENOMEM;
	/* what SIGHUP changes of the options (record_meta, record_view read r->o) */
	r->o_live = *o;
	r->o = &r->o_live;
	err = store__open_writer(o->store, &lim, now_s, &iv->store, why, sizeof(why));
	if (err) {
		pr_err("cannot use the store %s: %s", o->store, why[0] ? why : strerror(-err));
		free(iv);
		return err;
	}
	store__stats(iv->store, &st);
	if (st.swept)
		pr_info("store %s: removed %llu unfinished segment%s of a daemon that was killed",
			o->store, (unsigned long long)st.swept, st.swept > 1 ? "s" : "");
	newest = store__newest_end(iv->store);
	iv->interval_s = o->interval_s;
	iv->freq_hz = o->freq_hz;
	iv->lim = lim;
	iv->start_s = newest > now_s ? newest : now_s;
	iv->next_end_s = next_boundary(iv->start_s, iv->interval_s);
	iv->open_mono_ns = mono_ns();
	if (o->metrics) {
		err = metrics__start(o->metrics, &iv->metrics, why, sizeof(why));
		if (err) { /* asked for: not serving it is an error, not a warning */
			pr_err("--metrics: %s", why);
			store__free(iv->store);
			free(iv);
			return err;
		}
		pr_info("serving Prometheus metrics on http://%s%s/metrics",
			strchr(o->metrics, ':') ? "" : "127.0.0.1:", o->metrics);
	}
	err = ctl__listen(store__dirfd(iv->store), &iv->ctl, why, sizeof(why));
	if (err) /* the segments are what matters: the daemon records without it */
		pr_warn("store %s: no control socket, jprof dump will not reach this daemon: %s",
			o->store, why[0] ? why : strerror(-err));
	(void)store__segments(iv->store, &n);
	pr_info("store %s: %zu segments (%.1f MB); a segment every %u s, kept %llu s and under "
		"%llu bytes (0: no limit)",
		o->store, n, store__bytes(iv->store) / 1e6, o->interval_s,
		(unsigned long long)o->max_age_s, (unsigned long long)o->max_size);
	iv->triggers = rec_triggers_new(o);
	iv->rollups = rollups__new(o->store, rollup_period());
	if (o->push_url || o->push_otlp || o->push_parca) { /* the segments wait in the store */
		char app[256], host[128] = "";
		struct push_conf pc = {.app = app, .host = host, .rate_hz = o->freq_hz};

		pc.urls[PUSH_PYROSCOPE] = o->push_url;
		pc.urls[PUSH_OTLP] = o->push_otlp;
		pc.urls[PUSH_PARCA] = o->push_parca;
		if (gethostname(host, sizeof(host) - 1))
			snprintf(host, sizeof(host), "unknown");
		if (o->push_name)
			snprintf(app, sizeof(app), "%s", o->push_name);
		else
			snprintf(app, sizeof(app), "jprof{host=%s}", host);
		err = pusher__start(o->store, &pc, &iv->pusher, why, sizeof(why));
		if (err)
			pr_warn("push: %s; the segments stay in the store only",
				why[0] ? why : strerror(-err));
		for (int k = 0; k < PUSH_KIND_MAX && !err; k++) {
			char url[PUSH_URL_MAX + 64];

			if (!pc.urls[k])
				continue;
			if (k == PUSH_OTLP)
				(void)push_otlp_url(pc.urls[k], url, sizeof(url));
			else if (k == PUSH_PARCA)
				(void)push_parca_url(pc.urls[k], url, sizeof(url));
			else
				snprintf(url, sizeof(url), "%s", pc.urls[k]);
			pr_info("pushing the store's segments to %s (%s, %s %s)", url,
				push_kind_name(k), k == PUSH_OTLP ? "host.name" : "as",
				k == PUSH_OTLP ? host : app);
		}
	}
	r->iv = iv;
	return 0;
}

struct seg_ctx {
	const struct out_input *in;
};

static int write_seg(void *ctx, FILE *f)
{
	const struct seg_ctx *c = ctx;

	return out_write(OUT_PPROF, c->in, f);
}

/* the model's tables past their budget: an empty model, and the join forgets the old ids */
static void bound_model(struct rec *r)
{
	struct model_mem mm;
	struct model *m;

	model__mem(r->model, &mm);
	if (mm.bytes <= model_max_bytes() || !(m = rec_model_new()))
		return; /* out of memory: tried again after the next interval */
	join__model_reset(r->join, m);
	model__free(r->model);
	r->model = m;
	r->iv->resets++;
	pr_debug("daemon: the model's tables took %.1f MB: replaced by an empty one (%u so far)",
		 mm.bytes / 1e6, r->iv->resets);
}

/* a write failed: said once, then counted until one succeeds */
static void note_failure(struct rec *r, const char *name, int err, __u64 samples)
{
	struct rec_interval *iv = r->iv;

	iv->dropped++;
	iv->dropped_samples += samples;
	if (iv->failing)
		return;
	iv->failing = true;
	iv->failing_since = iv->dropped - 1;
	pr_warn("store %s: segment %s not written: %s; the daemon goes on, and drops (and "
		"counts) segments until one can be written",
		r->o->store, name,
		err == -EFBIG ? "larger than --max-size on its own" : strerror(-err));
}

/* "cpu,offcpu" less "offcpu": what segments say while the off-CPU programs are detached */
static void events_without_offcpu(const char *all, char *buf, size_t len)
{
	char tmp[64], *save = NULL;
	size_t n = 0;

	snprintf(tmp, sizeof(tmp), "%s", all);
	buf[0] = '\0';
	for (char *e = strtok_r(tmp, ",", &save); e && n < len; e = strtok_r(NULL, ",", &save))
		if (strcmp(e, "offcpu"))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", e);
}

/* the open interval's account, [start_s, end_s), as its segment says it */
static void interval_meta(struct rec *r, struct out_meta *meta, char *losses, size_t llen,
			 __u64 end_s)
{
	struct rec_interval *iv = r->iv;
	__u64 st[JP_STAT_MAX], rb, off;

	rec_kstats(r, st);
	rec_segment_meta(r, meta);
	if (meta->freq_hz) /* a SIGHUP may have changed it since the start */
		meta->freq_hz = iv->freq_hz;
	if (iv->offcpu_off) { /* the start's events (and SIGHUP's alloc) less offcpu */
		events_without_offcpu(meta->events ? meta->events : "", iv->events,
				      sizeof(iv->events));
		meta->events = iv->events;
	}
	meta->start_unix_ns = iv->start_s * NS_PER_S;
	meta->duration_ns = (end_s - iv->start_s) * NS_PER_S;
	meta->samples = rec_js_samples(r) - iv->samples0;
	rb = st[JP_STAT_RB_DROPS] - iv->kst0[JP_STAT_RB_DROPS];
	off = st[JP_STAT_OFFCPU_LOST] - iv->kst0[JP_STAT_OFFCPU_LOST];
	meta->lost = rb + off;
	snprintf(losses, llen, "%llu ring buffer full, %llu off-CPU not stored",
		 (unsigned long long)rb, (unsigned long long)off);
	meta->losses = losses;
}

/* the open interval, [start_s, end_s), into a segment; its rows then go */
static void write_interval(struct rec *r, __u64 end_s, __u64 now_s)
{
	struct rec_interval *iv = r->iv;
	struct model_filter all = {0};
	struct model *cut = model__new();
	struct out_input in = {0};
	struct seg_ctx ctx = {.in = &in};
	struct out_meta meta;
	__u64 st[JP_STAT_MAX], samples = rec_js_samples(r);
	char losses[128], name[STORE_NAME_LEN];
	int err;

	rec_kstats(r, st);
	(void)store_seg_name(iv->start_s, end_s, name, sizeof(name));
	err = cut ? model__filter(r->model, &all, cut) : -ENOMEM;
	if (!err)
		err = model__spread_cpu(cut); /* as a recording's end does (join__flush) */
	if (!err) {
		interval_meta(r, &meta, losses, sizeof(losses), end_s);
		in.model = cut;
		in.meta = &meta;
		rec_segment_view(r, &in.view);
		err = store__write(iv->store, iv->start_s, end_s, now_s, write_seg, &ctx);
	}
	if (err) {
		note_failure(r, name, err, samples - iv->samples0);
		goto out_reset;
	}
	iv->last_write_s = now_s;
	(void)store__index_add(iv->store, name, samples - iv->samples0); /* a hint for readers */
	pusher__kick(iv->pusher); /* it sends the new segment now, not at its next look */
	if (iv->failing) {
		iv->failing = false;
		pr_info("store %s: writing again; %llu segment%s dropped meanwhile", r->o->store,
			(unsigned long long)(iv->dropped - iv->failing_since),
			iv->dropped - iv->failing_since > 1 ? "s" : "");
	}
out_reset:
	model__free(cut);
	for (int v = 0; v < JP_VAL_MAX; v++)
		r->cut_totals[v] += model__total(r->model, v);
	model__reset(r->model);
	iv->samples0 = samples;
	memcpy(iv->kst0, st, sizeof(st));
	bound_model(r); /* the next segment's clock: rec_interval_clock, once its start is set */
}

/*
 * The model's slot 0 at the open interval's start, the second its segment is named from and
 * its pprof says (not the moment it was opened: a restart's first interval starts where the
 * last segment ended, maybe a moment from now; samples before it go to slot 0)
 */
void rec_interval_clock(struct rec *r)
{
	__u64 wall0 = r->iv->start_s * NS_PER_S, wnow = real_ns(), mnow = mono_ns(), mono0;

	if (wall0 <= wnow)
		mono0 = wnow - wall0 < mnow ? mnow - (wnow - wall0) : 1;
	else
		mono0 = mnow + (wall0 - wnow);
	model__set_clock(r->model, mono0, wall0);
	kernel_session__agg_clock(r->ks, mono0); /* BPF's counts in the same slots */
}

/*
 * jprof dump (daemon/ctl.h): the open interval's rows copied (the model keeps them: the
 * interval goes on) and written as pprof into fd, a memfd passed to the client
 */
static int dump_open(void *ctx, int fd, __u64 *ret_start_s, __u64 *ret_end_s, char *why,
		     size_t why_len)
{
	struct rec *r = ctx;
	struct rec_interval *iv = r->iv;
	struct model_filter all = {0};
	struct model *cut = model__new();
	struct out_input in = {0};
	struct out_meta meta;
	__u64 now_s = real_ns() / NS_PER_S, end_s;
	char losses[128];
	int dfd = -1, err;
	FILE *f = NULL;

	end_s = now_s > iv->start_s ? now_s : iv->start_s + 1;
	err = cut ? model__filter(r->model, &all, cut) : -ENOMEM;
	if (!err)
		err = model__spread_cpu(cut);
	if (!err) {
		interval_meta(r, &meta, losses, sizeof(losses), end_s);
		in.model = cut;
		in.meta = &meta;
		rec_segment_view(r, &in.view);
		dfd = dup(fd);
		f = dfd >= 0 ? fdopen(dfd, "w") : NULL;
		if (!f) {
			err = -errno;
			if (dfd >= 0)
				close(dfd);
		}
	}
	if (!err)
		err = out_write(OUT_PPROF, &in, f);
	if (f && fclose(f) && !err)
		err = -errno;
	model__free(cut);
	if (err) {
		snprintf(why, why_len, "%s", strerror(-err));
		return err;
	}
	*ret_start_s = iv->start_s;
	*ret_end_s = end_s;
	pr_debug("daemon: dumped the open interval (%llu s, %zu rows)",
		 (unsigned long long)(end_s - iv->start_s), model__rows(r->model));
	return 0;
}

/* the last back_s seconds and the open interval (snap_fd) kept as a mark of the store */
static int keep_mark(struct rec *r, const char *name, __u32 back_s, int snap_fd,
		     __u64 snap_start_s, __u64 snap_end_s, char *ret_dir, size_t dir_len,
		     size_t *ret_n, char *why, size_t why_len)
{
	__u64 now_s = real_ns() / NS_PER_S;
	int err;

	err = store__mark(r->iv->store, name, now_s > back_s ? now_s - back_s : 0, now_s + 1,
			  snap_fd, snap_start_s, snap_end_s, ret_dir, dir_len, ret_n, why, why_len);
	if (err)
		pr_warn("daemon: a mark '%s' was asked for and not kept: %s", name,
			why[0] ? why : strerror(-err));
	return err;
}

/* jprof dump --mark (daemon/ctl.h) */
static int mark_window(void *ctx, const char *name, __u32 back_s, int snap_fd, __u64 snap_start_s,
		       __u64 snap_end_s, char *ret_dir, size_t dir_len, size_t *ret_n, char *why,
		       size_t why_len)
{
	int err = keep_mark(ctx, name, back_s, snap_fd, snap_start_s, snap_end_s, ret_dir,
			    dir_len, ret_n, why, why_len);

	if (!err)
		pr_info("daemon: kept the last %u s as %s (%zu segments), outside the limits",
			back_s, ret_dir, *ret_n);
	return err;
}

int rec_interval_mark(struct rec *r, const char *name, __u32 back_s, char *dir, size_t dir_len,
		      size_t *ret_n, char *why, size_t why_len)
{
	int fd = memfd_create("jprof-mark", MFD_CLOEXEC), err;
	__u64 a = 0, b = 0;

	if (fd < 0)
		return set_why(why, why_len, -errno, "%s", strerror(errno));
	err = dump_open(r, fd, &a, &b, why, why_len);
	if (!err)
		err = keep_mark(r, name, back_s, fd, a, b, dir, dir_len, ret_n, why, why_len);
	close(fd);
	return err;
}

/* the open interval written now, up to now rounded up; the next one starts there */
static void cut_interval(struct rec *r)
{
	struct rec_interval *iv = r->iv;
	__u64 now_ns = real_ns(), now_s = now_ns / NS_PER_S, end_s;

	end_s = (now_ns + NS_PER_S - 1) / NS_PER_S;
	if (end_s <= iv->start_s)
		end_s = iv->start_s + 1;
	write_interval(r, end_s, now_s);
	iv->start_s = end_s;
	rec_interval_clock(r);
	iv->next_end_s = next_boundary(end_s > now_s ? end_s : now_s, iv->interval_s);
	iv->open_mono_ns = mono_ns();
}

/*
 * SIGHUP's new rate: the open interval is written now as a segment of its own (every sample
 * of a segment at one rate, which its period says), then every CPU's perf event samples at
 * hz from the next sample on. The samples' CPU time is each thread's runtime between two
 * samples (cpu.bpf.c), so it stays right across the change; a thread that ran before the
 * recording and has no sample yet still weighs the start's period once.
 */
static void set_rate(struct rec *r, unsigned int hz)
{
	struct rec_interval *iv = r->iv;
	unsigned int was = iv->freq_hz;
	int err;

	if (!(r->o->events & (1u << JP_EV_CPU)) || !r->ks) {
		pr_warn("SIGHUP: rate %u Hz: this daemon does not sample CPUs (-e %s); nothing "
			"changes",
			hz, rec_events_shown(r->o));
		return;
	}
	cut_interval(r);
	err = kernel_session__set_freq(r->ks, hz);
	if (err == -EIO) /* some CPUs took it: all back at the old rate */
		(void)kernel_session__set_freq(r->ks, was);
	if (err) {
		pr_warn("SIGHUP: rate %u Hz: the kernel refused it (%s%s); it samples at %u Hz", hz,
			strerror(-err),
			err == -EINVAL ? ": over kernel.perf_event_max_sample_rate?" : "", was);
		return;
	}
	iv->freq_hz = hz;
	r->freq_now = hz;
	rec_triggers_set_rate(iv->triggers, hz);
	pusher__set_rate(iv->pusher, hz);
	pr_info("SIGHUP: sampling at %u Hz from now (was %u Hz); the interval until now was "
		"written as a segment of its own",
		hz, was);
}


/*
 * SIGHUP's agent events (JP_AGENT_EV_ALLOC, _LOCK), on or off from now (the open interval
 * was written first: cut). On: every connected agent that lacks one is loaded once more,
 * which adds its JVMTI capability and callback (jvmagent/agent.c add_events), and new JVMs
 * are attached with it; the heartbeat's stamps switch it on. Off: the stamps stop and each
 * agent switches it off within JP_RING_READER_GONE_MS; records still under way are
 * skipped and counted.
 */
static void set_agent_events(struct rec *r, __u32 on, __u32 changed, const char *events)
{
	struct jp_opts *o = &r->o_live;
	__u32 ring = (on & changed & JP_AGENT_EV_ALLOC ? JP_RING_F_EV_ALLOC : 0) |
		     (on & changed & JP_AGENT_EV_LOCK ? JP_RING_F_EV_LOCK : 0);
	char opts[128];
	unsigned int again = 0;

	o->agent_events = (o->agent_events & ~changed) | (on & changed);
	join__set_agent_events(r->join, o->agent_events, rec_wanted_agent_events(o));
	if (attacher__set_options(r->att, rec_agent_options(o, opts, sizeof(opts))))
		pr_warn("SIGHUP: events %s: out of memory: JVMs found from now are attached "
			"with the old options",
			events);
	for (size_t i = 0; ring && i < r->nagents; i++)
		if (r->agents[i].pid && join__missing_events(r->join, r->agents[i].pid, false) & ring &&
		    !attacher__load_again(r->att, r->agents[i].pid, mono_ns()))
			again++;
	for (__u32 bit = JP_AGENT_EV_LOCK; bit <= JP_AGENT_EV_ALLOC; bit <<= 1) {
		const char *what = bit == JP_AGENT_EV_LOCK ? "lock contention" : "allocation sampling";

		if (!(changed & bit))
			continue;
		if (on & bit)
			pr_info("SIGHUP: events %s: %s on from now (%u JVM%s load the agent again "
				"to add it)",
				events, what, again, again == 1 ? "" : "s");
		else
			pr_info("SIGHUP: events %s: %s off from now", events, what);
	}
}

/*
 * The off-CPU programs as SIGHUP's events want them: loaded while off-CPU time is shown or
 * -e lock needs its parks (or -e wall), detached when neither does. Off-CPU time shows
 * only if the daemon started with it (the join marks and collapses it as the start's
 * events said); under -e lock alone the join keeps the parks and drops the rest.
 */
static void set_offcpu(struct rec *r, bool show, bool lock, const char *events)
{
	const struct jp_opts *o = r->o;
	struct rec_interval *iv = r->iv;
	bool had = r->offcpu != NULL;

	if (!show && !lock && !o->wall && had) {
		offcpu__free(r->offcpu);
		r->offcpu = NULL;
	} else if ((show || lock || o->wall) && !had) {
		struct offcpu_opts oo = {.min_block_ns = (__u64)o->min_block_us * 1000,
					 .parks = lock};
		int e = offcpu__start(r->ks, &oo, &r->offcpu);

		if (e)
			pr_warn("SIGHUP: events %s: the off-CPU programs would not attach: %s",
				events, strerror(-e));
		else
			/* what blocked before it was attached is not in the segments */
			offcpu__set_window(r->offcpu, mono_ns());
	}
	iv->offcpu_off = !(show && r->offcpu);
	join__set_parks(r->join, lock && r->offcpu, lock && !(show && r->offcpu));
	pr_info("SIGHUP: events %s: off-CPU programs %s; segments from now hold %s", events,
		r->offcpu ? (had ? "kept" : "attached") : "detached",
		!iv->offcpu_off      ? "off-CPU time" :
		lock && r->offcpu ? "the parks of -e lock, no other off-CPU time" :
				    "no off-CPU time");
}

/*
 * SIGHUP's events. Off-CPU, alloc and lock change now (the open interval is written first,
 * as a segment of its own): set_offcpu, set_agent_events. Off-CPU time shows only if the
 * daemon started with it; what needs other programs or other agent settings than the
 * start loaded (syscalls, live, wall) waits for the next start, and the line says which.
 */
static void set_events(struct rec *r, const char *events)
{
	const struct jp_opts *o = r->o;
	struct rec_interval *iv = r->iv;
	struct jp_opts *now = calloc(1, sizeof(*now));
	char *av[] = {"jprof", "daemon", "-e", (char *)events, NULL}, err[256];
	const __u32 off = 1u << JP_EV_OFFCPU, live = JP_AGENT_EV_ALLOC | JP_AGENT_EV_LOCK;
	bool started_off = o->events & off, shown_off, want_off, lock_now, want_lock;
	__u32 changed;

	if (!now || opts_parse(4, av, now, err, sizeof(err))) {
		free(now);
		return; /* dconf_read checked it: only out of memory comes here */
	}
	want_off = now->events & off;
	shown_off = started_off && r->offcpu && !iv->offcpu_off;
	changed = (now->agent_events ^ o->agent_events) & live;
	want_lock = now->agent_events & JP_AGENT_EV_LOCK;
	lock_now = o->agent_events & JP_AGENT_EV_LOCK;
	if ((now->events & ~off) != (o->events & ~off) ||
	    (now->agent_events & ~live) != (o->agent_events & ~live) || now->wall != o->wall)
		pr_warn("SIGHUP: events %s: at the daemon's next start: only off-CPU, lock and "
			"alloc change while it runs (the others need other BPF programs or agent "
			"settings than it started with)",
			events);
	if (want_off && !started_off) {
		pr_warn("SIGHUP: events %s: off-CPU at the daemon's next start (it started "
			"without it)",
			events);
		want_off = false;
	}
	if (want_off == shown_off && !changed) {
		free(now);
		return;
	}
	cut_interval(r); /* what it recorded before: a segment of its own */
	if (want_off != shown_off || want_lock != lock_now)
		set_offcpu(r, want_off, want_lock, events);
	if (changed)
		set_agent_events(r, now->agent_events, changed, events);
	free(now);
}

/*
 * SIGHUP: --config read again. The interval's length, the store's limits, the rate,
 * off-CPU and alloc change now (the open interval is kept and ends at the new length's next
 * boundary; a new rate or an event's change writes it first: set_rate, set_events); the
 * other events need other BPF programs or agent settings, so they wait for the next start,
 * and say so.
 */
static void reload(struct rec *r)
{
	const struct jp_opts *o = r->o;
	struct rec_interval *iv = r->iv;
	struct daemon_config c;
	struct store_limits lim = iv->lim;
	__u64 now_s = real_ns() / NS_PER_S;
	char why[512];

	if (!o->config) {
		pr_info("SIGHUP: no --config to read again; nothing changes");
		return;
	}
	if (dconf_read(o->config, &c, why, sizeof(why))) {
		pr_warn("SIGHUP: --config %s; the daemon goes on as it was", why);
		return;
	}
	if (c.has_max_age)
		lim.max_age_s = c.max_age_s;
	if (c.has_max_size)
		lim.max_size = c.max_size;
	store__set_limits(iv->store, &lim);
	iv->lim = lim;
	(void)store__rotate(iv->store, now_s);
	if (c.has_interval && c.interval_s != iv->interval_s) {
		iv->interval_s = c.interval_s;
		iv->next_end_s = next_boundary(iv->start_s > now_s ? iv->start_s : now_s,
					       iv->interval_s);
	}
	pr_info("SIGHUP: read %s again: a segment every %u s, kept %llu s and under %llu bytes; "
		"the open interval goes on",
		o->config, iv->interval_s, (unsigned long long)lim.max_age_s,
		(unsigned long long)lim.max_size);
	if (c.has_rate && c.rate_hz != iv->freq_hz)
		set_rate(r, c.rate_hz);
	if (c.has_events)
		set_events(r, c.events);
}

/* --metrics: the counters handed to the HTTP thread, once a second */
static void update_metrics(struct rec *r, __u64 now_ns)
{
	struct rec_interval *iv = r->iv;
	struct metrics_values v = {0};
	struct ptable_stats pt;
	struct store_stats st;
	__u64 ks[JP_STAT_MAX];

	if (!iv->metrics || now_ns - iv->metrics_ns < NS_PER_S)
		return;
	iv->metrics_ns = now_ns;
	rec_kstats(r, ks);
	store__stats(iv->store, &st);
	ptable__stats(r->procs, &pt);
	v.samples = rec_js_samples(r);
	v.lost_ringbuf = ks[JP_STAT_RB_DROPS];
	v.lost_offcpu = ks[JP_STAT_OFFCPU_LOST];
	for (size_t i = 0; i < r->nagents; i++) /* slots of retired JVMs have pid 0 */
		v.jvms_attached += r->agents[i].pid != 0;
	v.processes_held = pt.live;
	v.segments_written = st.written;
	v.dropped_full = st.dropped_full;
	v.dropped_big = st.dropped_big;
	v.dropped_error = st.dropped_error;
	v.store_bytes = store__bytes(iv->store);
	v.last_segment_unix_s = iv->last_write_s;
	ctl__counts(iv->ctl, &v.dumps, &v.ctl_refused, &v.ctl_bad);
	_Static_assert(sizeof(v.push) / sizeof(v.push[0]) == PUSH_KIND_MAX,
		       "metrics_values.push: one entry per push target");
	for (int k = 0; k < PUSH_KIND_MAX; k++) {
		struct push_stats ps;

		if (!pusher__stats(iv->pusher, k, &ps))
			continue;
		v.push[k].on = true;
		v.push[k].sent = ps.sent;
		v.push[k].failed = ps.failed;
		v.push[k].rejected = ps.rejected;
		v.push[k].expired_s = ps.expired;
		v.push[k].backlog = ps.backlog;
	}
	metrics__update(iv->metrics, &v);
}

void rec_interval_tick(struct rec *r, bool final)
{
	struct rec_interval *iv = r->iv;
	unsigned int interval_s;
	__u64 now_ns, now_s, end_s;

	if (!iv)
		return;
	if (!final) {
		struct ctl_fns fns = {.dump = dump_open, .mark = mark_window, .ctx = r};

		if (hup) {
			hup = 0;
			reload(r);
		}
		ctl__poll(iv->ctl, mono_ns(), &fns);
		rollups__tick(iv->rollups, iv->store, iv->start_s, real_ns() / NS_PER_S);
		rec_triggers_tick(r, iv->triggers, mono_ns());
		update_metrics(r, mono_ns());
	}
	interval_s = iv->interval_s;
	now_ns = real_ns();
	now_s = now_ns / NS_PER_S;
	/* the wall clock stepped back: the interval still ends after its length */
	if (!final && now_s < iv->next_end_s &&
	    mono_ns() - iv->open_mono_ns < 2ull * interval_s * NS_PER_S)
		return;
	if (final) /* up to now, rounded up: a restart's first interval starts there */
		end_s = (now_ns + NS_PER_S - 1) / NS_PER_S;
	else /* the boundary reached (or the last one passed, after a stall) */
		end_s = now_s / interval_s * interval_s;
	if (end_s <= iv->start_s)
		end_s = iv->start_s + 1;
	write_interval(r, end_s, now_s);
	iv->start_s = end_s;
	rec_interval_clock(r);
	iv->next_end_s = next_boundary(end_s > now_s ? end_s : now_s, interval_s);
	iv->open_mono_ns = mono_ns();
}

void rec_interval_close(struct rec *r, char *where, size_t wlen)
{
	struct rec_interval *iv = r->iv;
	struct store_stats st;
	__u64 ru_written, ru_failed;

	if (!iv)
		return;
	rollups__counts(iv->rollups, &ru_written, &ru_failed);
	rollups__free(iv->rollups, iv->store, real_ns() / NS_PER_S);
	iv->rollups = NULL;
	store__stats(iv->store, &st);
	snprintf(where, wlen,
		 "wrote %llu segments (%.1f MB) to %s/segments; removed %llu by age, %llu by "
		 "size%s; %llu roll-ups written (%llu removed%s)",
		 (unsigned long long)st.written, st.bytes_written / 1e6, r->o->store,
		 (unsigned long long)st.removed_age, (unsigned long long)st.removed_size,
		 iv->dropped ? "" : "; none dropped", (unsigned long long)st.rollups_written,
		 (unsigned long long)st.rollups_removed, ru_failed ? ", some failed: -v" : "");
	if (iv->dropped)
		pr_warn("store %s: %llu segments (%llu samples) dropped: %llu no space, %llu "
			"larger "
			"than --max-size, %llu other errors",
			r->o->store, (unsigned long long)iv->dropped,
			(unsigned long long)iv->dropped_samples,
			(unsigned long long)st.dropped_full, (unsigned long long)st.dropped_big,
			(unsigned long long)st.dropped_error);
	rec_triggers_free(iv->triggers);
	if (iv->pusher) {
		struct push_stats ps[PUSH_KIND_MAX];
		bool on[PUSH_KIND_MAX];

		for (int k = 0; k < PUSH_KIND_MAX; k++)
			on[k] = pusher__stats(iv->pusher, k, &ps[k]);
		pusher__free(iv->pusher);
		for (int k = 0; k < PUSH_KIND_MAX; k++)
			if (on[k])
				pr_info("--push-%s: %llu segments sent (%.1f MB), %llu refused for "
					"good, %llu s removed by the limits before they were sent, "
					"%llu waiting for the next start%s%s",
					push_kind_name(k), (unsigned long long)ps[k].sent,
					ps[k].sent_bytes / 1e6, (unsigned long long)ps[k].rejected,
					(unsigned long long)ps[k].expired,
					(unsigned long long)ps[k].backlog,
					ps[k].last_error[0] ? "; last error: " : "", ps[k].last_error);
	}
	ctl__free(iv->ctl); /* its name first: a dump now finds no daemon rather than a stale one */
	metrics__free(iv->metrics);
	store__free(iv->store);
	free(iv);
	r->iv = NULL;
}

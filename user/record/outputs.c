// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * outputs.c: what a recording writes: its -o files opened first (so a bad path fails
 * before recording), the view and metadata of each format, the pause band, the syscall
 * table; every output through a temporary file renamed into place.
 */
#include "record/record_int.h"
#include "out/jfr.h"

static bool only_syscalls(const struct jp_opts *o)
{
	return o->events == 1u << JP_EV_SYSCALL;
}

void rec_abort_outputs(struct rec_out *outs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		outfile__abort(outs[i].file);
		outs[i].file = NULL;
	}
}

/* opens every -o before the recording starts, so a bad path fails at once */
int rec_open_outputs(const struct jp_opts *o, struct rec_out *outs, size_t *ret_n)
{
	*ret_n = 0;
	if (!o->noutputs) {
		/* -e syscalls alone prints its table on stdout, and a profile only with -o */
		if (only_syscalls(o))
			return 0;
		outs[0] = (struct rec_out){.format = o->format, .f = stdout};
		*ret_n = 1;
		return 0;
	}
	for (size_t i = 0; i < o->noutputs; i++) {
		struct rec_out *x = &outs[i];
		struct stat st;
		char why[512];
		int err;

		*x = (struct rec_out){.path = o->outputs[i], .format = o->formats[i]};
		x->existed = !stat(x->path, &st) && S_ISREG(st.st_mode);
		err = outfile__open(x->path, &x->file, why, sizeof(why));
		if (err) {
			pr_err("cannot write %s: %s", x->path, why[0] ? why : strerror(-err));
			rec_abort_outputs(outs, i);
			return err;
		}
		x->f = outfile__stream(x->file);
	}
	*ret_n = o->noutputs;
	return 0;
}

/* what a recording shows: "CPU", "CPU + off-CPU", "wall clock", "lock contention + allocations" */
const char *rec_events_shown(const struct jp_opts *o)
{
	static const char *const names[] = {
		[JP_EV_CPU] = "CPU", [JP_EV_OFFCPU] = "off-CPU", [JP_EV_SYSCALL] = "slow syscalls"};
	static const char *const agent[] = {"lock contention", "allocations", "live heap"};
	static char buf[96];
	size_t n = 0;

	buf[0] = '\0';
	if (o->wall)
		n += snprintf(buf, sizeof(buf), "wall clock");
	for (int e = JP_EV_CPU; e <= JP_EV_SYSCALL && !o->wall && !o->cpu_hidden; e++)
		if (o->events & (1u << e))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " + " : "", names[e]);
	/* JP_AGENT_EV_LOCK, _ALLOC, _LIVE: bits 0, 1, 2 */
	for (unsigned int b = 0; b < 3 && n < sizeof(buf); b++)
		if (o->agent_events & (1u << b))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? " + " : "", agent[b]);
	return buf;
}

/*
 * The unit of the graph (one, see opts.c check_units): CPU samples alone count samples
 * (--cpu-time: their ns); time of any other event is ns; allocations alone are bytes.
 */
static const char *graph_unit(const struct jp_opts *o)
{
	if (o->cpu_hidden)
		return o->agent_events & JP_AGENT_EV_LOCK ? "ns" : "bytes";
	if (o->events == 1u << JP_EV_CPU && !o->cpu_time && !(o->agent_events & JP_AGENT_EV_LOCK))
		return "samples";
	return "ns";
}

/* the graph's title, with its unit: "jprof: CPU (samples)", "jprof: allocations (bytes)" */
static const char *profile_title(const struct jp_opts *o)
{
	static char title[128];

	snprintf(title, sizeof(title), "jprof: %s (%s)", rec_events_shown(o), graph_unit(o));
	return title;
}

/* the syscall table's JSON object with "jvm_pauses" (pauses__report_json) added at its end */
static int write_json_with_pauses(struct rec *r, const struct sc_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err;

	if (!m)
		return -errno;
	err = sctable_write_json(t, m);
	if (fclose(m) && !err)
		err = -ENOMEM;
	/* the table ends with "}\n": continue the object there */
	if (!err && (len < 2 || buf[len - 2] != '}'))
		err = -EINVAL;
	if (!err) {
		fwrite(buf, 1, len - 2, stdout);
		fputs(",\"jvm_pauses\":", stdout);
		pauses__report_json(r->pauses, stdout);
		fputs("}\n", stdout);
	}
	free(buf);
	return err;
}

/* the syscall table, on stdout */
int rec_write_syscall_table(struct rec *r)
{
	struct sc_table *t = NULL;
	int err;

	err = syscalls__read(r->sc, &t);
	if (err) {
		pr_err("reading the syscall statistics: %s", strerror(-err));
		return err;
	}
	if (r->o->per_container) {
		for (size_t i = 0; i < t->nprocs; i++)
			snprintf(t->procs[i].container, sizeof(t->procs[i].container), "%s",
				 cgroup_names__get(r->cgnames, t->procs[i].cgroup_id));
		sc_table_group(t);
	}
	err = r->o->json ? write_json_with_pauses(r, t) : sctable_write_text(t, stdout);
	if (!err && fflush(stdout))
		err = -errno;
	sc_table_free(t);
	if (err)
		pr_err("writing the syscall table: %s", strerror(-err));
	return err;
}

static void record_view(const struct jp_opts *o, int format, struct model_view *v)
{
	memset(v, 0, sizeof(*v));
	if (o->events == 1u << JP_EV_CPU)
		v->values = strcmp(graph_unit(o), "samples") ? 1u << JP_VAL_CPU_NS
							     : 1u << JP_VAL_CPU_SAMPLES;
	else
		v->values =
			(o->events & (1u << JP_EV_CPU) ? 1u << JP_VAL_CPU_NS : 0) |
			(o->events & (1u << JP_EV_OFFCPU) ? 1u << JP_VAL_OFFCPU_NS : 0) |
			/* a slow call's blocked time is an off-CPU interval already */
			(o->events & (1u << JP_EV_SYSCALL) && !(o->events & (1u << JP_EV_OFFCPU))
				 ? 1u << JP_VAL_SYSCALL_NS
				 : 0);
	/* the wall view's band of JVM pauses (rec_add_pause_band) */
	if (o->wall)
		v->values |= 1u << JP_VAL_PAUSE_NS;
	/* pprof gets the sample count beside the CPU time */
	if (format == OUT_PPROF && (o->events & (1u << JP_EV_CPU)))
		v->values |= 1u << JP_VAL_CPU_SAMPLES | 1u << JP_VAL_CPU_NS;
	/*
	 * Agent events have their own units (bytes, counts): in a graph the bytes or the wait
	 * are weighed; pprof carries the counts beside them as further sample types.
	 */
	if (o->cpu_hidden)
		v->values = 0;
	if (o->agent_events & JP_AGENT_EV_ALLOC)
		v->values |= 1u << JP_VAL_ALLOC_SPACE |
			     (format == OUT_PPROF ? 1u << JP_VAL_ALLOC_OBJECTS : 0);
	if (o->agent_events & JP_AGENT_EV_LIVE)
		v->values |= 1u << JP_VAL_INUSE_SPACE |
			     (format == OUT_PPROF ? 1u << JP_VAL_INUSE_OBJECTS : 0);
	if (o->agent_events & JP_AGENT_EV_LOCK)
		v->values |= 1u << JP_VAL_DELAY_NS |
			     (format == OUT_PPROF ? 1u << JP_VAL_CONTENTIONS : 0);
	v->per_pid = o->per_pid;
	v->per_thread = o->per_thread;
	v->per_container = o->per_container;
	v->dotted = o->dotted;
	v->lines = o->lines;
}

/* jprof's own command line, arguments with blanks or quotes in single quotes; cut when long */
static void own_command(char *buf, size_t len)
{
	char raw[1024];
	size_t n = 0, o = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : read(fd, raw, sizeof(raw) - 1);

	if (fd >= 0)
		close(fd);
	buf[0] = '\0';
	if (got <= 0)
		return;
	raw[got] = '\0';
	while (n < (size_t)got && o + 4 < len) {
		const char *a = raw + n;
		bool quote = !*a || strpbrk(a, " \t\n'\"\\$`;&|<>*?");

		o += snprintf(buf + o, len - o, "%s%s", o ? " " : "", quote ? "'" : "");
		for (; *a && o + 6 < len; a++) {
			if (*a == '\'') {
				memcpy(buf + o, "'\\''", 4); /* close, escaped quote, reopen */
				o += 4;
			} else {
				buf[o++] = *a;
			}
		}
		if (quote && o + 2 < len)
			buf[o++] = '\'';
		buf[o] = '\0';
		n += strlen(raw + n) + 1;
	}
}

static void record_meta(const struct rec *r, __u64 t0, struct out_meta *m)
{
	static const char *const ev_names[] = {
		[JP_EV_CPU] = "cpu", [JP_EV_OFFCPU] = "offcpu", [JP_EV_SYSCALL] = "syscalls"};
	static char host[256], events[64], command[1024], losses[128], title[512], jvm[160];
	size_t n = 0;
	__u64 st[JP_STAT_MAX];
	struct timespec now;

	memset(m, 0, sizeof(*m));
	own_command(command, sizeof(command));
	m->command = command[0] ? command : NULL;
	rec_kstats(r, st);
	if (gethostname(host, sizeof(host) - 1))
		host[0] = '\0';
	m->title = profile_title(r->o);
	/* one JVM recorded: the title names it as its root does (issue 25) */
	if (r->join && join__only_jvm(r->join, jvm, sizeof(jvm))) {
		snprintf(title, sizeof(title), "%s \u00b7 %s", m->title, jvm);
		m->title = title;
	}
	m->unit = graph_unit(r->o);
	m->host = host[0] ? host : NULL;
	events[0] = '\0';
	for (int e = JP_EV_CPU; e <= JP_EV_SYSCALL; e++)
		if (r->o->events & (1u << e))
			n += snprintf(events + n, sizeof(events) - n, "%s%s", n ? "," : "",
				      ev_names[e]);
	if (r->o->cpu_hidden)
		n = 0;
	if (r->o->agent_events & JP_AGENT_EV_LOCK)
		n += snprintf(events + n, sizeof(events) - n, "%slock", n ? "," : "");
	if (r->o->agent_events & JP_AGENT_EV_ALLOC)
		n += snprintf(events + n, sizeof(events) - n, "%salloc", n ? "," : "");
	if (r->o->agent_events & JP_AGENT_EV_LIVE)
		n += snprintf(events + n, sizeof(events) - n, "%slive", n ? "," : "");
	m->events = events;
	m->freq_hz = r->o->events & (1u << JP_EV_CPU) ? r->o->freq_hz : 0;
	m->duration_ns = mono_ns() - t0;
	clock_gettime(CLOCK_REALTIME, &now);
	m->start_unix_ns = (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec - m->duration_ns;
	m->samples = rec_js_samples(r);
	m->lost = st[JP_STAT_RB_DROPS] + st[JP_STAT_OFFCPU_LOST];
	snprintf(losses, sizeof(losses), "%llu ring buffer full, %llu off-CPU not stored",
		 (unsigned long long)st[JP_STAT_RB_DROPS],
		 (unsigned long long)st[JP_STAT_OFFCPU_LOST]);
	m->losses = losses;
}

/*
 * The JVM's process name as its samples have it, so the band sits under the same root;
 * copied: the model's pointers move when it grows.
 */
/* -e wall: the pause band, one sample per JVM and kind of pause (add_pause_band) */
struct band_ctx {
	struct rec *r;
	__u64 gc_ns, safepoint_ns; /* all JVMs, for the report */
	int err;
};

/* the labels of the band: the process's newest row (a JVM started during the recording was
 * its shell before the exec), or its cgroup and "java" when it has none */
static void band_labels(struct rec *r, const struct jvm_info *jvm, struct jp_labels *ret,
			char *comm, size_t size)
{
	struct model *m = r->model;

	*ret = (struct jp_labels){.pid = jvm->pid,
				  .thread = "",
				  .comm = comm,
				  .main = jvm->main,
				  .cgroup = cgroup_names__id(r->cgnames, jvm->cgroup)};
	snprintf(comm, size, "java");
	for (size_t i = model__rows(m); i > 0; i--) {
		struct jp_sample_row rb;
		const struct jp_labels *l = model__get_labels(m, model__row(m, i - 1, &rb)->labels);

		if (l && l->pid == jvm->pid && l->tid && l->comm && l->comm[0]) {
			snprintf(comm, size, "%s", l->comm);
			if (l->cgroup)
				ret->cgroup = l->cgroup;
			break;
		}
	}
	ret->container = cgroup_names__get(r->cgnames, ret->cgroup);
}

static int band_add(struct model *m, const struct jp_labels *l, const char *frame, __u64 ns)
{
	struct jp_location loc = {.kind = JP_FK_ROOT};
	jp_id id, stack, labels;

	if (!ns)
		return 0;
	loc.func = model__func(m, frame, "", false);
	id = loc.func ? model__location(m, &loc) : 0;
	stack = id ? model__stack(m, &id, 1) : 0;
	labels = model__labels(m, l);
	if (!stack || !labels)
		return -ENOMEM;
	return model__add(m, stack, labels, JP_VAL_PAUSE_NS, ns);
}

/*
 * A JVM's stop-the-world time in the recording, from the counters of its hsperfdata file
 * (exact, and complete: a pause between two reads is in them, though not seen one by one):
 * "[GC pause]" the collectors' pause time, "[safepoint]" the time at safepoints beyond it
 * (a GC pause is a safepoint operation, so it is in the safepoint time too). Samples of the
 * process with tid 0: no thread's time, and the threads' own times stay as they are.
 */
static void band_jvm(void *vctx, const struct jvm_info *jvm, const struct hsperf *h)
{
	struct hsperf_kind_stats st[HSPERF_COLLECTORS + 1];
	struct band_ctx *c = vctx;
	unsigned int n = hsperf__stats(h, st, HSPERF_COLLECTORS + 1);
	__u64 gc = 0, sp = 0;
	struct jp_labels l;
	char comm[64];

	if (c->err || !n)
		return;
	for (unsigned int i = 0; i + 1 < n; i++)
		gc += st[i].total_ns;
	sp = st[n - 1].total_ns > gc ? st[n - 1].total_ns - gc : 0; /* safepoints: last */
	if (!gc && !sp)
		return;
	band_labels(c->r, jvm, &l, comm, sizeof(comm));
	c->err = band_add(c->r->model, &l, "[GC pause]", gc);
	if (!c->err)
		c->err = band_add(c->r->model, &l, "[safepoint]", sp);
	c->gc_ns += gc;
	c->safepoint_ns += sp;
}

void rec_add_pause_band(struct rec *r)
{
	struct band_ctx c = {.r = r};

	if (!r->pauses)
		return;
	pauses__for_each_jvm(r->pauses, band_jvm, &c);
	if (c.err)
		pr_warn("wall: the pause band is incomplete: %s", strerror(-c.err));
	r->band_gc_ns = c.gc_ns;
	r->band_safepoint_ns = c.safepoint_ns;
}

/* GC pauses of all JVMs, for writers that show them (JFR); times from t0 */
struct gc_list {
	struct out_gc_pause *p;
	size_t n, cap;
	__u64 t0;
};

#define GC_PAUSES_OUT_MAX (1u << 20)

static void add_gc_pause(void *ctx, __u32 pid, __u64 start_mono_ns,
			 const struct hsperf_gc_event *ev)
{
	struct gc_list *l = ctx;

	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 256;
		struct out_gc_pause *np;

		if (nc > GC_PAUSES_OUT_MAX || !(np = realloc(l->p, nc * sizeof(*np))))
			return; /* JFR then holds the first ones; the report's table has all */
		l->p = np;
		l->cap = nc;
	}
	l->p[l->n++] = (struct out_gc_pause){
		.start_ns = start_mono_ns > l->t0 ? start_mono_ns - l->t0 : 0,
		.duration_ns = ev->duration_ns,
		.pid = pid,
		.gc_id = ev->gc_id,
		.name = ev->collector,
		.cause = ev->cause,
	};
}

/*
 * Writes every output from the one model; says what was written in where. Each failure is
 * one line naming the file and what was not saved. Returns 0 or the first -errno.
 */
int rec_write_outputs(struct rec *r, __u64 t0, struct rec_out *outs, size_t n, char *where,
		      size_t wlen)
{
	struct gc_list gcs = {.t0 = t0};
	struct out_meta meta;
	size_t w = 0;
	int first = 0;

	record_meta(r, t0, &meta);
	if (r->pauses) {
		pauses__for_each_gc(r->pauses, add_gc_pause, &gcs);
		meta.gc_pauses = gcs.p;
		meta.n_gc_pauses = gcs.n;
	}
	where[0] = '\0';
	if (!n)
		snprintf(where, wlen, "syscall table on stdout%s",
			 r->o->slow_us ? " (slow-call stacks need -o)" : "");
	for (size_t i = 0; i < n; i++) {
		struct out_input in = {.model = r->model, .meta = &meta};
		const char *name = outs[i].path ? outs[i].path : "stdout";
		int err;

		record_view(r->o, outs[i].format, &in.view);
		err = out_write(outs[i].format, &in, outs[i].f);
		if (!err && outs[i].format == OUT_JFR && out_jfr_samples_scaled())
			pr_warn("%s: %llu CPU samples written as about %llu jdk.ExecutionSample events, "
				"each stack's in proportion (the format has no weight; the writer's "
				"budget)",
				name, (unsigned long long)out_jfr_samples_scaled(),
				OUT_JFR_MAX_SAMPLES);
		if (outs[i].file) {
			if (err)
				outfile__abort(outs[i].file);
			else
				err = outfile__commit(outs[i].file);
			outs[i].file = NULL;
		} else if (!err && fflush(outs[i].f)) {
			err = -errno;
		}
		if (err) {
			pr_err("writing %s: %s; the %llu collected samples were not saved%s", name,
			       strerror(-err), (unsigned long long)meta.samples,
			       outs[i].existed ? " (the previous file is unchanged)" : "");
			first = first ? first : err;
		}
		w += snprintf(where + w, w < wlen ? wlen - w : 0, "%s%s %s (%s)", i ? ", " : "",
			      err ? "nothing written to" : "wrote", name,
			      err ? strerror(-err) : out_format_name(outs[i].format));
	}
	free(gcs.p);
	return first;
}

/* the daemon's segment: a recording's metadata (the caller sets its times, samples, losses) */
void rec_segment_meta(const struct rec *r, struct out_meta *m)
{
	record_meta(r, mono_ns(), m);
}

/* the daemon's segment is pprof: every column of the events recorded */
void rec_segment_view(const struct rec *r, struct model_view *v)
{
	record_view(r->o, OUT_PPROF, v);
}

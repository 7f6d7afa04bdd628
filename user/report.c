// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report.c: `jprof report`: a saved recording (pprof, JFR, folded) read, selected, written.
 * The reading is report_load.c's (report_int.h between them).
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "report.h"
#include "report_int.h"
#include "out/diff.h"
#include "out/jfr.h"
#include "out/out.h"
#include "out/outfile.h"
#include "model/filter.h"
#include "model/model.h"
#include "model/view.h"
#include "profile.h"
#include "store/store.h"
#include "util/units.h"

/* The -o file (atomically replaced at the end, see outfile.h), or stdout: *ret_file stays NULL */
static int open_output(const struct jp_opts *o, struct outfile **ret_file, FILE **ret_f)
{
	char why[512];
	int err;

	*ret_file = NULL;
	if (!o->output) {
		*ret_f = stdout;
		return 0;
	}
	err = outfile__open(o->output, ret_file, why, sizeof(why));
	if (err) {
		pr_err("cannot write %s: %s", o->output, why[0] ? why : strerror(-err));
		return err;
	}
	*ret_f = outfile__stream(*ret_file);
	return 0;
}

/*
 * --top's table went to stdout (err: how): JP_EXIT_OUTPUT when it failed (said), JP_EXIT_OK
 * when no output file follows, JP_EXIT_FAILURE to go on and write the output
 */
static int top_done(int err, const struct jp_opts *o)
{
	if (!err && fflush(stdout))
		err = -errno;
	if (err) {
		pr_err("writing the table: %s", strerror(-err));
		return JP_EXIT_OUTPUT;
	}
	return o->output ? JP_EXIT_FAILURE : JP_EXIT_OK;
}

/* writes the profile; with an -o file, puts it in place (or drops it on error) */
static int write_profile(const struct jp_opts *o, const struct out_input *in, struct outfile *file,
			 FILE *f)
{
	int err = out_write(o->format, in, f);

	if (!err && o->format == OUT_JFR && out_jfr_samples_scaled())
		pr_warn("JFR: %llu CPU samples written as about %llu jdk.ExecutionSample events, each "
			"stack's in proportion (the format has no weight; the writer's budget)",
			(unsigned long long)out_jfr_samples_scaled(), OUT_JFR_MAX_SAMPLES);
	if (!file) {
		if (!err && fflush(f))
			err = -errno;
		return err;
	}
	if (err) {
		outfile__abort(file);
		return err;
	}
	return outfile__commit(file);
}

/* like record: CPU samples alone count samples; with other events every column is ns */
/* name is one of the comma-separated events (a recording's "cpu,offcpu", "lock,alloc") */
static bool has_event(const char *events, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = events; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/*
 * What report weighs: CPU samples (or time), or the blocked time of off-CPU and syscalls
 * beside it; a recording of agent events only (its events say so, or it holds no CPU
 * sample) shows the first of them, in its own unit.
 */
static void report_view(const struct jp_opts *o, const struct model *m, const char *events,
			struct model_view *v)
{
	bool other = model__total(m, JP_VAL_OFFCPU_NS) || model__total(m, JP_VAL_SYSCALL_NS);
	/* jprof's -e lock/alloc/live sample CPU too (to find the JVMs), but do not show it */
	bool agent_only = events && !has_event(events, "cpu") && !has_event(events, "offcpu") &&
			  !has_event(events, "syscalls") &&
			  (has_event(events, "lock") || has_event(events, "alloc") ||
			   has_event(events, "live"));

	memset(v, 0, sizeof(*v));
	if (!other)
		/* CPU time unless --samples; a folded input's counts (no time) as they are */
		v->values = model__total(m, JP_VAL_CPU_SAMPLES) &&
					    (!o->cpu_time || !model__total(m, JP_VAL_CPU_NS)) ?
				    1u << JP_VAL_CPU_SAMPLES :
				    1u << JP_VAL_CPU_NS;
	else
		v->values = 1u << JP_VAL_CPU_NS | 1u << JP_VAL_OFFCPU_NS | 1u << JP_VAL_PAUSE_NS |
			    (model__total(m, JP_VAL_OFFCPU_NS) ? 0 : 1u << JP_VAL_SYSCALL_NS);
	/* a profile of agent events only (-e lock, alloc, live): its own unit, one of them */
	if (agent_only ||
	    (!other && !model__total(m, JP_VAL_CPU_SAMPLES) && !model__total(m, JP_VAL_CPU_NS))) {
		static const enum jp_value ev[] = { JP_VAL_DELAY_NS, JP_VAL_ALLOC_SPACE,
						    JP_VAL_INUSE_SPACE };

		for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
			if (model__total(m, ev[i])) {
				v->values = 1u << ev[i];
				break;
			}
		}
	}
	if (o->format == OUT_PPROF)
		for (int c = 0; c < JP_VAL_MAX; c++)
			if (model__total(m, c))
				v->values |= 1u << c;
	v->per_pid = o->per_pid;
	v->per_thread = o->per_thread;
	v->per_container = o->per_container;
	v->dotted = o->dotted;
	v->lines = o->lines;
	v->reverse = o->reverse;
	v->min_percent = o->min_percent;
}

static bool report_filters(const struct jp_opts *o)
{
	return o->npids || o->ntids || o->comm || o->container || o->include || o->exclude ||
	       (!o->store && (o->since || o->until));
}

/*
 * report INPUT --since/--until: the range in unix ns, +OFFSET from the recording's start (its
 * slot 0), else a time as --store takes it. 0 or -EINVAL (said)
 */
static int time_range(const struct jp_opts *o, const struct model *m, const char *path,
		      __u64 *ret_since, __u64 *ret_until)
{
	const char *arg[2] = {o->since, o->until};
	__u64 now_s = (__u64)time(NULL), t[2] = {1, ~0ull}, v;
	struct model_time ti;

	model__time_info(m, &ti);
	if (!ti.has_clock || !ti.entries) {
		pr_err("%s has no sample times (a folded file, or not jprof's): "
		       "--since and --until need them",
		       path);
		return -EINVAL;
	}
	for (int k = 0; k < 2; k++) {
		if (!arg[k])
			continue;
		if (arg[k][0] == '+' ? opts_parse_offset_ns(arg[k], &v)
				     : units_parse_time(arg[k], now_s, &v))
			return -EINVAL; /* checked by opts_parse already */
		t[k] = arg[k][0] == '+' ? ti.start_unix_ns + v : v * 1000000000ull;
	}
	*ret_since = t[0] ? t[0] : 1;
	*ret_until = t[1];
	return 0;
}

/* the unit of the graph report draws: its first column's ("samples", "ns", "bytes") */
static const char *view_unit(const struct model_view *v)
{
	for (int c = 0; c < JP_VAL_MAX; c++) {
		const char *u;

		if (!(v->values & (1u << c)))
			continue;
		u = jp_value_unit((enum jp_value)c);
		return !strcmp(u, "nanoseconds") ? "ns" : !strcmp(u, "bytes") ? "bytes" : "samples";
	}
	return NULL;
}

/* report's selection in its own flags ("--pid 42 --include 'X'"), NULL when none */
static const char *report_filter_text(const struct jp_opts *o, char *buf, size_t len)
{
	size_t n = 0;

#define PUT(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	buf[0] = '\0';
	for (size_t i = 0; i < o->npids; i++)
		PUT("%s%u", i ? "," : " --pid ", o->pids[i]);
	for (size_t i = 0; i < o->ntids; i++)
		PUT("%s%u", i ? "," : " --tid ", o->tids[i]);
	if (o->comm)
		PUT(" --comm '%s'", o->comm);
	if (o->container)
		PUT(" --container '%s'", o->container);
	if (o->include)
		PUT(" --include '%s'", o->include);
	if (o->exclude)
		PUT(" --exclude '%s'", o->exclude);
	if (o->since && !o->store)
		PUT(" --since %s", o->since);
	if (o->until && !o->store)
		PUT(" --until %s", o->until);
	if (o->reverse)
		PUT(" --reverse");
	if (o->min_percent > 0)
		PUT(" --min-percent %g", o->min_percent);
#undef PUT
	if (n >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf[0] ? buf + 1 : NULL;
}

/* this report's selection, after the one that made the file (a report of a report) */
static void report_meta_filters(const struct jp_opts *o, struct report_meta *rm)
{
	const char *now = report_filter_text(o, rm->filters_now, sizeof(rm->filters_now));

	if (now && rm->meta.filters)
		snprintf(rm->filters, sizeof(rm->filters), "%s; then %s", rm->meta.filters, now);
	else if (now)
		snprintf(rm->filters, sizeof(rm->filters), "%s", now);
	if (now)
		rm->meta.filters = rm->filters;
}

/*
 * m narrowed by report's filters into a new model (*ret_sel; NULL when no filter is given).
 * An empty result of a non-empty recording is an error: it would look like an idle one.
 */
static int report_select(const struct jp_opts *o, regex_t *inc, regex_t *exc, const char *path,
			 struct model *m, struct model **ret_sel)
{
	struct model_filter f = {
		.pids = o->pids, .npids = o->npids, .tids = o->tids, .ntids = o->ntids,
		.comm = o->comm, .container = o->container, .include = inc, .exclude = exc,
	};
	struct model *sel;
	int err;

	*ret_sel = NULL;
	if (!report_filters(o))
		return 0;
	if (!o->store && (o->since || o->until) && time_range(o, m, path, &f.since_ns, &f.until_ns))
		return -EINVAL;
	sel = model__new();
	err = sel ? model__filter(m, &f, sel) : -ENOMEM;
	if (err) {
		pr_err("filtering: %s", strerror(-err));
		model__free(sel);
		return err;
	}
	if (!model__rows(sel) && model__rows(m)) {
		pr_err("no sample of %s matches the filters (%zu sample rows before them); "
		       "nothing written",
		       path, model__rows(m));
		model__free(sel);
		return -ENOENT;
	}
	*ret_sel = sel;
	return 0;
}

/*
 * rm's unit set from its view: the recording's title ("jprof: CPU (ns) · java [42] Main")
 * names it too, where the view weighs CPU in the other unit than the recording's graph did
 */
static void report_set_unit(struct report_meta *rm, const struct model_view *v)
{
	static const char *const units[] = {"(samples)", "(ns)"};
	const char *t = rm->meta.title;

	rm->meta.unit = view_unit(v);
	if (!t || !rm->meta.unit ||
	    (v->values != 1u << JP_VAL_CPU_SAMPLES && v->values != 1u << JP_VAL_CPU_NS))
		return;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		const char *p = strstr(t, units[i]);

		if (!p)
			continue;
		snprintf(rm->title, sizeof(rm->title), "%.*s(%s)%s", (int)(p - t), t,
			 rm->meta.unit, p + strlen(units[i]));
		rm->meta.title = rm->title;
		return;
	}
}

/* the columns a view weighs ("cpu (nanoseconds) + offcpu (nanoseconds)"), for --diff's error */
static const char *view_columns(const struct model_view *v, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int c = 0; c < JP_VAL_MAX; c++)
		if (v->values & (1u << c))
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s (%s)", n ? " + " : "",
					      jp_value_type((enum jp_value)c),
					      jp_value_unit((enum jp_value)c));
	return buf;
}

/* one side of report --diff: read, selected, drawn as a trie */
struct diff_side {
	const char *path;
	struct model *m, *sel;
	struct report_meta rm;
	struct model_view view;
	struct profile *trie;
};

static int diff_side_load(const struct jp_opts *o, regex_t *inc, regex_t *exc,
			  struct diff_side *d)
{
	d->m = model__new();
	if (!d->m)
		return -ENOMEM;
	if (report_load(d->path, d->m, &d->rm))
		return -EINVAL;
	if (report_select(o, inc, exc, d->path, d->m, &d->sel))
		return -EINVAL;
	report_view(o, d->sel ? d->sel : d->m, d->rm.meta.events, &d->view);
	report_set_unit(&d->rm, &d->view);
	report_meta_filters(o, &d->rm);
	return 0;
}

static void diff_side_free(struct diff_side *d)
{
	profile__free(d->trie);
	model__free(d->sel);
	model__free(d->m);
	free(d->rm.gc);
}

/*
 * Whether the two sides weigh the same: CPU profiles of two kinds may. Folded stacks
 * (numbers of no known unit) are taken in the other side's unit; a side with counts only (a
 * JFR recording that gives no sampling period) against one that has both (jprof's pprof:
 * CPU time by default) compares the counts.
 */
static bool diff_views_agree(struct diff_side s[2])
{
	const __u32 n = 1u << JP_VAL_CPU_SAMPLES, t = 1u << JP_VAL_CPU_NS;

	if (s[0].view.values == s[1].view.values)
		return true;
	for (int i = 0; i < 2; i++) {
		struct diff_side *a = &s[i], *b = &s[!i];

		if (a->view.values != n || b->view.values != t)
			continue;
		if (a->rm.folded) {
			a->rm.meta.unit = b->rm.meta.unit;
			return true;
		}
		if (model__total(b->sel ? b->sel : b->m, JP_VAL_CPU_SAMPLES)) {
			b->view.values = n;
			report_set_unit(&b->rm, &b->view);
			return true;
		}
	}
	return false;
}

/*
 * report --diff BASE NEW: both read and selected alike, compared when they weigh the same
 * columns (never ms against bytes), written as HTML or folded; --top N prints the table.
 */
static int report_diff(const struct jp_opts *o, regex_t *inc, regex_t *exc)
{
	struct diff_side s[2] = { { .path = o->diff_base }, { .path = o->input } };
	struct diff_table *t = NULL;
	struct outfile *file = NULL;
	FILE *out = NULL;
	int err, ret = JP_EXIT_FAILURE;

	if (o->format != OUT_HTML && o->format != OUT_FOLDED) {
		pr_err("--diff writes html or folded, not %s", out_format_name(o->format));
		return JP_EXIT_USAGE;
	}
	for (int i = 0; i < 2; i++)
		if (diff_side_load(o, inc, exc, &s[i]))
			goto out_free;
	if (!diff_views_agree(s)) {
		char a[256], b[256];

		pr_err("%s weighs %s, %s weighs %s: a diff compares recordings of the same events",
		       s[0].path, view_columns(&s[0].view, a, sizeof(a)), s[1].path,
		       view_columns(&s[1].view, b, sizeof(b)));
		goto out_free;
	}
	for (int i = 0; i < 2; i++) {
		const struct out_meta *mt = &s[i].rm.meta;

		s[i].trie = profile__new(mt->title ? mt->title : "jprof",
					 mt->unit ? mt->unit : "samples");
		err = s[i].trie ? model__to_profile(s[i].sel ? s[i].sel : s[i].m, &s[i].view,
						    s[i].trie) :
				  -ENOMEM;
		if (err) {
			pr_err("%s: %s", s[i].path, strerror(-err));
			goto out_free;
		}
	}
	err = diff_table__new(s[0].trie, s[1].trie, o->diff_absolute, &t);
	if (err) {
		pr_err("comparing %s with %s: %s", s[0].path, s[1].path, strerror(-err));
		goto out_free;
	}
	if (o->top && (ret = top_done(out_diff_top_write(t, o->top, stdout), o)) != JP_EXIT_FAILURE)
		goto out_free;
	if (open_output(o, &file, &out)) {
		ret = JP_EXIT_OUTPUT;
		goto out_free;
	}
	if (o->format == OUT_HTML)
		err = out_diff_html_write(s[0].trie, s[1].trie, t, &s[0].rm.meta, &s[1].rm.meta,
					  o->diff_absolute, out);
	else
		err = out_diff_folded_write(s[0].trie, s[1].trie, o->diff_absolute, out);
	if (file && err)
		outfile__abort(file);
	else if (file)
		err = outfile__commit(file);
	else if (!err && fflush(out))
		err = -errno;
	if (err) {
		pr_err("writing %s: %s", o->output ? o->output : "stdout", strerror(-err));
		ret = JP_EXIT_OUTPUT;
		goto out_free;
	}
	ret = JP_EXIT_OK;
out_free:
	diff_table__free(t);
	diff_side_free(&s[0]);
	diff_side_free(&s[1]);
	return ret;
}

/*
 * report --store DIR --base-since T --base-until T [--since T --until T]: each range merged
 * into a pprof memfd of our own, then compared as report --diff compares two files
 */
static int report_store_diff(const struct jp_opts *o)
{
	int fds[2] = {-1, -1}, ret = JP_EXIT_FAILURE;
	char paths[2][32];
	struct jp_opts d;

	for (int i = 0; i < 2; i++) {
		struct jp_opts side = *o;
		struct report_meta rm = {0};
		struct model *m = model__new();
		int err;

		side.since = i ? o->since : o->base_since;
		side.until = i ? o->until : o->base_until;
		err = m ? report_load_store(&side, m, &rm) : -ENOMEM;
		if (!err) {
			err = out_pprof_memfd(m, &rm.meta, &fds[i]);
			if (err)
				pr_err("%s: the %s range as pprof: %s", o->store, i ? "new" : "base",
				       strerror(-err));
		}
		model__free(m);
		free(rm.gc);
		if (err)
			goto out;
		snprintf(paths[i], sizeof(paths[i]), "/proc/self/fd/%d", fds[i]);
	}
	d = *o;
	d.store = NULL;
	d.since = d.until = d.base_since = d.base_until = NULL;
	d.diff_base = paths[0];
	d.input = paths[1];
	ret = report_run(&d);
out:
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret;
}

int report_run(const struct jp_opts *o)
{
	struct model *m = model__new(), *sel = NULL;
	struct report_meta rm = { 0 };
	struct out_input input = { 0 };
	struct outfile *file = NULL;
	regex_t inc, exc;
	bool has_inc = false, has_exc = false;
	FILE *out = NULL;
	int err, ret = JP_EXIT_FAILURE;

	if (!m)
		return JP_EXIT_FAILURE;
	if (o->include || o->exclude) {
		char msg[256];
		int rc = 0;

		if (o->include && (rc = regcomp(&inc, o->include, REG_EXTENDED | REG_NOSUB))) {
			regerror(rc, &inc, msg, sizeof(msg));
			pr_err("--include '%s': %s", o->include, msg);
			goto out_free;
		}
		has_inc = o->include != NULL;
		if (o->exclude && (rc = regcomp(&exc, o->exclude, REG_EXTENDED | REG_NOSUB))) {
			regerror(rc, &exc, msg, sizeof(msg));
			pr_err("--exclude '%s': %s", o->exclude, msg);
			goto out_free;
		}
		has_exc = o->exclude != NULL;
	}
	if (o->diff_base) {
		ret = report_diff(o, has_inc ? &inc : NULL, has_exc ? &exc : NULL);
		goto out_free;
	}
	if (o->store && (o->base_since || o->base_until)) {
		ret = report_store_diff(o);
		goto out_free;
	}
	if (o->store ? report_load_store(o, m, &rm) : report_load(o->input, m, &rm))
		goto out_free;
	report_meta_filters(o, &rm);
	if (report_select(o, has_inc ? &inc : NULL, has_exc ? &exc : NULL,
			  o->store ? o->store : o->input, m, &sel))
		goto out_free;
	input.model = sel ? sel : m;
	input.meta = &rm.meta;
	report_view(o, input.model, rm.meta.events, &input.view);
	report_set_unit(&rm, &input.view);
	if (o->top &&
	    (ret = top_done(out_top_write(input.model, &input.view, o->top, stdout), o)) !=
		    JP_EXIT_FAILURE)
		goto out_free;
	if (open_output(o, &file, &out)) {
		ret = JP_EXIT_OUTPUT;
		goto out_free;
	}
	err = write_profile(o, &input, file, out);
	if (err) {
		pr_err("writing %s: %s", o->output ? o->output : "stdout", strerror(-err));
		ret = JP_EXIT_OUTPUT;
		goto out_free;
	}
	ret = JP_EXIT_OK;
out_free:
	if (has_inc)
		regfree(&inc);
	if (has_exc)
		regfree(&exc);
	model__free(sel);
	model__free(m);
	free(rm.gc);
	return ret;
}

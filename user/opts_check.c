// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * opts_check.c: the options read by opts.c checked against each other and the command
 * (opts_validate), once, and the defaults that follow from them (a daemon's store and
 * interval, the outputs' formats).
 */
#include <errno.h>

#include "opts_int.h"
#include "out/out.h"

/* a format that draws one graph of one value: folded, HTML, speedscope (pprof and JFR keep each) */
static bool one_graph(int format)
{
	return format == OUT_FOLDED || format == OUT_HTML || format == OUT_SPEEDSCOPE;
}

/*
 * One unit per graph: time (cpu, offcpu, syscalls, wall, lock: nanoseconds, or samples),
 * bytes allocated (alloc) and bytes still live (live) are never summed into one graph. A
 * recording of events of two of these kinds is refused for a one-graph output, naming them.
 */
static int check_units(const struct jp_opts *o, char *err, size_t errlen)
{
	const char *kinds[3];
	size_t n = 0, i;
	bool graph = !o->noutputs && !o->json;

	if (!o->cpu_hidden || o->agent_events & JP_AGENT_EV_LOCK)
		kinds[n++] = o->agent_events & JP_AGENT_EV_LOCK && o->cpu_hidden ?
				     "lock (nanoseconds waited)" :
				     "CPU/off-CPU time (nanoseconds)";
	if (o->agent_events & JP_AGENT_EV_ALLOC)
		kinds[n++] = "alloc (bytes allocated)";
	if (o->agent_events & JP_AGENT_EV_LIVE)
		kinds[n++] = "live (bytes still live)";
	for (i = 0; i < o->noutputs; i++)
		graph = graph || one_graph(o->formats[i]);
	/* -e syscalls alone on stdout is a table, not a graph */
	if (n < 2 || !graph)
		return 0;
	return fail(err, errlen,
		    "-e: %s and %s%s%s cannot share one graph; write pprof (.pb.gz) or JFR (.jfr), "
		    "which keep each, or record them apart",
		    kinds[0], kinds[1], n > 2 ? " and " : "", n > 2 ? kinds[2] : "");
}

/* daemon and report --store: the flags of the one, and the events a daemon can keep */
static int validate_store(struct jp_opts *o, char *err, size_t errlen)
{
	if (o->cmd != JP_CMD_DAEMON && (o->interval_s || o->max_age_s != ~0ull ||
					o->max_size != ~0ull))
		return fail(err, errlen, "--interval, --max-age and --max-size are daemon options");
	if (o->cmd != JP_CMD_DAEMON && o->cmd != JP_CMD_REPORT && o->cmd != JP_CMD_DUMP &&
	    o->cmd != JP_CMD_SERVE && o->cmd != JP_CMD_MARKS && o->store)
		return fail(err, errlen, "--store is a daemon, report, dump, serve or marks option");
	if (o->mark && o->cmd != JP_CMD_DUMP)
		return fail(err, errlen, "--mark is a dump option");
	if (o->cmd == JP_CMD_MARKS) {
		if (!o->store)
			o->store = JP_STORE_DIR;
		if (o->input || o->all || o->npids || o->duration_s || o->noutputs)
			return fail(err, errlen, "marks takes only --store");
	}
	if ((o->listen || o->token_file || o->recordings) && o->cmd != JP_CMD_SERVE)
		return fail(err, errlen, "--listen, --token-file and --recordings are serve options");
	if (o->cmd == JP_CMD_SERVE) {
		if (!o->store && !o->recordings)
			o->store = JP_STORE_DIR;
		if (o->input || o->all || o->npids || o->duration_s || o->noutputs)
			return fail(err, errlen,
				    "serve takes no INPUT, -a, -p, -d or -o (the UI chooses ranges "
				    "and formats)");
	}
	if ((o->metrics || o->config || o->mark_pause_ms) && o->cmd != JP_CMD_DAEMON)
		return fail(err, errlen, "--metrics, --config and --mark-on-pause are daemon options");
	if ((o->mark_oom || o->mark_cpu_pct) && o->cmd != JP_CMD_DAEMON)
		return fail(err, errlen, "--mark-on-oom and --mark-on-cpu are daemon options");
	if ((o->push_url || o->push_name || o->push_otlp || o->push_parca) &&
	    o->cmd != JP_CMD_DAEMON)
		return fail(err, errlen,
			    "--push-pyroscope, --push-otlp, --push-parca and --push-name are daemon "
			    "options");
	if (o->push_name && !o->push_url && !o->push_parca)
		return fail(err, errlen, "--push-name goes with --push-pyroscope or --push-parca");
	if (o->last_s && o->cmd != JP_CMD_DUMP)
		return fail(err, errlen, "--last is a dump option (report --store: --since)");
	if (o->cmd == JP_CMD_DUMP) {
		if (!o->store)
			o->store = JP_STORE_DIR;
		if (!o->last_s)
			o->last_s = 5 * 60;
		if (o->input || o->all || o->duration_s)
			return fail(err, errlen, "dump takes no INPUT, -a or -d (--last AGE: how far back)");
		if (o->mark && (o->noutputs || o->top || o->npids || o->include || o->exclude))
			return fail(err, errlen,
				    "dump --mark keeps the window in the store: no -o, --top or "
				    "filters (read the mark with report --store)");
	}
	if ((o->base_since || o->base_until) && (o->cmd != JP_CMD_REPORT || !o->store))
		return fail(err, errlen, "--base-since and --base-until go with report --store");
	if ((o->base_since || o->base_until) && o->noutputs > 1)
		return fail(err, errlen, "a diff writes one output");
	if ((o->since || o->until) && o->cmd != JP_CMD_REPORT)
		return fail(err, errlen, "--since and --until go with report");
	if ((o->since || o->until) && o->diff_base)
		return fail(err, errlen,
			    "--since and --until select in one recording, not in a --diff");
	if (o->store && ((o->since && o->since[0] == '+') || (o->until && o->until[0] == '+')))
		return fail(err, errlen,
			    "--since/--until +OFFSET count from a recording's start, not --store's");
	if (o->cmd == JP_CMD_REPORT && o->store && o->input)
		return fail(err, errlen, "report reads INPUT or --store, not both");
	if (o->cmd != JP_CMD_DAEMON)
		return 0;
	if (!o->store)
		o->store = JP_STORE_DIR;
	if (!o->interval_s)
		o->interval_s = 60;
	if (o->max_age_s == ~0ull)
		o->max_age_s = 24 * 3600;
	if (o->max_size == ~0ull)
		o->max_size = 1ull << 30;
	if (o->noutputs)
		return fail(err, errlen, "the daemon writes segments to --store, not -o; "
					 "jprof report --store DIR -o FILE reads them");
	/* a recording's whole-run views: not per interval yet */
	if (o->wall || o->events & (1u << JP_EV_SYSCALL) || o->agent_events & JP_AGENT_EV_LIVE)
		return fail(err, errlen, "-e wall, syscalls and live are not kept by the daemon "
					 "(cpu, offcpu, lock and alloc are)");
	return 0;
}

int opts_validate(struct jp_opts *o, char *err, size_t errlen)
{
	int r = validate_store(o, err, errlen);

	if (r)
		return r;
	if (o->cmd == JP_CMD_RECORD || o->cmd == JP_CMD_DAEMON) {
		if (o->all && o->npids)
			return fail(err, errlen, "-a and -p exclude each other");
		if (!o->npids)
			o->all = true;
		/* the wall view: every blocked interval, and each thread's own time line */
		if (o->wall) {
			if (!o->min_block_set)
				o->min_block_us = 0;
			o->per_thread = o->per_pid = true;
		}
		if (o->input)
			return fail(err, errlen, "record takes no positional argument ('%s')", o->input);
		if (o->json && !(o->events & (1u << JP_EV_SYSCALL)))
			return fail(err, errlen, "-f json is the syscall table: it needs -e syscalls");
	} else if (o->cmd == JP_CMD_REPORT) {
		if (o->diff_base && !o->input)
			return fail(err, errlen, "--diff BASE needs the NEW recording after it");
		if (!o->input && !o->store)
			return fail(err, errlen,
				    "report needs an input file (a recording saved as .pb.gz, .jfr or "
				    "folded) or --store DIR");
		if (o->all || o->duration_s)
			return fail(err, errlen, "report takes no -a or -d");
		if (o->diff_base && o->store)
			return fail(err, errlen, "--diff compares two files, not --store");
		if (o->diff_absolute && !o->diff_base)
			return fail(err, errlen, "--diff-absolute goes with --diff");
		if (o->diff_base && o->noutputs > 1)
			return fail(err, errlen, "--diff writes one output");
	}
	if (o->cmd != JP_CMD_REPORT && (o->diff_base || o->diff_absolute))
		return fail(err, errlen, "--diff and --diff-absolute are report options");
	if (o->cmd != JP_CMD_REPORT && o->cmd != JP_CMD_DUMP &&
	    (o->ntids || o->comm || o->include || o->exclude || o->reverse ||
	     o->min_percent > 0 || o->top))
		return fail(err, errlen,
			    "--tid, --comm, --include, --exclude, --reverse, "
			    "--min-percent and --top are report options");
	if (o->cmd != JP_CMD_REPORT && o->cmd != JP_CMD_RECORD && o->cmd != JP_CMD_DAEMON &&
	    o->cmd != JP_CMD_DUMP && o->container)
		return fail(err, errlen, "--container is a record or report option");
	if (o->cmd != JP_CMD_RECORD && o->cmd != JP_CMD_DAEMON && o->cgroup)
		return fail(err, errlen, "--cgroup is a record option (report: --container)");
	if (o->cmd != JP_CMD_LIST && o->list_containers)
		return fail(err, errlen, "--containers is a list option");
	if (o->cmd == JP_CMD_LIST && o->per_container)
		return fail(err, errlen, "--per-container is a record or report option");
	if (o->cmd == JP_CMD_LIST) {
		if (o->input || o->npids || o->all || o->output)
			return fail(err, errlen, "list takes no arguments");
	}
	if (o->noutputs > 1 && o->format >= 0)
		return fail(err, errlen, "-f goes with one -o; with several, the extensions decide");
	if (o->noutputs > 1 && o->cmd != JP_CMD_RECORD)
		return fail(err, errlen, "several -o are for record");
	for (size_t i = 0; i < o->noutputs; i++) {
		int fmt = o->format >= 0 ? o->format : out_format_from_path(o->outputs[i]);

		/* a name without extension (/dev/null, a FIFO) gets folded; an unknown one is an error */
		if (fmt == -ENOENT)
			fmt = OUT_FOLDED;
		else if (fmt < 0)
			return fail(err, errlen,
				    "-o %s: unknown file extension; use .folded, .html, .pb.gz "
				    "(pprof), .jfr, .speedscope.json, or give -f",
				    o->outputs[i]);
		o->formats[i] = fmt;
	}
	if (o->format < 0)
		o->format = o->noutputs ? o->formats[0] : OUT_FOLDED;
	if (o->cmd == JP_CMD_RECORD)
		return check_units(o, err, errlen);
	return 0;
}

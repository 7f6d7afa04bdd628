/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tout.c: jprof trace's slowest calls as a flame graph (HTML) or as JFR method-trace events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "opts.h"
#include "profile.h"
#include "model/model.h"
#include "out/jfr.h"
#include "out/out.h"
#include "trace/tout.h"
#include "trace/tstats.h"

int tout_write_flame(const char *path, const struct tout_jvm *jv, size_t nj, __u64 t0_ns)
{
	struct profile *p = profile__new("jprof trace: the slowest calls", "ns");
	struct out_meta meta = {.title = "jprof trace: the slowest calls, by duration",
				.unit = "ns",
				.events = "trace",
				.duration_ns = mono_ns() - t0_ns};
	char root[32];
	FILE *f;
	int err = 0;

	if (!p)
		return JP_EXIT_FAILURE;
	for (size_t i = 0; i < nj && !err; i++) {
		snprintf(root, sizeof(root), "JVM %u", jv[i].pid);
		err = tstats__add_slow_stacks(jv[i].s, nj > 1 ? root : NULL, p);
	}
	if (err) {
		pr_err("cannot build the flame graph: %s", strerror(-err));
		profile__free(p);
		return JP_EXIT_FAILURE;
	}
	f = fopen(path, "we");
	if (!f) {
		pr_err("cannot write %s: %s", path, strerror(errno));
		profile__free(p);
		return JP_EXIT_OUTPUT;
	}
	err = out_html_write_meta(p, &meta, f);
	if (fclose(f) && !err)
		err = -EIO;
	profile__free(p);
	if (err) {
		pr_err("cannot write %s: %s", path, strerror(-err));
		return JP_EXIT_OUTPUT;
	}
	return 0;
}

int tout_write_jfr(const char *path, const struct tout_jvm *jv, size_t nj, __u64 t0_ns)
{
	__u64 dur = mono_ns() - t0_ns;
	struct out_meta meta = {.title = "jprof trace: the slowest calls",
				.unit = "ns",
				.events = "trace",
				.duration_ns = dur};
	struct jfr_opts jo = {.start_unix_ns = wall_ns() - dur, .duration_ns = dur, .meta = &meta};
	size_t cap = nj * TSTATS_SLOWEST_MAX, n = 0;
	struct out_method_trace *ev = calloc(cap ? cap : 1, sizeof(*ev));
	struct model *m = model__new();
	FILE *f;
	int err = 0;

	if (!ev || !m) {
		pr_err("cannot build the JFR events: %s", strerror(ENOMEM));
		err = JP_EXIT_FAILURE;
		goto out_free;
	}
	for (size_t i = 0; i < nj && !err; i++)
		err = tstats__add_slow_events(jv[i].s, jv[i].pid, jv[i].main, t0_ns, m, ev, cap,
					      &n);
	if (err) {
		pr_err("cannot build the JFR events: %s", strerror(-err));
		err = JP_EXIT_FAILURE;
		goto out_free;
	}
	jo.method_traces = ev;
	jo.n_method_traces = n;
	f = fopen(path, "we");
	err = f ? out_jfr_write(m, &jo, f) : -errno;
	if (f && fclose(f) && !err)
		err = -EIO;
	if (err) {
		pr_err("cannot write %s: %s", path, strerror(-err));
		err = JP_EXIT_OUTPUT;
	}
out_free:
	model__free(m);
	free(ev);
	return err;
}

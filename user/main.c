// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main.c: jprof's entry point: parse, set up logging, dispatch. */
#include <libgen.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "log.h"
#include "opts.h"
#include "list.h"
#include "record.h"
#include "report.h"
#include "daemon/config.h"
#include "daemon/dump.h"
#include "serve/serve.h"
#include "trace/trace.h"

#define JPROF_VERSION "0.1.0"

/* -v given this often: 2 lets libbpf's debug messages through (hundreds of lines a start) */
static unsigned int verbosity;

/* libbpf explains failures in its own terms (often wrongly: "raise RLIMIT_MEMLOCK");
 * jprof says what failed itself, so libbpf speaks only with -v, its debug only with -vv */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (log_get_level() < LOG_DEBUG || (level == LIBBPF_DEBUG && verbosity < 2))
		return 0;
	fputs("jprof: ", stderr); /* libbpf's lines start with "libbpf: " */
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	static struct jp_opts o; /* large: the pid array */
	char err[512], self[PATH_MAX];
	ssize_t n;
	int ret;

#ifdef __GLIBC__
	/*
	 * Large blocks (the model's tables, symbol tables) in their own mappings, always:
	 * glibc otherwise raises this threshold to the largest block freed, after which they
	 * come from the heap, where growing one copies it (old and new both resident) and
	 * freeing one leaves a hole. Measured by bench/longrun.py (docs/decisions.md).
	 */
	(void)mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
	/* jprof trace has its own options (user/trace/trace.c) */
	if (argc > 1 && !strcmp(argv[1], "trace"))
		return trace_main(argc - 1, argv + 1);
	ret = opts_parse(argc, argv, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "jprof: %s\nTry 'jprof --help'.\n", err);
		return ret;
	}
	if (o.verbose)
		log_set_level(LOG_DEBUG);
	verbosity = o.verbosity;
	libbpf_set_print(libbpf_print);

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		n = 0;
	self[n] = '\0';

	switch (o.cmd) {
	case JP_CMD_HELP:
		opts_usage(stdout);
		return JP_EXIT_OK;
	case JP_CMD_VERSION:
		printf("jprof %s\n", JPROF_VERSION);
		return JP_EXIT_OK;
	case JP_CMD_LIST:
		return list_run(&o);
	case JP_CMD_REPORT:
		return report_run(&o);
	case JP_CMD_DUMP: /* the daemon's open interval and recent segments (daemon/dump.c) */
		return dump_run(&o);
	case JP_CMD_MARKS:
		return marks_run(&o);
	case JP_CMD_SERVE: /* a web UI over the store; reports run as children of /proc/self/exe */
		return serve_run(&o, self);
	case JP_CMD_DAEMON: /* a recording in intervals, written to the store (record/interval.c) */
		if (o.config) { /* its keys as options after the command line's */
			struct daemon_config c;

			if (dconf_read(o.config, &c, err, sizeof(err))) {
				fprintf(stderr, "jprof: --config %s\n", err);
				return JP_EXIT_USAGE;
			}
			ret = dconf_apply(&c, argc, argv, &o, err, sizeof(err));
			if (ret) {
				fprintf(stderr, "jprof: %s (with --config %s)\n", err, o.config);
				return ret;
			}
		}
		/* fall through */
	case JP_CMD_RECORD:
	default:
		return record_run(&o, n ? dirname(self) : ".");
	}
}

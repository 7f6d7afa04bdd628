// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* opts.c: command-line parsing; fills struct jp_opts, no side effects. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "out/out.h"

enum {
	OPT_PER_PID = 256,
	OPT_PER_THREAD,
	OPT_NO_ATTACH,
	OPT_DOTTED,
	OPT_LINES,
	OPT_AGENT,
	OPT_VERSION,
	OPT_RECOMPILE,
	OPT_MIN_BLOCK,
	OPT_SLOW,
	OPT_NO_BOOST,
};

static const struct option long_opts[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "event", required_argument, NULL, 'e' },
	{ "per-pid", no_argument, NULL, OPT_PER_PID },
	{ "per-thread", no_argument, NULL, OPT_PER_THREAD },
	{ "no-attach", no_argument, NULL, OPT_NO_ATTACH },
	{ "dotted", no_argument, NULL, OPT_DOTTED },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "recompile", no_argument, NULL, OPT_RECOMPILE },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "slow", required_argument, NULL, OPT_SLOW },
	{ "no-boost", no_argument, NULL, OPT_NO_BOOST },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 },
};

void opts_usage(FILE *f)
{
	fputs("Usage: jprof record [-a | -p PID[,PID...]] [-F HZ] [-d SECONDS] [-o FILE] [OPTIONS]\n"
	      "       jprof list\n"
	      "       jprof report INPUT.folded [-o FILE] [-f FORMAT]\n"
	      "\n"
	      "System-wide profiler: Java (JIT, inlined, interpreted), native and kernel frames\n"
	      "in one stack, written as a flame graph.\n"
	      "\n"
	      "record options:\n"
	      "  -a, --all             every process on every CPU (default without -p)\n"
	      "  -p, --pid PID[,...]   only these processes (JVMs among them get Java frames)\n"
	      "  -F, --freq HZ         samples per second per CPU (1-10000, default 99)\n"
	      "  -d, --duration SEC    stop after SEC seconds (default: at Ctrl-C or SIGTERM)\n"
	      "  -o, --output FILE     write here (default stdout); format from the extension:\n"
	      "                        .html/.htm HTML flame graph, .folded/.collapsed/.txt folded\n"
	      "  -f, --format FMT      folded | html (overrides the extension); json: the\n"
	      "                        syscall table as JSON\n"
	      "  -e, --event EV[,EV]   cpu (default): on-CPU samples; offcpu: blocked time with\n"
	      "                        the stack that blocked; syscalls: per-process syscall\n"
	      "                        table (stdout) and stacks of slow calls. Together they\n"
	      "                        share one time unit (ns)\n"
	      "      --min-block USEC  offcpu: shortest blocked interval kept (default 100)\n"
	      "      --slow USEC       syscalls: stacks of calls at least this slow\n"
	      "                        (default 10000; 0: none)\n"
	      "      --per-pid         root frames per process: \"comm [pid]\"\n"
	      "      --per-thread      and per thread: \"name [tid]\" below the process\n"
	      "      --no-attach       do not load the agent into JVMs; use what is there\n"
	      "      --dotted          Java names as java.lang.String.hashCode\n"
	      "      --lines           Java frames with source line numbers\n"
	      "      --agent PATH      the JVM agent library (default: beside jprof)\n"
	      "      --recompile       on attach, have the JIT recompile code compiled before it,\n"
	      "                        so inlined frames are exact there too (a short slowdown)\n"
	      "      --no-boost        keep jprof's scheduling priority (default: nice -15, so a\n"
	      "                        saturated host cannot make it fall behind)\n"
	      "  -v, --verbose         debug messages, libbpf's included\n"
	      "  -h, --help            this text\n"
	      "      --version         version\n"
	      "\n"
	      "Exit codes: 0 ok, 1 runtime failure, 2 bad usage, 3 no such process, 4 output not writable.\n"
	      "\n"
	      "Examples:\n"
	      "  jprof record -a -d 30 -o host.html      # whole host, 30 s, HTML flame graph\n"
	      "  jprof record -p 1234 -F 999 -o app.folded\n"
	      "  jprof list                              # JVMs on this host and their agent state\n"
	      "  jprof report app.folded -o app.html\n",
	      f);
}

int opts_parse_u32(const char *arg, unsigned int min, unsigned int max, unsigned int *ret)
{
	unsigned long v;
	char *end;

	if (!arg || *arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno == ERANGE || v > 0xffffffffUL)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = (unsigned int)v;
	return 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return JP_EXIT_USAGE;
}

static int parse_pids(const char *arg, struct jp_opts *o, char *err, size_t errlen)
{
	char buf[4096], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return fail(err, errlen, "-p: list too long");
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int pid;

		if (opts_parse_u32(tok, 1, 0x3fffffff, &pid))
			return fail(err, errlen, "-p: '%s' is not a process id", tok);
		if (o->npids >= JP_MAX_PIDS)
			return fail(err, errlen, "-p: at most %d processes", JP_MAX_PIDS);
		o->pids[o->npids++] = pid;
	}
	if (!o->npids)
		return fail(err, errlen, "-p: no process id given");
	return 0;
}

static int parse_events(const char *arg, struct jp_opts *o, char *err, size_t errlen)
{
	char buf[256], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return fail(err, errlen, "-e: list too long");
	strcpy(buf, arg);
	o->events = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "cpu"))
			o->events |= 1u << JP_EV_CPU;
		else if (!strcmp(tok, "offcpu"))
			o->events |= 1u << JP_EV_OFFCPU;
		else if (!strcmp(tok, "syscalls"))
			o->events |= 1u << JP_EV_SYSCALL;
		else
			return fail(err, errlen, "-e: unknown event '%s' (cpu, offcpu, syscalls)", tok);
	}
	if (!o->events)
		return fail(err, errlen, "-e: no event given");
	return 0;
}

static int opts_validate(struct jp_opts *o, char *err, size_t errlen)
{
	if (o->cmd == JP_CMD_RECORD) {
		if (o->all && o->npids)
			return fail(err, errlen, "-a and -p exclude each other");
		if (!o->npids)
			o->all = true;
		if (o->input)
			return fail(err, errlen, "record takes no positional argument ('%s')", o->input);
		if (o->json && !(o->events & (1u << JP_EV_SYSCALL)))
			return fail(err, errlen, "-f json is the syscall table: it needs -e syscalls");
	} else if (o->cmd == JP_CMD_REPORT) {
		if (!o->input)
			return fail(err, errlen, "report needs an input file (a folded profile)");
		if (o->all || o->npids || o->duration_s)
			return fail(err, errlen, "report takes no -a, -p or -d");
	} else if (o->cmd == JP_CMD_LIST) {
		if (o->input || o->npids || o->all || o->output)
			return fail(err, errlen, "list takes no arguments");
	}
	if (o->format < 0 && o->output) {
		o->format = out_format_from_path(o->output);
		if (o->format < 0)
			o->format = OUT_FOLDED;
	}
	if (o->format < 0)
		o->format = OUT_FOLDED;
	return 0;
}

int opts_parse(int argc, char **argv, struct jp_opts *o, char *err, size_t errlen)
{
	const char *cmd;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->freq_hz = 99;
	o->format = -1;
	o->events = 1u << JP_EV_CPU;
	o->min_block_us = 100;
	o->slow_us = 10000;
	err[0] = '\0';

	if (argc < 2)
		return fail(err, errlen, "no command given (record, list, report)");
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		o->cmd = JP_CMD_HELP;
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		o->cmd = JP_CMD_VERSION;
		return 0;
	}
	if (!strcmp(cmd, "record"))
		o->cmd = JP_CMD_RECORD;
	else if (!strcmp(cmd, "list"))
		o->cmd = JP_CMD_LIST;
	else if (!strcmp(cmd, "report"))
		o->cmd = JP_CMD_REPORT;
	else
		return fail(err, errlen, "unknown command '%s' (record, list, report)", cmd);

	optind = 1;
	opterr = 0;
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, ":ap:F:d:o:f:e:vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->all = true;
			break;
		case 'p':
			r = parse_pids(optarg, o, err, errlen);
			if (r)
				return r;
			break;
		case 'F':
			if (opts_parse_u32(optarg, 1, 10000, &o->freq_hz))
				return fail(err, errlen, "-F: '%s' is not a frequency from 1 to 10000 Hz",
					    optarg);
			break;
		case 'd':
			if (opts_parse_u32(optarg, 1, 31 * 24 * 3600, &o->duration_s))
				return fail(err, errlen, "-d: '%s' is not a number of seconds (1 or more)",
					    optarg);
			break;
		case 'o':
			if (!*optarg)
				return fail(err, errlen, "-o: empty file name");
			o->output = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "json")) {
				o->json = true;
				break;
			}
			o->format = out_format_parse(optarg);
			if (o->format < 0)
				return fail(err, errlen, "-f: unknown format '%s' (folded, html, json)", optarg);
			break;
		case 'e':
			r = parse_events(optarg, o, err, errlen);
			if (r)
				return r;
			break;
		case OPT_PER_PID:
			o->per_pid = true;
			break;
		case OPT_PER_THREAD:
			o->per_thread = true;
			o->per_pid = true;
			break;
		case OPT_NO_ATTACH:
			o->no_attach = true;
			break;
		case OPT_DOTTED:
			o->dotted = true;
			break;
		case OPT_LINES:
			o->lines = true;
			break;
		case OPT_AGENT:
			o->agent_path = optarg;
			break;
		case OPT_RECOMPILE:
			o->recompile = true;
			break;
		case OPT_NO_BOOST:
			o->no_boost = true;
			break;
		case OPT_MIN_BLOCK:
			if (opts_parse_u32(optarg, 0, 1000000000, &o->min_block_us))
				return fail(err, errlen, "--min-block: '%s' is not a number of microseconds",
					    optarg);
			break;
		case OPT_SLOW:
			if (opts_parse_u32(optarg, 0, 1000000000, &o->slow_us))
				return fail(err, errlen, "--slow: '%s' is not a number of microseconds",
					    optarg);
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			o->cmd = JP_CMD_HELP;
			return 0;
		case OPT_VERSION:
			o->cmd = JP_CMD_VERSION;
			return 0;
		case ':':
			return fail(err, errlen, "option '%s' needs a value", argv[optind - 1]);
		default:
			return fail(err, errlen, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		if (o->cmd != JP_CMD_REPORT || optind + 1 < argc)
			return fail(err, errlen, "unexpected argument '%s'", argv[optind]);
		o->input = argv[optind];
	}
	return opts_validate(o, err, errlen);
}

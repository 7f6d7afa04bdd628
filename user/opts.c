// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * opts.c: command-line parsing; fills struct jp_opts, no side effects: the option table,
 * the usage text and the getopt loop. Values are parsed in opts_values.c, the options
 * checked against each other in opts_check.c (opts_int.h between them).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "opts_int.h"
#include "out/out.h"
#include "util/units.h"
#include "daemon/metrics.h"
#include "daemon/push.h"
#include "store/store.h"

enum {
	OPT_PER_PID = 256,
	OPT_PER_THREAD,
	OPT_NO_ATTACH,
	OPT_DOTTED,
	OPT_LINES,
	OPT_AGENT,
	OPT_VERSION,
	OPT_RECOMPILE,
	OPT_PERF_MAP,
	OPT_MIN_BLOCK,
	OPT_SLOW,
	OPT_TID,
	OPT_COMM,
	OPT_CONTAINER,
	OPT_INCLUDE,
	OPT_EXCLUDE,
	OPT_REVERSE,
	OPT_MIN_PERCENT,
	OPT_TOP,
	OPT_NO_BOOST,
	OPT_JAVA_WALK,
	OPT_AGGREGATE,
	OPT_NO_AGGREGATE,
	OPT_CGROUP,
	OPT_PER_CONTAINER,
	OPT_CONTAINERS,
	OPT_CPU_TIME,
	OPT_SAMPLES,
	OPT_LOCK_THRESHOLD,
	OPT_IDLE,
	OPT_ALLOC_INTERVAL,
	OPT_STORE,
	OPT_INTERVAL,
	OPT_MAX_AGE,
	OPT_MAX_SIZE,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_LAST,
	OPT_METRICS,
	OPT_CONFIG,
	OPT_DIFF,
	OPT_DIFF_ABSOLUTE,
	OPT_LISTEN,
	OPT_TOKEN_FILE,
	OPT_RECORDINGS,
	OPT_MARK,
	OPT_MARK_ON_PAUSE,
	OPT_MARK_ON_OOM,
	OPT_MARK_ON_CPU,
	OPT_PUSH_OTLP,
	OPT_PUSH_PARCA,
	OPT_BASE_SINCE,
	OPT_BASE_UNTIL,
	OPT_PUSH_PYROSCOPE,
	OPT_PUSH_NAME,
};

#define JP_COMMANDS "record, list, report, daemon, dump, serve, marks, trace"

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
	{ "perf-map", no_argument, NULL, OPT_PERF_MAP },
	{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
	{ "slow", required_argument, NULL, OPT_SLOW },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "container", required_argument, NULL, OPT_CONTAINER },
	{ "include", required_argument, NULL, OPT_INCLUDE },
	{ "exclude", required_argument, NULL, OPT_EXCLUDE },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "min-percent", required_argument, NULL, OPT_MIN_PERCENT },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "no-boost", no_argument, NULL, OPT_NO_BOOST },
	{ "java-walk", required_argument, NULL, OPT_JAVA_WALK },
	{ "aggregate", no_argument, NULL, OPT_AGGREGATE },
	{ "no-aggregate", no_argument, NULL, OPT_NO_AGGREGATE },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "per-container", no_argument, NULL, OPT_PER_CONTAINER },
	{ "containers", no_argument, NULL, OPT_CONTAINERS },
	{ "cpu-time", no_argument, NULL, OPT_CPU_TIME },
	{ "samples", no_argument, NULL, OPT_SAMPLES },
	{ "lock-threshold", required_argument, NULL, OPT_LOCK_THRESHOLD },
	{ "idle", no_argument, NULL, OPT_IDLE },
	{ "alloc-interval", required_argument, NULL, OPT_ALLOC_INTERVAL },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "max-age", required_argument, NULL, OPT_MAX_AGE },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "last", required_argument, NULL, OPT_LAST },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "diff", required_argument, NULL, OPT_DIFF },
	{ "diff-absolute", no_argument, NULL, OPT_DIFF_ABSOLUTE },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "recordings", required_argument, NULL, OPT_RECORDINGS },
	{ "mark", required_argument, NULL, OPT_MARK },
	{ "mark-on-pause", required_argument, NULL, OPT_MARK_ON_PAUSE },
	{ "mark-on-oom", no_argument, NULL, OPT_MARK_ON_OOM },
	{ "mark-on-cpu", required_argument, NULL, OPT_MARK_ON_CPU },
	{ "push-otlp", required_argument, NULL, OPT_PUSH_OTLP },
	{ "push-parca", required_argument, NULL, OPT_PUSH_PARCA },
	{ "base-since", required_argument, NULL, OPT_BASE_SINCE },
	{ "base-until", required_argument, NULL, OPT_BASE_UNTIL },
	{ "push-pyroscope", required_argument, NULL, OPT_PUSH_PYROSCOPE },
	{ "push-name", required_argument, NULL, OPT_PUSH_NAME },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ 0 },
};

void opts_usage(FILE *f)
{
	fputs("Usage: jprof record [-a | -p PID[,PID...]] [-F HZ] [-d SECONDS] [-o FILE] [OPTIONS]\n"
	      "       jprof list [--containers]\n"
	      "       jprof report INPUT [-o FILE] [-f FORMAT] [FILTERS] [--top N]\n"
	      "       jprof daemon [--store DIR] [--interval SEC] [--max-age AGE] [--max-size SIZE]\n"
	      "       jprof report --diff BASE NEW [-o FILE] [FILTERS] [--top N]\n"
	      "       jprof report --store DIR [--since T] [--until T] [-o FILE] [FILTERS]\n"
	      "                    [--base-since T --base-until T]\n"
	      "       jprof dump [--store DIR] [--last AGE] [-o FILE] [-f FORMAT] [FILTERS]\n"
	      "       jprof serve [--store DIR] [--recordings DIR] [--listen ADDR:PORT] [--token-file FILE]\n"
	      "       jprof dump --mark NAME [--last AGE]   |   jprof marks [--store DIR]\n"
	      "       jprof trace -p PID[,PID...] 'pkg.Class.method' [...] [-d SECONDS] [--slow DUR] [--top N] [--args] [--no-kernel] [-o FILE.json|.html|.jfr]\n"
	      "\n"
	      "System-wide profiler: Java (JIT, inlined, interpreted), native and kernel frames\n"
	      "in one stack, written as a flame graph.\n"
	      "\n"
	      "record options:\n"
	      "  -a, --all             every process on every CPU (default without -p)\n"
	      "  -p, --pid PID[,...]   only these processes (JVMs among them get Java frames)\n"
	      "      --cgroup PATH     only this cgroup v2 directory and below (absolute, or\n"
	      "                        relative to the cgroup2 mount); filtered in the kernel\n"
	      "      --container ID    only this container: full id or unique prefix (docker,\n"
	      "                        containerd, CRI-O, podman), or a pod uid: its containers\n"
	      "  -F, --freq HZ         samples per second per CPU (1-10000, default 99)\n"
	      "  -d, --duration SEC    stop after SEC seconds (default: at Ctrl-C or SIGTERM)\n"
	      "  -o, --output FILE     write here (default stdout; several -o write one recording\n"
	      "                        in several formats); format from the extension:\n"
	      "                        .html/.htm HTML flame graph, .folded/.collapsed/.txt folded,\n"
	      "                        .pb.gz/.pprof pprof, .jfr JFR, .speedscope.json speedscope\n"
	      "  -f, --format FMT      folded | html | pprof | jfr | speedscope (overrides the\n"
	      "                        extension); json: the syscall table as JSON\n"
	      "  -e, --event EV[,EV]   cpu (default): on-CPU samples; offcpu: blocked time with\n"
	      "                        the stack that blocked; syscalls: per-process syscall\n"
	      "                        table (stdout) and stacks of slow calls. Together they\n"
	      "                        share one time unit (ns); wall: cpu + offcpu + time\n"
	      "                        waiting for a CPU, every block kept (--min-block 0),\n"
	      "                        per thread: each thread's time adds up to the duration,\n"
	      "                        JVMs' GC and safepoint pauses beside the threads.\n"
	      "                        From the JVM agent: lock: contended monitor waits and\n"
	      "                        LockSupport.park intervals ([park], under the\n"
	      "                        blocker's class when it has one);\n"
	      "                        alloc: sampled allocations; live: allocations still\n"
	      "                        live at the end\n"
	      "      --cpu-time        the default: CPU samples weigh the CPU time their\n"
	      "                        thread ran since its previous sample (ns), so each\n"
	      "                        thread's total is its exact CPU time\n"
	      "      --samples         CPU samples count 1 each instead (FlameGraph's unit)\n"
	      "      --min-block USEC  offcpu: shortest blocked interval kept (default 100)\n"
	      "      --slow USEC       syscalls: stacks of calls at least this slow\n"
	      "                        (default 10000; 0: none)\n"
	      "      --per-pid         root frames per process: \"comm [pid]\"\n"
	      "      --per-thread      and per thread: \"name [tid]\" below the process\n"
	      "      --per-container   root frames per container: \"[container ID]\", \"[host]\"\n"
	      "      --no-attach       do not load the agent into JVMs; use what is there\n"
	      "      --dotted          Java names as java.lang.String.hashCode\n"
	      "      --lines           Java frames with source line numbers\n"
	      "      --agent PATH      the JVM agent library (default: beside jprof)\n"
	      "      --recompile       on attach, have the JIT recompile code compiled before it,\n"
	      "                        so inlined frames are exact there too (a short slowdown)\n"
	      "      --perf-map        agents loaded now also write /tmp/perf-PID.map, so perf and\n"
	      "                        other tools name JIT code (the file stays after the JVM)\n"
	      "      --lock-threshold NS  -e lock: only monitor waits of at least NS (default 0)\n"
	      "      --idle            -e lock, offcpu: keep the waits of idle pool threads (a\n"
	      "                        worker waiting for a task, an event loop's select),\n"
	      "                        left out and counted by default: they are no contention\n"
	      "      --alloc-interval BYTES  -e alloc/live: mean bytes between samples (512 KiB)\n"
	      "\n"
	      "report options (INPUT: a recording saved as .pb.gz, or folded stacks):\n"
	      "  -p, --pid PID[,...]   only these processes;  --tid TID[,...]  only these threads\n"
	      "      --comm NAME       only processes of this name\n"
	      "      --container ID    only this container (id, id prefix or name)\n"
	      "      --include REGEX   only stacks with a frame matching REGEX (POSIX ERE)\n"
	      "      --exclude REGEX   without stacks that have a frame matching REGEX\n"
	      "      --reverse         callers of the leaves: stacks leaf first\n"
	      "      --min-percent P   leave out frames under P% of the total\n"
	      "      --top N           the N hottest functions by self and total, as a table\n"
	      "      --per-pid, --per-thread, --per-container, --dotted, --lines  as for record\n"
	      "      --diff BASE       INPUT compared with the recording BASE: HTML coloured by\n"
	      "                        change (red grew, blue shrank), folded `stack base new`,\n"
	      "                        --top N: the N functions that grew and shrank most\n"
	      "      --diff-absolute   compare raw weights (default: shares of each total)\n"
	      "\n"
	      "daemon options (and -p, -F, -e cpu/offcpu/lock/alloc, --cgroup, ... as for record;\n"
	      "-F defaults to 19 Hz, always on):\n"
	      "      --store DIR       where the segments go (default " JP_STORE_DIR "); one\n"
	      "                        gzip'ed pprof file per interval in DIR/segments, root only\n"
	      "      --interval SEC    seconds each segment covers (1-3600, default 60)\n"
	      "      --max-age AGE     remove segments older than AGE (30s, 10m, 24h, 7d;\n"
	      "                        default 24h; 0: no limit)\n"
	      "      --max-size SIZE   keep the segments under SIZE in all, oldest removed first\n"
	      "                        (512M, 1G; default 1G; 0: no limit)\n"
	      "      --metrics ADDR:PORT  serve GET /metrics (Prometheus text format) there; a\n"
	      "                        port alone listens on 127.0.0.1 (default: off)\n"
	      "      --push-pyroscope URL  send every segment, in order and once, to a Grafana\n"
	      "                        Pyroscope server (URL/ingest, pprof); while it is down\n"
	      "                        they wait in the store\n"
	      "      --push-name NAME  the application there, Parca's labels (default\n"
	      "                        jprof{host=HOSTNAME})\n"
	      "      --push-otlp URL   send every segment, in order and once, as OTLP profiles\n"
	      "                        (URL/v1development/profiles, protobuf); while the\n"
	      "                        receiver is down they wait in the store\n"
	      "      --push-parca URL  send every segment, in order and once, to a Parca server\n"
	      "                        (URL/profiles/writeraw, its labels from --push-name)\n"
	      "      --mark-on-pause MS  a JVM's GC pause of at least MS milliseconds keeps the\n"
	      "                        interval before and after it as a mark (as dump --mark;\n"
	      "                        one mark in 10 minutes at most)\n"
	      "      --mark-on-oom     a process the kernel's OOM killer kills keeps the minute\n"
	      "                        before and the interval after as a mark\n"
	      "      --mark-on-cpu PCT:SECONDS  a process over PCT% of a core for SECONDS in\n"
	      "                        a row keeps the minute before and the interval after\n"
	      "      --config FILE     key = value lines: interval, max-age, max-size, events,\n"
	      "                        rate (-F); they win over the command line. SIGHUP reads\n"
	      "                        it again (events: off-CPU, lock and alloc change now)\n"
	      "  SIGTERM or SIGINT write the open interval and end the daemon.\n"
	      "\n"
	      "report of a recording: --since T, --until T keep its samples of that range\n"
	      "                        (100 ms slots): +5s, +2500ms from its start, or as below\n"
	      "report --store options: the segments overlapping the range, merged:\n"
	      "      --since T         from T: 10m (ago), 2026-11-27T04:00:00Z, @UNIXSECONDS\n"
	      "                        (default: the oldest segment)\n"
	      "      --until T         up to T (default: now)\n"
	      "      --base-since T, --base-until T  compare the range with this one, as\n"
	      "                        --diff compares two files (html, folded, --top)\n"
	      "\n"
	      "dump options: a running daemon's open interval (not yet in a segment) and the\n"
	      "segments before it, merged, written as report writes them (filters, -o, -f, --top):\n"
	      "      --store DIR       the daemon's store (default " JP_STORE_DIR ")\n"
	      "      --last AGE        the segments of the last AGE (5m, 1h; default 5m)\n"
	      "      --mark NAME       keep the last AGE (and the open interval) in the store as\n"
	      "                        DIR/marks/UTC-NAME, outside its limits; `jprof marks`\n"
	      "                        lists them, `report --store DIR/marks/...` reads one\n"
	      "\n"
	      "serve options: a web UI over the store (timeline, a range's flame graph, the\n"
	      "diff of two ranges, downloads as pprof, JFR, folded) and saved recordings; its\n"
	      "address is printed with a token every request needs:\n"
	      "      --store DIR       the daemon's store (default " JP_STORE_DIR "; with\n"
	      "                        --recordings alone: none)\n"
	      "      --recordings DIR  also the recordings saved in DIR (.pb.gz, .pprof, .jfr,\n"
	      "                        .folded): each a flame graph, any two a diff; DIR must be\n"
	      "                        yours and writable by no one else\n"
	      "      --listen ADDR:PORT  where (default 127.0.0.1:7070; a port alone: 127.0.0.1)\n"
	      "      --token-file FILE the token (16-32 letters, digits, - or _; the file 0600);\n"
	      "                        default: a random one\n"
	      "\n"
	      "list options:\n"
	      "      --containers      the containers on this host, with their JVMs\n"
	      "\n"
	      "      --no-boost        keep jprof's scheduling priority (default: nice -15, so a\n"
	      "                        saturated host cannot make it fall behind)\n"
	      "      --java-walk MODE  (record) who walks Java stacks: bpf (default) the BPF\n"
	      "                        program, from the sampled registers or (in VM or native\n"
	      "                        code) the thread's frame anchor, with a signal to the\n"
	      "                        agent only where it cannot (stubs, prologues); check: bpf\n"
	      "                        and a signal in 1 of 64 samples, compared; signal: the\n"
	      "                        agent, by a signal, always; shadow: both, compared\n"
	      "      --aggregate       (record) count repeated CPU stacks in the kernel: a stack\n"
	      "                        goes through the ring once, then only its counts per\n"
	      "                        thread and 100 ms (samples that need the agent, and\n"
	      "                        --java-walk shadow or check, go whole); --no-aggregate:\n"
	      "                        a record per sample (the default)\n"
	      "  -v, --verbose         the full end-of-run report (per JVM: BPF walk, agent\n"
	      "                        events, GC tables, ...) and debug messages; -vv: libbpf's\n"
	      "                        debug messages too\n"
	      "  -h, --help            this text\n"
	      "      --version         version\n"
	      "\n"
	      "Exit codes: 0 ok, 1 runtime failure, 2 bad usage, 3 no such process, 4 output not writable.\n"
	      "\n"
	      "Examples:\n"
	      "  jprof record -a -d 30 -o host.html      # whole host, 30 s, HTML flame graph\n"
	      "  jprof record -p 1234 -F 999 -o app.folded\n"
	      "  jprof list                              # JVMs on this host and their agent state\n"
	      "  jprof record --container 3f2a -d 30 -o c.html   # one container, from the host\n"
	      "  jprof record -a --per-container -o all.pb.gz    # every container, grouped\n"
	      "  jprof record -a -d 60 -o host.pb.gz     # save everything; look later:\n"
	      "  jprof report host.pb.gz --pid 1234 --top 20\n"
	      "  jprof report host.pb.gz --include 'Parser' -o parser.html\n"
	      "  jprof report --diff before.pb.gz after.pb.gz -o change.html\n"
	      "  jprof daemon --store /var/lib/jprof     # always on (see dist/jprof.service)\n"
	      "  jprof report --store /var/lib/jprof --since 10m -o last10m.html\n"
	      "  jprof dump --last 2m -o now.html        # what the daemon saw until now\n"
	      "  jprof trace -p 1234 'com.shop.OrderService.place' -d 30   # every call timed\n",
	      f);
}

int opts_parse(int argc, char **argv, struct jp_opts *o, char *err, size_t errlen)
{
	const char *cmd;
	bool weight_given = false; /* --cpu-time or --samples */
	int c, r;

	memset(o, 0, sizeof(*o));
	o->freq_hz = 99;
	o->java_walk = JP_JWALK_BPF;
	o->format = -1;
	o->events = 1u << JP_EV_CPU;
	o->cpu_time = true; /* CPU samples weigh their thread's CPU time; --samples counts */
	o->min_block_us = 100;
	o->slow_us = 10000;
	o->max_age_s = o->max_size = ~0ull; /* not given: the daemon's defaults */
	err[0] = '\0';

	if (argc < 2)
		return fail(err, errlen, "no command given (%s)", JP_COMMANDS);
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
	else if (!strcmp(cmd, "daemon"))
		o->cmd = JP_CMD_DAEMON, o->freq_hz = JP_DAEMON_HZ;
	else if (!strcmp(cmd, "dump"))
		o->cmd = JP_CMD_DUMP;
	else if (!strcmp(cmd, "serve"))
		o->cmd = JP_CMD_SERVE;
	else if (!strcmp(cmd, "marks"))
		o->cmd = JP_CMD_MARKS;
	else
		return fail(err, errlen, "unknown command '%s' (%s)", cmd, JP_COMMANDS);

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
			r = opts_parse_pids(optarg, o, err, errlen);
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
			if (o->noutputs >= JP_MAX_OUTPUTS)
				return fail(err, errlen, "-o: at most %d outputs", JP_MAX_OUTPUTS);
			o->outputs[o->noutputs++] = optarg;
			o->output = o->outputs[0];
			break;
		case 'f':
			if (!strcmp(optarg, "json")) {
				o->json = true;
				break;
			}
			o->format = out_format_parse(optarg);
			if (o->format < 0)
				return fail(err, errlen, "-f: unknown format '%s' (folded, html, pprof, jfr, speedscope, json)", optarg);
			break;
		case 'e':
			r = opts_parse_events(optarg, o, err, errlen);
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
		case OPT_PERF_MAP:
			o->perf_map = true;
			break;
		case OPT_NO_BOOST:
			o->no_boost = true;
			break;
		case OPT_AGGREGATE:
			o->aggregate = true;
			break;
		case OPT_NO_AGGREGATE:
			o->aggregate = false;
			break;
		case OPT_JAVA_WALK:
			if (!strcmp(optarg, "signal"))
				o->java_walk = JP_JWALK_OFF;
			else if (!strcmp(optarg, "shadow"))
				o->java_walk = JP_JWALK_SHADOW;
			else if (!strcmp(optarg, "bpf"))
				o->java_walk = JP_JWALK_BPF;
			else if (!strcmp(optarg, "check"))
				o->java_walk = JP_JWALK_CHECK;
			else
				return fail(err, errlen,
					    "--java-walk: '%s': expected signal, bpf, check or shadow",
					    optarg);
			break;
		case OPT_CGROUP:
			if (!*optarg)
				return fail(err, errlen, "--cgroup: empty path");
			o->cgroup = optarg;
			break;
		case OPT_PER_CONTAINER:
			o->per_container = true;
			break;
		case OPT_CONTAINERS:
			o->list_containers = true;
			break;
		case OPT_CPU_TIME:
		case OPT_SAMPLES:
			if (weight_given && o->cpu_time != (c == OPT_CPU_TIME))
				return fail(err, errlen, "--cpu-time and --samples: give one");
			o->cpu_time = c == OPT_CPU_TIME;
			weight_given = true;
			break;
		case OPT_IDLE:
			o->idle = true;
			break;
		case OPT_LOCK_THRESHOLD:
			if (opts_parse_u32(optarg, 0, 4000000000u, &o->lock_threshold_ns))
				return fail(err, errlen, "--lock-threshold: '%s' is not nanoseconds",
					    optarg);
			break;
		case OPT_ALLOC_INTERVAL:
			if (opts_parse_u32(optarg, 1, 1u << 30, &o->alloc_interval))
				return fail(err, errlen,
					    "--alloc-interval: '%s' is not bytes (1 .. 1073741824)",
					    optarg);
			break;
		case OPT_MIN_BLOCK:
			o->min_block_set = true;
			if (opts_parse_u32(optarg, 0, 1000000000, &o->min_block_us))
				return fail(err, errlen, "--min-block: '%s' is not a number of microseconds",
					    optarg);
			break;
		case OPT_SLOW:
			if (opts_parse_u32(optarg, 0, 1000000000, &o->slow_us))
				return fail(err, errlen, "--slow: '%s' is not a number of microseconds",
					    optarg);
			break;
		case OPT_TID:
			r = opts_parse_ids(optarg, o->tids, &o->ntids, "--tid", "thread", err,
					   errlen);
			if (r)
				return r;
			break;
		case OPT_COMM:
			o->comm = optarg;
			break;
		case OPT_CONTAINER:
			if (!*optarg)
				return fail(err, errlen, "--container: empty id");
			o->container = optarg;
			break;
		case OPT_INCLUDE:
			o->include = optarg;
			break;
		case OPT_EXCLUDE:
			o->exclude = optarg;
			break;
		case OPT_REVERSE:
			o->reverse = true;
			break;
		case OPT_MIN_PERCENT:
			if (opts_parse_percent(optarg, &o->min_percent))
				return fail(err, errlen, "--min-percent: '%s' is not a percentage (0-100)",
					    optarg);
			break;
		case OPT_TOP:
			if (opts_parse_u32(optarg, 1, 1000000, &o->top))
				return fail(err, errlen, "--top: '%s' is not a count (1 or more)", optarg);
			break;
		case OPT_DIFF:
			if (!*optarg)
				return fail(err, errlen, "--diff: empty path");
			o->diff_base = optarg;
			break;
		case OPT_DIFF_ABSOLUTE:
			o->diff_absolute = true;
			break;
		case OPT_STORE:
			if (!*optarg)
				return fail(err, errlen, "--store: empty path");
			o->store = optarg;
			break;
		case OPT_INTERVAL:
			if (opts_parse_u32(optarg, 1, 3600, &o->interval_s))
				return fail(err, errlen, "--interval: '%s' is not seconds from 1 to 3600",
					    optarg);
			break;
		case OPT_MAX_AGE:
			if (units_parse_duration(optarg, &o->max_age_s))
				return fail(err, errlen, "--max-age: '%s' is not a duration (30s, 10m, 24h, 7d)",
					    optarg);
			break;
		case OPT_MAX_SIZE:
			if (units_parse_size(optarg, &o->max_size))
				return fail(err, errlen, "--max-size: '%s' is not a size (1048576, 512K, 100M, 1G)",
					    optarg);
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
		case OPT_BASE_SINCE:
		case OPT_BASE_UNTIL: {
			static const char *const names[] = {"--since", "--until", "--base-since",
							    "--base-until"};
			const char **dst[] = {&o->since, &o->until, &o->base_since, &o->base_until};
			int k = c == OPT_SINCE ? 0 : c == OPT_UNTIL ? 1 : c == OPT_BASE_SINCE ? 2 : 3;
			__u64 t;

			/* checked now, read when the report runs (a duration counts back from then) */
			if (optarg[0] == '+' && k < 2 ? opts_parse_offset_ns(optarg, &t)
						      : units_parse_time(optarg, ~0ull >> 2, &t))
				return fail(err, errlen,
					    "%s: '%s' is not a time (10m, 2026-11-27T04:00:00Z, @SECONDS%s)",
					    names[k], optarg, k < 2 ? ", +5s or +2500ms" : "");
			*dst[k] = optarg;
			break;
		}
		case OPT_LAST:
			/* a bad range: not a duration, none at all, or past what a store keeps */
			if (units_parse_duration(optarg, &o->last_s) || !o->last_s ||
			    o->last_s > 366ull * 24 * 3600)
				return fail(err, errlen,
					    "--last: '%s' is not a duration from 1s to 366d (30s, 10m, "
					    "24h)",
					    optarg);
			break;
		case OPT_CONFIG:
			if (!*optarg)
				return fail(err, errlen, "--config: empty path");
			o->config = optarg;
			break;
		case OPT_LISTEN:
		case OPT_METRICS: {
			struct sockaddr_in6 sa;
			size_t sl;

			if (metrics_parse_addr(optarg, &sa, sizeof(sa), &sl))
				return fail(err, errlen,
					    "%s: '%s' is not ADDR:PORT or PORT (9100, "
					    "127.0.0.1:9100, [::1]:9100)",
					    c == OPT_LISTEN ? "--listen" : "--metrics", optarg);
			*(c == OPT_LISTEN ? &o->listen : &o->metrics) = optarg;
			break;
		}
		case OPT_PUSH_PYROSCOPE:
			if (push_url_ok(optarg))
				return fail(err, errlen,
					    "--push-pyroscope: '%s' is not an http:// or https:// "
					    "address (no ? or #)",
					    optarg);
			o->push_url = optarg;
			break;
		case OPT_PUSH_NAME: {
			size_t n = strlen(optarg);

			if (!n || n > 200 || strspn(optarg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
							    "QRSTUVWXYZ0123456789._-{}=,") != n)
				return fail(err, errlen,
					    "--push-name: '%s' is not NAME or NAME{key=value,...} of "
					    "letters, digits, '.', '-' and '_'",
					    optarg);
			o->push_name = optarg;
			break;
		}
		case OPT_PUSH_OTLP:
			if (push_url_ok(optarg))
				return fail(err, errlen,
					    "--push-otlp: '%s' is not an http:// or https:// address "
					    "(no ? or #)",
					    optarg);
			o->push_otlp = optarg;
			break;
		case OPT_PUSH_PARCA:
			if (push_url_ok(optarg))
				return fail(err, errlen,
					    "--push-parca: '%s' is not an http:// or https:// address "
					    "(no ? or #)",
					    optarg);
			o->push_parca = optarg;
			break;
		case OPT_MARK_ON_OOM:
			o->mark_oom = true;
			break;
		case OPT_MARK_ON_CPU: {
			char pct[16];
			const char *colon = strchr(optarg, ':');

			if (!colon || (size_t)(colon - optarg) >= sizeof(pct))
				colon = NULL;
			else
				snprintf(pct, sizeof(pct), "%.*s", (int)(colon - optarg), optarg);
			if (!colon || opts_parse_u32(pct, 1, 100000, &o->mark_cpu_pct) ||
			    opts_parse_u32(colon + 1, 1, 3600, &o->mark_cpu_s))
				return fail(err, errlen,
					    "--mark-on-cpu: '%s' is not PCT:SECONDS (percent of one "
					    "core 1..100000, seconds 1..3600; 90:30)",
					    optarg);
			break;
		}
		case OPT_MARK_ON_PAUSE:
			if (opts_parse_u32(optarg, 1, 3600000, &o->mark_pause_ms))
				return fail(err, errlen,
					    "--mark-on-pause: '%s' is not milliseconds from 1 to "
					    "3600000",
					    optarg);
			break;
		case OPT_MARK:
			if (!store_mark_name_ok(optarg))
				return fail(err, errlen,
					    "--mark: '%s' is not 1 to %d letters, digits, '.', '-' "
					    "or '_'",
					    optarg, STORE_MARK_NAME_MAX);
			o->mark = optarg;
			break;
		case OPT_TOKEN_FILE:
			if (!*optarg)
				return fail(err, errlen, "--token-file: empty path");
			o->token_file = optarg;
			break;
		case OPT_RECORDINGS:
			if (!*optarg)
				return fail(err, errlen, "--recordings: empty path");
			o->recordings = optarg;
			break;
		case 'v':
			o->verbose = true;
			o->verbosity++;
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

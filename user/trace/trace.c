/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* trace.c: jprof trace: attach, start the agent's method trace, read its records, report. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "opts.h"
#include "ring.h"
#include "jvm/agent_files.h"
#include "jvm/agent_ring.h"
#include "jvm/attach.h"
#include "jvm/discover.h"
#include "trace/tfile.h"
#include "trace/trace.h"
#include "trace/tstats.h"
#include "util/safe_open.h"

/*
 * The agent (jvmagent/trace.c) rewrites the matched methods and writes one record per
 * call into jprof-<nspid>-<token>.trace in the JVM's /tmp (ring.h JP_MT_*). This reads
 * that file with pread/pwrite (never mapped: the JVM's user owns it and could shrink it),
 * stamps reader_ns each round so the agent knows jprof lives, and at the end sets stop_req
 * and waits for the agent to put the classes back (state JP_MT_STOPPED). Everything read
 * is the JVM's: sizes, counts, ids and names are checked.
 */

#define POLL_MS	     100
#define STOP_WAIT_MS 5000
#define ATTACH_MS    15000
#define FILE_MAX     (JP_MT_DATA_OFF + (1ull << 20) * sizeof(struct jp_mt_rec))

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

int trace_check_pattern(const char *p, char *err, size_t errlen)
{
	const char *paren = strchr(p, '('), *end = paren ? paren : p + strlen(p), *dot;
	size_t n = strlen(p);

	for (dot = end; dot > p && dot[-1] != '.'; dot--)
		;
	if (n == 0 || n > 400 || strpbrk(p, ",| \t\n=")) {
		snprintf(err, errlen,
			 "bad pattern '%s': 'pkg.Class.method' (globs, an optional "
			 "(descriptor)), no ',', '|', '=' or blanks",
			 p);
		return -EINVAL;
	}
	if (dot == p || dot - 1 == p || dot == end) {
		snprintf(err, errlen,
			 "bad pattern '%s': it needs a class and a method: "
			 "'pkg.Class.method'",
			 p);
		return -EINVAL;
	}
	if (paren && p[n - 1] != ')' && !strchr(paren, ')')) {
		snprintf(err, errlen, "bad pattern '%s': the descriptor lacks its ')'", p);
		return -EINVAL;
	}
	return 0;
}

static int parse_ns(const char *s, __u64 *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	if (!strcmp(end, "ns"))
		*ret = (__u64)v;
	else if (!strcmp(end, "us"))
		*ret = (__u64)(v * 1e3);
	else if (!strcmp(end, "ms"))
		*ret = (__u64)(v * 1e6);
	else if (!strcmp(end, "s") || !*end)
		*ret = (__u64)(v * 1e9);
	else
		return -EINVAL;
	return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int trace_parse(int argc, char **argv, struct trace_opts *o, char *err, size_t errlen)
{
	static const struct option lo[] = {
		{"pid", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"format", required_argument, NULL, 'f'},
		{"slow", required_argument, NULL, 's'},
		{"top", required_argument, NULL, 't'},
		{"agent", required_argument, NULL, 'A'},
		{"verbose", no_argument, NULL, 'v'},
		{NULL, 0, NULL, 0},
	};
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->top = 10;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:d:o:f:v", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_uint(optarg, 0x7fffffff, &v) || !v) {
				snprintf(err, errlen, "trace -p takes one pid, not '%s'", optarg);
				return JP_EXIT_USAGE;
			}
			o->pid = (__u32)v;
			break;
		case 'd':
			if (parse_uint(optarg, 86400 * 365, &v) || !v) {
				snprintf(err, errlen, "bad duration '%s' (seconds)", optarg);
				return JP_EXIT_USAGE;
			}
			o->duration_s = (unsigned int)v;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				snprintf(err, errlen, "trace formats: text, json (not '%s')",
					 optarg);
				return JP_EXIT_USAGE;
			}
			o->json = !strcmp(optarg, "json");
			break;
		case 's':
			if (parse_ns(optarg, &o->slow_ns)) {
				snprintf(err, errlen, "bad --slow '%s' (e.g. 10ms, 500us)", optarg);
				return JP_EXIT_USAGE;
			}
			break;
		case 't':
			if (parse_uint(optarg, TSTATS_SLOWEST_MAX, &v)) {
				snprintf(err, errlen, "--top takes 0..%u", TSTATS_SLOWEST_MAX);
				return JP_EXIT_USAGE;
			}
			o->top = (unsigned int)v;
			break;
		case 'A':
			o->agent_path = optarg;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case ':':
			snprintf(err, errlen, "trace: option '%s' needs a value", argv[optind - 1]);
			return JP_EXIT_USAGE;
		default:
			snprintf(err, errlen, "trace: unknown option '%s'", argv[optind - 1]);
			return JP_EXIT_USAGE;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (o->npatterns == TRACE_PATTERNS_MAX) {
			snprintf(err, errlen, "at most %d patterns", TRACE_PATTERNS_MAX);
			return JP_EXIT_USAGE;
		}
		if (trace_check_pattern(argv[i], err, errlen))
			return JP_EXIT_USAGE;
		o->patterns[o->npatterns++] = argv[i];
	}
	if (!o->pid) {
		snprintf(err, errlen, "trace needs -p PID");
		return JP_EXIT_USAGE;
	}
	if (!o->npatterns) {
		snprintf(err, errlen, "trace needs at least one 'pkg.Class.method' pattern");
		return JP_EXIT_USAGE;
	}
	if (o->output && strlen(o->output) > 5 &&
	    !strcmp(o->output + strlen(o->output) - 5, ".json"))
		o->json = 1;
	return 0;
}

/* the agent option: trace=P1|P2..., within the agent's bound */
static int agent_options(const struct trace_opts *o, char *buf, size_t n)
{
	size_t len = (size_t)snprintf(buf, n, "trace=");

	for (size_t i = 0; i < o->npatterns; i++) {
		int w = snprintf(buf + len, n - len, "%s%s", i ? "|" : "", o->patterns[i]);

		if (w < 0 || (size_t)w >= n - len || len + (size_t)w - 6 > JP_MT_PATTERNS_MAX)
			return -E2BIG;
		len += (size_t)w;
	}
	if (o->slow_ns) {
		unsigned long long us = (o->slow_ns + 999) / 1000;
		int w = snprintf(buf + len, n - len, ",traceslow=%llu",
				 us > 1000000000 ? 1000000000ull : us);

		if (w < 0 || (size_t)w >= n - len)
			return -E2BIG;
	}
	return 0;
}

static int attach(const struct jvm_info *jvm, const char *agent, const char *options)
{
	struct jvm_attach *a = NULL;
	const char *why = "";
	int fd, ret;

	fd = open(agent, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		pr_err("cannot read the agent %s: %s", agent, strerror(-ret));
		return ret;
	}
	ret = jvm_attach__start(jvm, fd, options, ATTACH_MS, JVM_ATTACH_AGAIN, &a);
	if (ret) {
		pr_err("cannot attach to %u: %s", jvm->pid, strerror(-ret));
		close(fd);
		return ret;
	}
	while (!jvm_attach__step(a)) {
		struct pollfd pfd = {.fd = jvm_attach__fd(a), .events = POLLIN};

		(void)poll(&pfd, 1, 50);
	}
	ret = jvm_attach__result(a, &why);
	if (ret < 0)
		pr_err("cannot start the trace in JVM %u: %s", jvm->pid, why);
	jvm_attach__free(a);
	close(fd);
	return ret < 0 ? ret : 0;
}

/*
 * The trace file the agent maps: "jprof-<nspid>-<token>.trace" on a line of
 * /proc/<pid>/maps (not a "(deleted)" one), read within the bounds of agent_files.h. The
 * agent that runs the trace may be another copy than the one of the ring (trace.c in the
 * agent: a trace beside another jprof's agent), so its name is looked up on its own.
 */
static int find_trace_name(const struct jvm_info *jvm, char *name, size_t cap)
{
	char path[64], line[4096], want[32];
	const size_t tail = JP_CHAN_TOKEN_LEN + sizeof(".trace") - 1;
	unsigned long lines = 0, bytes = 0;
	size_t wn;
	int found = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", jvm->pid);
	snprintf(want, sizeof(want), "/jprof-%u-", jvm->nspid);
	wn = strlen(want);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		if (++lines > JVM_MAPS_MAX_LINES || (bytes += n) > JVM_MAPS_MAX_BYTES) {
			found = -E2BIG;
			break;
		}
		line[n] = '\0';
		if (n < wn + tail || strcmp(line + n - 6, ".trace") ||
		    strncmp(line + n - tail - wn, want, wn) ||
		    strspn(line + n - tail, "0123456789abcdef") != JP_CHAN_TOKEN_LEN)
			continue;
		snprintf(name, cap, "%s", line + n - tail - wn + 1);
		found = 0;
	}
	fclose(f);
	return found;
}

static int open_trace_file(const struct jvm_info *jvm, struct tfile **ret)
{
	struct safe_expect exp = {.uid = jvm->uid, .max_size = FILE_MAX, .one_link = true};
	struct stat st;
	char name[80];
	int fd, err;

	err = find_trace_name(jvm, name, sizeof(name));
	if (err)
		return err;
	fd = safe_open_proc_tmp(jvm->pid, name, SAFE_RDWR, &exp, &st);
	if (fd < 0)
		return fd;
	return tfile__open_fd(fd, (__u64)st.st_size, ret);
}

static const char *stop_phrase(__u32 why)
{
	switch (why) {
	case JP_MT_STOP_REQUESTED:
		return "stopped by jprof";
	case JP_MT_STOP_READER_GONE:
		return "stopped by the agent: jprof stopped reading";
	case JP_MT_STOP_OVERHEAD:
		return "stopped by the agent: the timed calls cost over its budget";
	case JP_MT_STOP_VM_DEATH:
		return "the JVM exited";
	case JP_MT_STOP_REPLACED:
		return "stopped: another trace started in this JVM";
	default:
		return "stopped";
	}
}

static void name_threads(const struct jvm_info *jvm, struct tstats *s)
{
	struct jvm_agent *a = jvm_agent__open(jvm->pid, jvm->nspid);

	if (!a)
		return;
	(void)jvm_agent__dict_refresh(a);
	for (__u32 i = 0; i < TSTATS_SLOWEST_MAX; i++) {
		__u32 tid;

		if (tstats__slow_tid(s, i, &tid))
			break;
		const char *n = jvm_agent__thread_name(a, tid);

		if (n)
			(void)tstats__thread(s, tid, n);
	}
	jvm_agent__free(a);
}

int trace_main(int argc, char **argv)
{
	static struct trace_opts o;
	char err[512], options[JP_MT_PATTERNS_MAX + 16], self[PATH_MAX], agent[PATH_MAX];
	struct sigaction sa = {.sa_handler = on_signal};
	struct tfile *tf = NULL;
	struct tstats_totals tot = {0};
	struct jp_mt_hdr h;
	struct jvm_info jvm;
	struct tstats *s = NULL;
	__u64 t0, deadline, stop_at = 0;
	unsigned int nm;
	ssize_t n;
	FILE *out = stdout;
	int ret;

	ret = trace_parse(argc, argv, &o, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "jprof: %s\nTry 'jprof --help'.\n", err);
		return ret;
	}
	if (o.verbose)
		log_set_level(LOG_DEBUG);
	if (agent_options(&o, options, sizeof(options))) {
		pr_err("the patterns are longer than the agent takes (%u bytes)",
		       JP_MT_PATTERNS_MAX);
		return JP_EXIT_USAGE;
	}
	ret = jvm_probe("/proc", o.pid, &jvm);
	if (ret == -ESRCH) {
		pr_err("no process %u", o.pid);
		return JP_EXIT_NO_TARGET;
	}
	if (ret) {
		pr_err("process %u is not a Java (HotSpot) process", o.pid);
		return JP_EXIT_NO_TARGET;
	}
	if (o.agent_path) {
		snprintf(agent, sizeof(agent), "%s", o.agent_path);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		snprintf(agent, sizeof(agent), "%s/libjprofagent.so", dirname(self));
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return JP_EXIT_FAILURE;
	s = tstats__new(o.top);
	if (!s)
		return JP_EXIT_FAILURE;
	tstats__set_slow(s, o.slow_ns);
	ret = JP_EXIT_FAILURE;
	if (attach(&jvm, agent, options))
		goto out;
	err[0] = '\0';
	if ((ret = open_trace_file(&jvm, &tf))) {
		pr_err("the agent in JVM %u started no trace file (%s)", o.pid, strerror(-ret));
		ret = JP_EXIT_FAILURE;
		goto out;
	}
	ret = JP_EXIT_FAILURE;
	t0 = mono_ns();
	deadline = o.duration_s ? t0 + o.duration_s * 1000000000ull : ~0ull;
	pr_info("tracing %zu pattern%s in JVM %u%s", o.npatterns, o.npatterns > 1 ? "s" : "", o.pid,
		o.duration_s ? "" : " until Ctrl-C");
	for (;;) {
		__u64 now = mono_ns();
		__u32 state;

		tfile__stamp(tf, now);
		tfile__drain(tf, s);
		state = tfile__state(tf);
		if (!state || state == JP_MT_STOPPED)
			break;
		if (!stop_at && (exiting || now >= deadline || kill((pid_t)o.pid, 0))) {
			tfile__stop(tf);
			stop_at = now;
		}
		if (stop_at && now - stop_at > STOP_WAIT_MS * 1000000ull) {
			pr_warn("the agent did not confirm the trace's end within %u s",
				STOP_WAIT_MS / 1000);
			break;
		}
		(void)poll(NULL, 0, POLL_MS);
	}
	tfile__drain(tf, s);
	nm = tfile__finish(tf, s, &h);
	tot.dropped = h.dropped;
	tot.lost_depth = h.lost_depth;
	tot.unmatched = h.unmatched;
	tot.classes_failed = h.classes_failed;
	tot.retransform_failed = h.retransform_failed;
	tot.cost_ns = h.cost_ns;
	tot.stopped = h.state == JP_MT_STOPPED ? stop_phrase(h.stop_why)
		      : kill((pid_t)o.pid, 0)  ? "the JVM exited"
					       : "not confirmed by the agent";
	tot.seconds = (double)(mono_ns() - t0) / 1e9;
	if (tfile__malformed(tf))
		pr_warn("%llu records malformed, skipped",
			(unsigned long long)tfile__malformed(tf));
	if (!nm) {
		pr_err("no method of JVM %u matched %s%s", o.pid, o.patterns[0],
		       o.npatterns > 1 ? " or the other patterns" : "");
		goto out;
	}
	name_threads(&jvm, s);
	if (o.output) {
		out = fopen(o.output, "we");
		if (!out) {
			pr_err("cannot write %s: %s", o.output, strerror(errno));
			out = stdout;
			ret = JP_EXIT_OUTPUT;
			goto out;
		}
	}
	if (o.json)
		tstats__write_json(s, &tot, out);
	else
		tstats__write_text(s, &tot, out);
	ret = JP_EXIT_OK;
	if (out != stdout && fclose(out)) {
		pr_err("cannot write %s: %s", o.output, strerror(errno));
		ret = JP_EXIT_OUTPUT;
	}
out:
	tfile__free(tf);
	tstats__free(s);
	return ret;
}

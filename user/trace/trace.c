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

#include "clock.h"
#include "log.h"
#include "opts.h"
#include "profile.h"
#include "out/out.h"
#include "ring.h"
#include "jvm/agent_files.h"
#include "jvm/agent_ring.h"
#include "jvm/attach.h"
#include "jvm/discover.h"
#include "jvm/pauses.h"
#include "trace/mtk.h"
#include "trace/tfile.h"
#include "trace/tout.h"
#include "trace/trace.h"
#include "trace/tsplit.h"
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

/* "PID[,PID...]" into o->pids (replacing an earlier -p); -EINVAL */
static int parse_pids(const char *s, struct trace_opts *o)
{
	char buf[256], *save = NULL, *tok;
	unsigned long v;

	if (strlen(s) >= sizeof(buf) || s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,"))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	o->npids = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint(tok, 0x7fffffff, &v) || !v || o->npids == TRACE_PIDS_MAX)
			return -EINVAL;
		for (size_t i = 0; i < o->npids; i++)
			if (o->pids[i] == v)
				return -EINVAL;
		o->pids[o->npids++] = (__u32)v;
	}
	o->pid = o->npids ? o->pids[0] : 0;
	return o->npids ? 0 : -EINVAL;
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
		{"no-kernel", no_argument, NULL, 'K'},
		{"args", no_argument, NULL, 'a'},
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
			if (parse_pids(optarg, o)) {
				snprintf(err, errlen,
					 "trace -p takes a pid or distinct pids joined by ',' (at "
					 "most %d), not '%s'",
					 TRACE_PIDS_MAX, optarg);
				return JP_EXIT_USAGE;
			}
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
		case 'K':
			o->no_kernel = 1;
			break;
		case 'a':
			o->args = JP_MT_ARGS;
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
	if (o->args && !o->slow_ns) {
		snprintf(err, errlen,
			 "--args keeps the arguments of the calls --slow names: give both");
		return JP_EXIT_USAGE;
	}
	if (!o->npatterns) {
		snprintf(err, errlen, "trace needs at least one 'pkg.Class.method' pattern");
		return JP_EXIT_USAGE;
	}
	if (o->output && strlen(o->output) > 5 &&
	    !strcmp(o->output + strlen(o->output) - 5, ".json"))
		o->json = 1;
	if (o->output &&
	    ((strlen(o->output) > 5 && !strcmp(o->output + strlen(o->output) - 5, ".html")) ||
	     (strlen(o->output) > 4 && !strcmp(o->output + strlen(o->output) - 4, ".htm")))) {
		if (o->json) {
			snprintf(err, errlen, "trace -o *.html writes a flame graph, not JSON");
			return JP_EXIT_USAGE;
		}
		o->html = 1;
	}
	if (o->output && strlen(o->output) > 4 &&
	    !strcmp(o->output + strlen(o->output) - 4, ".jfr")) {
		if (o->json) {
			snprintf(err, errlen, "trace -o *.jfr writes JFR events, not JSON");
			return JP_EXIT_USAGE;
		}
		o->jfr = 1;
	}
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
		len += (size_t)w;
	}
	if (o->args) {
		int w = snprintf(buf + len, n - len, ",traceargs=%u", o->args);

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

/* one traced JVM */
struct tjvm {
	struct jvm_info jvm;
	struct tfile *tf;
	struct tstats *s;
	struct jp_mt_hdr h;
	__u64 stop_at;
	unsigned int nm; /* methods named: matched or refused */
	int done;
};

/* one round of JVM j: stamp, drain, stop when asked or its JVM is gone; 1 when it ended */
static int poll_one(struct tjvm *j, __u64 now, int stop)
{
	__u32 state;

	tfile__stamp(j->tf, now);
	tfile__drain(j->tf, j->s);
	state = tfile__state(j->tf);
	if (!state || state == JP_MT_STOPPED)
		return 1;
	if (!j->stop_at && (stop || kill((pid_t)j->jvm.pid, 0))) {
		tfile__stop(j->tf);
		j->stop_at = now;
	}
	if (j->stop_at && now - j->stop_at > STOP_WAIT_MS * 1000000ull) {
		pr_warn("the agent in JVM %u did not confirm the trace's end within %u s",
			j->jvm.pid, STOP_WAIT_MS / 1000);
		return 1;
	}
	return 0;
}

/* the end of JVM j's trace: the last records, the totals; the number of methods named */
static unsigned int finish_one(struct tjvm *j, struct tstats_totals *tot, __u64 t0, int several)
{
	struct jp_mt_hdr *h = &j->h;

	tfile__drain(j->tf, j->s);
	j->nm = tfile__finish(j->tf, j->s, h);
	*tot = (struct tstats_totals){
		.dropped = h->dropped,
		.lost_depth = h->lost_depth,
		.unmatched = h->unmatched,
		.classes_failed = h->classes_failed,
		.retransform_failed = h->retransform_failed,
		.cost_ns = h->cost_ns,
		.pid = several ? j->jvm.pid : 0,
	};
	tot->stopped = h->state == JP_MT_STOPPED    ? stop_phrase(h->stop_why)
		       : kill((pid_t)j->jvm.pid, 0) ? "the JVM exited"
						    : "not confirmed by the agent";
	tot->seconds = (double)(mono_ns() - t0) / 1e9;
	if (tfile__malformed(j->tf))
		pr_warn("JVM %u: %llu records malformed, skipped", j->jvm.pid,
			(unsigned long long)tfile__malformed(j->tf));
	return j->nm;
}

/*
 * The split of each slowest call kept that has none yet, from the kernel's events of its
 * thread: run after mtk__poll() followed the drain that brought the call (its events were
 * sent before the agent wrote its record). Calls that drop out of the slowest take theirs.
 */
static void split_new(struct tjvm *j, struct mtk *mk)
{
	struct tstats_call c;
	struct tsplit_res r;

	for (unsigned int i = 0; mk && !tstats__slow_at(j->s, i, &c); i++) {
		if (c.has_split)
			continue;
		mtk__split(mk, j->jvm.pid, c.tid, c.start_ns, c.dur_ns, &r);
		(void)tstats__set_split(j->s, i, &r);
	}
}

struct gc_ctx {
	struct tjvm *j;
	int read; /* the JVM's hsperfdata was read */
};

static void gc_jvm(void *ctx, const struct jvm_info *jvm, const struct hsperf *h)
{
	struct gc_ctx *g = ctx;

	(void)h;
	if (jvm->pid == g->j->jvm.pid)
		g->read = 1;
}

static void gc_pause(void *ctx, __u32 pid, __u64 start_ns, const struct hsperf_gc_event *ev)
{
	struct gc_ctx *g = ctx;
	struct tstats_call c;

	if (pid != g->j->jvm.pid)
		return;
	for (unsigned int i = 0; !tstats__slow_at(g->j->s, i, &c); i++) {
		struct tsplit_res *r = tstats__split(g->j->s, i);

		if (r)
			tsplit_add_pause(r, c.start_ns, start_ns, ev->duration_ns);
	}
}

/*
 * The GC pauses (hsperfdata's, as record reads them, every 100 ms) that overlapped each
 * slowest call; safepoints are counted there, not timed one by one: not covered.
 */
static void split_gc(struct tjvm *j, struct pauses *pz)
{
	struct gc_ctx g = {.j = j};
	struct tstats_call c;

	pauses__for_each_jvm(pz, gc_jvm, &g);
	if (!g.read)
		return;
	for (unsigned int i = 0; !tstats__slow_at(j->s, i, &c); i++) {
		struct tsplit_res *r = tstats__split(j->s, i), none = {.dur_ns = c.dur_ns};

		if (!r)
			(void)tstats__set_split(j->s, i, &none);
		r = tstats__split(j->s, i);
		if (r)
			r->has_gc = 1;
	}
	pauses__for_each_gc(pz, gc_pause, &g);
}

static void kernel_summary(struct mtk *mk)
{
	struct mtk_stats st;

	mtk__stats(mk, &st);
	pr_debug("kernel split: %llu off-CPU intervals, %llu system calls (%llu short ones in "
		 "%llu batches); lost: %llu ring buffer full, %llu thread table full, %llu over "
		 "the budget, %llu malformed; switch-ins not seen %llu (%llu ended at their "
		 "wait's return, %llu spans unsure); %zu threads, peak %zu KiB",
		 (unsigned long long)st.off, (unsigned long long)(st.sc + st.batched),
		 (unsigned long long)st.batched, (unsigned long long)st.batches,
		 (unsigned long long)st.rb_full, (unsigned long long)st.thr_full,
		 (unsigned long long)st.kept_dropped, (unsigned long long)st.bad,
		 (unsigned long long)st.no_in, (unsigned long long)st.end_exit,
		 (unsigned long long)st.unsure, st.threads, st.bytes_peak >> 10);
	if (st.rb_full || st.thr_full || st.kept_dropped)
		pr_warn("kernel split: %llu events lost (ring buffer full %llu, thread table "
			"full %llu, over the memory budget %llu): the calls they touched say "
			"'incomplete'",
			(unsigned long long)(st.rb_full + st.thr_full + st.kept_dropped),
			(unsigned long long)st.rb_full, (unsigned long long)st.thr_full,
			(unsigned long long)st.kept_dropped);
}

/*
 * Several JVMs (-p PID,PID...): each is attached and traced on its own (its own file and
 * statistics), all in one loop, stopped together; the report has one section per JVM (in
 * JSON {"jvms":[...]}, each object with its "pid"), one JVM's is as it always was.
 */
int trace_main(int argc, char **argv)
{
	static struct trace_opts o;
	static struct tjvm jv[TRACE_PIDS_MAX];
	static struct tstats_totals tot[TRACE_PIDS_MAX];
	char err[512], options[JP_MT_PATTERNS_MAX + 16], self[PATH_MAX], agent[PATH_MAX];
	struct sigaction sa = {.sa_handler = on_signal};
	__u64 t0, deadline;
	size_t nj = 0, matched = 0;
	int several, stopping = 0;
	ssize_t n;
	FILE *out = stdout;
	struct mtk *mk = NULL;
	struct pauses *pz = NULL;
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
	several = o.npids > 1;
	for (size_t i = 0; i < o.npids; i++) {
		ret = jvm_probe("/proc", o.pids[i], &jv[i].jvm);
		if (ret == -ESRCH) {
			pr_err("no process %u", o.pids[i]);
			return JP_EXIT_NO_TARGET;
		}
		if (ret) {
			pr_err("process %u is not a Java (HotSpot) process", o.pids[i]);
			return JP_EXIT_NO_TARGET;
		}
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
	/* the kernel part first: every traced call begins after it is attached */
	if (!o.no_kernel) {
		static const struct mtk_opts mo;

		ret = mtk__start(o.pids, o.npids, &mo, &mk);
		if (ret)
			pr_warn("no kernel split of the slow calls (loading its BPF programs: %s); "
				"tracing without it",
				strerror(-ret));
	}
	pz = pauses__new();
	for (size_t i = 0; pz && i < o.npids; i++)
		(void)pauses__add(pz, &jv[i].jvm, false);
	ret = JP_EXIT_FAILURE;
	for (nj = 0; nj < o.npids; nj++) {
		struct tjvm *j = &jv[nj];
		int err2;

		j->s = tstats__new(o.top);
		if (!j->s)
			goto out_stop;
		tstats__set_slow(j->s, o.slow_ns);
		if (attach(&j->jvm, agent, options)) {
			tstats__free(j->s);
			j->s = NULL;
			goto out_stop;
		}
		if ((err2 = open_trace_file(&j->jvm, &j->tf))) {
			pr_err("the agent in JVM %u started no trace file (%s)", j->jvm.pid,
			       strerror(-err2));
			tstats__free(j->s);
			j->s = NULL;
			goto out_stop;
		}
	}
	t0 = mono_ns();
	deadline = o.duration_s ? t0 + o.duration_s * 1000000000ull : ~0ull;
	if (several)
		pr_info("tracing %zu pattern%s in %zu JVMs%s", o.npatterns,
			o.npatterns > 1 ? "s" : "", nj, o.duration_s ? "" : " until Ctrl-C");
	else
		pr_info("tracing %zu pattern%s in JVM %u%s", o.npatterns,
			o.npatterns > 1 ? "s" : "", o.pid, o.duration_s ? "" : " until Ctrl-C");
	for (;;) {
		__u64 now = mono_ns();
		size_t left = 0;

		stopping = stopping || exiting || now >= deadline;
		for (size_t i = 0; i < nj; i++) {
			if (!jv[i].done)
				jv[i].done = poll_one(&jv[i], now, stopping);
			left += !jv[i].done;
		}
		if (mk)
			(void)mtk__poll(mk, now);
		for (size_t i = 0; i < nj; i++)
			split_new(&jv[i], mk);
		if (pz)
			pauses__poll(pz, now, false);
		if (!left)
			break;
		(void)poll(NULL, 0, POLL_MS);
	}
	for (size_t i = 0; i < nj; i++) {
		if (finish_one(&jv[i], &tot[i], t0, several))
			matched++;
		else if (several)
			pr_warn("no method of JVM %u matched %s%s", jv[i].jvm.pid, o.patterns[0],
				o.npatterns > 1 ? " or the other patterns" : "");
	}
	/* the last records' calls: their events are in the ring buffer by now */
	if (mk)
		(void)mtk__poll(mk, mono_ns());
	for (size_t i = 0; i < nj; i++)
		split_new(&jv[i], mk);
	if (!matched) {
		if (several)
			pr_err("no method of the %zu JVMs matched %s%s", nj, o.patterns[0],
			       o.npatterns > 1 ? " or the other patterns" : "");
		else
			pr_err("no method of JVM %u matched %s%s", o.pid, o.patterns[0],
			       o.npatterns > 1 ? " or the other patterns" : "");
		goto out;
	}
	if (pz)
		pauses__poll(pz, mono_ns(), true);
	for (size_t i = 0; i < nj; i++) {
		name_threads(&jv[i].jvm, jv[i].s);
		if (pz)
			split_gc(&jv[i], pz);
	}
	if (mk)
		kernel_summary(mk);
	if (o.html || o.jfr) {
		struct tout_jvm tj[TRACE_PIDS_MAX];

		for (size_t i = 0; i < nj; i++)
			tj[i] = (struct tout_jvm){jv[i].jvm.pid, jv[i].s, jv[i].jvm.main};
		ret = o.html ? tout_write_flame(o.output, tj, nj, t0)
			     : tout_write_jfr(o.output, tj, nj, t0);
		if (ret)
			goto out;
	}
	if (o.output && !o.html && !o.jfr) {
		out = fopen(o.output, "we");
		if (!out) {
			pr_err("cannot write %s: %s", o.output, strerror(errno));
			out = stdout;
			ret = JP_EXIT_OUTPUT;
			goto out;
		}
	}
	if (several && o.json)
		fputs("{\"jvms\":[", out);
	for (size_t i = 0; i < nj; i++) {
		if (o.json && i)
			fputc(',', out);
		if (!o.json && i)
			fputc('\n', out);
		if (o.json)
			tstats__write_json(jv[i].s, &tot[i], out);
		else
			tstats__write_text(jv[i].s, &tot[i], out);
	}
	if (several && o.json)
		fputs("]}\n", out);
	ret = JP_EXIT_OK;
	if (out != stdout && fclose(out)) {
		pr_err("cannot write %s: %s", o.output, strerror(errno));
		ret = JP_EXIT_OUTPUT;
	}
	goto out;
out_stop:
	/* a JVM could not be traced: the ones started stop (their agents put the classes back) */
	for (size_t i = 0; i < nj; i++)
		tfile__stop(jv[i].tf);
	for (int k = 0; k < STOP_WAIT_MS / POLL_MS; k++) {
		size_t left = 0;

		for (size_t i = 0; i < nj; i++) {
			__u32 st = tfile__state(jv[i].tf);

			left += st && st != JP_MT_STOPPED;
		}
		if (!left)
			break;
		(void)poll(NULL, 0, POLL_MS);
	}
	ret = JP_EXIT_FAILURE;
out:
	for (size_t i = 0; i < TRACE_PIDS_MAX; i++) {
		tfile__free(jv[i].tf);
		tstats__free(jv[i].s);
	}
	mtk__free(mk);
	pauses__free(pz);
	return ret;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_driver.c: plays jprof's part against a running JVM with the agent: opens its
 * channel, sends the published signal with tgkill to its running threads at ~HZ (what
 * the BPF sampler does with bpf_send_signal_thread), polls the traces and prints
 *
 *   # signo N / # sent N / # traces N / # err CODE COUNT text / # agent ... / # complete ...
 *   thread;root;...;leaf COUNT      (folded, sorted; frames carry _[j] _[i] _[0] suffixes)
 *
 * A trace of thread T is complete when it has frames, fewer than the depth limit, and
 * its root frame is java/lang/Thread.run.
 */
#include <errno.h>
#include <getopt.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "jvm/agent_ring.h"
#include "clock.h"

#define MAX_TIDS   4096
#define MAX_THREAD 64

struct thread_stat {
	char name[64];
	unsigned long total, complete;
};

struct run {
	struct jvm_agent *a;
	char **folded;
	size_t n_folded, cap_folded;
	unsigned long traces, err[128]; /* [-code], codes 0 .. -127 */
	unsigned long java_traces;
	struct thread_stat th[MAX_THREAD];
	int n_th;
};

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static __u32 read_nspid(__u32 pid)
{
	char path[64], line[256];
	__u32 nspid = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');

			if (last)
				nspid = (__u32)strtoul(last + 1, NULL, 10);
		}
	}
	fclose(f);
	return nspid;
}

/* threads of pid in state R (running or runnable): the ones a CPU sampler would hit */
static int running_tids(__u32 pid, int *tids, int max)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		char buf[512], *p;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(buf, sizeof(buf), "/proc/%u/task/%s/stat", pid, de->d_name);
		f = fopen(buf, "re");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		p = p ? strrchr(buf, ')') : NULL;
		if (p && p[1] == ' ' && p[2] == 'R')
			tids[n++] = atoi(de->d_name);
	}
	closedir(d);
	return n;
}

static struct thread_stat *thread_stat(struct run *r, const char *name)
{
	for (int i = 0; i < r->n_th; i++) {
		if (!strcmp(r->th[i].name, name))
			return &r->th[i];
	}
	if (r->n_th == MAX_THREAD)
		return NULL;
	snprintf(r->th[r->n_th].name, sizeof(r->th[0].name), "%s", name);
	return &r->th[r->n_th++];
}

static int on_trace(void *ctx, const struct java_trace *t)
{
	struct run *r = ctx;
	const char *tname = jvm_agent__thread_name(r->a, t->tid);
	char tbuf[32], *line;
	size_t len = 0, cap = 4096;
	struct thread_stat *ts;

	r->traces++;
	if (t->num_frames <= 0) {
		if (-t->num_frames < 128)
			r->err[-t->num_frames]++;
		if (t->num_frames == JAVA_TRACE_ERR_NOT_JAVA_THREAD)
			return 0;
	}
	if (!tname) {
		snprintf(tbuf, sizeof(tbuf), "tid-%u", t->tid);
		tname = tbuf;
	}
	ts = thread_stat(r, tname);
	if (ts)
		ts->total++;
	if (t->num_frames <= 0)
		return 0;
	r->java_traces++;
	if (ts && t->num_frames < 2048) {
		const char *root = jvm_agent__method_name(r->a, t->frames[t->num_frames - 1].method_id, 0);

		if (root && !strcmp(root, "java/lang/Thread.run"))
			ts->complete++;
	}
	line = malloc(cap);
	if (!line)
		return -ENOMEM;
	len = (size_t)snprintf(line, cap, "%s", tname);
	for (int i = t->num_frames - 1; i >= 0; i--) {
		const struct java_frame *f = &t->frames[i];
		const char *name = jvm_agent__method_name(r->a, f->method_id, 0);
		char frame[512];
		int n;

		n = snprintf(frame, sizeof(frame), ";%s%s", name ? name : "[unknown]",
			     jp_frame_kind_suffix(f->kind));
		if (len + (size_t)n + 1 > cap) {
			char *p = realloc(line, cap * 2 + (size_t)n);

			if (!p) {
				free(line);
				return -ENOMEM;
			}
			line = p;
			cap = cap * 2 + (size_t)n;
		}
		memcpy(line + len, frame, (size_t)n + 1);
		len += (size_t)n;
	}
	if (r->n_folded == r->cap_folded) {
		size_t c = r->cap_folded ? r->cap_folded * 2 : 1024;
		char **p = realloc(r->folded, c * sizeof(*p));

		if (!p) {
			free(line);
			return -ENOMEM;
		}
		r->folded = p;
		r->cap_folded = c;
	}
	r->folded[r->n_folded++] = line;
	return 0;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void report(struct run *r, int signo, unsigned long sent)
{
	struct jvm_agent_stats st;

	jvm_agent__stats(r->a, &st);
	printf("# signo %d\n# sent %lu\n# traces %lu java %lu\n", signo, sent, r->traces,
	       r->java_traces);
	for (int i = 0; i < 128; i++) {
		if (r->err[i])
			printf("# err %d %lu %s\n", -i, r->err[i], java_trace_err_str(-i));
	}
	printf("# agent traces %llu ring_full %llu not_java_thread %llu malformed %llu\n",
	       (unsigned long long)st.traces, (unsigned long long)st.ring_full,
	       (unsigned long long)st.not_java_thread, (unsigned long long)st.malformed);
	for (int i = 0; i < r->n_th; i++) {
		const struct thread_stat *t = &r->th[i];

		printf("# complete %s %lu/%lu %.2f%%\n", t->name, t->complete, t->total,
		       t->total ? 100.0 * (double)t->complete / (double)t->total : 0.0);
	}
	qsort(r->folded, r->n_folded, sizeof(*r->folded), cmp_str);
	for (size_t i = 0; i < r->n_folded;) {
		size_t j = i;

		while (j < r->n_folded && !strcmp(r->folded[i], r->folded[j]))
			j++;
		printf("%s %zu\n", r->folded[i], j - i);
		i = j;
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s -p PID [-d SECONDS] [-F HZ] [-w WAIT_SECONDS]\n"
		"  opens the jprof agent channel of PID, signals its running threads at HZ\n"
		"  for SECONDS (default 3 s, 1000 Hz) and prints folded Java stacks\n"
		"EXAMPLES:\n  %s -p $(pgrep -f JprofWorkload) -d 3\n",
		argv0, argv0);
}

int main(int argc, char **argv)
{
	double secs = 3, wait_secs = 20;
	struct run r = { 0 };
	unsigned long sent = 0;
	int hz = 1000, opt, signo = 0, tids[MAX_TIDS], n_tids = 0, err;
	__u64 deadline, next, next_scan = 0, next_poll = 0;
	__u32 pid = 0, nspid;
	struct sigaction sa = { .sa_handler = on_signal };

	while ((opt = getopt(argc, argv, "p:d:F:w:h")) != -1) {
		switch (opt) {
		case 'p':
			pid = (__u32)strtoul(optarg, NULL, 10);
			break;
		case 'd':
			secs = atof(optarg);
			break;
		case 'F':
			hz = atoi(optarg);
			break;
		case 'w':
			wait_secs = atof(optarg);
			break;
		default:
			usage(argv[0]);
			return EXIT_FAILURE;
		}
	}
	if (!pid || hz <= 0 || hz > 100000) {
		usage(argv[0]);
		return EXIT_FAILURE;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	nspid = read_nspid(pid);
	/* the agent publishes its signal once the handler is in place */
	deadline = mono_ns() + (__u64)(wait_secs * 1e9);
	while (!exiting && mono_ns() < deadline) {
		if (!r.a)
			r.a = jvm_agent__open(pid, nspid);
		if (r.a && (signo = jvm_agent__signo(r.a)) > 0)
			break;
		usleep(50000);
	}
	if (!r.a || signo <= 0) {
		fprintf(stderr, "agent_driver: no ready agent channel in pid %u: %s\n", pid,
			r.a ? "signal not published" : strerror(errno));
		jvm_agent__free(r.a);
		return EXIT_FAILURE;
	}
	next = mono_ns();
	deadline = next + (__u64)(secs * 1e9);
	while (!exiting && next < deadline) {
		struct timespec ts = { .tv_sec = (time_t)(next / 1000000000ull),
				       .tv_nsec = (long)(next % 1000000000ull) };
		__u64 now;

		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		now = mono_ns();
		if (now >= next_scan) {
			n_tids = running_tids(pid, tids, MAX_TIDS);
			if (n_tids < 0) {
				fprintf(stderr, "agent_driver: pid %u is gone\n", pid);
				break;
			}
			next_scan = now + 20000000ull;
		}
		for (int i = 0; i < n_tids; i++) {
			if (!syscall(SYS_tgkill, pid, tids[i], signo))
				sent++;
		}
		if (now >= next_poll) {
			err = jvm_agent__poll(r.a, on_trace, &r);
			if (err < 0)
				fprintf(stderr, "agent_driver: poll: %s\n", strerror(-err));
			next_poll = now + 10000000ull;
		}
		next += 1000000000ull / (__u64)hz;
	}
	usleep(20000); /* the last handlers finish */
	err = jvm_agent__poll(r.a, on_trace, &r);
	if (err < 0)
		fprintf(stderr, "agent_driver: poll: %s\n", strerror(-err));
	report(&r, signo, sent);
	for (size_t i = 0; i < r.n_folded; i++)
		free(r.folded[i]);
	free(r.folded);
	jvm_agent__free(r.a);
	return EXIT_SUCCESS;
}

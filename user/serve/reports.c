// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* reports.c: jprof serve's /api/profile and /api/diff: each request one bounded `jprof report` child. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve_int.h"
#include "clock.h"

/* a report's stderr: its last line, without the "jprof: error: " it starts with */
static void tidy_why(char *why)
{
	size_t n = strlen(why);
	char *last;

	while (n && (why[n - 1] == '\n' || why[n - 1] == '\r'))
		why[--n] = '\0';
	last = strrchr(why, '\n');
	last = last ? last + 1 : why;
	if (!strncmp(last, "jprof: error: ", 14))
		last += 14;
	else if (!strncmp(last, "jprof: ", 7))
		last += 7;
	memmove(why, last, strlen(last) + 1);
}

/*
 * Runs `exe argv...` with stdout into out_fd, stderr into err_fd, every other fd closed,
 * bounded in CPU, memory, output and wall time. 0 when it exited 0; else 1 and why (its
 * stderr's end, or how it ended).
 */
static int run_child(struct server *s, char **argv, int out_fd, int err_fd, char *why,
		     size_t why_len)
{
	__u64 t0 = mono_ns();
	int status = 0, devnull;
	pid_t pid, w;

	why[0] = '\0';
	sem_wait(&s->children);
	pid = fork();
	if (pid == 0) {
		struct rlimit cpu = {CHILD_CPU_S, CHILD_CPU_S + 1}, as = {CHILD_MEM, CHILD_MEM},
			      fsz = {OUT_MAX, OUT_MAX};

		/* async-signal-safe calls only until the exec: this process has threads */
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_fd, 1) < 0 ||
		    dup2(err_fd, 2) < 0)
			_exit(126);
		(void)close_range(3, ~0u, 0);
		if (setrlimit(RLIMIT_CPU, &cpu) || setrlimit(RLIMIT_AS, &as) ||
		    setrlimit(RLIMIT_FSIZE, &fsz))
			_exit(126);
		execv(s->exe, argv);
		_exit(127);
	}
	if (pid < 0) {
		sem_post(&s->children);
		snprintf(why, why_len, "cannot start a report: %s", strerror(errno));
		return 1;
	}
	for (;;) {
		struct timespec nap = {0, 10 * 1000 * 1000};

		w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (mono_ns() - t0 > CHILD_WAIT_S * 1000000000ull) {
			kill(pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			snprintf(why, why_len, "the report took longer than %d s and was stopped",
				 CHILD_WAIT_S);
			sem_post(&s->children);
			return 1;
		}
		nanosleep(&nap, NULL);
	}
	sem_post(&s->children);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ)
		snprintf(why, why_len, "the answer would be larger than %llu MiB",
			 (unsigned long long)(OUT_MAX >> 20));
	else if (WIFSIGNALED(status))
		snprintf(why, why_len, "the report ended by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	if (!why[0]) { /* its own words: the end of its stderr */
		off_t end = lseek(err_fd, 0, SEEK_END);
		off_t from = end > (off_t)why_len - 1 ? end - (off_t)why_len + 1 : 0;
		ssize_t n = end > 0 ? pread(err_fd, why, (size_t)(end - from), from) : 0;

		why[n > 0 ? n : 0] = '\0';
		tidy_why(why);
		if (!why[0])
			snprintf(why, why_len, "the report failed (exit status %d)",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	return 1;
}

static int new_memfd(const char *name)
{
	return memfd_create(name, MFD_CLOEXEC);
}

/* the status of a report that failed: nothing in the range is 404, the rest 500 */
static unsigned int fail_status(const char *why)
{
	return strstr(why, "no segment") || strstr(why, "no readable segment") ||
			       strstr(why, "match nothing") || strstr(why, "matched nothing") ||
			       strstr(why, "No such file")
		       ? MHD_HTTP_NOT_FOUND
		       : MHD_HTTP_INTERNAL_SERVER_ERROR;
}

static const char *lookup_arg(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static bool rec_is_file(const struct server *s, const char *name)
{
	struct stat st;

	return !fstatat(s->recfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
}

/*
 * /api/profile (one range, or rec) and /api/diff (two: report --store's own diff,
 * --base-since and --base-until; or rec against base_rec): the request checked, one report
 * child, its output as the answer
 */
enum MHD_Result sv_report(struct server *s, struct MHD_Connection *conn,
				 enum sq_kind kind)
{
	char bufs[10][SQ_ARG_LEN], *argv[SQ_MAX_ARGS + 14], why[ERR_MAX], name[96];
	struct sq_request *r = malloc(sizeof(*r));
	int out = -1, err = -1, n;
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (sq_parse(kind, lookup_arg, conn, r, why, sizeof(why))) {
		ret = sv_answer_fmt(conn, MHD_HTTP_BAD_REQUEST, "%s\n", why);
		goto out;
	}
	if (r->rec[0] ? s->recfd < 0 : !s->store) {
		ret = sv_answer_text(conn, MHD_HTTP_NOT_FOUND,
				  r->rec[0] ? "this server has no --recordings\n"
					    : "this server has no --store\n");
		goto out;
	}
	/* what the list shows: a regular file, never a link the report would follow */
	if (r->rec[0] && (!rec_is_file(s, r->rec) || (kind == SQ_DIFF && !rec_is_file(s, r->base_rec)))) {
		ret = sv_answer_fmt(conn, MHD_HTTP_NOT_FOUND, "no recording %s in %s\n",
				 rec_is_file(s, r->rec) ? r->base_rec : r->rec, s->recordings);
		goto out;
	}
	n = sq_report_argv(r, s->exe, r->rec[0] ? s->recpath : s->store, r->since_s, r->until_s,
			   -1, bufs, 8, argv, SQ_MAX_ARGS + 12);
	if (n < 0) {
		ret = sv_answer_text(conn, MHD_HTTP_BAD_REQUEST, "too many parameters\n");
		goto out;
	}
	if (kind == SQ_DIFF && !r->rec[0]) {
		snprintf(bufs[8], SQ_ARG_LEN, "--base-since=@%llu",
			 (unsigned long long)r->base_since_s);
		snprintf(bufs[9], SQ_ARG_LEN, "--base-until=@%llu",
			 (unsigned long long)r->base_until_s);
		argv[n++] = bufs[8];
		argv[n++] = bufs[9];
		argv[n] = NULL;
	}
	out = new_memfd("jprof-serve-out");
	err = new_memfd("jprof-serve-err");
	if (out < 0 || err < 0) {
		ret = sv_answer_fmt(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "%s\n", strerror(errno));
		goto out;
	}
	if (run_child(s, argv, out, err, why, sizeof(why))) {
		ret = sv_answer_fmt(conn, fail_status(why), "%s\n", why);
		goto out;
	}
	if (r->rec[0])
		snprintf(name, sizeof(name), "%s%.*s", kind == SQ_DIFF ? "diff-" : "",
			 (int)strcspn(r->rec, "."), r->rec);
	else
		snprintf(name, sizeof(name), "jprof-%s%llu-%llu", kind == SQ_DIFF ? "diff-" : "",
			 (unsigned long long)r->since_s, (unsigned long long)r->until_s);
	ret = sv_answer_fd(conn, out, r->format, name);
	out = -1; /* MHD's now */
out:
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	free(r);
	return ret;
}

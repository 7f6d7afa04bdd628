// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attacher.c: attaches agents to many JVMs at once, in the background, with budgets and retries. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "attacher.h"
#include "log.h"
#include "util/hmap.h"
#include "util/procfs.h"
#include "util/ttysafe.h"

#define MAX_JVMS	4096  /* JVMs tracked per recording (each one costs ~1 KiB) */
#define MAX_HELPERS	8     /* attach helpers (child processes) at once */
#define MAX_TRIES_TOTAL 10000 /* helpers started per recording */
#define TRY_MS_FIRST	5000  /* a try's budget; doubles per failed try... */
#define TRY_MS_MAX	30000 /* ...up to this: a busy JVM may take long to load the agent */
#define RETRY_MIN_MS	1000  /* wait before the second try; doubles per failed try... */
#define RETRY_MAX_MS	30000 /* ...up to this, for as long as the JVM lives */
#define CHANNEL_FAST_MS 3000  /* after a load, look for the channel at every poll this long, */
#define CHANNEL_SLOW_MS 1000  /* then once a second */

enum ent_state {
	ENT_QUEUED,	/* found, first try not started */
	ENT_RUNNING,	/* a helper is attaching */
	ENT_RETRY,	/* last try failed; next one at next_ns */
	ENT_CONNECTING, /* agent loaded; its channel not connected yet */
	ENT_JAVA,	/* done: Java stacks */
	ENT_NATIVE,	/* done: no agent, for a reason that will not change */
	ENT_GONE,	/* the process exited */
};

struct ent {
	struct jvm_info jvm;
	enum ent_state st;
	struct jvm_attach *run;
	unsigned int tries;
	bool attached_now;
	bool again; /* connected; loading again for events its agent lacks (one try) */
	bool told, told_retry; /* o.note called for its outcome, for its first failed try */
	__u64 found_ns, first_try_ns, next_ns, connect_since_ns, done_ns;
	char why[200];
};

struct attacher {
	struct attacher_opts o;
	char *agent_path, *options;
	int agent_fd, agent_err; /* agent_err: why it could not be opened (JVMs stay native) */
	struct ent *ents;
	size_t n;
	struct hmap by_pid; /* pid -> its index in ents */
	/* finished attaches whose helper was not reaped yet: reaped without waiting, later */
	struct jvm_attach *zombies[MAX_HELPERS * 4];
	size_t nzombies;
	unsigned int helpers, tries_total;
	__u64 now_ns; /* of the last poll */
	__u64 jvms_dropped, tries_skipped;
	/* entries of JVMs that exited taken out (their outcome said), those with Java stacks */
	unsigned int forgotten, forgotten_java;
};

struct attacher *attacher__new(const struct attacher_opts *o)
{
	struct attacher *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return NULL;
	a->o = *o;
	a->agent_fd = -1;
	a->agent_path = strdup(o->agent_path ? o->agent_path : "");
	a->options = o->options ? strdup(o->options) : NULL;
	a->ents = calloc(MAX_JVMS, sizeof(*a->ents));
	if (!a->agent_path || (o->options && !a->options) || !a->ents) {
		err = -ENOMEM;
		goto out_free;
	}
	a->o.agent_path = a->agent_path;
	a->o.options = a->options;
	if (!o->no_attach) {
		/* root opens it; the helpers, once they are the JVM's user, only read this fd */
		a->agent_fd = open(a->agent_path, O_RDONLY | O_CLOEXEC);
		if (a->agent_fd < 0)
			a->agent_err = -errno;
	}
	return a;
out_free:
	attacher__free(a);
	errno = -err;
	return NULL;
}

void attacher__free(struct attacher *a)
{
	if (!a)
		return;
	for (size_t i = 0; a->ents && i < a->n; i++)
		jvm_attach__free(a->ents[i].run);
	for (size_t i = 0; i < a->nzombies; i++)
		jvm_attach__free(a->zombies[i]);
	if (a->agent_fd >= 0)
		close(a->agent_fd);
	free(a->ents);
	hmap_free(&a->by_pid);
	free(a->agent_path);
	free(a->options);
	free(a);
}

static struct ent *find(const struct attacher *a, __u32 pid)
{
	const __u64 *i = hmap_find(&a->by_pid, pid);

	return i ? &a->ents[*i] : NULL;
}

static void set_state(struct ent *e, enum ent_state st, __u64 now_ns, const char *why)
{
	e->st = st;
	if (st == ENT_JAVA || st == ENT_NATIVE || st == ENT_GONE)
		e->done_ns = now_ns;
	if (why)
		snprintf(e->why, sizeof(e->why), "%s", why);
}

int attacher__add(struct attacher *a, const struct jvm_info *jvm, __u64 now_ns)
{
	struct ent *e = find(a, jvm->pid);

	if (e && e->st != ENT_GONE)
		return 0;
	/* all slots taken: one of a JVM that exited (listed at the end no more) is reused */
	for (size_t i = 0; !e && a->n >= MAX_JVMS && i < a->n; i++)
		if (a->ents[i].st == ENT_GONE) {
			if (hmap_put(&a->by_pid, jvm->pid, i) < 0)
				return -ENOMEM;
			(void)hmap_del(&a->by_pid, a->ents[i].jvm.pid, NULL);
			e = &a->ents[i];
			a->forgotten++;
		}
	if (!e) {
		if (a->n >= MAX_JVMS) {
			a->jvms_dropped++;
			return -ENOSPC;
		}
		if (hmap_put(&a->by_pid, jvm->pid, a->n) < 0)
			return -ENOMEM;
		e = &a->ents[a->n++];
	}
	/* new, or a pid reused after the JVM we knew under it exited */
	memset(e, 0, sizeof(*e));
	e->jvm = *jvm;
	e->found_ns = now_ns;
	e->next_ns = now_ns;
	if (jvm->agent == JVM_AGENT_LOADED)
		set_state(e, ENT_CONNECTING, now_ns, NULL);
	else if (a->o.no_attach)
		set_state(e, ENT_NATIVE, now_ns, "no jprof agent loaded (--no-attach)");
	else if (jvm->agent == JVM_AGENT_NO_ATTACH)
		set_state(e, ENT_NATIVE, now_ns,
			  "attach mechanism disabled (-XX:+DisableAttachMechanism)");
	else if (a->agent_err) {
		set_state(e, ENT_NATIVE, now_ns, NULL);
		snprintf(e->why, sizeof(e->why), "cannot read the agent %.120s: %s", a->agent_path,
			 strerror(-a->agent_err));
	} else
		set_state(e, ENT_QUEUED, now_ns, NULL);
	e->connect_since_ns = now_ns;
	return 1;
}

int attacher__set_options(struct attacher *a, const char *options)
{
	char *copy = options ? strdup(options) : NULL;

	if (options && !copy)
		return -ENOMEM;
	free(a->options);
	a->options = copy;
	a->o.options = copy;
	return 0;
}

int attacher__load_again(struct attacher *a, __u32 pid, __u64 now_ns)
{
	struct ent *e = find(a, pid);

	if (!e || e->st != ENT_JAVA || a->o.no_attach || a->agent_err)
		return -ENOENT;
	e->again = true;
	e->next_ns = now_ns;
	set_state(e, ENT_QUEUED, now_ns, NULL);
	return 0;
}

static __u64 ms_ns(__u64 ms)
{
	return ms * 1000000ull;
}

/* errors that another try cannot change */
static bool is_final(int err)
{
	return err == -ENOEXEC || err == -EINVAL || err == -EPROTO || err == -E2BIG ||
	       err == -EACCES;
}

static void retire(struct attacher *a, struct ent *e)
{
	if (!e->run)
		return;
	if (jvm_attach__reaped(e->run) || a->nzombies == sizeof(a->zombies) / sizeof(a->zombies[0]))
		jvm_attach__free(e->run); /* reaped: no wait; table full: wait (rare) */
	else
		a->zombies[a->nzombies++] = e->run;
	e->run = NULL;
	a->helpers--;
}

/* the process exited: reaped, or a zombie (its parent has not waited for it yet) */
static bool is_gone(const struct ent *e)
{
	return (kill((pid_t)e->jvm.pid, 0) && errno == ESRCH) || proc_gone(e->jvm.pid);
}

/* a helper finished: what next for its JVM */
static void on_done(struct attacher *a, struct ent *e, __u64 now_ns)
{
	const char *why = "";
	int ret = jvm_attach__result(e->run, &why);
	unsigned int shift = e->tries < 6 ? e->tries - 1 : 5;

	if (e->again) {
		/* connected before: Java stacks either way; the join names events still missing */
		if (ret < 0)
			pr_debug("JVM %u: loading the agent again for its events: %s", e->jvm.pid,
				 why[0] ? why : strerror(-ret));
		set_state(e, ret == -ESRCH || (ret < 0 && is_gone(e)) ? ENT_GONE : ENT_JAVA, now_ns,
			  NULL);
	} else if (ret >= 0) {
		e->attached_now = ret == 0;
		e->connect_since_ns = now_ns;
		e->next_ns = now_ns;
		set_state(e, ENT_CONNECTING, now_ns, NULL);
	} else if (ret == -ESRCH || is_gone(e)) {
		/* a JVM that exits while the agent loads refuses it: it exited, say so */
		set_state(e, ENT_GONE, now_ns, "exited");
	} else if (is_final(ret)) {
		set_state(e, ENT_NATIVE, now_ns, why[0] ? why : strerror(-ret));
	} else {
		__u64 wait_ms = (__u64)RETRY_MIN_MS << shift;

		e->next_ns = now_ns + ms_ns(wait_ms < RETRY_MAX_MS ? wait_ms : RETRY_MAX_MS);
		set_state(e, ENT_RETRY, now_ns, why[0] ? why : strerror(-ret));
		pr_debug("JVM %u: attach try %u failed (%s), next in %llu ms", e->jvm.pid, e->tries,
			 e->why, (unsigned long long)((e->next_ns - now_ns) / 1000000));
	}
	retire(a, e);
}

static void start_try(struct attacher *a, struct ent *e, __u64 now_ns)
{
	unsigned int shift = e->tries < 4 ? e->tries : 3;
	int timeout_ms = TRY_MS_FIRST << shift, err;

	if (timeout_ms > TRY_MS_MAX)
		timeout_ms = TRY_MS_MAX;
	if (!e->tries) {
		e->first_try_ns = now_ns;
		/* files a killed JVM of this pid left would make its agent refuse to start */
		(void)jvm_clear_stale_channel(&e->jvm);
	}
	e->tries++;
	a->tries_total++;
	err = jvm_attach__start(&e->jvm, a->agent_fd, a->o.options, timeout_ms,
				e->again ? JVM_ATTACH_AGAIN : 0, &e->run);
	if (err) {
		e->run = NULL;
		e->next_ns = now_ns + ms_ns(RETRY_MIN_MS);
		set_state(e, ENT_RETRY, now_ns, strerror(-err));
		return;
	}
	a->helpers++;
	set_state(e, ENT_RUNNING, now_ns, NULL);
	if (jvm_attach__step(e->run))
		on_done(a, e, now_ns);
}

/* the due entry with the fewest tries (a new JVM goes before everyone's retries), or NULL */
static struct ent *next_due(struct attacher *a, __u64 now_ns)
{
	struct ent *best = NULL;

	for (size_t i = 0; i < a->n; i++) {
		struct ent *e = &a->ents[i];

		if ((e->st != ENT_QUEUED && e->st != ENT_RETRY) || e->next_ns > now_ns)
			continue;
		if (!best || e->tries < best->tries ||
		    (e->tries == best->tries && e->next_ns < best->next_ns))
			best = e;
	}
	return best;
}

static void connect_step(struct ent *e, __u64 now_ns, attacher_ready_fn ready, void *ctx)
{
	char why[sizeof(e->why)];
	int err;

	if (e->next_ns > now_ns)
		return;
	err = ready(ctx, &e->jvm, e->attached_now);
	if (!err) {
		set_state(e, ENT_JAVA, now_ns, NULL);
		return;
	}
	if (err > 0) {
		/* connected, but its agent (loaded before) lacks events asked: load it again */
		e->again = true;
		e->next_ns = now_ns;
		set_state(e, ENT_QUEUED, now_ns, NULL);
		return;
	}
	if (err == -EPROTO) {
		/* agent_ring.c, agent_files.c: another ring version, or the names of before */
		set_state(e, ENT_NATIVE, now_ns,
			  "its agent is of another jprof version, or its channel is malformed "
			  "(restart the JVM)");
		return;
	}
	if (err != -EAGAIN) {
		snprintf(why, sizeof(why), "agent loaded but its channel is not usable (%s)",
			 strerror(-err));
		set_state(e, ENT_NATIVE, now_ns, why);
		return;
	}
	if (is_gone(e)) {
		set_state(e, ENT_GONE, now_ns, "exited");
		return;
	}
	snprintf(e->why, sizeof(e->why), "agent loaded, its channel not ready yet");
	e->next_ns = now_ns - e->connect_since_ns < ms_ns(CHANNEL_FAST_MS)
			     ? now_ns
			     : now_ns + ms_ns(CHANNEL_SLOW_MS);
}

/* one JVM's outcome, or where its attach stands (no "jprof: " prefix, no newline) */
static void outcome(const struct attacher *a, const struct ent *e, __u64 now_ns, char *buf,
		    size_t len)
{
	__u64 t0 = a->o.start_ns;
	double found_s = e->found_ns > t0 ? (e->found_ns - t0) / 1e9 : 0;

	switch (e->st) {
	case ENT_JAVA:
		snprintf(buf, len,
			 "JVM %u (%s): Java stacks from %.2f s after start; agent %s (found at "
			 "%.2f s, %.0f ms from first try, %u %s)",
			 e->jvm.pid, e->jvm.main, (e->done_ns - t0) / 1e9,
			 e->attached_now ? "attached" : "already loaded", found_s,
			 e->first_try_ns ? (e->done_ns - e->first_try_ns) / 1e6 : 0.0, e->tries,
			 e->tries == 1 ? "try" : "tries");
		break;
	case ENT_NATIVE:
		snprintf(buf, len, "JVM %u (%s): no Java stacks: %s (%u %s)", e->jvm.pid,
			 e->jvm.main, e->why, e->tries, e->tries == 1 ? "try" : "tries");
		break;
	case ENT_GONE:
		snprintf(buf, len,
			 "JVM %u (%s): exited %.2f s after start, before its agent was ready (%u "
			 "%s)",
			 e->jvm.pid, e->jvm.main, (e->done_ns - t0) / 1e9, e->tries,
			 e->tries == 1 ? "try" : "tries");
		break;
	default:
		/* e->why: a try in progress keeps what ended the one before */
		snprintf(buf, len,
			 "JVM %u (%s): no Java stacks by the end (%.2f s after start), still trying "
			 "after %u %s: %s%s%s",
			 e->jvm.pid, e->jvm.main, (now_ns - t0) / 1e9, e->tries,
			 e->tries == 1 ? "try" : "tries",
			 e->run	     ? jvm_attach__progress(e->run) :
			 e->why[0] ? e->why :
				     "not started yet",
			 e->run && e->why[0] ? "; the try before: " : "", e->run && e->why[0] ? e->why : "");
		break;
	}
}

/* each JVM's outcome as it comes (o.note), and its first failure, once */
static void tell(struct attacher *a, __u64 now_ns)
{
	char line[1200];

	for (size_t i = 0; a->o.note && i < a->n; i++) {
		struct ent *e = &a->ents[i];

		if (e->told || e->st == ENT_GONE)
			continue;
		if (e->st == ENT_JAVA || e->st == ENT_NATIVE) {
			e->told = true;
			outcome(a, e, now_ns, line, sizeof(line));
			a->o.note(a->o.note_ctx, line);
		} else if (e->st == ENT_RETRY && !e->told_retry) {
			e->told_retry = true;
			snprintf(line, sizeof(line), "JVM %u (%s): attach failed (%s), retrying",
				 e->jvm.pid, e->jvm.main, e->why);
			a->o.note(a->o.note_ctx, line);
		}
	}
}

void attacher__forget(struct attacher *a, __u32 pid, __u64 now_ns, const char *why)
{
	struct ent *e = find(a, pid);

	if (!e)
		return;
	if (e->st == ENT_RUNNING)
		retire(a, e); /* its helper attached to the program that is gone */
	/* its outcome was said while recording (o.note): its slot goes */
	if (e->st == ENT_JAVA || e->st == ENT_NATIVE) {
		a->forgotten++;
		a->forgotten_java += e->st == ENT_JAVA;
		(void)hmap_del(&a->by_pid, pid, NULL);
		*e = a->ents[--a->n];
		if (e != &a->ents[a->n]) /* the last one moved into its slot */
			(void)hmap_put(&a->by_pid, e->jvm.pid, (__u64)(e - a->ents));
		return;
	}
	if (e->st != ENT_GONE)
		set_state(e, ENT_GONE, now_ns, why);
}

void attacher__poll(struct attacher *a, __u64 now_ns, attacher_ready_fn ready, void *ctx)
{
	struct ent *e;
	size_t keep = 0;

	a->now_ns = now_ns;
	for (size_t i = 0; i < a->nzombies; i++) {
		(void)jvm_attach__step(a->zombies[i]); /* reaps without waiting */
		if (jvm_attach__reaped(a->zombies[i]))
			jvm_attach__free(a->zombies[i]);
		else
			a->zombies[keep++] = a->zombies[i];
	}
	a->nzombies = keep;
	for (size_t i = 0; i < a->n; i++) {
		e = &a->ents[i];
		if (e->st == ENT_RUNNING && jvm_attach__step(e->run)) {
			on_done(a, e, now_ns);
		} else if (e->st == ENT_RUNNING && is_gone(e)) {
			/* a short-lived JVM: its helper would wait for a socket that never comes */
			set_state(e, ENT_GONE, now_ns, "exited");
			retire(a, e);
		} else if (e->st == ENT_CONNECTING)
			connect_step(e, now_ns, ready, ctx);
		else if (e->st == ENT_RETRY && e->next_ns <= now_ns && is_gone(e))
			set_state(e, ENT_GONE, now_ns, "exited");
	}
	while (a->helpers < MAX_HELPERS && (e = next_due(a, now_ns))) {
		if (a->tries_total >= MAX_TRIES_TOTAL) {
			/* the budget is spent: no more helpers this recording */
			a->tries_skipped++;
			e->next_ns = now_ns + ms_ns(RETRY_MAX_MS);
			snprintf(e->why, sizeof(e->why), "attach budget of %d tries used up",
				 MAX_TRIES_TOTAL);
			continue;
		}
		start_try(a, e, now_ns);
	}
	tell(a, now_ns);
}

bool attacher__busy(const struct attacher *a)
{
	if (a->helpers)
		return true;
	/* a channel that is not there after the fast window is only looked for once a second */
	for (size_t i = 0; i < a->n; i++)
		if (a->ents[i].st == ENT_CONNECTING &&
		    a->now_ns - a->ents[i].connect_since_ns < ms_ns(CHANNEL_FAST_MS))
			return true;
	return false;
}

void attacher__counts(const struct attacher *a, unsigned int *ret_jvms, unsigned int *ret_java)
{
	unsigned int java = 0;

	for (size_t i = 0; i < a->n; i++)
		java += a->ents[i].st == ENT_JAVA;
	*ret_jvms = (unsigned int)a->n + a->forgotten;
	*ret_java = java + a->forgotten_java;
}

void attacher__report(const struct attacher *a, __u64 now_ns, FILE *f)
{
	char line[1200], safe[1200];

	for (size_t i = 0; i < a->n; i++) {
		const struct ent *e = &a->ents[i];

		/* told while recording: a JVM that got its stacks needs no second line */
		if (e->told && e->st == ENT_JAVA && !a->o.report_all)
			continue;
		outcome(a, e, now_ns, line, sizeof(line));
		/* the main class is the JVM's user's text: no control character reaches a tty */
		fprintf(f, "jprof: %s\n", tty_escape(line, safe, sizeof(safe), 0));
	}
	if (a->jvms_dropped || a->tries_skipped)
		fprintf(f,
			"jprof: attach budget: %llu JVMs beyond %d not tracked, %llu tries "
			"beyond %d not made\n",
			(unsigned long long)a->jvms_dropped, MAX_JVMS,
			(unsigned long long)a->tries_skipped, MAX_TRIES_TOTAL);
}

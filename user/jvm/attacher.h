/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* attacher.h: attaches agents to many JVMs at once, in the background, with budgets and retries. */
#ifndef JPROF_ATTACHER_H
#define JPROF_ATTACHER_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

#include "discover.h"

struct attacher_opts {
	const char *agent_path; /* the library to load */
	const char *options;	/* agent options, may be NULL */
	bool no_attach;		/* only use agents that are loaded already */
	__u64 start_ns;		/* jprof's start (CLOCK_MONOTONIC): report times count from it */
	/*
	 * Told once per JVM, from attacher__poll, as its attach ends (Java stacks, or none for
	 * a reason that will not change) and at its first failed try: one line without the
	 * "jprof: " prefix. May be NULL.
	 */
	void (*note)(void *ctx, const char *line);
	void *note_ctx;
	bool report_all; /* attacher__report lists JVMs with Java stacks too (told already) */
};

/*
 * Result of the ready callback: the agent is loaded, connect its channel. Return 0 when
 * connected, -EAGAIN when the channel is not ready yet (asked again later), -errno when it
 * cannot be used, 1 when connected but the agent (loaded before) lacks events asked: it
 * is then loaded once more (JVM_ATTACH_AGAIN), with this recording's options.
 * attached_now: this recording loaded the agent.
 */
typedef int (*attacher_ready_fn)(void *ctx, const struct jvm_info *jvm, bool attached_now);

struct attacher;

/*
 * Opens the agent library (as root, before any helper drops privileges); when it cannot,
 * JVMs are profiled natively and the report says why. NULL + errno (ENOMEM).
 */
struct attacher *attacher__new(const struct attacher_opts *o);
void attacher__free(struct attacher *a); /* NULL-safe; kills and reaps running helpers */

/*
 * Queues a JVM (idempotent per pid while it lives). Returns 1 when new, 0 when known,
 * -ENOSPC when the JVM table's budget is used up (counted and reported).
 */
int attacher__add(struct attacher *a, const struct jvm_info *jvm, __u64 now_ns);

/*
 * Non-blocking: serves running helpers, kills those over their budget, starts queued
 * attaches and retries that are due (at most a few at once), and calls ready for JVMs
 * whose agent is loaded until their channel is connected. Never waits.
 */
/*
 * The daemon's SIGHUP: the agent options of attaches from now on (copied; NULL: none).
 * 0, or -ENOMEM with the old ones kept.
 */
int attacher__set_options(struct attacher *a, const char *options);
/*
 * pid's agent is connected but lacks events the options now ask: it is loaded once more
 * (JVM_ATTACH_AGAIN, one try, by attacher__poll), which adds them. -ENOENT when pid has no
 * connected agent this attacher loaded or found, or attaching is off.
 */
int attacher__load_again(struct attacher *a, __u32 pid, __u64 now_ns);
/*
 * The process pid exited or exec'd (why, for the report): its entry ends, a running helper
 * is stopped, and a later attacher__add of the pid (the new program, if a JVM) starts
 * afresh. An entry whose outcome was said while recording is taken out: the attacher holds
 * what live JVMs need, and JVMs that exited before their attach, for the report.
 */
void attacher__forget(struct attacher *a, __u32 pid, __u64 now_ns, const char *why);
void attacher__poll(struct attacher *a, __u64 now_ns, attacher_ready_fn ready, void *ctx);

/* true while helpers run or channels are being connected: poll more often then */
bool attacher__busy(const struct attacher *a);
/* JVMs known, and of them those with a connected agent */
void attacher__counts(const struct attacher *a, unsigned int *ret_jvms, unsigned int *ret_java);
/* one line per JVM: outcome, time from jprof's start, tries, and why when not attached */
void attacher__report(const struct attacher *a, __u64 now_ns, FILE *f);

#endif /* JPROF_ATTACHER_H */

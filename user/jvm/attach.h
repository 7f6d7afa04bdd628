/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* attach.h: loads the jprof agent into a running HotSpot JVM (dynamic attach protocol). */
#ifndef JPROF_ATTACH_H
#define JPROF_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

#include "discover.h"

/*
 * One attach, run by a child process that joins the JVM's mount namespace and root and
 * drops to the JVM's uid, gid and groups with no capabilities (checked): it copies the
 * library into the JVM's /tmp under a content- and uid-derived name, creates the
 * .attach_pid trigger, connects /tmp/.java_pid<nspid> and talks the HotSpot protocol.
 * Root (the caller) only opens the agent library, pins the JVM with a pidfd and sends the
 * SIGQUIT the child asks for, after checking that the JVM catches it. Not thread-safe;
 * the caller must be single-threaded (fork).
 */
struct jvm_attach;

/*
 * Starts an attach of the library behind agent_fd (opened by root, read-only; must stay
 * open until jvm_attach__free) with options (may be NULL), bounded by timeout_ms. Returns
 * 0 with *ret set (possibly finished already: not a JVM, agent loaded...), -errno without.
 */
int jvm_attach__start(const struct jvm_info *jvm, int agent_fd, const char *options, int timeout_ms,
		      unsigned int flags, struct jvm_attach **ret);
/* flags: load even where the agent runs already (it adds the events options ask for) */
#define JVM_ATTACH_AGAIN 1u

/*
 * Removes the agent channel files (jprof-<nspid>-<token>.ring and .dict in the JVM's /tmp)
 * that an earlier process of the same pid and user left (killed with -9: no VMDeath):
 * a ring that began before this process did (jvm_chan_files_sweep). Other users' files are
 * left alone: the names are random, they cannot stand in the agent's way. Root only.
 * Returns the number of files removed, or -errno.
 */
int jvm_clear_stale_channel(const struct jvm_info *jvm);
/* fd that becomes readable when jvm_attach__step has work; -1 once done */
int jvm_attach__fd(const struct jvm_attach *a);
/* Non-blocking: serves the child's requests, enforces the deadline. 1 when done, else 0. */
int jvm_attach__step(struct jvm_attach *a);
/*
 * Once done: 1 when the agent was loaded already, 0 when loaded now, -errno on failure
 * (-EINPROGRESS before) with a one-line reason in *ret_err (valid until free).
 */
int jvm_attach__result(const struct jvm_attach *a, const char **ret_err);
/* true when the load command reached the JVM (it may load the agent even after a timeout) */
bool jvm_attach__load_sent(const struct jvm_attach *a);
/* where a running attach stands, for reports */
const char *jvm_attach__progress(const struct jvm_attach *a);
/* true when the child process is gone (reaped) */
bool jvm_attach__reaped(const struct jvm_attach *a);
/* Kills the child if it still runs, reaps it (waits at most ~100 ms); NULL-safe. */
void jvm_attach__free(struct jvm_attach *a);

/*
 * Blocking: loads agent_path (a file jprof can read) into the JVM with options (may be
 * NULL) as above, bounded by timeout_ms. Returns 1 without attaching when the agent is
 * already loaded, 0 when loaded now, -errno on failure with a one-line reason in err.
 */
int jvm_attach_agent(const struct jvm_info *jvm, const char *agent_path, const char *options,
		     int timeout_ms, char *err, size_t errlen);

/*
 * The two halves of reading the JVM's answer to the load command, exposed for tests and
 * fuzzing: the bytes come from the JVM, untrusted.
 * jvm_attach_read_reply: reads sock until the peer closes it, at most timeout_ms; keeps the
 * first cap - 1 bytes NUL-terminated in reply (cap >= 2) and reads and drops the rest.
 * 0 with *ret_len, -ETIMEDOUT when the reply does not end in time, -EINVAL, -errno.
 * jvm_attach_parse_reply: reply[0..len), with reply[len] == '\0' (modified in place):
 * 0 when the agent loaded, else -EPROTO, -EPERM or -EINVAL with a one-line reason in err.
 */
int jvm_attach_read_reply(int sock, int timeout_ms, char *reply, size_t cap, size_t *ret_len);
int jvm_attach_parse_reply(char *reply, size_t len, char *err, size_t errlen);

#endif /* JPROF_ATTACH_H */

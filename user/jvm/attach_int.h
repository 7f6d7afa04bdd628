/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * attach_int.h: an attach's own state and the functions its files share (attach.c: the
 * parent, as root; attach_sigquit.c; attach_child.c: the child, as the JVM's user;
 * attach_copy.c; attach_proto.c); nothing else includes it. The public interface is attach.h.
 */
#ifndef JPROF_ATTACH_INT_H
#define JPROF_ATTACH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "attach.h"
#define DEFAULT_TIMEOUT_MS 10000
#define AGENT_MAX	   (64 << 20)
#define REPLY_MAX	   8192
#define HS_ARG_MAX	   1024 /* HotSpot's limit per protocol-1 argument, NUL included */
#define BACKOFF_MIN_MS	   10
#define BACKOFF_MAX_MS	   200
#define GROUPS_MAX	   1024 /* supplementary groups taken over from the target */
#define REAP_GRACE_MS	   1000 /* the child's own deadline comes first; then it is killed */

/* child -> parent messages, one per SOCK_SEQPACKET record */
enum {
	MSG_SIGQUIT = 'Q',   /* trigger file created: please send SIGQUIT now */
	MSG_CONNECTED = 'C', /* connected to the JVM's attach socket */
	MSG_LOAD_SENT = 'L', /* the load command went out: the JVM may load the agent now */
	MSG_INFO = 'I',	     /* a line for jprof's debug log (the child's stderr is /dev/null) */
	MSG_RESULT = 'R',    /* final: code and text */
};

struct attach_msg {
	char type;
	char pad[3];
	__s32 code;
	char text[248];
};

/* what the child works with; every fd was opened by root before the child dropped to the JVM's user */
struct attach_ctx {
	const struct jvm_info *jvm;
	int root_fd;   /* "/" after chroot into the JVM's root, in its mount namespace */
	int cwd_fd;    /* the JVM's cwd (O_PATH), for the trigger file */
	int status_fd; /* /proc/<pid>/status of the JVM: SigCgt at the moment we need it */
	int agent_fd;  /* the agent library, read-only */
	int chan;      /* socket to the parent */
	long long deadline_ms;
	int timeout_ms;
	char *err;
	size_t errlen;
};

/* one attach in flight, as the parent (root) sees it */
struct jvm_attach {
	struct jvm_info jvm;
	pid_t child;  /* > 0 until reaped */
	pid_t parent; /* jprof, as the child sees it */
	int chan;     /* parent end of the socket pair */
	int pidfd;    /* the JVM, pinned: the only way SIGQUIT is sent */
	long long start_ms, deadline_ms;
	int timeout_ms;
	bool signalled, connected, load_sent, done;
	bool claimed; /* this jprof holds the JVM's SIGQUIT marker (claim_sigquit) */
	long long signal_ms, connected_ms, load_sent_ms; /* when each happened, for the debug log */
	int ret;
	char err[256];
};

/* attach_child.c */
void at_set_err(struct attach_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
long long at_now_ms(void);
int at_remaining_ms(const struct attach_ctx *c);
void at_send_msg(struct attach_ctx *c, char type, int code, const char *text);
void __attribute__((noreturn)) at_child_main(const struct jvm_attach *a, int chan, int agent_fd,
					     const char *options, const gid_t *groups, int ngroups);

/* attach_copy.c */
int at_copy_agent(struct attach_ctx *c, char *ret_path, size_t path_len);

/* attach_proto.c */
int at_try_connect(struct attach_ctx *c);
int at_wake_listener(struct attach_ctx *c);
int at_send_load(struct attach_ctx *c, int sock, const char *path, const char *options, char *reply,
		 size_t reply_cap, size_t *ret_len);
int at_parse_reply(struct attach_ctx *c, char *reply, size_t len);
void at_log_reply(__u32 pid, const char *reply, size_t len);

/* attach_sigquit.c */
void at_release_sigquit(struct jvm_attach *a);
int at_send_sigquit(struct jvm_attach *a);

/* attach.c */
void at_finish(struct jvm_attach *a, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* JPROF_ATTACH_INT_H */

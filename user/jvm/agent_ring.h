/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_ring.h: reads one JVM's agent channel (trace ring + method dictionary,
 * see jvmagent/ring.h). Written by another user's process: parsed defensively.
 */
#ifndef JPROF_AGENT_RING_H
#define JPROF_AGENT_RING_H

#include <linux/types.h>
#include <stdbool.h>

#include "../frame.h"
#include "jprof.h"

struct java_frame {
	__u64 method_id;	 /* jmethodID as the JVM gave it */
	__s32 bci;		 /* AGCT lineno field: bci >= 0, or < 0 (native method, unknown) */
	enum jp_frame_kind kind; /* JP_FK_JIT, JP_FK_INLINED, JP_FK_INTERP, JP_FK_NATIVE (Java native method) */
};

struct java_trace {
	__u64 time_ns;	  /* CLOCK_MONOTONIC, taken in the agent's signal handler */
	__u32 tid;	  /* thread id in the JVM's pid namespace */
	__s32 num_frames; /* <= 0: no trace; 0 and the AGCT codes down to JAVA_TRACE_ERR_MIN, or JAVA_TRACE_ERR_* */
	__u64 pc;	  /* interrupted user PC (0 if the kernel was interrupted) */
	__u32 flags;	  /* JP_TRACE_F_* (JP_TRACE_F_FALLBACK: the agent's fallback walk) */
	const struct java_frame *frames; /* leaf first; valid during the callback only */
	/*
	 * a park's blocker class (Thread.parkBlocker), JVM-internal form
	 * ("java/util/concurrent/locks/ReentrantLock$NonfairSync", a hidden class without its
	 * address); interned, valid until jvm_agent__free(); NULL none or not sent
	 */
	const char *blocker;
};

/* reasons a trace has no frames (num_frames); the AGCT codes keep their values */
#define JAVA_TRACE_ERR_MIN -11 /* HotSpot forte.cpp: 0 no Java frame, -1 no class load ... -10 safepoint */
#define JAVA_TRACE_ERR_NOT_JAVA_THREAD -100 /* signal landed on a thread with no JNIEnv (GC, compiler) */
#define JAVA_TRACE_ERR_BUSY -101	     /* handler re-entered / not ready */
#define JAVA_TRACE_ERR_FAULT -102	     /* the agent's stack walk faulted (caught, JVM runs on) */

struct jvm_agent;

/*
 * Opens the agent channel of a JVM: /proc/<pid>/root/tmp/jprof-<nspid>.* (no symlinks
 * followed, no mount crossed, nothing opened before it is known to be a regular file
 * owned by the JVM's uid, sizes bounded). NULL + errno (ENOENT: no agent; ESTALE: the
 * files were left by an earlier process with this pid, the agent started before it). What its
 * dictionary makes jprof hold is bounded per JVM and over all JVMs (stats: over_budget).
 */
struct jvm_agent *jvm_agent__open(__u32 pid, __u32 nspid);
/* Same, from explicit files (tests, fuzzing). expected_uid (uid_t)-1 skips the owner check. */
struct jvm_agent *jvm_agent__open_files(const char *ring_path, const char *dict_path,
					unsigned int expected_uid);
void jvm_agent__free(struct jvm_agent *a); /* NULL-safe; unmaps, never touches the JVM */

/*
 * The layout for BPF's walk of this JVM's Java frames, from the ring header page, checked
 * (ranges and offsets BPF can use): 0, -ENOENT (the agent published none), -EPROTO.
 */
int jvm_agent__walk(const struct jvm_agent *a, struct jp_jwalk *ret);
/*
 * The same check of a walk block however it was read (the agent's, or jprof's own read of
 * the JVM's VMStructs from outside, jvm/vmstructs.h): 0 and *ret, or -EPROTO.
 */
struct jp_ring_walk;
int jvm_walk_check(const struct jp_ring_walk *w, struct jp_jwalk *ret);
/* the real-time signal the agent answers stack requests on; 0 while not ready */
int jvm_agent__signo(const struct jvm_agent *a);
/* the same as the last jvm_agent__poll read it (no read of its own; 0 after a failed one) */
int jvm_agent__signo_polled(const struct jvm_agent *a);
/*
 * Address of the handler the agent installed for that signal (untrusted: only ever
 * compared with the kernel's own record of the process's handler); 0 when unknown.
 */
__u64 jvm_agent__handler(const struct jvm_agent *a);

/* an event a JVMTI callback of the agent reported (jvmagent/ring.h struct jp_event_rec) */
struct java_event {
	__u64 time_ns;	   /* CLOCK_MONOTONIC in the callback */
	__u32 tid;	   /* thread id in the JVM's pid namespace */
	__u16 kind;	   /* JP_AEV_*: alloc, free, monitor enter, monitor entered */
	__u64 size;	   /* alloc: bytes of the sampled object */
	__u64 weight;	   /* alloc: estimated bytes the sample stands for */
	__u64 duration_ns; /* unused by the agent today (jprof pairs enter/entered) */
	__u64 class_id;	   /* jvm_agent__class_name() */
	__u64 tag;	   /* alloc/free: object tag (live tracking), 0 none */
	__s32 num_frames;  /* >= 0 */
	const struct java_frame *frames; /* leaf first; valid during the callback only */
};

typedef int (*java_trace_fn)(void *ctx, const struct java_trace *t);
typedef int (*java_event_fn)(void *ctx, const struct java_event *e);
/* Delivers every complete trace record written since the last call, then frees their
 * ring space. A malformed record is counted and skipped. Returns records read or -errno. */
int jvm_agent__poll(struct jvm_agent *a, java_trace_fn fn, void *ctx);

/* Same, and every event record to efn (NULL: events are counted as unread and skipped). */
int jvm_agent__poll_events(struct jvm_agent *a, java_trace_fn fn, java_event_fn efn, void *ctx);
/* bytes of records in the ring not read yet (the producer's head as it says, bounded) */
__u64 jvm_agent__unread(const struct jvm_agent *a);
/* JNI signature ("Ljava/lang/String;") of an event's class id, NULL when unknown */
const char *jvm_agent__class_name(struct jvm_agent *a, __u64 class_id);

/* Java names read from the dictionary (re-read incrementally when an id is unknown). */
#define JVM_NAME_DOTTED 1u /* java.lang.String.hashCode instead of java/lang/String.hashCode */
/* "pkg/Class.method"; NULL when the id is unknown. Valid until jvm_agent__free(). */
const char *jvm_agent__method_name(struct jvm_agent *a, __u64 method_id, unsigned int flags);
/*
 * What the JVM's code at pc is, from its dictionary: the compiled method's name as
 * jvm_agent__method_name gives it (*ret_java true), or a stub's name ("Interpreter",
 * "StubRoutines (1)"); NULL when no code the dictionary announced holds pc.
 */
/*
 * The Java frames at pc in a method's compiled code: its inline chain (innermost first,
 * the compiled method last) at pc, as AsyncGetCallTrace finds it: a caller's pc (a return
 * address) at the pc recorded there, the interrupted pc (top) at the first recorded pc
 * after it (pc_desc_near(pc + 1)); the compiled method alone when the blob has no inline
 * table (bci -1). Returns the number of frames, their methods in *ret and bcis in
 * *ret_bci (valid until the next call into a), -ENOENT (no blob), -EINVAL (a stub's code).
 */
/* the dictionary read up to now (bytes), after reading what was added (_refresh) */
__u64 jvm_agent__dict_refresh(struct jvm_agent *a);
__u64 jvm_agent__dict_read(const struct jvm_agent *a);
/* changes whenever code leaves the table of compiled code (a pc may name other frames since) */
__u32 jvm_agent__code_gen(const struct jvm_agent *a);
int jvm_agent__pc_chain(struct jvm_agent *a, __u64 pc, bool top, const __u64 **ret,
			const __s32 **ret_bci);
const char *jvm_agent__code_name(struct jvm_agent *a, __u64 pc, bool *ret_java);
/*
 * A hidden class's name without the address this JVM gave it, and a JDK 17 lambda class's
 * without its number ("Foo$$Lambda$14.0x0000000800c01234" is "Foo$$Lambda"): s (n bytes) is
 * shortened in place and NUL-terminated; returns its new length. Class names from the
 * dictionary come this way.
 */
size_t jvm_agent__hidden_class_norm(char *s, size_t n);
/* source line of bci in method, or -1 when unknown */
int jvm_agent__line(struct jvm_agent *a, __u64 method_id, __s32 bci);
/* Java thread name of a thread id (JVM namespace), NULL when unknown */
const char *jvm_agent__thread_name(struct jvm_agent *a, __u32 tid);

struct jvm_agent_stats {
	__u64 traces;	       /* records written by the agent */
	__u64 ring_full;       /* traces the agent dropped: ring full */
	__u64 not_java_thread; /* signals on threads with no JNIEnv */
	__u64 busy;	       /* signals the agent answered before it was ready */
	__u64 agct_err[12];    /* [-code] for AGCT codes 0 (no Java frame) .. -11 */
	__u64 faults;	       /* stack walks that faulted and were abandoned */
	__u64 threads_full;    /* threads the agent could not register (table full) */
	__u64 malformed;       /* records jprof rejected */
	__u64 over_budget;     /* dictionary entries dropped: this JVM's or the global budget */
	__u64 bytes;	       /* held for this JVM's dictionary now */
	__u64 pc_lookups;      /* compiled frames' chains looked up (jvm_agent__pc_chain) */
	__u64 pc_cached;       /* ... answered by the lookups' cache */
	__u64 events;	       /* event records the agent wrote (ABI v3) */
	__u64 events_dropped;  /* events the agent dropped: ring full */
	__u64 events_unread;   /* event records polled without an event consumer */
	__u64 fallback_tried;  /* AGCT failures the agent's fallback walk tried again */
	__u64 fallback_ok;     /* ... of which it recovered the Java frames */
	__u64 fallback_ns;     /* time the agent spent in the fallback walk */
	__u64 stub_tried;      /* fallback frames in a C1/C2 runtime stub (0: an agent before) */
	__u64 stub_ok;	       /* ... whose compiled caller was walked */
	__u64 stub_gaveup;     /* ... whose caller a check refused */
	__u64 handler_ns;      /* time in the stack-request handler (0: an agent before it) */
	__u64 handler_timed;   /* calls in handler_ns (0: all traces, an agent before it) */
	__u64 events_ns;       /* time in the JVMTI event callbacks (0: an agent before it) */
	__u32 ring_flags;      /* JP_RING_F_*: how it was loaded, which events it sends */
	/* park traces: with their blocker's class, parkBlocker null, not named by the agent */
	__u64 blocker_named, blocker_none, blocker_failed;
	__u64 blocker_bad; /* ... whose name jprof refused (bounds, characters, budget) */
};
void jvm_agent__stats(const struct jvm_agent *a, struct jvm_agent_stats *ret);
/* this JVM's dictionary budget in bytes (default 256 MiB; smaller for tests) */
void jvm_agent__set_max_bytes(struct jvm_agent *a, __u64 max_bytes);
/* "no Java frame", "GC active", ... for a num_frames < 0 */
const char *java_trace_err_str(int code);

/* the dictionaries' bytes held for all JVMs, against the global budget (-v report) */
__u64 jvm_agent__all_bytes(void);
/* ... of which compiled code's inline tables held for lookups, and tables freed for room */
void jvm_agent__all_tables(__u64 *ret_bytes, __u64 *ret_evicted);

/*
 * The reader protocol (jvmagent/ring.h): stamps the ring header with now_ns (the reader is
 * alive) and each event of want (JP_RING_F_EV_*) with it, and the allocation interval
 * wanted (0: the JVM's default). Call it every poll round: an agent switches an event off
 * about a second after its stamp stopped moving. 0 or -EIO.
 */
int jvm_agent__heartbeat(struct jvm_agent *a, __u64 now_ns, __u32 want, __u32 alloc_interval);
/*
 * The events the agent has switched on now, as text: "-" none, "lock,alloc,live", a "!"
 * after them from an agent before the reader protocol (they stay on for the JVM's life).
 * 0, or -EIO (buf untouched).
 */
int jvm_agent__events_str(const struct jvm_agent *a, char *buf, size_t size);
/*
 * Event records timed before since_ns (CLOCK_MONOTONIC) are skipped: what the agent wrote
 * for an earlier recording (killed, or in the second before its agent switched off) is
 * not this recording's. Trace records are answers to this jprof's requests: all kept.
 */
void jvm_agent__events_since(struct jvm_agent *a, __u64 since_ns);

#endif /* JPROF_AGENT_RING_H */

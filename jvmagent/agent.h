/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* agent.h: what the agent's modules offer each other. Nothing here is exported from the .so. */
#ifndef JPROF_AGENT_H
#define JPROF_AGENT_H

#include <jvmti.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "ring.h"

/* one line to the JVM's stderr, prefixed "jprof agent: " */
void jpa_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A detached thread of the agent's (256 KiB stack) running fn, made with every signal but
 * the faults blocked, so no process-wide signal is delivered to it; 0 or -errno
 */
int jpa_thread_start(void *(*fn)(void *));

/* the calling thread's JNIEnv, NULL when it has none */
JNIEnv *jpa_jni_env(void);

/* "dir/<name>-<pid>.<ext>"; -ENAMETOOLONG when it does not fit */
int jpa_path(char *buf, size_t size, const char *dir, const char *name, __u32 pid,
	     const char *ext);
/*
 * "dir/jprof-<pid>-<token>.<ext>" (ring.h), the token drawn once per process on the first
 * call; -ENAMETOOLONG, or -errno when no random bytes could be had
 */
int jpa_channel_path(char *buf, size_t size, const char *dir, __u32 pid, const char *ext);
/* unlinks path, then creates it O_EXCL|O_NOFOLLOW|O_CLOEXEC with mode (umask undone); fd or -errno */
int jpa_create(const char *path, int flags, unsigned int mode);

/* stacks.c: the trace ring and the signal handler */
enum jpa_counter {
	JPA_DICT_BYTES,
	JPA_DICT_DROPPED,
	JPA_PERFMAP_DROPPED,
	JPA_THREADS_FULL,
	JPA_EVENTS_NS,
};
/* creates and maps dir/jprof-<pid>-<token>.ring; 0 or -errno */
int jpa_ring_open(const char *dir, __u32 pid, __u32 data_size, __u32 max_depth, __u32 flags);
/*
 * resolves AGCT, installs the SIGSEGV/SIGBUS guard (chained to the JVM's), picks (or
 * checks) the signal, installs the handler, publishes its address then signo; 0 or -errno
 */
int jpa_stacks_start(int signo);
/* test only: every Nth walk and every Nth fallback walk fault on purpose, protected; before start */
int jpa_stacks_test_faults(__u32 every);
/* AGCT alone, no fallback walk where it fails (measurements, a JVM it misleads); before start */
void jpa_stacks_no_fallback(void);
/* tells jprof the agent is going away (signo 0); the handler stays installed, harmlessly */
void jpa_stacks_stop(void);
void jpa_ring_count(enum jpa_counter c, __u64 n);
/* adds JP_RING_F_* bits to the ring header's flags */
void jpa_ring_set_flags(__u32 flags);
/* events.c's records (JVMTI callbacks, never a signal handler); 0, -ENOSPC dropped (counted) */
int jpa_ring_event(const struct jp_event_rec *ev, const jvmtiFrameInfo *frames, int n);
void jpa_ring_event_dropped(void); /* counts an event lost before it reached the ring */
/* the ring's path, for unlinking at unload ("" when none) */
const char *jpa_ring_path(void);

/* methods.c: the dictionary log */
int jpa_dict_open(const char *dir, __u32 pid);
const char *jpa_dict_path(void);
/* one class and all its methods (creates their jmethodIDs); skips unprepared classes */
void jpa_dict_class(jvmtiEnv *jvmti, jclass klass);
void jpa_dict_code_load(jmethodID method, const void *addr, __u32 size, const void *compile_info);
void jpa_dict_code_unload(jmethodID method, const void *addr);
void jpa_dict_stub(const char *name, const void *addr, __u32 size);
void jpa_dict_thread(__u32 tid, const char *name);
/* the class of events' class_id: its JNI signature ("Ljava/lang/String;") */
void jpa_dict_class_id(__u64 class_id, const char *sig);

/* threads.c: the live Java threads, found from a signal handler without GetEnv */
struct jpa_thread {
	uintptr_t jt; /* JavaThread*; 0 empty, 1 removed */
	void *walk;   /* sigjmp_buf * while this thread walks its stack, else NULL */
};
/* learns the JNIEnv offset and HotSpot's Thread* key from the calling thread; 0 or -errno */
int jpa_threads_init(JNIEnv *env, jthread current);
/* ThreadStart / ThreadEnd, on the thread itself */
void jpa_threads_start(JNIEnv *env, jthread thread);
void jpa_threads_end(JNIEnv *env, jthread thread);
/* adds every live thread (at VMInit or attach, after ThreadStart/End are enabled) */
void jpa_threads_scan(jvmtiEnv *jvmti, JNIEnv *env);
/* java.lang.Thread.eetop of thread: its JavaThread*, 0 before start, after exit or unknown */
uintptr_t jpa_thread_eetop(JNIEnv *env, jthread thread);
/* async-signal-safe: the caller's slot (and JNIEnv), NULL if not a known JavaThread */
struct jpa_thread *jpa_thread_self(JNIEnv **ret_env);

/* events.c: JVMTI events as ring records (opt-in by agent options) */
#define JPA_EV_LOCK  1u /* MonitorContendedEnter/Entered */
#define JPA_EV_ALLOC 2u /* SampledObjectAlloc */
#define JPA_EV_LIVE  4u /* + tags and ObjectFree */
/* adds the capabilities flags need (those the JVM offers) to caps; before AddCapabilities */
int jpa_events_caps(jvmtiEnv *jvmti, unsigned int flags, jvmtiCapabilities *caps);
/* sets the callbacks of the events that got their capability */
void jpa_events_callbacks(jvmtiEventCallbacks *cb);
/* turns want on too; alloc_interval bytes (0: 512 KiB), depth frames per stack; 0 or -errno */
int jpa_events_enable(unsigned int want, __u32 alloc_interval, __u32 depth);
/*
 * switches the events of want this agent can send on, the others off (JVMTI DISABLE, heap
 * sampling interval back to 512 KiB); thread-safe, JVMTI context (a JVM-attached thread).
 * 0 or -EINVAL: some switch failed (jpa_events_on() says what is on)
 */
int jpa_events_switch(unsigned int want, __u32 alloc_interval);
unsigned int jpa_events_active(void); /* JPA_EV_* it can send */
unsigned int jpa_events_on(void);     /* JPA_EV_* on now */
/* after a late attach: threads already blocked entering a monitor, as waits since now */
void jpa_events_scan_blocked(JNIEnv *env);
/*
 * watch.c: the watcher thread, which keeps the events on only while a reader wants them
 * (the reader protocol of ring.h). Starts once, in the live phase, after jpa_ring_open;
 * 0 or -errno (then the events stay as they are). alloc_interval: the agent's option.
 */
int jpa_watch_start(JavaVM *vm, __u32 alloc_interval);
/* an attach asked for events: they count as wanted for a grace period (jprof connects) */
void jpa_watch_arrival(unsigned int events, __u32 alloc_interval);
/* the JVM is going away: the watcher makes no JVMTI call any more */
void jpa_watch_stop(void);

/* vmstructs.c: HotSpot's own layout tables (gHotSpotVMStructs), read at start */
/* finds the code cache bounds; 0 or -errno (then jpa_vm_in_code() is always 0) */
int jpa_vm_init(void);
/* async-signal-safe: pc lies in HotSpot's code cache */
int jpa_vm_in_code(uintptr_t pc);
/* where a JavaThread keeps its last Java frame (fp NULL where HotSpot does not say) */
struct jpa_anchor {
	uintptr_t *sp, *fp, *pc;
	int32_t *state; /* JavaThread::_thread_state */
	int32_t in_vm;	/* its value "in the VM" */
};
/* async-signal-safe, no memory read: jt's anchor fields; 0 or -ENOENT */
int jpa_vm_anchor(uintptr_t jt, struct jpa_anchor *ret);
/*
 * The OS tid of JavaThread jt (Thread::_osthread->_thread_id, from VMStructs), read with
 * process_vm_readv: a thread that exits meanwhile costs -EFAULT, never a fault. For JVMTI
 * context (a system call). 0, -ENOENT (no such fields), -EINVAL (jt 0), -EFAULT.
 */
int jpa_vm_os_tid(uintptr_t jt, __u32 *ret);
/* async-signal-safe: n bytes at addr of this process (process_vm_readv); 0, never a fault, or -EFAULT */
int jpa_vm_read(uintptr_t addr, void *buf, size_t n);
/* what reading an object's class from a JavaThread needs, from VMStructs; -1 / NULL unknown */
struct jpa_heap {
	long thread_obj, vthread;  /* JavaThread::_threadObj, _vthread (21+): OopHandles */
	long handle_obj;	   /* OopHandle::_obj (oop *) */
	long klass, narrow_klass;  /* oopDesc::_metadata._klass, ._compressed_klass */
	long klass_name;	   /* Klass::_name (Symbol *) */
	long klass_layout;	   /* Klass::_layout_helper (jint: an instance's bytes) */
	long sym_length, sym_body; /* Symbol::_length (u2), _body (u1[]) */
	long gc_active, gc_count;  /* CollectedHeap::_is_(stw_)gc_active, _total_collections */
	const uintptr_t *oop_base, *klass_base; /* CompressedOops / CompressedKlassPointers */
	const int32_t *oop_shift, *klass_shift;
	const uintptr_t *collected_heap; /* Universe::_collectedHeap */
};
/* after jpa_vm_init: the layout found (never NULL) */
const struct jpa_heap *jpa_vm_heap(void);
/* a bool VM flag (JVMFlag table) by name; 0, -ENOENT, -EFAULT. Not for a signal handler. */
int jpa_vm_flag_bool(const char *name, int *ret);
/*
 * the layout of the code cache and frames for jprof's BPF walk (after jpa_vm_init); on
 * success the agent's stub walk (jpa_vm_blob) uses it too
 */
int jpa_vm_walk(struct jp_ring_walk *w);
enum jpa_blob_kind {
	JPA_BLOB_OTHER,
	JPA_BLOB_NMETHOD,      /* compiled Java code */
	JPA_BLOB_RUNTIME_STUB, /* a C1 or C2 stub that calls into the VM */
	JPA_BLOB_ADAPTER,      /* I2C/C2I adapters */
	JPA_BLOB_INTERPRETER,  /* the template interpreter */
	JPA_BLOB_KIND_MAX
};
struct jpa_blob {
	int kind;	     /* enum jpa_blob_kind */
	int32_t frame_words; /* CodeBlob::_frame_size: the frame, return address included */
	int complete;	     /* pc is past the frame-complete offset: 1, 0, -1 (none: C1 stubs) */
	uintptr_t complete_pc; /* the first pc past it (complete >= 0) */
	uintptr_t code;	       /* the blob's first instruction */
};
/*
 * The code blob holding pc, found as HotSpot's CodeHeap::find_blob does (segment map, then
 * the HeapBlock in use and long enough). Only in the stack-request handler under its fault
 * protection: it reads the code heaps with plain loads. 0 or -ENOENT (no layout, no blob).
 */
int jpa_vm_blob(uintptr_t pc, struct jpa_blob *ret);

/*
 * blocker.c: the class of a parked thread's blocker (Thread.parkBlocker). Init: in the live
 * phase after jpa_stacks_start, on a Java thread (JNI); proves the layout on objects of its
 * own, then sets JP_RING_F_BLOCKER. 0, or -errno (logged once: parks stay without it).
 */
int jpa_blocker_init(JNIEnv *env, jthread current);
/*
 * Async-signal-safe, never a fault: when frames (n, leaf first) are in Unsafe.park, the
 * class name of JavaThread jt's parkBlocker ("java/util/concurrent/locks/...", not
 * NUL-terminated) into buf (cap bytes). Its length; 0 none (null blocker); -ENODATA not a
 * park, or off; -EAGAIN a GC pause overlapped; other -errno the read failed or was refused.
 */
int jpa_blocker_read(uintptr_t jt, const struct jp_frame *frames, int n, char *buf, __u32 cap);

/* perfmap.c: /tmp/perf-<pid>.map */
int jpa_perfmap_open(const char *dir, __u32 pid);
void jpa_perfmap_method(jvmtiEnv *jvmti, jmethodID method, const void *addr, __u32 size);
void jpa_perfmap_stub(const char *name, const void *addr, __u32 size);

/*
 * trace.c: the method trace. Starts a trace of the methods patterns name ("pkg.Class.method"
 * globs, '|' between them; calls of at least slow_ns get their Java stack, 0 none; args: their
 * first args arguments kept, --args) on a JVM-attached thread in the live phase: the helper class,
 * the trace file in dir (ring.h: JP_MT_*), matching loaded classes retransformed. A
 * running trace ends first. 0 or -errno (logged).
 */
int jpa_trace_start(jvmtiEnv *jvmti, JavaVM *vm, JNIEnv *env, const char *dir, const char *patterns,
		    __u64 slow_ns, unsigned int args);
/* --args: an argument kept (trace_helper.c) */
enum jpa_targ_kind {
	JPA_TARG_INT = 1,
	JPA_TARG_LONG,
	JPA_TARG_FLOAT,
	JPA_TARG_DOUBLE,
	JPA_TARG_STRING,
	JPA_TARG_NULL
};
struct jpa_targ {
	__u8 pos, kind;
	__u64 val;    /* the bits (a float's in the low 32); a String's length */
	char str[16]; /* a String's first chars (not terminated) */
};
/*
 * trace_helper.c: defines the helper class once and binds timing (enter, leave, thrown) and
 * the arg natives (*ret_has_args: bound). 0 or -errno (a pending exception cleared).
 */
int jpa_trace_define_helper(JNIEnv *env, const JNINativeMethod *timing, int *ret_has_args);
/* the calling thread's args of depth forgotten (enter); those kept into out[JPA_BC_ARGS_MAX] */
void jpa_targs_reset(unsigned int depth);
int jpa_targs_get(unsigned int depth, struct jpa_targ *out);
/* trace.c: the depth (0 outermost) of the calling thread's innermost traced call; -1 none */
int jpa_trace_depth(void);
/* the ClassFileLoadHook: rewrites matched classes while a trace is on */
void JNICALL jpa_trace_cflh(jvmtiEnv *j, JNIEnv *env, jclass redefined, jobject loader,
			    const char *name, jobject pd, jint len, const unsigned char *data,
			    jint *new_len, unsigned char **new_data);
/* the JVM is going away: the trace says so and its file goes */
void jpa_trace_vm_death(void);

#endif /* JPROF_AGENT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ring.h: the JVM<->root ABI of the agent channel. Two files in the JVM's /tmp:
 *
 *   jprof-<nspid>-<token>.ring  header page + data area of trace records (mmap'ed by both sides)
 *   jprof-<nspid>-<token>.dict  append-only log: file header, then dictionary records
 *
 * <token>: JP_CHAN_TOKEN_LEN lowercase hex digits from getrandom(), the same for both
 * files, so nobody can create them ahead of the JVM (a file squatting a predictable name
 * made the agent fail). jprof learns the name from the JVM's /proc/<pid>/maps, which
 * shows the mapped ring (a channel the JVM's user owns), and opens only files of that user.
 *
 * Fixed-width fields only; both sides are x86-64/arm64 little-endian LP64 and the
 * layouts below are _Static_assert'ed. Everything here is written by the JVM's
 * (untrusted) process: the reader validates every field.
 *
 * Trace ring protocol (many producers: signal handlers on many threads; one consumer):
 *  - head and tail are absolute byte positions (never wrap); offset = pos % data_size,
 *    data_size a power of two. Records are 16-byte aligned and never cross the end of
 *    the data area: a producer that would cross it first fills the rest with a PAD record.
 *  - a producer reserves [head, head + n) with a CAS loop on head, allowed only while
 *    head + n - tail <= data_size (else it counts ring_full and gives up);
 *  - it fills the record, then commits by storing seq = the record's absolute position
 *    (release). Stale bytes of an older lap carry an older position, so the consumer
 *    reading at tail knows a record is complete iff seq == tail (acquire);
 *  - the consumer copies the record out, then advances tail (release).
 * A trace reserves the space of max_depth frames so AsyncGetCallTrace can write
 * straight into the ring (no big buffer on a small signal stack), then gives the
 * unused end back: by moving head back if nobody reserved after it, else as a PAD record.
 */
#ifndef JPROF_RING_H
#define JPROF_RING_H

#include <linux/types.h>

#define JP_RING_MAGIC	0x4a505247u /* "JPRG" */
#define JP_DICT_MAGIC	0x4a504449u /* "JPDI" */
/*
 * 3: JP_REC_EVENT, JP_DICT_CLASS_ID, event counters. The reader protocol (the reader_* and
 * want_* fields, ev_on, JP_RING_F_READER) kept 3: it only uses bytes an agent before it left
 * zero and never read (pad3) or that a jprof before it never reads (after handler_timed), so
 * a new jprof reads an agent before it (whose events stay on, as they did) and the other way
 * round; jprof tells them apart by JP_RING_F_READER.
 */
#define JP_RING_VERSION 4 /* 4: the files' names carry a random token (above) */
/*
 * The park blocker (JP_TRACE_F_BLOCKER, JP_RING_F_BLOCKER, the blocker_* counters) kept 4:
 * it only uses bytes a jprof before it never read (a trace's tail past its frames, within
 * len; pad bytes of the record and the header page), so either side reads the other's. A
 * jprof before it counts a trace with a name as malformed only at depth=4096 (too long).
 */
#define JP_CHAN_TOKEN_LEN 16

#define JP_RING_HDR_SIZE      4096u
#define JP_RING_DATA_MIN      (64u << 10)
#define JP_RING_DATA_MAX      (64u << 20)
#define JP_RING_DATA_DEFAULT  (4u << 20) /* 1 MiB overflowed: javac at 999 Hz, a lagging jprof */
#define JP_DEPTH_DEFAULT      2048u
#define JP_DEPTH_MAX	      4096u
#define JP_AGCT_CODES	      12 /* counters for AGCT codes 0 (no Java frame), -1 .. -11 */
#define JP_DICT_SIZE_MAX      (256ull << 20)
#define JP_DICT_REC_MAX	      (8u << 20) /* one dictionary record is never larger */
/*
 * What Agent_OnAttach returns when the agent does not start (HotSpot answers it to jprof
 * as the load's "return code"): JP_AGENT_RC_FILES - errno when its channel files could not
 * be created in the JVM's /tmp, -errno for other reasons (jprof says which).
 */
#define JP_AGENT_RC_FILES     (-1000)

/* header page of the .ring file */
struct jp_ring_hdr {
	__u32 magic;	 /* JP_RING_MAGIC */
	__u16 version;	 /* JP_RING_VERSION */
	__u16 hdr_size;	 /* offset of the data area: JP_RING_HDR_SIZE */
	__u32 data_size; /* bytes of the data area, a power of two */
	__u32 pid;	 /* getpid() in the JVM's own pid namespace */
	__s32 signo;	 /* signal the handler answers; 0 until installed (release store) */
	__u32 max_depth; /* frames a trace can hold */
	__u32 flags;	 /* JP_RING_F_* */
	__u32 pad0;
	__u64 start_ns;	 /* CLOCK_MONOTONIC when the agent started */
	__u64 handler;	 /* address of the installed stack-request handler (published before signo) */
	__u8 pad1[16];
	/* 64: producers' cache line */
	__u64 head;	 /* reserved up to here (CAS by producers) */
	__u8 pad2[56];
	/* 128: consumer's cache line, written by jprof only */
	__u64 tail;	 /* consumed up to here */
	/*
	 * The reader protocol (JP_RING_F_READER). Each poll round a reader stores its
	 * CLOCK_MONOTONIC time into reader_ns and into the want_ns[] of each event it wants
	 * from this JVM (JP_RING_WANT_*). The agent never compares these with its own clock:
	 * a stamp that changed since its last look (every JP_RING_WATCH_MS) means a reader
	 * alive; an event whose stamp stayed the same for JP_RING_READER_GONE_MS is switched
	 * off. One stamp per event, so two readers that want different events each keep
	 * theirs on, and none can switch another's off.
	 */
	__u64 reader_ns;
	__u64 want_ns[3];	      /* [JP_RING_WANT_*]: lock, alloc, live */
	__u32 want_alloc_interval; /* bytes between allocation samples, 0: JVMTI's 512 KiB */
	__u8 pad3[20];
	/* 192: counters, relaxed atomic adds by the agent */
	__u64 traces;	       /* trace records committed (any num_frames) */
	__u64 ring_full;       /* traces dropped: no room */
	__u64 not_java_thread; /* signals on threads without a JNIEnv */
	__u64 busy;	       /* signals before the agent was ready */
	__u64 dict_bytes;      /* bytes in the dictionary file */
	__u64 dict_dropped;    /* dictionary records not written (cap or error) */
	__u64 perfmap_dropped; /* perf map lines not written */
	/*
	 * time inside the stack-request handler: thread CPU time of the handler_timed calls
	 * (1 in JP_HANDLER_TIMED_EVERY, so preemptions inside do not count); an agent before
	 * handler_timed summed CLOCK_MONOTONIC of all calls
	 */
	__u64 handler_ns;
	__u64 agct_err[JP_AGCT_CODES]; /* [-code]: AGCT results 0 (no Java frame) .. -11 */
	__u64 faults;	    /* stack walks that faulted and were abandoned (JP_ERR_FAULT) */
	__u64 threads_full; /* threads not registered: the agent's thread table was full */
	__u64 events;	      /* JP_REC_EVENT records committed (v3) */
	__u64 events_dropped; /* events not written: ring full or a JVMTI call failed (v3) */
	__u64 events_ns;      /* CLOCK_MONOTONIC time inside the event callbacks, all calls */
	/* the fallback walk (AGCT failed on a thread in Java, JP_TRACE_F_FALLBACK) */
	__u64 fallback_tried; /* walks that AGCT failed and the fallback tried again */
	__u64 fallback_ok;    /* ... of which it recovered the Java frames */
	__u64 fallback_ns;    /* thread CPU time spent in the fallback, all tries */
	__u64 handler_timed;  /* handler calls timed into handler_ns (0: an agent before) */
	/* the reader protocol, agent side (JP_RING_F_READER) */
	__u32 ev_on;	      /* JP_RING_F_EV_* switched on now (release store after the switch) */
	__u32 ev_pad;
	__u64 ev_switches;    /* times the watcher switched events on or off */
	__u64 watcher_ns;     /* thread CPU time of the agent's watcher thread */
	/* park traces (Unsafe.park) and their blocker's class (JP_RING_F_BLOCKER) */
	__u64 blocker_named;  /* ... named: JP_TRACE_F_BLOCKER */
	__u64 blocker_none;   /* ... whose parkBlocker was null (LockSupport.park()) */
	__u64 blocker_failed; /* ... not named: a GC pause overlapped, a read or check failed */
	/* the fallback's walk out of C1/C2 runtime stubs by their frame size (0: an agent before) */
	__u64 stub_tried;  /* frames found in such a stub */
	__u64 stub_ok;	   /* ... whose compiled caller AGCT walked */
	__u64 stub_gaveup; /* ... whose caller a check refused: nothing tried */
};

#define JP_HANDLER_TIMED_EVERY 16u

/*
 * The layout a walk of this JVM's Java frames from outside needs (jprof's BPF walk),
 * read by the agent from libjvm's VMStructs tables, in the header page at
 * JP_RING_WALK_OFF. magic is stored last (release); an agent that could not read it all,
 * or one before this block, leaves the page's zeros. Untrusted like the rest: jprof
 * checks every field before BPF uses it.
 */
#define JP_RING_WALK_OFF  2048u
#define JP_RING_WALK_MAGIC 0x4a50574bu /* "JPWK" */
#define JP_RING_WALK_HEAPS 3

struct jp_ring_walk {
	__u32 magic;
	__u32 n_heaps; /* CodeCache::_heaps, at most JP_RING_WALK_HEAPS */
	struct {
		__u64 lo, hi;	 /* CodeHeap::_memory: _low, _high_boundary */
		__u64 segmap;	 /* CodeHeap::_segmap._low */
		__u32 log2_seg;	 /* CodeHeap::_log2_segment_size */
		__u32 pad;
	} heaps[JP_RING_WALK_HEAPS];
	__u64 call_stub_ret;   /* StubRoutines::_call_stub_return_address */
	__u32 heap_block;      /* sizeof(HeapBlock) */
	__u16 blob_name;       /* CodeBlob::_name */
	__u16 blob_frame_size; /* CodeBlob::_frame_size (int, words) */
	__u16 blob_frame_complete; /* CodeBlob::_frame_complete_offset (int) */
	__u16 blob_code;	   /* CodeBlob::_code_begin (pointer) or _code_offset (int) */
	__u16 code_is_offset;	   /* 1: blob_code is _code_offset */
	__u16 method_const;	   /* Method::_constMethod */
	__u16 const_size;	   /* sizeof(ConstMethod) */
	__u16 const_code_size;	   /* ConstMethod::_code_size (u16) */
	__u16 frame_complete_size; /* bytes of _frame_complete_offset: 4 (int), 2 (int16_t, 25) */
	/* an entry frame's JavaCallWrapper (rbp - 6 words on x86-64) holds the outer Java part */
	__u16 wrapper_anchor;	   /* JavaCallWrapper::_anchor */
	__u16 anchor_sp, anchor_fp, anchor_pc; /* JavaFrameAnchor::_last_Java_sp, _fp, _pc */
	/*
	 * the HeapBlock before each blob: HeapBlock::_header + Header::_length (segments: a
	 * size_t in JDK 17, a uint32_t in 25) and + Header::_used (bool); hb_length_size the
	 * bytes of _length, 0 when the agent did not find them (an agent before them leaves
	 * the zeros: jprof's walk then caches no blob)
	 */
	__u16 hb_length, hb_used, hb_length_size;
};

#define JP_RING_F_ATTACHED 1u /* loaded by dynamic attach, not at JVM start */
/*
 * The JVMTI events this agent sends, set (atomic or) once they are on. An agent is loaded
 * once per JVM: one loaded at start, or by an earlier jprof, keeps the events it was
 * given. EV_KNOWN: this agent publishes them (one before it never set these bits).
 */
#define JP_RING_F_EV_KNOWN 2u
#define JP_RING_F_EV_LOCK  4u  /* MonitorContendedEnter/Entered */
#define JP_RING_F_EV_ALLOC 8u  /* SampledObjectAlloc */
#define JP_RING_F_EV_LIVE  16u /* ObjectFree of sampled objects */
/*
 * The agent switches the events above on only while a reader wants them (want_ns) and off
 * within about a second of its last stamp: EV_* then say what it can send, ev_on what it
 * sends now. An agent without this bit keeps the events it was given on for good.
 */
#define JP_RING_F_READER 32u
/* the agent names the blocker's class of park traces (JP_TRACE_F_BLOCKER) in this JVM */
#define JP_RING_F_BLOCKER 64u

enum jp_ring_want {
	JP_RING_WANT_LOCK = 0,
	JP_RING_WANT_ALLOC = 1,
	JP_RING_WANT_LIVE = 2,
	JP_RING_WANT_MAX
};
#define JP_RING_WATCH_MS       100u  /* the agent looks at the stamps this often */
#define JP_RING_READER_GONE_MS 1000u /* an unchanged stamp for this long: reader gone */

/* record header in the data area; every record is a multiple of 16 bytes */
struct jp_rec_hdr {
	__u64 seq;  /* absolute position of this record: commit mark (store-release last) */
	__u32 len;  /* bytes including this header */
	__u16 type; /* JP_REC_* */
	__u16 pad;
};

enum jp_rec_type {
	JP_REC_PAD = 1,	  /* filler: skip len bytes */
	JP_REC_TRACE = 2, /* struct jp_trace_rec + frames */
	JP_REC_EVENT = 3, /* struct jp_event_rec + frames (v3) */
	JP_REC_MAX
};

/* one frame; the same layout as HotSpot's ASGCT_CallFrame on LP64, so AGCT fills it */
struct jp_frame {
	__s32 bci;	  /* AGCT "lineno": bci >= 0, -3 native method, other < 0 unknown */
	__u32 pad;
	__u64 method_id; /* jmethodID */
};

struct jp_trace_rec {
	struct jp_rec_hdr h;
	__u64 time_ns;	  /* CLOCK_MONOTONIC in the handler */
	__u64 pc;	  /* interrupted PC from the ucontext */
	__u32 tid;	  /* gettid() in the JVM's namespace */
	__s32 num_frames; /* >= 0 frames that follow; < 0 AGCT error or JP_ERR_* */
	__u8 flags;	  /* JP_TRACE_F_* */
	__u8 blocker_len; /* JP_TRACE_F_BLOCKER: bytes of the name after the frames */
	__u8 pad[6];
	/* struct jp_frame frames[num_frames]; */
	/* JP_TRACE_F_BLOCKER: char blocker[blocker_len], then zeros up to len (16-aligned) */
};

/*
 * An event a JVMTI callback reported, on an ordinary Java thread (never a signal
 * handler): it reserves with the same CAS protocol as the handler and drops (counts
 * events_dropped) when the ring is full, it never waits for jprof. The frames come from
 * JVMTI GetStackTrace: jp_frame with bci = the jlocation (bytecode index), -1 native.
 */
enum jp_agent_event {
	JP_AEV_ALLOC = 1,	    /* SampledObjectAlloc: size, weight, class_id, tag */
	JP_AEV_FREE = 2,	    /* ObjectFree: tag only, no frames */
	JP_AEV_MONITOR_ENTER = 3,   /* MonitorContendedEnter: class_id of the monitor, stack */
	JP_AEV_MONITOR_ENTERED = 4, /* MonitorContendedEntered: time only (jprof pairs them) */
	/*
	 * a thread found blocked entering a monitor by the scan after a late attach (its
	 * Enter came before the agent): tid is that thread's, time the scan's; class_id, stack
	 */
	JP_AEV_MONITOR_BLOCKED = 5,
	JP_AEV_MAX
};

struct jp_event_rec {
	struct jp_rec_hdr h;
	__u64 time_ns;	  /* CLOCK_MONOTONIC in the callback */
	__u32 tid;	  /* gettid() in the JVM's namespace */
	__u16 kind;	  /* JP_AEV_* */
	__u16 pad;
	__u64 size;	  /* ALLOC: the sampled object's bytes */
	__u64 weight;	  /* ALLOC: estimated bytes the sample stands for (see events.c) */
	__u64 duration_ns; /* reserved: 0 (jprof pairs Enter and Entered by thread) */
	__u64 class_id;	  /* JP_DICT_CLASS_ID id of the object's / monitor's class, 0 unknown */
	__u64 tag;	  /* ALLOC/FREE: the object's tag (live tracking), 0 none */
	__s32 num_frames; /* >= 0 frames that follow (leaf first); < 0 no stack */
	__u32 pad2;
	/* struct jp_frame frames[num_frames]; */
};

/*
 * jp_trace_rec.flags: the frames come from the fallback walk: AGCT failed at the
 * interrupted frame (a stub, a prologue, VM code called from Java) and succeeded from a
 * caller's frame
 */
#define JP_TRACE_F_FALLBACK 1u
/*
 * The trace is in Unsafe.park and the thread's Thread.parkBlocker was an object of the
 * class after the frames: its JVM-internal name ("java/util/concurrent/locks/
 * ReentrantLock$NonfairSync"), 1..JP_BLOCKER_MAX bytes, not NUL-terminated. Untrusted.
 */
#define JP_TRACE_F_BLOCKER 2u
#define JP_BLOCKER_MAX	   128u /* a multiple of 16; longer names are not sent */

/* agent-side reasons for num_frames < 0 (AGCT's own codes are 0 .. -11) */
#define JP_ERR_NOT_JAVA_THREAD -100
#define JP_ERR_BUSY	       -101
#define JP_ERR_FAULT	       -102 /* the walk faulted; caught, the JVM runs on */

/* ------------------------------------------------------------------------ */
/*
 * The .dict file: struct jp_dict_hdr, then records {struct jp_dict_rec, body}, each
 * written with one write() to an O_APPEND fd. A reader may see a torn last record:
 * it stops there and retries later from the same offset. Strings are not
 * NUL-terminated; the body is packed (read it with memcpy, no alignment).
 */
struct jp_dict_hdr {
	__u32 magic;	/* JP_DICT_MAGIC */
	__u16 version;	/* JP_RING_VERSION */
	__u16 hdr_size; /* sizeof(struct jp_dict_hdr) */
	__u32 pid;
	__u32 pad;
};

struct jp_dict_rec {
	__u32 len;  /* bytes including this header, <= JP_DICT_REC_MAX */
	__u16 type; /* JP_DICT_* */
	__u16 pad;
};

enum jp_dict_type {
	/*
	 * class + its methods: u16 sig_len, u16 src_len, u32 n_methods, sig, src, then per
	 * method: u64 method_id, u16 name_len, u16 msig_len, u32 n_lines, name, msig,
	 * n_lines x {s32 start_bci, s32 line}. A big class may come in several records.
	 */
	JP_DICT_CLASS = 1,
	/*
	 * CompiledMethodLoad: u64 code_addr, u32 code_size, u32 n_pcs, u64 method_id, then per
	 * pc: u64 pc, u32 n_frames, n_frames x {u64 method_id, s32 bci}, innermost (inlined
	 * leaf) first, the root (compiled) method last. n_pcs 0: no inline info.
	 */
	JP_DICT_CODE_LOAD = 2,
	/* CompiledMethodUnload: u64 code_addr, u64 method_id */
	JP_DICT_CODE_UNLOAD = 3,
	/* DynamicCodeGenerated: u64 addr, u32 size, u16 name_len, u16 pad, name */
	JP_DICT_STUB = 4,
	/* thread: u32 tid, u16 name_len, u16 pad, name */
	JP_DICT_THREAD = 5,
	/* class id of events (v3), written once per class: u64 class_id, u16 sig_len, u16 pad, sig */
	JP_DICT_CLASS_ID = 6,
	JP_DICT_MAX
};

_Static_assert(sizeof(struct jp_ring_hdr) == 192 + 8 * 8 + 8 * JP_AGCT_CODES + 18 * 8, "ring header");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, blocker_named) == 448, "blocker counters");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, stub_tried) == 472, "stub counters");
_Static_assert(JP_BLOCKER_MAX % 16 == 0 && JP_BLOCKER_MAX <= 255, "blocker name");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, reader_ns) == 136, "reader stamps");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, want_alloc_interval) == 168, "want");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, pad3) + 20 == 192, "consumer line");
/* tests/e2e/agent_off.bats reads these at fixed offsets */
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, events) == 368, "events");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, events_ns) == 384, "events_ns");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, ev_on) == 424, "ev_on");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, ev_switches) == 432, "ev_switches");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, watcher_ns) == 440, "watcher_ns");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, handler) == 40, "handler");
_Static_assert(sizeof(struct jp_ring_hdr) <= JP_RING_HDR_SIZE, "ring header fits its page");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, head) == 64, "head on its own line");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, tail) == 128, "tail on its own line");
_Static_assert(__builtin_offsetof(struct jp_ring_hdr, traces) == 192, "counters");
_Static_assert(sizeof(struct jp_ring_hdr) <= JP_RING_WALK_OFF, "walk block after the header");
_Static_assert(JP_RING_WALK_OFF + sizeof(struct jp_ring_walk) <= JP_RING_HDR_SIZE, "walk block");
_Static_assert(sizeof(struct jp_ring_walk) == 152, "walk block size");
_Static_assert(sizeof(struct jp_rec_hdr) == 16, "record header");
_Static_assert(sizeof(struct jp_frame) == 16, "frame");
_Static_assert(sizeof(struct jp_trace_rec) == 48, "trace record");
_Static_assert(sizeof(struct jp_event_rec) == 80, "event record");
_Static_assert(sizeof(struct jp_dict_hdr) == 16, "dict header");
_Static_assert(sizeof(struct jp_dict_rec) == 8, "dict record header");

/* ------------------------------------------------------------------------ */
/*
 * The method trace (jprof trace; jvmagent/trace.c): jprof-<nspid>-<token>.trace next to
 * the ring, created by the agent when a trace starts (a new file per trace). A file of its
 * own, not the ring: the ring has one consumer, and a jprof record may read it while a
 * jprof trace runs; the trace's records are fixed-size (one slot each, no padding), and
 * its stop request, reader stamp and method table are its own.
 *
 *   [0, JP_MT_HDR_SIZE)                 struct jp_mt_hdr
 *   [JP_MT_HDR_SIZE, JP_MT_DATA_OFF)    JP_MT_METHODS_MAX x struct jp_mt_method (by id)
 *   [JP_MT_DATA_OFF, + n_slots * 32)    struct jp_mt_rec slots
 *
 * Records: many producers (the timing natives on Java threads), one consumer (jprof), the
 * ring's protocol with fixed slots: a producer reserves position pos by a CAS on head,
 * allowed while pos - tail < n_slots (else dropped++), fills slot pos % n_slots and
 * commits with seq = pos + 1 (release); the consumer reads the slot at tail when its seq
 * is tail + 1 (acquire), copies it, then advances tail (release). A call is recorded when
 * it ends (start and duration), only while the trace is on.
 *
 * jprof stamps reader_ns (CLOCK_MONOTONIC) every poll round; the agent stops the trace
 * (all classes back to their own bytes) when the stamp stood still JP_RING_READER_GONE_MS,
 * when stop_req is set, or over the overhead budget, then says why (stop_why) and sets
 * state JP_MT_STOPPED (release) last. Everything here is the JVM's: jprof checks it all.
 */
#define JP_MT_MAGIC	    0x4a504d54u /* "JPMT" */
#define JP_MT_VERSION	    2
#define JP_MT_HDR_SIZE	    4096u
#define JP_MT_METHODS_MAX   512u
#define JP_MT_DATA_OFF	    (JP_MT_HDR_SIZE + JP_MT_METHODS_MAX * 256u)
#define JP_MT_SLOTS_DEFAULT 32768u /* 1 MiB of records */
#define JP_MT_PATTERNS_MAX  1000u  /* bytes of the agent option trace=P1|P2|... */

enum jp_mt_state {
	JP_MT_STARTING = 1,
	JP_MT_ON = 2,
	JP_MT_STOPPED = 3,
};

enum jp_mt_stop {
	JP_MT_STOP_REQUESTED = 1, /* stop_req */
	JP_MT_STOP_READER_GONE = 2,
	JP_MT_STOP_OVERHEAD = 3,  /* the measured per-call cost times the call rate over budget */
	JP_MT_STOP_VM_DEATH = 4,
	JP_MT_STOP_REPLACED = 5,  /* another trace started */
};

struct jp_mt_hdr {
	__u32 magic;   /* JP_MT_MAGIC */
	__u16 version; /* JP_MT_VERSION */
	__u16 hdr_size;
	__u32 n_slots;	 /* a power of two */
	__u32 state;	 /* JP_MT_* (release store) */
	__u32 stop_why;	 /* JP_MT_STOP_* once stopped */
	__u32 n_methods; /* method table entries in use (release store after the entry) */
	__u64 start_ns;	 /* CLOCK_MONOTONIC when the trace went on */
	__u64 stop_ns;	 /* ... and off */
	/* slow calls' stacks (jprof trace --slow): the regions after the slots */
	__u32 stacks_off; /* file offset of n_stacks struct jp_mt_stack */
	__u32 n_stacks;
	__u32 names_off; /* file offset of n_names struct jp_mt_name: the stacks' methods */
	__u32 n_names;
	__u64 slow_ns; /* calls at least this long get their stack (0: none) */
	/* 64: producers */
	__u64 head;
	__u8 pad1[56];
	/* 128: written by jprof */
	__u64 tail;
	__u64 reader_ns;
	__u32 stop_req;
	__u8 pad2[44];
	/* 192: counters (relaxed atomic adds by the agent) */
	__u64 dropped;		/* calls not recorded: no free slot */
	__u64 lost_depth;	/* calls not timed: deeper than the per-thread stack */
	__u64 unmatched;	/* exits without their entry (a call begun before the trace) */
	__u64 classes_rewritten;/* class loads and retransforms that got rewritten bytes */
	__u64 classes_failed;	/* class files the rewriter could not read (left unchanged) */
	__u64 retransform_failed; /* RetransformClasses errors (the class kept its code) */
	__u64 cost_ns;		/* measured cost of one timed call (enter + leave), ns */
	__u64 calls_per_s;	/* the call rate the budget check saw last */
	__u64 stacks_used;	/* stack entries taken (may pass n_stacks: those were dropped) */
	__u64 names_used;	/* name entries filled (release store after the entry) */
};

#define JP_MT_M_TRACED	1u /* rewritten at least once */
#define JP_MT_M_REFUSED 2u /* left as it was: why says why */

/* one matched method; its index is the id the rewritten code passes */
struct jp_mt_method {
	__u32 flags;	/* JP_MT_M_* */
	__u16 name_len; /* bytes of name: "pkg.Class.method(desc)" */
	__u16 why_len;
	char name[184];
	char why[64];
};

struct jp_mt_rec {
	__u64 seq;	/* position + 1: commit mark (store-release last) */
	__u64 start_ns; /* CLOCK_MONOTONIC at entry */
	__u64 dur_ns;
	__u32 tid;	/* gettid() in the JVM's namespace */
	__u16 method;	/* id: the method table's index */
	__u8 thrown;	/* 1: ended by an exception */
	__u8 pad;
};

#define JP_MT_STACKS	    256u
#define JP_MT_STACK_DEPTH   24u
#define JP_MT_NAMES	    2048u

#define JP_MT_ARGS	    4u

/* --args: an argument of a slow call (kind: the agent's JPA_TARG_*, 1 int .. 6 null String) */
struct jp_mt_arg {
	__u8 pos;  /* its position among the method's arguments */
	__u8 kind; /* 1 int, 2 long, 3 float (bits in the low 32), 4 double, 5 String, 6 null */
	__u8 pad[6];
	__u64 val;    /* the bits; a String's length in chars */
	char str[16]; /* a String's first chars, printable ASCII or '?', not terminated */
};

/*
 * The Java stack of a call at least slow_ns long, taken at its end by the thread itself
 * (JVMTI GetStackTrace, the traced method first, its callers after it); jprof finds it by
 * (tid, start_ns, method). ready is stored (release) last. With --args, its first arguments.
 */
struct jp_mt_stack {
	__u64 start_ns;
	__u32 tid;
	__u16 method;
	__u16 n_frames;
	__u32 ready;
	__u32 pad;
	struct {
		__u64 method_id; /* jmethodID: its name in the names region */
		__s32 bci;
		__u32 pad;
	} frames[JP_MT_STACK_DEPTH];
	__u32 n_args;
	__u32 pad2;
	struct jp_mt_arg args[JP_MT_ARGS];
};

/* a stack frame's method as "pkg.Class.method", named by the agent's watcher thread */
struct jp_mt_name {
	__u64 method_id;
	__u16 len;
	__u8 pad[6];
	char name[112];
};

_Static_assert(sizeof(struct jp_mt_arg) == 32, "mt arg");
_Static_assert(sizeof(struct jp_mt_stack) == 24 + 16 * JP_MT_STACK_DEPTH + 8 + 32 * JP_MT_ARGS,
	       "mt stack");
_Static_assert(sizeof(struct jp_mt_name) == 128, "mt name");
_Static_assert(__builtin_offsetof(struct jp_mt_hdr, head) == 64, "mt head");
_Static_assert(__builtin_offsetof(struct jp_mt_hdr, tail) == 128, "mt tail");
_Static_assert(__builtin_offsetof(struct jp_mt_hdr, dropped) == 192, "mt counters");
_Static_assert(sizeof(struct jp_mt_hdr) <= JP_MT_HDR_SIZE, "mt header");
_Static_assert(sizeof(struct jp_mt_method) == 256, "mt method");
_Static_assert(sizeof(struct jp_mt_rec) == 32, "mt record");

#endif /* JPROF_RING_H */

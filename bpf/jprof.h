/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* jprof.h: every struct and constant that crosses the kernel/user boundary. Fixed-width only. */
#ifndef JPROF_H
#define JPROF_H

#define JP_COMM_LEN	 16
#define JP_MAX_KSTACK	 64	/* kernel frames kept per sample */
#define JP_MAX_USTACK	 127	/* = default kernel.perf_event_max_stack */
#define JP_MAX_PIDS	 1024	/* -p targets */
#define JP_MAX_JVMS	 1024	/* JVMs with an agent */
#define JP_MAX_CGROUPS	 256	/* --cgroup/--container filter entries */
#define JP_CGROUP_LEVELS 8	/* distinct depths among those entries */
#define JP_RINGBUF_BYTES (8u << 20) /* the ring buffer's largest size (user space sizes it) */
#define JP_RINGBUF_MIN	 (1u << 20)

/* jp_sample.kind */
#define JP_EV_CPU     0
#define JP_EV_OFFCPU  1
#define JP_EV_SYSCALL 2
/* a process's last thread exited (jvms.bpf.c): pid and time only; the session keeps it */
#define JP_EV_EXIT    3
/* a process exec'd a new program (jvms.bpf.c): pid and time only; the session keeps it */
#define JP_EV_EXEC    4
/* the in-kernel counts (agg_counts) are filling: drain them now (a header alone) */
#define JP_EV_AGG_FILL 5

/* jp_sample.flags */
#define JP_SF_SIGNALED	 1u	/* a stack request signal was sent to the thread */
#define JP_SF_KERNEL_CTX 2u	/* sampled while in kernel mode */
#define JP_SF_OPEN	 4u	/* off-CPU: still blocked when the recording ended (user space) */
#define JP_SF_CPU_TAIL	 8u	/* cpu: at a thread's exit, its CPU time since its last sample */
#define JP_SF_RUNNABLE	 16u	/* off-CPU (-e wall): preempted: waiting for a CPU */
/*
 * cpu: not signalled because the thread's previous request is still pending (it has not
 * returned to user mode since: its Java stack is the one that request's trace will show)
 * or because it runs the agent's handler (blocked: the handler walks the instant it
 * interrupted, which is this sample's Java stack under the handler's frames).
 */
#define JP_SF_FOLLOWS	 32u
/*
 * with JP_SF_FOLLOWS: the signal is blocked: the thread runs the handler, or masks the
 * signal itself (it may then have run on): the join trusts it only with the agent's
 * handler on the sample's user stack
 */
#define JP_SF_IN_HANDLER 64u
/*
 * not signalled: the agent said this thread of a JVM is not a Java thread (a GC or
 * compiler thread: AGCT has nothing to walk there), see the native_threads map
 */
#define JP_SF_NATIVE_THREAD 128u
/* signalled, though in native_threads: the periodic re-ask (the join drops the entry if
 * the thread has become a Java thread) */
#define JP_SF_NATIVE_RECHECK 256u
/*
 * cpu, off-CPU (--java-walk bpf): BPF walked the whole Java stack (its frames follow the
 * user stack) and knew every interpreted frame's method; the join names them. Not
 * signalled, but for an off-CPU sample with JP_SF_SIGNALED too (-e lock: the agent's
 * trace brings the park's blocker; without a trace BPF's frames stand)
 */
#define JP_SF_JWALK 512u
/*
 * cpu, off-CPU: the Java frames after the user stack were walked from the thread's frame
 * anchor (its pc was outside the code cache: VM, native or kernel code; off-CPU: at the
 * blocking syscall's return): the user stack on top is native, down to the JVM's code,
 * where the Java frames take over
 */
#define JP_SF_ANCHOR 1024u
/*
 * cpu: BPF's walk found the interrupted pc in a compiled method's prologue and walked it
 * (its first Java frame is that method, its frame not made yet)
 */
#define JP_SF_PROLOGUE 2048u
/*
 * cpu: the first of the Java frames after the user stack is at a call (a return address:
 * walked from the frame anchor, or from below an interrupted stub), not an interrupted pc:
 * its scope is the call's own, not the next one after it
 */
#define JP_SF_AT_CALL 4096u
/*
 * cpu: outside the code cache in Java state (a leaf call into libjvm or the vDSO keeps no
 * anchor): the Java frames were found by the native frames' frame pointers
 */
#define JP_SF_FP_CHAIN 8192u
/*
 * cpu: not signalled: a JavaThread (checked) out of Java code with no last Java frame: no
 * Java frame on its stack (a compiler thread, a thread not in Java yet), what the agent
 * would answer; the join takes its native frames as they are
 */
#define JP_SF_NO_JAVA 16384u
/*
 * cpu: BPF's walk passed a stub by its rbp frame (an arraycopy or C1 runtime stub, called
 * from compiled code: see jwalk.bpf.h jw_stub_fp)
 */
#define JP_SF_STUB_FP 32768u
/* cpu: BPF's walk passed a method handle intrinsic at the top (no frame: jwalk.bpf.h) */
#define JP_SF_MH_INTRINSIC 65536u
/* cpu: BPF's walk passed a C2I adapter at the top to its compiled caller (jwalk.bpf.h) */
#define JP_SF_C2I (1u << 17)
/*
 * off-CPU: an interval user space opened at the recording's start for a thread asleep
 * since before it (offcpu__seed_blocked): BPF never saw it block, so its stack is the one
 * frame /proc gives, the user PC it sleeps at
 */
#define JP_SF_SEEDED (1u << 18)
/*
 * cpu, set by user space only: a count BPF aggregated (--aggregate, agg.bpf.h) replayed at
 * once as one record of count samples, read later than their records would have been
 */
#define JP_SF_COUNTED (1u << 31)

/* jp_stats indexes (per-CPU array): every drop is counted */
#define JP_STAT_SAMPLES	    0	/* perf_event hits that passed the filter */
#define JP_STAT_RB_DROPS    1	/* ring buffer full */
#define JP_STAT_KSTACK_ERR  2	/* bpf_get_stack(kernel) < 0 */
#define JP_STAT_USTACK_ERR  3	/* bpf_get_stack(user) < 0 */
#define JP_STAT_SIG_SENT    4	/* stack request signals sent */
#define JP_STAT_SIG_BUSY    5	/* bpf_send_signal_thread returned -EBUSY */
#define JP_STAT_SIG_ERR	    6	/* other bpf_send_signal_thread errors */
#define JP_STAT_FILTERED    7	/* samples not matching the pid or cgroup filter */
#define JP_STAT_OFFCPU	    8	/* off-CPU samples emitted */
#define JP_STAT_OFFCPU_LOST 9	/* off-CPU start records that could not be stored */
#define JP_STAT_SC_SLOW	    10	/* slow-syscall samples emitted */
#define JP_STAT_SC_AGG_FULL 11	/* syscall aggregate or errno map full: call not counted */
#define JP_STAT_SC_NOENTER  12	/* sys_exit without a recorded sys_enter (started mid-call) */
#define JP_STAT_IDLE	    13	/* cpu samples of the idle task: counted, not recorded */
#define JP_STAT_NO_HANDLER  14	/* no signal: the handler is not (or may stop being) the agent's */
#define JP_STAT_JVM_EXEC    15	/* jvms entries dropped because the process exec'ed */
#define JP_STAT_JVM_EXIT    16	/* jvms entries dropped because the process exited */
#define JP_STAT_SIG_QUEUED  17	/* no signal: the thread has one pending or is in the handler */
#define JP_STAT_CPU_NOPREV  18	/* cpu: thread's earlier runtime unknown: the sample weighs a period */
#define JP_STAT_CPU_NEW	    19	/* cpu: first sample of a thread started since the start */
#define JP_STAT_CPU_TAIL    20	/* cpu: thread exits with CPU time after their last sample */
/*
 * a switch the sched_switch tracepoint did not report (seen on this machine's kernel for
 * the threads of one process: a thread switched out twice with no switch-in between):
 * the on-CPU and off-CPU time of the unseen stretch come from the scheduler's runtime
 */
#define JP_STAT_SWITCH_MISSED 21
#define JP_STAT_NATIVE_SKIP   22 /* no signal: a JVM thread known not to be a Java thread */
#define JP_STAT_EXIT_LOST     23 /* process exits/execs not told to user space: ring full */
/* cpu: samples of a JVM BPF walks without its agent (jvms entry with signo 0): no signal */
#define JP_STAT_WALK_ONLY     24
/* cpu: pc outside the code cache, the Java walk started from the thread's frame anchor */
#define JP_STAT_ANCHOR	      25
/* ... of those whose tid had no (or no matching) JavaThread in jthreads */
#define JP_STAT_ANCHOR_NOTHREAD 26
/* ... of those walked whole from the anchor */
#define JP_STAT_ANCHOR_WHOLE  27
/* ... of those not walked: not in a state that keeps the anchor, no anchor, a bad one */
#define JP_STAT_ANCHOR_IN_JAVA 28
#define JP_STAT_ANCHOR_NONE    29
#define JP_STAT_ANCHOR_BAD     30
#define JP_STAT_STUB_FP	       31 /* stubs passed by their rbp frame (JP_SF_STUB_FP) */
#define JP_STAT_STUB_FP_NOT    32 /* ... tried, and the frame did not check out */
/*
 * no signal: a thread in no entry of its JVM's thread list as stored whole in jthreads,
 * and no Java thread has been added to the list since (struct jp_jlist)
 */
#define JP_STAT_UNLISTED       33
/* I2C adapters at the interrupted pc passed to their interpreted caller (jwalk.bpf.h jw_i2c) */
#define JP_STAT_I2C	       34
/* --aggregate: cpu samples counted in agg_counts, no record of their own */
#define JP_STAT_AGG_COUNTED    35
/* ... full records that taught user space a new stack (jp_sample.stack_hash set) */
#define JP_STAT_AGG_SENT       36
/* ... samples that could be counted but went out as full records: agg_counts full */
#define JP_STAT_AGG_FULL       37
/* ... a new stack's record the ring refused: its mark cleared (the sample is in RB_DROPS) */
#define JP_STAT_AGG_UNMARK     38
/* C2I adapters at the interrupted pc passed to their compiled caller (jwalk.bpf.h jw_c2i) */
#define JP_STAT_C2I	       39
/* ... adapters at the interrupted pc passed neither way (signalled "in a stub") */
#define JP_STAT_C2I_NOT	       40
/*
 * off-CPU, a JVM thread blocked in a syscall whose Java stack BPF walks (offcpu.bpf.c: its
 * interval held from the switch-in to the syscall's return, walked there from the frame
 * anchor): emitted with BPF's Java frames, no signal
 */
#define JP_STAT_OFFCPU_JWALK 41
/* ... marked for the signal at the switch-in, as before: the JVM has no walk (no layout) */
#define JP_STAT_OFFCPU_NOWALK 42
/* ... walked, and the walk could not give the stack (then signalled, as before): */
#define JP_STAT_OFFCPU_WALK_NOTHREAD 43 /* the tid has no (checked) JavaThread in jthreads */
#define JP_STAT_OFFCPU_WALK_UNNAMED  44 /* whole, but a Method* not known (or --java-walk check) */
#define JP_STAT_OFFCPU_WALK_FAILED   45 /* any other reason (jp_sample.jstack_err says which) */
/* ... walked, and signalled all the same for the agent's park blocker (-e lock) */
#define JP_STAT_OFFCPU_PARK_SIG 46
/*
 * ... held intervals emitted before their syscall returned: the thread blocked again in
 * it (walked at that switch-out, never signalled) or exited in it (not walked)
 */
#define JP_STAT_OFFCPU_HELD_EARLY 47
/* ... walked: a JavaThread with no last Java frame (no Java frame to ask for: not signalled) */
#define JP_STAT_OFFCPU_WALK_NOJAVA 48
/*
 * ... of a thread in no jthreads entry, found at the end of its JVM's current thread list
 * (a thread started since user space read it: JP_JTHREADS_TMPL) and walked
 */
#define JP_STAT_OFFCPU_LIST_TAIL 49
/*
 * an interpreted method's frame at the interrupted pc not whole yet (its entry, between
 * `push rbp` and the last fixed slot): passed to its caller, as the agent's walk does
 */
#define JP_STAT_INTERP_ENTRY 50
/*
 * cpu: a sample of a thread past its exit's tail (PF_EXITING, its entry gone): weighs
 * nothing, as the tail took its time; as a new thread it would weigh all its runtime again
 */
#define JP_STAT_CPU_EXITED 51
/*
 * a compiled frame at the interrupted pc with one word pushed in its body (String.compareTo's
 * intrinsic keeps the length difference there): its return address found one word up
 */
#define JP_STAT_JW_PUSHED 52
#define JP_STAT_MAX	  53

/*
 * native_threads map: tid -> a thread of a JVM that the agent answered "not a Java
 * thread" (user space adds it from that answer). Its samples are not signalled, except
 * every JP_NATIVE_RECHECK-th, which asks again (JP_SF_NATIVE_RECHECK): a native thread
 * may attach to the JVM later (JNI); user space deletes the entry when the answer is a
 * Java thread. Entries of exiting threads are deleted at exit, before the tid can be
 * reused.
 */
#define JP_MAX_NATIVE_THREADS 8192
#define JP_NATIVE_RECHECK     64u
struct jp_native_thread {
	__u32 skips;  /* samples not signalled since the answer */
	/*
	 * 1: found in no entry of the JVM's thread list, which user space reads again (it
	 * deletes the entry if the thread attaches): never re-asked
	 */
	__u32 listed;
};

/*
 * One record per sample in the ring buffer, followed by kstack_len + ustack_len
 * __u64 addresses (kernel frames first, leaf first). Records are variable-sized.
 */
struct jp_sample {
	__u64 time_ns;	 /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 weight;	 /* ns: CPU time since the thread's last sample (cpu), blocked, call */
	__u64 cgroup_id; /* cgroup v2 id */
	union {
		/*
		 * --aggregate: the hash this sample's identity (everything but time, weight
		 * and cpu) is counted under from now on (agg_counts): user space keeps the
		 * record to replay the counts with; 0: none
		 */
		__u64 stack_hash;
		/*
		 * user space, with JP_SF_COUNTED: how many samples this replayed count stands
		 * for (their weights summed in weight, their time the slot's first)
		 */
		__u64 count;
	};
	__u32 pid;	 /* tgid, init namespace */
	__u32 tid;
	__u32 kind;	 /* JP_EV_* */
	__u32 flags;	 /* JP_SF_* */
	__u32 kstack_len;
	__u32 ustack_len;
	__s32 kstack_err; /* < 0: -errno from bpf_get_stack */
	__s32 ustack_err;
	__s32 sig_err;	/* bpf_send_signal_thread result when JP_SF_SIGNALED */
	__u32 cpu;
	__s32 syscall_nr; /* JP_EV_SYSCALL (and off-CPU in a syscall): the call; -1 otherwise */
	__u16 jstack_len; /* struct jp_jframe after the user stack (the BPF Java walk) */
	__s16 jstack_err; /* JP_JW_*: how that walk ended; 0: not walked */
	char comm[JP_COMM_LEN];	 /* thread name */
	char pcomm[JP_COMM_LEN]; /* process (group leader) name */
};

/*
 * The Java walk in BPF (cpu.bpf.c, --java-walk): a sample of a JVM thread whose user pc
 * is in the code cache walks the thread's Java frames itself, by the layout the agent read
 * from libjvm's VMStructs (struct jp_jwalk, checked by user space). The frames go out
 * raw, after the user stack: a compiled frame's pc (method 0), or an interpreted frame's
 * bcp and Method*. User space names them. In shadow mode the signal is still sent and the
 * join compares both walks.
 */
#define JP_MAX_JFRAMES 128
#define JP_JW_HEAPS    3

struct jp_jframe {
	__u64 pc;     /* compiled: the frame's pc; interpreted: its bci */
	__u64 method; /* interpreted: the Method*; 0: compiled */
};
/*
 * A Java native method's frame (AGCT's bci -3): compiled, its wrapper's pc with this bit
 * set; interpreted (the interpreter's native entry), JP_JFRAME_NATIVE_BCI as its bci
 */
#define JP_JFRAME_NATIVE     (1ull << 63)
#define JP_JFRAME_NATIVE_BCI 0xfffffffdull

/* java_walk (cpu.bpf.c rodata) */
#define JP_JWALK_OFF	0
#define JP_JWALK_SHADOW 1 /* walk, and signal as always: the join compares */
#define JP_JWALK_BPF	2 /* walk; signal only when the walk cannot name the stack */
#define JP_JWALK_CHECK	3 /* as bpf, and one in JP_JWALK_VERIFY_EVERY signals anyway */
/*
 * --java-walk check: one in this many walks that could do without still signals (compared).
 * A signal costs its thread ~6 us in BPF alone here (bpf_send_signal_thread from the timer
 * interrupt queues irq_work: a self-IPI), 20 us with the handler: 1 in 16 was a third of
 * H2's signals at 999 Hz; 1 in 64 still compares ~15 samples a second a CPU.
 */
#define JP_JWALK_VERIFY_EVERY 64u
#define JP_MAX_JW_METHODS     65536

/*
 * key of jw_methods: an interpreted frame's Method* the join has named (learned from a
 * sample both walks agreed on); a frame whose Method* is not there needs the signal
 */
struct jp_jw_method {
	__u32 tgid;
	__u32 pad;
	__u64 method;
};

/* jp_sample.jstack_err: > 0 the walk ended well, < 0 it gave up there */
#define JP_JW_ENTRY	    1	/* reached the first entry frame (call stub): the whole Java stack */
#define JP_JW_DEPTH	    2	/* JP_MAX_JFRAMES frames and more to go */
#define JP_JW_NOT_CODE	    -1	/* the user pc is outside the code cache (native, VM, libc) */
#define JP_JW_PROLOGUE	    -2	/* a compiled frame not set up yet */
#define JP_JW_STUB	    -3	/* a blob that is neither a method's code nor the interpreter */
#define JP_JW_READ	    -4	/* a read of the thread's memory failed */
#define JP_JW_BAD_FRAME	    -5	/* a frame that does not check out */
#define JP_JW_LOST	    -6	/* a return address outside the code cache, not the call stub */
#define JP_JW_NO_REGS	    -7	/* no user registers */
/* outside the code cache, the walk from the thread's frame anchor (jthreads) did not start: */
#define JP_JW_NO_THREAD	    -8	/* the tid has no known JavaThread (or not this one) */
#define JP_JW_IN_JAVA	    -9	/* the thread's state is not one that keeps its anchor */
#define JP_JW_NO_ANCHOR	    -10	/* no last Java frame: no Java frame on the stack */
#define JP_JW_BAD_ANCHOR    -11	/* an anchor that does not check out (sp out of range) */

struct jp_jwalk_heap {
	__u64 lo, hi; /* the heap's reserved range; segments count from lo */
	__u64 segmap; /* one byte per segment */
	__u32 log2_seg;
	__u32 pad;
};

/* value of the jwalk map, keyed by tgid, beside its jvms entry */
struct jp_jwalk {
	struct jp_jwalk_heap heaps[JP_JW_HEAPS];
	__u64 call_stub_ret; /* return address of the call stub: the entry frame */
	__u32 n_heaps;
	__u32 heap_block;    /* sizeof(HeapBlock): the blob follows it */
	/* offsets in CodeBlob, each < JP_JW_BLOB_HDR */
	__u16 blob_name, blob_frame_size, blob_frame_complete, blob_code;
	__u16 code_is_offset; /* blob_code: 1 an s32 offset from the blob, 0 a pointer */
	__u16 method_const;   /* Method::_constMethod */
	__u16 const_size;     /* sizeof(ConstMethod): the bytecodes follow it */
	__u16 const_code_size; /* ConstMethod::_code_size (u16) */
	__u16 frame_complete_size; /* 4: an int, 2: an int16_t */
	__u16 wrapper_anchor; /* JavaCallWrapper::_anchor; the anchor's fields: */
	__u16 anchor_sp, anchor_fp, anchor_pc;
	/*
	 * HeapBlock's _length (hb_length_size bytes: 4 or 8) and _used, offsets in the block
	 * of heap_block bytes before the blob; hb_length_size 0: the walk caches no blob
	 */
	__u16 hb_length, hb_used, hb_length_size;
};
#define JP_JW_BLOB_HDR 128 /* bytes of a CodeBlob read at once */
#define JP_JW_HEAP_BLOCK 16 /* the largest sizeof(HeapBlock) the walk checks (8 in JDK 25, 16 in 17) */

/*
 * jthreads map: tid -> the thread's JavaThread*, for the walk from the frame anchor when
 * the pc is outside the code cache. User space fills it from each walked JVM's thread list
 * read from outside (ThreadsSMRSupport::_java_thread_list, VMStructs) and deletes the
 * entries of threads gone from it; BPF deletes the entry of an exiting thread. Every
 * entry is checked at each use: its tgid, and the JavaThread's OSThread's tid read again.
 * The offsets (in JavaThread unless said) travel with each entry, so jp_jwalk (compared
 * with the agent's) keeps its layout.
 */
#define JP_MAX_JTHREADS 32768
struct jp_jthread {
	__u64 thread;	 /* JavaThread* */
	__u64 stack_hi;	 /* Thread::_stack_base (the highest address); 0 unknown */
	__u32 tgid;
	__u16 state;	 /* JavaThread::_thread_state (an int) */
	__u16 anchor;	 /* JavaThread::_anchor (jp_jwalk's anchor_* within it) */
	__u16 osthread;	 /* JavaThread::_osthread */
	__u16 os_tid;	 /* OSThread::_thread_id (an int) */
	/*
	 * what that _thread_id holds for this thread: its tid in the JVM's pid namespace (the
	 * key's, BPF's tid, for a JVM in ours; 0: the key's)
	 */
	__u32 jvm_tid;
};
/*
 * jthreads' entry of a JVM itself, keyed JP_JTHREADS_LIST | tgid (never a tid: tids are
 * below 2^22): user space stored every thread of the JVM's thread list in jthreads when
 * the list's last entry was the JavaThread last (OSThread tid last_tid). HotSpot appends
 * a thread that starts or attaches at the end of a new list and keeps the order when one
 * exits (ThreadsList::add_thread, remove_thread): while the current list still ends with
 * that thread, no thread was added since, so a tid in no jthreads entry is no JavaThread
 * (a GC worker started on demand): not signalled (JP_STAT_UNLISTED). The same size as
 * struct jp_jthread, whose map it shares.
 */
#define JP_JTHREADS_LIST (1u << 31)
/*
 * jthreads' template entry of a JVM, keyed JP_JTHREADS_TMPL | tgid, a struct jp_jthread
 * with thread 0: the JVM's JavaThread offsets, beside its JP_JTHREADS_LIST entry. With
 * both, BPF finds a thread that started since user space read the list (HotSpot appends
 * it at the end) by the OSThread tids of the list's last entries, and adds its entry
 * (offcpu.bpf.c jthread_from_list; the entry checked at each use as every entry is)
 */
#define JP_JTHREADS_TMPL (1u << 30)
struct jp_jlist {
	__u64 list_var;	 /* &ThreadsSMRSupport::_java_thread_list */
	__u64 last;	 /* JavaThread* of the list's last entry */
	__u32 tgid;
	__u16 length;	 /* ThreadsList::_length (a u32) */
	__u16 threads;	 /* ThreadsList::_threads (JavaThread*[]) */
	__u16 osthread;	 /* JavaThread::_osthread */
	__u16 os_tid;	 /* OSThread::_thread_id */
	__u32 last_tid;	 /* the last entry's _thread_id */
};

/* HotSpot's JavaThreadState values (globalDefinitions.hpp, the same since JDK 6) */
#define JP_TS_IN_NATIVE	      4
#define JP_TS_IN_NATIVE_TRANS 5
#define JP_TS_IN_VM	      6
#define JP_TS_IN_VM_TRANS     7
#define JP_TS_IN_JAVA	      8
#define JP_TS_BLOCKED	      10
#define JP_TS_BLOCKED_TRANS   11

/*
 * value of offcpu.bpf.c's offcpu_sys, keyed by tid: a JVM thread switched in inside a
 * blocking syscall, waiting for that syscall's return (sys_exit). JP_OX_SIGNAL: its sample
 * went out at the switch-in, flagged JP_SF_SIGNALED, and the signal is sent there.
 * JP_OX_WALK: its sample is held (the record stays in offcpu_start) and goes out there
 * with the Java frames BPF walks from the thread's frame anchor (a signal only when the
 * walk cannot). time_ns, weight and cpu: the held interval's (its switch-in).
 */
#define JP_OX_SIGNAL 1
#define JP_OX_WALK   2
struct jp_offcpu_exit {
	__u64 time_ns;
	__u64 weight;
	__u32 what; /* JP_OX_* */
	__u32 cpu;
};

/*
 * value of the jvms map, keyed by tgid: where to send a stack request. The process is
 * pinned by its group leader's start time: user space knows it in clock ticks
 * (/proc/<pid>/stat field 22); the first BPF program that matches the ticks stores the
 * exact start_boottime in start_ns, which every later match must equal.
 */
struct jp_jvm {
	__u64 start_ticks; /* USER_HZ (100) ticks since boot */
	__u64 start_ns;	   /* task->group_leader->start_boottime; 0 until pinned by BPF */
	__u64 handler;	   /* the agent's handler for signo: anything else installed, no signal */
	__u32 signo;	   /* 0: no agent (yet): walked by BPF (jwalk), never signalled */
	__u32 pad;
};

/*
 * value of the one-entry cgroup_cfg map: the depths (root = 0) of the --cgroup/--container
 * targets; a task is wanted when its ancestor at one of them is in the cgroups map.
 * nlevels 0: no cgroup filter.
 */
struct jp_cgroup_cfg {
	__u32 nlevels;
	__u32 levels[JP_CGROUP_LEVELS];
	__u32 pad;
};

/*
 * value of cpu_prev, keyed by tid: the thread's se.sum_exec_runtime at its last sample
 * (or when user space seeded it at the start). start_ns pins the thread
 * (task->start_time, CLOCK_MONOTONIC); 0 from user space: pinned by the first sample.
 */
struct jp_cpu_prev {
	__u64 runtime_ns;
	__u64 start_ns;
};

/*
 * value of wall_cpu, keyed by tid (-e wall): on-CPU time measured by the switch
 * timestamps, the clock of the off-CPU intervals, so a thread's parts tile its time.
 */
struct jp_wall_cpu {
	__u64 since_ns; /* on CPU since (switch-in or last sample); 0: off CPU */
	__u64 acc_ns;	/* on-CPU time not yet given to a sample */
	/*
	 * the scheduler's runtime of the thread at its last switch or sample: the on-CPU
	 * time of a stretch whose switch the tracepoint did not report (see
	 * JP_STAT_SWITCH_MISSED) is the runtime since
	 */
	__u64 rt_ns;
	__u32 pid; /* the thread's process, for the CPU time still here at the end */
	__u32 pad;
};

/*
 * In-kernel aggregation of cpu samples (--aggregate, maps.bpf.h agg_count): a sample that
 * needs nothing from the agent (not signalled, no wait for a trace) is hashed; the first
 * of a hash goes out as a full record carrying it (agg_sent marks it sent), later ones
 * only count in agg_counts, per thread and time slot. User space drains the closed slots
 * every poll round (a slot is closed two slots after it ends: no program still writes
 * it) and all of them at the end, after the sampler stopped.
 */
#define JP_AGG_SLOT_NS	   (100ull * 1000 * 1000) /* the timeline's and JFR's resolution */
#define JP_AGG_COUNTS_MAX  1024 /* agg_counts entries at least (user space sizes it) */
#define JP_AGG_SENT_MAX	   8192	 /* agg_sent (LRU): a mark lost sends its stack again */
#define JP_AGG_WORDS	   (JP_MAX_KSTACK + JP_MAX_USTACK + 2 * JP_MAX_JFRAMES)

struct jp_agg_key {
	__u64 hash;
	__u32 pid;
	__u32 tid;
	__u32 slot; /* (time_ns - agg_slot_phase_ns) / JP_AGG_SLOT_NS */
	__u32 pad;
};

struct jp_agg_val {
	__u64 count;
	__u64 weight_ns; /* the samples' weights summed */
	__u64 time_ns;	 /* the slot's first counted sample's */
};

/* syscall aggregation (syscalls.bpf.c), read by user/kernel/syscalls.c at the end */
#define JP_SC_HIST_BUCKETS 64 /* bucket b: latency in [2^b, 2^(b+1)) ns; bucket 0 also holds 0 */

/* key of sc_stats; tid is 0 unless per-thread aggregation was asked for */
/*
 * Set in jp_sc_key.nr and jp_sc_errno_key.nr: a call jprof caused in the thread (the
 * stack-request handler's gettid and rt_sigreturn, a call its signal interrupted).
 */
#define JP_SC_NR_JPROF 0x40000000

struct jp_sc_key {
	__u32 tgid;
	__u32 tid;
	__s32 nr;
	__u32 pad;
};

struct jp_sc_val {
	__u64 count;
	__u64 errors;	/* returns in [-4095, -1] */
	__u64 total_ns;
	__u64 max_ns;
	__u64 hist[JP_SC_HIST_BUCKETS];
	char comm[JP_COMM_LEN];	 /* thread name at the first call */
	char pcomm[JP_COMM_LEN]; /* process name at the first call */
	__u64 cgroup_id;	 /* cgroup v2 id at the first call (--per-container) */
};

/* key of sc_errnos (value: __u64 count) */
struct jp_sc_errno_key {
	__u32 tgid;
	__u32 tid;
	__s32 nr;
	__s32 err; /* positive errno */
};

#endif /* JPROF_H */

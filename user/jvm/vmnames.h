/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vmnames.h: a JVM's method names read from its memory, for the frames BPF walked while no
 * agent names them (before it came, or with none): an interpreted frame's Method*, a compiled
 * frame's pc (its nmethod's Method*), each named "pkg/Class.method" as the agent names it,
 * from Method -> ConstMethod -> ConstantPool -> Symbol. Read-only (process_vm_readv), cached,
 * within a budget per JVM; a read that fails is counted and names nothing.
 */
#ifndef JPROF_VMNAMES_H
#define JPROF_VMNAMES_H

#include <linux/types.h>

#include "jprof.h"
#include "jvm/vmstructs.h"

#define VMNAMES_MAX_METHODS 8192       /* Method*s named per JVM */
#define VMNAMES_MAX_BYTES   (1u << 20) /* of names held per JVM */
#define VMNAMES_MAX_SYMBOL  1024       /* a longer class or method name is not read */
/*
 * A compiled frame's inline chain: at most this deep (HotSpot's MaxInlineLevel is 15,
 * @ForceInline lambda forms go deeper); its debug info read per JVM at most (bytes)
 */
#define VMNAMES_MAX_CHAIN      64
#define VMNAMES_MAX_DBG_BYTES  (64u << 20)
#define VMNAMES_MAX_DBG_SAMPLE (64u << 10) /* ... for one sample's frames (vmnames__sample) */

struct vmnames;

struct vmnames_stats {
	__u64 methods, failed, over_budget, reads, bytes_read;
	/*
	 * compiled frames' inline chains read from their debug info (chains), frames so
	 * named inlined (inlined), chains that could not be read or did not check out, the
	 * frame named by its compiled method alone (dbg_failed; dbg_over: a budget; dbg_noscope:
	 * no scope recorded at or after the pc, as the agent's records name it too), and
	 * the bytes read for them (dbg_bytes, in bytes_read too) and the time (dbg_ns)
	 */
	__u64 chains, inlined, dbg_failed, dbg_over, dbg_noscope, dbg_bytes, dbg_ns;
	/*
	 * --java-walk shadow: BPF's walks named from memory against the agent's trace of the
	 * same sample (vmnames__compare): compared, the same names in the same order, the same
	 * but for the inlining at the interrupted pc, different, not compared (a frame not
	 * named); roots_same: the same with each compiled frame named by its compiled method
	 * alone (as before inlined frames were read)
	 */
	__u64 cmp, cmp_same, cmp_leaf, cmp_differ, cmp_unnamed, cmp_roots_same;
	/*
	 * ... their compiled frames (with their inlined methods) against the same frames named
	 * by the agent's code records (jvm_agent__pc_chain): compared, the same names
	 */
	__u64 cmp_frames, cmp_frames_same;
	/* stacks compared whose compiled frames the records know are all named the same */
	__u64 cmp_rec_same;
};

/* where a compiled frame's pc is (vmnames__frames) */
enum vmnames_at {
	VMN_AT_RET = 0, /* a return address: the scope recorded at it */
	VMN_AT_TOP,	/* the interrupted pc: the first scope recorded after it */
	VMN_ROOT,	/* its compiled method alone (a native wrapper, a frame in its prologue) */
};

/* reads n bytes of the JVM at addr into buf: 0, or -EFAULT */
typedef int (*vmnames_read_fn)(void *ctx, __u64 addr, void *buf, size_t n);

/* names of JVM pid (its layouts from vmstructs_read_pid); NULL when n is not ok, or no memory */
struct vmnames *vmnames__new(__u32 pid, const struct jp_jwalk *w, const struct vms_names *n);
/* the same over another reader (tests, fuzzing) */
struct vmnames *vmnames__new_reader(const struct jp_jwalk *w, const struct vms_names *n,
				    vmnames_read_fn rd, void *ctx);
void vmnames__free(struct vmnames *v); /* NULL-safe */
/*
 * A frame's method name ("pkg/Class.method"; valid as long as v), NULL when unknown: an
 * interpreted frame by its Method* (f->method), a compiled one by its pc
 */
const char *vmnames__frame(struct vmnames *v, const struct jp_jframe *f);
/*
 * A frame's methods, innermost first, into ret[] (at most cap; names valid as long as v):
 * an interpreted frame's method; a compiled frame's inline chain at its pc (as the agent's
 * code records and AsyncGetCallTrace find it), its compiled method last, or that method
 * alone when the debug info cannot be read (counted). Returns how many, 0: not named.
 */
int vmnames__frames(struct vmnames *v, const struct jp_jframe *f, enum vmnames_at at,
		    const char **ret, int cap);
/* a new sample's frames follow: its budget of debug info (VMNAMES_MAX_DBG_SAMPLE) anew */
void vmnames__sample(struct vmnames *v);
/*
 * --java-walk shadow: BPF's frames f of sample s named from memory (with their inlined
 * frames) against the agent's trace tr of the same sample, named by agent a; counted
 */
struct jvm_agent;
struct java_trace;
void vmnames__compare(struct vmnames *v, struct jvm_agent *a, const struct jp_sample *s,
		      const struct jp_jframe *f, const struct java_trace *tr);
void vmnames__stats(const struct vmnames *v, struct vmnames_stats *ret);

#endif /* JPROF_VMNAMES_H */

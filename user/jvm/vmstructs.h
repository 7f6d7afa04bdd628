/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vmstructs.h: the layout BPF's Java walk needs (struct jp_jwalk), read from outside the
 * JVM: libjvm.so's exported VMStructs symbols from the ELF file the JVM maps, the tables and
 * the statics they point to from the process's memory (process_vm_readv: read-only, never
 * mapped, bounded). The agent reads the same in-process (jvmagent/vmstructs.c jpa_vm_walk);
 * both go through jvm_walk_check.
 */
#ifndef JPROF_VMSTRUCTS_H
#define JPROF_VMSTRUCTS_H

#include <linux/types.h>
#include <stddef.h>

#include "jprof.h"

/* the exported symbols read, in this order (vmstructs_sym_names) */
enum vms_sym {
	VMS_STRUCTS = 0, /* gHotSpotVMStructs: a pointer to the table */
	VMS_S_TYPE,
	VMS_S_FIELD,
	VMS_S_TSTRING,
	VMS_S_STATIC,
	VMS_S_OFFSET,
	VMS_S_ADDRESS,
	VMS_S_STRIDE,
	VMS_TYPES, /* gHotSpotVMTypes */
	VMS_T_NAME,
	VMS_T_SIZE,
	VMS_T_STRIDE,
	VMS_SYM_MAX
};
extern const char *const vmstructs_sym_names[VMS_SYM_MAX];

/* reads n bytes of the JVM at addr into buf: 0, or -EFAULT (nothing partial is used) */
typedef int (*vms_read_fn)(void *ctx, __u64 addr, void *buf, size_t n);

/* one read of a batch: n bytes of the JVM at addr into buf */
struct vms_iov {
	__u64 addr;
	void *buf;
	size_t n;
};

/*
 * Reads v[0..n) in order, as process_vm_readv does in one syscall, stopping at the first
 * that fails: how many of the leading entries were read whole. The buffers of the others
 * may hold anything (the failed one may be read in part); the caller reads them again.
 */
typedef size_t (*vms_readv_fn)(void *ctx, const struct vms_iov *v, size_t n);

/*
 * Where a JVM's threads are (the walk from a thread's frame anchor, jprof.h jthreads):
 * &ThreadsSMRSupport::_java_thread_list, the current ThreadsList's _length (a u32) and
 * _threads (JavaThread*[]), each JavaThread's _osthread (OSThread::_thread_id: the tid),
 * _thread_state, _anchor and _stack_base (has_stack_base 0: not exported). ok false: not
 * all the others are known (no walk from the anchor).
 */
struct vms_threads {
	__u64 list_var;
	__u32 list_length, list_threads;
	__u32 osthread, os_tid, state, anchor, stack_base;
	int has_stack_base;
	int ok;
};

/*
 * Where a method's names are (Method -> ConstMethod -> ConstantPool -> Symbol), and a
 * compiled method's Method*: offsets, 0 not known (ok false: not all known). threads: what
 * the same tables say of the JVM's threads.
 */
/* a field of a compiled method: its offset and size in bytes (0: not known) */
struct vms_field {
	__u32 off, size;
};

/*
 * Where a compiled method's debug info is (vmnames_debug.c: its methods inlined at a pc):
 * the PcDesc table (its size, each PcDesc's _pc_offset and _scope_decode_offset), the
 * scopes data and the metadata. JDK 17-22 (layout VMS_DBG_OFFSETS): offsets from the
 * nmethod (_metadata_offset, _scopes_pcs_offset, _dependencies_offset) and
 * CompiledMethod::_scopes_data_begin; since JDK 23 (VMS_DBG_IMMUTABLE): nmethod's
 * _immutable_data with _immutable_data_size, _scopes_data_offset and _scopes_pcs_offset in
 * it, the metadata after the relocations in CodeBlob's _mutable_data (_relocation_size,
 * _mutable_data_size).
 */
enum { VMS_DBG_NONE = 0, VMS_DBG_OFFSETS, VMS_DBG_IMMUTABLE };
struct vms_debug {
	int layout;
	__u32 pcd_size;
	struct vms_field pcd_pc, pcd_scope;
	struct vms_field meta, pcs, deps, sd_begin;		  /* VMS_DBG_OFFSETS */
	struct vms_field imm, imm_size, sd, mut, mut_size, reloc; /* VMS_DBG_IMMUTABLE */
};

struct vms_names {
	__u32 cm_constants, cm_name_index, cp_holder, cp_size, klass_name;
	__u32 sym_length, sym_body, nm_method;
	int ok;
	struct vms_threads threads;
	struct vms_debug dbg; /* layout VMS_DBG_NONE: not all known (no inlined frames) */
};

/* one JavaThread of a JVM's thread list */
struct vms_thread {
	__u64 thread;	/* JavaThread* */
	__u64 stack_hi; /* its _stack_base, 0 unknown */
	__u32 tid;	/* as the JVM's OSThread says: the tid in its own pid namespace */
	__u32 host_tid; /* the same thread's tid in jprof's namespace: 0 here, the caller's to fill */
};

/* the most threads of one JVM read (jprof.h JP_MAX_JTHREADS for all) */
#define VMS_MAX_THREADS 32768

struct vms_stats {
	__u64 reads;   /* calls of the reader (pages) */
	__u64 bytes;   /* bytes read */
	__u64 entries; /* table entries looked at */
};

/*
 * Budgets: a table of more entries, or a read of more bytes, is refused (HotSpot's
 * tables have 2,000-3,000 entries; the layout reads about 150 KiB)
 */
#define VMS_MAX_ENTRIES 20000
#define VMS_MAX_BYTES	(4u << 20)

/*
 * The walk layout of a JVM whose exported symbols are at syms[] (runtime addresses, 0
 * absent), every read through rd (page by page, 4 KiB at a time). 0 and *ret (checked by
 * jvm_walk_check), -EAGAIN: the JVM is still starting (no code heaps or call stub yet: try
 * again), -ENOENT: a symbol or field missing, -EPROTO: a table out of bounds, -E2BIG: a
 * budget, -EFAULT: a read failed. *st counts what was read (also on failure).
 */
int vmstructs_layout(const __u64 *syms, vms_read_fn rd, void *ctx, struct jp_jwalk *ret,
		     struct vms_names *ret_names, struct vms_stats *st);

/*
 * The threads of the JVM whose layout says t, into ret[] (at most cap): every read through
 * rd, nothing trusted (a list freed while it is read gives garbage: BPF checks each entry
 * again at each use). *ret_list: the ThreadsList read (HotSpot makes a new one for every
 * thread start and exit: the same pointer, nothing changed, prev_list given: returns
 * -EALREADY without reading on). 0 and *ret_n, -EAGAIN no list yet, -E2BIG more threads
 * than cap or VMS_MAX_THREADS, -EFAULT the list is unreadable, -EINVAL t not ok. Threads
 * whose own reads fail are left out (*ret_skipped counts them).
 */
int vmstructs_threads(const struct vms_threads *t, vms_read_fn rd, void *ctx, __u64 prev_list,
		      struct vms_thread *ret, size_t cap, size_t *ret_n, __u64 *ret_list,
		      size_t *ret_skipped);
/*
 * The same, the reads of all threads' fields in batches through rdv (NULL: one by one
 * through rd), 128 threads at a time: their array slots in one read, their _osthread and
 * _stack_base in one batch, their tids in another. An entry a batch did not read whole is
 * read again alone through rd, the ones after it in the next batch: the same results as
 * vmstructs_threads for the same memory.
 */
int vmstructs_threads_v(const struct vms_threads *t, vms_read_fn rd, vms_readv_fn rdv, void *ctx,
			__u64 prev_list, struct vms_thread *ret, size_t cap, size_t *ret_n,
			__u64 *ret_list, size_t *ret_skipped);
/*
 * The same for process pid, through process_vm_readv: a batch is one syscall, so a list
 * of up to 128 threads costs 6 syscalls (one by one: 4 a thread)
 */
int vmstructs_threads_pid(__u32 pid, const struct vms_threads *t, __u64 prev_list,
			  struct vms_thread *ret, size_t cap, size_t *ret_n, __u64 *ret_list,
			  size_t *ret_skipped);

/*
 * The same for process pid: its libjvm.so mapping (/proc/pid/maps), the ELF file through
 * /proc/pid/map_files (the very file mapped, whatever its path says), its memory through
 * process_vm_readv. Errors as above, -ESRCH: gone, -ENOEXEC: no libjvm.so mapped.
 */
int vmstructs_read_pid(__u32 pid, struct jp_jwalk *ret, struct vms_names *ret_names,
		       struct vms_stats *st);

#endif /* JPROF_VMSTRUCTS_H */

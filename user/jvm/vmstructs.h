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

/*
 * Where a method's names are (Method -> ConstMethod -> ConstantPool -> Symbol), and a
 * compiled method's Method*: offsets, 0 not known (ok false: not all known)
 */
struct vms_names {
	__u32 cm_constants, cm_name_index, cp_holder, cp_size, klass_name;
	__u32 sym_length, sym_body, nm_method;
	int ok;
};

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
 * The same for process pid: its libjvm.so mapping (/proc/pid/maps), the ELF file through
 * /proc/pid/map_files (the very file mapped, whatever its path says), its memory through
 * process_vm_readv. Errors as above, -ESRCH: gone, -ENOEXEC: no libjvm.so mapped.
 */
int vmstructs_read_pid(__u32 pid, struct jp_jwalk *ret, struct vms_names *ret_names,
		       struct vms_stats *st);

#endif /* JPROF_VMSTRUCTS_H */

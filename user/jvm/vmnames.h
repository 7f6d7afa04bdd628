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

struct vmnames;

struct vmnames_stats {
	__u64 methods, failed, over_budget, reads, bytes_read;
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
void vmnames__stats(const struct vmnames *v, struct vmnames_stats *ret);

#endif /* JPROF_VMNAMES_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vmnames_int.h: what vmnames.c (names), vmnames_debug.c (compiled frames' inline chains)
 * and vmnames_cmp.c (the shadow comparison) share; nothing else includes it but the tests.
 */
#ifndef JPROF_VMNAMES_INT_H
#define JPROF_VMNAMES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "jvm/vmnames.h"

struct vn_ent {
	__u64 key; /* Method* (0: empty) */
	__u32 off; /* the name in pool; UINT32_MAX: could not be read */
};

/* a compiled method's debug info: where it is in the JVM, as its nmethod says (checked) */
struct vn_nm {
	__u64 blob;	     /* the nmethod (0: empty slot) */
	__u64 method;	     /* its Method* */
	__u64 code;	     /* its code's first byte: PcDesc pc offsets are from there */
	__u64 pcs, sd, meta; /* PcDesc table, scopes data, metadata (Method* slots) */
	__u32 n_pcs, sd_len, n_meta;
	int ok; /* 1: all the above checked out; 0: names its method alone */
};

/* a chain read: key pc | at << 62; n Method*s in the pool from first (n 0: not readable) */
struct vn_chain {
	__u64 key;
	__u32 first;
	__u16 n;
	__u16 gen; /* the pool's generation it was written in: older ones are stale */
};

#define VN_NM_SLOTS    256
#define VN_CHAIN_SLOTS 4096
#define VN_CHAIN_POOL  32768 /* Method*s of all chains held; full: every chain forgotten */
#define VN_CMP_MAX     2048  /* Java frames of a sample compared, inlined ones included */

struct vmnames {
	__u32 pid;
	vmnames_read_fn rd;
	void *ctx;
	struct jp_jwalk w;
	struct vms_names l;
	struct vn_ent *tab; /* 2 x VMNAMES_MAX_METHODS slots */
	size_t n;
	char *pool;
	size_t used;
	struct {
		__u64 pc, m, blob;
	} pcs[1024]; /* compiled pcs seen, direct-mapped: their nmethod and its Method* */
	/* compiled methods' debug info and the inline chains read from it */
	struct vn_nm nms[VN_NM_SLOTS];
	struct vn_chain *chains; /* VN_CHAIN_SLOTS */
	__u64 *cpool;		 /* VN_CHAIN_POOL */
	__u32 cused;
	__u16 cgen;
	/* vmnames__compare: a sample's names, with inlined frames and without */
	const char *cmp_all[VN_CMP_MAX], *cmp_roots[VN_CMP_MAX];
	/* UNSIGNED5's excluded bytes: 0 before JDK 20, 1 since; -1 not known yet */
	int u5x;
	__u32 dbg_sample; /* debug info read for this sample (vmnames__sample) */
	struct vmnames_stats st;
};

/* reads through v's reader, counted: 0 or -EFAULT */
int vn_read(struct vmnames *v, __u64 addr, void *buf, size_t n);
/* "pkg/Class.method" of Method* m, NULL when it cannot be read (cached) */
const char *vn_method_name(struct vmnames *v, __u64 m);
/* the nmethod holding compiled pc (0: none) and its Method* (*ret_m, 0 unknown) */
__u64 vn_pc_blob(struct vmnames *v, __u64 pc, __u64 *ret_m);

/*
 * The inline chain of nmethod blob at pc (at: VMN_AT_TOP or VMN_AT_RET) into ret[] (at
 * most cap Method*s, innermost first, the compiled method last): how many, or -errno
 * (-ENOENT no debug info there, -ENODATA no scope recorded at or after pc, -EPROTO it does
 * not check out, -E2BIG a budget)
 */
int vn_chain(struct vmnames *v, __u64 blob, __u64 pc, enum vmnames_at at, __u64 *ret, int cap);

/*
 * JPROF_SHADOW_DUMP's view of nmethod blob's PcDescs around pc (those with a scope and
 * those without): "offset/scope" each, the first at or after pc marked '>'
 */
void vn_pcdesc_show(struct vmnames *v, __u64 blob, __u64 pc, FILE *out);

/* pure decoding (fuzzed) -------------------------------------------------------- */

/*
 * One UNSIGNED5 value (HotSpot's CompressedReadStream) of b[*pos..len), x the excluded
 * bytes (0 or 1): 0 and *ret, *pos past it; -EPROTO cut short or an excluded byte
 */
int vn_u5(const __u8 *b, size_t len, size_t *pos, unsigned int x, __u32 *ret);

/* a scope's header (DebugInfoReadStream): where its caller's is, its method's index, bci */
struct vn_scope {
	__u32 sender; /* decode offset of the caller's scope, 0: none (the compiled method) */
	__u32 midx;   /* metadata index (1-based) */
	__s32 bci;    /* -1: the method's entry */
};
/*
 * The scope whose header is b[0..len) (the bytes at its decode offset off); checked: its
 * caller's before it (sender < off: a chain ends), an index and a bci in range. 0 or -EPROTO
 */
int vn_scope_decode(const __u8 *b, size_t len, __u32 off, unsigned int x, struct vn_scope *ret);

/*
 * In a window of n PcDescs (stride bytes each, their pc offset at pc_at and scope decode
 * offset at scope_at), the first whose pc offset is >= target and that has a scope: its
 * index, -ENOENT none in the window
 */
int vn_pcdesc_find(const __u8 *win, size_t n, size_t stride, size_t pc_at, size_t scope_at,
		   __s64 target, __u32 *ret_scope);

#endif /* JPROF_VMNAMES_INT_H */

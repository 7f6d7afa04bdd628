/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vms_fixture.h: a JVM's memory as jvm/vmstructs.c reads it, built in a buffer: the exported
 * symbols' values, gHotSpotVMStructs and gHotSpotVMTypes with their strings, one code heap
 * and the statics (JDK 17's layout, offsets made up). For test_vmstructs and fuzz_vmstructs.
 */
#ifndef JPROF_VMS_FIXTURE_H
#define JPROF_VMS_FIXTURE_H

#include <errno.h>
#include <string.h>

#include "jvm/vmstructs.h"

#define VF_BASE	     0x7f0000000000ull
#define VF_SIZE	     (256u << 10)
#define VF_STRUCTS   0x1000u  /* the table of fields */
#define VF_TYPES     0x9000u  /* the table of types */
#define VF_STRINGS   0x10000u /* names */
#define VF_GA	     0x20000u /* GrowableArray<CodeHeap*> */
#define VF_GA_DATA   0x20100u
#define VF_HEAP	     0x20200u /* one CodeHeap */
#define VF_STATICS   0x30000u /* CodeCache::_heaps, StubRoutines::_call_stub_return_address */
#define VF_HEAP_LO   0x7f1000000000ull
#define VF_HEAP_HI   (VF_HEAP_LO + (64u << 20))
#define VF_SEGMAP    0x7f2000000000ull
#define VF_STUB_RET  0x7f1000abc123ull
#define VF_S_STRIDE  48u
#define VF_T_STRIDE  40u

struct vf {
	unsigned char mem[VF_SIZE];
	size_t strings, nstructs, ntypes;
	__u64 syms[VMS_SYM_MAX];
	size_t limit; /* reads past this offset fail (0: the whole buffer) */
};

static inline void vf_put(struct vf *v, size_t off, __u64 x)
{
	memcpy(v->mem + off, &x, sizeof(x));
}

static inline __u64 vf_str(struct vf *v, const char *s)
{
	size_t n = strlen(s) + 1, at = VF_STRINGS + v->strings;

	memcpy(v->mem + at, s, n);
	v->strings += n;
	return VF_BASE + at;
}

/* one entry {typeName, fieldName, typeString, isStatic, offset, address} */
static inline void vf_field(struct vf *v, const char *type, const char *field, const char *tstr,
			    int is_static, __u64 off, __u64 addr)
{
	size_t e = VF_STRUCTS + v->nstructs++ * VF_S_STRIDE;
	__s32 st = is_static;

	vf_put(v, e, vf_str(v, type));
	vf_put(v, e + 8, vf_str(v, field));
	vf_put(v, e + 16, tstr ? vf_str(v, tstr) : 0);
	memcpy(v->mem + e + 24, &st, sizeof(st));
	vf_put(v, e + 32, off);
	vf_put(v, e + 40, addr);
}

static inline void vf_type(struct vf *v, const char *name, __u64 size)
{
	size_t e = VF_TYPES + v->ntypes++ * VF_T_STRIDE;

	vf_put(v, e, vf_str(v, name));
	vf_put(v, e + 32, size);
}

/*
 * A ThreadsList at VF_TL of n (at most 4) JavaThreads at VF_JT + i * 0x1000, tids
 * VF_TID0 + i, their stacks' bases VF_STACK0 + i * 1 MiB; the static points to it
 */
#define VF_TL	  0x31000u
#define VF_JT	  0x32000u
#define VF_OS	  0x36000u
#define VF_TID0	  101u
#define VF_STACK0 0x7f3000000000ull
static inline void vf_threads(struct vf *v, unsigned int n)
{
	vf_put(v, VF_STATICS + 16, VF_BASE + VF_TL);
	vf_put(v, VF_TL + 0x8, n); /* _length (a uint; the next 4 bytes 0) */
	vf_put(v, VF_TL + 0x10, VF_BASE + VF_TL + 0x100);
	for (unsigned int i = 0; i < n && i < 4; i++) {
		__s32 tid = (__s32)(VF_TID0 + i);

		vf_put(v, VF_TL + 0x100 + 8 * i, VF_BASE + VF_JT + 0x1000 * i);
		vf_put(v, VF_JT + 0x1000 * i + 0x230, VF_BASE + VF_OS + 0x100 * i);
		vf_put(v, VF_JT + 0x1000 * i + 0x250, VF_STACK0 + (1u << 20) * (__u64)i);
		memcpy(v->mem + VF_OS + 0x100 * i + 0xd0, &tid, sizeof(tid));
	}
}

static inline void vf_build(struct vf *v)
{
	static const __u64 vals[VMS_SYM_MAX] = {
		[VMS_STRUCTS] = VF_BASE + VF_STRUCTS, [VMS_S_TYPE] = 0, [VMS_S_FIELD] = 8,
		[VMS_S_TSTRING] = 16, [VMS_S_STATIC] = 24, [VMS_S_OFFSET] = 32,
		[VMS_S_ADDRESS] = 40, [VMS_S_STRIDE] = VF_S_STRIDE,
		[VMS_TYPES] = VF_BASE + VF_TYPES, [VMS_T_NAME] = 0, [VMS_T_SIZE] = 32,
		[VMS_T_STRIDE] = VF_T_STRIDE,
	};

	memset(v, 0, sizeof(*v));
	for (int k = 0; k < VMS_SYM_MAX; k++) {
		v->syms[k] = VF_BASE + 8u * (unsigned int)k;
		vf_put(v, 8u * (unsigned int)k, vals[k]);
	}
	vf_field(v, "JavaThread", "_anchor", "JavaFrameAnchor", 0, 0x2a0, 0);
	vf_field(v, "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0,
		 VF_BASE + VF_STATICS);
	vf_field(v, "GrowableArrayBase", "_len", "int", 0, 0, 0);
	vf_field(v, "GrowableArray<int>", "_data", "int*", 0, 8, 0);
	vf_field(v, "CodeHeap", "_memory", "VirtualSpace", 0, 0x10, 0);
	vf_field(v, "CodeHeap", "_segmap", "VirtualSpace", 0, 0x40, 0);
	vf_field(v, "CodeHeap", "_log2_segment_size", "int", 0, 0x80, 0);
	vf_field(v, "VirtualSpace", "_low", "char*", 0, 0x8, 0);
	vf_field(v, "VirtualSpace", "_high_boundary", "char*", 0, 0x18, 0);
	vf_field(v, "CodeBlob", "_name", "const char*", 0, 0x8, 0);
	vf_field(v, "CodeBlob", "_frame_complete_offset", "int", 0, 0x24, 0);
	vf_field(v, "CodeBlob", "_frame_size", "int", 0, 0x28, 0);
	vf_field(v, "CodeBlob", "_code_begin", "address", 0, 0x30, 0);
	vf_field(v, "Method", "_constMethod", "ConstMethod*", 0, 0x8, 0);
	vf_field(v, "ConstMethod", "_code_size", "u2", 0, 0x2c, 0);
	vf_field(v, "JavaCallWrapper", "_anchor", "JavaFrameAnchor", 0, 0x10, 0);
	vf_field(v, "JavaFrameAnchor", "_last_Java_sp", "intptr_t*", 0, 0, 0);
	vf_field(v, "JavaFrameAnchor", "_last_Java_pc", "address", 0, 8, 0);
	vf_field(v, "JavaFrameAnchor", "_last_Java_fp", "intptr_t*", 0, 0x10, 0);
	vf_field(v, "HeapBlock", "_header", "HeapBlock::Header", 0, 0, 0);
	vf_field(v, "HeapBlock::Header", "_length", "size_t", 0, 0, 0);
	vf_field(v, "HeapBlock::Header", "_used", "bool", 0, 8, 0);
	vf_field(v, "StubRoutines", "_call_stub_return_address", "address", 1, 0,
		 VF_BASE + VF_STATICS + 8);
	/* a type name longer than any the reader looks at: skipped */
	vf_field(v, "AVeryLongTypeNameThatNoLayoutNeedsAtAllAndThatGoesOnAndOnForMoreThanEightyBytes",
		 "_x", "int", 0, 4, 0);
	/* where names are (vmnames) */
	vf_field(v, "ConstMethod", "_constants", "ConstantPool*", 0, 0x8, 0);
	vf_field(v, "ConstMethod", "_name_index", "u2", 0, 0x22, 0);
	vf_field(v, "ConstantPool", "_pool_holder", "InstanceKlass*", 0, 0x10, 0);
	vf_field(v, "Klass", "_name", "Symbol*", 0, 0x10, 0);
	vf_field(v, "Symbol", "_length", "u2", 0, 4, 0);
	vf_field(v, "Symbol", "_body", "u1", 0, 6, 0);
	vf_field(v, "CompiledMethod", "_method", "Method*", 0, 0x48, 0);
	/* a compiled method's debug info (vmnames_debug.c), JDK 17's way */
	vf_field(v, "CompiledMethod", "_scopes_data_begin", "address", 0, 0x50, 0);
	vf_field(v, "nmethod", "_metadata_offset", "int", 0, 0x60, 0);
	vf_field(v, "nmethod", "_scopes_pcs_offset", "int", 0, 0x64, 0);
	vf_field(v, "nmethod", "_dependencies_offset", "int", 0, 0x68, 0);
	vf_field(v, "PcDesc", "_pc_offset", "int", 0, 0, 0);
	vf_field(v, "PcDesc", "_scope_decode_offset", "int", 0, 4, 0);
	/* the thread list (the walk from a thread's frame anchor) */
	vf_field(v, "ThreadsSMRSupport", "_java_thread_list", "ThreadsList*", 1, 0,
		 VF_BASE + VF_STATICS + 16);
	vf_field(v, "ThreadsList", "_length", "const uint", 0, 0x8, 0);
	vf_field(v, "ThreadsList", "_threads", "JavaThread*const*const", 0, 0x10, 0);
	vf_field(v, "Thread", "_osthread", "OSThread*", 0, 0x230, 0);
	vf_field(v, "Thread", "_stack_base", "address", 0, 0x250, 0);
	vf_field(v, "OSThread", "_thread_id", "OSThread::thread_id_t", 0, 0xd0, 0);
	vf_field(v, "JavaThread", "_thread_state", "JavaThreadState", 0, 0x338, 0);
	vf_type(v, "ConstantPool", 0x50);
	vf_type(v, "ConstMethod", 0x38);
	vf_type(v, "HeapBlock", 16);
	vf_type(v, "Method", 0x58);
	vf_type(v, "PcDesc", 16);
	/* the statics and what they point to */
	vf_put(v, VF_STATICS, VF_BASE + VF_GA);
	vf_put(v, VF_STATICS + 8, VF_STUB_RET);
	vf_put(v, VF_GA, 1); /* _len (an int) and _max */
	vf_put(v, VF_GA + 8, VF_BASE + VF_GA_DATA);
	vf_put(v, VF_GA_DATA, VF_BASE + VF_HEAP);
	vf_put(v, VF_HEAP + 0x10 + 0x8, VF_HEAP_LO);
	vf_put(v, VF_HEAP + 0x10 + 0x18, VF_HEAP_HI);
	vf_put(v, VF_HEAP + 0x40 + 0x8, VF_SEGMAP);
	vf_put(v, VF_HEAP + 0x80, 6);
	vf_threads(v, 2);
}

/* a Symbol at off: u2 length at 4, bytes at 6 */
static inline void vf_symbol(struct vf *v, size_t off, const char *s)
{
	__u16 len = (__u16)strlen(s);

	memcpy(v->mem + off + 4, &len, sizeof(len));
	memcpy(v->mem + off + 6, s, len);
}

/*
 * A method at VF_METHOD: Method -> ConstMethod (name index 3) -> ConstantPool (holder, slot 3
 * the name's Symbol) -> Klass -> Symbol
 */
#define VF_METHOD  0x38000u
#define VF_METHOD2 0x39000u /* another (vf_nmethod's inlined method) */
static inline void vf_method_at(struct vf *v, size_t at, const char *cls, const char *name)
{
	__u16 ni = 3;

	vf_put(v, at + 8, VF_BASE + at + 0x100);		/* _constMethod */
	vf_put(v, at + 0x100 + 8, VF_BASE + at + 0x200);	/* _constants */
	memcpy(v->mem + at + 0x100 + 0x22, &ni, sizeof(ni));	/* _name_index */
	vf_put(v, at + 0x200 + 0x10, VF_BASE + at + 0x400); /* _pool_holder */
	vf_put(v, at + 0x200 + 0x50 + 3 * 8, VF_BASE + at + 0x500);
	vf_put(v, at + 0x400 + 0x10, VF_BASE + at + 0x600); /* Klass::_name */
	vf_symbol(v, at + 0x500, name);
	vf_symbol(v, at + 0x600, cls);
}

static inline void vf_method(struct vf *v, const char *cls, const char *name)
{
	vf_method_at(v, VF_METHOD, cls, name);
}

/*
 * A code heap inside the buffer (64-byte segments; the walk layout w read from the tables
 * is pointed at it) holding one nmethod at VF_NM, its code at VF_NM + 0x100: the compiled
 * method pkg/Foo.run (VF_METHOD) with pkg/Inl.inner (VF_METHOD2) inlined. Its PcDescs: pc
 * offset 0x70 the method alone, 0x90 the inlined one; the scopes data encoded with x
 * excluded bytes (UNSIGNED5: 0 JDK 17, 1 since JDK 20)
 */
#define VF_CODE_LO 0x3a000u
#define VF_CODE_SZ 0x4000u
#define VF_SEGS	   0x3e000u
#define VF_NM	   (VF_CODE_LO + 16) /* past the HeapBlock header */
#define VF_NM_CODE (VF_NM + 0x100)
static inline void vf_nmethod(struct vf *v, struct jp_jwalk *w, unsigned int x)
{
	const __s32 pcs[4][4] = {{-1, 0}, {0x70, 1}, {0x90, 4}, {0x7fffffff, 0}};
	/* 0xff; the root scope at 1 (sender 0, method 2, bci 5); the inlined at 4 (1, 1, 3) */
	const unsigned char sd[7] = {0xff, 0, 2, 6, 1, 1, 4};
	__s32 off;

	w->heaps[0].lo = VF_BASE + VF_CODE_LO;
	w->heaps[0].hi = VF_BASE + VF_CODE_LO + VF_CODE_SZ;
	w->heaps[0].segmap = VF_BASE + VF_SEGS;
	w->heaps[0].log2_seg = 6;
	w->n_heaps = 1;
	for (unsigned int i = 0; i < VF_CODE_SZ / 64 && i < 0xff; i++)
		v->mem[VF_SEGS + i] = (unsigned char)i;
	vf_method_at(v, VF_METHOD, "pkg/Foo", "run");
	vf_method_at(v, VF_METHOD2, "pkg/Inl", "inner");
	vf_put(v, VF_NM + 0x8, vf_str(v, "nmethod"));
	vf_put(v, VF_NM + 0x30, VF_BASE + VF_NM_CODE);	/* _code_begin */
	vf_put(v, VF_NM + 0x48, VF_BASE + VF_METHOD);	/* _method */
	vf_put(v, VF_NM + 0x50, VF_BASE + VF_NM + 0x210); /* _scopes_data_begin */
	off = 0x200;
	memcpy(v->mem + VF_NM + 0x60, &off, 4); /* _metadata_offset */
	off = 0x220;
	memcpy(v->mem + VF_NM + 0x64, &off, 4); /* _scopes_pcs_offset */
	off = 0x260;
	memcpy(v->mem + VF_NM + 0x68, &off, 4); /* _dependencies_offset */
	vf_put(v, VF_NM + 0x200, VF_BASE + VF_METHOD2);
	vf_put(v, VF_NM + 0x208, VF_BASE + VF_METHOD);
	memset(v->mem + VF_NM + 0x210, 0, 0x10);
	v->mem[VF_NM + 0x210] = 0xff;
	for (unsigned int i = 1; i < sizeof(sd); i++)
		v->mem[VF_NM + 0x210 + i] = (unsigned char)(sd[i] + x);
	memcpy(v->mem + VF_NM + 0x220, pcs, sizeof(pcs));
}

/* the reader over the buffer: whole pages inside it (or inside limit), else -EFAULT */
static inline int vf_read(void *ctx, __u64 addr, void *buf, size_t n)
{
	const struct vf *v = ctx;
	size_t end = v->limit ? v->limit : VF_SIZE;

	if (addr < VF_BASE || addr - VF_BASE > end || n > end - (addr - VF_BASE))
		return -EFAULT;
	memcpy(buf, v->mem + (addr - VF_BASE), n);
	return 0;
}

/*
 * The fixture's memory read as process_vm_readv reads a batch: in order, up to the first
 * entry that faults; that one and the rest come back scribbled, for the caller to read again
 */
static inline size_t vf_readv(void *ctx, const struct vms_iov *v, size_t n)
{
	size_t i = 0;

	while (i < n && !vf_read(ctx, v[i].addr, v[i].buf, v[i].n))
		i++;
	for (size_t j = i; j < n; j++)
		memset(v[j].buf, 0xa5, v[j].n);
	return i;
}

#endif /* JPROF_VMS_FIXTURE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* vmstructs.c: what the fallback walker needs from HotSpot's exported gHotSpotVMStructs table. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent.h"

/*
 * The table is libjvm's own description of its fields (the Serviceability Agent reads it):
 * an array of entries {typeName, fieldName, typeString, isStatic, offset, address} whose
 * layout libjvm exports too (gHotSpotVMStructEntry*Offset, ...ArrayStride), ending with a
 * NULL typeName. Read once, at start, outside any signal handler.
 */
struct vm_layout {
	uint64_t type_name, field_name, type_string, is_static, offset, address, stride;
};

/* addresses of CodeCache::_low_bound / _high_bound (statics set when the code cache is made) */
static const uintptr_t *code_lo_var, *code_hi_var;
/*
 * JavaThread::_anchor, JavaFrameAnchor::_last_Java_sp/_pc/_fp (fp: x86 only),
 * JavaThread::_thread_state; -1 unknown
 */
static long anchor_off = -1, last_sp_off = -1, last_pc_off = -1, last_fp_off = -1, state_off = -1;
/* (Java)Thread::_osthread, OSThread::_thread_id: a JavaThread's OS tid (jpa_vm_os_tid) */
static long osthread_off = -1, os_tid_off = -1;
static int32_t state_in_vm = -1; /* the JavaThreadState value _thread_in_vm */

/* what jprof's BPF walk needs (jpa_vm_walk); offsets -1 unknown */
static const uintptr_t *heaps_var;	 /* CodeCache::_heaps: GrowableArray<CodeHeap*>* */
static const uintptr_t *call_stub_ret_var; /* StubRoutines::_call_stub_return_address */
static long ga_len_off = -1, ga_data_off = -1; /* GrowableArrayBase::_len, GrowableArray::_data */
static long heap_memory_off = -1, heap_segmap_off = -1, heap_log2_off = -1;
static long vs_low_off = -1, vs_high_bound_off = -1; /* VirtualSpace::_low, _high_boundary */
static long blob_name_off = -1, blob_fsize_off = -1, blob_fcomplete_off = -1, blob_code_off = -1;
static int blob_code_is_offset, fcomplete_size = 4;
/* CodeBlob::_kind (a CodeBlobKind byte, JDK 21+; -1 before) and its values */
static long blob_kind_off = -1;
static int32_t kind_nmethod = -1, kind_runtime_stub = -1;
static long method_const_off = -1, const_code_size_off = -1, wrapper_anchor_off = -1;
static long hb_header_off = -1, hb_length_off = -1, hb_used_off = -1; /* HeapBlock(::Header) */
static int hb_length_size; /* bytes of HeapBlock::Header::_length: 8 (size_t), 4 (uint32_t, 25) */

/* what reading a thread's park blocker needs (jpa_vm_heap); offsets -1 unknown */
static struct jpa_heap heap_layout = {
	.thread_obj = -1, .vthread = -1, .handle_obj = -1, .klass = -1, .narrow_klass = -1,
	.klass_name = -1, .klass_layout = -1, .sym_length = -1, .sym_body = -1,
	.gc_active = -1, .gc_count = -1,
};
static const uintptr_t *flags_var; /* JVMFlag::flags: JVMFlag[] */
static const uint64_t *num_flags_var;
static long flag_name_off = -1, flag_addr_off = -1;
static uint64_t flag_size;

static void *jvm_sym(void *jvm, const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	return p || !jvm ? p : dlsym(jvm, name);
}

static int read_u64(void *jvm, const char *name, uint64_t *ret)
{
	const uint64_t *p = jvm_sym(jvm, name);

	if (!p)
		return -ENOENT;
	*ret = *p;
	return 0;
}

/*
 * One entry's value in one of libjvm's {name, value} tables (gHotSpotVMIntConstants,
 * gHotSpotVMTypes: NULL name last), whose layout libjvm exports in the symbols given;
 * size: the value's bytes (4 or 8)
 */
static int table_value(void *jvm, const char *table, const char *name_sym, const char *value_sym,
		       const char *stride_sym, const char *want, void *ret, size_t size)
{
	const char *const *table_var = jvm_sym(jvm, table);
	uint64_t name_off, value_off, stride;
	const char *e;

	if (!table_var || !*table_var || read_u64(jvm, name_sym, &name_off) ||
	    read_u64(jvm, value_sym, &value_off) || read_u64(jvm, stride_sym, &stride))
		return -ENOENT;
	if (stride < 2 * sizeof(void *) || stride > 256 || name_off > stride - 8 ||
	    value_off > stride - size)
		return -EPROTO;
	e = *table_var;
	for (int i = 0; i < 100000; i++, e += stride) {
		const char *name = *(const char *const *)(e + name_off);

		if (!name)
			break;
		if (!strcmp(name, want)) {
			memcpy(ret, e + value_off, size);
			return 0;
		}
	}
	return -ENOENT;
}

/* the value of one of gHotSpotVMIntConstants */
static int int_constant(void *jvm, const char *want, int32_t *ret)
{
	return table_value(jvm, "gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntryNameOffset",
			   "gHotSpotVMIntConstantEntryValueOffset",
			   "gHotSpotVMIntConstantEntryArrayStride", want, ret, sizeof(*ret));
}

/* the size of one of gHotSpotVMTypes */
static int type_size(void *jvm, const char *want, uint64_t *ret)
{
	return table_value(jvm, "gHotSpotVMTypes", "gHotSpotVMTypeEntryTypeNameOffset",
			   "gHotSpotVMTypeEntrySizeOffset", "gHotSpotVMTypeEntryArrayStride", want,
			   ret, sizeof(*ret));
}

/* one nonstatic field the BPF walk needs, if it is one */
static void walk_field(const char *type, const char *field, const char *tstr, long off)
{
	static const struct {
		const char *type, *field;
		long *off;
	} want[] = {
		{ "GrowableArrayBase", "_len", &ga_len_off },
		{ "GrowableArray<int>", "_data", &ga_data_off },
		{ "CodeHeap", "_memory", &heap_memory_off },
		{ "CodeHeap", "_segmap", &heap_segmap_off },
		{ "CodeHeap", "_log2_segment_size", &heap_log2_off },
		{ "VirtualSpace", "_low", &vs_low_off },
		{ "VirtualSpace", "_high_boundary", &vs_high_bound_off },
		{ "CodeBlob", "_name", &blob_name_off },
		{ "CodeBlob", "_frame_size", &blob_fsize_off },
		{ "CodeBlob", "_frame_complete_offset", &blob_fcomplete_off },
		{ "CodeBlob", "_kind", &blob_kind_off },
		{ "Method", "_constMethod", &method_const_off },
		{ "ConstMethod", "_code_size", &const_code_size_off },
		{ "JavaCallWrapper", "_anchor", &wrapper_anchor_off },
		{ "HeapBlock", "_header", &hb_header_off },
		{ "HeapBlock::Header", "_length", &hb_length_off },
		{ "HeapBlock::Header", "_used", &hb_used_off },
	};

	if (!strcmp(type, "HeapBlock::Header") && !strcmp(field, "_length"))
		hb_length_size = !tstr ? 0 : !strcmp(tstr, "size_t") ? 8 : !strcmp(tstr, "uint32_t") ? 4 : 0;
	/* the kind is a one-byte enum: anything else is a layout we do not know */
	if (!strcmp(type, "CodeBlob") && !strcmp(field, "_kind") &&
	    (!tstr || strcmp(tstr, "CodeBlobKind")))
		return;
	/* an int in JDK 17, an int16_t in 25 */
	if (!strcmp(type, "CodeBlob") && !strcmp(field, "_frame_complete_offset"))
		fcomplete_size = tstr && !strcmp(tstr, "int16_t") ? 2 : 4;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strcmp(type, want[i].type) && !strcmp(field, want[i].field)) {
			*want[i].off = off;
			return;
		}
	}
	/* where the instructions start: a pointer (JDK 17), an offset from the blob (21+) */
	if (!strcmp(type, "CodeBlob") && !strcmp(field, "_code_begin")) {
		blob_code_off = off;
		blob_code_is_offset = 0;
	} else if (!strcmp(type, "CodeBlob") && !strcmp(field, "_code_offset")) {
		blob_code_off = off;
		blob_code_is_offset = 1;
	}
}

static uint64_t heap_block_size, const_method_size;
/* the layout jpa_vm_walk found, for the agent's own stub walk: set once, before sampling */
static struct jp_ring_walk code_layout;
static int has_code_layout;

/*
 * A static the park blocker's read needs. JDK 17 names the narrow oop/klass encodings
 * CompressedOops::_narrow_oop._base, JDK 21+ CompressedOops::_base.
 */
static void heap_static(const char *type, const char *field, const uintptr_t *addr)
{
	if (!strcmp(type, "CompressedOops")) {
		if (!strcmp(field, "_narrow_oop._base") || !strcmp(field, "_base"))
			heap_layout.oop_base = addr;
		else if (!strcmp(field, "_narrow_oop._shift") || !strcmp(field, "_shift"))
			heap_layout.oop_shift = (const int32_t *)addr;
	} else if (!strcmp(type, "CompressedKlassPointers")) {
		if (!strcmp(field, "_narrow_klass._base") || !strcmp(field, "_base"))
			heap_layout.klass_base = addr;
		else if (!strcmp(field, "_narrow_klass._shift") || !strcmp(field, "_shift"))
			heap_layout.klass_shift = (const int32_t *)addr;
	} else if (!strcmp(type, "Universe") && !strcmp(field, "_collectedHeap")) {
		heap_layout.collected_heap = addr;
	} else if (!strcmp(type, "JVMFlag") && !strcmp(field, "flags")) {
		flags_var = addr;
	} else if (!strcmp(type, "JVMFlag") && !strcmp(field, "numFlags")) {
		num_flags_var = (const uint64_t *)addr;
	}
}

/* a nonstatic field the park blocker's read needs: 1 if it was one */
static int heap_field(const char *type, const char *field, long off)
{
	static const struct {
		const char *type, *field;
		long *off;
	} want[] = {
		{ "JavaThread", "_threadObj", &heap_layout.thread_obj },
		{ "JavaThread", "_vthread", &heap_layout.vthread },
		{ "OopHandle", "_obj", &heap_layout.handle_obj },
		{ "oopDesc", "_metadata._klass", &heap_layout.klass },
		{ "oopDesc", "_metadata._compressed_klass", &heap_layout.narrow_klass },
		{ "Klass", "_name", &heap_layout.klass_name },
		{ "Klass", "_layout_helper", &heap_layout.klass_layout },
		{ "Symbol", "_length", &heap_layout.sym_length },
		{ "Symbol", "_body", &heap_layout.sym_body },
		/* _is_gc_active up to JDK 21, _is_stw_gc_active since */
		{ "CollectedHeap", "_is_gc_active", &heap_layout.gc_active },
		{ "CollectedHeap", "_is_stw_gc_active", &heap_layout.gc_active },
		{ "CollectedHeap", "_total_collections", &heap_layout.gc_count },
		{ "JVMFlag", "_name", &flag_name_off },
		{ "JVMFlag", "_addr", &flag_addr_off },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strcmp(type, want[i].type) && !strcmp(field, want[i].field)) {
			*want[i].off = off;
			return 1;
		}
	}
	return 0;
}

int jpa_vm_init(void)
{
	void *jvm = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);
	const char *const *table_var;
	const char *e;
	struct vm_layout l;
	int err = 0;

	table_var = jvm_sym(jvm, "gHotSpotVMStructs");
	if (!table_var || !*table_var) {
		err = -ENOENT;
		goto out;
	}
	err = read_u64(jvm, "gHotSpotVMStructEntryTypeNameOffset", &l.type_name) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryFieldNameOffset", &l.field_name) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryTypeStringOffset", &l.type_string) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryIsStaticOffset", &l.is_static) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryOffsetOffset", &l.offset) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryAddressOffset", &l.address) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryArrayStride", &l.stride);
	if (err)
		goto out;
	/* a stride or field offset past any plausible entry means a table we do not know */
	if (l.stride < 6 * sizeof(void *) || l.stride > 256 || l.type_name > l.stride - 8 ||
	    l.field_name > l.stride - 8 || l.type_string > l.stride - 8 ||
	    l.is_static > l.stride - 4 || l.offset > l.stride - 8 ||
	    l.address > l.stride - 8) {
		err = -EPROTO;
		goto out;
	}
	/* bounded: HotSpot's table has a few thousand entries */
	e = *table_var;
	for (int i = 0; i < 100000; i++, e += l.stride) {
		const char *type = *(const char *const *)(e + l.type_name);
		const char *field = *(const char *const *)(e + l.field_name);
		const uintptr_t *addr = *(const uintptr_t *const *)(e + l.address);

		uint64_t off = *(const uint64_t *)(e + l.offset);

		if (!type)
			break;
		if (!field)
			continue;
		if (*(const int32_t *)(e + l.is_static)) {
			heap_static(type, field, addr);
			if (!strcmp(type, "StubRoutines") &&
			    !strcmp(field, "_call_stub_return_address"))
				call_stub_ret_var = addr;
			if (strcmp(type, "CodeCache"))
				continue;
			if (!strcmp(field, "_low_bound"))
				code_lo_var = addr;
			else if (!strcmp(field, "_high_bound"))
				code_hi_var = addr;
			else if (!strcmp(field, "_heaps"))
				heaps_var = addr;
			continue;
		}
		/* offsets into objects: a JavaThread is a few KiB, its anchor three words */
		if (off > 65536)
			continue;
		if (!strcmp(type, "JavaThread") && !strcmp(field, "_anchor"))
			anchor_off = (long)off;
		else if (!strcmp(type, "JavaFrameAnchor") && !strcmp(field, "_last_Java_sp"))
			last_sp_off = (long)off;
		else if (!strcmp(type, "JavaFrameAnchor") && !strcmp(field, "_last_Java_pc"))
			last_pc_off = (long)off;
		else if (!strcmp(type, "JavaFrameAnchor") && !strcmp(field, "_last_Java_fp"))
			last_fp_off = (long)off;
		else if (!strcmp(type, "JavaThread") && !strcmp(field, "_thread_state"))
			state_off = (long)off;
		else if ((!strcmp(type, "Thread") || !strcmp(type, "JavaThread")) &&
			 !strcmp(field, "_osthread"))
			osthread_off = (long)off;
		else if (!strcmp(type, "OSThread") && !strcmp(field, "_thread_id"))
			os_tid_off = (long)off;
		else if (!heap_field(type, field, (long)off))
			walk_field(type, field, *(const char *const *)(e + l.type_string), (long)off);
	}
	if (!code_lo_var || !code_hi_var) {
		code_lo_var = code_hi_var = NULL;
		err = -ENOENT;
	}
	/* with a kind, both values or no stub walk (a kind we cannot name is no proof) */
	if (blob_kind_off >= 0 &&
	    (int_constant(jvm, "CodeBlobKind::Nmethod", &kind_nmethod) ||
	     int_constant(jvm, "CodeBlobKind::RuntimeStub", &kind_runtime_stub)))
		kind_nmethod = kind_runtime_stub = -1;
	if (type_size(jvm, "JVMFlag", &flag_size))
		flag_size = 0;
	if (type_size(jvm, "HeapBlock", &heap_block_size) ||
	    type_size(jvm, "ConstMethod", &const_method_size))
		heap_block_size = const_method_size = 0;
	/* without the state the anchor is never touched: only a thread in the VM is safe */
	if (anchor_off < 0 || last_sp_off < 0 || last_pc_off < 0 || last_sp_off == last_pc_off ||
	    state_off < 0 || int_constant(jvm, "_thread_in_vm", &state_in_vm))
		anchor_off = -1;
out:
	if (jvm)
		dlclose(jvm); /* NOLOAD took a reference; libjvm stays, it is the process */
	return err;
}

/*
 * Async-signal-safe: two loads of libjvm statics. Zero bounds (no code cache yet, or no
 * table) hold no address.
 */
int jpa_vm_in_code(uintptr_t pc)
{
	uintptr_t lo, hi;

	if (!code_lo_var)
		return 0;
	lo = __atomic_load_n(code_lo_var, __ATOMIC_RELAXED);
	hi = __atomic_load_n(code_hi_var, __ATOMIC_RELAXED);
	return lo && pc >= lo && pc < hi;
}

/* n bytes at addr of this process into buf, or -EFAULT: never a fault, whatever addr is */
static int read_self(uintptr_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)addr, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

int jpa_vm_read(uintptr_t addr, void *buf, size_t n)
{
	return read_self(addr, buf, n);
}

const struct jpa_heap *jpa_vm_heap(void)
{
	return &heap_layout;
}

int jpa_vm_flag_bool(const char *name, int *ret)
{
	uintptr_t flags = 0;
	uint64_t n = 0;

	if (!flags_var || !num_flags_var || flag_name_off < 0 || flag_addr_off < 0 ||
	    flag_size < 16 || flag_size > 256 || (uint64_t)flag_name_off > flag_size - 8 ||
	    (uint64_t)flag_addr_off > flag_size - 8)
		return -ENOENT;
	if (read_self((uintptr_t)flags_var, &flags, sizeof(flags)) || !flags ||
	    read_self((uintptr_t)num_flags_var, &n, sizeof(n)))
		return -EFAULT;
	/* a few thousand flags, the last one a NULL-named end marker */
	for (uint64_t i = 0; i < n && i < 100000; i++) {
		uintptr_t f = flags + i * flag_size, np = 0, addr = 0;
		char buf[64];
		size_t len = strlen(name) + 1;
		unsigned char v = 0;

		if (len > sizeof(buf) || read_self(f + (uintptr_t)flag_name_off, &np, sizeof(np)))
			return -EFAULT;
		if (!np || read_self(np, buf, len) || memcmp(buf, name, len))
			continue;
		if (read_self(f + (uintptr_t)flag_addr_off, &addr, sizeof(addr)) || !addr ||
		    read_self(addr, &v, 1))
			return -EFAULT;
		*ret = v != 0;
		return 0;
	}
	return -ENOENT;
}

int jpa_vm_os_tid(uintptr_t jt, __u32 *ret)
{
	uintptr_t os = 0;
	int32_t tid = 0;

	if (osthread_off < 0 || os_tid_off < 0)
		return -ENOENT;
	if (!jt)
		return -EINVAL;
	if (read_self(jt + (uintptr_t)osthread_off, &os, sizeof(os)) || !os ||
	    read_self(os + (uintptr_t)os_tid_off, &tid, sizeof(tid)) || tid <= 0)
		return -EFAULT;
	*ret = (__u32)tid;
	return 0;
}

int jpa_vm_anchor(uintptr_t jt, struct jpa_anchor *ret)
{
	uintptr_t a = jt + (uintptr_t)anchor_off;

	if (anchor_off < 0 || !jt)
		return -ENOENT;
	ret->state = (int32_t *)(jt + (uintptr_t)state_off);
	ret->in_vm = state_in_vm;
	ret->sp = (uintptr_t *)(a + (uintptr_t)last_sp_off);
	ret->pc = (uintptr_t *)(a + (uintptr_t)last_pc_off);
	ret->fp = last_fp_off >= 0 && last_fp_off != last_sp_off && last_fp_off != last_pc_off
			  ? (uintptr_t *)(a + (uintptr_t)last_fp_off)
			  : NULL;
	return 0;
}

/* a field offset as the walk block's u16, or -1 when unknown or too far for it */
static int off16(long off, __u16 *ret)
{
	if (off < 0 || off > 0xffff)
		return -1;
	*ret = (__u16)off;
	return 0;
}

/*
 * The code heaps and the field offsets jprof's BPF walk needs, into w (magic left 0: the
 * caller publishes). Reads libjvm's statics and the CodeHeap objects they point to, each
 * through read_self (never a fault), once, in the live phase (the heaps exist by then and
 * are never replaced). 0 or -errno: then w is not to be published.
 */
int jpa_vm_walk(struct jp_ring_walk *w)
{
	uintptr_t ga = 0, data = 0, stub_ret = 0;
	int32_t len = 0;

	memset(w, 0, sizeof(*w));
	if (!heaps_var || !call_stub_ret_var || ga_len_off < 0 || ga_data_off < 0 ||
	    heap_memory_off < 0 || heap_segmap_off < 0 || heap_log2_off < 0 || vs_low_off < 0 ||
	    vs_high_bound_off < 0 || blob_code_off < 0 || !heap_block_size || !const_method_size ||
	    heap_block_size > 64 || const_method_size > 0xffff || off16(blob_name_off, &w->blob_name) ||
	    off16(blob_fsize_off, &w->blob_frame_size) ||
	    off16(blob_fcomplete_off, &w->blob_frame_complete) ||
	    off16(blob_code_off, &w->blob_code) || off16(method_const_off, &w->method_const) ||
	    off16(const_code_size_off, &w->const_code_size) ||
	    off16(wrapper_anchor_off, &w->wrapper_anchor) || off16(last_sp_off, &w->anchor_sp) ||
	    off16(last_pc_off, &w->anchor_pc) || off16(last_fp_off, &w->anchor_fp))
		return -ENOENT;
	if (read_self((uintptr_t)heaps_var, &ga, sizeof(ga)) || !ga ||
	    read_self(ga + (uintptr_t)ga_len_off, &len, sizeof(len)) ||
	    read_self(ga + (uintptr_t)ga_data_off, &data, sizeof(data)) || !data ||
	    read_self((uintptr_t)call_stub_ret_var, &stub_ret, sizeof(stub_ret)) || !stub_ret)
		return -EFAULT;
	if (len < 1 || len > JP_RING_WALK_HEAPS)
		return -ERANGE;
	for (int32_t i = 0; i < len; i++) {
		uintptr_t heap = 0, mem, seg;
		int32_t log2 = 0;

		if (read_self(data + (uintptr_t)i * sizeof(uintptr_t), &heap, sizeof(heap)) || !heap)
			return -EFAULT;
		mem = heap + (uintptr_t)heap_memory_off;
		seg = heap + (uintptr_t)heap_segmap_off;
		if (read_self(mem + (uintptr_t)vs_low_off, &w->heaps[i].lo, 8) ||
		    read_self(mem + (uintptr_t)vs_high_bound_off, &w->heaps[i].hi, 8) ||
		    read_self(seg + (uintptr_t)vs_low_off, &w->heaps[i].segmap, 8) ||
		    read_self(heap + (uintptr_t)heap_log2_off, &log2, sizeof(log2)))
			return -EFAULT;
		w->heaps[i].log2_seg = (__u32)log2;
	}
	w->n_heaps = (__u32)len;
	w->call_stub_ret = stub_ret;
	w->heap_block = (__u32)heap_block_size;
	w->code_is_offset = (__u16)blob_code_is_offset;
	w->const_size = (__u16)const_method_size;
	w->frame_complete_size = (__u16)fcomplete_size;
	/* optional: without them jprof's walk finds every blob through the segment map */
	if (hb_length_size && hb_header_off >= 0 && hb_length_off >= 0 && hb_used_off >= 0 &&
	    (uint64_t)(hb_header_off + hb_length_off + hb_length_size) <= heap_block_size &&
	    (uint64_t)(hb_header_off + hb_used_off) < heap_block_size) {
		w->hb_length = (__u16)(hb_header_off + hb_length_off);
		w->hb_used = (__u16)(hb_header_off + hb_used_off);
		w->hb_length_size = (__u16)hb_length_size;
	}
	/* the agent's own stub walk uses the same heaps; it needs the HeapBlock check too */
	if (w->hb_length_size && (blob_kind_off < 0 || kind_runtime_stub >= 0)) {
		code_layout = *w;
		__atomic_store_n(&has_code_layout, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/*
 * The stub walk's view of the code cache (jpa_vm_blob). It runs in the stack-request
 * handler, under the walk's fault protection: the heaps' segment maps, HeapBlocks and blob
 * headers are read with plain loads (a torn or freed blob can fault; the handler then
 * keeps AGCT's answer), and every value is checked before it is used, as jprof's BPF walk
 * (bpf/jwalk.bpf.h) does with the same layout.
 */
static uint8_t load_u8(uintptr_t a)
{
	return *(const volatile uint8_t *)a;
}

static int32_t load_s32(uintptr_t a)
{
	return *(const volatile int32_t *)a;
}

static uintptr_t load_word(uintptr_t a)
{
	return *(const volatile uintptr_t *)a;
}

#define SEG_HOPS 32 /* segment-map hops: 32 x 254 segments, megabytes of code */

/* the block of the segment map holding pc in heap i (its first byte), or 0 */
static uintptr_t block_of(int i, uintptr_t pc)
{
	uintptr_t lo = (uintptr_t)code_layout.heaps[i].lo, hi = (uintptr_t)code_layout.heaps[i].hi;
	uint32_t l2 = code_layout.heaps[i].log2_seg;
	uintptr_t seg, block, len;
	uint8_t hop;

	if (l2 < 3 || l2 > 16)
		return 0;
	seg = (pc - lo) >> l2;
	for (int n = 0;; n++) {
		hop = load_u8((uintptr_t)code_layout.heaps[i].segmap + seg);
		if (!hop)
			break;
		if (hop == 0xff || hop > seg || n == SEG_HOPS)
			return 0;
		seg -= hop;
	}
	block = lo + (seg << l2);
	/* the block is in use and reaches past pc, or the map is not the heap's */
	len = code_layout.hb_length_size == 4 ? (uint32_t)load_s32(block + code_layout.hb_length)
					      : load_word(block + code_layout.hb_length);
	if (load_u8(block + code_layout.hb_used) != 1 || !len || len > (hi - lo) >> l2 ||
	    pc >= block + (len << l2))
		return 0;
	return block;
}

static int name_is(const char *name, const char *want)
{
	return !strncmp(name, want, strlen(want) + 1);
}

static int name_ends(const char *name, size_t len, const char *want)
{
	size_t n = strlen(want);

	return len >= n && !memcmp(name + len - n, want, n);
}

/*
 * The stubs C1 and C2 call into the VM through, by name: "C1 Runtime monitorenter_nofpu_blob",
 * "C2 Runtime complete_monitor_locking" (JDK 25); "monitorenter_nofpu Runtime1 stub",
 * "_complete_monitor_locking_Java" (JDK 17). JDK 17 has no blob kind; a JDK with one must
 * say RuntimeStub as well.
 */
static int runtime_stub_name(const char *name)
{
	size_t len = strnlen(name, 128);

	if (len == 128)
		return 0;
	if (!strncmp(name, "C1 Runtime ", 11) || !strncmp(name, "C2 Runtime ", 11))
		return 1;
	return name_ends(name, len, " Runtime1 stub") ||
	       (name[0] == '_' && len > 6 && name_ends(name, len, "_Java"));
}

int jpa_vm_blob(uintptr_t pc, struct jpa_blob *ret)
{
	uintptr_t block = 0, blob, code;
	const char *name;
	int32_t fc;
	int kind = -1;

	if (!__atomic_load_n(&has_code_layout, __ATOMIC_ACQUIRE))
		return -ENOENT;
	for (__u32 i = 0; i < code_layout.n_heaps && i < JP_RING_WALK_HEAPS; i++) {
		if (pc >= code_layout.heaps[i].lo && pc < code_layout.heaps[i].hi) {
			block = block_of((int)i, pc);
			break;
		}
	}
	if (!block)
		return -ENOENT;
	blob = block + code_layout.heap_block;
	name = (const char *)load_word(blob + code_layout.blob_name);
	if (!name)
		return -ENOENT;
	if (blob_kind_off >= 0)
		kind = load_u8(blob + (uintptr_t)blob_kind_off);
	fc = code_layout.frame_complete_size == 2
		     ? *(const volatile int16_t *)(blob + code_layout.blob_frame_complete)
		     : load_s32(blob + code_layout.blob_frame_complete);
	code = code_layout.code_is_offset
		       ? blob + (uintptr_t)(intptr_t)load_s32(blob + code_layout.blob_code)
		       : load_word(blob + code_layout.blob_code);
	if (pc < code)
		return -ENOENT;
	ret->kind = JPA_BLOB_OTHER;
	if ((kind < 0 || kind == kind_nmethod) && name_is(name, "nmethod"))
		ret->kind = JPA_BLOB_NMETHOD;
	else if ((kind < 0 || kind == kind_runtime_stub) && runtime_stub_name(name))
		ret->kind = JPA_BLOB_RUNTIME_STUB;
	else if (name_is(name, "I2C/C2I adapters"))
		ret->kind = JPA_BLOB_ADAPTER;
	else if (name_is(name, "Interpreter"))
		ret->kind = JPA_BLOB_INTERPRETER;
	ret->frame_words = load_s32(blob + code_layout.blob_frame_size);
	/* C1's stubs are never frame-complete (-1): their frame is whole at every call out */
	ret->complete = fc < 0 ? -1 : pc >= code + (uintptr_t)fc;
	ret->complete_pc = fc < 0 ? 0 : code + (uintptr_t)fc;
	ret->code = code;
	return 0;
}

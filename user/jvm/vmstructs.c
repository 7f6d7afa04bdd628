// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vmstructs.c: BPF's Java walk layout read from outside the JVM: libjvm.so's exported
 * VMStructs symbols from its ELF file, the tables and statics from the process's memory.
 * Everything read is untrusted (another user's process): every pointer is read through a
 * bounded page reader, every length and offset checked, the result checked as the agent's
 * is (jvm_walk_check).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "jvm/vmstructs.h"
#include "jvm/agent_ring.h"
#include "ring.h"
#include "sym/elf_syms.h"
#include "sym/procmaps.h"

const char *const vmstructs_sym_names[VMS_SYM_MAX] = {
	[VMS_STRUCTS] = "gHotSpotVMStructs",
	[VMS_S_TYPE] = "gHotSpotVMStructEntryTypeNameOffset",
	[VMS_S_FIELD] = "gHotSpotVMStructEntryFieldNameOffset",
	[VMS_S_TSTRING] = "gHotSpotVMStructEntryTypeStringOffset",
	[VMS_S_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[VMS_S_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[VMS_S_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[VMS_S_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[VMS_TYPES] = "gHotSpotVMTypes",
	[VMS_T_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
	[VMS_T_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
	[VMS_T_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
};

static int read_pid_mem(void *ctx, __u64 addr, void *buf, size_t n);
static size_t readv_pid_mem(void *ctx, const struct vms_iov *v, size_t n);

/* a page cache over the reader: the table, its strings and the statics share few pages */
#define VMR_PAGE  4096ull
#define VMR_SLOTS 64
#define VMS_NAME  80 /* longest type or field name looked at ("GrowableArray<int>" ...) */

struct vmr {
	vms_read_fn rd;
	void *ctx;
	struct vms_stats *st;
	__u64 page[VMR_SLOTS];
	bool valid[VMR_SLOTS];
	__u8 data[VMR_SLOTS][VMR_PAGE];
};

static int vmr_read(struct vmr *v, __u64 addr, void *buf, size_t n)
{
	__u8 *out = buf;

	if (addr + n < addr)
		return -EFAULT;
	while (n) {
		__u64 pg = addr & ~(VMR_PAGE - 1), in = addr - pg;
		size_t k = (size_t)(VMR_PAGE - in) < n ? (size_t)(VMR_PAGE - in) : n;
		unsigned int s = (unsigned int)((pg / VMR_PAGE) % VMR_SLOTS);

		if (!v->valid[s] || v->page[s] != pg) {
			if (v->st->bytes + VMR_PAGE > VMS_MAX_BYTES)
				return -E2BIG;
			v->st->reads++;
			v->st->bytes += VMR_PAGE;
			v->valid[s] = false;
			if (v->rd(v->ctx, pg, v->data[s], VMR_PAGE))
				return -EFAULT;
			v->page[s] = pg;
			v->valid[s] = true;
		}
		memcpy(out, v->data[s] + in, k);
		out += k;
		addr += k;
		n -= k;
	}
	return 0;
}

static int vmr_u64(struct vmr *v, __u64 addr, __u64 *ret)
{
	return vmr_read(v, addr, ret, sizeof(*ret));
}

/* a NUL-terminated string of at most cap - 1 bytes: 0, -ENAMETOOLONG, or a read error */
static int vmr_str(struct vmr *v, __u64 addr, char *buf, size_t cap)
{
	for (size_t i = 0; i < cap; i++) {
		int err = vmr_read(v, addr + i, &buf[i], 1);

		if (err)
			return err;
		if (!buf[i])
			return 0;
	}
	buf[cap - 1] = '\0';
	return -ENAMETOOLONG;
}

/* what the walk needs, as the agent keeps it (jvmagent/vmstructs.c); -1 unknown */
struct vms_found {
	__u64 heaps_var, stub_ret_var;
	long ga_len, ga_data, heap_memory, heap_segmap, heap_log2, vs_low, vs_high_bound;
	long blob_name, blob_fsize, blob_fcomplete, blob_code, method_const, const_code_size;
	long wrapper_anchor, last_sp, last_pc, last_fp, hb_header, hb_length, hb_used;
	int blob_code_is_offset, fcomplete_size, hb_length_size;
	__u64 heap_block_size, const_method_size, cp_size;
	/* names (vms_names) */
	long cm_constants, cm_name_index, cp_holder, klass_name, sym_length, sym_body, nm_method;
	/* threads (vms_threads) */
	__u64 tlist_var;
	long tl_length, tl_threads, t_osthread, os_tid, jt_state, jt_anchor, t_stack_base;
	/* a compiled method's debug info (vms_debug): offsets -1 unknown, sizes 0 unknown */
	struct {
		long off;
		int size;
	} d_pcd_pc, d_pcd_scope, d_meta, d_pcs, d_deps, d_sd_begin, d_imm, d_imm_size, d_sd, d_mut,
		d_mut_size, d_reloc;
	__u64 pcd_size;
};

/* the size of a field of type string t: an int, a 16-bit int or a pointer; 0 another */
static int field_size(const char *t)
{
	static const char *const i4[] = {"int",	 "int32_t", "uint32_t",
					 "jint", "uint",    "unsigned int"};
	static const char *const i2[] = {"u2", "uint16_t", "int16_t", "jushort", "jshort"};
	size_t n = strlen(t);

	for (size_t i = 0; i < sizeof(i4) / sizeof(i4[0]); i++)
		if (!strcmp(t, i4[i]))
			return 4;
	for (size_t i = 0; i < sizeof(i2) / sizeof(i2[0]); i++)
		if (!strcmp(t, i2[i]))
			return 2;
	return !strcmp(t, "address") || (n && t[n - 1] == '*') ? 8 : 0;
}

/* one field of a compiled method's debug info (vms_debug), with its size */
static void want_debug_field(struct vms_found *f, const char *type, const char *field,
			     const char *tstr, long off)
{
	const struct {
		const char *type, *field;
		long *off;
		int *size;
	} want[] = {
		{"PcDesc", "_pc_offset", &f->d_pcd_pc.off, &f->d_pcd_pc.size},
		{"PcDesc", "_scope_decode_offset", &f->d_pcd_scope.off, &f->d_pcd_scope.size},
		{"nmethod", "_metadata_offset", &f->d_meta.off, &f->d_meta.size},
		{"nmethod", "_scopes_pcs_offset", &f->d_pcs.off, &f->d_pcs.size},
		{"nmethod", "_dependencies_offset", &f->d_deps.off, &f->d_deps.size},
		{"CompiledMethod", "_scopes_data_begin", &f->d_sd_begin.off, &f->d_sd_begin.size},
		{"nmethod", "_scopes_data_begin", &f->d_sd_begin.off, &f->d_sd_begin.size},
		{"nmethod", "_immutable_data", &f->d_imm.off, &f->d_imm.size},
		{"nmethod", "_immutable_data_size", &f->d_imm_size.off, &f->d_imm_size.size},
		{"nmethod", "_scopes_data_offset", &f->d_sd.off, &f->d_sd.size},
		{"CodeBlob", "_mutable_data", &f->d_mut.off, &f->d_mut.size},
		{"CodeBlob", "_mutable_data_size", &f->d_mut_size.off, &f->d_mut_size.size},
		{"CodeBlob", "_relocation_size", &f->d_reloc.off, &f->d_reloc.size},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strcmp(type, want[i].type) && !strcmp(field, want[i].field)) {
			*want[i].off = off;
			*want[i].size = field_size(tstr);
			return;
		}
	}
}

/* one nonstatic field of the table, if it is one the walk needs (as walk_field) */
static void want_field(struct vms_found *f, const char *type, const char *field, const char *tstr,
		       long off)
{
	const struct {
		const char *type, *field;
		long *off;
	} want[] = {
		{"GrowableArrayBase", "_len", &f->ga_len},
		{"GrowableArray<int>", "_data", &f->ga_data},
		{"CodeHeap", "_memory", &f->heap_memory},
		{"CodeHeap", "_segmap", &f->heap_segmap},
		{"CodeHeap", "_log2_segment_size", &f->heap_log2},
		{"VirtualSpace", "_low", &f->vs_low},
		{"VirtualSpace", "_high_boundary", &f->vs_high_bound},
		{"CodeBlob", "_name", &f->blob_name},
		{"CodeBlob", "_frame_size", &f->blob_fsize},
		{"CodeBlob", "_frame_complete_offset", &f->blob_fcomplete},
		{"Method", "_constMethod", &f->method_const},
		{"ConstMethod", "_code_size", &f->const_code_size},
		{"JavaCallWrapper", "_anchor", &f->wrapper_anchor},
		{"JavaFrameAnchor", "_last_Java_sp", &f->last_sp},
		{"JavaFrameAnchor", "_last_Java_pc", &f->last_pc},
		{"JavaFrameAnchor", "_last_Java_fp", &f->last_fp},
		{"HeapBlock", "_header", &f->hb_header},
		{"HeapBlock::Header", "_length", &f->hb_length},
		{"HeapBlock::Header", "_used", &f->hb_used},
		{"ConstMethod", "_constants", &f->cm_constants},
		{"ConstMethod", "_name_index", &f->cm_name_index},
		{"ConstantPool", "_pool_holder", &f->cp_holder},
		{"Klass", "_name", &f->klass_name},
		{"Symbol", "_length", &f->sym_length},
		{"Symbol", "_body", &f->sym_body},
		/* CompiledMethod's in JDK 17, nmethod's since 23 */
		{"CompiledMethod", "_method", &f->nm_method},
		{"nmethod", "_method", &f->nm_method},
		{"ThreadsList", "_length", &f->tl_length},
		{"ThreadsList", "_threads", &f->tl_threads},
		/* Thread's in JDK 17 and 25; JavaThread's if it moves there */
		{"Thread", "_osthread", &f->t_osthread},
		{"JavaThread", "_osthread", &f->t_osthread},
		{"OSThread", "_thread_id", &f->os_tid},
		{"JavaThread", "_thread_state", &f->jt_state},
		{"JavaThread", "_anchor", &f->jt_anchor},
		{"Thread", "_stack_base", &f->t_stack_base},
		{"JavaThread", "_stack_base", &f->t_stack_base},
	};

	want_debug_field(f, type, field, tstr, off);
	if (!strcmp(type, "HeapBlock::Header") && !strcmp(field, "_length"))
		f->hb_length_size = !strcmp(tstr, "size_t") ? 8 : !strcmp(tstr, "uint32_t") ? 4 : 0;
	if (!strcmp(type, "CodeBlob") && !strcmp(field, "_frame_complete_offset"))
		f->fcomplete_size = !strcmp(tstr, "int16_t") ? 2 : 4;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strcmp(type, want[i].type) && !strcmp(field, want[i].field)) {
			*want[i].off = off;
			return;
		}
	}
	if (!strcmp(type, "CodeBlob") && !strcmp(field, "_code_begin")) {
		f->blob_code = off;
		f->blob_code_is_offset = 0;
	} else if (!strcmp(type, "CodeBlob") && !strcmp(field, "_code_offset")) {
		f->blob_code = off;
		f->blob_code_is_offset = 1;
	}
}

/* the types whose fields the walk needs: only their entries' field names are read */
static bool type_wanted(const char *t)
{
	static const char *const types[] = {
		"GrowableArrayBase",
		"GrowableArray<int>",
		"CodeHeap",
		"VirtualSpace",
		"CodeBlob",
		"Method",
		"ConstMethod",
		"JavaCallWrapper",
		"JavaFrameAnchor",
		"HeapBlock",
		"HeapBlock::Header",
		"CodeCache",
		"StubRoutines",
		"ConstantPool",
		"Klass",
		"Symbol",
		"CompiledMethod",
		"nmethod",
		"ThreadsSMRSupport",
		"ThreadsList",
		"Thread",
		"JavaThread",
		"OSThread",
		"PcDesc",
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i]))
			return true;
	return false;
}

/* an exported u64 (an offset or stride) at the symbol's address */
static int sym_u64(struct vmr *v, const __u64 *syms, enum vms_sym k, __u64 *ret)
{
	if (!syms[k])
		return -ENOENT;
	return vmr_u64(v, syms[k], ret);
}

/* gHotSpotVMStructs: the fields and statics of want_field and the two statics */
static int read_structs(struct vmr *v, const __u64 *syms, struct vms_found *f)
{
	__u64 table, tn, fn, ts, is, of, ad, stride;
	/* the last type name's pointer and whether it was wanted: entries come grouped by type */
	__u64 last_tp = 0;
	bool last_wanted = false;
	char type[VMS_NAME];
	int err;

	err = sym_u64(v, syms, VMS_STRUCTS, &table) ?: sym_u64(v, syms, VMS_S_TYPE, &tn) ?:
	      sym_u64(v, syms, VMS_S_FIELD, &fn) ?: sym_u64(v, syms, VMS_S_TSTRING, &ts) ?:
	      sym_u64(v, syms, VMS_S_STATIC, &is) ?: sym_u64(v, syms, VMS_S_OFFSET, &of) ?:
	      sym_u64(v, syms, VMS_S_ADDRESS, &ad) ?: sym_u64(v, syms, VMS_S_STRIDE, &stride);
	if (err)
		return err;
	if (!table)
		return -EAGAIN;
	if (stride < 48 || stride > 256 || tn > stride - 8 || fn > stride - 8 || ts > stride - 8 ||
	    is > stride - 4 || of > stride - 8 || ad > stride - 8)
		return -EPROTO;
	type[0] = '\0';
	for (__u64 i = 0;; i++) {
		__u8 e[256];
		__u64 tp, fp, tsp, off, addr;
		__s32 stat;
		char field[VMS_NAME], tstr[VMS_NAME];

		if (i >= VMS_MAX_ENTRIES)
			return -E2BIG;
		v->st->entries++;
		err = vmr_read(v, table + i * stride, e, (size_t)stride);
		if (err)
			return err;
		memcpy(&tp, e + tn, 8);
		memcpy(&fp, e + fn, 8);
		memcpy(&tsp, e + ts, 8);
		memcpy(&stat, e + is, 4);
		memcpy(&off, e + of, 8);
		memcpy(&addr, e + ad, 8);
		if (!tp)
			return 0;
		if (!fp)
			continue;
		if (tp != last_tp) {
			last_tp = tp;
			err = vmr_str(v, tp, type, sizeof(type));
			if (err == -ENAMETOOLONG)
				type[0] = '\0';
			else if (err)
				return err;
			last_wanted = type_wanted(type);
		}
		if (!last_wanted)
			continue;
		err = vmr_str(v, fp, field, sizeof(field));
		if (err == -ENAMETOOLONG)
			continue;
		if (err)
			return err;
		if (stat) {
			if (!strcmp(type, "CodeCache") && !strcmp(field, "_heaps"))
				f->heaps_var = addr;
			else if (!strcmp(type, "StubRoutines") &&
				 !strcmp(field, "_call_stub_return_address"))
				f->stub_ret_var = addr;
			else if (!strcmp(type, "ThreadsSMRSupport") &&
				 !strcmp(field, "_java_thread_list"))
				f->tlist_var = addr;
			continue;
		}
		if (off > 65536)
			continue;
		tstr[0] = '\0';
		if (tsp && vmr_str(v, tsp, tstr, sizeof(tstr)))
			tstr[0] = '\0';
		want_field(f, type, field, tstr, (long)off);
	}
}

/* gHotSpotVMTypes: the sizes of HeapBlock and ConstMethod */
static int read_types(struct vmr *v, const __u64 *syms, struct vms_found *f)
{
	__u64 table, tn, sz, stride;
	char name[VMS_NAME];
	int err;

	err = sym_u64(v, syms, VMS_TYPES, &table) ?: sym_u64(v, syms, VMS_T_NAME, &tn) ?:
	      sym_u64(v, syms, VMS_T_SIZE, &sz) ?: sym_u64(v, syms, VMS_T_STRIDE, &stride);
	if (err)
		return err;
	if (!table)
		return -EAGAIN;
	if (stride < 16 || stride > 256 || tn > stride - 8 || sz > stride - 8)
		return -EPROTO;
	for (__u64 i = 0; i < VMS_MAX_ENTRIES; i++) {
		__u64 np, size;

		v->st->entries++;
		err = vmr_u64(v, table + i * stride + tn, &np)
			      ?: vmr_u64(v, table + i * stride + sz, &size);
		if (err)
			return err;
		if (!np)
			return 0;
		err = vmr_str(v, np, name, sizeof(name));
		if (err == -ENAMETOOLONG)
			continue;
		if (err)
			return err;
		if (!strcmp(name, "HeapBlock"))
			f->heap_block_size = size;
		else if (!strcmp(name, "ConstMethod"))
			f->const_method_size = size;
		else if (!strcmp(name, "ConstantPool"))
			f->cp_size = size;
		else if (!strcmp(name, "PcDesc"))
			f->pcd_size = size;
	}
	return -E2BIG;
}

static int off16(long off, __u16 *ret)
{
	if (off < 0 || off > 0xffff)
		return -1;
	*ret = (__u16)off;
	return 0;
}

/* the walk block as jpa_vm_walk builds it, from what the tables said */
static int build(struct vmr *v, const struct vms_found *f, struct jp_ring_walk *w)
{
	__u64 ga = 0, data = 0, stub_ret = 0;
	__s32 len = 0;
	int err;

	memset(w, 0, sizeof(*w));
	if (!f->heaps_var || !f->stub_ret_var || f->ga_len < 0 || f->ga_data < 0 ||
	    f->heap_memory < 0 || f->heap_segmap < 0 || f->heap_log2 < 0 || f->vs_low < 0 ||
	    f->vs_high_bound < 0 || f->blob_code < 0 || !f->heap_block_size ||
	    !f->const_method_size || f->heap_block_size > 64 || f->const_method_size > 0xffff ||
	    off16(f->blob_name, &w->blob_name) || off16(f->blob_fsize, &w->blob_frame_size) ||
	    off16(f->blob_fcomplete, &w->blob_frame_complete) ||
	    off16(f->blob_code, &w->blob_code) || off16(f->method_const, &w->method_const) ||
	    off16(f->const_code_size, &w->const_code_size) ||
	    off16(f->wrapper_anchor, &w->wrapper_anchor) || off16(f->last_sp, &w->anchor_sp) ||
	    off16(f->last_pc, &w->anchor_pc) || off16(f->last_fp, &w->anchor_fp))
		return -ENOENT;
	err = vmr_u64(v, f->heaps_var, &ga) ?: vmr_u64(v, f->stub_ret_var, &stub_ret);
	if (err)
		return err;
	/* set during the JVM's init: a JVM found very early has neither yet */
	if (!ga || !stub_ret)
		return -EAGAIN;
	err = vmr_read(v, ga + (__u64)f->ga_len, &len, sizeof(len))
		      ?: vmr_u64(v, ga + (__u64)f->ga_data, &data);
	if (err)
		return err;
	if (!data || len < 1)
		return -EAGAIN;
	if (len > JP_RING_WALK_HEAPS)
		return -EPROTO;
	for (__s32 i = 0; i < len; i++) {
		__u64 heap = 0, mem, seg;
		__s32 log2 = 0;

		err = vmr_u64(v, data + (__u64)i * 8, &heap);
		if (err)
			return err;
		if (!heap)
			return -EAGAIN;
		mem = heap + (__u64)f->heap_memory;
		seg = heap + (__u64)f->heap_segmap;
		err = vmr_u64(v, mem + (__u64)f->vs_low, &w->heaps[i].lo) ?:
		      vmr_u64(v, mem + (__u64)f->vs_high_bound, &w->heaps[i].hi) ?:
		      vmr_u64(v, seg + (__u64)f->vs_low, &w->heaps[i].segmap) ?:
		      vmr_read(v, heap + (__u64)f->heap_log2, &log2, sizeof(log2));
		if (err)
			return err;
		w->heaps[i].log2_seg = (__u32)log2;
	}
	w->n_heaps = (__u32)len;
	w->call_stub_ret = stub_ret;
	w->heap_block = (__u32)f->heap_block_size;
	w->code_is_offset = (__u16)f->blob_code_is_offset;
	w->const_size = (__u16)f->const_method_size;
	w->frame_complete_size = (__u16)f->fcomplete_size;
	if (f->hb_length_size && f->hb_header >= 0 && f->hb_length >= 0 && f->hb_used >= 0 &&
	    (__u64)(f->hb_header + f->hb_length + f->hb_length_size) <= f->heap_block_size &&
	    (__u64)(f->hb_header + f->hb_used) < f->heap_block_size) {
		w->hb_length = (__u16)(f->hb_header + f->hb_length);
		w->hb_used = (__u16)(f->hb_header + f->hb_used);
		w->hb_length_size = (__u16)f->hb_length_size;
	}
	w->magic = JP_RING_WALK_MAGIC;
	return 0;
}

/*
 * The threads' offsets, each under 64 KiB; ok when all but the stack base are known and
 * the anchor's words are within its first 32 bytes (BPF reads those at once)
 */
static void threads_of(const struct vms_found *f, const struct jp_jwalk *w, struct vms_threads *t)
{
	const long v[] = {f->tl_length, f->tl_threads, f->t_osthread,
			  f->os_tid,	f->jt_state,   f->jt_anchor};
	__u32 *o[] = {&t->list_length, &t->list_threads, &t->osthread,
		      &t->os_tid,	&t->state,	  &t->anchor};

	memset(t, 0, sizeof(*t));
	t->ok = f->tlist_var && w->anchor_sp < 32 && w->anchor_fp < 32 && w->anchor_pc < 32 &&
		!(w->anchor_sp & 7) && !(w->anchor_fp & 7) && !(w->anchor_pc & 7);
	t->list_var = f->tlist_var;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (v[i] < 0 || v[i] > 0xffff) {
			t->ok = 0;
			continue;
		}
		*o[i] = (__u32)v[i];
	}
	if (f->t_stack_base >= 0 && f->t_stack_base <= 0xffff) {
		t->stack_base = (__u32)f->t_stack_base;
		t->has_stack_base = 1;
	}
}

/* the names' offsets, each under 64 KiB; ok when all are known */
static void names_of(const struct vms_found *f, struct vms_names *n)
{
	const long v[] = {f->cm_constants, f->cm_name_index, f->cp_holder, (long)f->cp_size,
			  f->klass_name,   f->sym_length,    f->sym_body,  f->nm_method};
	__u32 *o[] = {&n->cm_constants, &n->cm_name_index, &n->cp_holder, &n->cp_size,
		      &n->klass_name,	&n->sym_length,	   &n->sym_body,  &n->nm_method};

	memset(n, 0, sizeof(*n));
	n->ok = 1;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (v[i] < 0 || v[i] > 0xffff || (i == 3 && !v[i])) {
			n->ok = 0;
			continue;
		}
		*o[i] = (__u32)v[i];
	}
}

/* a debug info field as vms_debug keeps it: 0, or -1 (not known, too far, odd size) */
static int dbg_field(long off, int size, int want, struct vms_field *ret)
{
	if (off < 0 || off > 4096 || !size || (want && size != want) || (off & (size - 1)))
		return -1;
	*ret = (struct vms_field){.off = (__u32)off, .size = (__u32)size};
	return 0;
}

/*
 * Where a compiled method's debug info is: the newer layout when its fields are there,
 * else the older; VMS_DBG_NONE when neither is whole (names without inlined frames)
 */
static void debug_of(const struct vms_found *f, struct vms_debug *d)
{
	memset(d, 0, sizeof(*d));
	if (f->pcd_size < 8 || f->pcd_size > 64 ||
	    dbg_field(f->d_pcd_pc.off, f->d_pcd_pc.size, 4, &d->pcd_pc) ||
	    dbg_field(f->d_pcd_scope.off, f->d_pcd_scope.size, 4, &d->pcd_scope) ||
	    d->pcd_pc.off + 4 > f->pcd_size || d->pcd_scope.off + 4 > f->pcd_size)
		return;
	d->pcd_size = (__u32)f->pcd_size;
	if (!dbg_field(f->d_imm.off, f->d_imm.size, 8, &d->imm) &&
	    !dbg_field(f->d_imm_size.off, f->d_imm_size.size, 0, &d->imm_size) &&
	    !dbg_field(f->d_sd.off, f->d_sd.size, 0, &d->sd) &&
	    !dbg_field(f->d_pcs.off, f->d_pcs.size, 0, &d->pcs) &&
	    !dbg_field(f->d_mut.off, f->d_mut.size, 8, &d->mut) &&
	    !dbg_field(f->d_mut_size.off, f->d_mut_size.size, 0, &d->mut_size) &&
	    !dbg_field(f->d_reloc.off, f->d_reloc.size, 0, &d->reloc) && d->imm_size.size <= 4 &&
	    d->sd.size <= 4 && d->pcs.size <= 4 && d->mut_size.size <= 4 && d->reloc.size <= 4) {
		d->layout = VMS_DBG_IMMUTABLE;
		return;
	}
	if (!dbg_field(f->d_meta.off, f->d_meta.size, 0, &d->meta) &&
	    !dbg_field(f->d_pcs.off, f->d_pcs.size, 0, &d->pcs) &&
	    !dbg_field(f->d_deps.off, f->d_deps.size, 0, &d->deps) &&
	    !dbg_field(f->d_sd_begin.off, f->d_sd_begin.size, 8, &d->sd_begin) &&
	    d->meta.size <= 4 && d->pcs.size <= 4 && d->deps.size <= 4) {
		d->layout = VMS_DBG_OFFSETS;
		return;
	}
	memset(d, 0, sizeof(*d));
}

int vmstructs_layout(const __u64 *syms, vms_read_fn rd, void *ctx, struct jp_jwalk *ret,
		     struct vms_names *ret_names, struct vms_stats *st)
{
	struct vms_found f = {
		.ga_len = -1,
		.ga_data = -1,
		.heap_memory = -1,
		.heap_segmap = -1,
		.heap_log2 = -1,
		.vs_low = -1,
		.vs_high_bound = -1,
		.blob_name = -1,
		.blob_fsize = -1,
		.blob_fcomplete = -1,
		.blob_code = -1,
		.method_const = -1,
		.const_code_size = -1,
		.wrapper_anchor = -1,
		.last_sp = -1,
		.last_pc = -1,
		.last_fp = -1,
		.hb_header = -1,
		.hb_length = -1,
		.hb_used = -1,
		.fcomplete_size = 4,
		.cm_constants = -1,
		.cm_name_index = -1,
		.cp_holder = -1,
		.klass_name = -1,
		.sym_length = -1,
		.sym_body = -1,
		.nm_method = -1,
		.tl_length = -1,
		.tl_threads = -1,
		.t_osthread = -1,
		.os_tid = -1,
		.jt_state = -1,
		.jt_anchor = -1,
		.t_stack_base = -1,
		.d_pcd_pc.off = -1,
		.d_pcd_scope.off = -1,
		.d_meta.off = -1,
		.d_pcs.off = -1,
		.d_deps.off = -1,
		.d_sd_begin.off = -1,
		.d_imm.off = -1,
		.d_imm_size.off = -1,
		.d_sd.off = -1,
		.d_mut.off = -1,
		.d_mut_size.off = -1,
		.d_reloc.off = -1,
	};
	struct jp_ring_walk w;
	struct vmr *v = calloc(1, sizeof(*v));
	int err;

	if (!v)
		return -ENOMEM;
	v->rd = rd;
	v->ctx = ctx;
	v->st = st;
	err = read_structs(v, syms, &f) ?: read_types(v, syms, &f) ?: build(v, &f, &w);
	free(v);
	if (err)
		return err;
	err = jvm_walk_check(&w, ret);
	if (err)
		return err;
	if (ret_names) {
		names_of(&f, ret_names);
		threads_of(&f, ret, &ret_names->threads);
		debug_of(&f, &ret_names->dbg);
	}
	return 0;
}

/*
 * Threads read at a time: their reads' buffers live on the stack (about 10 KiB), and a batch
 * (an _osthread and a _stack_base each) fits one process_vm_readv (IOV_MAX 1024)
 */
#define VMS_THR_CHUNK 128
#define VMS_THR_BATCH (2 * VMS_THR_CHUNK)

/*
 * v[0..n) read, ok[i] whether v[i] was: in batches through rdv; an entry a batch did not read
 * whole is read alone through rd, which decides as it did when every read went through it,
 * and the ones after it go in the next batch (a thread gone costs a read, not the rest of
 * the batch one by one)
 */
static void read_batch(vms_read_fn rd, vms_readv_fn rdv, void *ctx, const struct vms_iov *v,
		       size_t n, bool *ok)
{
	size_t i = 0;

	while (i < n) {
		size_t k = rdv ? rdv(ctx, v + i, n - i) : 0;

		for (size_t end = i + (k < n - i ? k : n - i); i < end; i++)
			ok[i] = true;
		if (i == n)
			break;
		ok[i] = !rd(ctx, v[i].addr, v[i].buf, v[i].n);
		/* the batch read nothing where a read alone could: the rest one by one */
		if (!k && ok[i])
			rdv = NULL;
		i++;
	}
}

int vmstructs_threads(const struct vms_threads *t, vms_read_fn rd, void *ctx, __u64 prev_list,
		      struct vms_thread *ret, size_t cap, size_t *ret_n, __u64 *ret_list,
		      size_t *ret_skipped)
{
	return vmstructs_threads_v(t, rd, NULL, ctx, prev_list, ret, cap, ret_n, ret_list,
				   ret_skipped);
}

int vmstructs_threads_v(const struct vms_threads *t, vms_read_fn rd, vms_readv_fn rdv, void *ctx,
			__u64 prev_list, struct vms_thread *ret, size_t cap, size_t *ret_n,
			__u64 *ret_list, size_t *ret_skipped)
{
	struct vms_iov v[VMS_THR_BATCH];
	bool ok[VMS_THR_BATCH], keep[VMS_THR_CHUNK];
	__u64 jt[VMS_THR_CHUNK], os[VMS_THR_CHUNK], base[VMS_THR_CHUNK];
	__s32 tid[VMS_THR_CHUNK];
	__u64 list = 0, arr = 0, again = 0;
	__u32 len = 0;
	size_t n = 0, skipped = 0;
	int err;

	if (!t->ok)
		return -EINVAL;
	err = rd(ctx, t->list_var, &list, sizeof(list));
	if (err)
		return -EFAULT;
	if (!list)
		return -EAGAIN;
	*ret_list = list;
	if (list == prev_list)
		return -EALREADY;
	v[0] = (struct vms_iov){list + t->list_length, &len, sizeof(len)};
	v[1] = (struct vms_iov){list + t->list_threads, &arr, sizeof(arr)};
	read_batch(rd, rdv, ctx, v, 2, ok);
	if (!ok[0] || !ok[1])
		return -EFAULT;
	if (len > cap || len > VMS_MAX_THREADS)
		return -E2BIG;
	if (len && !arr)
		return -EFAULT;
	for (__u32 at = 0; at < len; at += VMS_THR_CHUNK) {
		size_t m = len - at < VMS_THR_CHUNK ? len - at : VMS_THR_CHUNK, nv = 0;

		if (rd(ctx, arr + (__u64)at * 8, jt, m * sizeof(jt[0])))
			return -EFAULT; /* the array itself: the list is gone */
		/* each JavaThread's OSThread* and stack base, one batch */
		for (size_t j = 0; j < m; j++) {
			os[j] = base[j] = 0;
			if (!jt[j])
				continue;
			v[nv++] = (struct vms_iov){jt[j] + t->osthread, &os[j], sizeof(os[j])};
			if (t->has_stack_base)
				v[nv++] = (struct vms_iov){jt[j] + t->stack_base, &base[j],
							   sizeof(base[j])};
		}
		read_batch(rd, rdv, ctx, v, nv, ok);
		/* each OSThread's tid, one batch (v[] refilled behind what ok[] is read from) */
		nv = 0;
		for (size_t j = 0, e = 0; j < m; j++) {
			bool good;

			keep[j] = false;
			if (!jt[j])
				continue;
			good = ok[e++];
			if (t->has_stack_base && !ok[e++])
				good = false;
			keep[j] = good && os[j];
			if (keep[j])
				v[nv++] = (struct vms_iov){os[j] + t->os_tid, &tid[j],
							   sizeof(tid[j])};
		}
		read_batch(rd, rdv, ctx, v, nv, ok);
		/* in the array's order; a thread whose own reads failed is left out */
		for (size_t j = 0, e = 0; j < m; j++) {
			if (keep[j] && (!ok[e++] || tid[j] <= 0))
				keep[j] = false;
			if (!keep[j]) {
				skipped++;
				continue;
			}
			ret[n++] = (struct vms_thread){
				.thread = jt[j], .stack_hi = base[j], .tid = (__u32)tid[j]};
		}
	}
	/* replaced while it was read: what was read may be of a list being freed */
	if (rd(ctx, t->list_var, &again, sizeof(again)) || again != list)
		return -EAGAIN;
	*ret_n = n;
	if (ret_skipped)
		*ret_skipped = skipped;
	return 0;
}

int vmstructs_threads_pid(__u32 pid, const struct vms_threads *t, __u64 prev_list,
			  struct vms_thread *ret, size_t cap, size_t *ret_n, __u64 *ret_list,
			  size_t *ret_skipped)
{
	return vmstructs_threads_v(t, read_pid_mem, readv_pid_mem, &pid, prev_list, ret, cap, ret_n,
				   ret_list, ret_skipped);
}

/* the process's memory ----------------------------------------------------- */

static int read_pid_mem(void *ctx, __u64 addr, void *buf, size_t n)
{
	__u32 pid = *(const __u32 *)ctx;
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};

	/* read-only, from root: never a write, never a mapping of the target's memory */
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/*
 * A batch in one process_vm_readv (VMS_THR_BATCH entries at a time: the most a thread list
 * read asks), read-only as above. It reads the remote iovecs in order and stops at the first
 * that faults, maybe in the middle of it: only the entries read whole count.
 */
static size_t readv_pid_mem(void *ctx, const struct vms_iov *v, size_t n)
{
	__u32 pid = *(const __u32 *)ctx;
	struct iovec local[VMS_THR_BATCH], remote[VMS_THR_BATCH];
	size_t done = 0;

	while (done < n) {
		size_t m = n - done < VMS_THR_BATCH ? n - done : VMS_THR_BATCH, k = 0;
		ssize_t got;

		for (size_t i = 0; i < m; i++) {
			local[i] = (struct iovec){v[done + i].buf, v[done + i].n};
			remote[i] =
				(struct iovec){(void *)(uintptr_t)v[done + i].addr, v[done + i].n};
		}
		got = process_vm_readv((pid_t)pid, local, m, remote, m, 0);
		for (; got >= 0 && k < m && (size_t)got >= v[done + k].n; k++)
			got -= (ssize_t)v[done + k].n;
		done += k;
		if (k < m)
			break;
	}
	return done;
}

/* libjvm.so's first mapping (file offset 0): its start, and its map_files entry opened */
static int open_libjvm(__u32 pid, __u64 *ret_start)
{
	struct jp_maps *m = NULL;
	char path[96];
	int err, fd = -ENOEXEC;

	err = procmaps_read_pid(pid, false, &m);
	if (err)
		return err;
	for (size_t i = 0; i < m->n; i++) {
		const struct jp_map *x = &m->maps[i];
		const char *slash = x->path ? strrchr(x->path, '/') : NULL;

		if (x->type != JP_MAP_FILE || x->offset || !slash || strcmp(slash + 1, "libjvm.so"))
			continue;
		(void)snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid,
			       (unsigned long long)x->start, (unsigned long long)x->end);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			fd = -errno;
		else
			*ret_start = x->start;
		break;
	}
	procmaps_free(m);
	return fd;
}

int vmstructs_read_pid(__u32 pid, struct jp_jwalk *ret, struct vms_names *ret_names,
		       struct vms_stats *st)
{
	__u64 syms[VMS_SYM_MAX], base = 0, start = 0;
	struct stat sb;
	int fd, err;

	fd = open_libjvm(pid, &start);
	if (fd < 0)
		return fd;
	/* a regular file: never a FIFO or device someone named libjvm.so */
	err = fstat(fd, &sb) ? -errno : S_ISREG(sb.st_mode) ? 0 : -ENOEXEC;
	if (!err)
		err = elf_syms__lookup_fd(fd, vmstructs_sym_names, VMS_SYM_MAX, syms, &base);
	close(fd);
	if (err)
		return err;
	for (int i = 0; i < VMS_SYM_MAX; i++)
		if (syms[i])
			syms[i] = syms[i] - (base & ~(VMR_PAGE - 1)) + start;
	return vmstructs_layout(syms, read_pid_mem, &pid, ret, ret_names, st);
}

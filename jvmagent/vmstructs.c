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
	uint64_t type_name, field_name, is_static, offset, address, stride;
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

/* the value of one of gHotSpotVMIntConstants ({name, int32 value} entries, NULL name last) */
static int int_constant(void *jvm, const char *want, int32_t *ret)
{
	const char *const *table_var = jvm_sym(jvm, "gHotSpotVMIntConstants");
	uint64_t name_off, value_off, stride;
	const char *e;

	if (!table_var || !*table_var ||
	    read_u64(jvm, "gHotSpotVMIntConstantEntryNameOffset", &name_off) ||
	    read_u64(jvm, "gHotSpotVMIntConstantEntryValueOffset", &value_off) ||
	    read_u64(jvm, "gHotSpotVMIntConstantEntryArrayStride", &stride))
		return -ENOENT;
	if (stride < 2 * sizeof(void *) || stride > 256 || name_off > stride - 8 ||
	    value_off > stride - 4)
		return -EPROTO;
	e = *table_var;
	for (int i = 0; i < 100000; i++, e += stride) {
		const char *name = *(const char *const *)(e + name_off);

		if (!name)
			break;
		if (!strcmp(name, want)) {
			*ret = *(const int32_t *)(e + value_off);
			return 0;
		}
	}
	return -ENOENT;
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
	      read_u64(jvm, "gHotSpotVMStructEntryIsStaticOffset", &l.is_static) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryOffsetOffset", &l.offset) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryAddressOffset", &l.address) ?:
	      read_u64(jvm, "gHotSpotVMStructEntryArrayStride", &l.stride);
	if (err)
		goto out;
	/* a stride or field offset past any plausible entry means a table we do not know */
	if (l.stride < 6 * sizeof(void *) || l.stride > 256 || l.type_name > l.stride - 8 ||
	    l.field_name > l.stride - 8 || l.is_static > l.stride - 4 || l.offset > l.stride - 8 ||
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
			if (strcmp(type, "CodeCache"))
				continue;
			if (!strcmp(field, "_low_bound"))
				code_lo_var = addr;
			else if (!strcmp(field, "_high_bound"))
				code_hi_var = addr;
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
	}
	if (!code_lo_var || !code_hi_var) {
		code_lo_var = code_hi_var = NULL;
		err = -ENOENT;
	}
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_vmstructs.c: BPF's Java walk layout read from a JVM's VMStructs tables, on a
 * synthetic JVM memory in a buffer (vms_fixture.h): the layout the agent would publish, a
 * JVM still starting (try again), tables out of bounds, reads that fail, the budgets; and
 * the symbols from an ELF file (this test binary's own exported data).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "vms_fixture.h"
#include "jvm/vmnames.h"
#include "sym/elf_syms.h"
#include "sym_fixture.h"

static struct vf *vf_new(void)
{
	struct vf *v = malloc(sizeof(*v));

	if (v)
		vf_build(v);
	return v;
}

TEST(layout_as_the_agent_reads_it)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct jp_jwalk w;

	ASSERT_TRUE(v != NULL);
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), 0);
	EXPECT_EQ(w.n_heaps, 1);
	EXPECT_EQ(w.heaps[0].lo, VF_HEAP_LO);
	EXPECT_EQ(w.heaps[0].hi, VF_HEAP_HI);
	EXPECT_EQ(w.heaps[0].segmap, VF_SEGMAP);
	EXPECT_EQ(w.heaps[0].log2_seg, 6);
	EXPECT_EQ(w.call_stub_ret, VF_STUB_RET);
	EXPECT_EQ(w.heap_block, 16);
	EXPECT_EQ(w.blob_name, 8);
	EXPECT_EQ(w.blob_frame_size, 0x28);
	EXPECT_EQ(w.blob_frame_complete, 0x24);
	EXPECT_EQ(w.frame_complete_size, 4);
	EXPECT_EQ(w.blob_code, 0x30);
	EXPECT_EQ(w.code_is_offset, 0);
	EXPECT_EQ(w.method_const, 8);
	EXPECT_EQ(w.const_size, 0x38);
	EXPECT_EQ(w.const_code_size, 0x2c);
	EXPECT_EQ(w.wrapper_anchor, 0x10);
	EXPECT_EQ(w.anchor_sp, 0);
	EXPECT_EQ(w.anchor_pc, 8);
	EXPECT_EQ(w.anchor_fp, 0x10);
	EXPECT_EQ(w.hb_length, 0);
	EXPECT_EQ(w.hb_used, 8);
	EXPECT_EQ(w.hb_length_size, 8);
	/* the pages of the tables, strings and statics, each read once */
	EXPECT_TRUE(st.reads > 0 && st.reads <= 24);
	EXPECT_EQ(st.bytes, st.reads * 4096);
	EXPECT_TRUE(st.entries >= v->nstructs + v->ntypes);
	free(v);
}

TEST(jdk25_kinds_offset_code_and_short_fields)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct jp_jwalk w;

	ASSERT_TRUE(v != NULL);
	/* JDK 25: _code_offset (an int from the blob), an int16_t frame-complete, a u4 length */
	vf_field(v, "CodeBlob", "_code_offset", "int", 0, 0x1c, 0);
	vf_field(v, "CodeBlob", "_frame_complete_offset", "int16_t", 0, 0x1a, 0);
	vf_field(v, "HeapBlock::Header", "_length", "uint32_t", 0, 0, 0);
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), 0);
	EXPECT_EQ(w.blob_code, 0x1c);
	EXPECT_EQ(w.code_is_offset, 1);
	EXPECT_EQ(w.blob_frame_complete, 0x1a);
	EXPECT_EQ(w.frame_complete_size, 2);
	EXPECT_EQ(w.hb_length_size, 4);
	free(v);
}

TEST(a_jvm_still_starting_is_tried_again)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct jp_jwalk w;

	ASSERT_TRUE(v != NULL);
	vf_put(v, VF_STATICS, 0); /* no code heaps yet */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EAGAIN);
	vf_put(v, VF_STATICS, VF_BASE + VF_GA);
	vf_put(v, VF_STATICS + 8, 0); /* no call stub yet */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EAGAIN);
	vf_put(v, VF_STATICS + 8, VF_STUB_RET);
	vf_put(v, VF_GA, 0); /* the array made, no heap in it */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EAGAIN);
	vf_put(v, VF_GA, 1);
	vf_put(v, 8u * VMS_STRUCTS, 0); /* the table pointer not set (cannot be, but say so) */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EAGAIN);
	free(v);
}

TEST(tables_out_of_bounds_are_refused)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct jp_jwalk w;

	ASSERT_TRUE(v != NULL);
	vf_put(v, 8u * VMS_S_STRIDE, 8); /* a stride no entry fits in */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EPROTO);
	vf_put(v, 8u * VMS_S_STRIDE, VF_S_STRIDE);
	vf_put(v, 8u * VMS_S_ADDRESS, VF_S_STRIDE); /* a field past the entry */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EPROTO);
	vf_put(v, 8u * VMS_S_ADDRESS, 40);
	vf_put(v, VF_GA, 9); /* more heaps than a JVM has */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EPROTO);
	vf_put(v, VF_GA, 1);
	vf_put(v, VF_HEAP + 0x80, 40); /* a segment of 2^40 bytes: jvm_walk_check says no */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EPROTO);
	vf_put(v, VF_HEAP + 0x80, 6);
	vf_type(v, "HeapBlock", 4096); /* later entries win: a HeapBlock BPF cannot read past */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -ENOENT);
	free(v);
}

TEST(missing_symbols_fields_and_unreadable_memory)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct jp_jwalk w;
	__u64 keep = v ? v->syms[VMS_T_STRIDE] : 0;

	ASSERT_TRUE(v != NULL);
	v->syms[VMS_T_STRIDE] = 0; /* not exported */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -ENOENT);
	v->syms[VMS_T_STRIDE] = keep;
	v->limit = VF_STATICS; /* the statics unreadable */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EFAULT);
	v->limit = 0;
	vf_put(v, VF_STATICS, VF_BASE + VF_SIZE + 4096); /* the heaps' array outside memory */
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EFAULT);
	free(v);
	v = vf_new();
	ASSERT_TRUE(v != NULL);
	/* the table ends where its last entry is cut: a field no longer listed */
	memset(v->mem + VF_STRUCTS + 6 * VF_S_STRIDE, 0, 8);
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -ENOENT);
	free(v);
}

/* the fixture's memory, and past it a table without end: every word the same type name */
static int endless_read(void *ctx, __u64 addr, void *buf, size_t n)
{
	__u64 *w = buf;

	if (addr < VF_BASE + VF_SIZE)
		return vf_read(ctx, addr, buf, n);
	for (size_t i = 0; i < n / 8; i++)
		w[i] = VF_BASE + VF_STRINGS; /* "JavaThread": a type the walk does not need */
	return 0;
}

TEST(budgets_of_entries_and_bytes)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct jp_jwalk w;

	ASSERT_TRUE(v != NULL);
	vf_put(v, 8u * VMS_STRUCTS, VF_BASE + VF_SIZE);
	EXPECT_EQ(vmstructs_layout(v->syms, endless_read, v, &w, NULL, &st), -E2BIG);
	EXPECT_EQ(st.entries, VMS_MAX_ENTRIES);
	EXPECT_TRUE(st.bytes <= VMS_MAX_BYTES);
	/* a type table's stride of 0 would read one entry for ever: refused */
	vf_put(v, 8u * VMS_STRUCTS, VF_BASE + VF_STRUCTS);
	vf_put(v, 8u * VMS_T_STRIDE, 0);
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -EPROTO);
	free(v);
	/* bytes: what was read before counts against VMS_MAX_BYTES */
	memset(&st, 0, sizeof(st));
	st.bytes = VMS_MAX_BYTES;
	v = vf_new();
	ASSERT_TRUE(v != NULL);
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, NULL, &st), -E2BIG);
	EXPECT_EQ(st.reads, 0);
	free(v);
}

/* a data symbol (in .bss) and a function, from a shared library's .dynsym */
TEST(symbols_of_any_type_from_the_elf_file)
{
	const char *const names[] = { "fx_sink", "jp_fx_alpha", "no_such_symbol_here" };
	__u64 vals[3], base = 1;
	int fd = open(fx_path("libfx.so"), O_RDONLY | O_CLOEXEC);

	ASSERT_TRUE(fd >= 0);
	EXPECT_EQ(elf_syms__lookup_fd(fd, names, 3, vals, &base), 0);
	EXPECT_TRUE(vals[0] != 0);
	EXPECT_EQ(vals[0], fx_nm("libfx.so", "fx_sink"));
	EXPECT_EQ(vals[1], fx_nm("libfx.so", "jp_fx_alpha"));
	EXPECT_EQ(vals[2], 0);
	EXPECT_EQ(base, 0);
	close(fd);
	/* not an ELF file */
	EXPECT_EQ(elf_syms__lookup_mem("hello", 5, names, 3, vals, &base), -ENOEXEC);
}

TEST(method_names_from_memory)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct vms_names nl;
	struct vmnames_stats ns;
	struct jp_jwalk w;
	struct vmnames *vn;
	struct jp_jframe f = { .pc = 3, .method = VF_BASE + VF_METHOD };
	const char *name;

	ASSERT_TRUE(v != NULL);
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &st), 0);
	EXPECT_TRUE(nl.ok);
	EXPECT_EQ(nl.cp_size, 0x50);
	EXPECT_EQ(nl.nm_method, 0x48);
	/* a hidden class: named as the agent names it, without its address */
	vf_method(v, "pkg/Foo$$Lambda+0x0000000027040210", "run");
	vn = vmnames__new_reader(&w, &nl, vf_read, v);
	ASSERT_TRUE(vn != NULL);
	name = vmnames__frame(vn, &f);
	EXPECT_STREQ(name ? name : "(null)", "pkg/Foo$$Lambda.run");
	/* cached: no read the second time, even once the memory changed */
	vmnames__stats(vn, &ns);
	vf_method(v, "pkg/Other", "run");
	name = vmnames__frame(vn, &f);
	EXPECT_STREQ(name ? name : "(null)", "pkg/Foo$$Lambda.run");
	vmnames__stats(vn, &ns);
	EXPECT_EQ(ns.methods, 1);
	/* a Symbol too long, one with a separator in it, a Method* that reads nothing */
	f.method = VF_BASE + VF_METHOD + 8;
	EXPECT_TRUE(vmnames__frame(vn, &f) == NULL);
	vmnames__free(vn);
	vn = vmnames__new_reader(&w, &nl, vf_read, v);
	ASSERT_TRUE(vn != NULL);
	f.method = VF_BASE + VF_METHOD;
	vf_method(v, "pkg/Bad;Name", "run");
	EXPECT_TRUE(vmnames__frame(vn, &f) == NULL);
	f.method = 0x10; /* unreadable */
	EXPECT_TRUE(vmnames__frame(vn, &f) == NULL);
	/* a compiled pc outside the heaps, or in a heap that cannot be read */
	f = (struct jp_jframe){ .pc = VF_HEAP_LO + 0x1000 };
	EXPECT_TRUE(vmnames__frame(vn, &f) == NULL);
	vmnames__stats(vn, &ns);
	EXPECT_EQ(ns.failed, 2);
	vmnames__free(vn);
	free(v);
}

TEST(thread_list_for_the_walk_from_the_anchor)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct vms_names nl;
	struct jp_jwalk w;
	struct vms_thread t[4];
	size_t n = 0, skipped = 9;
	__u64 list = 0;
	__s32 bad = -1;

	ASSERT_TRUE(v != NULL);
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &st), 0);
	EXPECT_TRUE(nl.threads.ok);
	EXPECT_EQ(nl.threads.list_var, VF_BASE + VF_STATICS + 16);
	EXPECT_EQ(nl.threads.osthread, 0x230);
	EXPECT_EQ(nl.threads.os_tid, 0xd0);
	EXPECT_EQ(nl.threads.state, 0x338);
	EXPECT_EQ(nl.threads.anchor, 0x2a0);
	EXPECT_TRUE(nl.threads.has_stack_base);
	EXPECT_EQ(vmstructs_threads(&nl.threads, vf_read, v, 0, t, 4, &n, &list, &skipped), 0);
	EXPECT_EQ(n, 2);
	EXPECT_EQ(skipped, 0);
	EXPECT_EQ(list, VF_BASE + VF_TL);
	EXPECT_EQ(t[0].tid, VF_TID0);
	EXPECT_EQ(t[0].thread, VF_BASE + VF_JT);
	EXPECT_EQ(t[1].tid, VF_TID0 + 1);
	EXPECT_EQ(t[1].stack_hi, VF_STACK0 + (1u << 20));
	/* the same list: nothing read on */
	EXPECT_EQ(vmstructs_threads(&nl.threads, vf_read, v, list, t, 4, &n, &list, NULL),
		  -EALREADY);
	/* more threads than room, or than any JVM has: refused */
	EXPECT_EQ(vmstructs_threads(&nl.threads, vf_read, v, 0, t, 1, &n, &list, NULL), -E2BIG);
	vf_put(v, VF_TL + 0x8, 0xffffffffu);
	EXPECT_EQ(vmstructs_threads(&nl.threads, vf_read, v, 0, t, 4, &n, &list, NULL), -E2BIG);
	vf_threads(v, 3);
	/* a thread whose OSThread says no tid, one whose OSThread is unreadable: left out */
	memcpy(v->mem + VF_OS + 0xd0, &bad, sizeof(bad));
	vf_put(v, VF_JT + 0x1000 + 0x230, 0x10);
	EXPECT_EQ(vmstructs_threads(&nl.threads, vf_read, v, 0, t, 4, &n, &list, &skipped), 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(skipped, 2);
	EXPECT_EQ(t[0].tid, VF_TID0 + 2);
	/* the array unreadable: the list is gone */
	vf_put(v, VF_TL + 0x10, 0x10);
	EXPECT_EQ(vmstructs_threads(&nl.threads, vf_read, v, 0, t, 4, &n, &list, NULL), -EFAULT);
	/* no list yet */
	vf_put(v, VF_STATICS + 16, 0);
	EXPECT_EQ(vmstructs_threads(&nl.threads, vf_read, v, 0, t, 4, &n, &list, NULL), -EAGAIN);
	/* a field missing: no walk from the anchor, the rest of the layout as before */
	vf_build(v);
	for (size_t i = 0; i < v->nstructs; i++) {
		__u64 fp;
		char name[32];

		memcpy(&fp, v->mem + VF_STRUCTS + i * VF_S_STRIDE + 8, sizeof(fp));
		memcpy(name, v->mem + (fp - VF_BASE), sizeof(name));
		if (!strcmp(name, "_thread_id"))
			memcpy(v->mem + (fp - VF_BASE), "_thread_xx", 10);
	}
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &st), 0);
	EXPECT_TRUE(!nl.threads.ok);
	EXPECT_EQ(vmstructs_threads(&nl.threads, vf_read, v, 0, t, 4, &n, &list, NULL), -EINVAL);
	free(v);
}

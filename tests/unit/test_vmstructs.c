// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_vmstructs.c: BPF's Java walk layout read from a JVM's VMStructs tables, on a
 * synthetic JVM memory in a buffer (vms_fixture.h): the layout the agent would publish, a
 * JVM still starting (try again), tables out of bounds, reads that fail, the budgets; the
 * thread list read one by one and in batches (also this process's own, through
 * process_vm_readv); and the symbols from an ELF file (this test binary's own exported data).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "harness.h"
#include "vms_fixture.h"
#include "jvm/vmnames_int.h"
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

/* the reads and batches asked for (a syscall each through a pid); a list replaced meanwhile */
struct vf_calls {
	struct vf *v;
	unsigned int reads, readvs, list_reads;
	__u64 list_var;
	__u64 replaced; /* not 0: what the list var says from its second read on */
	bool broken;	/* every batch fails whole (as an ENOMEM would) */
};

static int calls_read(void *ctx, __u64 addr, void *buf, size_t n)
{
	struct vf_calls *c = ctx;

	c->reads++;
	if (c->replaced && addr == c->list_var && n == sizeof(c->replaced) && c->list_reads++) {
		memcpy(buf, &c->replaced, n);
		return 0;
	}
	return vf_read(c->v, addr, buf, n);
}

static size_t calls_readv(void *ctx, const struct vms_iov *v, size_t n)
{
	struct vf_calls *c = ctx;

	c->readvs++;
	return c->broken ? 0 : vf_readv(c->v, v, n);
}

#define THR_BIG 300 /* three batches of 128 threads */

struct thr_read {
	int err;
	size_t n, skipped;
	__u64 list;
	struct vms_thread t[THR_BIG];
};

/*
 * t's list read one by one and in batches: whether both said the same (the batched read's
 * results in *r, its calls in *c)
 */
static bool threads_both(const struct vms_threads *t, struct vf_calls *c, __u64 prev_list,
			 size_t cap, struct thr_read *r)
{
	static struct thr_read one;

	memset(&one, 0, sizeof(one));
	memset(r, 0, sizeof(*r));
	c->list_var = t->list_var;
	c->reads = c->readvs = c->list_reads = 0;
	one.err = vmstructs_threads(t, calls_read, c, prev_list, one.t, cap, &one.n, &one.list,
				    &one.skipped);
	c->reads = c->readvs = c->list_reads = 0;
	r->err = vmstructs_threads_v(t, calls_read, calls_readv, c, prev_list, r->t, cap, &r->n,
				     &r->list, &r->skipped);
	return r->err == one.err && r->list == one.list && r->n == one.n &&
	       r->skipped == one.skipped && !memcmp(r->t, one.t, one.n * sizeof(one.t[0]));
}

TEST(thread_list_in_batches_reads_as_one_by_one)
{
	struct vf *v = vf_new();
	struct vms_stats st = {0};
	struct vms_names nl;
	struct jp_jwalk w;
	struct vf_calls c = {.v = v};
	static struct thr_read r;
	__s32 zero = 0;

	ASSERT_TRUE(v != NULL);
	ASSERT_TRUE(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &st) == 0);
	vf_threads(v, 4);
	/* the list var, a batch (_length, _threads), the array, two batches, the list var */
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.err, 0);
	EXPECT_EQ(r.n, 4);
	EXPECT_EQ(r.t[3].thread, VF_BASE + VF_JT + 0x3000);
	EXPECT_EQ(r.t[3].tid, VF_TID0 + 3);
	EXPECT_EQ(r.t[3].stack_hi, VF_STACK0 + 3 * (1u << 20));
	EXPECT_EQ(c.reads, 3);
	EXPECT_EQ(c.readvs, 3);
	/* the same list: nothing read on; more threads than room */
	EXPECT_TRUE(threads_both(&nl.threads, &c, VF_BASE + VF_TL, 4, &r));
	EXPECT_EQ(r.err, -EALREADY);
	EXPECT_EQ(c.reads + c.readvs, 1);
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 3, &r));
	EXPECT_EQ(r.err, -E2BIG);
	/*
	 * thread 1's JavaThread unreadable: the first batch faults in its middle, at its
	 * _osthread; the entries after it read all the same. Thread 2's OSThread says tid 0.
	 */
	vf_put(v, VF_TL + 0x100 + 8, 0x10);
	memcpy(v->mem + VF_OS + 0x200 + 0xd0, &zero, sizeof(zero));
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.err, 0);
	EXPECT_EQ(r.n, 2);
	EXPECT_EQ(r.skipped, 2);
	EXPECT_EQ(r.t[0].tid, VF_TID0);
	EXPECT_EQ(r.t[1].tid, VF_TID0 + 3);
	EXPECT_EQ(r.t[1].stack_hi, VF_STACK0 + 3 * (1u << 20));
	/* its two entries read alone, each followed by a batch of the rest (the second empty) */
	EXPECT_EQ(c.reads, 3 + 2);
	EXPECT_EQ(c.readvs, 3 + 2);
	/* a NULL slot; thread 2's OSThread unreadable: the tid batch faults in its middle */
	vf_threads(v, 4);
	vf_put(v, VF_TL + 0x100, 0);
	vf_put(v, VF_JT + 0x2000 + 0x230, 0x10);
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.err, 0);
	EXPECT_EQ(r.n, 2);
	EXPECT_EQ(r.skipped, 2);
	EXPECT_EQ(r.t[0].tid, VF_TID0 + 1);
	EXPECT_EQ(r.t[1].tid, VF_TID0 + 3);
	/* batches that fail whole while reads alone do not: each batch tried once */
	c.broken = true;
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.n, 2);
	EXPECT_EQ(c.readvs, 3);
	c.broken = false;
	/* no stack base exported: 0, and not read */
	nl.threads.has_stack_base = 0;
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.n, 2);
	EXPECT_EQ(r.t[1].stack_hi, 0);
	nl.threads.has_stack_base = 1;
	/* the array unreadable, then the list itself: gone */
	vf_put(v, VF_TL + 0x10, 0x10);
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.err, -EFAULT);
	vf_put(v, VF_TL + 0x10, VF_BASE + VF_TL + 0x100);
	vf_put(v, VF_STATICS + 16, 0x10);
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.err, -EFAULT);
	/* replaced while it was read: try again */
	vf_put(v, VF_STATICS + 16, VF_BASE + VF_TL);
	c.replaced = VF_BASE + VF_TL + 0x800;
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.err, -EAGAIN);
	EXPECT_EQ(r.list, VF_BASE + VF_TL);
	c.replaced = 0;
	/* no list yet */
	vf_put(v, VF_STATICS + 16, 0);
	EXPECT_TRUE(threads_both(&nl.threads, &c, 0, 4, &r));
	EXPECT_EQ(r.err, -EAGAIN);
	free(v);
}

/*
 * n threads (t's offsets set to match): the array at VF_BIG_ARR, JavaThread i at
 * VF_BIG_JT + 24 i its own OSThread {_osthread (itself), _stack_base, _thread_id 1000 + i}
 */
#define VF_BIG_ARR 0x3a000u
#define VF_BIG_JT  0x3b000u
static void vf_big(struct vf *v, struct vms_threads *t, unsigned int n)
{
	vf_put(v, VF_STATICS + 16, VF_BASE + VF_TL);
	vf_put(v, VF_TL + 0x8, n);
	vf_put(v, VF_TL + 0x10, VF_BASE + VF_BIG_ARR);
	for (unsigned int i = 0; i < n; i++) {
		size_t jt = VF_BIG_JT + 24 * i;
		__s32 tid = (__s32)(1000 + i);

		vf_put(v, VF_BIG_ARR + 8 * i, VF_BASE + jt);
		vf_put(v, jt, VF_BASE + jt);
		vf_put(v, jt + 8, VF_STACK0 + ((__u64)i << 20));
		memcpy(v->mem + jt + 16, &tid, sizeof(tid));
	}
	t->osthread = 0;
	t->stack_base = 8;
	t->os_tid = 16;
}

TEST(thread_list_larger_than_a_batch)
{
	struct vf *v = vf_new();
	struct vms_stats st = {0};
	struct vms_names nl;
	struct vms_threads t;
	struct jp_jwalk w;
	struct vf_calls c = {.v = v};
	static struct thr_read r;
	__s32 tid;

	ASSERT_TRUE(v != NULL);
	ASSERT_TRUE(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &st) == 0);
	t = nl.threads;
	vf_big(v, &t, THR_BIG);
	/* three of 128 threads: each a read of the array, a batch of fields, one of tids */
	EXPECT_TRUE(threads_both(&t, &c, 0, THR_BIG, &r));
	EXPECT_EQ(r.err, 0);
	EXPECT_EQ(r.n, THR_BIG);
	EXPECT_EQ(r.t[THR_BIG - 1].tid, 1000 + THR_BIG - 1);
	EXPECT_EQ(r.t[THR_BIG - 1].stack_hi, VF_STACK0 + ((__u64)(THR_BIG - 1) << 20));
	EXPECT_EQ(c.reads, 1 + 3 + 1);
	EXPECT_EQ(c.readvs, 1 + 3 * 2);
	EXPECT_TRUE(threads_both(&t, &c, 0, THR_BIG - 1, &r));
	EXPECT_EQ(r.err, -E2BIG);
	/* every way of being left out, at a batch's ends and in its middle */
	vf_put(v, VF_BIG_ARR + 8 * 3, 0);      /* a NULL slot */
	vf_put(v, VF_BIG_ARR + 8 * 7, 0x10);   /* its _osthread unreadable */
	vf_put(v, VF_BIG_JT + 24 * 127, 0x20); /* its tid unreadable: a batch's last */
	vf_put(v, VF_BIG_JT + 24 * 130, 0x10); /* the same, in the second */
	vf_put(v, VF_BIG_ARR + 8 * 140, VF_BASE + VF_SIZE - 8); /* its _stack_base past memory */
	vf_put(v, VF_SIZE - 8, VF_BASE + VF_BIG_JT);		/* (its OSThread thread 0's) */
	tid = 0;
	memcpy(v->mem + VF_BIG_JT + 24 * 200 + 16, &tid, sizeof(tid));
	tid = -5;
	memcpy(v->mem + VF_BIG_JT + 24 * (THR_BIG - 1) + 16, &tid, sizeof(tid));
	EXPECT_TRUE(threads_both(&t, &c, 0, THR_BIG, &r));
	EXPECT_EQ(r.err, 0);
	EXPECT_EQ(r.skipped, 7);
	EXPECT_EQ(r.n, THR_BIG - 7);
	EXPECT_EQ(r.t[3].tid, 1004);
	EXPECT_EQ(r.t[r.n - 1].tid, 1000 + THR_BIG - 2);
	/* each of the 5 entries that failed: read alone, then a batch of the rest */
	EXPECT_TRUE(c.reads + c.readvs <= 12 + 2 * 5);
	/* no stack base: thread 140 kept, with the tid its OSThread says */
	t.has_stack_base = 0;
	EXPECT_TRUE(threads_both(&t, &c, 0, THR_BIG, &r));
	EXPECT_EQ(r.err, 0);
	EXPECT_EQ(r.skipped, 6);
	EXPECT_EQ(r.t[140 - 4].thread, VF_BASE + VF_SIZE - 8);
	EXPECT_EQ(r.t[140 - 4].tid, 1000);
	EXPECT_EQ(r.t[0].stack_hi, 0);
	t.has_stack_base = 1;
	/* the array cut short in the third batch: the list is gone */
	vf_put(v, VF_TL + 0x10, VF_BASE + VF_SIZE - 8 * 260);
	EXPECT_TRUE(threads_both(&t, &c, 0, THR_BIG, &r));
	EXPECT_EQ(r.err, -EFAULT);
	/* replaced while it was read */
	vf_put(v, VF_TL + 0x10, VF_BASE + VF_BIG_ARR);
	c.replaced = VF_BASE + VF_TL + 0x800;
	EXPECT_TRUE(threads_both(&t, &c, 0, THR_BIG, &r));
	EXPECT_EQ(r.err, -EAGAIN);
	free(v);
}

/*
 * Every process_vm_readv of this binary counted: vmstructs.c's calls bind to this
 * definition, which does what libc's does
 */
static unsigned int pvr_calls;

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt,
			 const struct iovec *remote, unsigned long riovcnt, unsigned long flags)
{
	pvr_calls++;
	return syscall(SYS_process_vm_readv, pid, local, liovcnt, remote, riovcnt, flags);
}

/* this process's memory, one read a syscall (vmstructs.c's reads before batches) */
static int self_read(void *ctx, __u64 addr, void *buf, size_t n)
{
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};

	return process_vm_readv(*(const pid_t *)ctx, &local, 1, &remote, 1, 0) == (ssize_t)n
		       ? 0
		       : -EFAULT;
}

/* a JavaThread that is its own OSThread, as vf_big lays them out */
struct self_thread {
	__u64 os, stack_base;
	__s32 tid, pad;
};

#define SELF_N 40

/* a list in this process's own memory read through process_vm_readv: a syscall a batch */
TEST(thread_list_of_this_process_a_syscall_a_batch)
{
	static struct self_thread thr[SELF_N];
	static __u64 arr[SELF_N], list[3], list_var;
	static struct thr_read one, bat;
	const struct vms_threads t = {.list_var = (uintptr_t)&list_var,
				      .list_length = 8,
				      .list_threads = 16,
				      .osthread = 0,
				      .os_tid = 16,
				      .stack_base = 8,
				      .has_stack_base = 1,
				      .ok = 1};
	pid_t pid = getpid();
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *edge =
		mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	__u64 p;
	unsigned int calls;

	ASSERT_TRUE(edge != MAP_FAILED);
	ASSERT_TRUE(!mprotect(edge + pg, pg, PROT_NONE));
	list_var = (uintptr_t)list;
	list[1] = SELF_N; /* _length, a u32 */
	list[2] = (uintptr_t)arr;
	for (unsigned int i = 0; i < SELF_N; i++) {
		thr[i] = (struct self_thread){(uintptr_t)&thr[i], VF_STACK0 + ((__u64)i << 20),
					      (__s32)(2000 + i), 0};
		arr[i] = (uintptr_t)&thr[i];
	}
	pvr_calls = 0;
	EXPECT_EQ(vmstructs_threads_pid((__u32)pid, &t, 0, bat.t, SELF_N, &bat.n, &bat.list,
					&bat.skipped),
		  0);
	EXPECT_EQ(pvr_calls, 6);
	EXPECT_EQ(bat.n, SELF_N);
	EXPECT_EQ(bat.list, (uintptr_t)list);
	EXPECT_EQ(bat.t[SELF_N - 1].tid, 2000 + SELF_N - 1);
	EXPECT_EQ(bat.t[SELF_N - 1].thread, (uintptr_t)&thr[SELF_N - 1]);
	pvr_calls = 0;
	EXPECT_EQ(vmstructs_threads_pid((__u32)pid, &t, bat.list, bat.t, SELF_N, &bat.n, &bat.list,
					NULL),
		  -EALREADY);
	EXPECT_EQ(pvr_calls, 1);
	/*
	 * faults in the middle of both batches: a JavaThread* and an OSThread* in the zero
	 * page, a _stack_base and a tid cut by a page this process cannot read (the kernel
	 * copies part of each before it stops)
	 */
	arr[10] = 8;
	thr[20].os = 16;
	p = (uintptr_t)&thr[0];
	memcpy(edge + pg - 12, &p, sizeof(p));
	arr[25] = (uintptr_t)(edge + pg - 12);
	thr[30].os = (uintptr_t)(edge + pg - 2 - 16);
	pvr_calls = 0;
	EXPECT_EQ(vmstructs_threads_pid((__u32)pid, &t, 0, bat.t, SELF_N, &bat.n, &bat.list,
					&bat.skipped),
		  0);
	calls = pvr_calls;
	pvr_calls = 0;
	EXPECT_EQ(vmstructs_threads(&t, self_read, &pid, 0, one.t, SELF_N, &one.n, &one.list,
				    &one.skipped),
		  0);
	EXPECT_EQ(bat.n, SELF_N - 4);
	EXPECT_EQ(bat.skipped, 4);
	EXPECT_EQ(one.n, bat.n);
	EXPECT_EQ(one.skipped, bat.skipped);
	EXPECT_TRUE(!memcmp(one.t, bat.t, bat.n * sizeof(bat.t[0])));
	EXPECT_EQ(bat.t[10].tid, 2011);
	EXPECT_EQ(bat.t[SELF_N - 5].tid, 2000 + SELF_N - 1);
	/*
	 * 6, and for each of the 3 entries the fields' batch stopped at and the 2 of the
	 * tids': a read alone and a batch of the rest. One by one: about 3 a thread.
	 */
	EXPECT_EQ(calls, 6 + 2 * 3 + 2 * 2);
	EXPECT_TRUE(pvr_calls > 3 * SELF_N);
	munmap(edge, 2 * pg);
}

/* UNSIGNED5 as HotSpot writes it: below L one byte, else L + 6 bits at a time, x added */
static size_t u5_put(unsigned char *b, __u32 val, unsigned int x)
{
	const __u32 low = 256 - 64 - x;
	size_t n = 0;

	for (int i = 0; i < 4 && val >= low; i++) {
		val -= low;
		b[n++] = (unsigned char)(low + (val & 63) + x);
		val >>= 6;
	}
	b[n++] = (unsigned char)(val + x);
	return n;
}

TEST(unsigned5_and_scope_headers)
{
	const __u32 vals[] = {0, 1, 190, 191, 192, 255, 300, 12345, 1u << 20, 0x7fffffff};
	unsigned char b[64];
	struct vn_scope sc;

	for (unsigned int x = 0; x <= 1; x++) {
		for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			size_t len = u5_put(b, vals[i], x), pos = 0;
			__u32 got = 0;

			EXPECT_EQ(vn_u5(b, len, &pos, x, &got), 0);
			EXPECT_EQ(got, vals[i]);
			EXPECT_EQ(pos, len);
			/* cut short: refused */
			pos = 0;
			if (len > 1)
				EXPECT_EQ(vn_u5(b, len - 1, &pos, x, &got), -EPROTO);
		}
	}
	/* an excluded byte (0 since JDK 20) is refused */
	b[0] = 0;
	{
		size_t pos = 0;
		__u32 got;

		EXPECT_EQ(vn_u5(b, 1, &pos, 1, &got), -EPROTO);
	}
	/* a scope: sender before it, a method index, bci - InvocationEntryBci */
	b[0] = 3, b[1] = 2, b[2] = 8;
	EXPECT_EQ(vn_scope_decode(b, 3, 5, 0, &sc), 0);
	EXPECT_EQ(sc.sender, 3);
	EXPECT_EQ(sc.midx, 2);
	EXPECT_EQ(sc.bci, 7);
	/* a caller's scope after its callee's (a loop), index 0, a bci out of range */
	EXPECT_EQ(vn_scope_decode(b, 3, 3, 0, &sc), -EPROTO);
	b[1] = 0;
	EXPECT_EQ(vn_scope_decode(b, 3, 5, 0, &sc), -EPROTO);
	b[1] = 2;
	EXPECT_EQ(vn_scope_decode(b, 2 + u5_put(b + 2, 70000, 0), 5, 0, &sc), -EPROTO);
}

TEST(pcdesc_found_as_the_agent_finds_it)
{
	const __s32 pcs[5][4] = {{-1, 0}, {0x70, 9}, {0x80, 0}, {0x90, 12}, {0x7fffffff, 0}};
	__u32 scope = 0;

	/* a return address at a recorded pc: that one; between: the next with a scope */
	EXPECT_EQ(vn_pcdesc_find((const __u8 *)pcs, 5, 16, 0, 4, 0x70, &scope), 1);
	EXPECT_EQ(scope, 9);
	EXPECT_EQ(vn_pcdesc_find((const __u8 *)pcs, 5, 16, 0, 4, 0x71, &scope), 3);
	EXPECT_EQ(scope, 12);
	/* past the last with a scope: none (the sentinel has none) */
	EXPECT_EQ(vn_pcdesc_find((const __u8 *)pcs, 5, 16, 0, 4, 0x91, &scope), -ENOENT);
	/* a stride that cannot hold the fields */
	EXPECT_EQ(vn_pcdesc_find((const __u8 *)pcs, 5, 4, 0, 4, 0, &scope), -EINVAL);
}

/* a compiled frame named with the method inlined at its pc, JDK 17's encoding and 20's */
TEST(inlined_frames_from_the_debug_info)
{
	for (unsigned int x = 0; x <= 1; x++) {
		struct vf *v = vf_new();
		struct vms_stats st = { 0 };
		struct vmnames_stats ns;
		struct vms_names nl;
		struct jp_jwalk w;
		struct vmnames *vn;
		const char *names[VMNAMES_MAX_CHAIN];
		struct jp_jframe f = { .pc = VF_BASE + VF_NM_CODE + 0x80 };

		ASSERT_TRUE(v != NULL);
		EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &st), 0);
		EXPECT_EQ(nl.dbg.layout, VMS_DBG_OFFSETS);
		EXPECT_EQ(nl.dbg.pcd_size, 16);
		vf_nmethod(v, &w, x);
		vn = vmnames__new_reader(&w, &nl, vf_read, v);
		ASSERT_TRUE(vn != NULL);
		/* interrupted between the two: the next recorded pc's scope, inlined first */
		ASSERT_TRUE(vmnames__frames(vn, &f, VMN_AT_TOP, names, VMNAMES_MAX_CHAIN) == 2);
		EXPECT_STREQ(names[0], "pkg/Inl.inner");
		EXPECT_STREQ(names[1], "pkg/Foo.run");
		/* a return address at 0x70: the method alone; at 0x90 the inlined one too */
		f.pc = VF_BASE + VF_NM_CODE + 0x70;
		EXPECT_EQ(vmnames__frames(vn, &f, VMN_AT_RET, names, VMNAMES_MAX_CHAIN), 1);
		EXPECT_STREQ(names[0], "pkg/Foo.run");
		/* interrupted at 0x70: the scope after it */
		EXPECT_EQ(vmnames__frames(vn, &f, VMN_AT_TOP, names, VMNAMES_MAX_CHAIN), 2);
		/* the method alone when asked (a prologue), or when the chain does not fit */
		EXPECT_EQ(vmnames__frames(vn, &f, VMN_ROOT, names, VMNAMES_MAX_CHAIN), 1);
		EXPECT_EQ(vmnames__frames(vn, &f, VMN_AT_TOP, names, 1), 1);
		EXPECT_STREQ(names[0], "pkg/Foo.run");
		f.pc = VF_BASE + VF_NM_CODE + 0x90;
		EXPECT_EQ(vmnames__frames(vn, &f, VMN_AT_RET, names, VMNAMES_MAX_CHAIN), 2);
		EXPECT_STREQ(names[0], "pkg/Inl.inner");
		/* past the last scope: the method alone, as the agent's records name it */
		f.pc = VF_BASE + VF_NM_CODE + 0x95;
		EXPECT_EQ(vmnames__frames(vn, &f, VMN_AT_TOP, names, VMNAMES_MAX_CHAIN), 1);
		EXPECT_STREQ(names[0], "pkg/Foo.run");
		vmnames__stats(vn, &ns);
		/* one per pc and place read: 0x80, 0x70 interrupted, 0x70, 0x90 returned to */
		EXPECT_EQ(ns.chains, 4);
		EXPECT_EQ(ns.inlined, 3);
		EXPECT_EQ(ns.dbg_noscope, 1);
		EXPECT_EQ(ns.dbg_failed, 0);
		EXPECT_TRUE(ns.dbg_bytes > 0 && ns.dbg_bytes < 4096);
		vmnames__free(vn);

		/* hostile tables: each falls back to the compiled method alone, counted */
		for (int bad = 0; bad < 5; bad++) {
			__s32 big = 0x7ffffff0;

			vf_nmethod(v, &w, x);
			if (bad == 0) /* the inlined scope names a metadata slot past the table */
				v->mem[VF_NM + 0x210 + 5] = (unsigned char)(9 + x);
			else if (bad == 1) /* its caller's scope after it: a loop */
				v->mem[VF_NM + 0x210 + 4] = (unsigned char)(6 + x);
			else if (bad == 2) /* the outermost method is not the nmethod's */
				vf_put(v, VF_NM + 0x208, VF_BASE + VF_METHOD2);
			else if (bad == 3) /* tables past any size believed */
				memcpy(v->mem + VF_NM + 0x68, &big, 4);
			else /* the PcDesc's scope offset outside the scopes data */
				memcpy(v->mem + VF_NM + 0x220 + 2 * 16 + 4, &big, 4);
			vn = vmnames__new_reader(&w, &nl, vf_read, v);
			ASSERT_TRUE(vn != NULL);
			f.pc = VF_BASE + VF_NM_CODE + 0x80;
			EXPECT_EQ(vmnames__frames(vn, &f, VMN_AT_TOP, names, VMNAMES_MAX_CHAIN), 1);
			EXPECT_STREQ(names[0], "pkg/Foo.run");
			vmnames__stats(vn, &ns);
			EXPECT_EQ(ns.chains, 0);
			EXPECT_EQ(ns.dbg_failed, 1);
			vmnames__free(vn);
		}
		free(v);
	}
}

/* JDK 25: the tables in the nmethod's immutable data, the metadata in its mutable data */
TEST(inlined_frames_jdk25_immutable_and_mutable_data)
{
	struct vf *v = vf_new();
	struct vms_stats st = { 0 };
	struct vms_names nl;
	struct jp_jwalk w;
	struct vmnames *vn;
	const char *names[VMNAMES_MAX_CHAIN];
	struct jp_jframe f = { .pc = VF_BASE + VF_NM_CODE + 0x80 };
	const __s32 i32[][2] = {{0x1c, 0x100}, {0x78, 0x60}, {0x7c, 0x10}, {0x80, 0x50},
				{0x90, 0x30}, {0x94, 0x20}};

	ASSERT_TRUE(v != NULL);
	vf_field(v, "CodeBlob", "_code_offset", "int", 0, 0x1c, 0);
	vf_field(v, "nmethod", "_immutable_data", "address", 0, 0x70, 0);
	vf_field(v, "nmethod", "_immutable_data_size", "int", 0, 0x78, 0);
	vf_field(v, "nmethod", "_scopes_pcs_offset", "int", 0, 0x7c, 0);
	vf_field(v, "nmethod", "_scopes_data_offset", "int", 0, 0x80, 0);
	vf_field(v, "CodeBlob", "_mutable_data", "address", 0, 0x88, 0);
	vf_field(v, "CodeBlob", "_mutable_data_size", "int", 0, 0x90, 0);
	vf_field(v, "CodeBlob", "_relocation_size", "int", 0, 0x94, 0);
	EXPECT_EQ(vmstructs_layout(v->syms, vf_read, v, &w, &nl, &st), 0);
	ASSERT_TRUE(nl.dbg.layout == VMS_DBG_IMMUTABLE);
	/* JDK 17's tables moved: PcDescs then scopes data at 0x300, metadata at 0x420 */
	vf_nmethod(v, &w, 1);
	memcpy(v->mem + VF_NM + 0x300 + 0x10, v->mem + VF_NM + 0x220, 0x40);
	memcpy(v->mem + VF_NM + 0x300 + 0x50, v->mem + VF_NM + 0x210, 0x10);
	memcpy(v->mem + VF_NM + 0x420, v->mem + VF_NM + 0x200, 0x10);
	memset(v->mem + VF_NM + 0x200, 0, 0x60);
	vf_put(v, VF_NM + 0x70, VF_BASE + VF_NM + 0x300);
	vf_put(v, VF_NM + 0x88, VF_BASE + VF_NM + 0x400);
	for (size_t i = 0; i < sizeof(i32) / sizeof(i32[0]); i++)
		memcpy(v->mem + VF_NM + i32[i][0], &i32[i][1], 4);
	vn = vmnames__new_reader(&w, &nl, vf_read, v);
	ASSERT_TRUE(vn != NULL);
	ASSERT_TRUE(vmnames__frames(vn, &f, VMN_AT_TOP, names, VMNAMES_MAX_CHAIN) == 2);
	EXPECT_STREQ(names[0], "pkg/Inl.inner");
	EXPECT_STREQ(names[1], "pkg/Foo.run");
	vmnames__free(vn);
	free(v);
}

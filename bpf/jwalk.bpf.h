/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * jwalk.bpf.h: the Java walk in BPF (see jprof.h). A HotSpot x86-64 thread interrupted in
 * the code cache: its frames are walked by the layout its agent read from libjvm's own
 * VMStructs, every read a bpf_probe_read_user of the sampled thread's memory (a bad
 * address fails the read, never the thread), every loop bounded; any doubt ends the walk
 * with a JP_JW_* reason, and the frames so far are kept only as the reason says.
 *
 *  - a pc in an nmethod (CodeBlob::_name "nmethod"), past its frame-complete offset: the
 *    frame is CodeBlob::_frame_size words above sp; the return address and the caller's
 *    rbp are the two words below its end. At the top frame, a pc on the epilogue's
 *    `pop rbp`, return poll or `ret` has the frame popped already.
 *  - a pc in the template interpreter (the blob "Interpreter"): rbp is the frame; the
 *    Method* is at rbp - 3 words and the bcp at rbp - 8 (HotSpot's x86-64
 *    frame_x86.hpp, not exported), checked: the bcp must lie in that method's bytecodes
 *    (the frame goes out as the Method* and the bci).
 *    The caller's sp is the saved sender sp (rbp - 1), its rbp the saved one (rbp).
 *  - the call stub's return address is the entry frame: the walk is complete.
 * The blob of a pc is found as CodeHeap::find_blob does: the heap's segment map, one byte
 * per segment, holds how many segments back to hop towards the block's first segment
 * (0: here, 0xff: free).
 */
#ifndef JPROF_JWALK_BPF_H
#define JPROF_JWALK_BPF_H

/* JP_JWALK_*: walk the Java frames of JVM samples (shadow: and still signal) */
const volatile __u8 java_walk = JP_JWALK_OFF;

/*
 * interpreted methods the join can name (see jprof.h); user space adds, deletes. The value:
 * the entry's generation (never 0), new at each add, so that what a walk cached of the
 * method (jw_mcached) holds only for the entry it was cached under
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JP_MAX_JW_METHODS);
	__type(key, struct jp_jw_method);
	__type(value, __u32);
} jw_methods SEC(".maps");

/* tgid -> the layout of that JVM (user space sets it beside the jvms entry) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JP_MAX_JVMS);
	__type(key, __u32);
	__type(value, struct jp_jwalk);
} jwalk SEC(".maps");

/* tid -> its JavaThread (see jprof.h): user space fills it, exits delete */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JP_MAX_JTHREADS);
	__type(key, __u32);
	__type(value, struct jp_jthread);
} jthreads SEC(".maps");

#define JW_INTERP_WORDS 10 /* from the bcp slot (rbp - 8 words) to the return address */

/*
 * Where a known interpreted method's bytecodes lie (its ConstMethod's, read through the
 * Method*: two reads a frame, and a thread's few interpreted frames at the bottom of its
 * stack come in every sample), per CPU, direct-mapped by Method*. An entry holds for the
 * jw_methods entry of that generation only: user space deletes an entry when its Method*
 * names another method, and adds it anew with a new generation.
 */
#define JW_MCACHE 256
struct jw_mcached {
	__u64 method, base;
	__u32 tgid, gen;
	__u16 code_size, pad[3];
};

/*
 * The blob of a pc seen before, per CPU, direct-mapped by pc: the segment map's 1-3
 * hops a frame are most of a walk's reads (each bpf_probe_read_user ~140 ns here). An
 * entry is believed only when the HeapBlock before its blob, read with the blob's header
 * anyway, says the block is in use and reaches past pc: blocks do not overlap, so that is
 * the block of pc (a block freed since says unused; one reallocated from another start
 * has instructions there, not a header). Not used where the agent could not say where
 * HeapBlock keeps its length and use (hb_length_size 0).
 */
#define JW_CACHE 256
struct jw_cached {
	__u64 pc, blob;
	__u32 tgid, pad;
};

/*
 * The stack words a walk reads (a frame's saved rbp and return address, an interpreted
 * frame's slots) come from one read of up to JW_WIN_WORDS words, up to the end of the page
 * they start in (a stack's last page may be followed by none): a frame costs its code
 * blob's read and, most of the time, no read of the stack
 */
#define JW_WIN_WORDS 256
#define JW_PAGE	     4096
#define JW_C2I_WIN 256 /* bytes of an adapter's code read before the interrupted pc */
#define JW_C2I_BUF 512

struct jw_state {
	struct jp_jwalk w; /* the JVM's layout, copied: the loop's steps read it here */
	__u64 pc, sp, fp;
	__u32 n;
	__s32 err;
	__u32 top;
	__u32 tgid;
	__u32 unknown; /* interpreted frames whose Method* is not in jw_methods */
	__u32 verify;  /* walks since the last one that signalled anyway */
	/*
	 * the name pointers of "nmethod", "Interpreter" and "native nmethod" (a native
	 * method's wrapper: a compiled frame) in JVM name_tgid: one read less
	 */
	__u64 name_nmethod, name_interp, name_native;
	__u32 name_tgid;
	__u32 hops; /* segment-map hops left to this walk */
	__u32 stubs; /* stub frames passed (no frame out) */
	__u32 prologue; /* the top frame was in its prologue */
	__u32 at_call;	/* the first Java frame is at a call (JP_SF_AT_CALL) */
	__u32 stub_fp;	/* a stub was passed by its rbp frame (JP_SF_STUB_FP) */
	__u32 mh;	/* a method handle intrinsic at the top (JP_SF_MH_INTRINSIC) */
	__u32 need_interp; /* the next frame must be interpreted (after an I2C adapter) */
	__u32 need_compiled; /* ... compiled (after a C2I adapter) */
	__u32 c2i;	     /* a C2I adapter at the top was passed (JP_SF_C2I) */
	__u64 r13;	     /* the interrupted r13: a C2I adapter's sender sp */
	/* the HeapBlock before the blob (hb bytes, 0 without hb_length_size), the blob's first bytes */
	__u8 blk[2 * JP_JW_HEAP_BLOCK + JP_JW_BLOB_HDR + 8];
	__u32 hb;
	struct jw_cached cache[JW_CACHE];
	struct jw_cached tcache[JW_CACHE]; /* the same for interrupted pcs, by segment */
	struct jw_mcached mcache[JW_MCACHE];
	__u8 code[JW_C2I_BUF]; /* the code before an interrupted pc in an adapter (jw_c2i) */
	__u64 slots[JW_INTERP_WORDS];   /* an interpreted frame's words, rbp - 8 to rbp + 1 */
	/* the sampled thread's stack from win_lo, win_n words (jw_stack); 0: none yet */
	__u64 win_lo;
	__u32 win_n, win_pad;
	__u64 win[JW_WIN_WORDS];
	struct jp_jframe f[JP_MAX_JFRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jw_state);
} jw_states SEC(".maps");

#define JW_HOPS		   32	/* segment-map hops: 32 x 254 segments, megabytes of code */
/*
 * hops for all the frames of one walk: real ones take 1-3 a frame; a layout that makes
 * every frame take 32 must not make one sample cost thousands of reads
 */
#define JW_WALK_HOPS 256
#define JW_MAX_FRAME_WORDS 65536 /* a compiled frame larger than 512 KiB is not believed */
#define JW_METHOD_SLOT	   3	 /* words below rbp */
#define JW_BCP_SLOT	   8
#define JW_SENDER_SP_SLOT  1
#define JW_INITIAL_SP_SLOT 9	 /* an interpreted frame's last fixed slot: whole once sp is here */
#define JW_WRAPPER_SLOT	   6	 /* an entry frame's JavaCallWrapper*, words below rbp */
#define JW_MAX_STUBS	   4
#define JW_MAX_PROLOGUE	   160	 /* bytes from a method's code to its frame-complete offset */
#define JW_STUB_FRAME	   4096	 /* an interrupted stub's rbp frame: at most this above sp */	 /* stub frames a walk passes: more is a loop */
#define JW_MAX_STACK	   (1ull << 30) /* anchor above the sampled sp by more: not believed */

/* the first 8 bytes of the names HotSpot gives its blobs (little-endian) */
#define JW_NAME_NMETHOD 0x00646f6874656d6eull /* "nmethod\0" */
#define JW_NAME_INTERP1 0x6572707265746e49ull /* "Interpre" */
#define JW_NAME_INTERP2 0x00726574ull	      /* "ter\0" */
#define JW_NAME_VTABLE  0x6320656c62617476ull /* "vtable c" (vtable chunks) */
#define JW_NAME_ADAPTER 0x204932432f433249ull /* "I2C/C2I " (adapters) */
#define JW_NAME_NATIVE1 0x6e2065766974616eull /* "native n" */
#define JW_NAME_NATIVE2 0x0000646f6874656dull /* "method\0" (6 bytes and the NUL) */

static __always_inline int jw_read(void *dst, __u32 n, __u64 addr)
{
	return bpf_probe_read_user(dst, n, (const void *)addr) ? JP_JW_READ : 0;
}

static __always_inline __u64 jw_word(__u64 addr, int *err)
{
	__u64 v = 0;

	if (!*err)
		*err = jw_read(&v, sizeof(v), addr);
	return v;
}

/*
 * n words of the sampled thread's stack at addr (8-aligned) into dst, from st's window of
 * it, read again from addr when it does not hold them: 0 or JP_JW_READ. The thread is
 * stopped under this program, so its stack does not change within one walk.
 */
static __always_inline int jw_stack(struct jw_state *st, __u64 *dst, __u32 n, __u64 addr)
{
	__u64 i, sz;

	if ((addr & 7) || n > JW_WIN_WORDS)
		return jw_read(dst, n * 8, addr);
	/* win_lo is 0 or a user address that read: addr - win_lo cannot wrap to within */
	if (!st->win_lo || addr < st->win_lo || st->win_n < n ||
	    addr - st->win_lo > (__u64)(st->win_n - n) * 8) {
		sz = JW_PAGE - (addr & (JW_PAGE - 1));
		if (sz > JW_WIN_WORDS * 8)
			sz = JW_WIN_WORDS * 8;
		barrier_var(sz);
		/* the words cross a page: read them alone, as before */
		if (sz < n * 8 || sz > JW_WIN_WORDS * 8)
			return jw_read(dst, n * 8, addr);
		if (jw_read(st->win, sz, addr)) {
			st->win_lo = 0;
			return JP_JW_READ;
		}
		st->win_lo = addr;
		st->win_n = sz / 8;
	}
	i = (addr - st->win_lo) / 8;
	for (__u32 k = 0; k < n; k++)
		dst[k] = st->win[(i + k) & (JW_WIN_WORDS - 1)];
	return 0;
}

/* a word of the sampled thread's stack (jw_stack), unless *err is set already */
static __always_inline __u64 jw_sword(struct jw_state *st, __u64 addr, int *err)
{
	__u64 v = 0;

	if (!*err)
		*err = jw_stack(st, &v, 1, addr);
	return v;
}

/* the code heap pc lies in, or NULL */
static __always_inline const struct jp_jwalk_heap *jw_heap(const struct jp_jwalk *w, __u64 pc)
{
	if (w->n_heaps > 0 && pc >= w->heaps[0].lo && pc < w->heaps[0].hi)
		return &w->heaps[0];
	if (w->n_heaps > 1 && pc >= w->heaps[1].lo && pc < w->heaps[1].hi)
		return &w->heaps[1];
	if (w->n_heaps > 2 && pc >= w->heaps[2].lo && pc < w->heaps[2].hi)
		return &w->heaps[2];
	return NULL;
}

/*
 * The blob holding pc in heap h (its CodeBlob's address), or 0 with *err set when the
 * heap says the segment is free or unreadable
 */
static __always_inline __u64 jw_blob(const struct jp_jwalk *w, const struct jp_jwalk_heap *h,
				     __u64 pc, __u32 *budget, int *err)
{
	__u64 seg = (pc - h->lo) >> (h->log2_seg & 31);
	__u8 hop;

	for (int i = 0; i < JW_HOPS; i++) {
		if (!*budget)
			break;
		--*budget;
		if (jw_read(&hop, 1, h->segmap + seg) || hop == 0xff) {
			*err = JP_JW_BAD_FRAME;
			return 0;
		}
		if (!hop)
			return h->lo + (seg << (h->log2_seg & 31)) + w->heap_block;
		if (hop > seg)
			break;
		seg -= hop;
	}
	*err = JP_JW_BAD_FRAME;
	return 0;
}

/* the blob's HeapBlock (st->hb bytes) and first bytes into st->blk; 0 or JP_JW_READ */
static __always_inline int jw_read_blob(struct jw_state *st, __u64 blob)
{
	__u32 hb = st->hb & (2 * JP_JW_HEAP_BLOCK - 1);

	return jw_read(st->blk, hb + JP_JW_BLOB_HDR, blob - hb);
}

/* hb_length_size: the HeapBlock read before blob is in use and its block reaches past pc */
static __always_inline bool jw_block_holds(const struct jw_state *st,
					   const struct jp_jwalk_heap *h, __u64 blob, __u64 pc)
{
	__u32 l2 = h->log2_seg & 31;
	__u64 len = 0;
	__u32 len32;

	if (st->w.hb_length_size == 4) {
		__builtin_memcpy(&len32, &st->blk[st->w.hb_length & 7], sizeof(len32));
		len = len32;
	} else {
		__builtin_memcpy(&len, &st->blk[st->w.hb_length & 7], sizeof(len));
	}
	return st->blk[st->w.hb_used & 15] == 1 && len && len <= (h->hi - h->lo) >> l2 &&
	       pc < blob - st->hb + (len << l2);
}

/*
 * At the top frame only: pc on the epilogue of a compiled frame, after `add rsp, n`:
 * 1 the caller's rbp is still on the stack (`pop rbp`), 2 only the return address is
 * (`ret`, or the return poll `cmp rsp, [r15 + d]` and its `ja`), 0 the frame is whole
 */
static __always_inline int jw_popped(__u64 pc)
{
	__u8 b[12] = {};

	/* b[0..7]: the 8 bytes before pc (a return poll's cmp ends there), b[8..]: at pc */
	if (jw_read(b, sizeof(b), pc - 8))
		return 0;
	if (b[8] == 0x5d)
		return 1;
	if (b[8] == 0xc3)
		return 2;
	if (b[8] == 0x49 && b[9] == 0x3b && (b[10] == 0x67 || b[10] == 0xa7))
		return 2;
	/* ja after cmp rsp, [r15 + d8] (49 3b 67 d8) or [r15 + d32] (49 3b a7 d32) */
	if (b[8] == 0x0f && b[9] == 0x87 &&
	    ((b[4] == 0x49 && b[5] == 0x3b && b[6] == 0x67) ||
	     (b[1] == 0x49 && b[2] == 0x3b && b[3] == 0xa7)))
		return 2;
	return 0;
}

/*
 * ret is a return address: the instruction before it is a call HotSpot's code makes
 * (`call rel32`; `call reg`, with or without REX.B; `call [reg + d8|d32]`)
 */
static __always_inline bool jw_after_call(__u64 ret)
{
	__u8 b[6] = {}; /* the 6 bytes before ret */

	if (jw_read(b, sizeof(b), ret - sizeof(b)))
		return false;
	return b[1] == 0xe8 || (b[4] == 0xff && (b[5] & 0xf8) == 0xd0) ||
	       (b[3] == 0x41 && b[4] == 0xff && (b[5] & 0xf8) == 0xd0) ||
	       (b[3] == 0xff && (b[4] & 0xf8) == 0x50) || (b[0] == 0xff && (b[1] & 0xf8) == 0x90);
}

/*
 * At the top frame only: pc in a compiled method's prologue (before its frame-complete
 * offset fc), as C1 and C2 build the frame on x86-64 (MacroAssembler::verified_entry,
 * C1_MacroAssembler::build_frame), the last instructions before fc:
 *   with a stack bang: `push rbp` [`mov rbp, rsp`] [`sub rsp, imm8|imm32`]
 *   without: `sub rsp, imm32` `mov [rsp + d8|d32], rbp`
 *   then, JDK 25: the entry barrier `cmp dword [r15 + d8], imm32`, `jne rel32` (C2) or
 *   `je +5` `call` (C1, after a nop or two).
 * They are parsed backwards from fc (the end is known, the start is not: the unverified
 * entry's inline-cache check and the stack bang come before, nothing pushed there). 2
 * nothing pushed yet (the return address at sp), 1 rbp pushed only, 3 the frame allocated
 * and rbp not saved yet (still the caller's), 0 the frame is whole, -1 another shape (the
 * signal walks it).
 */
static __always_inline int jw_prologue(__u64 pc, __u64 end)
{
	__u8 e[32] = {};
	__u64 base = end - sizeof(e);
	int t = sizeof(e), push = -1, sub = -1, save = -1, p, o;

#define JW_B(i) e[(i) & 31]
	if (jw_read(e, sizeof(e), base))
		return -1;
	/* the entry barrier (JDK 25): C2's cmp; jne stub, C1's cmp; je +5; call */
	if (JW_B(t - 6) == 0x0f && JW_B(t - 5) == 0x85 && JW_B(t - 14) == 0x41 &&
	    JW_B(t - 13) == 0x81 && JW_B(t - 12) == 0x7f)
		t -= 14;
	else if (JW_B(t - 7) == 0x74 && JW_B(t - 6) == 0x05 && JW_B(t - 5) == 0xe8 &&
		 JW_B(t - 15) == 0x41 && JW_B(t - 14) == 0x81 && JW_B(t - 13) == 0x7f)
		t -= 15;
	/* C1 aligns the barrier with a nop or two */
	for (int k = 0; k < 3 && JW_B(t - 1) == 0x90; k++)
		t--;
	if (JW_B(t - 5) == 0x48 && JW_B(t - 4) == 0x89 && JW_B(t - 3) == 0x6c &&
	    JW_B(t - 2) == 0x24 && JW_B(t - 12) == 0x48 && JW_B(t - 11) == 0x81 &&
	    JW_B(t - 10) == 0xec) {
		save = t - 5; /* sub rsp, imm32; mov [rsp + d8], rbp */
		sub = t - 12;
	} else if (JW_B(t - 8) == 0x48 && JW_B(t - 7) == 0x89 && JW_B(t - 6) == 0xac &&
		   JW_B(t - 5) == 0x24 && JW_B(t - 15) == 0x48 && JW_B(t - 14) == 0x81 &&
		   JW_B(t - 13) == 0xec) {
		save = t - 8; /* sub rsp, imm32; mov [rsp + d32], rbp */
		sub = t - 15;
	} else {
		/* push rbp [mov rbp, rsp] [sub rsp, imm8 | sub rsp, imm32] */
		p = t;
		if (JW_B(t - 4) == 0x48 && JW_B(t - 3) == 0x83 && JW_B(t - 2) == 0xec)
			p = sub = t - 4;
		else if (JW_B(t - 7) == 0x48 && JW_B(t - 6) == 0x81 && JW_B(t - 5) == 0xec)
			p = sub = t - 7;
		if (JW_B(p - 3) == 0x48 && JW_B(p - 2) == 0x89 && JW_B(p - 1) == 0xe5)
			p -= 3;
		if (JW_B(p - 1) != 0x55)
			return -1;
		push = p - 1;
	}
#undef JW_B
	if (pc < base)
		return 2; /* before all of it */
	o = (int)(pc - base);
	if (save >= 0)
		return o <= sub ? 2 : o <= save ? 3 : 0;
	if (o <= push)
		return 2;
	/* rbp pushed; the frame allocated once past the sub (none: push rbp is all of it) */
	return sub >= 0 && o <= sub ? 1 : 0;
}

/*
 * The call stub's frame (st->fp its rbp): Java called from the VM or from native code. Its
 * JavaCallWrapper keeps the anchor of the Java frames below, if any (JNI, reflection, the
 * VM's upcalls): the walk goes on there, as HotSpot's sender_for_entry_frame does. 0 go
 * on, 1 the walk is whole (no Java frame below) or gave up.
 */
static __always_inline long jw_entry(struct jw_state *st)
{
	const struct jp_jwalk *w = &st->w;
	__u64 a, sp, pc;
	int err = 0;

	/* the entry frame's words and its JavaCallWrapper (on the stack, in the call stub's frame) */
	a = jw_sword(st, st->fp - JW_WRAPPER_SLOT * 8, &err) + (w->wrapper_anchor & 0xfff);
	sp = jw_sword(st, a + (w->anchor_sp & 0xff), &err);
	if (!err && !sp) {
		st->err = JP_JW_ENTRY;
		return 1;
	}
	st->fp = jw_sword(st, a + (w->anchor_fp & 0xff), &err);
	pc = jw_sword(st, a + (w->anchor_pc & 0xff), &err);
	/* an anchor without its pc: the return address below its sp (make_walkable) */
	if (!err && !pc)
		pc = jw_sword(st, sp - 8, &err);
	if (err || sp <= st->sp) {
		st->err = err ?: JP_JW_BAD_FRAME;
		return 1;
	}
	st->pc = pc;
	st->sp = sp;
	return 0;
}

/*
 * A stub that keeps an rbp frame: StubGenerator's arraycopy stubs and C1's runtime stubs
 * begin with `push rbp; mov rbp, rsp` (enter) and end with `leave; ret`, jumping between
 * each other's entries with the frame made. Which stub a pc is in is not known here (many
 * share one blob), so the frame is believed only when it proves itself: its return
 * address is in the code cache right after a direct call whose target is in this same
 * block and begins with enter (C1: `call rel32`; C2's leaf calls: `mov r10, imm64; call
 * r10`), and the frame (fp: the interrupted rbp at the top, the saved one below a leaf
 * call) is within JW_STUB_FRAME above sp. At the top, the instruction at pc says where the
 * return address is: on the enter's push, or on a `ret`, at sp; past the push, above the
 * caller's rbp at sp; else above fp. A C2 caller's rbp is any value and a C1 caller's an
 * older frame's: neither leads to the return address of a direct call into this blob.
 * The frames below are checked as every frame is. 0 and the caller's pc, sp and rbp in
 * ret[0..2], or JP_JW_STUB.
 */
#define JW_ENTER_8B 0xec8b4855u /* 55 48 8b ec */
#define JW_ENTER_89 0xe5894855u /* 55 48 89 e5 */
static __always_inline int jw_stub_fp(struct jw_state *st, const struct jp_jwalk_heap *h,
				      __u64 blob, __u64 pc, __u64 sp, __u64 fp, __u64 *ret)
{
	__u8 call[16] = {};
	__u64 target, link[2];
	__u32 enter = 0, e1;
	__u8 at[8] = {};
	__s32 rel;

	if (!st->w.hb_length_size)
		goto out_not;
	/* at[0..3]: the bytes before pc, at[4..7]: at pc */
	if (st->top && jw_read(at, sizeof(at), pc - 4))
		goto out_not;
	__builtin_memcpy(&enter, &at[4], sizeof(enter));
	__builtin_memcpy(&e1, &at[3], sizeof(e1));
	if (st->top && (at[4] == 0xc3 || enter == JW_ENTER_8B || enter == JW_ENTER_89)) {
		/* nothing of the frame on the stack: the return address at sp */
		if (jw_read(&link[1], 8, sp))
			goto out_not;
		link[0] = fp;
		ret[1] = sp + 8;
	} else if (st->top && (e1 == JW_ENTER_8B || e1 == JW_ENTER_89)) {
		/* rbp pushed, not moved yet */
		if (jw_read(link, 16, sp))
			goto out_not;
		ret[1] = sp + 16;
	} else {
		/* fp == sp: a stub that pushed nothing after its enter */
		if ((fp & 7) || fp < sp || fp - sp > JW_STUB_FRAME || jw_read(link, 16, fp))
			goto out_not;
		ret[1] = fp + 16;
	}
	if (!jw_heap(&st->w, link[1]))
		goto out_not;
	/* call[i]: the byte at link[1] - 16 + i */
	if (jw_read(call, sizeof(call), link[1] - sizeof(call)))
		goto out_not;
	if (call[11] == 0xe8) {
		__builtin_memcpy(&rel, &call[12], sizeof(rel));
		target = link[1] + (__s64)rel;
	} else if (call[3] == 0x49 && call[4] == 0xba && call[13] == 0x41 && call[14] == 0xff &&
		   call[15] == 0xd2) {
		__builtin_memcpy(&target, &call[5], sizeof(target));
	} else {
		goto out_not;
	}
	/* the block read with the blob (st->blk) reaches past target: the same blob */
	if (target < blob || !jw_block_holds(st, h, blob, target))
		goto out_not;
	/* push rbp; mov rbp, rsp (HotSpot's assembler: 48 8b ec; others 48 89 e5) */
	if (jw_read(&enter, sizeof(enter), target) ||
	    (enter != JW_ENTER_8B && enter != JW_ENTER_89))
		goto out_not;
	ret[0] = link[1];
	ret[2] = link[0];
	stat_inc(JP_STAT_STUB_FP);
	return 0;
out_not:
	stat_inc(JP_STAT_STUB_FP_NOT);
	return JP_JW_STUB;
}

/*
 * The interrupted pc in an I2C adapter (an interpreted caller's call of compiled code):
 * the interpreter pushed the return address, recorded the sp above it in its frame's
 * last_sp slot (rbp - 2 words; JDK 21+: relative to rbp, in words) and jumped; the adapter
 * keeps rbp (the caller's frame), reads the return address at sp and pushes it again below
 * the arguments it lays out for the compiled callee. Believed only when the word at sp is
 * the return address the caller's last_sp leads to and last_sp is just above sp (within
 * JW_STUB_FRAME); the caller must then be an interpreted frame that checks out (the next
 * step). The C2I half of the blob (a compiled caller) has its own return address at sp.
 * 0 and the caller's pc and sp in ret[0..1], or JP_JW_STUB.
 */
#define JW_LAST_SP_SLOT 2
static __always_inline int jw_i2c(__u64 sp, __u64 fp, __u64 *ret)
{
	__s64 v = 0;
	__u64 last_sp, r[2] = {};

	if ((fp & 7) || fp <= sp || fp - sp > JW_MAX_STACK ||
	    jw_read(&v, sizeof(v), fp - JW_LAST_SP_SLOT * 8))
		return JP_JW_STUB;
	last_sp = v < 0 && v > -(1ll << 20) ? fp + (__u64)(v * 8) : (__u64)v;
	if ((last_sp & 7) || last_sp <= sp || last_sp - sp > JW_STUB_FRAME || last_sp >= fp ||
	    jw_read(&r[0], 8, sp) || jw_read(&r[1], 8, last_sp - 8) || r[0] != r[1])
		return JP_JW_STUB;
	ret[0] = r[1];
	ret[1] = last_sp;
	return 0;
}

/*
 * The interrupted pc in the C2I half of an adapter blob (compiled code calling an
 * interpreted method): the adapter (HotSpot's gen_c2i_adapter) makes no frame of its own.
 * On entry its compiled caller's return address is at sp, the caller's sp just above it.
 * Then it sets the sender sp the interpreter restores (r13) and moves the return address
 * below the room it makes for the arguments: JDK 17 `pop rax; mov r13, rsp; sub rsp, n;
 * mov [rsp], rax`, JDK 25 `lea r13, [rsp + 8]` then, with arguments, `pop rax; sub rsp,
 * n; push rax`. From there on r13 is the caller's sp and the return address is at sp
 * again; in between it is the word below r13 (below sp, after JDK 17's pop). Where pc is
 * comes from the code before it (JW_C2I_WIN bytes, within the blob): the last of those
 * sequences before pc, else the I2C half's last instruction (`jmp r11`, the C2I's entry
 * checks follow it: nothing moved yet); the call into the VM that patches the caller
 * (`mov r13, rsp; mov rax, [rsp]`, a register save area at sp) or none of them: not
 * known, signalled. The return address must follow a `call rel32` into the code cache,
 * and the caller be compiled (jw_frame's next step checks). 0 and the caller's pc and sp
 * in ret[0..1], or JP_JW_STUB.
 */
#define JW_C2I_ENTRY 1 /* jmp r11: the I2C half's end */
#define JW_C2I_17    2 /* pop rax; mov r13, rsp; sub rsp, n */
#define JW_C2I_25    3 /* lea r13, [rsp + 8] */
#define JW_C2I_PATCH 4 /* mov r13, rsp; mov rax, [rsp] */

struct jw_c2i_scan {
	int lo, kind, at;
};

/* one position i of the code before pc (st->code): the last sequence found so far in ctx */
static long jw_c2i_at(__u64 i, void *ctx)
{
	struct jw_c2i_scan *c = ctx;
	__u32 zero = 0;
	struct jw_state *st = bpf_map_lookup_elem(&jw_states, &zero);
	__u64 v;
	int kind = 0;

	if (!st)
		return 1;
	if ((__s64)i < c->lo)
		return 0;
	/* the 8 bytes from i, little-endian: one compare a sequence, not one a byte */
	__builtin_memcpy(&v, &st->code[i & (JW_C2I_WIN - 1)], sizeof(v));
	if ((v & 0xffffff) == 0xe3ff41)
		kind = JW_C2I_ENTRY;
	else if ((v & 0x00ff00ffffffffffull) == 0x00ec0048ec8b4c58ull &&
		 ((v >> 40) & 0xfd) == 0x81) /* sub rsp, imm8 (83) or imm32 (81) */
		kind = JW_C2I_17;
	else if ((v & 0xffffffffffull) == 0x08246c8d4cull)
		kind = JW_C2I_25;
	else if ((v & 0x00ffffffffffffffull) == 0x0024048b48ec8b4cull)
		kind = JW_C2I_PATCH;
	if (kind) {
		c->kind = kind;
		c->at = (int)i;
	}
	return 0;
}

static __always_inline int jw_c2i(struct jw_state *st, __u64 code, __u64 pc, __u64 sp, __u64 *ret)
{
	struct jw_c2i_scan c = {.lo = 0};
	__u64 r13 = st->r13, at_ret, ssp, target;
	__u8 call[5] = {};
	int kind, at, o, n;
	__s32 rel;

#define JW_C(i) st->code[(i) & (JW_C2I_BUF - 1)]
	if (pc <= code)
		return JP_JW_STUB;
	if (pc - code < JW_C2I_WIN)
		c.lo = JW_C2I_WIN - (int)(pc - code);
	/* code[i]: the byte at pc - JW_C2I_WIN + i, up to 16 past pc */
	if (jw_read(st->code, JW_C2I_WIN + 16, pc - JW_C2I_WIN))
		return JP_JW_STUB;
	bpf_loop(JW_C2I_WIN, jw_c2i_at, &c, 0);
	kind = c.kind;
	at = c.at;
	/*
	 * pc on the first instruction of the sequence, past the patching call's code (taken
	 * only when the callee was compiled meanwhile; rsp is back where it was): nothing
	 * moved yet
	 */
	if (kind == JW_C2I_PATCH &&
	    ((JW_C(JW_C2I_WIN) == 0x58 && JW_C(JW_C2I_WIN + 1) == 0x4c &&
	      JW_C(JW_C2I_WIN + 2) == 0x8b && JW_C(JW_C2I_WIN + 3) == 0xec) ||
	     (JW_C(JW_C2I_WIN) == 0x4c && JW_C(JW_C2I_WIN + 1) == 0x8d &&
	      JW_C(JW_C2I_WIN + 2) == 0x6c && JW_C(JW_C2I_WIN + 3) == 0x24)))
		kind = JW_C2I_ENTRY;
	o = JW_C2I_WIN - at; /* pc's distance from the sequence's first byte */
	at_ret = sp;
	ssp = r13;
	if (kind == JW_C2I_ENTRY) {
		ssp = sp + 8;
	} else if (kind == JW_C2I_17) {
		n = JW_C(at + 5) == 0x83 ? 4 : 7; /* sub rsp, imm8 | imm32 */
		if (o == 1) {
			at_ret = sp - 8; /* popped, r13 not set yet */
			ssp = sp;
		} else if (o < 8 + n) {
			at_ret = r13 - 8;
		}
	} else if (kind == JW_C2I_25) {
		if (o < 5)
			return JP_JW_STUB;
		if (JW_C(at + 5) == 0x58 && JW_C(at + 6) == 0x48 &&
		    (JW_C(at + 7) == 0x83 || JW_C(at + 7) == 0x81) && JW_C(at + 8) == 0xec) {
			n = JW_C(at + 7) == 0x83 ? 4 : 7;
			if (JW_C(at + 6 + n) != 0x50)
				return JP_JW_STUB;
			if (o > 5 && o <= 6 + n)
				at_ret = r13 - 8; /* popped, not pushed again yet */
		}
	} else {
		return JP_JW_STUB;
	}
#undef JW_C
	if ((ssp & 7) || ssp < sp || ssp - sp > JW_STUB_FRAME || jw_read(&ret[0], 8, at_ret) ||
	    !jw_heap(&st->w, ret[0]) || jw_read(call, sizeof(call), ret[0] - 5) || call[0] != 0xe8)
		return JP_JW_STUB;
	__builtin_memcpy(&rel, &call[1], sizeof(rel));
	target = ret[0] + (__s64)rel;
	if (!jw_heap(&st->w, target))
		return JP_JW_STUB;
	ret[1] = ssp;
	return 0;
}

/* 8 bytes of the CodeBlob header read into st at off (the caller narrows the value) */
static __always_inline __u64 jw_hdr(const struct jw_state *st, __u16 off)
{
	__u64 v;

	__builtin_memcpy(&v, &st->blk[(st->hb & (2 * JP_JW_HEAP_BLOCK - 1)) +
				      (off & (JP_JW_BLOB_HDR - 1))], sizeof(v));
	return v;
}

/* one frame of st's walk: 0 go on, 1 stop (st->err says why) */
static __always_inline long jw_frame(struct jw_state *st)
{
	const struct jp_jwalk *w = &st->w;
	__u64 pc = st->pc, sp = st->sp, fp = st->fp, blob, name_p, name[2] = {};
	__u64 method = 0, out_pc = pc, ret, sender_sp, caller_fp, key = 0;
	const struct jp_jwalk_heap *h;
	bool stub;
	struct jw_cached *c = NULL;
	int err = 0;

	if (st->n && pc == w->call_stub_ret)
		return jw_entry(st);
	h = jw_heap(w, pc);
	if (!h) {
		st->err = st->n ? JP_JW_LOST : JP_JW_NOT_CODE;
		return 1;
	}
	blob = 0;
	/*
	 * Return addresses by pc; an interrupted pc is seldom seen twice, and would evict
	 * them: those by their segment in a cache of their own (a hot loop's pcs share a
	 * few). Which key found the entry does not matter: the block read must hold pc.
	 */
	if (w->hb_length_size) {
		key = st->top ? pc >> (h->log2_seg & 31) : pc;
		c = st->top ? &st->tcache[(key ^ (key >> 8)) & (JW_CACHE - 1)]
			    : &st->cache[(key ^ (key >> 8)) & (JW_CACHE - 1)];
		if (c->pc == key && c->tgid == st->tgid && !jw_read_blob(st, c->blob) &&
		    jw_block_holds(st, h, c->blob, pc))
			blob = c->blob;
	}
	if (!blob) {
		blob = jw_blob(w, h, pc, &st->hops, &err);
		if (!blob) {
			st->err = err;
			return 1;
		}
		if (jw_read_blob(st, blob)) {
			st->err = JP_JW_READ;
			return 1;
		}
		/* the segment map's block: in use and holding pc, or the map is not */
		if (w->hb_length_size && !jw_block_holds(st, h, blob, pc)) {
			st->err = JP_JW_BAD_FRAME;
			return 1;
		}
		if (c) {
			c->pc = key;
			c->blob = blob;
			c->tgid = st->tgid;
		}
	}
	if (st->name_tgid != st->tgid) {
		st->name_tgid = st->tgid;
		st->name_nmethod = st->name_interp = st->name_native = 0;
	}
	name_p = jw_hdr(st, w->blob_name);
	if (!name_p || (name_p != st->name_nmethod && name_p != st->name_interp &&
			name_p != st->name_native)) {
		if (jw_read(name, sizeof(name), name_p)) {
			st->err = JP_JW_READ;
			return 1;
		}
		if (name[0] == JW_NAME_NMETHOD)
			st->name_nmethod = name_p;
		else if (name[0] == JW_NAME_INTERP1 && (__u32)name[1] == JW_NAME_INTERP2)
			st->name_interp = name_p;
		else if (name[0] == JW_NAME_NATIVE1 &&
			 (name[1] & 0xffffffffffffffull) == JW_NAME_NATIVE2)
			st->name_native = name_p;
	}
	if ((st->need_interp && name_p != st->name_interp) ||
	    (st->need_compiled && name_p != st->name_nmethod)) {
		st->err = JP_JW_STUB;
		return 1;
	}
	st->need_interp = 0;
	st->need_compiled = 0;
	/*
	 * A stub below the anchor's frame (a runtime stub that called the VM, the
	 * deoptimization blob): not a Java frame, sized as a compiled one (HotSpot's
	 * sender_for_compiled_frame serves every blob with a frame size); only where its
	 * frame is known to be whole (never at the interrupted pc)
	 */
	stub = name_p && !st->top && name_p != st->name_nmethod && name_p != st->name_interp &&
	       name_p != st->name_native;
	if (name_p && name_p == st->name_native)
		out_pc |= JP_JFRAME_NATIVE;
	if (name_p && (name_p == st->name_nmethod || name_p == st->name_native || stub)) {
		__s32 fs = (__s32)jw_hdr(st, w->blob_frame_size), fc;
		__u64 code, link[2], sfp[3];
		int popped = 0;

		fc = w->frame_complete_size == 2 ? (__s16)jw_hdr(st, w->blob_frame_complete)
						 : (__s32)jw_hdr(st, w->blob_frame_complete);
		code = w->code_is_offset ? blob + (__s32)jw_hdr(st, w->blob_code)
					 : jw_hdr(st, w->blob_code);
		/*
		 * a stub of no frame size (StubRoutines' blobs) a leaf call was made from
		 * (native frame pointers led here): its rbp frame, if it proves itself
		 */
		if (stub && fs < 2 && !jw_stub_fp(st, h, blob, pc, sp, fp, sfp)) {
			ret = sfp[0];
			sender_sp = sfp[1];
			caller_fp = sfp[2];
			st->stub_fp = 1;
			goto out_stub;
		}
		/*
		 * C1's runtime stubs are "never safe" (frame-complete -1) for a walk from
		 * within; below an anchor their frame is made (HotSpot walks it by its size)
		 */
		/*
		 * A method handle intrinsic (MethodHandle.linkTo*): an nmethod of no frame
		 * (frame size 0) that only jumps to its target. At the top its return address
		 * is at sp; it is no frame of its own, as AGCT gives it (H2's shadow
		 * comparison, JDK 17: with the frame, every such walk differed)
		 */
		if (st->top && !stub && fs == 0 && pc >= code) {
			err = jw_read(link, 8, sp);
			if (!err && !jw_heap(w, link[0]))
				err = JP_JW_BAD_FRAME;
			ret = link[0];
			sender_sp = sp + 8;
			caller_fp = fp;
			st->at_call = 1;
			st->mh = 1;
			stub = true;
			goto out_stub;
		}
		if (fs < 2 || fs > JW_MAX_FRAME_WORDS || (fc < 0 && !stub) || pc < code) {
			st->err = stub ? JP_JW_STUB : JP_JW_BAD_FRAME;
			return 1;
		}
		if (fc >= 0 && pc < code + (__u64)fc) {
			/*
			 * a prologue is short (the inline-cache check, its alignment, the
			 * frame): a long "prologue" is not one (an OSR method's entry comes
			 * after its body): signalled
			 */
			popped = st->top && !stub && fc <= JW_MAX_PROLOGUE
					 ? jw_prologue(pc, code + (__u64)fc)
					 : -1;
			if (popped < 0) {
				st->err = st->top ? JP_JW_PROLOGUE : JP_JW_BAD_FRAME;
				return 1;
			}
			/* 0: the frame is whole (the entry barrier, or no prologue at all) */
			st->prologue = popped > 0;
		} else if (st->top) {
			popped = jw_popped(pc);
		}
		if (popped == 1)
			sender_sp = sp + 16;
		else if (popped == 2)
			sender_sp = sp + 8;
		else
			sender_sp = sp + (__u64)fs * 8;
		/* the caller's rbp (saved by this frame) and the return address, one read */
		err = jw_stack(st, link, 2, sender_sp - 16);
		caller_fp = popped >= 2 ? fp : link[0];
		ret = link[1];
		/*
		 * At the top, a frame whose return address is no code: C2's String.compareTo
		 * intrinsic (MacroAssembler::string_compare) pushes the strings' length
		 * difference in the method's body and pops it at its end, so there the frame
		 * is one word lower (HotSpot's own walk fails there too: AGCT's "unknown, Java").
		 * One word up, a return address that follows a call is the frame's.
		 */
		if (!err && st->top && !popped && !stub && !jw_heap(w, ret) &&
		    !jw_stack(st, link, 2, sender_sp - 8) && jw_heap(w, link[1]) &&
		    jw_after_call(link[1])) {
			sender_sp += 8;
			caller_fp = link[0];
			ret = link[1];
			stat_inc(JP_STAT_JW_PUSHED);
		}
	} else if (name_p && name_p == st->name_interp) {
		struct jp_jw_method mk = {};
		struct jw_mcached *mc;
		__u64 cm, base;
		__u16 code_size = 0;
		__u32 *gen;

		/* the frame's words from the bcp slot up to the return address, one read */
		err = jw_stack(st, st->slots, JW_INTERP_WORDS, fp - JW_BCP_SLOT * 8);
		/*
		 * At the top, a frame not whole yet: the method's entry between `mov rbp,
		 * rsp` and its last fixed slot (HotSpot's generate_fixed_frame; its
		 * is_interpreted_frame_valid refuses such a frame too). Its Method* and bcp
		 * slots may still hold an earlier frame's words: not believed. The frame is
		 * left out, as the agent's walk leaves it: the caller is at its return
		 * address, its sp the sender sp the entry pushed first (rbp - 1; not rbp + 2:
		 * past a C2I adapter the caller's sp lies above the arguments it pushed).
		 */
		if (st->top && sp <= fp - 8 && sp > fp - JW_INITIAL_SP_SLOT * 8) {
			sender_sp = st->slots[JW_BCP_SLOT - JW_SENDER_SP_SLOT];
			caller_fp = st->slots[JW_BCP_SLOT];
			ret = st->slots[JW_BCP_SLOT + 1];
			if (!err && ((sender_sp & 7) || sender_sp < fp + 16 ||
				     sender_sp - fp > JW_STUB_FRAME || !jw_heap(w, ret)))
				err = JP_JW_BAD_FRAME;
			if (!err)
				stat_inc(JP_STAT_INTERP_ENTRY);
			stub = true;
			st->at_call = 1;
			goto out_stub;
		}
		method = st->slots[JW_BCP_SLOT - JW_METHOD_SLOT];
		out_pc = st->slots[0];
		mk.tgid = st->tgid;
		mk.method = method;
		gen = bpf_map_lookup_elem(&jw_methods, &mk);
		mc = &st->mcache[(method ^ (method >> 12)) / 8 & (JW_MCACHE - 1)];
		if (gen && mc->gen == *gen && mc->method == method && mc->tgid == st->tgid) {
			base = mc->base;
			code_size = mc->code_size;
		} else {
			cm = jw_word(method + (w->method_const & 0xfff), &err);
			if (!err)
				err = jw_read(&code_size, 2, cm + (w->const_code_size & 0xfff));
			base = cm + (w->const_size & 0xfff);
			if (!err && gen)
				*mc = (struct jw_mcached){ .method = method, .base = base,
							   .tgid = st->tgid, .gen = *gen,
							   .code_size = code_size };
		}
		/*
		 * a native method's frame (the interpreter's native entry keeps no bcp: 0):
		 * the frame of a thread in native code, from its anchor; bci -1 (as no bci)
		 */
		if (!out_pc && !st->n)
			out_pc = base + JP_JFRAME_NATIVE_BCI;
		else if (!err && (out_pc < base || out_pc >= base + code_size))
			err = JP_JW_BAD_FRAME;
		out_pc -= base; /* the bci */
		if (!err && !gen)
			st->unknown++;
		sender_sp = st->slots[JW_BCP_SLOT - JW_SENDER_SP_SLOT];
		caller_fp = st->slots[JW_BCP_SLOT];
		ret = st->slots[JW_BCP_SLOT + 1];
	} else if (st->top && name_p) {
		/*
		 * The interrupted pc in a stub (no Java frame of its own): the vtable and
		 * itable stubs ("vtable chunks") push nothing, their return address is at sp
		 * (taken when it is in the code cache; the walk checks every frame below).
		 * The arraycopy and C1 runtime stubs keep an rbp frame, believed only when
		 * it proves itself (jw_stub_fp: rbp alone, tried before, disagreed with the
		 * agent on 1.5% of H2's walks: C2 code uses rbp freely). Any other stub is
		 * signalled: whether it made a frame yet is not known here.
		 */
		__u64 r0 = 0, sfp[3];

		if (name[0] == JW_NAME_VTABLE && !jw_read(&r0, sizeof(r0), sp) && jw_heap(w, r0)) {
			ret = r0;
			sender_sp = sp + 8;
			caller_fp = fp;
		} else if (name[0] == JW_NAME_ADAPTER && !jw_i2c(sp, fp, sfp) &&
			   jw_heap(w, sfp[0])) {
			/* an I2C adapter: its interpreted caller's frame is rbp's */
			ret = sfp[0];
			sender_sp = sfp[1];
			caller_fp = fp;
			st->need_interp = 1;
			stat_inc(JP_STAT_I2C);
		} else if (name[0] == JW_NAME_ADAPTER) {
			/* the C2I half (a compiled caller): the return address and sp it left */
			__u64 code = w->code_is_offset ? blob + (__s32)jw_hdr(st, w->blob_code)
						       : jw_hdr(st, w->blob_code);

			if (jw_c2i(st, code, pc, sp, sfp)) {
				stat_inc(JP_STAT_C2I_NOT);
				st->err = JP_JW_STUB;
				return 1;
			}
			ret = sfp[0];
			sender_sp = sfp[1];
			caller_fp = fp;
			st->need_compiled = 1;
			st->c2i = 1;
			stat_inc(JP_STAT_C2I);
		} else if (!jw_stub_fp(st, h, blob, pc, sp, fp, sfp)) {
			/* an arraycopy or C1 runtime stub */
			ret = sfp[0];
			sender_sp = sfp[1];
			caller_fp = sfp[2];
			st->stub_fp = 1;
		} else {
			st->err = JP_JW_STUB;
			return 1;
		}
		stub = true;
		st->at_call = 1; /* the first Java frame is at the stub's return address */
	} else {
		st->err = JP_JW_STUB;
		return 1;
	}
out_stub:
	if (err) {
		st->err = err;
		return 1;
	}
	if (ret == pc && sender_sp <= sp) {
		st->err = JP_JW_BAD_FRAME;
		return 1;
	}
	if (stub) {
		st->stubs++;
		if (st->stubs > JW_MAX_STUBS) {
			st->err = JP_JW_BAD_FRAME;
			return 1;
		}
	} else {
		if (st->n >= JP_MAX_JFRAMES) {
			st->err = JP_JW_DEPTH;
			return 1;
		}
		st->f[st->n & (JP_MAX_JFRAMES - 1)] =
			(struct jp_jframe){ .pc = out_pc, .method = method };
		st->n++;
	}
	st->top = 0;
	st->pc = ret;
	st->sp = sender_sp;
	st->fp = caller_fp;
	return 0;
}

static long jw_step(__u64 i, void *unused)
{
	__u32 zero = 0;
	struct jw_state *st = bpf_map_lookup_elem(&jw_states, &zero);

	(void)i;
	(void)unused;
	return st ? jw_frame(st) : 1;
}

/*
 * The pc is outside the code cache (VM, native or kernel code): the thread's Java frames,
 * if it has any, start at its frame anchor, which HotSpot keeps in every thread that left
 * Java code for the VM or native code (the last Java frame's sp, fp and pc). The thread
 * is the one interrupted here, so its anchor does not change under the read; what may be
 * stale is the jthreads entry (checked: its tgid, and the JavaThread's OSThread names this
 * tid, or for a JVM in a container the tid it has there, which user space read beside the
 * host's from /proc). Only in the states HotSpot sets after the anchor and leaves before clearing it
 * (native, VM, blocked and their transitions: the anchor is cleared by Java-side code,
 * after the state is _thread_in_Java again). 0 and st set up, or a JP_JW_* reason.
 */
static __always_inline int jw_anchor(struct jw_state *st, __u32 tid, __u64 regs_sp)
{
	const struct jp_jwalk *w = &st->w;
	struct jp_jthread *t = bpf_map_lookup_elem(&jthreads, &tid);
	__u64 a[4] = {}, os = 0, sp, fp, pc;
	__s32 state = 0, os_tid = 0;
	int err = 0;

	if (!t || t->tgid != st->tgid) {
		stat_inc(JP_STAT_ANCHOR_NOTHREAD);
		return JP_JW_NO_THREAD;
	}
	if (jw_read(&os, sizeof(os), t->thread + t->osthread) || !os ||
	    jw_read(&os_tid, sizeof(os_tid), os + t->os_tid) ||
	    (__u32)os_tid != (t->jvm_tid ? t->jvm_tid : tid)) {
		stat_inc(JP_STAT_ANCHOR_NOTHREAD);
		return JP_JW_NO_THREAD;
	}
	if (jw_read(&state, sizeof(state), t->thread + t->state))
		return JP_JW_READ;
	if (state != JP_TS_IN_NATIVE && state != JP_TS_IN_NATIVE_TRANS && state != JP_TS_IN_VM &&
	    state != JP_TS_IN_VM_TRANS && state != JP_TS_BLOCKED && state != JP_TS_BLOCKED_TRANS)
		return JP_JW_IN_JAVA;
	/* the anchor's three words, within its first 32 bytes (user space checked) */
	if (jw_read(a, sizeof(a), t->thread + t->anchor))
		return JP_JW_READ;
	sp = a[(w->anchor_sp >> 3) & 3];
	fp = a[(w->anchor_fp >> 3) & 3];
	pc = a[(w->anchor_pc >> 3) & 3];
	if (!sp)
		return JP_JW_NO_ANCHOR;
	/* above the interrupted frames, on the thread's stack */
	if ((sp & 7) || sp <= regs_sp || sp - regs_sp > JW_MAX_STACK ||
	    (t->stack_hi && sp >= t->stack_hi))
		return JP_JW_BAD_ANCHOR;
	/* an anchor without its pc: the return address below its sp (make_walkable) */
	if (!pc)
		pc = jw_word(sp - 8, &err);
	if (err)
		return JP_JW_READ;
	st->pc = pc;
	st->sp = sp;
	st->fp = fp;
	st->top = 0; /* a frame at a call: whole, past its prologue */
	return 0;
}

/*
 * A thread of JVM tgid in no jthreads entry (JP_JW_NO_THREAD) and not in native_threads
 * yet: true when it is no JavaThread, as jthreads' list entry (struct jp_jlist) shows:
 * the JVM's current thread list still ends with the thread it ended with when user space
 * stored the list whole, so no thread was added since. Six reads, only for such samples
 * (a GC worker G1 started on demand, until jprof's next look at the task directory marks
 * it). Any doubt (a list replaced or freed under the reads, no entry) is false: the
 * sample is signalled, as before.
 */
static __always_inline bool jw_unlisted(__u32 tid, __u32 tgid)
{
	__u32 key = JP_JTHREADS_LIST | tgid;
	const struct jp_jlist *l;
	__u64 list = 0, arr = 0, jt = 0, os = 0;
	__u32 len = 0;
	__s32 os_tid = 0;

	if (bpf_map_lookup_elem(&native_threads, &tid))
		return false; /* marked already: asked or not as the mark says */
	l = (const struct jp_jlist *)bpf_map_lookup_elem(&jthreads, &key);
	if (!l || l->tgid != tgid || !l->last)
		return false;
	if (jw_read(&list, sizeof(list), l->list_var) || !list ||
	    jw_read(&len, sizeof(len), list + l->length) || !len || len > JP_MAX_JTHREADS ||
	    jw_read(&arr, sizeof(arr), list + l->threads) || !arr ||
	    jw_read(&jt, sizeof(jt), arr + (__u64)(len - 1) * 8) || jt != l->last ||
	    jw_read(&os, sizeof(os), jt + l->osthread) || !os ||
	    jw_read(&os_tid, sizeof(os_tid), os + l->os_tid))
		return false;
	return (__u32)os_tid == l->last_tid;
}

/*
 * Outside the code cache in Java state: native code Java called without leaving the Java
 * state (a leaf call into libjvm, built with frame pointers, or the vDSO), no anchor. Its
 * frames' rbp chain, up to JW_FP_FRAMES links, each above the last and close to sp, leads
 * to the first return address in the code cache: the Java caller's pc there, its sp above
 * that link. A leaf interrupted before its frame is made has the caller's rbp: what it
 * finds then is checked by the walk from there (whole, or the signal).
 */
#define JW_FP_FRAMES 8
#define JW_FP_SPAN   (1u << 20)
static __always_inline int jw_fp_chain(struct jw_state *st)
{
	__u64 fp = st->fp, link[2];

	for (int i = 0; i < JW_FP_FRAMES; i++) {
		if ((fp & 7) || fp <= st->sp || fp - st->sp > JW_FP_SPAN ||
		    jw_read(link, sizeof(link), fp))
			return JP_JW_IN_JAVA;
		if (jw_heap(&st->w, link[1])) {
			st->pc = link[1];
			st->sp = fp + 16;
			st->fp = link[0];
			st->top = 0;
			st->at_call = 1;
			return 0;
		}
		if (link[0] <= fp)
			return JP_JW_IN_JAVA;
		fp = link[0];
	}
	return JP_JW_IN_JAVA;
}

/*
 * Walks the current thread of JVM tgid into this CPU's jw_states: from its registers when
 * its user pc is in the code cache, else from its frame anchor (then sc->s.flags gets
 * JP_SF_ANCHOR: the user stack is still to take, native frames over the Java ones); sets
 * sc->s.jstack_err (nothing when this JVM has no layout). True when the sample needs no
 * signal (--java-walk bpf or check): the walk is whole, every interpreted method is one
 * the join names, and this is not one of the walks that signal anyway to check (check
 * mode). java_walk_put then puts the frames in sc.
 */
static __always_inline bool java_walk_current(struct jp_scratch *sc, __u32 tgid)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct jp_jwalk *w = bpf_map_lookup_elem(&jwalk, &tgid);
	__u32 zero = 0;
	struct jw_state *st;
	int err;

	if (!w)
		return false;
	st = bpf_map_lookup_elem(&jw_states, &zero);
	if (!st)
		return false;
	if (!regs) {
		sc->s.jstack_err = JP_JW_NO_REGS;
		return false;
	}
	st->w = *w;
	st->tgid = tgid;
	st->unknown = 0;
	st->pc = regs->ip;
	st->sp = regs->sp;
	st->fp = regs->bp;
	st->n = 0;
	st->stubs = 0;
	st->prologue = 0;
	st->at_call = 0;
	st->stub_fp = 0;
	st->mh = 0;
	st->need_interp = 0;
	st->need_compiled = 0;
	st->c2i = 0;
	st->r13 = regs->r13;
	st->err = JP_JW_DEPTH;
	st->top = 1;
	st->win_lo = 0; /* another thread's stack */
	st->hops = JW_WALK_HOPS;
	st->hb = w->hb_length_size ? w->heap_block : 0; /* jprof checked: at most 16 */
	if (!jw_heap(w, st->pc)) {
		stat_inc(JP_STAT_ANCHOR);
		err = jw_anchor(st, sc->s.tid, st->sp);
		if (err == JP_JW_IN_JAVA && !jw_fp_chain(st)) {
			err = 0;
			sc->s.flags |= JP_SF_FP_CHAIN;
		}
		if (err == JP_JW_IN_JAVA)
			stat_inc(JP_STAT_ANCHOR_IN_JAVA);
		else if (err == JP_JW_NO_ANCHOR)
			stat_inc(JP_STAT_ANCHOR_NONE);
		else if (err && err != JP_JW_NO_THREAD)
			stat_inc(JP_STAT_ANCHOR_BAD);
		if (err) {
			sc->s.jstack_err = (__s16)err;
			if (err == JP_JW_NO_ANCHOR && java_walk >= JP_JWALK_BPF)
				sc->s.flags |= JP_SF_NO_JAVA;
			return false;
		}
		if (!(sc->s.flags & JP_SF_FP_CHAIN))
			sc->s.flags |= JP_SF_ANCHOR;
	}
	bpf_loop(JP_MAX_JFRAMES + 1, jw_step, NULL, 0);
	sc->s.jstack_err = (__s16)st->err;
	if (st->prologue)
		sc->s.flags |= JP_SF_PROLOGUE;
	if (st->stub_fp)
		sc->s.flags |= JP_SF_STUB_FP;
	if (st->mh)
		sc->s.flags |= JP_SF_MH_INTRINSIC;
	if (st->c2i)
		sc->s.flags |= JP_SF_C2I;
	if (st->at_call || (sc->s.flags & JP_SF_ANCHOR))
		sc->s.flags |= JP_SF_AT_CALL;
	if ((sc->s.flags & (JP_SF_ANCHOR | JP_SF_FP_CHAIN)) && st->err == JP_JW_ENTRY)
		stat_inc(JP_STAT_ANCHOR_WHOLE);
	if (java_walk < JP_JWALK_BPF || st->err != JP_JW_ENTRY || st->unknown || !st->n)
		return false;
	/* per CPU, not per thread: the check samples spread over whatever runs */
	if (java_walk == JP_JWALK_CHECK && ++st->verify >= JP_JWALK_VERIFY_EVERY) {
		st->verify = 0;
		return false;
	}
	return true;
}

/*
 * The frames of the walk java_walk_current made, after the stacks already in sc (the
 * scratch map's record: kstack_len + ustack_len words): sets sc->s.jstack_len. None from a walk that gave up:
 * half a stack is not a stack. False when they did not fit (then the sample must not go
 * without its signal).
 */
static __always_inline bool java_walk_put(struct jp_scratch *sc)
{
	__u32 zero = 0;
	struct jw_state *st = bpf_map_lookup_elem(&jw_states, &zero);
	__u64 off, n; /* 64-bit: the bounds checked are the bounds used */

	if (!st || sc->s.jstack_err <= 0)
		return false;
	n = st->n;
	off = (__u64)sc->s.kstack_len + sc->s.ustack_len;
	barrier_var(off);
	barrier_var(n);
	if (!n || off > JP_MAX_KSTACK + JP_MAX_USTACK || n > JP_MAX_JFRAMES)
		return false;
	/* into the scratch map's room after frames[] (struct jp_scratch_cpu) */
	if (bpf_probe_read_kernel((__u64 *)sc->frames + off, n * sizeof(struct jp_jframe), st->f))
		return false;
	sc->s.jstack_len = (__u16)n;
	return true;
}

#endif /* JPROF_JWALK_BPF_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stacks.c: the stack-request handler that fills the trace ring with AsyncGetCallTrace, its
 * protected walk and fallback, the ring's lock-free writers (the handler's and JVMTI
 * events'), and the fault handler that ends a faulting walk. The ring's file is made in
 * ring_file.c, the handler installed by stacks_start.c (stacks_int.h between them).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "stacks_int.h"

/*
 * Set once before the handler is installed and never changed after (the mapping is
 * never unmapped: the library is linked -z nodelete and a handler may run at any time).
 */
static struct jp_ring_hdr *ring;
static unsigned char *ring_data;
static __u64 ring_mask;
static __u32 ring_depth;
static jpa_agct_fn agct;

/* fault protection of the walk: the handlers we chain to, walks under way, the test hook */
static struct sigaction prev_segv, prev_bus;
static int faults_caught; /* our SIGSEGV/SIGBUS handlers are installed */
static int walkers;	  /* walks under way in any thread: 0 lets a fault pass straight on */
static __u32 test_fault_every;
static __u64 test_walks;
static __u64 test_fallbacks;
static __u64 handler_calls; /* stack requests handled: every JP_HANDLER_TIMED_EVERY-th is timed */
static void *test_guard; /* a PROT_NONE page the test hook walks into */

#define ALIGN16(n) (((n) + 15u) & ~15u)
#define CAS_TRIES      64

static void count(__u64 *v)
{
	__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
}

/* adds the thread CPU time since t0 (CLOCK_THREAD_CPUTIME_ID, read by the caller) to *v */
static void add_cpu_since(__u64 *v, const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	__atomic_fetch_add(v, (__u64)((t1.tv_sec - t0->tv_sec) * 1000000000ll +
				      (t1.tv_nsec - t0->tv_nsec)),
			   __ATOMIC_RELAXED);
}

static void commit(__u64 pos)
{
	struct jp_rec_hdr *h = (struct jp_rec_hdr *)(ring_data + (pos & ring_mask));

	__atomic_store_n(&h->seq, pos, __ATOMIC_RELEASE);
}

static void put_pad(__u64 pos, __u64 len)
{
	struct jp_rec_hdr *h = (struct jp_rec_hdr *)(ring_data + (pos & ring_mask));

	h->len = (__u32)len;
	h->type = JP_REC_PAD;
	commit(pos);
}

/*
 * Reserves len contiguous bytes (len a multiple of 16). A reservation that would cross
 * the end of the data area takes the rest of it too, as a PAD record. Lock-free: a
 * bounded CAS loop, safe in a signal handler. Returns 0 and the record's position,
 * or -ENOSPC (ring full) / -EBUSY (lost the race CAS_TRIES times).
 */
static int reserve(__u32 len, __u64 *ret_pos)
{
	__u64 size = ring_mask + 1;
	__u64 head = __atomic_load_n(&ring->head, __ATOMIC_RELAXED);

	for (int i = 0; i < CAS_TRIES; i++) {
		__u64 tail = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
		__u64 off = head & ring_mask;
		__u64 pad = off + len > size ? size - off : 0;
		__u64 next = head + pad + len;

		/* unsigned: a tail beyond head (a confused consumer) reads as full, too */
		if (next - tail > size)
			return -ENOSPC;
		if (__atomic_compare_exchange_n(&ring->head, &head, next, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			if (pad)
				put_pad(head, pad);
			*ret_pos = head + pad;
			return 0;
		}
	}
	return -EBUSY;
}

/* gives back the unused end [pos + used, pos + reserved) of a reservation */
static void shrink(__u64 pos, __u32 reserved, __u32 used)
{
	__u64 end = pos + reserved;

	if (used == reserved)
		return;
	if (__atomic_compare_exchange_n(&ring->head, &end, pos + used, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		return;
	/* someone reserved after us: the rest stays ours, as filler */
	put_pad(pos + used, reserved - used);
}

static __u64 user_pc(const void *uc)
{
	const ucontext_t *u = uc;

	if (!u)
		return 0;
#if defined(__x86_64__)
	return (__u64)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (__u64)u->uc_mcontext.pc;
#else
	return 0;
#endif
}

/*
 * The fallback walk. AGCT fails with "unknown, Java" or "not walkable, Java" (-5, -6) when
 * the thread is in Java but the interrupted frame is not one it can walk from: a VM stub
 * or intrinsic (Math.sin), an nmethod's prologue or epilogue before its frame is complete,
 * the interpreter between two states, or C code of libjvm that compiled code calls
 * without leaving the Java state. The caller of that frame usually is walkable: find its
 * pc/sp/fp and ask AGCT again with a copy of the context (never the real one: a jump out
 * of a fault would leave it changed). The interrupted frame itself is lost; it is no Java
 * method, or one whose own frame was not made yet.
 *
 * Candidates, at most FB_TRIES AGCT calls, each only for a return pc inside the code cache
 * (HotSpot's exported CodeCache bounds): the return address at sp (a frame not pushed
 * yet), at sp + 8 under a saved rbp (pushed, rbp not set), then the rbp chain (a stub that
 * made a frame, libjvm code: it is built with frame pointers). Every stack read happens
 * under the walk's fault protection and stays within FB_SPAN of the interrupted sp.
 */
#define FB_TRIES 4
#define FB_DEPTH 8	    /* rbp links followed looking for a return into the code cache */
#define FB_SPAN	 (1u << 20) /* popped frames lie this close above the interrupted sp */

static int fallback_on = 1;

static int fallback_ok(jint n)
{
	return fallback_on && (n == -3 || n == -4 || n == -5 || n == -6);
}

/* an anchor the fallback changed (x86), to be put back, on a fault too */
struct anchor_save {
	struct jpa_anchor a;
	uintptr_t sp, fp, pc; /* the anchor as HotSpot left it */
};

static void anchor_put(const struct jpa_anchor *a, uintptr_t sp, uintptr_t fp, uintptr_t pc)
{
	*(volatile uintptr_t *)a->pc = pc;
	if (a->fp)
		*(volatile uintptr_t *)a->fp = fp;
	*(volatile uintptr_t *)a->sp = sp;
}

#if defined(__x86_64__)
static uintptr_t stack_at(uintptr_t a)
{
	return *(const volatile uintptr_t *)a;
}

/* one more AGCT walk from (pc, sp, fp); 1 when it found Java frames */
static int retry(struct jpa_call_trace *t, ucontext_t *c, uintptr_t pc, uintptr_t sp, uintptr_t fp,
		 int *tries)
{
	if (*tries >= FB_TRIES || !jpa_vm_in_code(pc))
		return 0;
	(*tries)++;
	c->uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	c->uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	c->uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
	t->num_frames = 0;
	agct(t, (jint)ring_depth, c);
	return t->num_frames > 0;
}

/*
 * A return address as the pc AGCT walks from: it names an interrupted pc by the debug info
 * recorded after it (pc_desc_near(pc + 1)), which at a return address is the scope of the
 * code after the call, not of the call; one byte back (still the call) it finds the call's
 * own, and walks the frame as at that call. Only in an nmethod: the call stub's return
 * address must stay exact (AGCT knows the entry frame by it), and an interpreted frame is
 * named by its bcp.
 */
static uintptr_t as_return(uintptr_t ret)
{
	struct jpa_blob b;

	return !jpa_vm_blob(ret, &b) && b.kind == JPA_BLOB_NMETHOD && b.complete == 1 ? ret - 1
										      : ret;
}

/*
 * pc on a compiled method's epilogue, its frame already popped (after `add rsp, n`): 16
 * (`pop rbp` next: the caller's rbp and the return address above sp), 8 (only the return
 * address: the return poll `cmp rsp, [r15 + d]`, its `ja`, or `ret`), 0 not there. The
 * same shapes as jprof's BPF walk (jwalk.bpf.h jw_popped). AGCT walks such a frame by its
 * size from sp, which is past it now, and fails; the caller's sp is sp + the result.
 */
static int epilogue_popped(uintptr_t pc)
{
	const volatile unsigned char *b = (const volatile unsigned char *)pc;

	if (b[0] == 0x5d)
		return 16;
	if (b[0] == 0xc3)
		return 8;
	if (b[0] == 0x49 && b[1] == 0x3b && (b[2] == 0x67 || b[2] == 0xa7))
		return 8;
	if (b[0] == 0x0f && b[1] == 0x87 &&
	    ((b[-4] == 0x49 && b[-3] == 0x3b && b[-2] == 0x67) ||
	     (b[-7] == 0x49 && b[-6] == 0x3b && b[-5] == 0xa7)))
		return 8;
	return 0;
}

/*
 * JDK 25's nmethod entry barrier: pc on it, the frame made before it, the frame-complete
 * offset right after it (C2: `cmp dword [r15 + d8], imm32; jne stub`; C1: the same cmp, `je
 * +5; call stub`, after a nop or two that align it). AGCT refuses any pc before that offset;
 * the frame is whole here, so the first pc past it walks the same frame (no debug info is
 * recorded in between). The same shapes as jprof's BPF walk (jwalk.bpf.h jw_prologue).
 */
static int at_entry_barrier(uintptr_t pc, uintptr_t fc_pc)
{
	const volatile unsigned char *e = (const volatile unsigned char *)fc_pc;
	uintptr_t start;

	if (!fc_pc || pc >= fc_pc || fc_pc - pc > 24)
		return 0;
	if (e[-6] == 0x0f && e[-5] == 0x85 && e[-14] == 0x41 && e[-13] == 0x81 && e[-12] == 0x7f)
		start = fc_pc - 14;
	else if (e[-7] == 0x74 && e[-6] == 0x05 && e[-5] == 0xe8 && e[-15] == 0x41 &&
		 e[-14] == 0x81 && e[-13] == 0x7f)
		start = fc_pc - 15;
	else
		return 0;
	/* on the barrier, or on the nops before it */
	for (int k = 0; k < 2 && pc < start && ((const volatile unsigned char *)start)[-1] == 0x90;
	     k++)
		start--;
	return pc >= start;
}

/*
 * pc in the C2I half of an adapter (compiled code calling an interpreted method; HotSpot's
 * gen_c2i_adapter makes no frame): where its compiled caller's return address and sp are,
 * decided as jprof's BPF walk decides it (jwalk.bpf.h jw_c2i, which says why), from the
 * last of these sequences in the code before pc (FB_C2I_WIN bytes, within the blob):
 * `jmp r11` (the I2C half's end: nothing moved, the return address at sp), JDK 17's `pop
 * rax; mov r13, rsp; sub rsp, n` (then `mov [rsp], rax`), JDK 25's `lea r13, [rsp + 8]`
 * (then, with arguments, `pop rax; sub rsp, n; push rax`) or the patching call's `mov r13,
 * rsp; mov rax, [rsp]`. Past the move the caller's sp is r13 and the return address at sp;
 * in between it is the word below r13 (below sp right after JDK 17's pop). 1 and where the
 * return address is and the caller's sp; 0 not known (no guess: a wrong sp made AGCT walk
 * a compiled caller into a wrong frame, 2 of 6 frames).
 */
#define FB_C2I_WIN 256
/* a caller's sp at most this above the callee's: the arguments pushed in between */
#define FB_ARGS_SPAN 4096
#define C2I_ENTRY 1
#define C2I_17	  2
#define C2I_25	  3
#define C2I_PATCH 4

static int c2i_kind(const volatile unsigned char *q)
{
	if (q[0] == 0x41 && q[1] == 0xff && q[2] == 0xe3)
		return C2I_ENTRY;
	if (q[0] == 0x58 && q[1] == 0x4c && q[2] == 0x8b && q[3] == 0xec && q[4] == 0x48 &&
	    (q[5] == 0x83 || q[5] == 0x81) && q[6] == 0xec)
		return C2I_17;
	if (q[0] == 0x4c && q[1] == 0x8d && q[2] == 0x6c && q[3] == 0x24 && q[4] == 0x08)
		return C2I_25;
	if (q[0] == 0x4c && q[1] == 0x8b && q[2] == 0xec && q[3] == 0x48 && q[4] == 0x8b &&
	    q[5] == 0x04 && q[6] == 0x24)
		return C2I_PATCH;
	return 0;
}

static int c2i_caller(uintptr_t code, uintptr_t pc, uintptr_t sp, uintptr_t r13,
		      uintptr_t *ret_at, uintptr_t *ret_sp)
{
	const volatile unsigned char *q = NULL;
	uintptr_t lo = pc - FB_C2I_WIN > code && pc > FB_C2I_WIN ? pc - FB_C2I_WIN : code;
	int kind = 0, k, o, n;

	if (pc <= code)
		return 0;
	for (uintptr_t a = lo; a < pc; a++) {
		k = c2i_kind((const volatile unsigned char *)a);
		if (k) {
			kind = k;
			q = (const volatile unsigned char *)a;
		}
	}
	if (!kind)
		return 0;
	/* on the first byte of a sequence past the patching call: nothing moved yet */
	k = c2i_kind((const volatile unsigned char *)pc);
	if (kind == C2I_PATCH && (k == C2I_17 || k == C2I_25))
		kind = C2I_ENTRY;
	o = (int)(pc - (uintptr_t)q);
	*ret_at = sp;
	*ret_sp = r13;
	if (kind == C2I_ENTRY) {
		*ret_sp = sp + 8;
	} else if (kind == C2I_17) {
		n = q[5] == 0x83 ? 4 : 7;
		if (o == 1) {
			*ret_at = sp - 8;
			*ret_sp = sp;
		} else if (o < 8 + n) {
			*ret_at = r13 - 8;
		}
	} else if (kind == C2I_25) {
		if (o < 5)
			return 0;
		if (q[5] == 0x58 && q[6] == 0x48 && (q[7] == 0x83 || q[7] == 0x81) && q[8] == 0xec) {
			n = q[7] == 0x83 ? 4 : 7;
			if (q[6 + n] != 0x50)
				return 0;
			if (o > 5 && o <= 6 + n)
				*ret_at = r13 - 8;
		}
	}
	return !(*ret_sp & 7) && *ret_sp >= sp && *ret_sp - sp <= FB_ARGS_SPAN;
}

/*
 * A C2I adapter's caller (c2i_caller): its return address must follow a `call rel32`
 * into the code cache, as BPF's walk checks. 1 when AGCT found Java frames from there, -1
 * when it did not or a check failed (the caller is where c2i_caller says or not known: no
 * other guess), 0 when pc is not in the C2I half.
 */
static int c2i_walk(struct jpa_call_trace *t, ucontext_t *c, const struct jpa_blob *b,
		    uintptr_t pc, uintptr_t sp, uintptr_t fp, int *tries)
{
	uintptr_t at, ssp, ret;
	const volatile unsigned char *call;
	int32_t rel;

	if (!c2i_caller(b->code, pc, sp, (uintptr_t)c->uc_mcontext.gregs[REG_R13], &at, &ssp))
		return 0;
	ret = stack_at(at);
	if (!jpa_vm_in_code(ret) || !jpa_vm_in_code(ret - 5))
		return -1;
	call = (const volatile unsigned char *)(ret - 5);
	if (call[0] != 0xe8)
		return -1;
	rel = (int32_t)((uint32_t)call[1] | (uint32_t)call[2] << 8 | (uint32_t)call[3] << 16 |
			(uint32_t)call[4] << 24);
	if (!jpa_vm_in_code(ret + (uintptr_t)(intptr_t)rel))
		return -1;
	return retry(t, c, as_return(ret), ssp, fp, tries) ? 1 : -1;
}

/*
 * pc in the template interpreter, its frame at rbp not whole yet: the method's entry
 * between `mov rbp, rsp` and its last fixed slot, nine words below rbp (HotSpot's
 * generate_fixed_frame; AGCT's is_interpreted_frame_valid refuses the frame). The frame
 * is left out: its caller is at its return address, the caller's sp the sender sp the
 * entry pushed first (rbp - 1). Not rbp + 2, which the rbp chain below would take: past a
 * C2I adapter the caller's sp lies above the arguments the adapter pushed, and AGCT walked
 * a compiled caller from there into a wrong frame further down (JavaHot i2c, JDK 17: 3% of
 * the samples with 2 of 6 frames). jprof's BPF walk does the same (jwalk.bpf.h).
 */
#define FB_INTERP_FIXED 9 /* words: rbp - 9 is the initial sp slot */

/* 1 the caller's Java frames, -1 none (no other guess), 0 pc is not in such an entry */
static int interp_entry(struct jpa_call_trace *t, ucontext_t *c, uintptr_t sp, uintptr_t fp,
			int *tries)
{
	uintptr_t ssp;

	if (fp & 7 || sp > fp - 8 || sp <= fp - FB_INTERP_FIXED * 8)
		return 0;
	ssp = stack_at(fp - 8);
	if (ssp & 7 || ssp < fp + 16 || ssp - fp > FB_ARGS_SPAN)
		return -1;
	return retry(t, c, as_return(stack_at(fp + 8)), ssp, stack_at(fp), tries) ? 1 : -1;
}

/*
 * The compiled caller of a C1 or C2 runtime stub's frame (sp its sp, pc in the stub), found
 * as HotSpot's own walk finds a compiled frame's sender: the stub's frame is
 * CodeBlob::_frame_size words, its return address included, so the caller's sp is that
 * many words up, the return address the word below it and the rbp the stub saved the word
 * below that (HotSpot's sender_for_compiled_frame; its GC walks these frames so at every
 * call into the VM). Nothing is guessed: the blob must be a C1/C2 runtime stub (kind and
 * name), pc past its frame setup, its size sane, the caller's sp within the span and its
 * pc in an nmethod past the nmethod's frame setup. 1 and the caller's (sp, fp, pc); 0 when
 * pc is in no such stub; -1 when a check failed (counted: stub_gaveup).
 */
#define FB_STUB_WORDS 4096 /* a stub frame larger than 32 KiB is not believed */

static int stub_sender(uintptr_t sp, uintptr_t pc, uintptr_t top, uintptr_t *ret_sp,
		       uintptr_t *ret_fp, uintptr_t *ret_pc)
{
	struct jpa_blob b;
	uintptr_t ssp, spc;

	if (jpa_vm_blob(pc, &b) || b.kind != JPA_BLOB_RUNTIME_STUB)
		return 0;
	count(&ring->stub_tried);
	if (!b.complete || b.frame_words < 2 || b.frame_words > FB_STUB_WORDS)
		goto out_gaveup;
	ssp = sp + (uintptr_t)b.frame_words * 8;
	if (ssp > top)
		goto out_gaveup;
	spc = stack_at(ssp - 8);
	if (jpa_vm_blob(spc, &b) || b.kind != JPA_BLOB_NMETHOD || b.complete != 1)
		goto out_gaveup;
	*ret_sp = ssp;
	*ret_fp = stack_at(ssp - 16);
	*ret_pc = spc;
	return 1;
out_gaveup:
	count(&ring->stub_gaveup);
	return -1;
}

/*
 * "unknown, not Java" (-3) and "not walkable, not Java" (-4): the thread is in the VM,
 * called from a stub. -3: its last Java frame anchor has an sp but no pc yet: HotSpot's
 * stubs that call into the VM leave the pc to be filled in lazily, by the thread itself
 * (JavaFrameAnchor::make_walkable, x86: last_Java_pc = last_Java_sp[-1]). -4: the anchor
 * is complete, but AGCT finds no Java frame from the stub's frame it names (C1's and
 * C2's runtime stubs for counter overflows, allocation slow paths, ...). Then name a
 * caller of that frame instead: for a C1/C2 runtime stub, the one its frame size gives
 * (stub_sender); else the stubs keep rbp as a frame pointer, and libjvm is
 * built with one, so the rbp chain (from the anchor's fp, then from the interrupted
 * rbp through the VM's own frames) leads to the return address into the compiled or
 * interpreted caller. Each try sets the anchor (sp, fp, pc) as HotSpot itself would for
 * that frame, walks, and puts the original back; a fault in between is undone by the
 * walk's fault path (save/restore). Only for a thread in the VM (_thread_in_vm,
 * checked): no safepoint or handshake walks it before it leaves that state, and this
 * handler runs on it, so nobody else reads the anchor meanwhile.
 */
#define FB_VM_DEPTH 32 /* rbp links followed through the VM's frames to the stub */

/* one AGCT walk with the anchor naming (sp, fp, pc); 1 when it found Java frames */
static int anchored(struct jpa_call_trace *t, void *uc, struct anchor_save *save,
		    struct anchor_save *volatile *restore, uintptr_t sp, uintptr_t fp, uintptr_t pc,
		    int *tries)
{
	if (*tries >= FB_TRIES || !jpa_vm_in_code(pc))
		return 0;
	(*tries)++;
	*restore = save;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	anchor_put(&save->a, sp, fp, pc);
	t->num_frames = 0;
	agct(t, (jint)ring_depth, uc);
	anchor_put(&save->a, save->sp, save->fp, save->pc);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*restore = NULL;
	return t->num_frames > 0;
}

/*
 * Follows the rbp chain from link (frames at or above lo, below top) and tries each
 * return address into the code cache whose frame lies above the anchored one.
 */
static int anchored_chain(struct jpa_call_trace *t, void *uc, struct anchor_save *save,
			  struct anchor_save *volatile *restore, uintptr_t link, uintptr_t lo,
			  uintptr_t top, uintptr_t *tried_sp, int *tries)
{
	for (int i = 0; i < FB_VM_DEPTH && *tries < FB_TRIES; i++) {
		uintptr_t pc, next;

		if (link < lo || link + 16 > top || link & 7)
			return 0;
		pc = stack_at(link + 8);
		next = stack_at(link);
		if (link + 16 > save->sp && link + 16 != *tried_sp && jpa_vm_in_code(pc)) {
			*tried_sp = link + 16;
			if (anchored(t, uc, save, restore, link + 16, next, pc, tries))
				return 1;
		}
		if (next <= link)
			return 0;
		link = next;
	}
	return 0;
}

static int anchor_walk(struct jpa_call_trace *t, uintptr_t jt, void *uc, struct anchor_save *save,
		       struct anchor_save *volatile *restore)
{
	const ucontext_t *u = uc;
	uintptr_t usp = (uintptr_t)u->uc_mcontext.gregs[REG_RSP];
	uintptr_t ufp = (uintptr_t)u->uc_mcontext.gregs[REG_RBP];
	uintptr_t top, pc, ssp, sfp, spc, tried = 0;
	int tries = 0, stub;

	if (jpa_vm_anchor(jt, &save->a))
		return 0;
	/* in native or blocked, a safepoint may walk this thread meanwhile: hands off */
	if (*(volatile int32_t *)save->a.state != save->a.in_vm)
		return 0;
	save->sp = *(volatile uintptr_t *)save->a.sp;
	save->pc = *(volatile uintptr_t *)save->a.pc;
	save->fp = save->a.fp ? *(volatile uintptr_t *)save->a.fp : 0;
	top = save->sp + FB_SPAN;
	if (!save->sp || save->sp & 7 || top < save->sp)
		return 0;
	/* -3: the pc HotSpot would fill in itself (x86: make_walkable) */
	pc = save->pc ? save->pc : stack_at(save->sp - 8);
	/*
	 * The frame the anchor names is a C1/C2 runtime stub's (its call into the VM: monitor
	 * enter, allocation slow paths, counter overflow). AGCT never walks from those: C1 and
	 * C2 install them as never frame-complete, so its safe_for_sender refuses them. Name
	 * the stub's compiled caller instead, found by the stub's frame size.
	 */
	stub = stub_sender(save->sp, pc, top, &ssp, &sfp, &spc);
	if (stub > 0 && anchored(t, uc, save, restore, ssp, sfp, spc, &tries)) {
		count(&ring->stub_ok);
		return 1;
	}
	if (!stub && !save->pc && anchored(t, uc, save, restore, save->sp, save->fp, pc, &tries))
		return 1;
	/* the anchored frame's callers: from its fp, then up from the VM's frames */
	if (save->a.fp &&
	    anchored_chain(t, uc, save, restore, save->fp, save->sp, top, &tried, &tries))
		return 1;
	return !(usp & 7) && usp < save->sp &&
	       anchored_chain(t, uc, save, restore, ufp, usp, top, &tried, &tries);
}

/*
 * A thread still in Java under a stub's call into the VM (JRT_BLOCK_ENTRY code such as
 * JDK 25's monitor quick_enter spinning before it changes state): the anchor has the
 * stub's sp but no pc, so AGCT ignores it and walks the interrupted libjvm frames. Its
 * compiled caller, found by the stub's frame size, is walked from a copy of the context
 * instead (the anchor is not written: the thread is not in the VM).
 */
static int anchor_stub(struct jpa_call_trace *t, uintptr_t jt, ucontext_t *c, uintptr_t usp,
		       uintptr_t top, int *tries)
{
	struct jpa_anchor a;
	uintptr_t sp, ssp, sfp, spc;

	if (jpa_vm_anchor(jt, &a))
		return 0;
	sp = *(volatile uintptr_t *)a.sp;
	if (!sp || sp & 7 || sp <= usp || sp >= top || *(volatile uintptr_t *)a.pc)
		return 0;
	if (stub_sender(sp, stack_at(sp - 8), top, &ssp, &sfp, &spc) <= 0 ||
	    !retry(t, c, spc, ssp, sfp, tries))
		return 0;
	count(&ring->stub_ok);
	return 1;
}

/*
 * Before AGCT's own walk: pc on a compiled method's popped epilogue. At `pop rbp` AGCT's
 * walk of the frame by its size from sp does not always fail: it read a word of the
 * caller's frame as the return address and gave wrong callers (H2, JDK 17: 3-5 stacks in
 * 10 s). The frame placed as if whole instead; 1 when that gave Java frames. Costs a
 * thread in Java a byte read at pc, and the blob lookup only on an epilogue's shape.
 */
static int epilogue_walk(struct jpa_call_trace *t, void *uc, __u8 *ret_flags)
{
	const ucontext_t *u = uc;
	uintptr_t pc = (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
	uintptr_t sp = (uintptr_t)u->uc_mcontext.gregs[REG_RSP];
	struct jpa_blob b;
	ucontext_t c;
	int pop, tries = 0;

	if (!fallback_on || (sp & 7) || !jpa_vm_in_code(pc))
		return 0;
	pop = epilogue_popped(pc);
	if (!pop || jpa_vm_blob(pc, &b) || b.kind != JPA_BLOB_NMETHOD || b.complete != 1 ||
	    b.frame_words < 2 || b.frame_words > FB_STUB_WORDS)
		return 0;
	memcpy(&c, uc, sizeof(c));
	if (!retry(t, &c, pc, sp + (uintptr_t)pop - (uintptr_t)b.frame_words * 8,
		   (uintptr_t)c.uc_mcontext.gregs[REG_RBP], &tries))
		return 0;
	*ret_flags |= JP_TRACE_F_FALLBACK;
	return 1;
}

static void fallback(struct jpa_call_trace *t, uintptr_t jt, void *uc, __u8 *ret_flags,
		     struct anchor_save *save, struct anchor_save *volatile *restore)
{
	struct timespec t0;
	jint first = t->num_frames;
	uintptr_t pc, sp, fp, top;
	struct jpa_blob b;
	ucontext_t c;
	int tries = 0, ok = 0, pop;

	/* CPU time, not wall time: a preemption inside on a busy host is not our cost */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	count(&ring->fallback_tried);
	/* test hook: every Nth fallback faults on its first stack read */
	if (test_fault_every &&
	    __atomic_add_fetch(&test_fallbacks, 1, __ATOMIC_RELAXED) % test_fault_every == 0)
		(void)stack_at((uintptr_t)test_guard);
	memcpy(&c, uc, sizeof(c));
	pc = (uintptr_t)c.uc_mcontext.gregs[REG_RIP];
	sp = (uintptr_t)c.uc_mcontext.gregs[REG_RSP];
	fp = (uintptr_t)c.uc_mcontext.gregs[REG_RBP];
	top = sp + FB_SPAN;
	if (first == -3 || first == -4) {
		ok = anchor_walk(t, jt, uc, save, restore);
		goto out;
	}
	if (sp & 7 || top < sp)
		goto out;
	if (!jpa_vm_in_code(pc) && anchor_stub(t, jt, &c, sp, top, &tries)) {
		ok = 1;
		goto out;
	}
	if (jpa_vm_in_code(pc) && !jpa_vm_blob(pc, &b)) {
		/*
		 * an nmethod's epilogue: the frame walked as if whole (its sp that many words
		 * below the caller's), so that the method itself is not lost. In a C2I
		 * adapter or an interpreted method's entry the caller's sp is not where the
		 * guesses below take it: where it is is known, or no guess is made
		 */
		pop = b.kind == JPA_BLOB_NMETHOD && b.complete == 1 && b.frame_words >= 2 &&
				      b.frame_words <= FB_STUB_WORDS
			      ? epilogue_popped(pc)
			      : 0;
		if (pop)
			ok = retry(t, &c, pc, sp + (uintptr_t)pop - (uintptr_t)b.frame_words * 8,
				   fp, &tries);
		else if (b.kind == JPA_BLOB_NMETHOD && b.complete == 1 && b.frame_words >= 2 &&
			 b.frame_words <= FB_STUB_WORDS)
			/*
			 * a word pushed in the body: C2's String.compareTo intrinsic
			 * (MacroAssembler::string_compare) keeps the length difference on the
			 * stack, so AGCT takes a spill slot for the return address; the frame
			 * one word up (AGCT checks its sender as always)
			 */
			ok = retry(t, &c, pc, sp + 8, fp, &tries);
		else if (b.kind == JPA_BLOB_NMETHOD && b.complete == 0 &&
			 at_entry_barrier(pc, b.complete_pc))
			ok = retry(t, &c, b.complete_pc, sp, fp, &tries);
		else if (b.kind == JPA_BLOB_INTERPRETER || b.kind == JPA_BLOB_ADAPTER) {
			ok = b.kind == JPA_BLOB_INTERPRETER ? interp_entry(t, &c, sp, fp, &tries)
							    : c2i_walk(t, &c, &b, pc, sp, fp, &tries);
			if (ok < 0) {
				ok = 0;
				goto out;
			}
		}
	}
	if (!ok && jpa_vm_in_code(pc))
		ok = retry(t, &c, as_return(stack_at(sp)), sp + 8, fp, &tries) ||
		     retry(t, &c, as_return(stack_at(sp + 8)), sp + 16, stack_at(sp), &tries);
	for (int i = 0; !ok && i < FB_DEPTH; i++) {
		/* a frame link runs upwards, aligned, within the span */
		if (fp <= sp || fp + 16 > top || fp & 7)
			break;
		ok = retry(t, &c, stack_at(fp + 8), fp + 16, stack_at(fp), &tries);
		sp = fp;
		fp = stack_at(fp);
	}
out:
	if (ok) {
		*ret_flags |= JP_TRACE_F_FALLBACK;
		count(&ring->fallback_ok);
	} else {
		t->num_frames = first;
	}
	add_cpu_since(&ring->fallback_ns, &t0);
}
#else
static int epilogue_walk(struct jpa_call_trace *t, void *uc, __u8 *ret_flags)
{
	(void)t;
	(void)uc;
	(void)ret_flags;
	return 0;
}

static void fallback(struct jpa_call_trace *t, uintptr_t jt, void *uc, __u8 *ret_flags,
		     struct anchor_save *save, struct anchor_save *volatile *restore)
{
	(void)t;
	(void)jt;
	(void)uc;
	(void)ret_flags;
	(void)save;
	(void)restore;
}
#endif

/*
 * The walk, protected: a fault inside AsyncGetCallTrace lands in on_fault(), which finds
 * this thread's walk mark in its table slot and jumps back here. sigsetjmp does not save
 * the mask (that would be a syscall per walk): on_fault restores it itself.
 *
 * What the jump leaves behind in HotSpot: AGCT holds no lock and allocates nothing, but
 * since JDK 21 (and 17.0.x backports) it marks the thread "in ASGCT" for the duration
 * (ThreadInAsgct, an RAII guard the jump skips), so that thread's flag stays set. Its
 * readers are nmethod::find_pc_desc, which then leaves the PcDesc cache alone (slower
 * lookups on that one thread, nothing wrong), CodeCache::find_blob in 17u (returns NULL
 * for a zombie instead of stopping the VM) and debug-only asserts. Its offset is not
 * exported (gHotSpotVMStructs), so we leave it rather than guess where to write.
 * A fault AGCT expects (SafeFetch probing a Method* of a torn frame, which HotSpot's
 * handler would resume) also ends the walk here: that sample is reported as faulted
 * rather than as AGCT's error code; the JVM is unaffected either way.
 */
static __attribute__((noinline)) jint walk(struct jpa_thread *self, JNIEnv *env,
					   struct jp_frame *frames, void *uc, __u8 *ret_flags)
{
	struct jpa_call_trace t = {.env = env, .num_frames = 0, .frames = frames};
	sigjmp_buf jb;
	volatile int test = 0;
	volatile jint agct_code = 1;	    /* AGCT's own answer, once the fallback runs */
	struct anchor_save save;
	struct anchor_save *volatile restore = NULL; /* an anchor the fallback changed */

	if (!faults_caught) {
		/* unprotected: no fallback, its reads may fault */
		agct(&t, (jint)ring_depth, uc);
		return t.num_frames;
	}
	if (test_fault_every &&
	    __atomic_add_fetch(&test_walks, 1, __ATOMIC_RELAXED) % test_fault_every == 0) {
		/* test hook: AGCT writes its first frame into a PROT_NONE page */
		t.frames = test_guard;
		test = 1;
	}
	if (sigsetjmp(jb, 0)) {
		/* on_fault cleared the mark and restored the signal mask */
		__atomic_fetch_sub(&walkers, 1, __ATOMIC_RELEASE);
		if (restore)
			anchor_put(&restore->a, restore->sp, restore->fp, restore->pc);
		if (agct_code <= 0) {
			/* the fallback faulted: the sample keeps AGCT's answer */
			count(&ring->faults);
			return agct_code;
		}
		return JP_ERR_FAULT;
	}
	__atomic_fetch_add(&walkers, 1, __ATOMIC_ACQUIRE);
	__atomic_store_n(&self->walk, &jb, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!epilogue_walk(&t, uc, ret_flags)) {
		t.num_frames = 0;
		agct(&t, (jint)ring_depth, uc);
	}
	if (test)
		(void)*(volatile char *)test_guard; /* AGCT wrote no frame: fault here instead */
	if (fallback_ok(t.num_frames)) {
		agct_code = t.num_frames;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		fallback(&t, self->jt, uc, ret_flags, &save, &restore);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&self->walk, NULL, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&walkers, 1, __ATOMIC_RELEASE);
	return t.num_frames;
}

/*
 * A park's blocker class after the frames (at used bytes into r, room for JP_BLOCKER_MAX
 * reserved): the bytes it adds to the record, 0 none. Counts what became of a park.
 */
static __u32 put_blocker(struct jp_trace_rec *r, uintptr_t jt, __u32 used)
{
	char *name = (char *)r + used;
	int len = jpa_blocker_read(jt, (const struct jp_frame *)(r + 1), r->num_frames, name,
				   JP_BLOCKER_MAX);

	if (len == -ENODATA)
		return 0;
	if (len == 0) {
		count(&ring->blocker_none);
		return 0;
	}
	if (len < 0 || (__u32)len > JP_BLOCKER_MAX) {
		count(&ring->blocker_failed);
		return 0;
	}
	memset(name + len, 0, ALIGN16((__u32)len) - (__u32)len);
	r->blocker_len = (__u8)len;
	r->flags |= JP_TRACE_F_BLOCKER;
	count(&ring->blocker_named);
	return ALIGN16((__u32)len);
}

/*
 * The stack-request handler. Async-signal-safe: atomics, clock_gettime (vDSO), gettid,
 * pthread_getspecific (a read of the thread descriptor), a probe of the fixed thread
 * table and AGCT (built for exactly this); no GetEnv (its TLS access may malloc), no
 * malloc, no locks, no stdio. Frames go straight into the reserved ring space: 2048
 * frames are 32 KiB, too big for a small signal stack. errno is preserved.
 */
static void on_stack_request(int signo, siginfo_t *si, void *uc)
{
	struct jpa_thread *self = NULL;
	struct jp_trace_rec *r;
	struct timespec ts, c0;
	__u32 len, used;
	JNIEnv *env = NULL;
	int saved_errno = errno;
	int timed;
	__u64 pos;
	jint n;

	(void)signo;
	(void)si;
	if (!agct) {
		count(&ring->busy);
		goto out;
	}
	/*
	 * the handler's own cost, shown per JVM: thread CPU time (a syscall, so one call in
	 * JP_HANDLER_TIMED_EVERY); wall time would count preemptions inside on a busy host
	 */
	timed = __atomic_fetch_add(&handler_calls, 1, __ATOMIC_RELAXED) % JP_HANDLER_TIMED_EVERY == 0;
	if (timed)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	self = jpa_thread_self(&env);
	/* room for a park's blocker name after the deepest trace; shrink gives it back */
	len = self ? TRACE_BYTES(ring_depth) + JP_BLOCKER_MAX : TRACE_BYTES(0);
	switch (reserve(len, &pos)) {
	case 0:
		break;
	case -ENOSPC:
		count(&ring->ring_full);
		goto out;
	default:
		count(&ring->busy);
		goto out;
	}
	r = (struct jp_trace_rec *)(ring_data + (pos & ring_mask));
	r->h.type = JP_REC_TRACE;
	r->time_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	r->pc = user_pc(uc);
	r->tid = (__u32)syscall(SYS_gettid);
	r->flags = 0;
	r->blocker_len = 0;
	memset(r->pad, 0, sizeof(r->pad));
	if (self) {
		n = walk(self, env, (struct jp_frame *)(r + 1), uc, &r->flags);
		if (n > 0 && (__u32)n > ring_depth)
			n = (jint)ring_depth; /* never trust a count past our buffer */
		r->num_frames = n;
		if (n == JP_ERR_FAULT)
			count(&ring->faults);
		else if (n <= 0 && n > -JP_AGCT_CODES)
			count(&ring->agct_err[-n]);
	} else {
		r->num_frames = JP_ERR_NOT_JAVA_THREAD;
		count(&ring->not_java_thread);
	}
	used = TRACE_BYTES(r->num_frames > 0 ? r->num_frames : 0);
	if (self && r->num_frames > 0)
		used += put_blocker(r, self->jt, used);
	r->h.len = used;
	shrink(pos, len, used);
	count(&ring->traces);
	commit(pos);
	if (timed) {
		add_cpu_since(&ring->handler_ns, &c0);
		count(&ring->handler_timed);
	}
out:
	errno = saved_errno;
}

/*
 * One event from a JVMTI callback on an ordinary thread (never from a signal handler).
 * The same lock-free reservation as the handler: the callback never waits for jprof, a
 * full ring (or a lost CAS race) drops the event and counts it. A stack-request signal
 * may land on this thread between reserve and commit: its record goes after ours, and
 * jprof reads it once ours is committed a moment later.
 */
int jpa_ring_event(const struct jp_event_rec *ev, const jvmtiFrameInfo *frames, int n)
{
	struct jp_event_rec *r;
	struct jp_frame *f;
	__u32 len;
	__u64 pos;

	if (!ring)
		return -ENODEV;
	if (n < 0 || !frames)
		n = 0;
	if ((__u32)n > ring_depth)
		n = (int)ring_depth;
	len = (__u32)sizeof(*r) + (__u32)n * (__u32)sizeof(struct jp_frame);
	if (reserve(len, &pos)) {
		count(&ring->events_dropped);
		return -ENOSPC;
	}
	r = (struct jp_event_rec *)(ring_data + (pos & ring_mask));
	memcpy((char *)r + sizeof(r->h), (const char *)ev + sizeof(ev->h), sizeof(*r) - sizeof(r->h));
	r->num_frames = n;
	f = (struct jp_frame *)(r + 1);
	for (int i = 0; i < n; i++) {
		/* jlocation is the bytecode index for HotSpot; -1 in a native method */
		f[i].bci = frames[i].location >= 0 && frames[i].location <= INT32_MAX ?
				   (__s32)frames[i].location :
				   -3;
		f[i].pad = 0;
		f[i].method_id = (__u64)(uintptr_t)frames[i].method;
	}
	r->h.type = JP_REC_EVENT;
	r->h.len = len;
	r->h.pad = 0;
	count(&ring->events);
	commit(pos);
	return 0;
}

void jpa_ring_event_dropped(void)
{
	if (ring)
		count(&ring->events_dropped);
}

/* a fault that is not ours goes to whoever handled it before us (HotSpot, normally) */
static void chain(const struct sigaction *prev, int sig, siginfo_t *si, void *uc)
{
	if (prev->sa_flags & SA_SIGINFO) {
		prev->sa_sigaction(sig, si, uc);
	} else if (prev->sa_handler == SIG_DFL) {
		/* the default action: a real fault repeats on return, a sent one is raised */
		signal(sig, SIG_DFL);
		if (si && si->si_code <= 0)
			raise(sig);
	} else if (prev->sa_handler != SIG_IGN) {
		prev->sa_handler(sig);
	}
}

/*
 * SIGSEGV/SIGBUS, installed after HotSpot's. HotSpot takes these signals all the time
 * (implicit null checks, safepoint polls, stack banging): with no walk under way anywhere
 * this costs one load before it chains.
 */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	struct jpa_thread *self;
	sigjmp_buf *jb;

	if (__atomic_load_n(&walkers, __ATOMIC_ACQUIRE)) {
		self = jpa_thread_self(NULL);
		jb = self ? __atomic_load_n(&self->walk, __ATOMIC_RELAXED) : NULL;
		if (jb) {
			__atomic_store_n(&self->walk, NULL, __ATOMIC_RELAXED);
			/* back to the mask of the walk: SIGSEGV/SIGBUS unblocked again */
			if (uc)
				pthread_sigmask(SIG_SETMASK, &((ucontext_t *)uc)->uc_sigmask, NULL);
			siglongjmp(*jb, 1);
		}
	}
	chain(sig == SIGBUS ? &prev_bus : &prev_segv, sig, si, uc);
}

int jpa_stacks_catch_faults(void)
{
	struct sigaction sa;

	if (sigaction(SIGSEGV, NULL, &prev_segv) || sigaction(SIGBUS, NULL, &prev_bus))
		return -errno;
	/* HotSpot's flags and mask, so its handler runs as it would without us */
	sa = prev_segv;
	sa.sa_sigaction = on_fault;
	sa.sa_flags = (prev_segv.sa_flags | SA_SIGINFO) & ~(SA_RESETHAND | SA_NODEFER);
	if (sigaction(SIGSEGV, &sa, NULL))
		return -errno;
	sa = prev_bus;
	sa.sa_sigaction = on_fault;
	sa.sa_flags = (prev_bus.sa_flags | SA_SIGINFO) & ~(SA_RESETHAND | SA_NODEFER);
	if (sigaction(SIGBUS, &sa, NULL)) {
		int err = -errno;

		(void)sigaction(SIGSEGV, &prev_segv, NULL);
		return err;
	}
	__atomic_store_n(&faults_caught, 1, __ATOMIC_RELEASE);
	return 0;
}

void jpa_stacks_no_fallback(void)
{
	fallback_on = 0;
}

int jpa_stacks_test_faults(__u32 every)
{
	void *p;

	if (!every)
		return 0;
	p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	test_guard = p;
	test_fault_every = every;
	return 0;
}


void jpa_stacks_set_ring(struct jp_ring_hdr *hdr, __u32 data_size, __u32 max_depth)
{
	ring = hdr;
	ring_data = (unsigned char *)hdr + JP_RING_HDR_SIZE;
	ring_mask = data_size - 1;
	ring_depth = max_depth;
}

void jpa_stacks_set_agct(jpa_agct_fn fn)
{
	agct = fn;
}

jpa_sigaction_fn jpa_stacks_handler(void)
{
	return on_stack_request;
}

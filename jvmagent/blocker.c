/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * blocker.c: the class of a parked thread's blocker (java.lang.Thread.parkBlocker, what
 * LockSupport.getBlocker returns), read in the stack-request handler.
 *
 * The handler's trace of a park is taken when the blocking futex returns: still inside
 * Unsafe.park, so LockSupport.park(blocker) has not cleared the field yet. JVMTI and JNI
 * are no option there (signal context, and the thread is _thread_blocked), so the object is
 * followed by hand, every load through jpa_vm_read (process_vm_readv on ourselves: a bad
 * address is -EFAULT, never a fault), with the layout from VMStructs:
 *
 *   JavaThread::_vthread (JDK 21+: Thread.currentThread(), the mounted virtual thread, else
 *   the carrier's) or _threadObj (17): an OopHandle -> oop* -> the Thread oop;
 *   + parkBlocker's offset -> a (narrow) oop -> the blocker;
 *   + oopDesc::_metadata._compressed_klass (narrow) or _klass -> Klass*;
 *   Klass::_name -> Symbol* -> _length (u2), _body: "java/util/concurrent/locks/...".
 *
 * What can go wrong and how it is kept out:
 *  - Objects move. The thread is blocked, so a safepoint may run meanwhile, and with it a
 *    moving GC. Only stop-the-world collectors are accepted (G1, Parallel, Serial,
 *    Epsilon: objects move only inside a pause); the read is bracketed by the heap's
 *    _is_(stw_)gc_active flag and _total_collections, as a sequence lock: a pause under
 *    way, begun or ended meanwhile drops the name. ZGC and Shenandoah (concurrent moves,
 *    coloured pointers) and compact object headers (the class in the mark word, JDK 24+)
 *    are refused at start: no blocker, ever.
 *  - The layout is learnt, then proved at start (blocker_verify): a Thread object made
 *    with AllocObject gets a java.lang.Object as its parkBlocker (JNI SetObjectField); the
 *    field's offset is where that object's (narrow) oop shows in the Thread's fields, once,
 *    and the read above must name it "java/lang/Object"; the current thread's handle must
 *    lead to its own oop. Any step failing: the feature stays off (logged once).
 *  - A name is kept only if its length is 1..JP_BLOCKER_MAX and every byte is a printable
 *    ASCII class-name character; the rest is counted as failed, never sent.
 * The parkBlocker offset is not taken from the jfieldID: HotSpot's encoding of instance
 * field ids (offset << 2, more bits with VerifyJNIFields) is not an interface.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "agent.h"

static int blocker_on;	 /* release-stored once everything below is set */
static __u64 park_mid;	 /* jmethodID of jdk/internal/misc/Unsafe.park(ZJ)V */
static long thread_off;	 /* JavaThread::_vthread or _threadObj */
static long pb_off = -1; /* java.lang.Thread.parkBlocker in a Thread object */
static int oop_size;	 /* 4: compressed oops, 8: not */
static long klass_off;	 /* oopDesc's narrow or wide klass field */
static int klass_size;	 /* 4: compressed class pointers, 8: not */
static uintptr_t oop_base, klass_base;
static int oop_shift, klass_shift;
static uintptr_t gc_heap; /* the CollectedHeap object */
static const struct jpa_heap *h;

/* the heap's GC state, as a sequence: -EAGAIN while a pause runs, else its count */
static int gc_seq(__u32 *ret)
{
	unsigned char active = 1;
	__u32 count = 0;

	if (jpa_vm_read(gc_heap + (uintptr_t)h->gc_active, &active, 1) ||
	    jpa_vm_read(gc_heap + (uintptr_t)h->gc_count, &count, sizeof(count)))
		return -EFAULT;
	if (active)
		return -EAGAIN;
	*ret = count;
	return 0;
}

/* an oop field at addr (narrow or not) decoded; 0 null */
static int read_oop(uintptr_t addr, uintptr_t *ret)
{
	__u32 n = 0;
	uintptr_t o = 0;

	if (oop_size == 4) {
		if (jpa_vm_read(addr, &n, sizeof(n)))
			return -EFAULT;
		o = n ? oop_base + ((uintptr_t)n << oop_shift) : 0;
	} else if (jpa_vm_read(addr, &o, sizeof(o))) {
		return -EFAULT;
	}
	/* objects are 8-byte aligned */
	if (o & 7)
		return -EINVAL;
	*ret = o;
	return 0;
}

static uintptr_t klass_of(uintptr_t obj)
{
	__u32 n = 0;
	uintptr_t k = 0;

	if (klass_size == 4) {
		if (jpa_vm_read(obj + (uintptr_t)klass_off, &n, sizeof(n)) || !n)
			return 0;
		k = klass_base + ((uintptr_t)n << klass_shift);
	} else if (jpa_vm_read(obj + (uintptr_t)klass_off, &k, sizeof(k))) {
		return 0;
	}
	return k & 7 ? 0 : k;
}

/* a class name's bytes as the JVM keeps them: printable ASCII, no separators of types */
static int name_ok(const char *s, __u32 n)
{
	if (!n || s[0] == '/' || s[n - 1] == '/')
		return 0;
	for (__u32 i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c <= 0x20 || c >= 0x7f || c == ';' || c == '[' || c == '.')
			return 0;
	}
	return 1;
}

/* the class name of obj's class into buf (cap bytes); its length, or -errno */
static int class_name(uintptr_t obj, char *buf, __u32 cap)
{
	uintptr_t k = klass_of(obj), sym = 0;
	__u16 len = 0;

	if (!k || jpa_vm_read(k + (uintptr_t)h->klass_name, &sym, sizeof(sym)) || !sym ||
	    (sym & 3) || jpa_vm_read(sym + (uintptr_t)h->sym_length, &len, sizeof(len)))
		return -EFAULT;
	if (!len || len > cap)
		return -ERANGE;
	if (jpa_vm_read(sym + (uintptr_t)h->sym_body, buf, len))
		return -EFAULT;
	return name_ok(buf, len) ? len : -EINVAL;
}

/* the Thread oop a JavaThread's handle at off holds */
static int thread_oop(uintptr_t jt, long off, uintptr_t *ret)
{
	uintptr_t slot = 0, o = 0;

	if (!jt || jpa_vm_read(jt + (uintptr_t)off, &slot, sizeof(slot)) || !slot || (slot & 7) ||
	    jpa_vm_read(slot + (uintptr_t)h->handle_obj, &o, sizeof(o)) || !o || (o & 7))
		return -EFAULT;
	*ret = o;
	return 0;
}

/* the blocker of a Thread oop: its name's length, 0 none (null), or -errno */
static int blocker_of_thread(uintptr_t thr, char *buf, __u32 cap)
{
	uintptr_t b = 0;

	if (read_oop(thr + (uintptr_t)pb_off, &b))
		return -EFAULT;
	return b ? class_name(b, buf, cap) : 0;
}

int jpa_blocker_read(uintptr_t jt, const struct jp_frame *frames, int n, char *buf, __u32 cap)
{
	uintptr_t thr;
	__u32 c0, c1;
	int len;

	if (!__atomic_load_n(&blocker_on, __ATOMIC_ACQUIRE) || n <= 0)
		return -ENODATA;
	/* Unsafe.park, a native method: the leaf frame, or the one under a stub's */
	if (frames[0].method_id != park_mid && (n < 2 || frames[1].method_id != park_mid))
		return -ENODATA;
	if (gc_seq(&c0))
		return -EAGAIN;
	if (thread_oop(jt, thread_off, &thr))
		return -EFAULT;
	len = blocker_of_thread(thr, buf, cap);
	if (gc_seq(&c1) || c1 != c0)
		return -EAGAIN;
	return len;
}

/* the oop a JNI local reference stands for: a local handle is a plain oop* (17 and 25) */
static int local_oop(jobject ref, uintptr_t *ret)
{
	uintptr_t o = 0;

	if (!ref || ((uintptr_t)ref & 3) || jpa_vm_read((uintptr_t)ref, &o, sizeof(o)) || !o ||
	    (o & 7))
		return -EFAULT;
	*ret = o;
	return 0;
}

/*
 * One try of the proof (see the top): 0, -EAGAIN (a GC moved things meanwhile, try
 * again) or another -errno (the layout is not what we think: give up)
 */
static int verify_once(JNIEnv *env, jthread current, jobject fake, jobject marker)
{
	uintptr_t cur, own, thr, mk, want;
	char name[32];
	__s32 size = 0;
	__u32 c0, c1;
	int hits = 0, len;
	long off = -1;

	if (gc_seq(&c0))
		return -EAGAIN;
	if (local_oop(current, &cur) ||
	    thread_oop(jpa_thread_eetop(env, current), thread_off, &own) || local_oop(fake, &thr) ||
	    local_oop(marker, &mk))
		return -EAGAIN;
	if (own != cur)
		return gc_seq(&c1) || c1 != c0 ? -EAGAIN : -EPROTO;
	/* the Thread object's bytes (Klass::_layout_helper of an instance class) */
	if (jpa_vm_read(klass_of(thr) + (uintptr_t)h->klass_layout, &size, sizeof(size)) ||
	    (size &= ~7) < 16 || size > 4096)
		return -EPROTO;
	if (oop_size == 4) {
		if (mk < oop_base || ((mk - oop_base) & ((1ul << oop_shift) - 1)))
			return -EPROTO;
		want = (mk - oop_base) >> oop_shift;
	} else {
		want = mk;
	}
	for (long o = 8; o + oop_size <= size; o += oop_size) {
		uintptr_t v = 0;

		if (jpa_vm_read(thr + (uintptr_t)o, &v, (size_t)oop_size))
			return -EAGAIN;
		if (v == want) {
			hits++;
			off = o;
		}
	}
	if (hits != 1)
		return gc_seq(&c1) || c1 != c0 ? -EAGAIN : -EPROTO;
	pb_off = off;
	len = blocker_of_thread(thr, name, sizeof(name));
	if (gc_seq(&c1) || c1 != c0)
		return -EAGAIN;
	return len == 16 && !memcmp(name, "java/lang/Object", 16) ? 0 : -EPROTO;
}

/* the proof's Thread object, its parkBlocker set to null again, reads as without one */
static int verify_null(jobject fake)
{
	uintptr_t thr;
	char name[32];
	__u32 c0, c1;
	int r;

	if (gc_seq(&c0) || local_oop(fake, &thr))
		return -EAGAIN;
	r = blocker_of_thread(thr, name, sizeof(name));
	if (gc_seq(&c1) || c1 != c0)
		return -EAGAIN;
	return r == 0 ? 0 : -EPROTO;
}

/* the proof, with the objects it needs; a moving GC in between makes it try again */
static int verify(JNIEnv *env, jthread current, jfieldID pb)
{
	jclass tc = (*env)->FindClass(env, "java/lang/Thread");
	jclass oc = (*env)->FindClass(env, "java/lang/Object");
	jobject fake = tc ? (*env)->AllocObject(env, tc) : NULL;
	jobject marker = oc ? (*env)->AllocObject(env, oc) : NULL;
	int err = -ENOENT;

	if (fake && marker && !(*env)->ExceptionCheck(env)) {
		(*env)->SetObjectField(env, fake, pb, marker);
		for (int i = 0; i < 4; i++) {
			err = verify_once(env, current, fake, marker);
			if (err != -EAGAIN)
				break;
		}
		/* and a null blocker reads as none */
		if (!err) {
			(*env)->SetObjectField(env, fake, pb, NULL);
			err = -EAGAIN;
			for (int i = 0; i < 4 && err == -EAGAIN; i++)
				err = verify_null(fake);
		}
	}
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	if (fake)
		(*env)->DeleteLocalRef(env, fake);
	if (marker)
		(*env)->DeleteLocalRef(env, marker);
	if (tc)
		(*env)->DeleteLocalRef(env, tc);
	if (oc)
		(*env)->DeleteLocalRef(env, oc);
	return err;
}

/* flags that make the read above unsafe or wrong: -ENOTSUP, with what in *ret_why */
static int heap_supported(const char **ret_why)
{
	static const char *const stw[] = {"UseG1GC", "UseParallelGC", "UseSerialGC",
					  "UseEpsilonGC"};
	int v = 0, any = 0;

	/* JDK 24+: the class lives in the mark word; not handled */
	if (!jpa_vm_flag_bool("UseCompactObjectHeaders", &v) && v) {
		*ret_why = "compact object headers";
		return -ENOTSUP;
	}
	for (size_t i = 0; i < sizeof(stw) / sizeof(stw[0]); i++)
		any |= !jpa_vm_flag_bool(stw[i], &v) && v;
	if (!any) {
		*ret_why = "a concurrent moving GC (or none known)";
		return -ENOTSUP;
	}
	if (jpa_vm_flag_bool("UseCompressedOops", &v)) {
		*ret_why = "UseCompressedOops unknown";
		return -ENOENT;
	}
	oop_size = v ? 4 : 8;
	/* JDK 25 still has the flag; without it, class pointers are compressed */
	if (jpa_vm_flag_bool("UseCompressedClassPointers", &v))
		v = 1;
	klass_size = v ? 4 : 8;
	return 0;
}

int jpa_blocker_init(JNIEnv *env, jthread current)
{
	const char *why = "VMStructs fields missing";
	jclass uc, tc;
	jmethodID park = NULL;
	jfieldID pb = NULL;
	int err;

	h = jpa_vm_heap();
	thread_off = h->vthread >= 0 ? h->vthread : h->thread_obj;
	klass_off = -1;
	if (!env || !current || thread_off < 0 || h->handle_obj < 0 || h->handle_obj > 64 ||
	    h->klass_name < 0 || h->klass_layout < 0 || h->sym_length < 0 || h->sym_body < 0 ||
	    h->gc_active < 0 || h->gc_count < 0 || !h->collected_heap)
		goto out_off;
	err = heap_supported(&why);
	if (err)
		goto out_err;
	klass_off = klass_size == 4 ? h->narrow_klass : h->klass;
	if (klass_off < 0 || (oop_size == 4 && (!h->oop_base || !h->oop_shift)) ||
	    (klass_size == 4 && (!h->klass_base || !h->klass_shift)))
		goto out_off;
	if (jpa_vm_read((uintptr_t)h->collected_heap, &gc_heap, sizeof(gc_heap)) || !gc_heap ||
	    (oop_size == 4 &&
	     (jpa_vm_read((uintptr_t)h->oop_base, &oop_base, sizeof(oop_base)) ||
	      jpa_vm_read((uintptr_t)h->oop_shift, &oop_shift, sizeof(oop_shift)))) ||
	    (klass_size == 4 &&
	     (jpa_vm_read((uintptr_t)h->klass_base, &klass_base, sizeof(klass_base)) ||
	      jpa_vm_read((uintptr_t)h->klass_shift, &klass_shift, sizeof(klass_shift)))) ||
	    oop_shift < 0 || oop_shift > 8 || klass_shift < 0 || klass_shift > 32) {
		why = "heap encodings unreadable";
		goto out_off;
	}
	uc = (*env)->FindClass(env, "jdk/internal/misc/Unsafe");
	if (uc) {
		park = (*env)->GetMethodID(env, uc, "park", "(ZJ)V");
		(*env)->DeleteLocalRef(env, uc);
	}
	tc = (*env)->FindClass(env, "java/lang/Thread");
	if (tc) {
		pb = (*env)->GetFieldID(env, tc, "parkBlocker", "Ljava/lang/Object;");
		(*env)->DeleteLocalRef(env, tc);
	}
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	if (!park || !pb) {
		why = "Unsafe.park or Thread.parkBlocker not found";
		goto out_off;
	}
	err = verify(env, current, pb);
	if (err) {
		why = err == -EAGAIN ? "the GC kept moving the proof's objects"
				     : "the layout did not prove out";
		goto out_err;
	}
	park_mid = (__u64)(uintptr_t)park;
	__atomic_store_n(&blocker_on, 1, __ATOMIC_RELEASE);
	jpa_ring_set_flags(JP_RING_F_BLOCKER);
	return 0;
out_off:
	err = -ENOENT;
out_err:
	/* a JVM it does not apply to is no news (jprof sees the flag missing); a layout it disproved is */
	if (err == -EPROTO)
		jpa_log("parks without their blocker's class: %s", why);
	return err;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * threads.c: a fixed, lock-free table of the JVM's live Java threads, and how the signal
 * handler finds the interrupted thread's JNIEnv without GetEnv.
 *
 * Why: GetEnv reads libjvm's compiler TLS, which in a dlopen'ed libjvm goes through
 * __tls_get_addr, which may malloc (lazy DTV/TLS block set-up). A signal that lands in a
 * thread inside malloc (thread start-up does that) then deadlocks on the arena lock.
 *
 * How: HotSpot also stores the current Thread* under a pthread key, precisely so its own
 * signal handlers can find it (ThreadLocalStorage, Thread::current_or_null_safe()); and
 * the JNIEnv is a member of JavaThread, at a fixed offset. At start we learn both from a
 * thread that has a JNIEnv: java.lang.Thread.eetop is the JavaThread*, so
 * offset = env - eetop, and the key is the one whose value on this thread is eetop.
 * glibc's pthread_getspecific is a plain read of the thread descriptor: no lock, no malloc.
 * The key gives a Thread* for every HotSpot thread (GC workers, compiler threads too), so
 * the handler trusts it only if it is in this table of JavaThreads that JVMTI told us
 * about (ThreadStart, or GetAllThreads at start), removed again at ThreadEnd.
 *
 * The table is open addressing with a bounded probe window. Slots hold the JavaThread*
 * (0 empty, 1 removed), claimed with CAS; each thread only ever adds and removes itself
 * (the start-up scan adds others, and removal takes every copy), so the handler, which
 * only reads, sees either a live thread's slot or none.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "agent.h"

#define SLOTS  8192u /* power of two; 128 KiB of .bss, so nothing is allocated at run time */
#define PROBES 64u   /* a miss (a GC thread, say) costs at most this many reads */
#define EMPTY  0ul
#define GONE   1ul

static struct jpa_thread table[SLOTS];
static pthread_key_t tls_key;
static uintptr_t env_offset; /* JNIEnv - JavaThread*; 0 until jpa_threads_init succeeded */
static jfieldID eetop_id;

static __u32 slot_of(uintptr_t jt)
{
	/* JavaThreads are malloc'ed: the low bits carry no entropy */
	__u64 h = (__u64)(jt >> 4) * 0x9e3779b97f4a7c15ull;

	return (__u32)(h >> 40) & (SLOTS - 1);
}

/* java.lang.Thread.eetop: the JavaThread*, 0 before start and after exit */
static uintptr_t eetop_of(JNIEnv *env, jthread thread)
{
	jlong v;

	if (!eetop_id || !thread)
		return 0;
	v = (*env)->GetLongField(env, thread, eetop_id);
	if ((*env)->ExceptionCheck(env)) {
		(*env)->ExceptionClear(env);
		return 0;
	}
	return (uintptr_t)v;
}

int jpa_threads_init(JNIEnv *env, jthread current)
{
	uintptr_t jt, off;
	jclass cls;
	int hits = 0;

	if (env_offset)
		return 0;
	if (!env || !current)
		return -EINVAL;
	cls = (*env)->FindClass(env, "java/lang/Thread");
	if (cls) {
		eetop_id = (*env)->GetFieldID(env, cls, "eetop", "J");
		(*env)->DeleteLocalRef(env, cls);
	}
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	jt = eetop_of(env, current);
	if (!jt)
		return -ENOENT;
	off = (uintptr_t)env - jt;
	/* the JNIEnv is a member of JavaThread: a small, aligned, positive offset */
	if ((uintptr_t)env <= jt || off >= 64 * 1024 || (off & 7))
		return -EPROTO;
	/* glibc: keys are small integers below PTHREAD_KEYS_MAX; unused ones read NULL */
	for (pthread_key_t k = 0; k < 1024; k++) {
		if ((uintptr_t)pthread_getspecific(k) == jt) {
			if (!hits++)
				tls_key = k;
		}
	}
	if (hits != 1)
		return -ESRCH;
	__atomic_store_n(&env_offset, off, __ATOMIC_RELEASE);
	return 0;
}

/* the thread's slot, or NULL */
static struct jpa_thread *find(uintptr_t jt)
{
	__u32 i = slot_of(jt);

	for (__u32 n = 0; n < PROBES; n++, i = (i + 1) & (SLOTS - 1)) {
		uintptr_t v = __atomic_load_n(&table[i].jt, __ATOMIC_ACQUIRE);

		if (v == jt)
			return &table[i];
		if (v == EMPTY)
			return NULL;
	}
	return NULL;
}

static int add(uintptr_t jt)
{
	for (int tries = 0; tries < 8; tries++) {
		__u32 i = slot_of(jt), free_slot = SLOTS;
		uintptr_t seen = EMPTY;

		for (__u32 n = 0; n < PROBES; n++, i = (i + 1) & (SLOTS - 1)) {
			uintptr_t v = __atomic_load_n(&table[i].jt, __ATOMIC_ACQUIRE);

			if (v == jt)
				return 0;
			if ((v == EMPTY || v == GONE) && free_slot == SLOTS) {
				free_slot = i;
				seen = v;
			}
			if (v == EMPTY)
				break;
		}
		if (free_slot == SLOTS)
			return -ENOSPC;
		/*
		 * walk is NULL already: it is set only for the length of a walk, by the
		 * slot's own thread, and cleared before that thread could end; writing it
		 * here could wipe the mark of a thread that took this slot just now.
		 */
		if (__atomic_compare_exchange_n(&table[free_slot].jt, &seen, jt, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return 0;
	}
	return -EBUSY;
}

static void del(uintptr_t jt)
{
	__u32 i = slot_of(jt);

	for (__u32 n = 0; n < PROBES; n++, i = (i + 1) & (SLOTS - 1)) {
		uintptr_t v = __atomic_load_n(&table[i].jt, __ATOMIC_ACQUIRE);

		if (v == EMPTY)
			return;
		/* every copy: a thread seen both by the start-up scan and its ThreadStart */
		if (v == jt)
			__atomic_store_n(&table[i].jt, GONE, __ATOMIC_RELEASE);
	}
}

static void count_add(int err)
{
	if (err == -ENOSPC || err == -EBUSY)
		jpa_ring_count(JPA_THREADS_FULL, 1);
}

void jpa_threads_start(JNIEnv *env, jthread thread)
{
	uintptr_t off = __atomic_load_n(&env_offset, __ATOMIC_ACQUIRE), jt;

	if (!off || !env)
		return;
	/* ThreadStart runs on the new thread: its JNIEnv, its key and its eetop must agree */
	jt = (uintptr_t)env - off;
	if ((uintptr_t)pthread_getspecific(tls_key) != jt || eetop_of(env, thread) != jt)
		return;
	count_add(add(jt));
}

void jpa_threads_end(JNIEnv *env, jthread thread)
{
	uintptr_t off = __atomic_load_n(&env_offset, __ATOMIC_ACQUIRE);

	(void)thread;
	if (off && env)
		del((uintptr_t)env - off);
}

void jpa_threads_scan(jvmtiEnv *jvmti, JNIEnv *env)
{
	jthread *threads = NULL;
	jint n = 0;

	if (!__atomic_load_n(&env_offset, __ATOMIC_ACQUIRE) || !env ||
	    (*jvmti)->GetAllThreads(jvmti, &n, &threads) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++) {
		uintptr_t jt = eetop_of(env, threads[i]);

		if (jt) {
			count_add(add(jt));
			/*
			 * It may have ended meanwhile (ThreadEnd came before our add): HotSpot
			 * clears eetop after ThreadEnd, so look again and take it back out.
			 */
			if (eetop_of(env, threads[i]) != jt)
				del(jt);
		}
		(*env)->DeleteLocalRef(env, threads[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
}

uintptr_t jpa_thread_eetop(JNIEnv *env, jthread thread)
{
	return __atomic_load_n(&env_offset, __ATOMIC_ACQUIRE) ? eetop_of(env, thread) : 0;
}

struct jpa_thread *jpa_thread_self(JNIEnv **ret_env)
{
	uintptr_t off = __atomic_load_n(&env_offset, __ATOMIC_ACQUIRE), jt;
	struct jpa_thread *t;

	if (!off)
		return NULL;
	jt = (uintptr_t)pthread_getspecific(tls_key);
	if (jt == EMPTY || jt == GONE)
		return NULL;
	t = find(jt);
	if (t && ret_env)
		*ret_env = (JNIEnv *)(jt + off);
	return t;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* trace.c: the method trace: matched methods rewritten to time every call, records to jprof. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "bytecode.h"

/*
 * How: ClassFileLoadHook + RetransformClasses (bytecode.c rewrites the matched methods to call
 * jprof/Trace.enter/leave/thrown, static natives registered here). Unlike JVMTI MethodEntry/Exit
 * (interpreter only) or breakpoints (never compiled), the rewritten methods are compiled and
 * inlined like any other; the first retransform after a late attach deoptimizes compiled code once
 * (see jpa_recompile in agent.c).
 *
 * The helper class is defined by the boot loader (JNI DefineClass, NULL loader), so every class
 * loader finds it by delegation. Classes of the boot loader (the JDK's named modules, which do not
 * read the boot loader's unnamed module) are not rewritten.
 *
 * The timing natives run on the application's threads in its hot paths: they take no lock,
 * allocate nothing of their own (a thread-local array of start times, which glibc sets up at a
 * thread's first touch), make no JNI or JVMTI call and never block: a clock read, a CAS for a
 * slot, stores. A thread's stack holds JPA_TRACE_DEPTH calls; deeper ones are counted
 * (lost_depth), never a fault. A call is recorded when it ends.
 *
 * Start: the attach thread (Agent_OnAttach, trace=...). Stop: a watcher thread of its own (a
 * JVM-attached daemon, as watch.c's) on jprof's stop request, on jprof's stamp standing still (jprof
 * gone), or over the overhead budget: the classes go back to their own bytes (RetransformClasses
 * while the hook gives nothing back).
 */

#define JPA_TRACE_DEPTH	   64
#define JPA_TRACE_PATTERNS 32
#define WATCH_NS	   (JP_RING_WATCH_MS * 1000000ull)
#define GONE_NS		   (JP_RING_READER_GONE_MS * 1000000ull)
/* stop when the timed calls cost more than this share of one CPU (per mille) */
#define BUDGET_PERMILLE 100ull

struct pattern {
	char cls[256];	/* glob on the internal name: pkg/Class */
	char meth[128]; /* glob on the method name */
	char desc[128]; /* glob on the descriptor, "" any */
};

struct tstack {
	__u32 gen;
	__u32 depth; /* may exceed JPA_TRACE_DEPTH: the calls above it are not timed */
	__u32 tid;
	__u16 id[JPA_TRACE_DEPTH];
	__u64 start[JPA_TRACE_DEPTH];
};

static __thread struct tstack t_stack;

static jvmtiEnv *t_jvmti;
static JavaVM *t_vm;
/* t_op: one start or stop at a time (never taken by the hook); t_lock: patterns, method table */
static pthread_mutex_t t_op = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t t_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int t_args; /* --args: the arguments the rewriter passes */
static struct pattern t_pat[JPA_TRACE_PATTERNS];
static int t_npat;
static int t_on;		/* the natives record */
static int t_hook;		/* the hook rewrites */
static __u32 t_gen;		/* bumped per trace: stale thread stacks reset */
static struct jp_mt_hdr *t_hdr; /* the mapped file */
static struct jp_mt_method *t_methods;
static struct jp_mt_rec *t_slots;
static struct jp_mt_stack *t_stacks;
static struct jp_mt_name *t_names;
static __u64 t_slow_ns;
static char t_path[320];
static int t_watcher;
static __u64 t_named;	/* stack entries named (under t_op) */
static __u64 t_names_n; /* names filled (under t_op) */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* the natives ------------------------------------------------------------- */

static void record(__u64 start, __u64 dur, __u32 tid, __u16 id, __u8 thrown)
{
	struct jp_mt_hdr *h = t_hdr;
	__u64 pos = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	struct jp_mt_rec *r;

	do {
		/* the constants, never the file's fields: the file is writable (by jprof) */
		if (pos - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) >= JP_MT_SLOTS_DEFAULT) {
			__atomic_fetch_add(&h->dropped, 1, __ATOMIC_RELAXED);
			return;
		}
	} while (!__atomic_compare_exchange_n(&h->head, &pos, pos + 1, 1, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	r = &t_slots[pos & (JP_MT_SLOTS_DEFAULT - 1)];
	r->start_ns = start;
	r->dur_ns = dur;
	r->tid = tid;
	r->method = id;
	r->thrown = thrown;
	r->pad = 0;
	__atomic_store_n(&r->seq, pos + 1, __ATOMIC_RELEASE);
}

/*
 * A slow call's Java stack, taken by its own thread at its end into a bounded table (the
 * one JVMTI call of the natives, only for calls over --slow: GetStackTrace of the current
 * thread fills a buffer of ours; frame 0, the helper's native, is skipped)
 */
static void capture(__u64 start, __u32 tid, __u16 id, unsigned int depth)
{
	struct jp_mt_hdr *h = t_hdr;
	jvmtiFrameInfo fr[JP_MT_STACK_DEPTH];
	struct jp_mt_stack *st;
	jint n = 0;
	__u64 k = __atomic_fetch_add(&h->stacks_used, 1, __ATOMIC_RELAXED);

	if (k >= JP_MT_STACKS)
		return;
	st = &t_stacks[k];
	if ((*t_jvmti)->GetStackTrace(t_jvmti, NULL, 1, JP_MT_STACK_DEPTH, fr, &n) || n < 0 ||
	    n > (jint)JP_MT_STACK_DEPTH)
		n = 0;
	for (jint i = 0; i < n; i++) {
		st->frames[i].method_id = (__u64)(uintptr_t)fr[i].method;
		st->frames[i].bci = (__s32)fr[i].location;
	}
	if (t_args) {
		struct jpa_targ a[JPA_BC_ARGS_MAX];
		int na = jpa_targs_get(depth, a);

		for (int i = 0; i < na && i < (int)JP_MT_ARGS; i++)
			st->args[i] = (struct jp_mt_arg){
				.pos = a[i].pos, .kind = a[i].kind, .val = a[i].val};
		for (int i = 0; i < na && i < (int)JP_MT_ARGS; i++)
			memcpy(st->args[i].str, a[i].str, sizeof(st->args[i].str));
		st->n_args = (__u32)na;
	}
	st->start_ns = start;
	st->tid = tid;
	st->method = id;
	st->n_frames = (__u16)n;
	__atomic_store_n(&st->ready, 1, __ATOMIC_RELEASE);
}

static void on_enter(jint id)
{
	struct tstack *t = &t_stack;
	__u32 gen = __atomic_load_n(&t_gen, __ATOMIC_ACQUIRE);

	if (!__atomic_load_n(&t_on, __ATOMIC_ACQUIRE))
		return;
	if (t->gen != gen) {
		t->gen = gen;
		t->depth = 0;
	}
	if (t_args)
		jpa_targs_reset(t->depth);
	if (t->depth < JPA_TRACE_DEPTH) {
		t->id[t->depth] = (__u16)id;
		t->start[t->depth] = now_ns();
	} else {
		__atomic_fetch_add(&t_hdr->lost_depth, 1, __ATOMIC_RELAXED);
	}
	if (t->depth < (1u << 30))
		t->depth++;
}

static void on_exit_call(jint id, __u8 thrown)
{
	struct tstack *t = &t_stack;
	__u64 end;
	int k;

	if (!__atomic_load_n(&t_on, __ATOMIC_ACQUIRE) ||
	    t->gen != __atomic_load_n(&t_gen, __ATOMIC_ACQUIRE))
		return;
	if (t->depth == 0) {
		__atomic_fetch_add(&t_hdr->unmatched, 1, __ATOMIC_RELAXED);
		return;
	}
	if (t->depth > JPA_TRACE_DEPTH) {
		t->depth--;
		return;
	}
	end = now_ns();
	/* the innermost entry of this id: calls above it ended without their exit (a trace begun inside them) */
	for (k = (int)t->depth - 1; k >= 0 && t->id[k] != (__u16)id; k--)
		;
	if (k < 0) {
		__atomic_fetch_add(&t_hdr->unmatched, 1, __ATOMIC_RELAXED);
		return;
	}
	if ((__u32)k != t->depth - 1)
		__atomic_fetch_add(&t_hdr->unmatched, t->depth - 1 - (__u32)k, __ATOMIC_RELAXED);
	t->depth = (__u32)k;
	if (!t->tid)
		t->tid = (__u32)syscall(SYS_gettid);
	record(t->start[k], end - t->start[k], t->tid, (__u16)id, thrown);
	if (t_slow_ns && end - t->start[k] >= t_slow_ns)
		capture(t->start[k], t->tid, (__u16)id, (unsigned int)k);
}

int jpa_trace_depth(void)
{
	const struct tstack *t = &t_stack;

	if (!__atomic_load_n(&t_on, __ATOMIC_ACQUIRE) || !t->depth ||
	    t->gen != __atomic_load_n(&t_gen, __ATOMIC_ACQUIRE))
		return -1;
	return t->depth <= JPA_TRACE_DEPTH ? (int)t->depth - 1 : -1;
}

static void JNICALL n_enter(JNIEnv *env, jclass cls, jint id)
{
	(void)env;
	(void)cls;
	on_enter(id);
}

static void JNICALL n_leave(JNIEnv *env, jclass cls, jint id)
{
	(void)env;
	(void)cls;
	on_exit_call(id, 0);
}

static void JNICALL n_thrown(JNIEnv *env, jclass cls, jint id)
{
	(void)env;
	(void)cls;
	on_exit_call(id, 1);
}

/* patterns and the method table ------------------------------------------- */

/* "pkg.Class.method[(desc)]" -> pattern; -EINVAL when it is none */
static int parse_pattern(const char *s, size_t n, struct pattern *p)
{
	const char *paren = memchr(s, '(', n), *dot;
	size_t cn, mn, i;

	memset(p, 0, sizeof(*p));
	if (paren) {
		if ((size_t)(s + n - paren) >= sizeof(p->desc))
			return -EINVAL;
		memcpy(p->desc, paren, (size_t)(s + n - paren));
		n = (size_t)(paren - s);
	}
	for (dot = s + n; dot > s && dot[-1] != '.'; dot--)
		;
	if (dot == s || dot - 1 == s || dot == s + n)
		return -EINVAL;
	cn = (size_t)(dot - 1 - s);
	mn = (size_t)(s + n - dot);
	if (cn >= sizeof(p->cls) || mn >= sizeof(p->meth))
		return -EINVAL;
	for (i = 0; i < cn; i++)
		p->cls[i] = s[i] == '.' ? '/' : s[i];
	memcpy(p->meth, dot, mn);
	return 0;
}

static int class_matches(const char *cls)
{
	for (int i = 0; i < t_npat; i++)
		if (!fnmatch(t_pat[i].cls, cls, 0))
			return 1;
	return 0;
}

/* the entry named full[0..len) ('/' made '.'), a new one (refused: why) if need be; -1 full */
static int method_slot(char *full, int len, const char *why)
{
	int n = (int)__atomic_load_n(&t_hdr->n_methods, __ATOMIC_ACQUIRE);
	struct jp_mt_method *m;

	for (char *c = full; *c && *c != '('; c++)
		if (*c == '/')
			*c = '.';
	for (int i = 0; i < n; i++)
		if (t_methods[i].name_len == len && !memcmp(t_methods[i].name, full, (size_t)len))
			return i;
	if (n >= (int)JP_MT_METHODS_MAX)
		return -1;
	m = &t_methods[n];
	memcpy(m->name, full, (size_t)len);
	m->name_len = (__u16)len;
	if (why) {
		len = snprintf(m->why, sizeof(m->why), "%s", why);
		m->why_len = (__u16)(len < (int)sizeof(m->why) ? len : (int)sizeof(m->why) - 1);
		m->flags = JP_MT_M_REFUSED;
	}
	__atomic_store_n(&t_hdr->n_methods, (__u32)n + 1, __ATOMIC_RELEASE);
	return n;
}

/* the method's id, a new one if need be; -1 no match or the table is full */
static int method_id(const char *cls, const char *name, const char *desc)
{
	char full[sizeof(t_methods[0].name)];
	int hit = 0, len;

	for (int i = 0; i < t_npat && !hit; i++)
		hit = !fnmatch(t_pat[i].cls, cls, 0) && !fnmatch(t_pat[i].meth, name, 0) &&
		      (!t_pat[i].desc[0] || !fnmatch(t_pat[i].desc, desc, 0));
	if (!hit)
		return -1;
	len = snprintf(full, sizeof(full), "%s.%s%s", cls, name, desc);
	if (len < 0 || (size_t)len >= sizeof(full))
		return -1;
	return method_slot(full, len, NULL);
}

static int bc_match(void *ctx, const char *cls, const char *name, const char *desc, uint16_t access)
{
	int id;

	(void)ctx;
	(void)access;
	pthread_mutex_lock(&t_lock);
	id = t_hdr ? method_id(cls, name, desc) : -1;
	if (id >= 0)
		t_methods[id].flags |= JP_MT_M_TRACED;
	pthread_mutex_unlock(&t_lock);
	return id;
}

static void bc_refuse(void *ctx, int id, const char *cls, const char *name, const char *desc,
		      const char *why)
{
	(void)ctx;
	(void)cls;
	(void)name;
	(void)desc;
	pthread_mutex_lock(&t_lock);
	if (t_hdr && id >= 0 && id < (int)JP_MT_METHODS_MAX) {
		struct jp_mt_method *m = &t_methods[id];
		int n = snprintf(m->why, sizeof(m->why), "%s", why);

		m->why_len = (__u16)(n < (int)sizeof(m->why) ? n : (int)sizeof(m->why) - 1);
		m->flags = (m->flags & ~JP_MT_M_TRACED) | JP_MT_M_REFUSED;
	}
	pthread_mutex_unlock(&t_lock);
}

void JNICALL jpa_trace_cflh(jvmtiEnv *j, JNIEnv *env, jclass redefined, jobject loader,
			    const char *name, jobject pd, jint len, const unsigned char *data,
			    jint *new_len, unsigned char **new_data)
{
	struct jpa_bc_ops ops = {.match = bc_match, .refuse = bc_refuse, .args = t_args};
	uint8_t *out = NULL;
	size_t olen = 0;
	unsigned char *mem;
	int n;

	(void)env;
	(void)redefined;
	(void)pd;
	if (!__atomic_load_n(&t_hook, __ATOMIC_ACQUIRE) || !loader || !name || len <= 0)
		return;
	pthread_mutex_lock(&t_lock);
	n = class_matches(name);
	pthread_mutex_unlock(&t_lock);
	if (!n)
		return;
	n = jpa_bc_rewrite(data, (size_t)len, &ops, &out, &olen);
	if (n < 0 && t_hdr)
		__atomic_fetch_add(&t_hdr->classes_failed, 1, __ATOMIC_RELAXED);
	if (n <= 0)
		return;
	if (olen <= 0x7fffffff && (*j)->Allocate(j, (jlong)olen, &mem) == JVMTI_ERROR_NONE) {
		memcpy(mem, out, olen);
		*new_data = mem;
		*new_len = (jint)olen;
		__atomic_fetch_add(&t_hdr->classes_rewritten, 1, __ATOMIC_RELAXED);
	}
	free(out);
}

/* start and stop ----------------------------------------------------------- */

/* a matched class the trace leaves alone, as one refused entry "pkg.Class.*" */
static void refuse_class(const char *cls, const char *why)
{
	char full[sizeof(t_methods[0].name)];
	int len = snprintf(full, sizeof(full), "%s.*", cls);

	if (len < 0 || (size_t)len >= sizeof(full))
		return;
	pthread_mutex_lock(&t_lock);
	(void)method_slot(full, len, why);
	pthread_mutex_unlock(&t_lock);
}

/*
 * the loaded classes a pattern names, retransformed one by one (the hook decides); starting:
 * those left alone are said in the method table
 */
static int retransform_matching(JNIEnv *env, int starting)
{
	jclass *classes = NULL;
	jint n = 0;
	int done = 0;

	if ((*t_jvmti)->GetLoadedClasses(t_jvmti, &n, &classes) != JVMTI_ERROR_NONE)
		return -EINVAL;
	for (jint i = 0; i < n; i++) {
		char *sig = NULL;
		jboolean ok = JNI_FALSE;
		jobject loader = NULL;
		size_t sl;
		int hit;

		if ((*t_jvmti)->GetClassSignature(t_jvmti, classes[i], &sig, NULL) || !sig) {
			(*env)->DeleteLocalRef(env, classes[i]);
			continue;
		}
		sl = strlen(sig);
		hit = 0;
		if (sl > 2 && sig[0] == 'L' && sig[sl - 1] == ';') {
			sig[sl - 1] = '\0';
			pthread_mutex_lock(&t_lock);
			hit = class_matches(sig + 1);
			pthread_mutex_unlock(&t_lock);
		}
		if (hit && ((*t_jvmti)->GetClassLoader(t_jvmti, classes[i], &loader) || !loader)) {
			if (starting)
				refuse_class(sig + 1, "a class of the JDK's boot loader");
		} else if (hit &&
			   ((*t_jvmti)->IsModifiableClass(t_jvmti, classes[i], &ok) || !ok)) {
			if (starting)
				refuse_class(sig + 1, "a class the JVM cannot retransform");
		} else if (hit) {
			if ((*t_jvmti)->RetransformClasses(t_jvmti, 1, &classes[i]))
				__atomic_fetch_add(&t_hdr->retransform_failed, 1, __ATOMIC_RELAXED);
			else
				done++;
		}
		(*t_jvmti)->Deallocate(t_jvmti, (unsigned char *)sig);
		if (loader)
			(*env)->DeleteLocalRef(env, loader);
		(*env)->DeleteLocalRef(env, classes[i]);
	}
	(*t_jvmti)->Deallocate(t_jvmti, (unsigned char *)classes);
	return done;
}

/* what one timed call costs on this machine: enter + leave without a record, ns */
static __u64 calibrate(void)
{
	const int n = 20000;
	__u64 t0, t1;
	__u32 gen = __atomic_load_n(&t_gen, __ATOMIC_RELAXED);
	struct tstack *t = &t_stack;

	static volatile __u64 sink;

	t0 = now_ns();
	for (int i = 0; i < n; i++) {
		/* the natives' work: two clock reads and the thread's stack, no record */
		t->gen = gen;
		t->id[0] = 1;
		t->start[0] = now_ns();
		sink += now_ns() - t->start[0];
	}
	t1 = now_ns();
	/* + a JNI static native's transition both ways, ~2 x 20 ns on current HotSpot */
	return (t1 - t0) / (__u64)n + 40;
}

/*
 * The methods of the stacks taken since the last pass, named into the names table
 * (watcher thread: JVMTI calls that allocate are fine here). *upto: entries done.
 */
static void name_stacks(JNIEnv *env, __u64 *upto)
{
	struct jp_mt_hdr *h = t_hdr;
	__u64 used = __atomic_load_n(&h->stacks_used, __ATOMIC_ACQUIRE);

	if (used > JP_MT_STACKS)
		used = JP_MT_STACKS;
	for (; *upto < used; (*upto)++) {
		struct jp_mt_stack *st = &t_stacks[*upto];

		if (!__atomic_load_n(&st->ready, __ATOMIC_ACQUIRE))
			break; /* still being filled: next round */
		for (unsigned int f = 0; f < st->n_frames && f < JP_MT_STACK_DEPTH; f++) {
			jmethodID mid = (jmethodID)(uintptr_t)st->frames[f].method_id;
			__u64 n = t_names_n, i; /* ours: the file's count is writable */
			char *mname = NULL, *csig = NULL;
			jclass cls = NULL;
			struct jp_mt_name *nm;
			int len;

			for (i = 0; i < n && t_names[i].method_id != (__u64)(uintptr_t)mid; i++)
				;
			if (i < n || n >= JP_MT_NAMES)
				continue;
			if ((*t_jvmti)->GetMethodName(t_jvmti, mid, &mname, NULL, NULL) ||
			    (*t_jvmti)->GetMethodDeclaringClass(t_jvmti, mid, &cls) ||
			    (*t_jvmti)->GetClassSignature(t_jvmti, cls, &csig, NULL) || !csig ||
			    csig[0] != 'L') {
				len = -1;
			} else {
				nm = &t_names[n];
				len = snprintf(nm->name, sizeof(nm->name), "%.*s.%s",
					       (int)strlen(csig) - 2, csig + 1, mname);
				if (len >= (int)sizeof(nm->name))
					len = (int)sizeof(nm->name) - 1;
				for (char *c = nm->name; *c; c++)
					if (*c == '/')
						*c = '.';
				nm->len = (__u16)len;
				nm->method_id = (__u64)(uintptr_t)mid;
				t_names_n = n + 1;
				__atomic_store_n(&h->names_used, n + 1, __ATOMIC_RELEASE);
			}
			(*t_jvmti)->Deallocate(t_jvmti, (unsigned char *)mname);
			(*t_jvmti)->Deallocate(t_jvmti, (unsigned char *)csig);
			if (cls && env)
				(*env)->DeleteLocalRef(env, cls);
		}
	}
}

/* the trace goes off: classes back to their bytes; under t_op, t_lock not held */
static int stop_trace(JNIEnv *env, __u32 why)
{
	struct jp_mt_hdr *h = t_hdr;

	if (!h || __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != JP_MT_ON)
		return 0;
	__atomic_store_n(&t_on, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&t_hook, 0, __ATOMIC_RELEASE);
	if (env)
		(void)retransform_matching(env, 0);
	if (env)
		name_stacks(env, &t_named);
	(*t_jvmti)->SetEventNotificationMode(t_jvmti, JVMTI_DISABLE,
					     JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL);
	h->stop_why = why;
	h->stop_ns = now_ns();
	__atomic_store_n(&h->state, JP_MT_STOPPED, __ATOMIC_RELEASE);
	return 0;
}

static void *watch_main(void *arg)
{
	JavaVMAttachArgs args = {
		.version = JNI_VERSION_1_6,
		.name = (char *)"jprof agent tracer",
		.group = NULL,
	};
	struct timespec nap = {.tv_sec = 0, .tv_nsec = (long)WATCH_NS};
	JNIEnv *env = NULL;
	__u32 seen_gen = 0; /* the trace seen: its file is mapped where the last one's was */
	__u64 seen = 0, last = 0, calls0 = 0, t0 = 0;

	(void)arg;
	if ((*t_vm)->AttachCurrentThreadAsDaemon(t_vm, (void **)&env, &args) != JNI_OK) {
		jpa_log("trace: cannot attach its thread to the JVM: a trace stops only with the "
			"JVM");
		return NULL;
	}
	for (;;) {
		__u64 now = now_ns();
		struct jp_mt_hdr *h;
		__u32 why = 0;

		while (nanosleep(&nap, NULL) && errno == EINTR)
			;
		pthread_mutex_lock(&t_op);
		h = t_hdr;
		if (!h || __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != JP_MT_ON) {
			pthread_mutex_unlock(&t_op);
			continue;
		}
		name_stacks(env, &t_named);
		if (__atomic_load_n(&t_gen, __ATOMIC_ACQUIRE) != seen_gen) { /* a new trace */
			seen_gen = __atomic_load_n(&t_gen, __ATOMIC_ACQUIRE);
			seen = __atomic_load_n(&h->reader_ns, __ATOMIC_ACQUIRE);
			last = now;
			calls0 = __atomic_load_n(&h->head, __ATOMIC_RELAXED) + h->dropped;
			t0 = now;
		}
		if (__atomic_load_n(&h->reader_ns, __ATOMIC_ACQUIRE) != seen) {
			seen = h->reader_ns;
			last = now;
		}
		if (__atomic_load_n(&h->stop_req, __ATOMIC_ACQUIRE))
			why = JP_MT_STOP_REQUESTED;
		else if (now - last >= GONE_NS)
			why = JP_MT_STOP_READER_GONE;
		if (!why && now - t0 >= 1000000000ull) {
			__u64 calls = __atomic_load_n(&h->head, __ATOMIC_RELAXED) + h->dropped;
			__u64 rate = (calls - calls0) * 1000000000ull / (now - t0);

			h->calls_per_s = rate;
			/* ns of timing per second of wall time over budget of one CPU */
			if (rate * h->cost_ns > BUDGET_PERMILLE * 1000000ull)
				why = JP_MT_STOP_OVERHEAD;
			calls0 = calls;
			t0 = now;
		}
		if (why) {
			(void)stop_trace(env, why);
			if (why == JP_MT_STOP_OVERHEAD)
				jpa_log("trace stopped: %llu calls/s at ~%llu ns each is over "
					"%llu%% of a CPU",
					(unsigned long long)h->calls_per_s,
					(unsigned long long)h->cost_ns, BUDGET_PERMILLE / 10);
		}
		pthread_mutex_unlock(&t_op);
	}
	return NULL;
}

static int start_watcher(void)
{
	int err;

	if (t_watcher)
		return 0;
	err = jpa_thread_start(watch_main);
	if (!err)
		t_watcher = 1;
	return err;
}

/*
 * A new trace file (its jprof keeps its own fd), mapped over the last one's pages (MAP_FIXED:
 * no hole between): a thread still in a native of the last trace writes into the new file and
 * never faults, and traces do not pile up mappings (~1 MiB each). Failed: zero pages there.
 */
static int open_file(const char *dir)
{
	size_t stacks_off = JP_MT_DATA_OFF + (size_t)JP_MT_SLOTS_DEFAULT * sizeof(struct jp_mt_rec);
	size_t names_off = stacks_off + JP_MT_STACKS * sizeof(struct jp_mt_stack);
	size_t size = names_off + JP_MT_NAMES * sizeof(struct jp_mt_name);
	void *p;
	int fd, err;

	err = jpa_channel_path(t_path, sizeof(t_path), dir, (__u32)getpid(), "trace");
	if (err)
		return err;
	fd = jpa_create(t_path, O_RDWR, 0600);
	if (fd < 0)
		return fd;
	p = ftruncate(fd, (off_t)size) ? MAP_FAILED
				       : mmap(t_hdr, size, PROT_READ | PROT_WRITE,
					      MAP_SHARED | (t_hdr ? MAP_FIXED : 0), fd, 0);
	err = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err && t_hdr)
		(void)mmap(t_hdr, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (err) {
		unlink(t_path);
		return err;
	}
	t_hdr = p;
	t_methods = (struct jp_mt_method *)((char *)p + JP_MT_HDR_SIZE);
	t_slots = (struct jp_mt_rec *)((char *)p + JP_MT_DATA_OFF);
	t_stacks = (struct jp_mt_stack *)((char *)p + stacks_off);
	t_names = (struct jp_mt_name *)((char *)p + names_off);
	t_hdr->stacks_off = (__u32)stacks_off;
	t_hdr->n_stacks = JP_MT_STACKS;
	t_hdr->names_off = (__u32)names_off;
	t_hdr->n_names = JP_MT_NAMES;
	t_named = 0;
	t_names_n = 0;
	t_hdr->magic = JP_MT_MAGIC;
	t_hdr->version = JP_MT_VERSION;
	t_hdr->hdr_size = JP_MT_HDR_SIZE;
	t_hdr->n_slots = JP_MT_SLOTS_DEFAULT;
	t_hdr->state = JP_MT_STARTING;
	return 0;
}

int jpa_trace_start(jvmtiEnv *jvmti, JavaVM *vm, JNIEnv *env, const char *dir, const char *patterns,
		    __u64 slow_ns, unsigned int args)
{
	static const JNINativeMethod natives[] = {
		{(char *)JPA_BC_ENTER, (char *)"(I)V", (void *)n_enter},
		{(char *)JPA_BC_LEAVE, (char *)"(I)V", (void *)n_leave},
		{(char *)JPA_BC_THROWN, (char *)"(I)V", (void *)n_thrown},
	};
	jvmtiCapabilities caps;
	struct pattern pat[JPA_TRACE_PATTERNS];
	int npat = 0, err, has_args = 0;
	const char *s = patterns;

	if (!env)
		return -EINVAL;
	while (s && *s) {
		const char *end = strchr(s, '|');
		size_t n = end ? (size_t)(end - s) : strlen(s);

		if (npat == JPA_TRACE_PATTERNS || parse_pattern(s, n, &pat[npat]))
			return -EINVAL;
		npat++;
		s = end ? end + 1 : NULL;
	}
	if (!npat)
		return -EINVAL;
	t_jvmti = jvmti;
	memset(&caps, 0, sizeof(caps));
	caps.can_retransform_classes = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		jpa_log("trace: this JVM cannot retransform classes, not tracing");
		return -ENOTSUP;
	}
	err = jpa_trace_define_helper(env, natives, &has_args);
	if (err) {
		jpa_log("trace: cannot define %s (%s), not tracing", JPA_BC_HELPER_DOT,
			strerror(-err));
		return err;
	}
	pthread_mutex_lock(&t_op);
	/* a trace running: it ends first, classes back as they were */
	(void)stop_trace(env, JP_MT_STOP_REPLACED);
	pthread_mutex_lock(&t_lock);
	err = open_file(dir);
	if (!err) {
		memcpy(t_pat, pat, sizeof(pat));
		t_npat = npat;
		t_hdr->cost_ns = calibrate();
		t_hdr->slow_ns = slow_ns;
		t_slow_ns = slow_ns;
		t_args = has_args ? args : 0;
		__atomic_fetch_add(&t_gen, 1, __ATOMIC_ACQ_REL);
	}
	pthread_mutex_unlock(&t_lock);
	if (err) {
		jpa_log("trace: cannot create its file in %s (%s), not tracing", dir,
			strerror(-err));
		goto out_unlock;
	}
	t_vm = vm;
	err = start_watcher();
	if (err) {
		jpa_log("trace: no watcher thread (%s), not tracing", strerror(-err));
		goto out_unlock;
	}
	__atomic_store_n(&t_hook, 1, __ATOMIC_RELEASE);
	if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
					       JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, NULL)) {
		__atomic_store_n(&t_hook, 0, __ATOMIC_RELEASE);
		err = -EINVAL;
		goto out_unlock;
	}
	t_hdr->start_ns = now_ns();
	__atomic_store_n(&t_on, 1, __ATOMIC_RELEASE);
	(void)retransform_matching(env, 1);
	__atomic_store_n(&t_hdr->state, JP_MT_ON, __ATOMIC_RELEASE);
out_unlock:
	pthread_mutex_unlock(&t_op);
	return err;
}

void jpa_trace_vm_death(void)
{
	struct jp_mt_hdr *h = t_hdr;

	__atomic_store_n(&t_on, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&t_hook, 0, __ATOMIC_RELEASE);
	if (h && __atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != JP_MT_STOPPED) {
		h->stop_why = JP_MT_STOP_VM_DEATH;
		h->stop_ns = now_ns();
		__atomic_store_n(&h->state, JP_MT_STOPPED, __ATOMIC_RELEASE);
	}
	if (t_path[0])
		unlink(t_path);
}

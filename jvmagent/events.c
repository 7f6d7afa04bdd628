/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* events.c: JVMTI event callbacks (contended monitors, sampled allocations, frees) into the ring. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

/*
 * Every callback here runs on an ordinary thread (a Java thread, or the GC thread for
 * ObjectFree), never in a signal handler, and never waits for jprof: a full ring drops
 * the event and counts it (events_dropped in the ring header).
 *
 * Class ids: the class object is tagged with (CLASS_TAG | n) the first time an event
 * names it and its signature goes to the dictionary then, once per class (two threads
 * racing on a new class may both name it: two ids, the same name, harmless). Sampled
 * objects (live tracking) get tags without CLASS_TAG, so ObjectFree tells them apart.
 */
#define CLASS_TAG	    (1ull << 63)
#define EV_MAX_DEPTH	    512 /* frames of an event's stack: 8 KiB on the Java thread's stack */
#define EV_INTERVAL_DEFAULT (512u * 1024) /* JVMTI's heap sampling interval */

static jvmtiEnv *ev_jvmti;
static unsigned int ev_flags; /* JPA_EV_* the agent can send: capabilities and callbacks */
static unsigned int ev_on;    /* JPA_EV_* switched on now (read relaxed by the callbacks) */
static __u32 ev_depth = EV_MAX_DEPTH;
static double ev_interval = EV_INTERVAL_DEFAULT; /* heap sampling interval in bytes */
static __u32 ev_interval_set; /* the interval we set, 0: JVMTI's own left alone */
static int ev_sampling;	      /* SampledObjectAlloc is on (for alloc, live or both) */
/* jpa_events_switch: the watcher thread and an attach may both switch */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static __u64 next_class_id;
static __u64 next_obj_tag;
static int can_tag;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static __u64 class_id(JNIEnv *env, jclass klass)
{
	jlong tag = 0;
	char *sig = NULL;
	__u64 id;

	(void)env;
	if (!klass || !can_tag || (*ev_jvmti)->GetTag(ev_jvmti, klass, &tag) != JVMTI_ERROR_NONE)
		return 0;
	if (tag)
		return (__u64)tag & ~CLASS_TAG;
	id = __atomic_add_fetch(&next_class_id, 1, __ATOMIC_RELAXED);
	if ((*ev_jvmti)->SetTag(ev_jvmti, klass, (jlong)(CLASS_TAG | id)) != JVMTI_ERROR_NONE)
		return 0;
	if ((*ev_jvmti)->GetClassSignature(ev_jvmti, klass, &sig, NULL) == JVMTI_ERROR_NONE && sig)
		jpa_dict_class_id(id, sig);
	(*ev_jvmti)->Deallocate(ev_jvmti, (unsigned char *)sig);
	return id;
}

/* the callback's own time, from its first clock read (t0) to after its record: shown per JVM */
static void put(struct jp_event_rec *ev, int with_stack, __u64 t0)
{
	jvmtiFrameInfo frames[EV_MAX_DEPTH];
	jint n = 0;

	ev->time_ns = t0 ? t0 : now_ns();
	ev->tid = (__u32)syscall(SYS_gettid);
	if (with_stack && (*ev_jvmti)->GetStackTrace(ev_jvmti, NULL, 0, (jint)ev_depth, frames,
						     &n) != JVMTI_ERROR_NONE)
		n = 0;
	(void)jpa_ring_event(ev, frames, n);
	jpa_ring_count(JPA_EVENTS_NS, now_ns() - ev->time_ns);
}

/*
 * Both contended-monitor callbacks carry their time; jprof pairs Enter and Entered of a
 * thread (a thread waits for one monitor at a time) so nothing here keeps per-thread
 * state. The stack is taken at Enter only: it is the stack of the whole wait.
 */
static void JNICALL on_monitor_enter(jvmtiEnv *j, JNIEnv *env, jthread thread, jobject object)
{
	struct jp_event_rec ev = {.kind = JP_AEV_MONITOR_ENTER};
	__u64 t0 = now_ns();
	jclass k = env && object ? (*env)->GetObjectClass(env, object) : NULL;

	(void)j;
	(void)thread;
	ev.class_id = class_id(env, k);
	if (k)
		(*env)->DeleteLocalRef(env, k);
	put(&ev, 1, t0);
}

static void JNICALL on_monitor_entered(jvmtiEnv *j, JNIEnv *env, jthread thread, jobject object)
{
	struct jp_event_rec ev = {.kind = JP_AEV_MONITOR_ENTERED};

	(void)j;
	(void)env;
	(void)thread;
	(void)object;
	put(&ev, 0, 0);
}

/*
 * HotSpot samples allocations at exponentially distributed byte intervals of mean I:
 * an object of s bytes is sampled with probability p = 1 - exp(-s/I). Each sample so
 * stands for s/p bytes and 1/p objects (an unbiased estimate, as pprof's Go heap
 * profiles do it); weight carries s/p, jprof derives 1/p = weight/size.
 */
static void JNICALL on_sampled_alloc(jvmtiEnv *j, JNIEnv *env, jthread thread, jobject object,
				     jclass klass, jlong size)
{
	struct jp_event_rec ev = {.kind = JP_AEV_ALLOC};
	__u64 t0 = now_ns();
	double p;

	(void)j;
	(void)thread;
	if (size <= 0)
		return;
	ev.size = (__u64)size;
	p = -expm1(-(double)size / ev_interval);
	ev.weight = p > 0 ? (__u64)((double)size / p + 0.5) : (__u64)size;
	ev.class_id = class_id(env, klass);
	/* live tracking off: no new tags (the ones given stay, see jpa_events_switch) */
	if ((__atomic_load_n(&ev_on, __ATOMIC_RELAXED) & JPA_EV_LIVE) && can_tag) {
		__u64 tag = __atomic_add_fetch(&next_obj_tag, 1, __ATOMIC_RELAXED) & ~CLASS_TAG;

		if ((*ev_jvmti)->SetTag(ev_jvmti, object, (jlong)tag) == JVMTI_ERROR_NONE)
			ev.tag = tag;
	}
	put(&ev, 1, t0);
}

/* restricted context (GC): no JVMTI or JNI call, just the ring */
static void JNICALL on_object_free(jvmtiEnv *j, jlong tag)
{
	struct jp_event_rec ev = {.kind = JP_AEV_FREE};

	(void)j;
	if ((__u64)tag & CLASS_TAG)
		return;
	ev.tag = (__u64)tag;
	put(&ev, 0, 0);
}

int jpa_events_caps(jvmtiEnv *jvmti, unsigned int flags, jvmtiCapabilities *caps)
{
	jvmtiCapabilities pot;

	ev_jvmti = jvmti;
	if (!flags)
		return 0;
	memset(&pot, 0, sizeof(pot));
	if ((*jvmti)->GetPotentialCapabilities(jvmti, &pot) != JVMTI_ERROR_NONE)
		return -ENOTSUP;
	if (pot.can_tag_objects) {
		caps->can_tag_objects = 1;
		can_tag = 1;
	}
	if ((flags & JPA_EV_LOCK) && pot.can_generate_monitor_events) {
		caps->can_generate_monitor_events = 1;
		/* the monitor of a thread already blocked at attach (jpa_events_scan_blocked) */
		if (pot.can_get_current_contended_monitor)
			caps->can_get_current_contended_monitor = 1;
	} else
		flags &= ~JPA_EV_LOCK;
	if ((flags & (JPA_EV_ALLOC | JPA_EV_LIVE)) && pot.can_generate_sampled_object_alloc_events)
		caps->can_generate_sampled_object_alloc_events = 1;
	else
		flags &= ~(JPA_EV_ALLOC | JPA_EV_LIVE);
	if ((flags & JPA_EV_LIVE) && pot.can_generate_object_free_events && can_tag)
		caps->can_generate_object_free_events = 1;
	else
		flags &= ~JPA_EV_LIVE;
	ev_flags = flags;
	return 0;
}

void jpa_events_callbacks(jvmtiEventCallbacks *cb)
{
	if (ev_flags & JPA_EV_LOCK) {
		cb->MonitorContendedEnter = on_monitor_enter;
		cb->MonitorContendedEntered = on_monitor_entered;
	}
	if (ev_flags & (JPA_EV_ALLOC | JPA_EV_LIVE))
		cb->SampledObjectAlloc = on_sampled_alloc;
	if (ev_flags & JPA_EV_LIVE)
		cb->ObjectFree = on_object_free;
}

static int set_mode(jvmtiEventMode mode, jvmtiEvent ev)
{
	return (*ev_jvmti)->SetEventNotificationMode(ev_jvmti, mode, ev, NULL) ? -EINVAL : 0;
}

/*
 * Switches the events of want (of those this agent can send) on and the others off.
 * SampledObjectAlloc serves alloc and live: it is on while either is. The heap sampling
 * interval is set when allocation sampling goes on (or the interval asked changes) and put
 * back to JVMTI's 512 KiB when it goes off: with the event off HotSpot samples nothing, so
 * the interval costs nothing then, but another agent of this JVM finds the default.
 *
 * Live tracking off: no new object is tagged and ObjectFree is off, so no callback runs for
 * the objects tagged before. Their tags stay: JVMTI has no cheap way to drop them all (a
 * heap walk, IterateThroughHeap, would pause the JVM for a whole-heap scan), and what they
 * cost is small and bounded: one weak entry per sampled object still alive (about one per
 * interval of live heap: 2,000 for a GiB at 512 KiB), which each GC checks and drops as
 * the objects die. Class tags stay too: they keep class ids stable for the next recording.
 */
int jpa_events_switch(unsigned int want, __u32 alloc_interval)
{
	unsigned int on, cur;
	__u32 interval = alloc_interval ? alloc_interval : EV_INTERVAL_DEFAULT;
	int err = 0;

	if (!ev_jvmti)
		return -ENOTSUP;
	pthread_mutex_lock(&ev_lock);
	cur = ev_on;
	on = want & ev_flags;
	if ((on ^ cur) & JPA_EV_LOCK) {
		jvmtiEventMode m = on & JPA_EV_LOCK ? JVMTI_ENABLE : JVMTI_DISABLE;

		/* Entered without Enter is harmless (jprof pairs them), so both or neither count */
		if (set_mode(m, JVMTI_EVENT_MONITOR_CONTENDED_ENTER) ||
		    set_mode(m, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED))
			err = -EINVAL;
		else
			cur ^= JPA_EV_LOCK;
	}
	/* ObjectFree off before the allocations it tracks, on after them */
	if ((cur & JPA_EV_LIVE) && !(on & JPA_EV_LIVE)) {
		if (set_mode(JVMTI_DISABLE, JVMTI_EVENT_OBJECT_FREE))
			err = -EINVAL;
		else
			cur &= ~JPA_EV_LIVE;
	}
	if (on & (JPA_EV_ALLOC | JPA_EV_LIVE)) {
		if (!ev_sampling || interval != ev_interval_set) {
			/* the weight of a sample needs the interval it was taken at: set it first */
			ev_interval = (double)interval;
			if ((*ev_jvmti)->SetHeapSamplingInterval(ev_jvmti, (jint)interval))
				err = -EINVAL;
			else
				ev_interval_set = interval;
		}
		if (!ev_sampling) {
			if (set_mode(JVMTI_ENABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC))
				err = -EINVAL;
			else
				ev_sampling = 1;
		}
	} else if (ev_sampling) {
		if (set_mode(JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC))
			err = -EINVAL;
		else
			ev_sampling = 0;
		if (!ev_sampling && ev_interval_set != EV_INTERVAL_DEFAULT &&
		    !(*ev_jvmti)->SetHeapSamplingInterval(ev_jvmti, (jint)EV_INTERVAL_DEFAULT))
			ev_interval_set = EV_INTERVAL_DEFAULT;
	}
	/* alloc is on while sampling is and it was asked for (live asks for sampling too) */
	cur = (cur & ~JPA_EV_ALLOC) | (ev_sampling && (on & JPA_EV_ALLOC) ? JPA_EV_ALLOC : 0);
	if ((on & JPA_EV_LIVE) && !(cur & JPA_EV_LIVE) && ev_sampling) {
		if (set_mode(JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE))
			err = -EINVAL;
		else
			cur |= JPA_EV_LIVE;
	}
	/* what JVMTI switched: a failed switch is tried again on the next call */
	__atomic_store_n(&ev_on, cur, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ev_lock);
	return err;
}

int jpa_events_enable(unsigned int want, __u32 alloc_interval, __u32 depth)
{
	if (depth && depth < EV_MAX_DEPTH)
		ev_depth = depth;
	return want ? jpa_events_switch(jpa_events_on() | want, alloc_interval) : 0;
}

/*
 * Threads already blocked entering a contended monitor when the agent comes (a late
 * attach) posted their MonitorContendedEnter before anyone listened: each is reported now,
 * as blocked since this scan, with its stack and the monitor's class, so its blocked time
 * gets its Java stack until it enters (its Entered closes the wait as usual). A thread that
 * enters between the scan's start and its record is told apart by jprof: its Entered is
 * later than the scan's time. Needs the OS tid of another thread: VMStructs
 * (jpa_vm_os_tid); without them nothing is reported.
 */
void jpa_events_scan_blocked(JNIEnv *env)
{
	jvmtiFrameInfo frames[EV_MAX_DEPTH];
	jthread *threads = NULL;
	jint n = 0, state, nf;
	__u64 t0 = now_ns();
	__u32 tid;

	if (!(jpa_events_on() & JPA_EV_LOCK) || !env || jpa_vm_os_tid(0, &tid) == -ENOENT ||
	    (*ev_jvmti)->GetAllThreads(ev_jvmti, &n, &threads) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++) {
		struct jp_event_rec ev = {.kind = JP_AEV_MONITOR_BLOCKED, .time_ns = t0};
		jobject mon = NULL;
		jclass k;

		if ((*ev_jvmti)->GetThreadState(ev_jvmti, threads[i], &state) != JVMTI_ERROR_NONE ||
		    !(state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) ||
		    jpa_vm_os_tid(jpa_thread_eetop(env, threads[i]), &tid) ||
		    (*ev_jvmti)->GetStackTrace(ev_jvmti, threads[i], 0, (jint)ev_depth, frames, &nf) !=
			    JVMTI_ERROR_NONE)
			goto next;
		if ((*ev_jvmti)->GetCurrentContendedMonitor(ev_jvmti, threads[i], &mon) ==
			    JVMTI_ERROR_NONE &&
		    mon) {
			k = (*env)->GetObjectClass(env, mon);
			ev.class_id = class_id(env, k);
			if (k)
				(*env)->DeleteLocalRef(env, k);
			(*env)->DeleteLocalRef(env, mon);
		}
		ev.tid = tid;
		(void)jpa_ring_event(&ev, frames, nf);
next:
		(*env)->DeleteLocalRef(env, threads[i]);
	}
	(*ev_jvmti)->Deallocate(ev_jvmti, (unsigned char *)threads);
}

unsigned int jpa_events_active(void)
{
	return ev_flags;
}

unsigned int jpa_events_on(void)
{
	return __atomic_load_n(&ev_on, __ATOMIC_ACQUIRE);
}

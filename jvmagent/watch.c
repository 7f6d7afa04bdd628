/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* watch.c: the watcher thread: JVMTI events on while a reader wants them, off when it is gone. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

/*
 * jprof stamps the ring header each poll round (ring.h, the reader protocol); this thread
 * looks every JP_RING_WATCH_MS and switches each event (lock, alloc, live) on while its
 * stamp moves and off once it stood still for JP_RING_READER_GONE_MS: a recording's end,
 * jprof stopped by a signal or killed alike, since only a live jprof stamps.
 *
 * Which thread: JVMTI's SetEventNotificationMode and SetHeapSamplingInterval need a thread
 * the JVM knows. A pthread of ours attached as a daemon (AttachCurrentThreadAsDaemon) is
 * one; the JVM does not wait for it at exit, and while it sleeps (nanosleep, in native
 * state) it holds up no safepoint. It is started in the live phase (VMInit, or the attach
 * itself), with every signal blocked (HotSpot unblocks the ones it needs when attaching), so
 * no process-wide signal is delivered to it. It never takes a lock the JVM's threads wait
 * on: only events.c's own mutex, which the attach thread may wait on during a switch.
 * After VMDeath it makes no JVMTI call any more and sleeps until the process is gone.
 *
 * What stays on: ClassLoad, ClassPrepare, CompiledMethodLoad/Unload, DynamicCodeGenerated
 * and ThreadStart/End keep the dictionary current for the next recording (without them a
 * later jprof would have to replay every class and compiled method, and could not name
 * threads started in between). They fire per class loaded, method compiled or thread
 * started, not per allocation or contention: in a JVM past its start-up that is a handful
 * a second, each a few microseconds. The stack-request handler runs only when a jprof
 * sends its signal.
 */
#define WATCH_NS (JP_RING_WATCH_MS * 1000000ull)
#define GONE_NS	 (JP_RING_READER_GONE_MS * 1000000ull)
#define GRACE_NS (3000ull * 1000000) /* an attach's events wait this long for a reader */

static JavaVM *w_vm;
static struct jp_ring_hdr *w_hdr; /* our own mapping of the ring's header page */
static int w_started;
static int w_stop;
static __u32 w_opt_interval;
/* the last attach that asked for events: they count as wanted until GRACE_NS after it */
static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int arr_events;
static __u64 arr_ns;
static __u32 arr_interval;

static __u64 mono_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static unsigned int want_bit(int i)
{
	static const unsigned int bits[JP_RING_WANT_MAX] = {
		[JP_RING_WANT_LOCK] = JPA_EV_LOCK,
		[JP_RING_WANT_ALLOC] = JPA_EV_ALLOC,
		[JP_RING_WANT_LIVE] = JPA_EV_LIVE,
	};

	return bits[i];
}

static __u32 ring_bits(unsigned int ev)
{
	return (ev & JPA_EV_LOCK ? JP_RING_F_EV_LOCK : 0) |
	       (ev & JPA_EV_ALLOC ? JP_RING_F_EV_ALLOC : 0) |
	       (ev & JPA_EV_LIVE ? JP_RING_F_EV_LIVE : 0);
}

void jpa_watch_arrival(unsigned int events, __u32 alloc_interval)
{
	pthread_mutex_lock(&w_lock);
	arr_events |= events;
	arr_ns = mono_ns(CLOCK_MONOTONIC);
	if (alloc_interval)
		arr_interval = alloc_interval;
	pthread_mutex_unlock(&w_lock);
}

void jpa_watch_stop(void)
{
	__atomic_store_n(&w_stop, 1, __ATOMIC_RELEASE);
}

/* one look at the stamps: what is wanted now, and at which allocation interval */
static unsigned int wanted(__u64 now, __u64 *seen, __u64 *last, __u32 *ret_interval)
{
	unsigned int want = 0;
	__u32 iv;

	for (int i = 0; i < JP_RING_WANT_MAX; i++) {
		__u64 s = __atomic_load_n(&w_hdr->want_ns[i], __ATOMIC_ACQUIRE);

		if (s != seen[i]) {
			seen[i] = s;
			last[i] = now;
		}
		if (last[i] && now - last[i] < GONE_NS)
			want |= want_bit(i);
	}
	iv = __atomic_load_n(&w_hdr->want_alloc_interval, __ATOMIC_RELAXED);
	pthread_mutex_lock(&w_lock);
	if (arr_events && now - arr_ns < GRACE_NS) {
		want |= arr_events;
		if (!iv)
			iv = arr_interval;
	} else {
		arr_events = 0;
	}
	pthread_mutex_unlock(&w_lock);
	/* a reader's interval first, then the attach's, then the agent's option */
	*ret_interval = iv ? iv : w_opt_interval;
	return want;
}

static void *watch_main(void *arg)
{
	JavaVMAttachArgs args = {
		.version = JNI_VERSION_1_6,
		.name = (char *)"jprof agent watcher",
		.group = NULL,
	};
	struct timespec nap = {.tv_sec = 0, .tv_nsec = (long)WATCH_NS};
	__u64 seen[JP_RING_WANT_MAX] = {0}, last[JP_RING_WANT_MAX] = {0};
	JNIEnv *env = NULL;

	(void)arg;
	if ((*w_vm)->AttachCurrentThreadAsDaemon(w_vm, (void **)&env, &args) != JNI_OK) {
		jpa_log("watcher: cannot attach to the JVM: lock/alloc events stay as they are");
		return NULL;
	}
	jpa_ring_set_flags(JP_RING_F_READER);
	while (!__atomic_load_n(&w_stop, __ATOMIC_ACQUIRE)) {
		__u64 now = mono_ns(CLOCK_MONOTONIC);
		__u32 interval;
		unsigned int want = wanted(now, seen, last, &interval), had = jpa_events_on();

		/* only what differs is a JVMTI call (jpa_events_switch compares first) */
		if ((want & jpa_events_active()) != had || (want & (JPA_EV_ALLOC | JPA_EV_LIVE)))
			(void)jpa_events_switch(want, interval);
		if (jpa_events_on() != had)
			__atomic_fetch_add(&w_hdr->ev_switches, 1, __ATOMIC_RELAXED);
		/* threads blocked since before: their Enter came while nobody listened */
		if (jpa_events_on() & ~had & JPA_EV_LOCK)
			jpa_events_scan_blocked(env);
		__atomic_store_n(&w_hdr->ev_on, ring_bits(jpa_events_on()), __ATOMIC_RELEASE);
		__atomic_store_n(&w_hdr->watcher_ns, mono_ns(CLOCK_THREAD_CPUTIME_ID),
				 __ATOMIC_RELAXED);
		while (nanosleep(&nap, NULL) && errno == EINTR)
			;
	}
	/* the JVM is going away: nothing more to switch; the process ends around us */
	for (;;)
		sleep(3600);
	return NULL;
}

int jpa_watch_start(JavaVM *vm, __u32 alloc_interval)
{
	void *p;
	int fd, err;

	if (__atomic_exchange_n(&w_started, 1, __ATOMIC_ACQ_REL))
		return 0;
	if (!jpa_ring_path()[0])
		return -ENOENT;
	/* the header page again: stacks.c's mapping is its own; the page is one and shared */
	fd = open(jpa_ring_path(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	p = mmap(NULL, JP_RING_HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err)
		return err;
	w_hdr = p;
	w_vm = vm;
	w_opt_interval = alloc_interval;
	return jpa_thread_start(watch_main);
}

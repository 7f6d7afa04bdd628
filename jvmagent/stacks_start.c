/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stacks_start.c: starting the stack requests: AsyncGetCallTrace found, the request signal
 * chosen (or checked), the walks' fault guard and the handler (stacks.c) installed, the
 * layout of jprof's BPF walk published in the ring's header; and stopping them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "stacks_int.h"

static int signal_is_free(int sig)
{
	struct sigaction old;

	if (sigaction(sig, NULL, &old))
		return 0;
	return !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
}

/*
 * The signal to answer on. First choice: one whose default action is to ignore it, so that
 * a request the kernel delivers after the process reset the handler to SIG_DFL (the race
 * BPF's handler check cannot close: check, then delivery on the way back to user space,
 * maybe after a preemption) is dropped instead of killing the JVM. SIGURG (socket
 * out-of-band data, for an owner set with F_SETOWN: HotSpot and the JDK never do) and then
 * SIGWINCH (terminal size: JLine handles it, so it is taken then); not SIGCHLD (processes
 * reap children) nor SIGCONT (sending it resumes a stopped process). Only if both are
 * taken: a real-time signal nobody handles, upwards from SIGRTMIN+3 (glibc keeps the first
 * two, libnio's NativeThread takes SIGRTMAX-2 lazily), whose default kills. SIGPROF is no
 * choice: the profilers' own (async-profiler, JFR's peers), and it kills too. That none of
 * them queue does not matter: BPF never sends a request while one is pending.
 */
static int pick_signal(void)
{
	if (signal_is_free(SIGURG))
		return SIGURG;
	if (signal_is_free(SIGWINCH))
		return SIGWINCH;
	for (int sig = SIGRTMIN + 3; sig <= SIGRTMAX - 4; sig++) {
		if (signal_is_free(sig))
			return sig;
	}
	return -EBUSY;
}

/* the layout jprof's BPF walk needs, in the ring's header page (ring.h), magic last */
static void publish_walk(struct jp_ring_hdr *ring)
{
	struct jp_ring_walk w, *dst = (struct jp_ring_walk *)((char *)ring + JP_RING_WALK_OFF);

	if (jpa_vm_walk(&w))
		return;
	w.magic = 0;
	memcpy(dst, &w, sizeof(w));
	__atomic_store_n(&dst->magic, JP_RING_WALK_MAGIC, __ATOMIC_RELEASE);
}

int jpa_stacks_start(int signo)
{
	struct jp_ring_hdr *ring = jpa_ring_hdr();
	struct sigaction sa;
	jpa_agct_fn agct;
	int err;

	if (!ring)
		return -EINVAL;
	agct = (jpa_agct_fn)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
	if (!agct) {
		void *jvm = dlopen("libjvm.so", RTLD_NOW | RTLD_NOLOAD);

		if (jvm)
			agct = (jpa_agct_fn)dlsym(jvm, "AsyncGetCallTrace");
		if (!agct)
			return -ENOENT;
	}
	jpa_stacks_set_agct(agct);
	if (signo) {
		if (signo != SIGURG && signo != SIGWINCH && (signo < SIGRTMIN || signo > SIGRTMAX))
			return -EINVAL;
		if (!signal_is_free(signo))
			return -EBUSY;
	} else {
		signo = pick_signal();
		if (signo < 0)
			return signo;
	}
	/* no table, no fallback walk: AGCT alone, as before; nor a walk by jprof's BPF */
	if (jpa_vm_init())
		jpa_stacks_no_fallback();
	else
		publish_walk(ring);
	/* without it a fault in a walk would kill the JVM: no protection, no sampling */
	err = jpa_stacks_catch_faults();
	if (err)
		return err;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = jpa_stacks_handler();
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL))
		return -errno;
	/*
	 * Only now may jprof send it. The handler's address first: jprof signals a thread
	 * only while the kernel's handler for signo is this one (not SIG_DFL after a reset).
	 */
	__atomic_store_n(&ring->handler, (__u64)(uintptr_t)sa.sa_sigaction, __ATOMIC_RELAXED);
	__atomic_store_n(&ring->signo, signo, __ATOMIC_RELEASE);
	return 0;
}

void jpa_stacks_stop(void)
{
	struct jp_ring_hdr *ring = jpa_ring_hdr();

	if (ring)
		__atomic_store_n(&ring->signo, 0, __ATOMIC_RELEASE);
}

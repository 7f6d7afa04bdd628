// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sigfloor.c: what a signal costs the thread it interrupts on this host, with no profiler.
 * The floor under every profiler that takes Java stacks in a signal handler (jprof's agent,
 * async-profiler, JFR's own sampler does not): the cost is the kernel's and the
 * hypervisor's, not the handler's (which is empty here).
 *
 * Usage: sigfloor [THREADS [HZ [ITERS [ROUNDS]]]]: THREADS threads do ITERS fixed steps of
 * work each, once with no signal, once with a sender thread that tgkill()s each of them HZ
 * times a second, alternating, ROUNDS times each. Prints each round's elapsed time, then
 * the median ratio (signals / none) and the cost per signal in microseconds.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16

static unsigned long iters;
static atomic_ulong delivered;
static atomic_int running, started;
static pid_t tids[MAX_THREADS];

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add_explicit(&delivered, 1, memory_order_relaxed);
}

static void *work(void *arg)
{
	volatile unsigned long x = (unsigned long)arg;

	tids[(long)arg] = (pid_t)syscall(SYS_gettid);
	atomic_fetch_add(&started, 1);
	for (unsigned long i = 0; i < iters; i++)
		x = x * 6364136223846793005ul + i;
	atomic_fetch_sub(&running, 1);
	return NULL;
}

struct sender {
	int nthreads, hz;
};

static void *send_signals(void *arg)
{
	const struct sender *s = arg;
	struct timespec next;
	long period = 1000000000l / s->hz;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (atomic_load(&running) > 0) {
		next.tv_nsec += period;
		if (next.tv_nsec >= 1000000000l) {
			next.tv_nsec -= 1000000000l;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		for (int i = 0; i < s->nthreads && atomic_load(&running) > 0; i++)
			syscall(SYS_tgkill, getpid(), tids[i], SIGPROF);
	}
	return NULL;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* one round: elapsed ms of the workers, with hz signals a second to each (0: none) */
static double round_ms(int nthreads, int hz)
{
	pthread_t t[MAX_THREADS], snd;
	struct sender s = { nthreads, hz };
	double t0;

	atomic_store(&running, nthreads);
	atomic_store(&started, 0);
	t0 = now_ms();
	for (long i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	while (atomic_load(&started) < nthreads)
		;
	if (hz)
		pthread_create(&snd, NULL, send_signals, &s);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	t0 = now_ms() - t0;
	if (hz)
		pthread_join(snd, NULL);
	return t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2, hz = argc > 2 ? atoi(argv[2]) : 999;
	int rounds = argc > 4 ? atoi(argv[4]) : 5;
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	double ratio[64], per_signal[64];

	iters = argc > 3 ? strtoul(argv[3], NULL, 10) : 1500000000ul;
	if (nthreads < 1 || nthreads > MAX_THREADS || hz < 1 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: sigfloor [THREADS(1-16) [HZ [ITERS [ROUNDS(1-64)]]]]\n");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	for (int r = 0; r < rounds; r++) {
		/* alternate which goes first: the host's load drifts */
		double base, sig;
		unsigned long n;

		if (r % 2) {
			atomic_store(&delivered, 0);
			sig = round_ms(nthreads, hz);
			n = atomic_load(&delivered);
			base = round_ms(nthreads, 0);
		} else {
			base = round_ms(nthreads, 0);
			atomic_store(&delivered, 0);
			sig = round_ms(nthreads, hz);
			n = atomic_load(&delivered);
		}
		ratio[r] = sig / base;
		/* the workers' time lost, per signal delivered */
		per_signal[r] = n ? (sig - base) * 1e3 * nthreads / n : 0;
		printf("round %d: none %.1f ms, %d Hz %.1f ms (%lu signals), x%.4f, %.2f us a signal\n",
		       r + 1, base, hz, sig, n, ratio[r], per_signal[r]);
	}
	qsort(ratio, rounds, sizeof(double), cmp);
	qsort(per_signal, rounds, sizeof(double), cmp);
	printf("signals to %d threads at %d Hz each: median x%.4f [%.4f..%.4f], %.2f us a signal\n",
	       nthreads, hz, ratio[rounds / 2], ratio[0], ratio[rounds - 1],
	       per_signal[rounds / 2]);
	return 0;
}

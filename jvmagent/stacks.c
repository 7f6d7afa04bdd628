/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* stacks.c: the trace ring and the real-time signal handler that fills it with AsyncGetCallTrace. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent.h"

/* HotSpot's AsyncGetCallTrace ABI (prims/forte.cpp); frames are struct jp_frame */
struct jpa_call_trace {
	JNIEnv *env;
	jint num_frames;
	struct jp_frame *frames;
};
typedef void (*jpa_agct_fn)(struct jpa_call_trace *trace, jint depth, void *ucontext);

/*
 * Set once before the handler is installed and never changed after (the mapping is
 * never unmapped: the library is linked -z nodelete and a handler may run at any time).
 */
static struct jp_ring_hdr *ring;
static unsigned char *ring_data;
static __u64 ring_mask;
static __u32 ring_depth;
static JavaVM *ring_vm;
static jpa_agct_fn agct;
static char ring_file[512];

#define TRACE_BYTES(n) ((__u32)sizeof(struct jp_trace_rec) + (__u32)(n) * (__u32)sizeof(struct jp_frame))
#define CAS_TRIES      64

int jpa_ring_open(const char *dir, __u32 pid, __u32 data_size, __u32 max_depth, __u32 flags)
{
	struct timespec ts;
	size_t map_size;
	void *p;
	int fd, err;

	/* room for 4 traces of full depth at least, so big stacks still flow */
	while (data_size < 4 * TRACE_BYTES(max_depth) && data_size < JP_RING_DATA_MAX)
		data_size <<= 1;
	err = jpa_path(ring_file, sizeof(ring_file), dir, "jprof", pid, "ring");
	if (err)
		return err;
	fd = jpa_create(ring_file, O_RDWR, 0600);
	if (fd < 0)
		return fd;
	map_size = (size_t)JP_RING_HDR_SIZE + data_size;
	/* tmpfs pages come on first touch: an idle ring costs its header page only */
	if (ftruncate(fd, (off_t)map_size)) {
		err = -errno;
		goto out_unlink;
	}
	p = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto out_unlink;
	}
	close(fd);
	ring = p;
	ring_data = (unsigned char *)p + JP_RING_HDR_SIZE;
	ring_mask = data_size - 1;
	ring_depth = max_depth;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ring->version = JP_RING_VERSION;
	ring->hdr_size = JP_RING_HDR_SIZE;
	ring->data_size = data_size;
	ring->pid = pid;
	ring->max_depth = max_depth;
	ring->flags = flags;
	ring->start_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	__atomic_store_n(&ring->magic, JP_RING_MAGIC, __ATOMIC_RELEASE);
	return 0;
out_unlink:
	close(fd);
	unlink(ring_file);
	ring_file[0] = '\0';
	return err;
}

const char *jpa_ring_path(void)
{
	return ring_file;
}

void jpa_ring_count(enum jpa_counter c, __u64 n)
{
	__u64 *v;

	if (!ring)
		return;
	switch (c) {
	case JPA_DICT_BYTES:
		v = &ring->dict_bytes;
		break;
	case JPA_DICT_DROPPED:
		v = &ring->dict_dropped;
		break;
	default:
		v = &ring->perfmap_dropped;
		break;
	}
	__atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

static void count(__u64 *v)
{
	__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
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
 * The stack-request handler. Async-signal-safe: atomics, clock_gettime (vDSO), gettid,
 * GetEnv (reads a thread-local) and AGCT (built for exactly this), no malloc, no locks,
 * no stdio. Frames go straight into the reserved ring space: 2048 frames are 32 KiB,
 * too big for a small signal stack, and a per-thread buffer would need TLS that a
 * dlopen'ed library cannot touch safely here. errno is preserved.
 */
static void on_stack_request(int signo, siginfo_t *si, void *uc)
{
	struct jp_trace_rec *r;
	struct jpa_call_trace t;
	struct timespec ts;
	__u32 len, used;
	JNIEnv *env = NULL;
	int saved_errno = errno;
	__u64 pos;
	jint rc;

	(void)signo;
	(void)si;
	if (!agct || !ring_vm) {
		count(&ring->busy);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	rc = (*ring_vm)->GetEnv(ring_vm, (void **)&env, JNI_VERSION_1_6);
	if (rc != JNI_OK || !env)
		env = NULL;
	len = env ? TRACE_BYTES(ring_depth) : TRACE_BYTES(0);
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
	if (env) {
		t.env = env;
		t.num_frames = 0;
		t.frames = (struct jp_frame *)(r + 1);
		agct(&t, (jint)ring_depth, uc);
		r->num_frames = t.num_frames;
		if (t.num_frames > 0 && (__u32)t.num_frames > ring_depth)
			r->num_frames = (__s32)ring_depth; /* never trust a count past our buffer */
		if (r->num_frames <= 0 && r->num_frames > -JP_AGCT_CODES)
			count(&ring->agct_err[-r->num_frames]);
	} else {
		r->num_frames = JP_ERR_NOT_JAVA_THREAD;
		count(&ring->not_java_thread);
	}
	used = TRACE_BYTES(r->num_frames > 0 ? r->num_frames : 0);
	r->h.len = used;
	shrink(pos, len, used);
	count(&ring->traces);
	commit(pos);
out:
	errno = saved_errno;
}

static int signal_is_free(int sig)
{
	struct sigaction old;

	if (sigaction(sig, NULL, &old))
		return 0;
	return !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
}

/*
 * A real-time signal nobody handles: SIGPROF does not queue (a pending one swallows the
 * next request). Scans upwards from SIGRTMIN+3: glibc keeps the first two for itself and
 * libnio's NativeThread takes SIGRTMAX-2 lazily, after we would have looked.
 */
static int pick_signal(void)
{
	for (int sig = SIGRTMIN + 3; sig <= SIGRTMAX - 4; sig++) {
		if (signal_is_free(sig))
			return sig;
	}
	return -EBUSY;
}

int jpa_stacks_start(JavaVM *vm, int signo)
{
	struct sigaction sa;

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
	ring_vm = vm;
	if (signo) {
		if (signo < SIGRTMIN || signo > SIGRTMAX)
			return -EINVAL;
		if (!signal_is_free(signo))
			return -EBUSY;
	} else {
		signo = pick_signal();
		if (signo < 0)
			return signo;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stack_request;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL))
		return -errno;
	/* jprof's BPF check compares the kernel's record of our handler with this */
	__atomic_store_n(&ring->handler, (__u64)(uintptr_t)on_stack_request, __ATOMIC_RELAXED);
	/* only now may jprof send it */
	__atomic_store_n(&ring->signo, signo, __ATOMIC_RELEASE);
	return 0;
}

void jpa_stacks_stop(void)
{
	if (ring)
		__atomic_store_n(&ring->signo, 0, __ATOMIC_RELEASE);
}

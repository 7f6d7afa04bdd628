// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hashkey.c: the process's secret hash key (see hashkey.h). */
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "hashkey.h"

static __u64 key;

__u64 hash_key(void)
{
	__u64 k = __atomic_load_n(&key, __ATOMIC_ACQUIRE), zero = 0;
	struct timespec ts;

	if (k)
		return k;
	if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
		/* no entropy yet (early boot): worse, still not known to another user */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		k = (__u64)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (__u64)ts.tv_sec << 20 ^
		    (__u64)getpid() * 0xbf58476d1ce4e5b9ull;
	}
	k |= 1;
	/* the first thread's key is everyone's: a table is never probed with another */
	if (!__atomic_compare_exchange_n(&key, &zero, k, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		k = zero;
	return k;
}

__u64 hash_keyed(__u64 x)
{
	x = (x ^ hash_key()) * 0xbf58476d1ce4e5b9ull;
	x ^= x >> 31;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 29);
}

__u64 hash_keyed_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	__u64 h = hash_keyed(n), w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = hash_keyed(h ^ w);
	}
	w = 0;
	memcpy(&w, s, n);
	return hash_keyed(h ^ w ^ 0x5bd1e9955bd1e995ull);
}

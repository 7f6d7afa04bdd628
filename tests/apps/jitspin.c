// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jitspin.c: a JIT in miniature: copies a loop into anonymous executable memory and runs it
 * for the seconds given, as JIT-compiled code runs: ~1 ms slices with 2 ms sleeps between,
 * so it is scheduled promptly even on a heavily loaded host. Prints "jit START SIZE" (hex, as a perf
 * map line wants them) so a test can write a perf map for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* x86-64: loop: dec rdi; jnz loop; ret */
static const unsigned char code[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	struct timespec t0, t;
	void (*fn)(unsigned long);
	unsigned char *p;

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memset(p, 0xcc, 4096);
	memcpy(p + 256, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return 1;
	fn = (void (*)(unsigned long))(p + 256);
	printf("jit %lx %x\n", (unsigned long)(p + 256), (unsigned)sizeof(code));
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct timespec nap = { 0, 2 * 1000 * 1000 };

		fn(1000000);
		nanosleep(&nap, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	return 0;
}

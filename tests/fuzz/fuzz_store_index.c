// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_store_index.c: the store's index (DIR/index) on any bytes: a crash while appending,
 * a disk error, a hand edit. Every line fn sees names a segment and carries two numbers. The
 * bytes as a roll-up's name (a file in DIR/rollups/): one taken is the name it writes back.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_line(void *ctx, const char *name, __u64 samples, __u64 bytes)
{
	struct store_seg seg;

	(void)ctx;
	(void)samples;
	(void)bytes;
	if (store_seg_parse(name, &seg))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	{
		struct store_rollup r;
		char name[STORE_ROLLUP_NAME_LEN];

		if (!store_rollup_parse(buf, &r) &&
		    (store_rollup_name(r.start_s, r.end_s, r.hash, name, sizeof(name)) ||
		     strcmp(name, buf) || r.start_s >= r.end_s))
			__builtin_trap();
	}
	(void)store_index_parse(buf, size, on_line, NULL);
	free(buf);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_vmstructs.c: BPF's Java walk layout read from a JVM's memory (jvm/vmstructs.c), the
 * memory another user's process controls: the synthetic JVM of vms_fixture.h patched by
 * the input, (u32 offset, u8 length, bytes) at a time, so the fuzzer works on tables that
 * nearly hold; byte 0 cuts the readable memory short. Whatever the memory says, the reads
 * stay within the budgets, a layout that comes out passed jvm_walk_check, and a thread list
 * read never holds more than its room.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/agent_ring.h"
#include "jvm/vmnames.h"
#include "../unit/vms_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vf *v;
	struct vms_stats st = { 0 };
	struct jp_jwalk w;
	struct vms_names names;
	size_t i = 1;

	if (!v && !(v = malloc(sizeof(*v))))
		return 0;
	vf_build(v);
	if (size < 1)
		return 0;
	v->limit = data[0] < 16 ? (size_t)data[0] * (VF_SIZE / 16) : 0;
	while (i + 5 <= size) {
		__u32 at;
		size_t n = data[i + 4];

		memcpy(&at, data + i, sizeof(at));
		i += 5;
		if (n > size - i)
			n = size - i;
		at %= VF_SIZE;
		if (n > VF_SIZE - at)
			n = VF_SIZE - at;
		memcpy(v->mem + at, data + i, n);
		i += n;
	}
	if (!vmstructs_layout(v->syms, vf_read, v, &w, &names, &st)) {
		struct vmnames *vn = vmnames__new_reader(&w, &names, vf_read, v);

		/* names of frames the input points at: every read bounded, nothing trusted */
		for (size_t k = 1; vn && k + 16 <= size && k < 1 + 16 * 8; k += 16) {
			struct jp_jframe f;

			memcpy(&f, data + k, sizeof(f));
			f.method = f.method ? VF_BASE + f.method % VF_SIZE : 0;
			(void)vmnames__frame(vn, &f);
		}
		vmnames__free(vn);

		/* the thread list as the memory says it: bounded, whatever its length says */
		if (names.threads.ok) {
			struct vms_thread t[4];
			size_t n = 0, skipped = 0;
			__u64 list = 0;

			if (!vmstructs_threads(&names.threads, vf_read, v, 0, t, 4, &n, &list,
					       &skipped) &&
			    (n > 4 || n + skipped > 4))
				abort();
		}

		/* what came out is what BPF may be given: checked */
		if (!w.n_heaps || w.n_heaps > JP_JW_HEAPS || !w.call_stub_ret ||
		    w.blob_name > JP_JW_BLOB_HDR - 8 || w.heap_block > 64)
			abort();
	}
	if (st.bytes > VMS_MAX_BYTES || st.entries > 2 * VMS_MAX_ENTRIES + 2)
		abort();
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_vmstructs.c: BPF's Java walk layout read from a JVM's memory (jvm/vmstructs.c), the
 * memory another user's process controls: the synthetic JVM of vms_fixture.h patched by
 * the input, (u32 offset, u8 length, bytes) at a time, so the fuzzer works on tables that
 * nearly hold; byte 0 cuts the readable memory short. Whatever the memory says, the reads
 * stay within the budgets, a layout that comes out passed jvm_walk_check, and a thread list
 * read never holds more than its room and reads the same in batches as one by one.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/agent_ring.h"
#include "jvm/vmnames.h"
#include "../unit/vms_fixture.h"

/* the most threads read: more than two batches of vmstructs_threads_v (128 each) */
#define FZ_THREADS 300

/*
 * The thread list as it was read before batches, one read a field (the reference): same
 * errors, same threads in the same order
 */
static int ref_threads(const struct vms_threads *t, void *ctx, struct vms_thread *ret, size_t cap,
		       size_t *ret_n, __u64 *ret_list, size_t *ret_skipped)
{
	__u64 list = 0, arr = 0, again = 0;
	__u32 len = 0;
	size_t n = 0, skipped = 0;

	if (!t->ok)
		return -EINVAL;
	if (vf_read(ctx, t->list_var, &list, sizeof(list)))
		return -EFAULT;
	if (!list)
		return -EAGAIN;
	*ret_list = list;
	if (vf_read(ctx, list + t->list_length, &len, sizeof(len)) ||
	    vf_read(ctx, list + t->list_threads, &arr, sizeof(arr)))
		return -EFAULT;
	if (len > cap || len > VMS_MAX_THREADS)
		return -E2BIG;
	if (len && !arr)
		return -EFAULT;
	for (__u32 i = 0; i < len; i++) {
		__u64 jt = 0, os = 0, base = 0;
		__s32 tid = 0;

		if (vf_read(ctx, arr + (__u64)i * 8, &jt, sizeof(jt)))
			return -EFAULT;
		if (!jt || vf_read(ctx, jt + t->osthread, &os, sizeof(os)) || !os ||
		    vf_read(ctx, os + t->os_tid, &tid, sizeof(tid)) || tid <= 0 ||
		    (t->has_stack_base && vf_read(ctx, jt + t->stack_base, &base, sizeof(base)))) {
			skipped++;
			continue;
		}
		ret[n++] = (struct vms_thread){.thread = jt, .stack_hi = base, .tid = (__u32)tid};
	}
	if (vf_read(ctx, t->list_var, &again, sizeof(again)) || again != list)
		return -EAGAIN;
	*ret_n = n;
	*ret_skipped = skipped;
	return 0;
}

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
			static struct vms_thread t[FZ_THREADS], tb[FZ_THREADS], tr[FZ_THREADS];
			size_t n = 0, skipped = 0, nb = 0, skb = 0, nr = 0, skr = 0;
			__u64 list = 0, lb = 0, lr = 0;
			int err, errb, errr;

			err = vmstructs_threads(&names.threads, vf_read, v, 0, t, FZ_THREADS, &n,
						&list, &skipped);
			if (!err && (n > FZ_THREADS || n + skipped > FZ_THREADS))
				abort();
			/* in batches, and one read a field as before batches: the same */
			errb = vmstructs_threads_v(&names.threads, vf_read, vf_readv, v, 0, tb,
						   FZ_THREADS, &nb, &lb, &skb);
			errr = ref_threads(&names.threads, v, tr, FZ_THREADS, &nr, &lr, &skr);
			if (errb != err || lb != list || nb != n || skb != skipped ||
			    (!err && memcmp(t, tb, n * sizeof(t[0]))))
				abort();
			if (errr != err || lr != list || nr != n || skr != skipped ||
			    (!err && memcmp(t, tr, n * sizeof(t[0]))))
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_vmnames.c: compiled frames' inlined methods read from a JVM's debug info
 * (jvm/vmnames_debug.c), which another user's process controls. The decoders as pure
 * functions over the input (UNSIGNED5 values, scope headers, a PcDesc window); then the
 * synthetic JVM of vms_fixture.h with its nmethod, patched by the input ((u16 offset into
 * the nmethod and its methods, u8 length, bytes) at a time), its frames named at pcs the
 * input picks. Whatever the memory says: no more names than room, each one a name, the
 * debug info read within its budget.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/vmnames_int.h"
#include "../unit/vms_fixture.h"

static void pure(const uint8_t *d, size_t n, unsigned int x)
{
	struct vn_scope sc;
	size_t pos = 0;
	__u32 val, scope;

	while (pos < n && !vn_u5(d, n, &pos, x, &val))
		;
	for (size_t off = 0; off < n && off < 64; off++)
		if (!vn_scope_decode(d + off, n - off, (__u32)off, x, &sc) &&
		    (sc.sender >= off || !sc.midx || sc.bci < -1 || sc.bci > 65535))
			abort();
	if (vn_pcdesc_find(d, n / 16, 16, 0, 4, n ? d[0] : 0, &scope) >= (int)(n / 16))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vf *v;
	static struct jp_jwalk w0;
	static struct vms_names nl;
	static int have;
	struct jp_jwalk w;
	struct vmnames *vn;
	struct vmnames_stats ns;
	const char *names[VMNAMES_MAX_CHAIN];
	unsigned int x;
	size_t i = 2;

	if (size < 2)
		return 0;
	x = data[0] & 1;
	pure(data + 2, size - 2, x);
	if (!v && !(v = malloc(sizeof(*v))))
		return 0;
	vf_build(v);
	if (!have) {
		struct vms_stats st = {0};

		if (vmstructs_layout(v->syms, vf_read, v, &w0, &nl, &st) || !nl.dbg.layout)
			abort();
		have = 1;
	}
	w = w0;
	vf_nmethod(v, &w, x);
	/* patches over the nmethod, its tables and its methods (VF_METHOD .. the heap's end) */
	while (i + 3 <= size) {
		__u16 at;
		size_t n = data[i + 2], base = VF_METHOD, room = VF_CODE_LO + 0x400 - VF_METHOD;

		memcpy(&at, data + i, sizeof(at));
		i += 3;
		if (n > size - i)
			n = size - i;
		at %= room;
		if (n > room - at)
			n = room - at;
		memcpy(v->mem + base + at, data + i, n);
		i += n;
	}
	vn = vmnames__new_reader(&w, &nl, vf_read, v);
	if (!vn)
		return 0;
	for (unsigned int k = 0; k < 8; k++) {
		struct jp_jframe f = {.pc = VF_BASE + VF_NM_CODE + (data[1] + 17u * k) % 0x300};
		int c = vmnames__frames(vn, &f, (enum vmnames_at)((data[1] + k) % 3), names,
					VMNAMES_MAX_CHAIN);

		if (c < 0 || c > VMNAMES_MAX_CHAIN)
			abort();
		for (int j = 0; j < c; j++)
			if (!names[j] || !names[j][0])
				abort();
	}
	vmnames__stats(vn, &ns);
	if (ns.dbg_bytes > VMNAMES_MAX_DBG_BYTES)
		abort();
	vmnames__free(vn);
	return 0;
}

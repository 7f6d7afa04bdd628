// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tp_probe.c: loads a two-instruction tp_btf program to see whether tp_btf works here. */
#include <linux/bpf.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/tp_probe.h"

bool tp_btf_supported(const char *tp)
{
	/* r0 = 0; exit */
	const struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int id, fd;

	/* looks up "btf_trace_<tp>" in vmlinux BTF (tp_btf needs 5.5+) */
	id = libbpf_find_vmlinux_btf_id(tp, BPF_TRACE_RAW_TP);
	if (id <= 0)
		return false;
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = (__u32)id);
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

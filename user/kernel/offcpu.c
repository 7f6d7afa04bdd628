// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offcpu.c: loader of offcpu.bpf.c (sched_switch, raw_syscalls) onto the session's shared maps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "kernel/offcpu.h"
#include "kernel/tp_probe.h"
#include "offcpu.skel.h"

#define OFFCPU_DEFAULT_THREADS 16384

struct offcpu {
	struct offcpu_bpf *skel;
};

/* tp_btf where the kernel has it (typed arguments, cheaper); raw_tp otherwise */
static void choose_programs(struct offcpu_bpf *skel)
{
	bool sw = tp_btf_supported("sched_switch");
	bool sc = tp_btf_supported("sys_exit");

	bpf_program__set_autoload(skel->progs.offcpu_switch_btf, sw);
	bpf_program__set_autoload(skel->progs.offcpu_switch_raw, !sw);
	bpf_program__set_autoload(skel->progs.offcpu_exit_btf, sc);
	bpf_program__set_autoload(skel->progs.offcpu_exit_raw, !sc);
	pr_debug("offcpu: sched_switch via %s, raw_syscalls via %s", sw ? "tp_btf" : "raw_tp",
		 sc ? "tp_btf" : "raw_tp");
}

int offcpu__start(struct kernel_session *ks, const struct offcpu_opts *o, struct offcpu **ret)
{
	unsigned int n = o->max_threads ? o->max_threads : OFFCPU_DEFAULT_THREADS;
	struct offcpu *oc;
	int err;

	if (o->wakers) {
		pr_err("off-CPU: --wakers is not implemented yet");
		return -EOPNOTSUPP;
	}
	oc = calloc(1, sizeof(*oc));
	if (!oc)
		return -ENOMEM;
	oc->skel = offcpu_bpf__open();
	if (!oc->skel) {
		err = -errno;
		pr_err("off-CPU: opening the BPF object: %s", strerror(-err));
		goto out_free;
	}
	oc->skel->rodata->filter_pids = kernel_session__filters_pids(ks);
	oc->skel->rodata->min_block_ns = o->min_block_ns;
	oc->skel->rodata->include_kthreads = o->include_kthreads;
	err = bpf_map__set_max_entries(oc->skel->maps.offcpu_start, n);
	if (!err)
		err = bpf_map__set_max_entries(oc->skel->maps.offcpu_sys, n);
	if (err)
		goto out_free;
	choose_programs(oc->skel);
	err = kernel_session__share_maps(ks, oc->skel->obj);
	if (err) {
		pr_err("off-CPU: sharing the session's maps: %s", strerror(-err));
		goto out_free;
	}
	err = offcpu_bpf__load(oc->skel);
	if (err) {
		pr_err("off-CPU: loading the BPF programs: %s", strerror(-err));
		goto out_free;
	}
	err = offcpu_bpf__attach(oc->skel);
	if (err) {
		pr_err("off-CPU: attaching to sched_switch/raw_syscalls: %s%s", strerror(-err),
		       err == -ENOENT ? " (is tracefs mounted? mount -t tracefs nodev "
					"/sys/kernel/tracing)"
				      : "");
		goto out_free;
	}
	*ret = oc;
	return 0;
out_free:
	offcpu__free(oc);
	return err;
}

/* offcpu_start's value: bpf/maps.bpf.h's struct jp_scratch */
struct open_rec {
	struct jp_sample s;
	__u64 frames[JP_MAX_KSTACK + JP_MAX_USTACK];
};

int offcpu__flush_open(struct offcpu *oc, __u64 start_ns, __u64 end_ns, kernel_sample_fn fn,
		       void *ctx)
{
	struct bpf_map *m = oc->skel->maps.offcpu_start;
	__u32 key, next, *prev = NULL;
	struct open_rec *r;
	int fd, n = 0, err = 0;

	if (bpf_map__value_size(m) != sizeof(*r))
		return -EINVAL;
	/* frozen: no interval opens or closes while it is read */
	offcpu_bpf__detach(oc->skel);
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	fd = bpf_map__fd(m);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, r))
			continue;
		/* 0: closed (emitted at its switch-in); after end_ns: not in the recording */
		if (!r->s.time_ns || r->s.time_ns > end_ns)
			continue;
		if (r->s.kstack_len > JP_MAX_KSTACK || r->s.ustack_len > JP_MAX_USTACK ||
		    r->s.kstack_len + r->s.ustack_len > JP_MAX_KSTACK + JP_MAX_USTACK)
			continue;
		r->s.weight = end_ns - (r->s.time_ns > start_ns ? r->s.time_ns : start_ns);
		r->s.time_ns = end_ns;
		r->s.flags = JP_SF_OPEN;
		r->s.sig_err = 0;
		err = fn(ctx, &r->s, r->frames, r->frames + r->s.kstack_len);
		if (err)
			break;
		n++;
	}
	free(r);
	return err ? err : n;
}

void offcpu__free(struct offcpu *oc)
{
	if (!oc)
		return;
	offcpu_bpf__destroy(oc->skel);
	free(oc);
}

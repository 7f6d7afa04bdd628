// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* syscalls.c: loader of syscalls.bpf.c and reader of its aggregate into a struct sc_table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "kernel/syscalls.h"
#include "jprof.h"
#include "out/sctable.h"
#include "kernel/tp_probe.h"
#include "syscall_names.h" /* generated: static const char *const syscall_names[] */
#include "syscalls.skel.h"

/* the table's writer does not include the BPF ABI: its copies of the ABI's values */
_Static_assert(SC_NR_JPROF == JP_SC_NR_JPROF, "sctable.h SC_NR_JPROF");
_Static_assert(SC_COMM_LEN == JP_COMM_LEN, "sctable.h SC_COMM_LEN");

#define SC_DEFAULT_ENTRIES 16384

struct syscalls {
	struct syscalls_bpf *skel;
};

const char *syscall_name(int nr)
{
	static __thread char buf[32];

	if (nr >= 0 && (size_t)nr < sizeof(syscall_names) / sizeof(syscall_names[0]) &&
	    syscall_names[nr])
		return syscall_names[nr];
	snprintf(buf, sizeof(buf), "syscall_%d", nr);
	return buf;
}

int syscalls__start(struct kernel_session *ks, const struct syscalls_opts *o, struct syscalls **ret)
{
	unsigned int n = o->max_entries ? o->max_entries : SC_DEFAULT_ENTRIES;
	struct syscalls *s;
	bool btf;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->skel = syscalls_bpf__open();
	if (!s->skel) {
		err = -errno;
		pr_err("syscalls: opening the BPF object: %s", strerror(-err));
		goto out_free;
	}
	s->skel->rodata->filter_pids = kernel_session__filters_pids(ks);
	s->skel->rodata->per_thread = o->per_thread;
	s->skel->rodata->slow_ns = o->slow_ns;
	err = bpf_map__set_max_entries(s->skel->maps.sc_stats, n);
	if (err)
		goto out_free;
	/* tp_btf where the kernel has it; raw_tp otherwise */
	btf = tp_btf_supported("sys_enter") && tp_btf_supported("sys_exit");
	bpf_program__set_autoload(s->skel->progs.sc_enter_btf, btf);
	bpf_program__set_autoload(s->skel->progs.sc_exit_btf, btf);
	bpf_program__set_autoload(s->skel->progs.sc_enter_raw, !btf);
	bpf_program__set_autoload(s->skel->progs.sc_exit_raw, !btf);
	err = kernel_session__share_maps(ks, s->skel->obj);
	if (err) {
		pr_err("syscalls: sharing the session's maps: %s", strerror(-err));
		goto out_free;
	}
	err = syscalls_bpf__load(s->skel);
	if (err) {
		pr_err("syscalls: loading the BPF programs: %s", strerror(-err));
		goto out_free;
	}
	err = syscalls_bpf__attach(s->skel);
	if (err) {
		pr_err("syscalls: attaching to raw_syscalls: %s", strerror(-err));
		goto out_free;
	}
	*ret = s;
	return 0;
out_free:
	syscalls__free(s);
	return err;
}

static int read_stats(struct syscalls *s, struct sc_table *t)
{
	int fd = bpf_map__fd(s->skel->maps.sc_stats);
	struct jp_sc_key k, next, *prev = NULL;
	struct jp_sc_val v;
	struct sc_row *r;
	struct sc_proc *p;
	char comm[JP_COMM_LEN + 1];

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &v))
			continue; /* deleted meanwhile: cannot happen, nothing deletes */
		memcpy(comm, k.tid ? v.comm : v.pcomm, JP_COMM_LEN);
		comm[JP_COMM_LEN] = '\0';
		r = sc_table_row(t, k.tgid, k.tid, comm, k.nr,
				 syscall_name(k.nr & ~JP_SC_NR_JPROF));
		if (!r)
			return -ENOMEM;
		p = sc_table_proc(t, k.tgid, k.tid);
		if (p && !p->cgroup_id)
			p->cgroup_id = v.cgroup_id;
		r->calls += v.count;
		r->errors += v.errors;
		r->total_ns += v.total_ns;
		if (v.max_ns > r->max_ns)
			r->max_ns = v.max_ns;
		r->p50_ns = sc_hist_quantile(v.hist, JP_SC_HIST_BUCKETS, 0.50, v.max_ns);
		r->p90_ns = sc_hist_quantile(v.hist, JP_SC_HIST_BUCKETS, 0.90, v.max_ns);
		r->p99_ns = sc_hist_quantile(v.hist, JP_SC_HIST_BUCKETS, 0.99, v.max_ns);
	}
	return errno == ENOENT ? 0 : -errno;
}

static int read_errnos(struct syscalls *s, struct sc_table *t)
{
	int fd = bpf_map__fd(s->skel->maps.sc_errnos);
	struct jp_sc_errno_key k, next, *prev = NULL;
	struct sc_row *r;
	__u64 count;
	int err;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &count))
			continue;
		/* the row exists unless sc_stats was full: then it is created here */
		r = sc_table_row(t, k.tgid, k.tid, "?", k.nr,
				 syscall_name(k.nr & ~JP_SC_NR_JPROF));
		if (!r)
			return -ENOMEM;
		err = sc_row_add_errno(r, k.err, count);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}

int syscalls__read(struct syscalls *s, struct sc_table **ret)
{
	struct sc_table *t = sc_table_new();
	int err;

	if (!t)
		return -ENOMEM;
	err = read_stats(s, t);
	if (!err)
		err = read_errnos(s, t);
	if (err) {
		sc_table_free(t);
		return err;
	}
	sc_table_finish(t);
	*ret = t;
	return 0;
}

void syscalls__free(struct syscalls *s)
{
	if (!s)
		return;
	syscalls_bpf__destroy(s->skel);
	free(s);
}

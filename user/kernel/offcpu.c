// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* offcpu.c: loader of offcpu.bpf.c (sched_switch, raw_syscalls) onto the session's shared maps. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "kernel/offcpu.h"
#include "kernel/tp_probe.h"
#include "util/procfs.h"
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
	oc->skel->rodata->wall = o->runnable;
	oc->skel->rodata->parks = o->parks;
	/* a JVM thread back from a blocking syscall: its Java frames walked there, as sampled */
	oc->skel->rodata->java_walk = (__u8)kernel_session__java_walk(ks);
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

void offcpu__set_window(struct offcpu *oc, __u64 start_ns)
{
	if (oc)
		oc->skel->data->window_start_ns = start_ns;
}

/* an entry offcpu__seed_blocked() made that BPF has not touched since: still asleep */
static bool seed_untouched(const struct open_rec *r)
{
	return (r->s.flags & JP_SF_SEEDED) && r->s.time_ns;
}

/*
 * r (tid key) closed at its switch-in, held for its syscall's return, which did not come
 * before the end (offcpu.bpf.c emit_held): the interval as it was held, without Java
 * frames. 1 when it was held.
 */
static int held_rec(struct offcpu *oc, __u32 key, struct open_rec *r)
{
	struct jp_offcpu_exit x;

	if (bpf_map__value_size(oc->skel->maps.offcpu_sys) != sizeof(x) ||
	    bpf_map_lookup_elem(bpf_map__fd(oc->skel->maps.offcpu_sys), &key, &x) ||
	    x.what != JP_OX_WALK)
		return 0;
	r->s.time_ns = x.time_ns;
	r->s.weight = x.weight;
	r->s.cpu = x.cpu;
	r->s.flags &= ~(__u32)(JP_SF_SIGNALED | JP_SF_JWALK | JP_SF_SEEDED);
	r->s.sig_err = 0;
	r->s.jstack_len = 0;
	r->s.jstack_err = 0;
	return 1;
}

int offcpu__flush_open(struct offcpu *oc, __u64 start_ns, __u64 end_ns, kernel_sample_fn fn,
		       void *ctx)
{
	struct bpf_map *m = oc->skel->maps.offcpu_start;
	__u32 key, next, *prev = NULL;
	__u64 rt, until, from;
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
		if (!r->s.time_ns && r->s.kstack_len <= JP_MAX_KSTACK &&
		    r->s.ustack_len <= JP_MAX_USTACK && held_rec(oc, key, r)) {
			err = fn(ctx, &r->s, r->frames, r->frames + r->s.kstack_len);
			if (err)
				break;
			n++;
			continue;
		}
		/* 0: closed (emitted at its switch-in); after end_ns: not in the recording */
		if (!r->s.time_ns || r->s.time_ns > end_ns)
			continue;
		/* asleep since before the start, and (its runtime the same) still: flush_blocked's */
		if (seed_untouched(r) &&
		    (proc_thread_runtime(r->s.pid, r->s.tid, &rt) || rt <= r->s.weight))
			continue;
		if (r->s.kstack_len > JP_MAX_KSTACK || r->s.ustack_len > JP_MAX_USTACK ||
		    r->s.kstack_len + r->s.ustack_len > JP_MAX_KSTACK + JP_MAX_USTACK)
			continue;
		/*
		 * It ran since (its runtime grew from the one stored at its switch-out): the
		 * tracepoint did not report its switch-in, and it was blocked until it began
		 * that stretch, not until the end.
		 */
		until = end_ns;
		if (r->s.weight && !proc_thread_runtime(r->s.pid, r->s.tid, &rt) && rt > r->s.weight)
			until = rt - r->s.weight < end_ns - r->s.time_ns ?
					end_ns - (rt - r->s.weight) : r->s.time_ns;
		from = r->s.time_ns > start_ns ? r->s.time_ns : start_ns;
		if (until <= from)
			continue;
		r->s.weight = until - from;
		r->s.time_ns = until;
		r->s.flags = JP_SF_OPEN | (r->s.flags & JP_SF_RUNNABLE);
		if (from == start_ns && until == end_ns && !(r->s.flags & JP_SF_RUNNABLE))
			r->s.flags |= OFFCPU_SF_WHOLE;
		r->s.sig_err = 0;
		err = fn(ctx, &r->s, r->frames, r->frames + r->s.kstack_len);
		if (err)
			break;
		n++;
	}
	free(r);
	return err ? err : n;
}

/* path's first bytes, NUL-terminated, without a trailing newline; length or -errno */
static int read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return (int)n;
}

/* the thread sleeps (S, D) */
static bool thread_sleeps(__u32 pid, __u32 tid)
{
	int st = proc_state(pid, tid);

	return st == 'S' || st == 'D';
}

/*
 * The blocked syscall and user PC from /proc/PID/task/TID/syscall ("nr args... sp pc",
 * or "-1 sp pc" outside a syscall; "running" when it runs): the kernel reads them from
 * the sleeping thread's saved registers, without waking it. 0 or -errno.
 */
static int blocked_at(__u32 pid, __u32 tid, struct jp_sample *s, __u64 *pc)
{
	char path[64], buf[256], *last;
	unsigned long long v;
	long long nr;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/syscall", pid, tid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -EIO;
	if (sscanf(buf, "%lld", &nr) != 1)
		return -EIO; /* "running" */
	last = strrchr(buf, ' ');
	if (!last || sscanf(last + 1, "0x%llx", &v) != 1)
		return -EIO;
	s->syscall_nr = nr >= 0 && nr < 4096 ? (__s32)nr : -1;
	*pc = v;
	return 0;
}

/*
 * r: thread tid of pid as /proc shows it asleep: the blocked syscall, the user PC as its
 * one frame, its names. 0 or -errno.
 */
static int blocked_rec(__u32 pid, __u32 tid, struct open_rec *r)
{
	char path[64], comm[JP_COMM_LEN + 1];
	__u64 pc;

	memset(&r->s, 0, sizeof(r->s));
	if (blocked_at(pid, tid, &r->s, &pc))
		return -EIO;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if (read_small(path, comm, sizeof(comm)) < 0)
		comm[0] = '\0';
	memcpy(r->s.comm, comm, sizeof(r->s.comm));
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (read_small(path, comm, sizeof(comm)) < 0)
		comm[0] = '\0';
	memcpy(r->s.pcomm, comm, sizeof(r->s.pcomm));
	r->s.pid = pid;
	r->s.tid = tid;
	r->s.kind = JP_EV_OFFCPU;
	r->s.ustack_len = 1;
	r->frames[0] = pc;
	return 0;
}

/* the threads of pid, at most max_threads: fn(oc, pid, tid, r, ctx) for each; how many or -errno */
typedef int (*thread_fn)(struct offcpu *oc, __u32 pid, __u32 tid, struct open_rec *r, void *ctx);

static int each_thread(struct offcpu *oc, __u32 pid, unsigned int max_threads, thread_fn fn,
		       void *ctx)
{
	struct open_rec *r;
	char path[64];
	unsigned int seen = 0;
	struct dirent *de;
	int n = 0, k;
	DIR *d;

	/* the lookups copy a whole value into r */
	if (bpf_map__value_size(oc->skel->maps.offcpu_start) != sizeof(*r))
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	r = calloc(1, sizeof(*r));
	if (!r) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d)) && seen < max_threads) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || !tid || tid > UINT32_MAX)
			continue;
		seen++;
		k = fn(oc, pid, (__u32)tid, r, ctx);
		if (k < 0) {
			n = k;
			break;
		}
		n += k;
	}
	closedir(d);
	free(r);
	return n;
}

struct seed_ctx {
	__u64 start_ns;
};

static int seed_thread(struct offcpu *oc, __u32 pid, __u32 tid, struct open_rec *r, void *ctx)
{
	const struct seed_ctx *c = ctx;
	int fd = bpf_map__fd(oc->skel->maps.offcpu_start);
	__u64 rt;

	/*
	 * The runtime first: if it wakes after the look at its state, it runs past this and
	 * the interval ends where that began (emit_unseen_switch_in, offcpu__flush_open)
	 */
	if (proc_thread_runtime(pid, tid, &rt) || !thread_sleeps(pid, tid) ||
	    blocked_rec(pid, tid, r))
		return 0;
	r->s.time_ns = c->start_ns;
	r->s.weight = rt;
	r->s.flags = JP_SF_SEEDED;
	/* an entry already: BPF saw it block since the programs were attached */
	return bpf_map_update_elem(fd, &tid, r, BPF_NOEXIST) ? 0 : 1;
}

int offcpu__seed_blocked(struct offcpu *oc, __u32 pid, __u64 start_ns, unsigned int max_threads)
{
	struct seed_ctx c = {.start_ns = start_ns};

	return each_thread(oc, pid, max_threads, seed_thread, &c);
}

struct flush_ctx {
	__u64 start_ns, end_ns;
	kernel_sample_fn fn;
	void *ctx;
};

static int flush_thread(struct offcpu *oc, __u32 pid, __u32 tid, struct open_rec *r, void *ctx)
{
	const struct flush_ctx *c = ctx;
	int fd = bpf_map__fd(oc->skel->maps.offcpu_start);
	int err;

	/*
	 * Sleeping now, and (looked up after) no entry, or one seeded at the start that BPF
	 * has not touched: it has not blocked since the programs were attached, so it has
	 * slept since before. An entry of BPF's: it saw it block, offcpu__flush_open() has it.
	 */
	if (!thread_sleeps(pid, tid))
		return 0;
	if (!bpf_map_lookup_elem(fd, &tid, r) && !seed_untouched(r))
		return 0;
	if (blocked_rec(pid, tid, r))
		return 0;
	r->s.time_ns = c->end_ns;
	r->s.weight = c->end_ns - c->start_ns;
	r->s.flags = JP_SF_OPEN | OFFCPU_SF_WHOLE;
	err = c->fn(c->ctx, &r->s, r->frames, r->frames);
	return err ? err : 1;
}

int offcpu__flush_blocked(struct offcpu *oc, __u32 pid, __u64 start_ns, __u64 end_ns,
			  unsigned int max_threads, kernel_sample_fn fn, void *ctx)
{
	struct flush_ctx c = {.start_ns = start_ns, .end_ns = end_ns, .fn = fn, .ctx = ctx};

	return each_thread(oc, pid, max_threads, flush_thread, &c);
}

void offcpu__free(struct offcpu *oc)
{
	if (!oc)
		return;
	offcpu_bpf__destroy(oc->skel);
	free(oc);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* session.c: loads cpu.bpf.c, opens one perf event per online CPU, polls the ring buffer. */
#include <sys/ioctl.h>

#include "kernel/session_int.h"

/*
 * One consume round takes at most this many records or this long: libbpf's consume
 * loop keeps going while the producer does, so without a bound a saturated host
 * keeps jprof inside it past its deadline and its signals.
 */
#define KS_ROUND_RECORDS 4096
#define KS_ROUND_NS	 (20ull * 1000 * 1000)
#define KS_DRAIN_NS	 (150ull * 1000 * 1000)

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	return syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct kernel_session *s = ctx;
	const struct jp_sample *smp = data;
	const __u64 *frames = (const __u64 *)(smp + 1);
	int err = 0;

	if (size >= sizeof(*smp) && (smp->kind == JP_EV_EXIT || smp->kind == JP_EV_EXEC)) {
		/* not a sample: the record loop takes them once a round */
		if (s->nexits < KS_EXITS_MAX)
			s->exits[s->nexits++] = (struct ks_proc_event){
				.pid = smp->pid, .exec = smp->kind == JP_EV_EXEC
			};
		else
			s->exits_dropped++;
	} else if (size >= sizeof(*smp) && smp->kind == JP_EV_AGG_FILL) {
		if (s->agg)
			ks_agg_fill(s);
	} else if (size >= sizeof(*smp) &&
		   size >= sizeof(*smp) +
				   ((size_t)smp->kstack_len + smp->ustack_len) * sizeof(__u64) +
				   (size_t)smp->jstack_len * sizeof(struct jp_jframe)) {
		if (smp->stack_hash && s->agg)
			ks_agg_learn(s, smp, frames, frames + smp->kstack_len);
		err = s->fn(s->ctx, smp, frames, frames + smp->kstack_len);
	}
	/* else: cannot happen with our programs; never trust a length anyway */
	if (err)
		return err;
	/* the round's time starts with its first record, not before poll's wait */
	if (!s->round_end_ns)
		s->round_end_ns = mono_ns() + s->round_ns;
	/* libbpf has moved past this record already: a negative return ends the round */
	if (!--s->round_left || (!(s->round_left % 64) && mono_ns() > s->round_end_ns)) {
		s->round_over = true;
		return -ECANCELED;
	}
	return 0;
}

/* marks online[c] for each CPU in /sys/devices/system/cpu/online ("0-3,5") */
static int read_online_cpus(bool *online, unsigned int n)
{
	char buf[512], *tok, *save = NULL;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		unsigned int a, b;
		int k = sscanf(tok, "%u-%u", &a, &b);

		if (k == 1)
			b = a;
		if (k < 1 || a > b || b >= n)
			return -EINVAL;
		for (unsigned int c = a; c <= b; c++)
			online[c] = true;
	}
	return 0;
}

/* the value of kernel.perf_event_paranoid, for the permission hint; -99 if unreadable */
static int perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = -99;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -99;
		fclose(f);
	}
	return v;
}

/* one perf event per online CPU; hardware cycles when the PMU has them, else cpu-clock */
static int attach_cpu_events(struct kernel_session *s)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.freq = 1,
		.sample_freq = s->freq_hz,
	};
	bool online[4096] = { 0 };
	int i, fd, err, ncpus;
	bool use_hw = false;

	ncpus = libbpf_num_possible_cpus();
	if (ncpus < 0)
		return ncpus;
	err = read_online_cpus(online, 4096);
	if (err)
		return err;
	s->links = calloc(ncpus, sizeof(*s->links));
	s->pfds = calloc(ncpus, sizeof(*s->pfds));
	if (!s->links || !s->pfds)
		return -ENOMEM;
	s->ncpus = ncpus;
	for (i = 0; i < ncpus; i++)
		s->pfds[i] = -1;

	/* probe cycles once; virtual machines often have no PMU */
	fd = perf_open(&attr, 0);
	if (fd >= 0) {
		use_hw = true;
		close(fd);
	}
	if (!use_hw) {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
	}
	s->cpu_event = use_hw ? "cycles" : "cpu-clock";

	for (i = 0; i < ncpus && i < 4096; i++) {
		if (!online[i])
			continue;
		fd = perf_open(&attr, i);
		if (fd < 0) {
			err = -errno;
			if (err == -EACCES || err == -EPERM)
				pr_err("perf_event_open: %s (needs root or CAP_PERFMON; "
				       "kernel.perf_event_paranoid is %d)",
				       strerror(-err), perf_paranoid());
			else if (err == -EMFILE)
				pr_err("perf_event_open: too many open files; raise `ulimit -n`");
			else
				pr_err("perf_event_open on CPU %d: %s", i, strerror(-err));
			return err;
		}
		s->pfds[i] = fd;
		s->links[i] = bpf_program__attach_perf_event(s->cpu->progs.on_cpu_sample, fd);
		if (!s->links[i]) {
			err = -errno;
			pr_err("attaching the sampler to CPU %d: %s", i, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int fill_pid_filter(struct kernel_session *s, const struct kernel_opts *o)
{
	__u8 one = 1;

	for (size_t i = 0; i < o->npids; i++) {
		if (bpf_map__update_elem(s->cpu->maps.pids, &o->pids[i], sizeof(__u32), &one,
					 sizeof(one), BPF_ANY))
			return -errno;
	}
	return 0;
}

/* the cgroup filter: ids in cgroups, their distinct depths in cgroup_cfg (set last: it arms it) */
static int fill_cgroup_filter(struct kernel_session *s, const struct kernel_opts *o)
{
	struct jp_cgroup_cfg cfg = {};
	__u32 zero = 0, j;
	__u8 one = 1;

	if (!o->ncgroups)
		return 0;
	if (o->ncgroups > JP_MAX_CGROUPS)
		return -E2BIG;
	for (size_t i = 0; i < o->ncgroups; i++) {
		if (bpf_map__update_elem(s->cpu->maps.cgroups, &o->cgroup_ids[i], sizeof(__u64), &one,
					 sizeof(one), BPF_ANY))
			return -errno;
		for (j = 0; j < cfg.nlevels && cfg.levels[j] != o->cgroup_levels[i]; j++)
			;
		if (j < cfg.nlevels)
			continue;
		if (cfg.nlevels == JP_CGROUP_LEVELS)
			return -E2BIG;
		cfg.levels[cfg.nlevels++] = o->cgroup_levels[i];
	}
	if (bpf_map__update_elem(s->cpu->maps.cgroup_cfg, &zero, sizeof(zero), &cfg, sizeof(cfg),
				 BPF_ANY))
		return -errno;
	return 0;
}

/* field 1 of /proc/<pid>/task/<tid>/schedstat: the thread's se.sum_exec_runtime (ns) */
static int read_thread_runtime(int taskfd, __u32 tid, __u64 *ret)
{
	char path[32];

	snprintf(path, sizeof(path), "%u/schedstat", tid);
	return proc_runtime_at(taskfd, path, ret);
}

/* seeds cpu_prev with the runtime of every thread of pid; stops at *left entries */
static void seed_process(struct kernel_session *s, const char *pid, unsigned int *left)
{
	char path[300];
	struct dirent *d;
	DIR *dir;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return; /* exited */
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while (*left && (d = readdir(dir))) {
		struct jp_cpu_prev v = { 0 };
		char *end;
		unsigned long tid = strtoul(d->d_name, &end, 10);
		__u32 key = (__u32)tid;

		if (*end || !tid || tid > UINT32_MAX || read_thread_runtime(fd, key, &v.runtime_ns))
			continue;
		/* start_ns 0: the thread's first sample pins it */
		if (!bpf_map__update_elem(s->cpu->maps.cpu_prev, &key, sizeof(key), &v, sizeof(v),
					  BPF_NOEXIST))
			(*left)--;
	}
	closedir(dir);
}

/*
 * Every profiled thread's runtime now, before the sampler starts, so its first sample
 * weighs the CPU time it ran since the start of the recording. Threads started after
 * seed_ns need no entry. At most half the map: the rest is for threads to come.
 */
static void seed_cpu_prev(struct kernel_session *s)
{
	unsigned int left = bpf_map__max_entries(s->cpu->maps.cpu_prev) / 2;
	char pid[16];
	struct dirent *d;
	DIR *dir;

	if (s->cpu_npids) {
		for (size_t i = 0; i < s->cpu_npids; i++) {
			snprintf(pid, sizeof(pid), "%u", s->cpu_pids[i]);
			seed_process(s, pid, &left);
		}
		return;
	}
	dir = opendir("/proc");
	if (!dir)
		return;
	while (left && (d = readdir(dir))) {
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			seed_process(s, d->d_name, &left);
	}
	closedir(dir);
}

/*
 * The exec and exit programs, before any JVM is registered. Without them the signal
 * would still be safe (the BPF handler check), but entries of dead processes would stay.
 */
static int start_jvm_cleanup(struct kernel_session *s)
{
	int err;

	s->jvms = jvms_bpf__open();
	if (!s->jvms)
		return -errno;
	err = kernel_session__share_maps(s, s->jvms->obj);
	if (!err)
		err = jvms_bpf__load(s->jvms);
	if (!err)
		err = jvms_bpf__attach(s->jvms);
	if (err)
		pr_err("loading the exec/exit programs: %s", strerror(-err));
	return err;
}

/*
 * The ring buffer's size. CPU samples alone come at a known rate: room for about a second
 * of them at their largest (2 KiB: two full stacks) on every CPU, from 1 to 8 MiB (2 CPUs
 * at 99 Hz: 1 MiB). Off-CPU, syscalls and -e wall come as fast as threads switch: 8 MiB.
 * Its pages are mapped in jprof (twice: the kernel maps the data area twice), so this is
 * most of jprof's resident memory on a small host.
 */
static __u32 ring_bytes(const struct kernel_opts *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	/* a Java walk's frames add up to 2 KiB more, but few stacks are full */
	__u64 want = (__u64)(ncpu > 0 ? ncpu : 1) * (o->freq_hz ? o->freq_hz : 99) * 2048;
	__u32 n = JP_RINGBUF_MIN;

	if (o->events != KS_EV_CPU || o->wall)
		return JP_RINGBUF_BYTES;
	while (n < want && n < JP_RINGBUF_BYTES)
		n <<= 1;
	return n;
}

int kernel_session__start(const struct kernel_opts *o, kernel_sample_fn fn, void *ctx,
			  struct kernel_session **ret)
{
	struct kernel_session *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fn = fn;
	s->ctx = ctx;
	s->freq_hz = o->freq_hz;

	s->cpu = cpu_bpf__open();
	if (!s->cpu) {
		err = -errno;
		pr_err("opening the BPF object: %s", strerror(-err));
		goto out_free;
	}
	s->cpu->rodata->filter_pids = o->npids > 0;
	s->cpu->rodata->java_walk = (__u8)o->java_walk;
	s->cpu->rodata->period_ns = o->freq_hz ? 1000000000ull / o->freq_hz : 0;
	/* before the seeding: a thread started after it is new, whether seeded or not */
	s->cpu->rodata->seed_ns = mono_ns();
	err = bpf_map__set_max_entries(s->cpu->maps.events, ring_bytes(o));
	if (err)
		goto out_free;
	/* LRU maps are preallocated: no room for what this recording does not do */
	if (!o->wall)
		err = bpf_map__set_max_entries(s->cpu->maps.wall_cpu, 1);
	else
		err = bpf_map__set_max_entries(s->cpu->maps.cpu_prev, 1);
	if (err)
		goto out_free;
	err = ks_agg_configure(s, o);
	if (err)
		goto out_free;
	if (!(o->events & KS_EV_CPU)) {
		bpf_program__set_autoload(s->cpu->progs.on_cpu_sample, false);
		bpf_program__set_autoload(s->cpu->progs.cpu_exit, false);
	}

	err = cpu_bpf__load(s->cpu);
	if (err) {
		if (err == -EPERM)
			pr_err("loading BPF programs: permission denied (run as root, or with "
			       "CAP_BPF and CAP_PERFMON)");
		else
			pr_err("loading BPF programs: %s (needs a kernel with BPF and BTF, "
			       "/sys/kernel/btf/vmlinux)", strerror(-err));
		goto out_free;
	}
	err = fill_pid_filter(s, o);
	if (err)
		goto out_free;
	err = fill_cgroup_filter(s, o);
	if (err) {
		pr_err("setting the cgroup filter: %s", strerror(-err));
		goto out_free;
	}

	err = start_jvm_cleanup(s);
	if (err)
		goto out_free;

	s->rb = ring_buffer__new(bpf_map__fd(s->cpu->maps.events), on_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_err("creating the ring buffer reader: %s", strerror(-err));
		goto out_free;
	}
	s->cpu_pids = o->npids ? malloc(o->npids * sizeof(*o->pids)) : NULL;
	if (o->npids && !s->cpu_pids) {
		err = -ENOMEM;
		goto out_free;
	}
	if (o->npids)
		memcpy(s->cpu_pids, o->pids, o->npids * sizeof(*o->pids));
	s->cpu_npids = o->npids;
	if ((o->events & KS_EV_CPU) && !o->wall) {
		err = kernel_session__start_cpu(s, 0);
		if (err)
			goto out_free;
	}
	*ret = s;
	return 0;
out_free:
	kernel_session__free(s);
	return err;
}

int kernel_session__start_cpu(struct kernel_session *s, __u64 wall_start_ns)
{
	int err;

	if (s->links || !bpf_program__autoload(s->cpu->progs.on_cpu_sample))
		return -EINVAL; /* started already, or not loaded */
	s->cpu->bss->wall_start_ns = wall_start_ns;
	if (!wall_start_ns)
		seed_cpu_prev(s);
	s->cpu->links.cpu_exit = bpf_program__attach(s->cpu->progs.cpu_exit);
	if (!s->cpu->links.cpu_exit) {
		err = -errno;
		pr_err("attaching the thread-exit program: %s", strerror(-err));
		return err;
	}
	return attach_cpu_events(s);
}

static void round_start(struct kernel_session *s, unsigned int records, __u64 ns)
{
	s->round_left = records;
	s->round_ns = ns;
	s->round_end_ns = 0;
	s->round_over = false;
}

/* records consumed in this round, or a real error (not our own end of round) */
static int round_result(struct kernel_session *s, int err)
{
	if (err == -ECANCELED && s->round_over)
		return 0;
	return err;
}

int kernel_session__poll(struct kernel_session *s, int timeout_ms)
{
	int err, n;

	round_start(s, KS_ROUND_RECORDS, KS_ROUND_NS);
	err = round_result(s, ring_buffer__poll(s->rb, timeout_ms));
	/* the programs wake us only when the ring fills up: take what is there anyway */
	if (err >= 0 && !s->round_over)
		err = round_result(s, ring_buffer__consume(s->rb));
	if (err < 0)
		return err;
	n = (int)(KS_ROUND_RECORDS - s->round_left);
	/* after the ring: the records of new stacks come before their counts */
	err = ks_agg_drain(s, false);
	return err < 0 ? err : n;
}

int kernel_session__drain(struct kernel_session *s)
{
	unsigned int n = 0;
	int err;

	/* the rest of the ring, within a time bound: the producer may never pause */
	round_start(s, ~0u, KS_DRAIN_NS);
	err = round_result(s, ring_buffer__consume(s->rb));
	n = ~0u - s->round_left;
	/* the counts too: all of them once no sample comes any more */
	if (err >= 0)
		err = ks_agg_drain(s, s->sampling_stopped);
	return err < 0 ? err : (int)(n > INT_MAX ? INT_MAX : n);
}

int kernel_session__stop_sampling(struct kernel_session *s)
{
	for (int i = 0; i < s->ncpus; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	s->sampling_stopped = true;
	return 0;
}

void kernel_session__agg_stats(const struct kernel_session *s, struct ks_agg_stats *ret)
{
	ks_agg_stats(s, ret);
}

void kernel_session__agg_clock(struct kernel_session *s, __u64 mono0_ns)
{
	if (s)
		ks_agg_clock(s, mono0_ns);
}

__u64 kernel_session__exits_dropped(const struct kernel_session *s)
{
	return s->exits_dropped;
}

size_t kernel_session__take_exits(struct kernel_session *s, struct ks_proc_event *pids, size_t max)
{
	size_t n = s->nexits < max ? s->nexits : max;

	memcpy(pids, s->exits, n * sizeof(*pids));
	memmove(s->exits, s->exits + n, (s->nexits - n) * sizeof(*pids));
	s->nexits -= n;
	return n;
}

void kernel_session__stats(const struct kernel_session *s, __u64 ret[JP_STAT_MAX])
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *vals;

	memset(ret, 0, JP_STAT_MAX * sizeof(__u64));
	if (ncpus <= 0)
		return;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return;
	for (__u32 k = 0; k < JP_STAT_MAX; k++) {
		if (bpf_map__lookup_elem(s->cpu->maps.stats, &k, sizeof(k), vals,
					 ncpus * sizeof(*vals), 0))
			continue;
		for (int c = 0; c < ncpus; c++)
			ret[k] += vals[c];
	}
	free(vals);
}

const char *kernel_session__cpu_event(const struct kernel_session *s)
{
	return s->cpu_event ? s->cpu_event : "none";
}

__u64 kernel_session__period_ns(const struct kernel_session *s)
{
	return s->freq_hz ? 1000000000ull / s->freq_hz : 0;
}

int kernel_session__set_freq(struct kernel_session *s, unsigned int freq_hz)
{
	__u64 v;
	int n = 0;

	if (!freq_hz)
		return -EINVAL;
	if (!s->pfds || !s->cpu_event)
		return -ENOENT;
	/*
	 * A hardware event opened with attr.freq stays in freq mode: the ioctl's value is the
	 * new frequency. cpu-clock is an hrtimer: the kernel turns its frequency into a period
	 * in ns when it opens it (perf_swevent_init_hrtimer) and clears attr.freq, so the value
	 * is then a period in ns (49 would be a sample every 49 ns).
	 */
	v = strcmp(s->cpu_event, "cpu-clock") ? freq_hz : 1000000000ull / freq_hz;
	for (int i = 0; i < s->ncpus; i++) {
		if (s->pfds[i] < 0)
			continue;
		if (ioctl(s->pfds[i], PERF_EVENT_IOC_PERIOD, &v))
			return n ? -EIO : -errno; /* over perf_event_max_sample_rate: EINVAL */
		n++;
	}
	s->freq_hz = freq_hz;
	return 0;
}

int kernel_session__share_maps(const struct kernel_session *s, struct bpf_object *obj)
{
	static const char *const names[] = {
		"events", "pids", "cgroups", "cgroup_cfg", "jvms", "stats", "wall_cpu",
		"native_threads", "jwalk", "jw_methods", "jthreads", "agg_sent", "agg_counts",
	};
	struct bpf_map *m;
	int err;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		m = bpf_object__find_map_by_name(obj, names[i]);
		if (!m)
			continue;
		err = bpf_map__reuse_fd(
			m, bpf_map__fd(bpf_object__find_map_by_name(s->cpu->obj, names[i])));
		if (err)
			return err;
	}
	return 0;
}

bool kernel_session__filters_pids(const struct kernel_session *s)
{
	return s->cpu->rodata->filter_pids;
}

unsigned int kernel_session__java_walk(const struct kernel_session *s)
{
	return s->cpu->rodata->java_walk;
}

int kernel_session__flush_wall(struct kernel_session *s, __u64 end_ns, kernel_sample_fn fn,
			       void *ctx)
{
	static const __u64 none[1];
	__u64 start = s->cpu->bss->wall_start_ns, since;
	struct jp_wall_cpu v;
	struct jp_sample t;
	__u32 key, next, *prev = NULL;
	int fd, n = 0, err;

	if (!start)
		return 0;
	/* no sample or thread exit takes time from the table while it is read */
	for (int i = 0; i < s->ncpus; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
	bpf_link__destroy(s->cpu->links.cpu_exit);
	s->cpu->links.cpu_exit = NULL;
	s->sampling_stopped = true;
	/* the samples in the ring first: a tail follows its thread's last sample */
	err = kernel_session__drain(s);
	if (err < 0)
		return err;
	fd = bpf_map__fd(s->cpu->maps.wall_cpu);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v) || !v.pid)
			continue;
		since = v.since_ns > start ? v.since_ns : start;
		if (v.since_ns && end_ns > since) {
			/*
			 * On CPU since then by the table, at most what the scheduler's runtime
			 * grew by: a switch away from it the tracepoint did not report (see
			 * JP_STAT_SWITCH_MISSED) leaves it "on" while it sleeps
			 */
			__u64 span = end_ns - since, rt;

			if (!proc_thread_runtime(v.pid, key, &rt) && rt >= v.rt_ns &&
			    rt - v.rt_ns < span)
				span = rt - v.rt_ns;
			v.acc_ns += span;
		}
		if (!v.acc_ns)
			continue;
		memset(&t, 0, sizeof(t));
		t.time_ns = end_ns;
		t.weight = v.acc_ns;
		t.pid = v.pid;
		t.tid = key;
		t.kind = JP_EV_CPU;
		t.flags = JP_SF_CPU_TAIL;
		t.syscall_nr = -1;
		proc_comm(v.pid, key, t.comm);
		proc_comm(v.pid, 0, t.pcomm);
		if (!t.pcomm[0])
			continue; /* gone: the name would read as an exec */
		err = fn(ctx, &t, none, none);
		if (err)
			return err;
		n++;
	}
	return n;
}

void kernel_session__free(struct kernel_session *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->ncpus; i++) {
		bpf_link__destroy(s->links[i]);
		if (s->pfds[i] >= 0)
			close(s->pfds[i]);
	}
	free(s->links);
	free(s->pfds);
	free(s->cpu_pids);
	free(s->jw_counts);
	ks_agg_free(s->agg);
	ring_buffer__free(s->rb);
	jvms_bpf__destroy(s->jvms);
	cpu_bpf__destroy(s->cpu);
	free(s);
}

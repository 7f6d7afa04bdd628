// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * session_procs.c: what BPF holds per process, written by the record loop: JVMs whose agent
 * answers stack requests (registered with their start time, signal and handler), threads
 * that are not Java threads, the Method*s BPF's Java walk may name (budgeted per JVM and in
 * all), the -p targets' pid filter.
 */
#include "kernel/session_int.h"

/*
 * A pidfd holds the process while it is registered: once it is open, the pid cannot
 * name another process, so the start time read after it is that process's; if the
 * process exits before the map update, the exit program ran too early to drop the
 * entry, and the pidfd (readable once the process is gone) says so.
 */
static int put_jvm(struct kernel_session *s, __u32 tgid, const struct jp_jvm *v, __u64 flags)
{
	struct pollfd pfd = { .events = POLLIN };
	__u64 now_ticks, start_ticks = v->start_ticks;
	int err = 0;

	pfd.fd = syscall(SYS_pidfd_open, tgid, 0);
	if (pfd.fd < 0)
		return -errno;
	err = proc_start_ticks(tgid, &now_ticks);
	if (!err && now_ticks != start_ticks)
		err = -ESRCH; /* the pid is another process now */
	if (!err && bpf_map__update_elem(s->cpu->maps.jvms, &tgid, sizeof(tgid), v, sizeof(*v),
					 flags))
		err = -errno;
	if (!err && poll(&pfd, 1, 0) != 0) {
		(void)kernel_session__del_jvm(s, tgid);
		err = -ESRCH;
	}
	close(pfd.fd);
	return err;
}

int kernel_session__add_jvm(struct kernel_session *s, __u32 tgid, __u64 start_ticks, int signo,
			    __u64 handler)
{
	struct jp_jvm v = { .start_ticks = start_ticks, .signo = (__u32)signo, .handler = handler };

	if (signo < 1 || signo > 64 || handler <= 1 /* SIG_DFL, SIG_IGN */)
		return -EINVAL;
	return put_jvm(s, tgid, &v, BPF_ANY);
}

/*
 * A JVM walked before its agent is in: an entry with signo 0, which BPF pins and walks
 * and never signals (jvm_of_task); kernel_session__add_jvm replaces it once the agent is
 * ready, kernel_session__del_jvm drops it
 */
int kernel_session__add_walk(struct kernel_session *s, __u32 tgid, __u64 start_ticks,
			     const struct jp_jwalk *w)
{
	struct jp_jvm v = { .start_ticks = start_ticks };
	int err;

	if (!s->cpu->rodata->java_walk)
		return -EOPNOTSUPP;
	/* never over an entry there (an agent's: it would stop its stack requests) */
	if (!bpf_map__lookup_elem(s->cpu->maps.jvms, &tgid, sizeof(tgid), &v, sizeof(v), 0))
		return -EEXIST;
	v = (struct jp_jvm){ .start_ticks = start_ticks };
	err = kernel_session__set_jwalk(s, tgid, w);
	if (!err)
		err = put_jvm(s, tgid, &v, BPF_NOEXIST);
	if (err)
		(void)kernel_session__set_jwalk(s, tgid, NULL);
	return err;
}

int kernel_session__native_thread(struct kernel_session *s, __u32 tid, bool native, bool listed)
{
	struct jp_native_thread v = { .listed = listed };

	if (!native) {
		if (bpf_map__delete_elem(s->cpu->maps.native_threads, &tid, sizeof(tid), 0) &&
		    errno != ENOENT)
			return -errno;
		return 0;
	}
	if (bpf_map__update_elem(s->cpu->maps.native_threads, &tid, sizeof(tid), &v, sizeof(v),
				 listed ? BPF_ANY : BPF_NOEXIST) &&
	    errno != EEXIST)
		return -errno;
	return 0;
}

int kernel_session__set_jthread(struct kernel_session *s, __u32 tid, const struct jp_jthread *t)
{
	if (!t) {
		if (bpf_map__delete_elem(s->cpu->maps.jthreads, &tid, sizeof(tid), 0) &&
		    errno != ENOENT)
			return -errno;
		return 0;
	}
	if (bpf_map__update_elem(s->cpu->maps.jthreads, &tid, sizeof(tid), t, sizeof(*t), BPF_ANY))
		return -errno;
	return 0;
}

int kernel_session__del_jvm(struct kernel_session *s, __u32 tgid)
{
	(void)kernel_session__set_jwalk(s, tgid, NULL);
	if (bpf_map__delete_elem(s->cpu->maps.jvms, &tgid, sizeof(tgid), 0) && errno != ENOENT)
		return -errno;
	return 0;
}

/* the count of tgid's jw_methods entries; NULL when it has none and add is false */
static __u32 *jw_count(struct kernel_session *s, __u32 tgid, bool add)
{
	struct jw_count *c;

	for (size_t i = 0; i < s->n_jw_counts; i++)
		if (s->jw_counts[i].tgid == tgid)
			return &s->jw_counts[i].n;
	if (!add)
		return NULL;
	if (s->n_jw_counts == s->cap_jw_counts) {
		size_t cap = s->cap_jw_counts ? s->cap_jw_counts * 2 : 16;

		c = realloc(s->jw_counts, cap * sizeof(*c));
		if (!c)
			return NULL;
		s->jw_counts = c;
		s->cap_jw_counts = cap;
	}
	s->jw_counts[s->n_jw_counts] = (struct jw_count){ .tgid = tgid };
	return &s->jw_counts[s->n_jw_counts++].n;
}

int kernel_session__jw_method(struct kernel_session *s, __u32 tgid, __u64 method, bool known)
{
	struct jp_jw_method k = { .tgid = tgid, .method = method };
	__u32 *n = jw_count(s, tgid, known);
	__u32 gen;

	if (!known) {
		if (bpf_map__delete_elem(s->cpu->maps.jw_methods, &k, sizeof(k), 0)) {
			if (errno != ENOENT)
				return -errno;
		} else if (n && *n) {
			(*n)--;
		}
		return 0;
	}
	/* a new generation for each add (never 0): what BPF cached of an earlier one is stale */
	if (!++s->jw_gen)
		++s->jw_gen;
	gen = s->jw_gen;
	/* full: that method's frames keep asking the agent */
	if (bpf_map__update_elem(s->cpu->maps.jw_methods, &k, sizeof(k), &gen, sizeof(gen),
				 BPF_NOEXIST)) {
		if (errno == EEXIST)
			return 0;
		return -errno;
	}
	/* no room to count it: it is dropped as if the map were full */
	if (!n) {
		(void)bpf_map__delete_elem(s->cpu->maps.jw_methods, &k, sizeof(k), 0);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

/*
 * Every jw_methods entry of tgid: a process's Method*s mean nothing in the next one. Only
 * a process that has entries scans the map, and it stops at its last one: another
 * process's 65,536 entries made every registration scan them all (45 ms).
 */
static void jw_methods_drop(struct kernel_session *s, __u32 tgid)
{
	struct jp_jw_method k, next, *prev = NULL;
	int fd = bpf_map__fd(s->cpu->maps.jw_methods);
	__u32 *n = jw_count(s, tgid, false);

	if (!s->cpu->rodata->java_walk || !n || !*n)
		return; /* nothing of tgid's there */
	for (int i = 0; *n && i < JP_MAX_JW_METHODS * 2; i++) {
		if (bpf_map_get_next_key(fd, prev, &next))
			break;
		if (next.tgid == tgid) {
			/* deleted: the walk goes on from the last key kept (or the start) */
			if (!bpf_map_delete_elem(fd, &next))
				(*n)--;
			continue;
		}
		k = next;
		prev = &k;
	}
	/* the process is gone or starts anew: its count goes (the table follows live JVMs) */
	for (size_t i = 0; i < s->n_jw_counts; i++)
		if (s->jw_counts[i].tgid == tgid) {
			s->jw_counts[i] = s->jw_counts[--s->n_jw_counts];
			break;
		}
}

int kernel_session__set_jwalk(struct kernel_session *s, __u32 tgid, const struct jp_jwalk *w)
{
	jw_methods_drop(s, tgid);
	if (!w) {
		if (bpf_map__delete_elem(s->cpu->maps.jwalk, &tgid, sizeof(tgid), 0) &&
		    errno != ENOENT)
			return -errno;
		return 0;
	}
	if (bpf_map__update_elem(s->cpu->maps.jwalk, &tgid, sizeof(tgid), w, sizeof(*w), BPF_ANY))
		return -errno;
	return 0;
}

int kernel_session__add_pid(struct kernel_session *s, __u32 tgid)
{
	__u8 one = 1;

	if (bpf_map__update_elem(s->cpu->maps.pids, &tgid, sizeof(tgid), &one, sizeof(one), BPF_ANY))
		return -errno;
	return 0;
}

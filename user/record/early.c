// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * early.c: Java stacks before the agent is in. When a JVM is found, the layout BPF's Java
 * walk needs is read from outside (jvm/vmstructs.h: libjvm.so's symbols, the JVM's memory
 * read-only) and published at once, as a jvms entry without a signal: BPF walks the JVM's
 * threads and never signals them (no agent, no handler). The join holds those raw frames
 * until the agent's dictionary names them. When the agent's own layout arrives the two are
 * compared; one that differs turns the early walk of that JVM off.
 */
#include "record/record_int.h"
#include "jvm/vmnames.h"
#include "jvm/vmstructs.h"

/* a JVM found while still starting has no code heaps yet: tried again, 20 ms doubling */
#define EARLY_TRIES	 9 /* the last about 5 s after the first */
#define EARLY_BACKOFF_NS (20ull * 1000 * 1000)

static struct rec_early *early_of(struct rec *r, __u32 pid)
{
	for (size_t i = 0; i < r->nearly; i++)
		if (r->early[i].pid == pid)
			return &r->early[i];
	return NULL;
}

/* an agent of pid registered in BPF: its own entry there, never to be replaced */
static bool agent_in_bpf(const struct rec *r, __u32 pid)
{
	for (size_t i = 0; i < r->nagents; i++)
		if (r->agents[i].pid == pid && r->agents[i].in_bpf)
			return true;
	return false;
}

static void try_publish(struct rec *r, struct rec_early *e, __u64 now)
{
	struct vms_stats st = {0};
	__u64 start;
	int err;

	if (agent_in_bpf(r, e->pid)) {
		e->done = true; /* the agent was faster */
		return;
	}
	err = proc_start_ticks(e->pid, &start);
	if (!err && start != e->start_ticks)
		err = -ESRCH;
	if (!err)
		err = vmstructs_read_pid(e->pid, &e->w, &e->names, &st);
	r->early_st.read_bytes += st.bytes;
	r->early_st.reads += st.reads;
	if (err == -EAGAIN && ++e->tries < EARLY_TRIES) {
		r->early_st.retries++;
		e->next_ns = now + (EARLY_BACKOFF_NS << (e->tries - 1));
		return;
	}
	if (!err)
		err = kernel_session__add_walk(r->ks, e->pid, e->start_ticks, &e->w);
	e->done = true;
	if (err) {
		r->early_st.failed++;
		r->early_st.last_err = err;
		pr_debug("JVM %u: no Java walk before its agent: %s", e->pid, strerror(-err));
		return;
	}
	e->published = true;
	r->early_st.published++;
	/* what no agent names (before it comes, or with none) is named from the JVM's memory */
	join__set_jvm_vmnames(r->join, e->pid, vmnames__new(e->pid, &e->w, &e->names));
	now = mono_ns();
	r->early_st.ns_sum += now - e->found_ns;
	if (now - e->found_ns > r->early_st.ns_max)
		r->early_st.ns_max = now - e->found_ns;
	pr_debug("JVM %u: Java walk in BPF before its agent, %u code heaps, %.1f ms after it was "
		 "found (%llu KiB of its memory read)",
		 e->pid, e->w.n_heaps, (now - e->found_ns) / 1e6,
		 (unsigned long long)(st.bytes >> 10));
}

void rec_early_found(struct rec *r, const struct jvm_info *jvm)
{
	struct rec_early *e;
	__u64 start, now = mono_ns();
	size_t i;

	if (!r->ks || !r->o->java_walk || early_of(r, jvm->pid) || agent_in_bpf(r, jvm->pid))
		return;
	if (proc_start_ticks(jvm->pid, &start))
		return;
	for (i = 0; i < r->nearly && r->early[i].pid; i++)
		;
	if (i == JP_MAX_JVMS)
		return;
	e = &r->early[i];
	*e = (struct rec_early){.pid = jvm->pid, .start_ticks = start, .found_ns = now};
	if (i == r->nearly)
		r->nearly++;
	try_publish(r, e, now);
}

void rec_early_tick(struct rec *r, __u64 now)
{
	for (size_t i = 0; i < r->nearly; i++) {
		struct rec_early *e = &r->early[i];

		if (e->pid && !e->done && now >= e->next_ns)
			try_publish(r, e, now);
	}
}

/*
 * The agent's layout for pid (NULL: it published none) against the one read from outside:
 * false when they differ (the early walk is off for that JVM: the join drops what it held)
 */
bool rec_early_check(struct rec *r, __u32 pid, const struct jp_jwalk *agent_w)
{
	struct rec_early *e = early_of(r, pid);

	if (!e || !e->published)
		return true;
	if (!agent_w) {
		r->early_st.no_agent_layout++;
		return true;
	}
	if (!memcmp(&e->w, agent_w, sizeof(*agent_w))) {
		r->early_st.agree++;
		return true;
	}
	r->early_st.differ++;
	pr_info("JVM %u: the layout read from outside differs from its agent's: its walk before "
		"the agent is off, the samples walked so far dropped",
		pid);
	join__early_off(r->join, pid);
	return false;
}

bool rec_early_published(struct rec *r, __u32 pid)
{
	const struct rec_early *e = early_of(r, pid);

	return e && e->published;
}

void rec_early_drop(struct rec *r, __u32 pid)
{
	struct rec_early *e = early_of(r, pid);

	if (!e)
		return;
	if (e->published && r->ks && !agent_in_bpf(r, pid))
		(void)kernel_session__del_jvm(r->ks, pid);
	memset(e, 0, sizeof(*e));
}

void rec_early_report(const struct rec *r, FILE *f, bool verbose)
{
	const __typeof__(r->early_st) *s = &r->early_st;

	if (!verbose || !(s->published + s->failed))
		return;
	fprintf(f,
		"jprof: Java walk before the agent: %llu JVMs (layout read from outside in %.1f ms "
		"on average, %.1f ms at most, %llu KiB read in %llu reads, %llu retries of JVMs "
		"still starting), %llu failed%s%s; against the agent's layout: %llu the same, %llu "
		"different, %llu agents without one\n",
		(unsigned long long)s->published,
		s->published ? s->ns_sum / 1e6 / (double)s->published : 0.0, s->ns_max / 1e6,
		(unsigned long long)(s->read_bytes >> 10), (unsigned long long)s->reads,
		(unsigned long long)s->retries, (unsigned long long)s->failed,
		s->failed ? ", the last: " : "", s->failed ? strerror(-s->last_err) : "",
		(unsigned long long)s->agree, (unsigned long long)s->differ,
		(unsigned long long)s->no_agent_layout);
}

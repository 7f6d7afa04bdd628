// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * session_agg.c: the user side of the in-kernel counts (--aggregate, jprof.h): learns each
 * stack's first full record (agg_table), drains agg_counts' closed slots every poll round
 * and all of them at the end, and replays each count as one record of its stack that stands
 * for count samples (JP_SF_COUNTED) through the session's sample callback: the same join
 * and model path as a full record, taken once.
 */
#include "kernel/session_int.h"
#include "kernel/agg_table.h"

/* the records kept: twice BPF's marks (a mark it forgets makes its stack come again) */
#define KS_AGG_RECORDS (2 * JP_AGG_SENT_MAX)
#define KS_AGG_BYTES   (16u << 20)
/* a retired record stays findable this long: counts made before BPF forgot it come */
#define KS_AGG_REAP_NS (1000ull * 1000 * 1000)
/* a count whose stack is not known yet (its record still in the ring) waits this long */
#define KS_AGG_WAIT_SLOTS 10
/*
 * agg_counts: room for 4 slots of every CPU's samples (3 open at once), at least
 * JP_AGG_COUNTS_MAX, at most this. Reading it costs a walk of all its buckets (a 16384
 * map at every poll round: 0.5 ms of jprof's CPU a second), so no larger than that.
 */
#define KS_AGG_COUNTS_CAP (1u << 18)

struct ks_agg {
	struct agg_table *tab;
	struct jp_agg_key *keys, *dkeys;
	struct jp_agg_val *vals;
	__u32 cap;	 /* agg_counts' max_entries */
	__u64 last_slot; /* the slot of the last drain */
	__u64 phase_ns;	 /* slot k begins at phase_ns + k * JP_AGG_SLOT_NS (BPF's too) */
	bool fill_asked; /* BPF asked for a drain (JP_EV_AGG_FILL) */
	struct ks_agg_stats st;
};

/* a test's smaller size from the environment variable name, in [1, max]; else dflt */
static size_t test_size(const char *name, size_t max, size_t dflt)
{
	const char *env = getenv(name);
	unsigned long v;
	char *end;

	if (!env || !*env)
		return dflt;
	errno = 0;
	v = strtoul(env, &end, 10);
	return !*end && !errno && v >= 1 && v <= max ? v : dflt;
}

/* JPROF_TEST_AGG_MAX: agg_counts' size for tests (the map-full fallback) */
static __u32 counts_size(const struct kernel_opts *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	__u64 want = (__u64)(ncpu > 0 ? ncpu : 1) * (o->freq_hz ? o->freq_hz : 99) * 4 / 10;

	if (test_size("JPROF_TEST_AGG_MAX", KS_AGG_COUNTS_CAP, 0))
		return (__u32)test_size("JPROF_TEST_AGG_MAX", KS_AGG_COUNTS_CAP, 0);
	if (want < JP_AGG_COUNTS_MAX)
		want = JP_AGG_COUNTS_MAX;
	return want > KS_AGG_COUNTS_CAP ? KS_AGG_COUNTS_CAP : (__u32)want;
}

int ks_agg_configure(struct kernel_session *s, const struct kernel_opts *o)
{
	struct cpu_bpf *c = s->cpu;
	__u32 n = o->aggregate && (o->events & KS_EV_CPU) ? counts_size(o) : 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	size_t retired;
	int err;

	c->rodata->aggregate = n > 0;
	c->rodata->agg_fill_at = n - n / 4;
	/* both are preallocated: no room when not aggregating */
	err = bpf_map__set_max_entries(c->maps.agg_counts, n ? n : 1);
	if (!err)
		err = bpf_map__set_max_entries(c->maps.agg_sent, n ? JP_AGG_SENT_MAX : 1);
	if (err || !n)
		return err;
	s->agg = calloc(1, sizeof(*s->agg));
	if (!s->agg)
		return -ENOMEM;
	s->agg->cap = n;
	/*
	 * Records retired (or not kept) stay KS_AGG_REAP_NS for the counts BPF made before it
	 * forgot them: room for a new stack at every sample of that second, at most
	 * KS_AGG_RECORDS. JPROF_TEST_AGG_RECORDS: fewer live records, for tests (stacks let go)
	 */
	retired = (size_t)(ncpu > 0 ? ncpu : 1) * (o->freq_hz ? o->freq_hz : 99) + 64;
	s->agg->tab =
		agg_table__new(test_size("JPROF_TEST_AGG_RECORDS", KS_AGG_RECORDS, KS_AGG_RECORDS),
			       KS_AGG_BYTES, retired < KS_AGG_RECORDS ? retired : KS_AGG_RECORDS);
	s->agg->keys = calloc(n, sizeof(*s->agg->keys));
	s->agg->dkeys = calloc(n, sizeof(*s->agg->dkeys));
	s->agg->vals = calloc(n, sizeof(*s->agg->vals));
	if (!s->agg->tab || !s->agg->keys || !s->agg->dkeys || !s->agg->vals)
		return -ENOMEM;
	return 0;
}

void ks_agg_free(struct ks_agg *a)
{
	if (!a)
		return;
	agg_table__free(a->tab);
	free(a->keys);
	free(a->dkeys);
	free(a->vals);
	free(a);
}

/* BPF forgets hash's mark: its stack's next sample goes out whole again */
static void forget_mark(struct kernel_session *s, __u64 hash)
{
	(void)bpf_map__delete_elem(s->cpu->maps.agg_sent, &hash, sizeof(hash), 0);
}

void ks_agg_learn(struct kernel_session *s, const struct jp_sample *smp, const __u64 *kstack,
		  const __u64 *ustack)
{
	struct ks_agg *a = s->agg;
	__u64 now = mono_ns(), out[1024];
	size_t n;
	int err;

	err = agg_table__put(a->tab, smp->stack_hash, smp, kstack, ustack, now, false);
	if (err == -ENOSPC) {
		/* the least used quarter goes: BPF forgets them first, they are freed later */
		n = agg_table__retire(a->tab, now, out, sizeof(out) / sizeof(out[0]));
		for (size_t i = 0; i < n; i++)
			forget_mark(s, out[i]);
		a->st.retired += n;
		err = agg_table__put(a->tab, smp->stack_hash, smp, kstack, ustack, now, false);
	}
	if (err == -ENOSPC) {
		/*
		 * No room still (bytes, or what was retired is not freed yet): BPF forgets it
		 * (its next sample goes out whole), kept retired for the counts made since
		 */
		forget_mark(s, smp->stack_hash);
		a->st.not_kept++;
		(void)agg_table__put(a->tab, smp->stack_hash, smp, kstack, ustack, now, true);
		return;
	}
	if (err) {
		forget_mark(s, smp->stack_hash);
		a->st.not_kept++;
		return;
	}
	a->st.learnt++;
}

void ks_agg_fill(struct kernel_session *s)
{
	s->agg->fill_asked = true;
	s->agg->st.fill_asks++;
}

/*
 * One count as one record of its stack standing for count samples (JP_SF_COUNTED): their
 * weights summed, their time the slot's first sample's. The join adds it at once.
 */
static int replay(struct kernel_session *s, const struct jp_sample *rec, const struct jp_agg_key *k,
		  const struct jp_agg_val *v)
{
	const __u64 *frames = (const __u64 *)(rec + 1);
	struct jp_sample h = *rec;
	int err;

	h.pid = k->pid;
	h.tid = k->tid;
	h.time_ns = v->time_ns;
	h.weight = v->weight_ns;
	h.count = v->count;
	h.flags |= JP_SF_COUNTED;
	err = s->fn(s->ctx, &h, frames, frames + h.kstack_len);
	if (!err)
		s->agg->st.replayed += v->count;
	return err;
}

int ks_agg_drain(struct kernel_session *s, bool all)
{
	struct ks_agg *a = s->agg;
	int fd, err = 0;
	__u64 now, cur;
	__u32 n = 0, nd = 0, batch = 0, cnt;
	bool first = true, asked;

	if (!a)
		return 0;
	now = mono_ns();
	cur = (now - a->phase_ns) / JP_AGG_SLOT_NS;
	/* a closed slot to take: once a slot, unless BPF asked or this is the end */
	if (!all && !a->fill_asked && cur == a->last_slot)
		return 0;
	asked = a->fill_asked && cur == a->last_slot;
	a->last_slot = cur;
	a->fill_asked = false;
	a->st.drains++;
	fd = bpf_map__fd(s->cpu->maps.agg_counts);
	while (n < a->cap) {
		cnt = a->cap - n;
		err = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, a->keys + n,
					   a->vals + n, &cnt, NULL);
		first = false;
		n += cnt;
		if (err)
			break;
	}
	/* -ENOENT: the end; any other error: what was read is taken, the rest next time */
	if (err && err != -ENOENT)
		a->st.read_errors++;
	for (__u32 i = 0; i < n; i++) {
		struct jp_agg_key *k = &a->keys[i];

		/* a slot two after it ended: no program still counts into it */
		if (!all && (__u64)k->slot + 2 > cur)
			continue;
		if (!agg_table__get(a->tab, k->hash, now) && !all &&
		    (__u64)k->slot + KS_AGG_WAIT_SLOTS > cur)
			continue; /* its stack's record may still be in the ring */
		a->dkeys[nd] = *k;
		a->vals[nd] = a->vals[i];
		nd++;
	}
	/*
	 * BPF's trigger counts from what is left, and may ask again: after a drain that took
	 * something, or in the next slot (a map full of open slots' counts asks once a slot)
	 */
	s->cpu->bss->agg_added = n - nd;
	if (nd || !asked)
		s->cpu->bss->agg_asked = 0;
	/* a count is replayed only once it is out of the map: never twice */
	cnt = nd;
	if (nd && bpf_map_delete_batch(fd, a->dkeys, &cnt, NULL)) {
		for (__u32 i = cnt; i < nd; i++) {
			if (bpf_map_delete_elem(fd, &a->dkeys[i])) {
				a->vals[i].count = 0;
				a->st.read_errors++;
			}
		}
	}
	err = 0;
	for (__u32 i = 0; i < nd && !err; i++) {
		const struct jp_sample *rec;

		if (!a->vals[i].count)
			continue;
		rec = agg_table__get(a->tab, a->dkeys[i].hash, now);
		a->st.counts++;
		if (!rec) {
			a->st.lost_unknown += a->vals[i].count;
			continue;
		}
		err = replay(s, rec, &a->dkeys[i], &a->vals[i]);
	}
	agg_table__reap(a->tab, now > KS_AGG_REAP_NS ? now - KS_AGG_REAP_NS : 0);
	return err;
}

void ks_agg_clock(struct kernel_session *s, __u64 mono0_ns)
{
	if (!s->agg)
		return;
	/*
	 * A count made under the old phase is at most a slot off the new numbering: it is
	 * taken two slots after its own ends either way (the daemon's next intervals keep the
	 * phase, their starts are whole seconds apart)
	 */
	s->agg->phase_ns = mono0_ns % JP_AGG_SLOT_NS;
	s->cpu->bss->agg_slot_phase_ns = s->agg->phase_ns;
}

void ks_agg_stats(const struct kernel_session *s, struct ks_agg_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!s->agg)
		return;
	*ret = s->agg->st;
	ret->on = true;
	ret->records = agg_table__count(s->agg->tab);
	ret->record_bytes = agg_table__bytes(s->agg->tab);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agg.bpf.h: in-kernel aggregation of cpu samples (--aggregate, see jprof.h): a sample whose
 * stack was sent before costs a hash and a counter instead of a record through the ring.
 * Included by maps.bpf.h; its maps are created once (cpu skeleton) and shared by name.
 */
#ifndef JPROF_AGG_BPF_H
#define JPROF_AGG_BPF_H

/* 1: count what can be counted (rodata) */
const volatile __u8 aggregate = 0;
/* entries added to agg_counts at which BPF asks user space to drain (3/4 of the map) */
const volatile __u32 agg_fill_at = JP_AGG_COUNTS_MAX * 3 / 4;
/* entries added to agg_counts since user space last set it (after a drain: those left) */
__u64 agg_added = 0;
/* 1: BPF asked for a drain (JP_EV_AGG_FILL); user space clears it when it drains */
__u32 agg_asked = 0;
/*
 * slot k of agg_counts is [phase + k * JP_AGG_SLOT_NS, + JP_AGG_SLOT_NS): user space sets
 * the phase so that its slots are the model's (they begin at the recording's start)
 */
__u64 agg_slot_phase_ns = 0;

/* hash -> 1: the full record of this stack went out (per thread: the hash has the tid) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, JP_AGG_SENT_MAX);
	__type(key, __u64);
	__type(value, __u8);
} agg_sent SEC(".maps");

/* {hash, pid, tid, slot} -> how many samples, their weight; bounded, drained by user space */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, JP_AGG_COUNTS_MAX);
	__type(key, struct jp_agg_key);
	__type(value, struct jp_agg_val);
} agg_counts SEC(".maps");

static __always_inline __u64 agg_mix(__u64 h, __u64 v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

/*
 * The sample's identity: all a record says but its time, weight, cpu and signal result
 * (none here: counted samples are never signalled). The frames are read as the words they
 * are in the scratch record: kernel, user, then the Java walk's two words a frame.
 */
static __always_inline __u64 agg_hash(struct jp_scratch *sc)
{
	struct jp_sample *s = &sc->s;
	__u64 *w = sc->frames;
	__u64 *c = (__u64 *)s->comm, *pc = (__u64 *)s->pcomm;
	__u32 n = s->kstack_len + s->ustack_len + 2 * (__u32)s->jstack_len;
	__u64 h = 0x6a09e667f3bcc908ull;

	h = agg_mix(h, ((__u64)s->pid << 32) | s->tid);
	h = agg_mix(h, ((__u64)s->kind << 32) | s->flags);
	h = agg_mix(h, ((__u64)s->kstack_len << 32) | s->ustack_len);
	h = agg_mix(h, ((__u64)(__u32)s->kstack_err << 32) | (__u32)s->ustack_err);
	h = agg_mix(h, ((__u64)s->jstack_len << 32) | (__u16)s->jstack_err);
	h = agg_mix(h, ((__u64)(__u32)s->syscall_nr << 32));
	h = agg_mix(h, s->cgroup_id);
	h = agg_mix(h, c[0]);
	h = agg_mix(h, c[1]);
	h = agg_mix(h, pc[0]);
	h = agg_mix(h, pc[1]);
	/* the scratch record has room for JP_AGG_WORDS words after the header */
	for (__u32 i = 0; i < JP_AGG_WORDS; i++) {
		if (i >= n)
			break;
		h = agg_mix(h, w[i]);
	}
	return h ? h : 1; /* 0 says "no hash" */
}

/* tells user space to drain agg_counts: a header alone, waking it */
static __always_inline void agg_ask_drain(__u64 now)
{
	struct jp_sample *f;

	/* once until user space drains (racing CPUs may both ask: harmless) */
	if (agg_asked)
		return;
	agg_asked = 1;
	f = bpf_ringbuf_reserve(&events, sizeof(*f), 0);
	if (!f)
		return; /* the ring is full: user space is reading it, and drains after */
	__builtin_memset(f, 0, sizeof(*f));
	f->time_ns = now;
	f->kind = JP_EV_AGG_FILL;
	f->syscall_nr = -1;
	bpf_ringbuf_submit(f, BPF_RB_FORCE_WAKEUP);
}

/*
 * A cpu sample that needs nothing from the agent: counted (true: no record goes out), or
 * false: it goes out as a full record, with s->stack_hash set when it is its stack's first
 * (agg_unsent undoes the mark if the ring refuses it). A full agg_counts sends the sample
 * whole (counted), never drops it.
 */
static __always_inline bool agg_count(struct jp_scratch *sc)
{
	struct jp_sample *s = &sc->s;
	struct jp_agg_key k = {};
	struct jp_agg_val *v, nv;
	__u8 one = 1;
	__u64 h;

	h = agg_hash(sc);
	k.hash = h;
	k.pid = s->pid;
	k.tid = s->tid;
	k.slot = (s->time_ns - agg_slot_phase_ns) / JP_AGG_SLOT_NS;
	/* counted already in this slot: it was sent (one lookup, the common case) */
	v = bpf_map_lookup_elem(&agg_counts, &k);
	if (v) {
		/* one thread's samples come one at a time; user space takes only closed slots */
		v->count++;
		v->weight_ns += s->weight;
		stat_inc(JP_STAT_AGG_COUNTED);
		return true;
	}
	if (!bpf_map_lookup_elem(&agg_sent, &h)) {
		/* the hash has the tid: no other CPU marks it meanwhile */
		if (!bpf_map_update_elem(&agg_sent, &h, &one, BPF_ANY)) {
			s->stack_hash = h;
			stat_inc(JP_STAT_AGG_SENT);
		}
		return false;
	}
	nv.count = 1;
	nv.weight_ns = s->weight;
	nv.time_ns = s->time_ns;
	if (bpf_map_update_elem(&agg_counts, &k, &nv, BPF_NOEXIST)) {
		stat_inc(JP_STAT_AGG_FULL);
		agg_ask_drain(s->time_ns);
		return false;
	}
	__sync_fetch_and_add(&agg_added, 1);
	if (agg_added >= agg_fill_at)
		agg_ask_drain(s->time_ns);
	stat_inc(JP_STAT_AGG_COUNTED);
	return true;
}

/* the ring refused the first record of s's stack: the next sample sends it again */
static __always_inline void agg_unsent(struct jp_sample *s)
{
	if (!s->stack_hash)
		return;
	bpf_map_delete_elem(&agg_sent, &s->stack_hash);
	stat_inc(JP_STAT_AGG_UNMARK);
}

/*
 * true when s may be counted: a cpu sample (not a thread's exit tail), not signalled and
 * not waiting on an earlier request (JP_SF_FOLLOWS, a re-ask), whose stack is complete
 * without the agent: BPF named its Java frames (JP_SF_JWALK), it has none (JP_SF_NO_JAVA,
 * JP_SF_NATIVE_THREAD), or its process is no JVM jprof knows. Shadow and check modes
 * compare walks sample by sample: never counted.
 */
static __always_inline bool agg_wanted(struct jp_sample *s, __u32 tgid)
{
	struct jp_jvm *jvm;

	if (!aggregate || s->kind != JP_EV_CPU || java_walk == JP_JWALK_SHADOW ||
	    java_walk == JP_JWALK_CHECK)
		return false;
	if (s->flags & (JP_SF_SIGNALED | JP_SF_FOLLOWS | JP_SF_NATIVE_RECHECK | JP_SF_CPU_TAIL))
		return false;
	if (s->flags & (JP_SF_JWALK | JP_SF_NO_JAVA | JP_SF_NATIVE_THREAD)) {
		/* a JVM walked before its agent is in: the join holds those (early.c) */
		jvm = bpf_map_lookup_elem(&jvms, &tgid);
		return jvm && jvm->signo;
	}
	return !bpf_map_lookup_elem(&jvms, &tgid);
}

#endif /* JPROF_AGG_BPF_H */

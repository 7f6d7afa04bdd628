// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * spread.c: each thread's CPU time spread over its stacks by their samples.
 *
 * The join weighs a CPU sample by the CPU time its thread ran since its previous sample
 * (the scheduler's runtime, read in BPF). A thread's total is then exact, but the time
 * between two samples is not known to belong to the second one's stack: when a program's
 * own period is near the timer's, the first sample after a long unsampled stretch falls in
 * the same code every time and takes that stretch (tests/apps/Accuracy.java: a 25% duty thread
 * read 12.4 : 1.4 for a 2 : 1 split). Here each thread's exact total is shared out over
 * its stacks in proportion to their samples: per-thread totals stay exact, and within a
 * thread every sample weighs the same, as counting does. Two kinds of row keep their time:
 * rows with CPU time but no sample (a thread's time after its last sample when it was
 * never sampled) and rows with samples but no CPU time (samples whose time the join passed
 * on to the thread's next sample with a Java stack).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "spread.h"

struct lab {
	__u64 ns, samples; /* of the label set's rows that share */
	__u32 thread;	   /* index into threads */
};

struct thread {
	__u32 pid, tid;
	__u64 ns, samples; /* the thread's rows that share */
	__u64 done;	   /* samples of those rows spread so far */
};

struct key {
	__u32 pid, tid, grp,
		lab; /* grp: a folded set's id (its processes' time is its own), else 0 */
};

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->grp != y->grp)
		return x->grp < y->grp ? -1 : 1;
	return 0;
}

/* the row shares its thread's time: it has samples and time of its own */
static bool shares(const struct jp_sample_row *r)
{
	return r->values[JP_VAL_CPU_SAMPLES] && r->values[JP_VAL_CPU_NS];
}

int model__spread_cpu(struct model *m)
{
	struct model_counts c;
	struct jp_sample_row buf;
	const struct jp_sample_row *r;
	struct lab *lab = NULL;
	struct thread *th = NULL;
	struct key *keys = NULL;
	size_t nkeys = 0, nth = 0;
	int err = -ENOMEM;

	if (!model__total(m, JP_VAL_CPU_NS) || !model__total(m, JP_VAL_CPU_SAMPLES))
		return 0;
	model__counts(m, &c);
	lab = calloc(c.labels + 1, sizeof(*lab));
	keys = calloc(c.labels + 1, sizeof(*keys));
	if (!lab || !keys)
		goto out;
	for (size_t i = 0; (r = model__row(m, i, &buf)); i++) {
		if (!shares(r) || r->labels > c.labels)
			continue;
		lab[r->labels].ns += r->values[JP_VAL_CPU_NS];
		lab[r->labels].samples += r->values[JP_VAL_CPU_SAMPLES];
	}
	for (jp_id id = 1; id <= c.labels; id++) {
		const struct jp_labels *l = model__get_labels(m, id);

		if (lab[id].samples && l)
			keys[nkeys++] = (struct key){l->pid, l->tid, l->nfolded ? id : 0, id};
	}
	qsort(keys, nkeys, sizeof(*keys), key_cmp);
	th = calloc(nkeys ? nkeys : 1, sizeof(*th));
	if (!th)
		goto out;
	for (size_t k = 0; k < nkeys; k++) {
		struct lab *lb = &lab[keys[k].lab];

		if (!nth || key_cmp(&keys[k - 1], &keys[k]))
			th[nth++] = (struct thread){.pid = keys[k].pid, .tid = keys[k].tid};
		lb->thread = (__u32)(nth - 1);
		th[nth - 1].ns += lb->ns;
		th[nth - 1].samples += lb->samples;
	}
	/*
	 * A row's share is the thread's time at its samples' end in the thread's order, less
	 * the time at their start: the shares add up to the thread's time to the nanosecond.
	 */
	for (size_t i = 0; (r = model__row(m, i, &buf)); i++) {
		struct thread *t;
		unsigned __int128 a, b;

		if (!shares(r) || r->labels > c.labels || !lab[r->labels].samples)
			continue;
		t = &th[lab[r->labels].thread];
		a = (unsigned __int128)t->ns * t->done / t->samples;
		t->done += r->values[JP_VAL_CPU_SAMPLES];
		b = (unsigned __int128)t->ns * t->done / t->samples;
		err = model__set(m, i, JP_VAL_CPU_NS, (__u64)(b - a));
		if (err)
			goto out;
	}
	err = 0;
out:
	free(th);
	free(keys);
	free(lab);
	return err;
}

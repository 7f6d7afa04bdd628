// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memo.c: a JVM's CPU samples that BPF walked, by their raw frames, to the model stack
 * they were named as (struct stack_memo_ent in join_int.h says when an entry holds).
 */
#include <sys/mman.h>

#include "join/join_int.h"
#include "util/hashkey.h"

_Static_assert(sizeof(struct stack_memo_ent) * 2 == 64, "a memo set is a cache line");

/* the memo: page-aligned (a set in one cache line), its zero pages touched as it fills */
struct stack_memo_ent *jn_memo_new(void)
{
	void *p = mmap(NULL, STACK_MEMO_SLOTS * sizeof(struct stack_memo_ent),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void jn_memo_free(struct stack_memo_ent *m)
{
	if (m)
		munmap(m, STACK_MEMO_SLOTS * sizeof(*m));
}

static inline __u64 rotl(__u64 x, int r)
{
	return x << r | x >> (64 - r);
}

/*
 * The frames (kernel, user, then BPF's Java frames, which follow the user stack) in four
 * independent lanes, so that the multiplications overlap: about a third of a ns a word.
 * Seeded with the process's secret key, the lengths, the pid and the JVM's serial; mixed
 * through the key at the end.
 */
static void lanes(__u64 l[4], const __u64 *w, size_t n)
{
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		for (int k = 0; k < 4; k++)
			l[k] = rotl((l[k] ^ w[i + k]) * 0x9e3779b97f4a7c15ull, 29);
	for (; i < n; i++)
		l[i & 3] = rotl((l[i & 3] ^ w[i]) * 0xc2b2ae3d27d4eb4full, 31);
}

static void memo_hash(const struct jp_sample *s, const __u64 *kstack, const __u64 *ustack,
		      __u32 serial, struct memo_key *k)
{
	__u64 key = hash_key();
	__u64 l[4] = {key ^ ((__u64)s->kstack_len << 32 | s->ustack_len),
		      rotl(key, 16) ^ ((__u64)s->jstack_len << 32 | s->pid), rotl(key, 32) ^ serial,
		      rotl(key, 48)};

	lanes(l, kstack, s->kstack_len);
	l[0] = rotl(l[0], 7) ^ l[3]; /* the kernel's part apart from the user's */
	lanes(l, ustack,
	      s->ustack_len + (size_t)s->jstack_len * (sizeof(struct jp_jframe) / sizeof(__u64)));
	k->h1 = hash_keyed(l[0] ^ rotl(l[1], 21) ^ rotl(l[2], 42) ^ rotl(l[3], 11));
	k->h2 = (__u32)hash_keyed(l[2] ^ rotl(l[3], 32) ^ rotl(l[0], 13) ^ rotl(l[1], 50) ^ k->h1);
}

/* the set of k: two entries, the one found or put last first */
static struct stack_memo_ent *memo_set(struct join *j, const struct memo_key *k)
{
	return &j->memo[(k->h1 & (STACK_MEMO_SLOTS / 2 - 1)) * 2];
}

jp_id jn_memo_get(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		  const __u64 *ustack, struct jvm_ent *e, struct memo_key *k)
{
	struct stack_memo_ent *m, t;
	int w;

	if (!j->memo || !e->a)
		return 0;
	memo_hash(s, kstack, ustack, e->serial, k);
	k->lc_gen = jn_lc_gen(j);
	k->code_gen = jvm_agent__code_gen(e->a);
	k->jw_gen = (__u32)jwalk__learned(e->jw);
	m = memo_set(j, k);
	j->st.memo_tries++;
	for (w = 0; w < 2 && (m[w].h1 != k->h1 || m[w].h2 != k->h2); w++)
		;
	if (w == 2 || !m[w].stack || m[w].lc_gen != k->lc_gen || m[w].code_gen != k->code_gen ||
	    m[w].jw_gen != k->jw_gen)
		return 0;
	if (w) { /* the second is first now */
		t = m[0];
		m[0] = m[1];
		m[1] = t;
	}
	j->java_from = m[0].java_from;
	j->st.memo_hits++;
	e->memo_named++;
	return m[0].stack;
}

void jn_memo_put(struct join *j, struct jvm_ent *e, const struct memo_key *k)
{
	struct stack_memo_ent *m;

	if (!j->memo || !e->a || !j->committed || j->memo_off)
		return;
	m = memo_set(j, k);
	/* the first moves down, unless it is this key's own (stale) entry */
	if (m[0].h1 != k->h1 || m[0].h2 != k->h2)
		m[1] = m[0];
	m[0] = (struct stack_memo_ent){
		.h1 = k->h1,
		.h2 = k->h2,
		.lc_gen = k->lc_gen,
		.code_gen = k->code_gen,
		.jw_gen = k->jw_gen,
		.stack = j->committed,
		.java_from = (__u32)j->java_from,
	};
}

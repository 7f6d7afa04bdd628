/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_names.c: frame names from the agent's dictionary: methods, lines, compiled code,
 * threads, classes, and hidden classes' names without their address.
 * Part of the agent channel reader (agent_int.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "jvm/agent_int.h"
#include "log.h"
#include "util/procfs.h"
#include "ring.h"
#include "util/hashkey.h"
#include "util/safe_open.h"

/*
 * A hidden class's name ends in its address in this JVM ("LambdaForm$MH.0x00007f3a9c2f1400",
 * "Foo$$Lambda$14.0x0000000800c01234", JDK 17 also numbers lambdas): the same code gets
 * another name in every JVM and every run, and a host's profile splits it as many ways.
 * Both are dropped ("LambdaForm$MH", "Foo$$Lambda"); the frame below names the lambda's
 * body. Returns the new length of s, shortened in place.
 */
size_t jvm_agent__hidden_class_norm(char *s, size_t n)
{
	size_t i = n, k;

	while (i > 0 && isxdigit((unsigned char)s[i - 1]))
		i--;
	if (i >= 3 && i < n && s[i - 1] == 'x' && s[i - 2] == '0' && s[i - 3] == '.')
		n = i - 3;
	/* "$$Lambda$<digits>" at the end: the digits and their '$' go */
	for (k = n; k > 0 && isdigit((unsigned char)s[k - 1]); k--)
		;
	if (k < n && k >= 9 && !memcmp(s + k - 9, "$$Lambda$", 9))
		n = k - 1;
	s[n] = '\0';
	return n;
}
/* names ---------------------------------------------------------------------- */

const char *jvm_agent__method_name(struct jvm_agent *a, __u64 method_id, unsigned int flags)
{
	struct jm_method *m = ja_method_find(a, method_id);
	struct jm_method_x *x;
	char **slot;

	if (!m) {
		ja_lookup_refresh(a);
		m = ja_method_find(a, method_id);
		if (!m)
			return NULL;
	}
	x = ja_method_x(a, m);
	if (!x)
		return NULL;
	slot = flags & JVM_NAME_DOTTED ? &x->dotted : &x->slash;
	if (!*slot) {
		const char *cls = a->mcls[m->cls].cls;
		size_t n = strlen(cls) + strlen(x->name) + 2;
		char *s;

		if (ja_charge(a, n))
			return NULL;
		s = malloc(n);
		if (!s) {
			ja_uncharge(a, n);
			return NULL;
		}
		snprintf(s, n, "%s.%s", cls, x->name);
		for (char *p = s; (flags & JVM_NAME_DOTTED) && *p; p++) {
			if (*p == '/')
				*p = '.';
		}
		*slot = s;
	}
	return *slot;
}

__u64 jvm_agent__dict_refresh(struct jvm_agent *a)
{
	ja_dict_refresh(a);
	return a->dict_off;
}

__u64 jvm_agent__dict_read(const struct jvm_agent *a)
{
	return a->dict_off;
}

__u32 jvm_agent__code_gen(const struct jvm_agent *a)
{
	return a->blob_gen;
}

/* the set of key in the lookups' cache (allocated and charged at the first call); NULL: none */
static struct jm_pcc_set *pcc_set(struct jvm_agent *a, __u64 key)
{
	if (!a->pcc_sets) {
		if (a->pcc_failed || ja_charge(a, PCC_BYTES))
			return NULL;
		/* on cache lines: a set is read whole in one */
		a->pcc_sets = aligned_alloc(64, PCC_BYTES);
		if (!a->pcc_sets) {
			ja_uncharge(a, PCC_BYTES);
			a->pcc_failed = true; /* not tried again */
			return NULL;
		}
		memset(a->pcc_sets, 0, PCC_BYTES);
		a->pcc = (struct jm_pcc *)(a->pcc_sets + PCC_SETS);
	}
	return &a->pcc_sets[hash_keyed(key) % PCC_SETS];
}

/* the chain of pc in b (top: the interrupted pc), from b's inline table */
static int pc_chain_table(struct jvm_agent *a, struct jm_blob *b, __u64 pc, bool top,
			  const __u64 **ret, const __s32 **ret_bci)
{
	static const __s32 no_bci = -1;

	if (ja_blob_pcs(a, b) && b->n_pcs) {
		/* the interrupted pc: the first recorded pc after it (HotSpot: near(pc + 1)) */
		size_t lo = ja_pc_lower_bound(b, top ? pc + 1 : pc);

		if (lo < b->n_pcs && b->pcs[lo].n) {
			*ret = &b->chain[b->pcs[lo].first];
			*ret_bci = &b->chain_bci[b->pcs[lo].first];
			return (int)b->pcs[lo].n;
		}
	}
	*ret = &b->method_id;
	*ret_bci = &no_bci;
	return 1;
}

/* the entry of way w of set s */
static struct jm_pcc *pcc_way(const struct jvm_agent *a, const struct jm_pcc_set *s,
			      unsigned int w)
{
	return &a->pcc[(size_t)(s - a->pcc_sets) * 2 + w];
}

/* way w of set s found: its chain */
static int pcc_hit(struct jvm_agent *a, struct jm_pcc_set *s, unsigned int w, const __u64 **ret,
		   const __s32 **ret_bci)
{
	const struct jm_pcc *e = pcc_way(a, s, w);

	s->mru = w;
	a->pcc_hits++;
	*ret = e->chain;
	*ret_bci = e->bci;
	return (int)e->n;
}

int jvm_agent__pc_chain(struct jvm_agent *a, __u64 pc, bool top, const __u64 **ret,
			const __s32 **ret_bci)
{
	__u64 key = pc << 1 | top;
	struct jm_pcc_set *set = pcc_set(a, key);
	struct jm_pcc *e;
	struct jm_blob *b;
	unsigned int w;
	int n;

	/* the table unchanged since the entry's blob was checked: it is the pc's still */
	for (w = 0; set && w < 2; w++)
		if (set->key[w] == key && set->gen[w] == a->blob_gen)
			return pcc_hit(a, set, w, ret, ret_bci);
	b = ja_blob_find(a, pc);
	if (!b)
		return -ENOENT;
	if (!b->method_id)
		return -EINVAL;
	for (w = 0; set && w < 2; w++)
		if (set->key[w] == key && pcc_way(a, set, w)->off == b->off) {
			set->gen[w] = a->blob_gen;
			return pcc_hit(a, set, w, ret, ret_bci);
		}
	a->pcc_misses++;
	n = pc_chain_table(a, b, pc, top, ret, ret_bci);
	if (!set || n > PCC_CHAIN)
		return n;
	/* the way not used last: its entry replaced by this one */
	w = !set->mru;
	e = pcc_way(a, set, w);
	set->key[w] = key;
	set->gen[w] = a->blob_gen;
	set->mru = w;
	e->off = b->off;
	e->n = (__u32)n;
	memcpy(e->chain, *ret, (size_t)n * sizeof(e->chain[0]));
	memcpy(e->bci, *ret_bci, (size_t)n * sizeof(e->bci[0]));
	*ret = e->chain;
	*ret_bci = e->bci;
	return n;
}

const char *jvm_agent__code_name(struct jvm_agent *a, __u64 pc, bool *ret_java)
{
	struct jm_blob *b = ja_blob_find(a, pc);

	if (!b) {
		ja_lookup_refresh(a);
		b = ja_blob_find(a, pc);
	}
	*ret_java = b && b->method_id;
	if (!b)
		return NULL;
	return b->method_id ? jvm_agent__method_name(a, b->method_id, 0) : b->stub;
}

int jvm_agent__line(struct jvm_agent *a, __u64 method_id, __s32 bci)
{
	struct jm_method *m = ja_method_find(a, method_id);
	const struct jm_method_x *x;
	__u32 lo, hi;

	if (!m) {
		ja_lookup_refresh(a);
		m = ja_method_find(a, method_id);
	}
	if (!m || bci < 0 || !(x = ja_method_x(a, m)))
		return -1;
	/* the entry with the greatest start <= bci: the table is sorted by bci (ja_lines_load) */
	lo = 0;
	hi = x->n_lines;
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (x->lines[mid].bci <= bci)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? x->lines[lo - 1].line : -1;
}

const char *jvm_agent__thread_name(struct jvm_agent *a, __u32 tid)
{
	__u32 i;

	if (ja_kv_get(&a->thread_idx, tid, 0, &i)) {
		/*
		 * A thread the agent never names (a GC or compiler worker) is asked about at each
		 * of its samples: it looks at the file (fstat) once, and again only once a poll's
		 * refresh has read more of it and half a second has passed (in a JVM that compiles,
		 * the dictionary grows at every poll). A new thread looks at once.
		 */
		__u32 slot = (tid * 2654435761u) >> 24;
		bool again = a->tn_miss[slot].tid == tid;
		__u64 now;

		if (again && a->tn_miss[slot].seen == a->dict_seen_size)
			return NULL;
		now = mono_ns();
		if (again && now - a->tn_miss[slot].ns < THREAD_MISS_RELOOK_NS)
			return NULL;
		ja_lookup_refresh(a);
		if (ja_kv_get(&a->thread_idx, tid, 0, &i)) {
			a->tn_miss[slot].tid = tid;
			a->tn_miss[slot].seen = a->dict_seen_size;
			a->tn_miss[slot].ns = now;
			return NULL;
		}
	}
	return i < a->n_threads ? a->threads[i].name : NULL;
}

const char *jvm_agent__class_name(struct jvm_agent *a, __u64 class_id)
{
	__u32 i;

	if (ja_kv_get(&a->class_idx, class_id, 0, &i)) {
		ja_lookup_refresh(a);
		if (ja_kv_get(&a->class_idx, class_id, 0, &i))
			return NULL;
	}
	return i < a->n_classes ? a->classes[i].name : NULL;
}

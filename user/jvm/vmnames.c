// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vmnames.c: method names read from a JVM's memory (see vmnames.h). Everything read is the
 * JVM's to say: every length is bounded, every pointer only read through the reader (a bad
 * one fails the read), a name with bytes a class name cannot hold is refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "jvm/agent_ring.h"
#include "jvm/vmnames_int.h"

#define VN_SLOTS (2 * VMNAMES_MAX_METHODS)
#define VN_NONE	 UINT32_MAX

static int pid_read(void *ctx, __u64 addr, void *buf, size_t n)
{
	__u32 pid = (__u32)(uintptr_t)ctx;
	struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};

	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

struct vmnames *vmnames__new_reader(const struct jp_jwalk *w, const struct vms_names *n,
				    vmnames_read_fn rd, void *ctx)
{
	struct vmnames *v;

	if (!n->ok)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->tab = calloc(VN_SLOTS, sizeof(*v->tab));
	v->pool = malloc(VMNAMES_MAX_BYTES);
	v->chains = calloc(VN_CHAIN_SLOTS, sizeof(*v->chains));
	v->cpool = malloc(VN_CHAIN_POOL * sizeof(*v->cpool));
	if (!v->tab || !v->pool || !v->chains || !v->cpool) {
		vmnames__free(v);
		return NULL;
	}
	v->rd = rd;
	v->ctx = ctx;
	v->w = *w;
	v->l = *n;
	v->u5x = -1;
	v->cgen = 1;
	return v;
}

struct vmnames *vmnames__new(__u32 pid, const struct jp_jwalk *w, const struct vms_names *n)
{
	struct vmnames *v = vmnames__new_reader(w, n, pid_read, (void *)(uintptr_t)pid);

	if (v)
		v->pid = pid;
	return v;
}

void vmnames__free(struct vmnames *v)
{
	if (!v)
		return;
	free(v->tab);
	free(v->pool);
	free(v->chains);
	free(v->cpool);
	free(v);
}

int vn_read(struct vmnames *v, __u64 addr, void *buf, size_t n)
{
	v->st.reads++;
	v->st.bytes_read += n;
	return v->rd(v->ctx, addr, buf, n);
}

static int rd64(struct vmnames *v, __u64 addr, __u64 *ret)
{
	*ret = 0;
	return vn_read(v, addr, ret, sizeof(*ret)) ?: (*ret ? 0 : -EFAULT);
}

/* a Symbol's bytes into buf (cap > VMNAMES_MAX_SYMBOL): its length, or -errno */
static int symbol(struct vmnames *v, __u64 sym, char *buf, size_t cap)
{
	__u16 len = 0;

	if (vn_read(v, sym + v->l.sym_length, &len, sizeof(len)) || !len ||
	    len > VMNAMES_MAX_SYMBOL || len >= cap || vn_read(v, sym + v->l.sym_body, buf, len))
		return -EFAULT;
	for (__u16 i = 0; i < len; i++) /* modified UTF-8, no controls, no separators */
		if ((unsigned char)buf[i] < 0x20 || buf[i] == ';' || buf[i] == 0x7f)
			return -EPROTO;
	buf[len] = '\0';
	return len;
}

/* "pkg/Class.method" of Method* m into the pool: its offset, or VN_NONE */
static __u32 read_name(struct vmnames *v, __u64 m)
{
	char cls[VMNAMES_MAX_SYMBOL + 1], meth[VMNAMES_MAX_SYMBOL + 1];
	__u64 cm, cp, holder, ksym, msym;
	__u16 ni = 0;
	int lc, lm;

	if (rd64(v, m + v->w.method_const, &cm) || rd64(v, cm + v->l.cm_constants, &cp) ||
	    vn_read(v, cm + v->l.cm_name_index, &ni, sizeof(ni)) || !ni ||
	    rd64(v, cp + v->l.cp_holder, &holder) || rd64(v, holder + v->l.klass_name, &ksym) ||
	    rd64(v, cp + v->l.cp_size + (__u64)ni * 8, &msym))
		return VN_NONE;
	lc = symbol(v, ksym, cls, sizeof(cls));
	lm = lc > 0 ? symbol(v, msym, meth, sizeof(meth)) : -1;
	if (lc <= 0 || lm <= 0)
		return VN_NONE;
	/*
	 * a hidden class is "Foo$$Lambda+0x..." in the VM, "Foo$$Lambda.0x..." to JVMTI: named
	 * as the agent names it, without its address (jvm_agent__hidden_class_norm)
	 */
	for (int i = lc - 1; i > 0; i--) {
		if (cls[i] == '+' && cls[i + 1] == '0' && cls[i + 2] == 'x') {
			cls[i] = '.';
			break;
		}
		if (cls[i] == '/' || cls[i] == '$')
			break;
	}
	lc = (int)jvm_agent__hidden_class_norm(cls, (size_t)lc);
	if (lc <= 0)
		return VN_NONE;
	if (v->used + (size_t)lc + (size_t)lm + 2 > VMNAMES_MAX_BYTES) {
		v->st.over_budget++;
		return VN_NONE;
	}
	memcpy(v->pool + v->used, cls, (size_t)lc);
	v->pool[v->used + (size_t)lc] = '.';
	memcpy(v->pool + v->used + (size_t)lc + 1, meth, (size_t)lm + 1);
	v->used += (size_t)lc + (size_t)lm + 2;
	return (__u32)(v->used - ((size_t)lc + (size_t)lm + 2));
}

const char *vn_method_name(struct vmnames *v, __u64 m)
{
	__u64 h = m * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h ^ (h >> 29)) & (VN_SLOTS - 1);

	if (!m)
		return NULL;
	for (;; i = (i + 1) & (VN_SLOTS - 1)) {
		if (v->tab[i].key == m)
			return v->tab[i].off == VN_NONE ? NULL : v->pool + v->tab[i].off;
		if (!v->tab[i].key)
			break;
	}
	if (v->n >= VMNAMES_MAX_METHODS) {
		v->st.over_budget++;
		return NULL;
	}
	v->tab[i].key = m;
	v->tab[i].off = read_name(v, m);
	v->n++;
	if (v->tab[i].off == VN_NONE) {
		v->st.failed++;
		return NULL;
	}
	v->st.methods++;
	return v->pool + v->tab[i].off;
}

/* the nmethod holding pc, as CodeHeap::find_blob finds the blob, and its Method*; 0 none */
__u64 vn_pc_blob(struct vmnames *v, __u64 pc, __u64 *ret_m)
{
	*ret_m = 0;
	for (__u32 k = 0; k < v->w.n_heaps && k < JP_JW_HEAPS; k++) {
		const struct jp_jwalk_heap *h = &v->w.heaps[k];
		__u64 seg, blob, name_p, m;
		char name[16];
		__u8 hop;

		if (pc < h->lo || pc >= h->hi)
			continue;
		seg = (pc - h->lo) >> (h->log2_seg & 31);
		for (int i = 0;; i++) {
			if (i == 32 || vn_read(v, h->segmap + seg, &hop, 1) || hop == 0xff ||
			    hop > seg)
				return 0;
			if (!hop)
				break;
			seg -= hop;
		}
		blob = h->lo + (seg << (h->log2_seg & 31)) + v->w.heap_block;
		/* a method's code, or a native method's wrapper ("native nmethod") */
		if (rd64(v, blob + v->w.blob_name, &name_p) || vn_read(v, name_p, name, 8))
			return 0;
		if (memcmp(name, "nmethod", 8) &&
		    (memcmp(name, "native n", 8) || vn_read(v, name_p + 8, name + 8, 7) ||
		     memcmp(name + 8, "method", 7)))
			return 0;
		if (rd64(v, blob + v->l.nm_method, &m))
			return 0;
		*ret_m = m;
		return blob;
	}
	return 0;
}

/* pc's slot of the direct-mapped cache of compiled pcs: its nmethod and Method* */
static size_t pc_slot(struct vmnames *v, __u64 pc)
{
	size_t i = (size_t)((pc ^ (pc >> 10)) & 1023);

	if (v->pcs[i].pc != pc || !pc) {
		v->pcs[i].pc = pc;
		v->pcs[i].blob = vn_pc_blob(v, pc, &v->pcs[i].m);
	}
	return i;
}

const char *vmnames__frame(struct vmnames *v, const struct jp_jframe *f)
{
	if (!v)
		return NULL;
	if (f->method)
		return vn_method_name(v, f->method);
	return vn_method_name(v, v->pcs[pc_slot(v, f->pc & ~JP_JFRAME_NATIVE)].m);
}

/* a chain's slot, read now if it is not held (or held from before the pool was emptied) */
static const struct vn_chain *chain_of(struct vmnames *v, __u64 blob, __u64 pc, enum vmnames_at at)
{
	__u64 key = pc | ((__u64)at << 62), h = key * 0x9e3779b97f4a7c15ull;
	struct vn_chain *c = &v->chains[(h ^ (h >> 29)) & (VN_CHAIN_SLOTS - 1)];
	__u64 m[VMNAMES_MAX_CHAIN];
	struct timespec t0, t1;
	int n;

	if (c->key == key && c->gen == v->cgen)
		return c;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = vn_chain(v, blob, pc, at, m, VMNAMES_MAX_CHAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	v->st.dbg_ns += (__u64)((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
	if (n > 0) {
		v->st.chains++;
		v->st.inlined += (__u64)(n - 1);
	} else if (n == -E2BIG) {
		/* not kept: read again when the budget has room */
		static const struct vn_chain none;

		v->st.dbg_over++;
		return &none;
	} else if (n == -ENODATA) {
		v->st.dbg_noscope++;
	} else {
		v->st.dbg_failed++;
	}
	if (n > 0 && v->cused + (__u32)n > VN_CHAIN_POOL) {
		/* full: every chain held is forgotten (read again when wanted) */
		v->cused = 0;
		if (++v->cgen == 0)
			v->cgen = 1;
	}
	*c = (struct vn_chain){.key = key, .gen = v->cgen, .first = v->cused};
	if (n > 0) {
		memcpy(v->cpool + v->cused, m, (size_t)n * sizeof(*m));
		v->cused += (__u32)n;
		c->n = (__u16)n;
	}
	return c;
}

void vmnames__sample(struct vmnames *v)
{
	if (v)
		v->dbg_sample = 0;
}

int vmnames__frames(struct vmnames *v, const struct jp_jframe *f, enum vmnames_at at,
		    const char **ret, int cap)
{
	const struct vn_chain *c;
	const char *root;
	__u64 pc;
	size_t i;

	if (!v || cap < 1)
		return 0;
	if (f->method) {
		ret[0] = vn_method_name(v, f->method);
		return ret[0] ? 1 : 0;
	}
	pc = f->pc & ~JP_JFRAME_NATIVE;
	i = pc_slot(v, pc);
	root = vn_method_name(v, v->pcs[i].m);
	if (!root)
		return 0;
	/* a native method's wrapper has no inlined frames */
	if (at == VMN_ROOT || (f->pc & JP_JFRAME_NATIVE) || !v->l.dbg.layout || cap == 1) {
		ret[0] = root;
		return 1;
	}
	c = chain_of(v, v->pcs[i].blob, pc, at);
	if (!c->n || c->n > cap || v->cpool[c->first + c->n - 1] != v->pcs[i].m) {
		ret[0] = root;
		return 1;
	}
	for (int k = 0; k < c->n; k++) {
		ret[k] = vn_method_name(v, v->cpool[c->first + k]);
		if (!ret[k]) {
			v->st.dbg_failed++;
			ret[0] = root;
			return 1;
		}
	}
	return c->n;
}

void vmnames__stats(const struct vmnames *v, struct vmnames_stats *ret)
{
	if (v)
		*ret = v->st;
	else
		memset(ret, 0, sizeof(*ret));
}

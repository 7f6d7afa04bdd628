// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vmnames_debug.c: the methods inlined at a compiled frame's pc, read from its nmethod's
 * debug info in the JVM's memory, as AsyncGetCallTrace and the agent's code records
 * (JVMTI CompiledMethodLoad) find them: the PcDesc for the pc (the first recorded at or
 * after a return address, after an interrupted pc; PcDescs without a scope are not
 * recorded), its scope in the scopes data (a stream of UNSIGNED5 values: the caller's
 * scope, the method's index in the metadata, the bci) and each caller's up to the
 * compiled method. Everything read is the JVM's to say: read through the reader in bounded
 * pieces, every offset checked against the tables it points into, a chain's last method
 * must be the nmethod's own; anything else names the frame by its compiled method alone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/vmnames_int.h"

#define VN_MAX_TABLE (16u << 20) /* a debug info table larger than this is not believed */
#define VN_PCD_WIN   64		 /* PcDescs searched in one read */
#define VN_HDR_MAX   512	 /* an nmethod's fields read at once */

int vn_u5(const __u8 *b, size_t len, size_t *pos, unsigned int x, __u32 *ret)
{
	const unsigned int low = 256 - 64 - x; /* bytes that end a value: 192, or 191 */
	size_t p = *pos;
	__u32 sum;

	if (x > 1 || p >= len || b[p] < x)
		return -EPROTO;
	sum = b[p] - x;
	if (sum < low) {
		*pos = p + 1;
		*ret = sum;
		return 0;
	}
	/* each further byte 6 bits more; the fifth is the last whatever it is */
	for (unsigned int i = 1, sh = 6; i < 5; i++, sh += 6) {
		if (p + i >= len || b[p + i] < x)
			return -EPROTO;
		sum += (__u32)(b[p + i] - x) << sh;
		if (b[p + i] < x + low || i == 4) {
			*pos = p + i + 1;
			*ret = sum;
			return 0;
		}
	}
	return -EPROTO; /* not reached */
}

int vn_scope_decode(const __u8 *b, size_t len, __u32 off, unsigned int x, struct vn_scope *ret)
{
	__u32 sender, midx, bci;
	size_t pos = 0;

	if (vn_u5(b, len, &pos, x, &sender) || vn_u5(b, len, &pos, x, &midx) ||
	    vn_u5(b, len, &pos, x, &bci))
		return -EPROTO;
	/* a caller's scope is written before its callee's: a chain always ends */
	if (sender >= off || !midx || bci > 65536)
		return -EPROTO;
	*ret = (struct vn_scope){.sender = sender, .midx = midx, .bci = (__s32)bci - 1};
	return 0;
}

static __s32 get_s32(const __u8 *p)
{
	__s32 x;

	memcpy(&x, p, sizeof(x));
	return x;
}

int vn_pcdesc_find(const __u8 *win, size_t n, size_t stride, size_t pc_at, size_t scope_at,
		   __s64 target, __u32 *ret_scope)
{
	size_t i = 0;

	if (stride < 8 || pc_at + 4 > stride || scope_at + 4 > stride)
		return -EINVAL;
	while (i < n && get_s32(win + i * stride + pc_at) < target)
		i++;
	/* PcDescs without a scope (the table's first and last, a few more) are not recorded */
	for (; i < n; i++) {
		__s32 scope = get_s32(win + i * stride + scope_at);

		if (scope > 0) {
			*ret_scope = (__u32)scope;
			return (int)i;
		}
		if (scope < 0)
			return -EPROTO;
	}
	return -ENOENT;
}

/* a read for the debug info, within its budget */
static int dbg_read(struct vmnames *v, __u64 addr, void *buf, size_t n)
{
	if (v->st.dbg_bytes + n > VMNAMES_MAX_DBG_BYTES ||
	    v->dbg_sample + n > VMNAMES_MAX_DBG_SAMPLE)
		return -E2BIG;
	v->st.dbg_bytes += n;
	v->dbg_sample += (__u32)n;
	return vn_read(v, addr, buf, n) ? -EFAULT : 0;
}

/* an unsigned field of the nmethod's header (read into h) */
static __u64 hdr_get(const __u8 *h, struct vms_field f)
{
	__u64 x = 0;

	memcpy(&x, h + f.off, f.size); /* little-endian: x86-64 and arm64 */
	return x;
}

static __u32 field_end(struct vms_field f)
{
	return f.off + f.size;
}

/*
 * the nmethod's tables, where it says they are; ok 0 when they do not check out. -E2BIG:
 * not read (a budget), not to be kept
 */
static int nm_read(struct vmnames *v, __u64 blob, struct vn_nm *nm)
{
	const struct vms_debug *d = &v->l.dbg;
	const struct vms_field fs[] = {d->meta,	    d->pcs, d->deps, d->sd_begin, d->imm,
				       d->imm_size, d->sd,  d->mut,  d->mut_size, d->reloc};
	__u32 len = v->l.nm_method + 8, code_at = v->w.blob_code;
	__u8 h[VN_HDR_MAX];
	__u64 code;
	int err;

	*nm = (struct vn_nm){.blob = blob};
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
		if (field_end(fs[i]) > len)
			len = field_end(fs[i]);
	if (code_at + 8 > len)
		len = code_at + 8;
	if (len > sizeof(h))
		return 0;
	err = dbg_read(v, blob, h, len);
	if (err)
		return err == -E2BIG ? err : 0;
	nm->method = hdr_get(h, (struct vms_field){v->l.nm_method, 8});
	code = v->w.code_is_offset ? blob + (__u64)get_s32(h + code_at)
				   : hdr_get(h, (struct vms_field){code_at, 8});
	if (!nm->method || code < blob || code - blob > VN_MAX_TABLE)
		return 0;
	nm->code = code;
	if (d->layout == VMS_DBG_IMMUTABLE) {
		__u64 imm = hdr_get(h, d->imm), mut = hdr_get(h, d->mut);
		__u64 imm_size = hdr_get(h, d->imm_size), sd = hdr_get(h, d->sd);
		__u64 pcs = hdr_get(h, d->pcs), mut_size = hdr_get(h, d->mut_size);
		__u64 reloc = hdr_get(h, d->reloc);

		if (!imm || !mut || imm_size > VN_MAX_TABLE || mut_size > VN_MAX_TABLE ||
		    reloc > mut_size || sd > imm_size || pcs > imm_size)
			return 0;
		/* the scopes data and the PcDescs side by side, in either order */
		if (pcs < sd) {
			nm->pcs = imm + pcs;
			nm->n_pcs = (__u32)((sd - pcs) / d->pcd_size);
			nm->sd = imm + sd;
			nm->sd_len = (__u32)(imm_size - sd);
		} else {
			nm->sd = imm + sd;
			nm->sd_len = (__u32)(pcs - sd);
			nm->pcs = imm + pcs;
			nm->n_pcs = (__u32)((imm_size - pcs) / d->pcd_size);
		}
		nm->meta = mut + reloc;
		nm->n_meta = (__u32)((mut_size - reloc) / 8);
	} else if (d->layout == VMS_DBG_OFFSETS) {
		__u64 meta = hdr_get(h, d->meta), pcs = hdr_get(h, d->pcs);
		__u64 deps = hdr_get(h, d->deps), sd = hdr_get(h, d->sd_begin);

		if (meta > pcs || pcs > deps || deps > VN_MAX_TABLE || sd < blob + meta ||
		    sd > blob + pcs)
			return 0;
		nm->meta = blob + meta;
		nm->n_meta = (__u32)((sd - nm->meta) / 8);
		nm->sd = sd;
		nm->sd_len = (__u32)(blob + pcs - sd);
		nm->pcs = blob + pcs;
		nm->n_pcs = (__u32)((deps - pcs) / d->pcd_size);
	} else {
		return 0;
	}
	nm->ok = nm->n_pcs > 0 && nm->sd_len > 0 && nm->n_meta > 0;
	return 0;
}

/* the scope decode offset of the PcDesc for pc offset target: 0, or -errno */
static int pcdesc_scope(struct vmnames *v, const struct vn_nm *nm, __s64 target, __u32 *ret)
{
	const struct vms_debug *d = &v->l.dbg;
	__u8 win[2 * VN_PCD_WIN * 64];
	__u32 lo = 0, hi = nm->n_pcs, cnt;
	int err, i;

	/* a binary search by the pc offsets alone, then a window read at once */
	while (hi - lo > VN_PCD_WIN) {
		__u32 mid = lo + (hi - lo) / 2;
		__s32 pc;

		err = dbg_read(v, nm->pcs + (__u64)mid * d->pcd_size + d->pcd_pc.off, &pc,
			       sizeof(pc));
		if (err)
			return err;
		if (pc < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	cnt = nm->n_pcs - lo < 2 * VN_PCD_WIN ? nm->n_pcs - lo : 2 * VN_PCD_WIN;
	if (!cnt)
		return -ENOENT;
	err = dbg_read(v, nm->pcs + (__u64)lo * d->pcd_size, win, (size_t)cnt * d->pcd_size);
	if (err)
		return err;
	i = vn_pcdesc_find(win, cnt, d->pcd_size, d->pcd_pc.off, d->pcd_scope.off, target, ret);
	/* none to the table's end: the agent's records name the method alone there too */
	if (i == -ENOENT && lo + cnt == nm->n_pcs)
		return -ENODATA;
	return i < 0 ? i : 0;
}

/* the chain from the scope at off, decoded with x excluded bytes: how many, or -errno */
static int chain_from(struct vmnames *v, const struct vn_nm *nm, __u32 off, unsigned int x,
		      __u64 *ret, int cap)
{
	int n = 0;

	for (;;) {
		struct vn_scope sc;
		__u8 b[16];
		size_t len;
		__u64 m = 0;
		int err;

		if (!off || off >= nm->sd_len)
			return -EPROTO;
		if (n == cap)
			return -ELOOP;
		len = nm->sd_len - off < sizeof(b) ? nm->sd_len - off : sizeof(b);
		err = dbg_read(v, nm->sd + off, b, len);
		if (err)
			return err;
		if (vn_scope_decode(b, len, off, x, &sc) || sc.midx > nm->n_meta)
			return -EPROTO;
		err = dbg_read(v, nm->meta + (__u64)(sc.midx - 1) * 8, &m, sizeof(m));
		if (err)
			return err;
		if (!m || (m & 7))
			return -EPROTO;
		ret[n++] = m;
		if (!sc.sender)
			break;
		off = sc.sender;
	}
	/* the outermost scope is the compiled method's own */
	return ret[n - 1] == nm->method ? n : -EPROTO;
}

int vn_chain(struct vmnames *v, __u64 blob, __u64 pc, enum vmnames_at at, __u64 *ret, int cap)
{
	__u64 h = blob * 0x9e3779b97f4a7c15ull;
	struct vn_nm *nm = &v->nms[(h ^ (h >> 29)) & (VN_NM_SLOTS - 1)];
	__u32 scope = 0;
	int err, n = -EPROTO;

	if (!blob || !v->l.dbg.layout)
		return -ENOENT;
	if (nm->blob != blob && nm_read(v, blob, nm)) {
		nm->blob = 0; /* over a budget: read again when there is room */
		return -E2BIG;
	}
	if (!nm->ok)
		return -ENOENT;
	if (pc < nm->code || pc - nm->code >= 0x7fffffff)
		return -ENOENT;
	err = pcdesc_scope(v, nm, (__s64)(pc - nm->code) + (at == VMN_AT_TOP), &scope);
	if (err)
		return err;
	/* the stream's encoding changed in JDK 20: the first chain that checks out tells */
	for (int x = 1; x >= 0 && n < 0 && n != -E2BIG; x--) {
		if (v->u5x >= 0 && v->u5x != x)
			continue;
		n = chain_from(v, nm, scope, (unsigned int)x, ret, cap);
		if (n > 0)
			v->u5x = x;
	}
	return n;
}

void vn_pcdesc_show(struct vmnames *v, __u64 blob, __u64 pc, FILE *out)
{
	const struct vms_debug *d = &v->l.dbg;
	struct vn_nm nm;
	__u32 lo = 0, hi, first;
	__s64 target;
	__u8 pd[64];

	if (!blob || !d->layout || d->pcd_size > sizeof(pd) || nm_read(v, blob, &nm) || !nm.ok ||
	    pc < nm.code) {
		fprintf(out, "    (no PcDescs)\n");
		return;
	}
	target = (__s64)(pc - nm.code);
	hi = nm.n_pcs;
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;
		__s32 p = 0;

		if (vn_read(v, nm.pcs + (__u64)mid * d->pcd_size + d->pcd_pc.off, &p, sizeof(p)))
			return;
		if (p < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo > 3 ? lo - 3 : 0;
	fprintf(out, "    pc offset %lld in %u PcDescs:", (long long)target, nm.n_pcs);
	for (__u32 i = first; i < nm.n_pcs && i < lo + 4; i++) {
		if (vn_read(v, nm.pcs + (__u64)i * d->pcd_size, pd, d->pcd_size))
			break;
		fprintf(out, " %s%d/%d", i == lo ? ">" : "", get_s32(pd + d->pcd_pc.off),
			get_s32(pd + d->pcd_scope.off));
	}
	fprintf(out, "\n");
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_dict.c: the agent's dictionary log: methods (their names and line tables read
 * when a frame first needs them), classes, threads, class ids, and its budgeted refreshes.
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

#include "jvm/agent_int.h"
#include "log.h"
#include "util/procfs.h"
#include "ring.h"
#include "util/hashkey.h"
#include "util/safe_open.h"

struct jm_method_x ja_x_none;
/* dictionary ----------------------------------------------------------------- */

static size_t method_slot0(__u64 id, size_t cap)
{
	/* keyed: ids aimed at one slot would make every lookup a scan of the table */
	return (size_t)(hash_keyed(id) >> 17) & (cap - 1);
}

/*
 * The method and side tables: open addressing by a u64 id, the first field of every
 * entry (0: an empty slot), cap a power of 2.
 */
static void *id_find(void *tab, size_t cap, size_t esize, __u64 id)
{
	if (!cap || !id)
		return NULL;
	for (size_t i = method_slot0(id, cap);; i = (i + 1) & (cap - 1)) {
		__u64 *e = (__u64 *)((char *)tab + i * esize);

		if (*e == id)
			return e;
		if (!*e)
			return NULL;
	}
}

/* the slot where id goes (there is room: the table is at most 3/4 full) */
static void *id_slot(void *tab, size_t cap, size_t esize, __u64 id)
{
	size_t i = method_slot0(id, cap);

	while (*(__u64 *)((char *)tab + i * esize))
		i = (i + 1) & (cap - 1);
	return (char *)tab + i * esize;
}

/* the table one size up (or the first one, of first entries); 0 or -ENOSPC / -ENOMEM */
static int id_grow(struct jvm_agent *a, void **tab, size_t *cap, size_t esize, size_t first)
{
	size_t nc = *cap ? *cap * 2 : first;
	char *t;

	if (nc > SIZE_MAX / esize / 2 || ja_charge(a, (nc - *cap) * esize))
		return -ENOSPC;
	t = calloc(nc, esize);
	if (!t) {
		ja_uncharge(a, (nc - *cap) * esize);
		return -ENOMEM;
	}
	for (size_t i = 0; i < *cap; i++) {
		const char *e = (const char *)*tab + i * esize;

		if (*(const __u64 *)e)
			memcpy(id_slot(t, nc, esize, *(const __u64 *)e), e, esize);
	}
	free(*tab);
	*tab = t;
	*cap = nc;
	return 0;
}

struct jm_method *ja_method_find(const struct jvm_agent *a, __u64 id)
{
	return id_find(a->methods, a->cap_methods, sizeof(*a->methods), id);
}

struct jm_side *ja_side_find(const struct jvm_agent *a, __u64 id)
{
	return id_find(a->side, a->cap_side, sizeof(*a->side), id);
}

/* id's side entry, added when new; NULL when a budget or memory says no */
struct jm_side *ja_side_get(struct jvm_agent *a, __u64 id)
{
	struct jm_side *e = ja_side_find(a, id);

	if (e || !id)
		return e;
	if ((a->n_side + 1) * 4 > a->cap_side * 3 &&
	    id_grow(a, (void **)&a->side, &a->cap_side, sizeof(*a->side), 256))
		return NULL;
	e = id_slot(a->side, a->cap_side, sizeof(*a->side), id);
	e->id = id;
	a->n_side++;
	return e;
}

/*
 * A method entry: id, name and signature lengths, line count, name, signature, lines.
 * Checked whole now (a bad one spoils its record), kept as its place in the file.
 */
static int parse_method(struct jvm_agent *a, struct cur *c, __u32 cls)
{
	__u64 off = a->rec_off + (__u64)(c->p - a->rec_body); /* the entry's, in the file */
	struct jm_method m = { 0 }, *old;
	struct jm_side *side;
	__u16 name_len, msig_len;
	__u32 n_lines;
	__u64 skip;

	m.id = ja_cur_u64(c);
	name_len = ja_cur_u16(c);
	msig_len = ja_cur_u16(c);
	n_lines = ja_cur_u32(c);
	skip = (__u64)name_len + msig_len + (__u64)n_lines * sizeof(struct jm_line);
	if (c->bad || !name_len || skip > c->left)
		return -EINVAL;
	c->p += skip;
	c->left -= skip;
	m.cls = cls;
	if (!m.id)
		return -EINVAL;
	if (off > UINT32_MAX) {
		a->over_budget++;
		return 0;
	}
	m.off = (__u32)off;
	old = ja_method_find(a, m.id);
	if (old) {
		/* seen before (classes are dumped again at start): the newest wins */
		side = ja_side_find(a, m.id);
		if (side) {
			ja_x_free(a, side->x);
			side->x = NULL;
		}
		*old = m;
		return 0;
	}
	if ((a->n_methods + 1) * 4 > a->cap_methods * 3 &&
	    id_grow(a, (void **)&a->methods, &a->cap_methods, sizeof(*a->methods), 1024))
		return -ENOSPC;
	*(struct jm_method *)id_slot(a->methods, a->cap_methods, sizeof(m), m.id) = m;
	a->n_methods++;
	return 0;
}

/* entries of a line table read in their order: which came first decides between equal bcis */
struct jm_line_at {
	__s32 bci, line;
	__u32 i;
};

static int line_at_cmp(const void *pa, const void *pb)
{
	const struct jm_line_at *x = pa, *y = pb;

	if (x->bci != y->bci)
		return x->bci < y->bci ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * n entries (bci, line) from c into lines, sorted by bci, one entry per bci (the last of
 * the table's entries with that bci, as a scan for the greatest start <= bci found it):
 * JVMTI does not promise a sorted table, and a lookup must not be linear in a size the
 * JVM's user chooses. Returns the entries kept (0 when the scratch cannot be had).
 */
__u32 ja_lines_load(struct jm_line *lines, struct cur *c, __u32 n)
{
	struct jm_line_at *t = malloc((size_t)n * sizeof(*t));
	bool sorted = true;
	__u32 k = 0;

	for (__u32 i = 0; i < n; i++) {
		lines[i].bci = (__s32)ja_cur_u32(c);
		lines[i].line = (__s32)ja_cur_u32(c);
		if (i && lines[i].bci <= lines[i - 1].bci)
			sorted = false;
	}
	if (sorted || c->bad) {
		free(t);
		return c->bad ? 0 : n;
	}
	if (!t)
		return 0;
	for (__u32 i = 0; i < n; i++)
		t[i] = (struct jm_line_at){ lines[i].bci, lines[i].line, i };
	qsort(t, n, sizeof(*t), line_at_cmp);
	for (__u32 i = 0; i < n; i++) {
		if (i + 1 < n && t[i + 1].bci == t[i].bci)
			continue; /* a later entry of the same bci wins */
		lines[k].bci = t[i].bci;
		lines[k++].line = t[i].line;
	}
	free(t);
	return k;
}

/*
 * The name and line table of m, read again from its entry in the dictionary file (the
 * JVM's user writes that file: every length is checked again, and the entry must still
 * carry m's id). NULL when it cannot be had; then never tried again.
 */
struct jm_method_x *ja_method_x(struct jvm_agent *a, struct jm_method *m)
{
	unsigned char hdr[16], *body = NULL;
	struct jm_method_x *x = NULL;
	__u16 name_len, msig_len;
	__u32 n_lines;
	size_t len;
	struct cur c;
	__u64 id;

	struct jm_side *side = ja_side_get(a, m->id);

	if (!side)
		return NULL;
	if (side->x)
		return side->x == &ja_x_none ? NULL : side->x;
	side->x = &ja_x_none; /* until it is read */
	if (pread(a->dict_fd, hdr, sizeof(hdr), (off_t)m->off) != (ssize_t)sizeof(hdr))
		return NULL;
	memcpy(&id, hdr, 8);
	memcpy(&name_len, hdr + 8, 2);
	memcpy(&msig_len, hdr + 10, 2);
	memcpy(&n_lines, hdr + 12, 4);
	if (id != m->id || !name_len || n_lines > JP_DICT_REC_MAX / sizeof(struct jm_line))
		return NULL;
	if (n_lines > JM_LINES_MAX) {
		a->over_budget++; /* no real method has so many: its frames go without lines */
		n_lines = 0;
	}
	len = (size_t)name_len + msig_len + (size_t)n_lines * sizeof(struct jm_line);
	if (ja_charge(a, sizeof(*x) + len)) /* the read buffer, given back below */
		return NULL;
	body = malloc(len);
	x = calloc(1, sizeof(*x));
	if (!body || !x ||
	    pread(a->dict_fd, body, len, (off_t)(m->off + sizeof(hdr))) != (ssize_t)len)
		goto out;
	c = (struct cur){ .p = body, .left = len };
	x->name = ja_cur_str(a, &c, name_len);
	c.p += msig_len;
	c.left -= msig_len;
	if (!c.bad && n_lines && !ja_charge(a, (size_t)n_lines * sizeof(*x->lines))) {
		x->lines = malloc((size_t)n_lines * sizeof(*x->lines));
		x->n_lines = x->lines ? ja_lines_load(x->lines, &c, n_lines) : 0;
		ja_uncharge(a, (size_t)(n_lines - x->n_lines) * sizeof(*x->lines));
		if (!x->n_lines) {
			free(x->lines);
			x->lines = NULL;
		} else if (x->n_lines < n_lines) {
			/* equal bcis made fewer: ja_x_free gives back what n_lines says */
			struct jm_line *p = realloc(x->lines, (size_t)x->n_lines * sizeof(*p));

			if (p)
				x->lines = p;
		}
	}
	if (!x->name)
		goto out;
	ja_uncharge(a, len);
	free(body);
	side->x = x;
	return x;
out:
	ja_uncharge(a, len);
	free(body);
	if (x) {
		ja_str_free(a, x->name);
		ja_uncharge(a, (size_t)x->n_lines * sizeof(*x->lines));
		free(x->lines);
		free(x);
	}
	ja_uncharge(a, sizeof(*x));
	return NULL;
}

/* "Lpkg/Class;" is interned as "pkg/Class" (a hidden class without its address) */
static const char *cur_class(struct jvm_agent *a, struct cur *c, size_t n)
{
	const char *cls;
	char *tmp;

	if (c->bad || c->left < n || n < 2 || c->p[0] != 'L' || c->p[n - 1] != ';')
		return ja_cur_istr(a, c, n);
	tmp = ja_cur_take(c, n);
	if (!tmp)
		return NULL;
	cls = ja_intern(a, tmp + 1, jvm_agent__hidden_class_norm(tmp + 1, n - 2));
	free(tmp);
	if (!cls)
		c->bad = 1;
	return cls;
}

/*
 * The class signature and source file name are interned once for all its methods (and
 * for the class's later records): a record with a 64 KiB name and many methods costs
 * that name once, not once per method.
 */
static int parse_class(struct jvm_agent *a, struct cur *c)
{
	__u16 sig_len = ja_cur_u16(c), src_len = ja_cur_u16(c);
	__u32 n = ja_cur_u32(c);
	const char *cls = cur_class(a, c, sig_len);
	const char *src = ja_cur_istr(a, c, src_len);
	int err = c->bad || !cls ? -EINVAL : 0;
	__u32 ci = (__u32)a->n_mcls;

	if (!err && a->n_mcls && a->mcls[ci - 1].cls == cls && a->mcls[ci - 1].src == src) {
		ci--; /* the same class again (dumped again at start): one pair */
	} else if (!err) {
		if (a->n_mcls >= UINT32_MAX ||
		    ja_grow(a, (void **)&a->mcls, &a->cap_mcls, a->n_mcls, sizeof(*a->mcls)))
			return -ENOSPC;
		a->mcls[a->n_mcls++] = (struct jm_cls){ cls, src };
	}
	/* each method takes 16 bytes at least: n cannot exceed what is there */
	for (__u32 i = 0; !err && i < n; i++)
		err = parse_method(a, c, ci);
	return err;
}

static int parse_thread(struct jvm_agent *a, struct cur *c)
{
	__u32 tid = ja_cur_u32(c), idx;
	__u16 n = ja_cur_u16(c);
	char *name;

	(void)ja_cur_u16(c);
	name = ja_cur_str(a, c, n);
	if (c->bad || !name)
		goto out_bad;
	if (!ja_kv_get(&a->thread_idx, tid, 0, &idx) && idx < a->n_threads) {
		ja_str_free(a, a->threads[idx].name); /* tids are reused: the newest name wins */
		a->threads[idx].name = name;
		return 0;
	}
	if (ja_grow(a, (void **)&a->threads, &a->cap_threads, a->n_threads,
		    sizeof(a->threads[0])) ||
	    ja_kv_put(a, &a->thread_idx, tid, 0, (__u32)a->n_threads))
		goto out_bad;
	a->threads[a->n_threads].tid = tid;
	a->threads[a->n_threads++].name = name;
	return 0;
out_bad:
	ja_str_free(a, name);
	return -EINVAL;
}

/* JP_DICT_CLASS_ID: u64 class_id, u16 sig_len, u16 pad, sig (interned, charged) */
static int parse_class_id(struct jvm_agent *a, struct cur *c)
{
	__u64 id = ja_cur_u64(c);
	__u16 n = ja_cur_u16(c);
	const char *name;
	__u32 idx;

	(void)ja_cur_u16(c);
	name = ja_cur_istr(a, c, n);
	if (c->bad || !name || id == 0)
		return -EINVAL;
	if (!ja_kv_get(&a->class_idx, id, 0, &idx) && idx < a->n_classes) {
		a->classes[idx].name = name;
		return 0;
	}
	if (ja_grow(a, (void **)&a->classes, &a->cap_classes, a->n_classes,
		    sizeof(a->classes[0])) ||
	    ja_kv_put(a, &a->class_idx, id, 0, (__u32)a->n_classes))
		return -EINVAL;
	a->classes[a->n_classes].id = id;
	a->classes[a->n_classes++].name = name;
	return 0;
}

static int parse_dict_rec(struct jvm_agent *a, __u16 type, const unsigned char *body, size_t len)
{
	struct cur c = { .p = body, .left = len };

	switch (type) {
	case JP_DICT_CLASS:
		return parse_class(a, &c);
	case JP_DICT_CODE_LOAD:
		return ja_parse_code_load(a, &c);
	case JP_DICT_CODE_UNLOAD:
		return ja_parse_code_unload(a, &c);
	case JP_DICT_STUB:
		return ja_parse_stub(a, &c);
	case JP_DICT_THREAD:
		return parse_thread(a, &c);
	case JP_DICT_CLASS_ID:
		return parse_class_id(a, &c);
	default:
		return 0; /* newer record kinds: skipped */
	}
}

/*
 * Reads what the agent appended since the last call. A torn last record (the agent's
 * write() still in progress, or a short one) is retried next time from its start.
 */
/*
 * The dictionary's bytes [off, off + len) (off + len <= limit, the size seen), from a->dbuf:
 * read ahead DICT_CHUNK at a time, as records are small and one pread each cost more than
 * parsing them. NULL when they cannot be read (now).
 */
static const unsigned char *dict_bytes(struct jvm_agent *a, __u64 off, size_t len, __u64 limit)
{
	size_t want = len > DICT_CHUNK ? len : DICT_CHUNK;
	ssize_t got;

	if (a->win_len && off >= a->win_off && off + len <= a->win_off + a->win_len)
		return a->dbuf + (off - a->win_off);
	if (want > limit - off)
		want = (size_t)(limit - off);
	if (want > a->dbuf_cap) {
		unsigned char *p = realloc(a->dbuf, want);

		if (!p)
			return NULL;
		a->dbuf = p;
		a->dbuf_cap = want;
	}
	a->win_len = 0;
	got = pread(a->dict_fd, a->dbuf, want, (off_t)off);
	if (got < 0 || (size_t)got < len)
		return NULL;
	a->win_off = off;
	a->win_len = (size_t)got;
	return a->dbuf;
}

static void dict_refresh_max(struct jvm_agent *a, __u64 max);

void ja_dict_refresh(struct jvm_agent *a)
{
	dict_refresh_max(a, DICT_REFRESH_MAX);
}

static __u64 mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * A refresh because a lookup met an unknown id: in each LOOKUP_WINDOW_NS one of a poll's
 * size, or what LOOKUP_REFRESH_MAX bytes allow. Each frame of a record may name an unknown id, and the JVM's user
 * may append to the dictionary all the time: the polls' own refreshes read the rest.
 */
void ja_lookup_refresh(struct jvm_agent *a)
{
	__u64 now = mono_now_ns(), before = a->dict_off;

	if (now - a->lr_window_ns > LOOKUP_WINDOW_NS) {
		a->lr_window_ns = now;
		a->lr_bytes = 0;
	}
	if (a->lr_bytes >= LOOKUP_REFRESH_MAX)
		return;
	/* the window's first may read as much as a poll's (the dictionary as jprof found it) */
	dict_refresh_max(a, a->lr_bytes ? LOOKUP_REFRESH_MAX - a->lr_bytes : DICT_REFRESH_MAX);
	a->lr_bytes += a->dict_off - before;
}

/* parses at most max bytes of what was appended */
static void dict_refresh_max(struct jvm_agent *a, __u64 max)
{
	struct stat st;
	__u64 limit, ob;
	int err;

	if (a->dict_broken || fstat(a->dict_fd, &st) || (__u64)st.st_size == a->dict_seen_size)
		return;
	a->dict_seen_size = (__u64)st.st_size;
	limit = (__u64)st.st_size;
	if (limit > JP_DICT_SIZE_MAX + JP_DICT_REC_MAX)
		limit = JP_DICT_SIZE_MAX + JP_DICT_REC_MAX;
	if (a->dict_off == 0) {
		struct jp_dict_hdr h;

		if (pread(a->dict_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
			a->dict_seen_size = 0; /* header not there yet */
			return;
		}
		if (h.magic != JP_DICT_MAGIC || h.version != JP_RING_VERSION ||
		    h.hdr_size < sizeof(h) || h.hdr_size > 4096) {
			a->dict_broken = 1;
			a->malformed++;
			return;
		}
		a->dict_off = h.hdr_size;
	}
	/* bounded work per call: what is left is read on the next poll */
	if (limit > a->dict_off + max) {
		limit = a->dict_off + max;
		a->dict_seen_size = 0;
	}
	/* each pass moves dict_off forward by >= 8 bytes or stops */
	a->moved = 0;
	a->win_len = 0;
	while (a->dict_off + sizeof(struct jp_dict_rec) <= limit) {
		if (a->moved > DICT_REFRESH_MOVES) {
			a->dict_seen_size = 0; /* look again next time */
			break;
		}
		struct jp_dict_rec r;
		const unsigned char *p;
		size_t body;

		p = dict_bytes(a, a->dict_off, sizeof(r), limit);
		if (!p)
			break;
		memcpy(&r, p, sizeof(r));
		if (r.len < sizeof(r) || r.len > JP_DICT_REC_MAX) {
			/* no way to find the next record */
			a->dict_broken = 1;
			a->malformed++;
			break;
		}
		if (a->dict_off + r.len > limit) {
			a->dict_seen_size = 0; /* torn: look again next time */
			break;
		}
		body = r.len - sizeof(r);
		p = dict_bytes(a, a->dict_off, r.len, limit);
		if (!p) {
			a->dict_seen_size = 0;
			break;
		}
		ob = a->over_budget;
		a->rec_off = a->dict_off + sizeof(r);
		a->rec_body = p + sizeof(r);
		err = parse_dict_rec(a, r.type, p + sizeof(r), body);
		if (err && a->over_budget == ob) /* a budget's refusal is counted there */
			a->malformed++;
		a->dict_off += r.len;
	}
	/* the file grows: what is read next time is read anew */
	a->win_len = 0;
	/* one huge record must not pin its buffer for the rest of the run */
	if (a->dbuf_cap > DBUF_KEEP) {
		free(a->dbuf);
		a->dbuf = NULL;
		a->dbuf_cap = 0;
	}
}

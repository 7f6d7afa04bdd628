/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tfile.c: reads the agent's trace file: records, method table, slow calls' stacks; all checked. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/tfile.h"

struct tfile {
	int fd;
	__u64 size; /* the file's, when opened */
	__u32 n_slots;
	__u64 tail;
	__u64 malformed;
	struct jp_mt_rec *buf;
};

static int rd_u64(int fd, off_t off, __u64 *v)
{
	return pread(fd, v, sizeof(*v), off) == (ssize_t)sizeof(*v) ? 0 : -EIO;
}

static int rd_u32(int fd, off_t off, __u32 *v)
{
	return pread(fd, v, sizeof(*v), off) == (ssize_t)sizeof(*v) ? 0 : -EIO;
}

static void wr_u64(int fd, off_t off, __u64 v)
{
	(void)!pwrite(fd, &v, sizeof(v), off);
}

/* the records committed since the last round into s; the new tail written back */
static void drain(struct tfile *r, struct tstats *s)
{
	__u64 head, n;

	if (rd_u64(r->fd, offsetof(struct jp_mt_hdr, head), &head) || head <= r->tail)
		return;
	n = head - r->tail;
	if (n > r->n_slots)
		n = r->n_slots; /* a head past the slots: the JVM's word, bounded */
	for (__u64 done = 0; done < n;) {
		__u64 pos = r->tail, slot = pos & (r->n_slots - 1), k = n - done;
		ssize_t got;

		if (k > r->n_slots - slot)
			k = r->n_slots - slot;
		got = pread(r->fd, r->buf, k * sizeof(*r->buf),
			    (off_t)(JP_MT_DATA_OFF + slot * sizeof(*r->buf)));
		if (got != (ssize_t)(k * sizeof(*r->buf)))
			break;
		for (__u64 i = 0; i < k; i++) {
			const struct jp_mt_rec *rec = &r->buf[i];

			if (rec->seq != pos + i + 1) {
				k = i; /* not committed yet */
				n = done + i;
				break;
			}
			if (rec->method >= TSTATS_METHODS_MAX || rec->thrown > 1 ||
			    tstats__add(s, rec->method, rec->tid, rec->start_ns, rec->dur_ns,
					rec->thrown))
				r->malformed++;
		}
		r->tail += k;
		done += k;
	}
	wr_u64(r->fd, offsetof(struct jp_mt_hdr, tail), r->tail);
}

/* the method table into s; the number of methods matched */
static unsigned int read_methods(struct tfile *r, struct tstats *s)
{
	static struct jp_mt_method m[JP_MT_METHODS_MAX];
	__u32 n = 0;

	if (rd_u32(r->fd, offsetof(struct jp_mt_hdr, n_methods), &n) || n > JP_MT_METHODS_MAX)
		return 0;
	if (pread(r->fd, m, n * sizeof(m[0]), JP_MT_HDR_SIZE) != (ssize_t)(n * sizeof(m[0])))
		return 0;
	for (__u32 i = 0; i < n; i++) {
		char name[sizeof(m[0].name) + 1], why[sizeof(m[0].why) + 1];
		size_t nl = m[i].name_len < sizeof(m[0].name) ? m[i].name_len : sizeof(m[0].name);
		size_t wl = m[i].why_len < sizeof(m[0].why) ? m[i].why_len : sizeof(m[0].why);

		memcpy(name, m[i].name, nl);
		name[nl] = '\0';
		memcpy(why, m[i].why, wl);
		why[wl] = '\0';
		/* printable only: these reach a terminal */
		for (size_t k = 0; k < nl; k++)
			if ((unsigned char)name[k] < 0x20 || (unsigned char)name[k] == 0x7f)
				name[k] = '?';
		for (size_t k = 0; k < wl; k++)
			if ((unsigned char)why[k] < 0x20 || (unsigned char)why[k] == 0x7f)
				why[k] = '?';
		(void)tstats__name(s, i, name, (m[i].flags & JP_MT_M_REFUSED) ? why : NULL);
	}
	return n;
}

/* the slow calls' stacks and their methods' names, checked, to the slowest calls kept */
/*
 * --args of a slow call in words: "#POS VALUE, ..." (ints, longs, floats as C prints them, a
 * String quoted, its first 16 chars, '...' when longer; the file is the JVM user's: kinds
 * and positions checked, chars printable or '?')
 */
static void format_args(const struct jp_mt_stack *st, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < st->n_args && i < JP_MT_ARGS && len < n; i++) {
		const struct jp_mt_arg *a = &st->args[i];
		char v[48];
		__u32 f32 = (__u32)a->val;
		float f;
		double d;
		int w;

		memcpy(&f, &f32, sizeof(f));
		memcpy(&d, &a->val, sizeof(d));
		switch (a->kind) {
		case 1:
			snprintf(v, sizeof(v), "%d", (__s32)a->val);
			break;
		case 2:
			snprintf(v, sizeof(v), "%lld", (long long)a->val);
			break;
		case 3:
			snprintf(v, sizeof(v), "%g", (double)f);
			break;
		case 4:
			snprintf(v, sizeof(v), "%g", d);
			break;
		case 5: {
			size_t k = a->val < sizeof(a->str) ? (size_t)a->val : sizeof(a->str);

			v[0] = '"';
			for (size_t c = 0; c < k; c++)
				v[1 + c] = a->str[c] >= 32 && a->str[c] < 127 ? a->str[c] : '?';
			snprintf(v + 1 + k, sizeof(v) - 1 - k, "%s\"",
				 a->val > sizeof(a->str) ? "..." : "");
			break;
		}
		case 6:
			snprintf(v, sizeof(v), "null");
			break;
		default:
			continue;
		}
		w = snprintf(buf + len, n - len, "%s#%u %s", len ? ", " : "", a->pos, v);
		len += w > 0 ? (size_t)w : 0;
	}
}

static void read_stacks(struct tfile *r, struct tstats *s, const struct jp_mt_hdr *h)
{
	__u64 ns = h->stacks_used < h->n_stacks ? h->stacks_used : h->n_stacks;
	__u64 nn = h->names_used < h->n_names ? h->names_used : h->n_names;
	struct jp_mt_name *names = NULL;
	struct jp_mt_stack st;

	if (!h->slow_ns || !ns || h->n_stacks > 4096 || h->n_names > 65536 ||
	    h->stacks_off < JP_MT_DATA_OFF + (__u64)r->n_slots * sizeof(struct jp_mt_rec) ||
	    h->names_off < h->stacks_off + (__u64)h->n_stacks * sizeof(st) ||
	    h->names_off + (__u64)h->n_names * sizeof(*names) > r->size)
		return;
	names = calloc(nn ? nn : 1, sizeof(*names));
	if (!names || pread(r->fd, names, nn * sizeof(*names), h->names_off) !=
			      (ssize_t)(nn * sizeof(*names)))
		goto out;
	for (__u64 i = 0; i < nn; i++) {
		size_t l = names[i].len < sizeof(names[i].name) ? names[i].len
								: sizeof(names[i].name) - 1;

		names[i].name[l] = '\0';
		for (size_t k = 0; k < l; k++)
			if ((unsigned char)names[i].name[k] < 0x20 ||
			    (unsigned char)names[i].name[k] == 0x7f)
				names[i].name[k] = '?';
	}
	for (__u64 i = 0; i < ns; i++) {
		const char *frames[JP_MT_STACK_DEPTH];
		unsigned int n;

		if (pread(r->fd, &st, sizeof(st), (off_t)(h->stacks_off + i * sizeof(st))) !=
			    (ssize_t)sizeof(st) ||
		    !st.ready)
			continue;
		n = st.n_frames < JP_MT_STACK_DEPTH ? st.n_frames : JP_MT_STACK_DEPTH;
		for (unsigned int f = 0; f < n; f++) {
			frames[f] = "?";
			for (__u64 k = 0; k < nn; k++)
				if (names[k].method_id == st.frames[f].method_id) {
					frames[f] = names[k].name;
					break;
				}
		}
		(void)tstats__set_stack(s, st.method, st.tid, st.start_ns, frames, n);
		if (st.n_args) {
			char args[256];

			format_args(&st, args, sizeof(args));
			(void)tstats__set_args(s, st.method, st.tid, st.start_ns, args);
		}
	}
out:
	free(names);
}

int tfile__open_fd(int fd, __u64 size, struct tfile **ret)
{
	struct jp_mt_hdr h;
	struct tfile *t;

	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != JP_MT_MAGIC ||
	    h.version != JP_MT_VERSION || h.hdr_size != JP_MT_HDR_SIZE || !h.n_slots ||
	    (h.n_slots & (h.n_slots - 1)) || h.n_slots > (1u << 20) ||
	    size < JP_MT_DATA_OFF + (__u64)h.n_slots * sizeof(struct jp_mt_rec)) {
		close(fd);
		return -EPROTO;
	}
	t = calloc(1, sizeof(*t));
	if (t)
		t->buf = calloc(h.n_slots, sizeof(*t->buf));
	if (!t || !t->buf) {
		free(t);
		close(fd);
		return -ENOMEM;
	}
	t->fd = fd;
	t->n_slots = h.n_slots;
	t->size = size;
	t->tail = h.tail;
	*ret = t;
	return 0;
}

void tfile__free(struct tfile *t)
{
	if (!t)
		return;
	close(t->fd);
	free(t->buf);
	free(t);
}

void tfile__stamp(struct tfile *t, __u64 now_ns)
{
	wr_u64(t->fd, offsetof(struct jp_mt_hdr, reader_ns), now_ns);
}

void tfile__stop(struct tfile *t)
{
	__u32 one = 1;

	(void)!pwrite(t->fd, &one, sizeof(one), offsetof(struct jp_mt_hdr, stop_req));
}

__u32 tfile__state(struct tfile *t)
{
	__u32 state = 0;

	return rd_u32(t->fd, offsetof(struct jp_mt_hdr, state), &state) ? 0 : state;
}

void tfile__drain(struct tfile *t, struct tstats *s)
{
	drain(t, s);
}

unsigned int tfile__finish(struct tfile *t, struct tstats *s, struct jp_mt_hdr *ret_hdr)
{
	unsigned int n = read_methods(t, s);

	if (pread(t->fd, ret_hdr, sizeof(*ret_hdr), 0) != (ssize_t)sizeof(*ret_hdr))
		memset(ret_hdr, 0, sizeof(*ret_hdr));
	else
		read_stacks(t, s, ret_hdr);
	return n;
}

__u64 tfile__malformed(const struct tfile *t)
{
	return t->malformed;
}

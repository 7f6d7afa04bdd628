/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_ring.c: reads one JVM's agent channel (jvmagent/ring.h): the trace ring and the
 * dictionary log. Both are written by another user's process, so: no symlinks, owner
 * checked, sizes bounded, every record copied out (pread) before it is looked at, every
 * loop bounded.
 *
 * The ring is read with pread/pwrite, not mmap: the JVM owns the file and could shrink
 * it under a mapping, which would SIGBUS jprof; a short pread is just a malformed read.
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
#include "jvm/agent_files.h"
#include "jvm/agent_int.h"
#include "log.h"
#include "util/procfs.h"
#include "ring.h"
#include "util/hashkey.h"
#include "util/safe_open.h"

/* opening ------------------------------------------------------------------ */

static int check_file(int fd, unsigned int expected_uid, __u64 max_size, __u64 *ret_size)
{
	struct safe_expect exp = { .uid = (uid_t)expected_uid, .max_size = max_size };
	struct stat st;
	int err;

	err = safe_check_fd(fd, &exp, &st);
	if (err)
		return err == -EBADFD ? -EINVAL : err;
	*ret_size = (__u64)st.st_size;
	return 0;
}

static int read_ring_header(struct jvm_agent *a, __u64 file_size)
{
	struct jp_ring_hdr h;

	if (pread(a->ring_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return -EINVAL;
	if (h.magic == JP_RING_MAGIC && h.version != JP_RING_VERSION) {
		pr_warn("JVM agent (pid %u in its namespace) speaks ring version %u, this jprof "
			"reads version %u: no Java stacks from it (restart the JVM)",
			h.pid, h.version, JP_RING_VERSION);
		return -EPROTO;
	}
	if (h.magic != JP_RING_MAGIC || h.hdr_size != JP_RING_HDR_SIZE)
		return -EPROTO;
	if (h.data_size < JP_RING_DATA_MIN || h.data_size > JP_RING_DATA_MAX ||
	    (h.data_size & (h.data_size - 1)) || h.max_depth == 0 || h.max_depth > JP_DEPTH_MAX)
		return -EPROTO;
	if (file_size != (__u64)h.hdr_size + h.data_size)
		return -EPROTO;
	a->hdr_size = h.hdr_size;
	a->data_size = h.data_size;
	a->max_depth = h.max_depth;
	a->tail = a->tail_stored = h.tail;
	a->signo_polled = h.signo;
	a->start_ns = h.start_ns;
	return 0;
}

/* a ring the agent created before this time is another (dead) process's: same pid, reused */
#define STALE_SLACK_NS (50ull * 1000 * 1000)

static struct jvm_agent *agent_open_fds(int ring_fd, int dict_fd, unsigned int uid,
					__u64 proc_start_ns)
{
	struct jvm_agent *a;
	__u64 size;
	int err;

	a = calloc(1, sizeof(*a));
	if (!a) {
		err = -ENOMEM;
		goto out_close;
	}
	a->ring_fd = ring_fd;
	a->dict_fd = dict_fd;
	a->max_bytes = AGENT_MAX_BYTES;
	a->bfree = BFREE_NONE;
	err = check_file(ring_fd, uid, JP_RING_HDR_SIZE + (__u64)JP_RING_DATA_MAX, &size);
	if (!err)
		err = read_ring_header(a, size);
	/* left in /tmp by an earlier process that had this pid (killed: no cleanup) */
	if (!err && proc_start_ns && a->start_ns + STALE_SLACK_NS < proc_start_ns)
		err = -ESTALE;
	if (!err)
		err = check_file(dict_fd, uid, JP_DICT_SIZE_MAX + JP_DICT_REC_MAX, &size);
	if (err)
		goto out_free;
	if (pread(ring_fd, &a->base, sizeof(a->base), 0) != (ssize_t)sizeof(a->base))
		memset(&a->base, 0, sizeof(a->base));
	a->rec = malloc(TRACE_REC_MAX);
	a->frames = calloc(JP_DEPTH_MAX, sizeof(*a->frames));
	if (!a->rec || !a->frames) {
		err = -ENOMEM;
		goto out_free;
	}
	return a;
out_free:
	jvm_agent__free(a);
	errno = -err;
	return NULL;
out_close:
	if (ring_fd >= 0)
		close(ring_fd);
	if (dict_fd >= 0)
		close(dict_fd);
	errno = -err;
	return NULL;
}

struct jvm_agent *jvm_agent__open_files(const char *ring_path, const char *dict_path,
					unsigned int expected_uid)
{
	int rfd, dfd;

	/* no symlink anywhere, only a regular file opened; owner and sizes checked below */
	rfd = safe_open_at(AT_FDCWD, ring_path, SAFE_RDWR, &SAFE_EXPECT_ANY, NULL);
	if (rfd < 0) {
		errno = -rfd;
		return NULL;
	}
	dfd = safe_open_at(AT_FDCWD, dict_path, 0, &SAFE_EXPECT_ANY, NULL);
	if (dfd < 0) {
		close(rfd);
		errno = -dfd;
		return NULL;
	}
	return agent_open_fds(rfd, dfd, expected_uid, 0);
}

struct jvm_agent *jvm_agent__open(__u32 pid, __u32 nspid)
{
	struct jvm_chan_files cf;
	struct safe_expect exp;
	char path[64];
	struct stat st;
	int rfd, dfd;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (stat(path, &st))
		return NULL;
	/* the names are random: the JVM's own maps tell them (agent_files.h) */
	rfd = jvm_chan_files_find(pid, nspid, &cf);
	if (rfd < 0) {
		errno = -rfd;
		return NULL;
	}
	/*
	 * The JVM's owner: /proc/<pid> belongs to its euid. Files of anybody else are not its
	 * agent's. Below its /tmp, with no symlink and no mount crossed, and nothing opened
	 * before it is known to be a regular file of that owner (safe_open.h). (Not the
	 * inode maps shows: on overlayfs that is the upper file's, not the one /tmp gives.)
	 */
	exp = (struct safe_expect){ .uid = st.st_uid, .one_link = true };
	rfd = safe_open_proc_tmp(pid, cf.ring, SAFE_RDWR, &exp, NULL);
	if (rfd < 0) {
		errno = -rfd;
		return NULL;
	}
	dfd = safe_open_proc_tmp(pid, cf.dict, 0, &exp, NULL);
	if (dfd < 0) {
		close(rfd);
		errno = -dfd;
		return NULL;
	}
	return agent_open_fds(rfd, dfd, st.st_uid, proc_start_mono_ns(pid));
}

void ja_blob_free(struct jvm_agent *a, struct jm_blob *b)
{
	size_t n = (size_t)b->n_pcs * sizeof(*b->pcs) + (size_t)b->n_chain * CHAIN_BYTES;

	ja_uncharge(a, n);
	n = n < a->tables_bytes ? n : a->tables_bytes;
	a->tables_bytes -= n;
	__atomic_sub_fetch(&ja_tables_bytes, n, __ATOMIC_RELAXED);
	free(b->pcs);
	free(b->chain);
	free(b->chain_bci);
	b->pcs = NULL;
	b->chain = NULL;
	b->chain_bci = NULL;
	b->n_pcs = b->n_chain = 0;
}

void ja_x_free(struct jvm_agent *a, struct jm_method_x *x)
{
	if (!x || x == &ja_x_none)
		return;
	ja_str_free(a, x->name);
	ja_uncharge(a, (size_t)x->n_lines * sizeof(*x->lines) + sizeof(*x));
	free(x->lines);
	ja_str_free(a, x->slash);
	ja_str_free(a, x->dotted);
	free(x);
}

void jvm_agent__free(struct jvm_agent *a)
{
	if (!a)
		return;
	if (a->ring_fd >= 0)
		close(a->ring_fd);
	if (a->dict_fd >= 0)
		close(a->dict_fd);
	for (size_t i = 0; i < a->cap_side; i++)
		ja_x_free(a, a->side[i].x);
	for (size_t i = 0; i < a->n_blobs; i++)
		ja_blob_free(a, &a->bpool[a->bkeys[i].idx]);
	for (size_t i = 0; i < a->n_threads; i++)
		ja_str_free(a, a->threads[i].name);
	for (struct jm_str *js = a->strs, *next; js; js = next) {
		next = js->next;
		free(js);
	}
	free(a->str_tab);
	/* what the arrays and indexes held (the maps' frees below give back nothing more) */
	ja_uncharge(a, a->bytes);
	hmap_free(&a->str_idx);
	free(a->methods);
	free(a->side);
	free(a->mcls);
	free(a->bkeys);
	free(a->bpool);
	free(a->tq);
	if (a->pcc_sets)
		ja_uncharge(a, PCC_BYTES);
	free(a->pcc_sets);
	hmap_free(&a->edges);
	free(a->threads);
	hmap_free(&a->thread_idx);
	free(a->classes);
	hmap_free(&a->class_idx);
	free(a->dbuf);
	free(a->rec);
	free(a->frames);
	free(a);
}

/* the ones the agent may choose; anything else (SIGKILL, SIGSTOP, ...) is refused */
static int signo_valid(__s32 signo)
{
	return signo == SIGURG || signo == SIGWINCH || (signo >= 32 && signo <= 64) ? signo : 0;
}

int jvm_agent__signo_polled(const struct jvm_agent *a)
{
	return signo_valid(a->signo_polled);
}

int jvm_agent__signo(const struct jvm_agent *a)
{
	__s32 signo;

	if (pread(a->ring_fd, &signo, sizeof(signo), offsetof(struct jp_ring_hdr, signo)) !=
	    (ssize_t)sizeof(signo))
		return 0;
	signo = __atomic_load_n(&signo, __ATOMIC_ACQUIRE);
	return signo_valid(signo);
}

__u64 jvm_agent__handler(const struct jvm_agent *a)
{
	__u64 handler;

	if (pread(a->ring_fd, &handler, sizeof(handler), offsetof(struct jp_ring_hdr, handler)) !=
	    (ssize_t)sizeof(handler))
		return 0;
	return handler;
}

/* a heap's range: reserved by HotSpot at most 2 GiB (ReservedCodeCacheSize) */
#define WALK_HEAP_MAX (4ull << 30)

int jvm_agent__walk(const struct jvm_agent *a, struct jp_jwalk *ret)
{
	struct jp_ring_walk w;

	if (pread(a->ring_fd, &w, sizeof(w), JP_RING_WALK_OFF) != (ssize_t)sizeof(w))
		return -EIO;
	if (w.magic != JP_RING_WALK_MAGIC)
		return -ENOENT;
	return jvm_walk_check(&w, ret);
}

int jvm_walk_check(const struct jp_ring_walk *wp, struct jp_jwalk *ret)
{
	struct jp_ring_walk w = *wp;

	if (!w.n_heaps || w.n_heaps > JP_RING_WALK_HEAPS || w.n_heaps > JP_JW_HEAPS)
		return -EPROTO;
	memset(ret, 0, sizeof(*ret));
	for (__u32 i = 0; i < w.n_heaps; i++) {
		__u64 lo = w.heaps[i].lo, hi = w.heaps[i].hi, seg = w.heaps[i].segmap;
		__u32 l2 = w.heaps[i].log2_seg;

		if (!lo || hi <= lo || hi - lo > WALK_HEAP_MAX || l2 < 4 || l2 > 16 || !seg ||
		    seg + ((hi - lo) >> l2) < seg)
			return -EPROTO;
		ret->heaps[i] = (struct jp_jwalk_heap){ .lo = lo, .hi = hi, .segmap = seg,
							.log2_seg = l2 };
	}
	/* offsets: BPF reads 8 bytes at most at each, inside the first JP_JW_BLOB_HDR */
	if (w.blob_name > JP_JW_BLOB_HDR - 8 || w.blob_frame_size > JP_JW_BLOB_HDR - 8 ||
	    w.blob_frame_complete > JP_JW_BLOB_HDR - 8 || w.blob_code > JP_JW_BLOB_HDR - 8 ||
	    w.code_is_offset > 1 || !w.heap_block || w.heap_block > 64 || w.method_const > 0xff8 ||
	    !w.const_size || w.const_size > 0xfff || w.const_code_size > 0xffe || !w.call_stub_ret ||
	    (w.frame_complete_size != 2 && w.frame_complete_size != 4) ||
	    w.wrapper_anchor > 0xf00 || w.anchor_sp > 0xf8 || w.anchor_fp > 0xf8 || w.anchor_pc > 0xf8 ||
	    (w.hb_length_size && ((w.hb_length_size != 4 && w.hb_length_size != 8) ||
				   w.hb_length + w.hb_length_size > w.heap_block ||
				   w.hb_used >= w.heap_block)))
		return -EPROTO;
	ret->n_heaps = w.n_heaps;
	ret->call_stub_ret = w.call_stub_ret;
	ret->heap_block = w.heap_block;
	ret->blob_name = w.blob_name;
	ret->blob_frame_size = w.blob_frame_size;
	ret->blob_frame_complete = w.blob_frame_complete;
	ret->blob_code = w.blob_code;
	ret->code_is_offset = w.code_is_offset;
	ret->method_const = w.method_const;
	ret->const_size = w.const_size;
	ret->const_code_size = w.const_code_size;
	ret->frame_complete_size = w.frame_complete_size;
	ret->wrapper_anchor = w.wrapper_anchor;
	ret->anchor_sp = w.anchor_sp;
	ret->anchor_fp = w.anchor_fp;
	ret->anchor_pc = w.anchor_pc;
	/* BPF reads at most JP_JW_HEAP_BLOCK bytes before the blob (HotSpot's: 8 or 16) */
	if (w.hb_length_size && w.heap_block <= JP_JW_HEAP_BLOCK) {
		ret->hb_length = w.hb_length;
		ret->hb_used = w.hb_used;
		ret->hb_length_size = w.hb_length_size;
	}
	return 0;
}

/* the ring ------------------------------------------------------------------- */

static int store_tail(struct jvm_agent *a)
{
	__u64 t = a->tail;

	if (t == a->tail_stored)
		return 0; /* nothing consumed since: a poll of an idle ring writes nothing */
	/* an aligned 8-byte store into the page the agent maps */
	if (pwrite(a->ring_fd, &t, sizeof(t), offsetof(struct jp_ring_hdr, tail)) !=
	    (ssize_t)sizeof(t))
		return -EIO;
	a->tail_stored = t;
	return 0;
}

/* the n frames after a record's fixed part of hdr_size bytes (checked to fit), into a->frames */
static void copy_frames(struct jvm_agent *a, size_t hdr_size, int n)
{
	for (int i = 0; i < n; i++) {
		struct jp_frame fr;

		memcpy(&fr, a->rec + hdr_size + (size_t)i * sizeof(fr), sizeof(fr));
		a->frames[i].method_id = fr.method_id;
		a->frames[i].bci = fr.bci;
	}
}

/*
 * The blocker's class name after a trace's n frames (JP_TRACE_F_BLOCKER), checked as the
 * agent checks it (1..JP_BLOCKER_MAX bytes inside the record, printable ASCII, none of
 * ";[." nor a '/' at either end) and interned; NULL, counted, when it is not one.
 */
static const char *trace_blocker(struct jvm_agent *a, const struct jp_trace_rec *r, __u32 len,
				 int n)
{
	size_t off = sizeof(*r) + (size_t)n * sizeof(struct jp_frame), blen = r->blocker_len;
	char name[JP_BLOCKER_MAX + 1];
	const char *s;

	if (!blen || blen > JP_BLOCKER_MAX || off + blen > len)
		goto out_bad;
	memcpy(name, a->rec + off, blen);
	if (name[0] == '/' || name[blen - 1] == '/')
		goto out_bad;
	for (size_t i = 0; i < blen; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c <= 0x20 || c >= 0x7f || c == ';' || c == '[' || c == '.')
			goto out_bad;
		/* a hidden class: "Foo$$Lambda+0x0000000801001234" in the JVM */
		if (c == '+')
			name[i] = '.';
	}
	s = ja_intern(a, name, jvm_agent__hidden_class_norm(name, blen));
	if (s)
		return s;
out_bad:
	a->blocker_bad++;
	return NULL;
}

static int deliver(struct jvm_agent *a, __u32 len, java_trace_fn fn, void *ctx)
{
	struct jp_trace_rec r;
	struct java_trace t;
	int n;

	if (len < sizeof(r)) {
		a->malformed++;
		return 0;
	}
	memcpy(&r, a->rec, sizeof(r));
	n = r.num_frames;
	if (n > 0 && (n > (int)JP_DEPTH_MAX || sizeof(r) + (size_t)n * sizeof(struct jp_frame) > len)) {
		a->malformed++;
		return 0;
	}
	copy_frames(a, sizeof(r), n);
	if (n > 0)
		ja_classify(a, r.pc, a->frames, n);
	t.time_ns = r.time_ns;
	t.tid = r.tid;
	t.num_frames = n;
	t.pc = r.pc;
	t.flags = r.flags;
	t.frames = a->frames;
	t.blocker = n > 0 && (r.flags & JP_TRACE_F_BLOCKER) ? trace_blocker(a, &r, len, n) : NULL;
	return fn ? fn(ctx, &t) : 0;
}

static int deliver_event(struct jvm_agent *a, __u32 len, java_event_fn fn, void *ctx)
{
	struct jp_event_rec r;
	struct java_event e;
	int n;

	if (len < sizeof(r)) {
		a->malformed++;
		return 0;
	}
	memcpy(&r, a->rec, sizeof(r));
	n = r.num_frames;
	if (n < 0)
		n = 0;
	if (r.kind == 0 || r.kind >= JP_AEV_MAX || n > (int)JP_DEPTH_MAX ||
	    sizeof(r) + (size_t)n * sizeof(struct jp_frame) > len) {
		a->malformed++;
		return 0;
	}
	if (!fn) {
		a->events_unread++;
		return 0;
	}
	if (r.time_ns < a->events_since_ns)
		return 0; /* written for an earlier reader, before its agent switched it off */
	copy_frames(a, sizeof(r), n);
	/* GetStackTrace frames: no PC, so no JIT/inlined split; interpreted or native */
	for (int i = 0; i < n; i++)
		a->frames[i].kind = a->frames[i].bci == -3 ? JP_FK_NATIVE : JP_FK_INTERP;
	memset(&e, 0, sizeof(e));
	e.time_ns = r.time_ns;
	e.tid = r.tid;
	e.kind = r.kind;
	e.size = r.size;
	e.weight = r.weight;
	e.duration_ns = r.duration_ns;
	e.class_id = r.class_id;
	e.tag = r.tag;
	e.num_frames = n;
	e.frames = a->frames;
	return fn(ctx, &e);
}

int jvm_agent__poll(struct jvm_agent *a, java_trace_fn fn, void *ctx)
{
	return jvm_agent__poll_events(a, fn, NULL, ctx);
}

int jvm_agent__poll_events(struct jvm_agent *a, java_trace_fn fn, java_event_fn efn, void *ctx)
{
	/* the header from the signal word to the head: one read a poll for both */
	const size_t from = offsetof(struct jp_ring_hdr, signo);
	unsigned char hb[offsetof(struct jp_ring_hdr, head) + sizeof(__u64) - from];
	__u64 head, mask = a->data_size - 1, now;
	int count = 0, err = 0;

	if (pread(a->ring_fd, hb, sizeof(hb), (off_t)from) != (ssize_t)sizeof(hb)) {
		a->signo_polled = 0;
		return -EIO;
	}
	memcpy(&a->signo_polled, hb, sizeof(a->signo_polled));
	memcpy(&head, hb + (offsetof(struct jp_ring_hdr, head) - from), sizeof(head));
	head = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
	/*
	 * The dictionary's size looked at when records came, when the last refresh left some
	 * unread, or every DICT_POLL_IDLE_NS: a lookup that meets an unknown id reads it at
	 * once (ja_lookup_refresh), and samples waiting for a name have the join read it every
	 * round (jvm_agent__dict_refresh)
	 */
	now = mono_ns();
	if (head != a->tail || !a->dict_seen_size || now - a->dict_poll_ns >= DICT_POLL_IDLE_NS) {
		a->dict_poll_ns = now;
		ja_dict_refresh(a);
	}
	if (head - a->tail > a->data_size) {
		/* impossible for a sane producer (or lapped before we first looked): resync */
		a->malformed++;
		a->tail = head;
		return store_tail(a);
	}
	/*
	 * one record is 16 bytes at least: at most data_size/16 per call, and POLL_RECORDS_MAX
	 * (a 64 MiB ring of 16-byte pads would be 4 million reads in one call)
	 */
	for (__u32 i = 0; a->tail != head && i < a->data_size / 16 && i < POLL_RECORDS_MAX; i++) {
		__u64 off = a->tail & mask;
		struct jp_rec_hdr h;

		if (pread(a->ring_fd, &h, sizeof(h), (off_t)(a->hdr_size + off)) !=
		    (ssize_t)sizeof(h)) {
			err = -EIO;
			break;
		}
		if (h.seq != a->tail)
			break; /* reserved, not committed yet */
		__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the body was written before seq */
		/*
		 * Past the head read above: that head was the end of a reservation the agent
		 * shrank since (jvmagent/stacks.c shrink), and this record was reserved after
		 * it, across that old end. The head now says whether it was written; taken as
		 * malformed, the tail went into the middle of a record and reading stopped
		 * for good (a fresh-clone run: 6,754 traces lost to a full ring in 5 s).
		 */
		if (h.len > head - a->tail &&
		    pread(a->ring_fd, &head, sizeof(head), offsetof(struct jp_ring_hdr, head)) !=
			    (ssize_t)sizeof(head)) {
			err = -EIO;
			break;
		}
		if (h.len < sizeof(h) || h.len % 16 || off + h.len > a->data_size ||
		    h.len > head - a->tail) {
			a->malformed++;
			a->tail = head;
			break;
		}
		if (h.type == JP_REC_TRACE) {
			if (h.len > TRACE_REC_MAX ||
			    pread(a->ring_fd, a->rec, h.len, (off_t)(a->hdr_size + off)) !=
				    (ssize_t)h.len) {
				a->malformed++;
			} else {
				err = deliver(a, h.len, fn, ctx);
				count++;
			}
		} else if (h.type == JP_REC_EVENT) {
			if (!efn) {
				a->events_unread++; /* not asked for: not even read */
				count++;
			} else if (h.len > TRACE_REC_MAX ||
			    pread(a->ring_fd, a->rec, h.len, (off_t)(a->hdr_size + off)) !=
				    (ssize_t)h.len) {
				a->malformed++;
			} else {
				err = deliver_event(a, h.len, efn, ctx);
				count++;
			}
		} else if (h.type != JP_REC_PAD) {
			a->malformed++;
		}
		a->tail += h.len;
		if (err < 0)
			break;
	}
	if (store_tail(a) && !err)
		err = -EIO;
	return err < 0 ? err : count;
}

__u64 jvm_agent__unread(const struct jvm_agent *a)
{
	__u64 head;

	if (pread(a->ring_fd, &head, sizeof(head), offsetof(struct jp_ring_hdr, head)) !=
	    (ssize_t)sizeof(head))
		return 0;
	return head - a->tail <= a->data_size ? head - a->tail : 0;
}

void jvm_agent__set_max_bytes(struct jvm_agent *a, __u64 max_bytes)
{
	a->max_bytes = max_bytes;
}

void jvm_agent__stats(const struct jvm_agent *a, struct jvm_agent_stats *ret)
{
	struct jp_ring_hdr h;

	memset(ret, 0, sizeof(*ret));
	ret->malformed = a->malformed;
	ret->over_budget = a->over_budget;
	ret->bytes = a->bytes;
	ret->pc_lookups = a->pcc_hits + a->pcc_misses;
	ret->pc_cached = a->pcc_hits;
	if (pread(a->ring_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return;
	/* since this reader connected; a counter that went back (untrusted) counts 0 */
#define SINCE(f) (h.f > a->base.f ? h.f - a->base.f : 0)
	ret->traces = SINCE(traces);
	ret->ring_full = SINCE(ring_full);
	ret->not_java_thread = SINCE(not_java_thread);
	ret->busy = SINCE(busy);
	ret->faults = SINCE(faults);
	ret->threads_full = SINCE(threads_full);
	ret->events = SINCE(events);
	ret->events_dropped = SINCE(events_dropped);
	ret->events_unread = a->events_unread;
	ret->fallback_tried = SINCE(fallback_tried);
	ret->fallback_ok = SINCE(fallback_ok);
	ret->fallback_ns = SINCE(fallback_ns);
	ret->stub_tried = SINCE(stub_tried);
	ret->stub_ok = SINCE(stub_ok);
	ret->stub_gaveup = SINCE(stub_gaveup);
	ret->handler_ns = SINCE(handler_ns);
	ret->handler_timed = SINCE(handler_timed);
	ret->events_ns = SINCE(events_ns);
	ret->ring_flags = h.flags;
	ret->blocker_named = SINCE(blocker_named);
	ret->blocker_none = SINCE(blocker_none);
	ret->blocker_failed = SINCE(blocker_failed);
	ret->blocker_bad = a->blocker_bad;
	for (int i = 0; i < JP_AGCT_CODES && i < 12; i++)
		ret->agct_err[i] = SINCE(agct_err[i]);
#undef SINCE
}

const char *java_trace_err_str(int code)
{
	/* HotSpot prims/forte.cpp; 0 is "no Java frame" there, not an error */
	switch (code) {
	case 0:
		return "no Java frame";
	case -1:
		return "no class load (jmethodIDs missing)";
	case -2:
		return "GC active";
	case -3:
		return "unknown, not Java";
	case -4:
		return "not walkable, not Java";
	case -5:
		return "unknown, Java";
	case -6:
		return "not walkable, Java";
	case -7:
		return "unknown thread state";
	case -8:
		return "thread exiting";
	case -9:
		return "deoptimizing";
	case -10:
		return "at safepoint";
	case -11:
		return "safepoint (JDK-specific)";
	case JAVA_TRACE_ERR_NOT_JAVA_THREAD:
		return "not a Java thread";
	case JAVA_TRACE_ERR_BUSY:
		return "agent busy";
	case JAVA_TRACE_ERR_FAULT:
		return "stack walk faulted (caught)";
	default:
		return "unknown error";
	}
}

void jvm_agent__all_tables(__u64 *ret_bytes, __u64 *ret_evicted)
{
	*ret_bytes = __atomic_load_n(&ja_tables_bytes, __ATOMIC_RELAXED);
	*ret_evicted = __atomic_load_n(&ja_tables_evicted, __ATOMIC_RELAXED);
}

__u64 jvm_agent__all_bytes(void)
{
	return __atomic_load_n(&ja_agents_bytes, __ATOMIC_RELAXED);
}

/* the reader protocol ------------------------------------------------------ */

/* one aligned 8-byte store into the header page the agent maps, as store_tail does */
static int store_hdr_u64(struct jvm_agent *a, size_t off, __u64 v)
{
	return pwrite(a->ring_fd, &v, sizeof(v), (off_t)off) == (ssize_t)sizeof(v) ? 0 : -EIO;
}

int jvm_agent__heartbeat(struct jvm_agent *a, __u64 now_ns, __u32 want, __u32 alloc_interval)
{
	static const __u32 bits[JP_RING_WANT_MAX] = {
		[JP_RING_WANT_LOCK] = JP_RING_F_EV_LOCK,
		[JP_RING_WANT_ALLOC] = JP_RING_F_EV_ALLOC,
		[JP_RING_WANT_LIVE] = JP_RING_F_EV_LIVE,
	};
	int err = 0;

	/* the interval first: the agent reads it when a stamp tells it to switch on */
	if (want & (JP_RING_F_EV_ALLOC | JP_RING_F_EV_LIVE) &&
	    pwrite(a->ring_fd, &alloc_interval, sizeof(alloc_interval),
		   offsetof(struct jp_ring_hdr, want_alloc_interval)) !=
		    (ssize_t)sizeof(alloc_interval))
		err = -EIO;
	/* only the events wanted: another reader's stamps of the others stay untouched */
	for (int i = 0; i < JP_RING_WANT_MAX; i++)
		if (want & bits[i] &&
		    store_hdr_u64(a, offsetof(struct jp_ring_hdr, want_ns) + (size_t)i * 8, now_ns))
			err = -EIO;
	if (store_hdr_u64(a, offsetof(struct jp_ring_hdr, reader_ns), now_ns))
		err = -EIO;
	return err;
}

void jvm_agent__events_since(struct jvm_agent *a, __u64 since_ns)
{
	a->events_since_ns = since_ns;
}

int jvm_agent__events_str(const struct jvm_agent *a, char *buf, size_t size)
{
	const __u32 all = JP_RING_F_EV_LOCK | JP_RING_F_EV_ALLOC | JP_RING_F_EV_LIVE;
	struct jp_ring_hdr h;
	__u32 on;

	if (pread(a->ring_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return -EIO;
	/* an agent before the protocol: what it sends, on since it was given them */
	on = (h.flags & JP_RING_F_READER ? h.ev_on : h.flags) & all;
	snprintf(buf, size, "%s%s%s%s%s", on ? "" : "-", on & JP_RING_F_EV_LOCK ? ",lock" : "",
		 on & JP_RING_F_EV_ALLOC ? ",alloc" : "", on & JP_RING_F_EV_LIVE ? ",live" : "",
		 on && !(h.flags & JP_RING_F_READER) ? "!" : "");
	if (buf[0] == ',')
		memmove(buf, buf + 1, strlen(buf)); /* with its NUL */
	return 0;
}

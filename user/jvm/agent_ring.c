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

#include "jvm/agent_files.h"
#include "jvm/agent_ring.h"
#include "log.h"
#include "util/procfs.h"
#include "ring.h"
#include "util/hashkey.h"
#include "util/safe_open.h"

#define TRACE_REC_MAX (sizeof(struct jp_trace_rec) + JP_DEPTH_MAX * sizeof(struct jp_frame))
#define INLINE_MAX    64 /* deepest inline chain we believe */
#define CHAIN_BYTES   (sizeof(__u64) + sizeof(__s32)) /* a chain entry: method and bci */
/*
 * Entries of a method's line table we believe: a method's bytecode is at most 65,535
 * bytes (JVMS 4.7.3), so no real table has more distinct starts. A larger one is ignored
 * (counted over budget), its frames go without line numbers.
 */
#ifndef JP_FUZZ_BUDGETS
#define JM_LINES_MAX 65536u
#else /* fuzzing: small enough for a fuzzer's inputs to reach */
#define JM_LINES_MAX 64u
#endif

/*
 * What one JVM's dictionary may make us hold (methods, strings, line tables, compiled
 * code with its inline tables, threads, indexes), and all JVMs together. A record that
 * would go past is dropped and counted; what was read stays usable. A large real
 * application (300k methods, 100k compiled blobs) needs well under a tenth of this.
 */
#define AGENT_MAX_BYTES	 (256ull << 20)
#define AGENTS_MAX_BYTES (1ull << 30)
/* dictionary bytes parsed per refresh, so one huge dictionary never stalls the poll loop */
#define DICT_REFRESH_MAX (32ull << 20)
/*
 * ...and bytes moved to keep the compiled-code table sorted: inserting in descending
 * address order costs a memmove of the whole table per record, which a JVM's user could
 * use to stall jprof. Past this a refresh stops; the rest waits for the next poll.
 */
#define DICT_REFRESH_MOVES (64ull << 20)
#define DBUF_KEEP	 (1u << 20) /* a larger record buffer is freed after use */
#define DICT_CHUNK	 (64u << 10) /* dictionary bytes read at once: records are small */
/* lookups' refreshes of the dictionary: LOOKUP_REFRESH_MAX bytes per LOOKUP_WINDOW_NS */
#define LOOKUP_REFRESH_MAX (1u << 20)
#define LOOKUP_WINDOW_NS   (10ull * 1000 * 1000)
/* threads the dictionary does not name, remembered so they do not look at the file again */
#define THREAD_MISS_SLOTS 256u
/* ring records looked at in one poll: 16 times a join round's, a few ms of reads */
#define POLL_RECORDS_MAX 65536u

/* charged by every agent, released by jvm_agent__free (agents may live in other threads) */
static __u64 agents_bytes;

/* open-addressing map of (k1, k2) -> index, linear probing, grown at half load */
struct kv_entry {
	__u64 k1, k2;
	__u32 val;
	__u32 used;
};
struct kv_map {
	struct kv_entry *e;
	size_t cap, n;
};

struct jm_line {
	__s32 bci, line;
};

/*
 * A method as the dictionary announced it. Most of a JVM's tens of thousands of methods
 * never appear in a sample: only the class (interned, shared by its methods) and where
 * the method's entry lies in the dictionary file are kept; its name and line table are
 * read from the file the first time a frame needs them (struct jm_method_x).
 */
struct jm_method_x {
	char *name; /* "method" */
	struct jm_line *lines;
	__u32 n_lines;
	char *slash, *dotted; /* built on first use */
};

/* a class record's names, interned, shared by its methods */
struct jm_cls {
	const char *cls; /* "pkg/Class" */
	const char *src; /* "Class.java" */
};

/*
 * 16 bytes, stored in an open-addressing table keyed by id (the table is the storage: no
 * second index), at most 3/4 full: ~21-43 bytes per method a JVM announces. What only
 * some methods have (a name read, live compiled code) is in a side table (jm_side).
 */
struct jm_method {
	__u64 id;  /* 0: empty slot */
	__u32 off; /* the method's entry in the dictionary file (a method past 4 GiB is dropped) */
	__u32 cls; /* index into jvm_agent.mcls */
};

/* the methods a frame named or that have compiled code: a few thousand of 25,000 */
struct jm_side {
	__u64 id;		/* 0: empty slot */
	struct jm_method_x *x;	/* NULL until a frame needs it; &x_none when unreadable */
	__u32 n_blobs;		/* live compiled blobs whose root is this method */
};

static struct jm_method_x x_none; /* a method whose entry could not be read again */

struct jm_pc {
	__u64 pc; /* first: key_lower_bound */
	__u32 first, n; /* into jm_blob.chain, innermost first */
};

/*
 * A compiled blob. Its inline table (pcs and their chains) is most of what a JIT-heavy
 * JVM's dictionary holds (8 MB of javac's 12), yet few blobs are ever sampled: the table
 * is checked and its (callee, caller) pairs taken when the record comes, and only where
 * the record lies is kept; the table is read again the first time a sample's PC falls
 * in the blob (blob_pcs).
 */
struct jm_blob {
	__u64 addr, end;
	__u64 method_id; /* 0: a stub */
	__u64 off;	 /* its code-load record's body in the dictionary file */
	struct jm_pc *pcs;
	__u64 *chain;
	__s32 *chain_bci; /* the bci of each chain entry */
	__u32 len;	 /* the body's length; 0: no inline table, or it could not be read */
	__u32 n_pcs, n_chain; /* of the table read */
	int is_interp;	 /* the template interpreter */
	const char *stub; /* a stub's name (interned), NULL for a method's code */
};

struct jm_bkey {
	__u64 addr; /* first: key_lower_bound */
	__u32 size, idx; /* idx: into jvm_agent.bpool */
};
#define BFREE_NONE UINT32_MAX

struct jm_thread {
	__u32 tid;
	char *name;
};

/* an interned string: class signatures and source file names are shared by all methods */
struct jm_class {
	__u64 id;
	const char *name; /* interned JNI signature */
};

struct jm_str {
	struct jm_str *next; /* all of them, for freeing */
	size_t len;
	char s[];
};

struct jvm_agent {
	int ring_fd, dict_fd;
	__u64 bytes;	   /* held for this JVM, against max_bytes and agents_bytes */
	__u64 max_bytes;   /* AGENT_MAX_BYTES but in tests */
	__u64 over_budget; /* dictionary records (or parts) dropped by a budget */
	__u64 moved;	   /* bytes memmoved in the blob table during this refresh */
	__u32 hdr_size, data_size, max_depth;
	__u64 tail;
	__u64 start_ns; /* the agent's start (CLOCK_MONOTONIC), from the ring header */
	__u64 malformed;
	unsigned char *rec;	 /* one trace record, copied out */
	struct java_frame *frames;
	/* dictionary */
	__u64 dict_off;
	__u64 dict_seen_size;
	int dict_broken;
	unsigned char *dbuf;
	size_t dbuf_cap;
	__u64 win_off;	/* dbuf holds the dictionary's bytes [win_off, win_off + win_len) */
	size_t win_len; /* 0 outside a refresh */
	__u64 rec_off;			/* the record being parsed: its body's offset in the file */
	const unsigned char *rec_body;	/* and where that body is in memory */
	struct jm_method *methods; /* open addressing by id, cap_methods a power of 2 */
	size_t n_methods, cap_methods;
	struct jm_side *side; /* the same, by id */
	size_t n_side, cap_side;
	struct jm_cls *mcls;
	size_t n_mcls, cap_mcls;
	/*
	 * Compiled blobs: the index sorted by address (16 bytes an entry: code announced out
	 * of address order moves it, not the blobs), the blobs in a pool that never moves
	 */
	struct jm_bkey *bkeys; /* sorted by addr, non-overlapping */
	size_t n_blobs, cap_bkeys;
	struct jm_blob *bpool;
	size_t n_bpool, cap_bpool;
	__u32 bfree; /* a free pool slot (its off links the next), BFREE_NONE none */
	struct kv_map edges; /* (callee, caller) pairs seen in inline chains */
	struct jm_thread *threads;
	size_t n_threads, cap_threads;
	struct kv_map thread_idx;
	struct jm_class *classes; /* JP_DICT_CLASS_ID: the class ids of events */
	size_t n_classes, cap_classes;
	struct kv_map class_idx;
	__u64 events_unread; /* event records polled by a caller that takes none */
	__u64 lr_window_ns, lr_bytes; /* lookup_refresh's window and bytes parsed in it */
	/* threads the dictionary did not name, and its size then (not looked for again before
	 * it grows): a GC worker's samples ask at each sample */
	struct { __u32 tid; __u64 seen; } tn_miss[THREAD_MISS_SLOTS];
	struct jm_str *strs;
	struct kv_map str_idx; /* (hash, len) -> index in str_tab */
	struct jm_str **str_tab;
	size_t n_strs, cap_strs;
	__u64 events_since_ns; /* event records older than this are skipped (another reader's) */
	/*
	 * The agent's counters when this reader connected: they count for the JVM's life (an
	 * agent serves one recording after another), the report counts for this recording
	 */
	struct jp_ring_hdr base;
};

/* budget -------------------------------------------------------------------- */

/* 0, or -ENOSPC (counted) when n more bytes would pass this JVM's or the global budget */
static int charge(struct jvm_agent *a, size_t n)
{
	__u64 total;

	if (a->bytes + n > a->max_bytes) {
		a->over_budget++;
		return -ENOSPC;
	}
	total = __atomic_add_fetch(&agents_bytes, n, __ATOMIC_RELAXED);
	if (total > AGENTS_MAX_BYTES) {
		__atomic_sub_fetch(&agents_bytes, n, __ATOMIC_RELAXED);
		a->over_budget++;
		return -ENOSPC;
	}
	a->bytes += n;
	return 0;
}

static void uncharge(struct jvm_agent *a, size_t n)
{
	if (n > a->bytes)
		n = a->bytes;
	a->bytes -= n;
	__atomic_sub_fetch(&agents_bytes, n, __ATOMIC_RELAXED);
}

/* kv map ------------------------------------------------------------------- */

static size_t kv_hash(__u64 k1, __u64 k2)
{
	/* keyed: thread and class ids, tags, string hashes are the JVM's user's to choose */
	return (size_t)hash_keyed(k1 ^ hash_keyed(k2 + 0x632be59bd9b4e019ull));
}

static struct kv_entry *kv_slot(const struct kv_map *m, __u64 k1, __u64 k2)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = kv_hash(k1, k2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct kv_entry *e = &m->e[i];

		if (!e->used || (e->k1 == k1 && e->k2 == k2))
			return e;
	}
}

static int kv_get(const struct kv_map *m, __u64 k1, __u64 k2, __u32 *ret)
{
	struct kv_entry *e = kv_slot(m, k1, k2);

	if (!e || !e->used)
		return -ENOENT;
	*ret = e->val;
	return 0;
}

static int kv_put(struct jvm_agent *a, struct kv_map *m, __u64 k1, __u64 k2, __u32 val)
{
	struct kv_entry *e;

	if ((m->n + 1) * 2 > m->cap) {
		struct kv_map g = { .cap = m->cap ? m->cap * 2 : 256 };

		if (charge(a, (g.cap - m->cap) * sizeof(*g.e)))
			return -ENOSPC;
		g.e = calloc(g.cap, sizeof(*g.e));
		if (!g.e) {
			uncharge(a, (g.cap - m->cap) * sizeof(*g.e));
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->cap; i++) {
			if (m->e[i].used) {
				*kv_slot(&g, m->e[i].k1, m->e[i].k2) = m->e[i];
				g.n++;
			}
		}
		free(m->e);
		*m = g;
	}
	e = kv_slot(m, k1, k2);
	if (!e->used) {
		e->used = 1;
		e->k1 = k1;
		e->k2 = k2;
		m->n++;
	}
	e->val = val;
	return 0;
}

static int grow(struct jvm_agent *a, void **p, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 64;
	void *q;

	if (n < *cap)
		return 0;
	if (c > SIZE_MAX / elem || charge(a, (c - *cap) * elem))
		return -ENOSPC;
	q = realloc(*p, c * elem);
	if (!q) {
		uncharge(a, (c - *cap) * elem);
		return -ENOMEM;
	}
	*p = q;
	*cap = c;
	return 0;
}

/* a bounded cursor over a copied-out record ------------------------------- */

struct cur {
	const unsigned char *p;
	size_t left;
	int bad;
};

static void cur_get(struct cur *c, void *dst, size_t n)
{
	if (c->bad || c->left < n) {
		c->bad = 1;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
}

static __u64 cur_u64(struct cur *c)
{
	__u64 v;

	cur_get(c, &v, sizeof(v));
	return v;
}

static __u32 cur_u32(struct cur *c)
{
	__u32 v;

	cur_get(c, &v, sizeof(v));
	return v;
}

static __u16 cur_u16(struct cur *c)
{
	__u16 v;

	cur_get(c, &v, sizeof(v));
	return v;
}

static void copy_clean(char *dst, const unsigned char *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i] < 0x20 || src[i] == 0x7f ? '?' : (char)src[i];
	dst[n] = '\0';
}

/*
 * A NUL-terminated copy, charged to a; control characters become '?' (names end up in
 * text outputs). Free it with str_free().
 */
static char *cur_str(struct jvm_agent *a, struct cur *c, size_t n)
{
	char *s;

	if (c->bad || c->left < n) {
		c->bad = 1;
		return NULL;
	}
	if (charge(a, n + 1)) {
		c->bad = 1;
		return NULL;
	}
	s = malloc(n + 1);
	if (!s) {
		uncharge(a, n + 1);
		c->bad = 1;
		return NULL;
	}
	copy_clean(s, c->p, n);
	c->p += n;
	c->left -= n;
	return s;
}

static void str_free(struct jvm_agent *a, char *s)
{
	if (!s)
		return;
	uncharge(a, strlen(s) + 1);
	free(s);
}

static __u64 str_hash(const unsigned char *p, size_t n)
{
	__u64 h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * The interned copy of the n cleaned bytes at s, made once per distinct string for the
 * agent's lifetime; NULL when out of budget.
 */
static const char *intern(struct jvm_agent *a, const char *s, size_t n)
{
	__u64 h = str_hash((const unsigned char *)s, n);
	struct jm_str *js = NULL;
	__u32 i;

	if (!kv_get(&a->str_idx, h, n, &i) && i < a->n_strs && a->str_tab[i]->len == n &&
	    !memcmp(a->str_tab[i]->s, s, n))
		return a->str_tab[i]->s;
	if (!grow(a, (void **)&a->str_tab, &a->cap_strs, a->n_strs, sizeof(*a->str_tab)) &&
	    !charge(a, sizeof(*js) + n + 1)) {
		js = malloc(sizeof(*js) + n + 1);
		if (!js)
			uncharge(a, sizeof(*js) + n + 1);
	}
	if (!js)
		return NULL;
	memcpy(js->s, s, n);
	js->s[n] = '\0';
	js->len = n;
	js->next = a->strs;
	a->strs = js;
	/* a hash collision keeps the older entry indexed; the new string is still valid */
	if (kv_get(&a->str_idx, h, n, &i) && !kv_put(a, &a->str_idx, h, n, (__u32)a->n_strs))
		a->str_tab[a->n_strs++] = js;
	return js->s;
}

/*
 * The cleaned copy of the n bytes at the cursor in a malloc'd buffer, the cursor past
 * them; NULL (c->bad set) when they are not there or memory is short.
 */
static char *cur_take(struct cur *c, size_t n)
{
	char *tmp;

	if (c->bad || c->left < n || !(tmp = malloc(n + 1))) {
		c->bad = 1;
		return NULL;
	}
	copy_clean(tmp, c->p, n);
	c->p += n;
	c->left -= n;
	return tmp;
}

/* the interned copy of n bytes at the cursor (cleaned as cur_str does); NULL, c->bad set */
static const char *cur_istr(struct jvm_agent *a, struct cur *c, size_t n)
{
	char *tmp = cur_take(c, n);
	const char *s = tmp ? intern(a, tmp, n) : NULL;

	free(tmp);
	if (!s)
		c->bad = 1;
	return s;
}

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
	a->tail = h.tail;
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

static void blob_free(struct jvm_agent *a, struct jm_blob *b)
{
	uncharge(a, (size_t)b->n_pcs * sizeof(*b->pcs) + (size_t)b->n_chain * CHAIN_BYTES);
	free(b->pcs);
	free(b->chain);
	free(b->chain_bci);
}

static void x_free(struct jvm_agent *a, struct jm_method_x *x)
{
	if (!x || x == &x_none)
		return;
	str_free(a, x->name);
	uncharge(a, (size_t)x->n_lines * sizeof(*x->lines) + sizeof(*x));
	free(x->lines);
	str_free(a, x->slash);
	str_free(a, x->dotted);
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
		x_free(a, a->side[i].x);
	for (size_t i = 0; i < a->n_blobs; i++)
		blob_free(a, &a->bpool[a->bkeys[i].idx]);
	for (size_t i = 0; i < a->n_threads; i++)
		str_free(a, a->threads[i].name);
	for (struct jm_str *js = a->strs, *next; js; js = next) {
		next = js->next;
		free(js);
	}
	free(a->str_tab);
	free(a->str_idx.e);
	/* what the arrays and indexes held */
	uncharge(a, a->bytes);
	free(a->methods);
	free(a->side);
	free(a->mcls);
	free(a->bkeys);
	free(a->bpool);
	free(a->edges.e);
	free(a->threads);
	free(a->thread_idx.e);
	free(a->classes);
	free(a->class_idx.e);
	free(a->dbuf);
	free(a->rec);
	free(a->frames);
	free(a);
}

int jvm_agent__signo(const struct jvm_agent *a)
{
	__s32 signo;

	if (pread(a->ring_fd, &signo, sizeof(signo), offsetof(struct jp_ring_hdr, signo)) !=
	    (ssize_t)sizeof(signo))
		return 0;
	signo = __atomic_load_n(&signo, __ATOMIC_ACQUIRE);
	/* the ones the agent may choose; anything else (SIGKILL, SIGSTOP, ...) is refused */
	return signo == SIGURG || signo == SIGWINCH || (signo >= 32 && signo <= 64) ? signo : 0;
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

	if (nc > SIZE_MAX / esize / 2 || charge(a, (nc - *cap) * esize))
		return -ENOSPC;
	t = calloc(nc, esize);
	if (!t) {
		uncharge(a, (nc - *cap) * esize);
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

static struct jm_method *method_find(const struct jvm_agent *a, __u64 id)
{
	return id_find(a->methods, a->cap_methods, sizeof(*a->methods), id);
}

static struct jm_side *side_find(const struct jvm_agent *a, __u64 id)
{
	return id_find(a->side, a->cap_side, sizeof(*a->side), id);
}

/* id's side entry, added when new; NULL when a budget or memory says no */
static struct jm_side *side_get(struct jvm_agent *a, __u64 id)
{
	struct jm_side *e = side_find(a, id);

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

	m.id = cur_u64(c);
	name_len = cur_u16(c);
	msig_len = cur_u16(c);
	n_lines = cur_u32(c);
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
	old = method_find(a, m.id);
	if (old) {
		/* seen before (classes are dumped again at start): the newest wins */
		side = side_find(a, m.id);
		if (side) {
			x_free(a, side->x);
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
static __u32 lines_load(struct jm_line *lines, struct cur *c, __u32 n)
{
	struct jm_line_at *t = malloc((size_t)n * sizeof(*t));
	bool sorted = true;
	__u32 k = 0;

	for (__u32 i = 0; i < n; i++) {
		lines[i].bci = (__s32)cur_u32(c);
		lines[i].line = (__s32)cur_u32(c);
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
static struct jm_method_x *method_x(struct jvm_agent *a, struct jm_method *m)
{
	unsigned char hdr[16], *body = NULL;
	struct jm_method_x *x = NULL;
	__u16 name_len, msig_len;
	__u32 n_lines;
	size_t len;
	struct cur c;
	__u64 id;

	struct jm_side *side = side_get(a, m->id);

	if (!side)
		return NULL;
	if (side->x)
		return side->x == &x_none ? NULL : side->x;
	side->x = &x_none; /* until it is read */
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
	if (charge(a, sizeof(*x) + len)) /* the read buffer, given back below */
		return NULL;
	body = malloc(len);
	x = calloc(1, sizeof(*x));
	if (!body || !x ||
	    pread(a->dict_fd, body, len, (off_t)(m->off + sizeof(hdr))) != (ssize_t)len)
		goto out;
	c = (struct cur){ .p = body, .left = len };
	x->name = cur_str(a, &c, name_len);
	c.p += msig_len;
	c.left -= msig_len;
	if (!c.bad && n_lines && !charge(a, (size_t)n_lines * sizeof(*x->lines))) {
		x->lines = malloc((size_t)n_lines * sizeof(*x->lines));
		x->n_lines = x->lines ? lines_load(x->lines, &c, n_lines) : 0;
		uncharge(a, (size_t)(n_lines - x->n_lines) * sizeof(*x->lines));
		if (!x->n_lines) {
			free(x->lines);
			x->lines = NULL;
		} else if (x->n_lines < n_lines) {
			/* equal bcis made fewer: x_free gives back what n_lines says */
			struct jm_line *p = realloc(x->lines, (size_t)x->n_lines * sizeof(*p));

			if (p)
				x->lines = p;
		}
	}
	if (!x->name)
		goto out;
	uncharge(a, len);
	free(body);
	side->x = x;
	return x;
out:
	uncharge(a, len);
	free(body);
	if (x) {
		str_free(a, x->name);
		uncharge(a, (size_t)x->n_lines * sizeof(*x->lines));
		free(x->lines);
		free(x);
	}
	uncharge(a, sizeof(*x));
	return NULL;
}

/* "Lpkg/Class;" is interned as "pkg/Class" (a hidden class without its address) */
static const char *cur_class(struct jvm_agent *a, struct cur *c, size_t n)
{
	const char *cls;
	char *tmp;

	if (c->bad || c->left < n || n < 2 || c->p[0] != 'L' || c->p[n - 1] != ';')
		return cur_istr(a, c, n);
	tmp = cur_take(c, n);
	if (!tmp)
		return NULL;
	cls = intern(a, tmp + 1, jvm_agent__hidden_class_norm(tmp + 1, n - 2));
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
	__u16 sig_len = cur_u16(c), src_len = cur_u16(c);
	__u32 n = cur_u32(c);
	const char *cls = cur_class(a, c, sig_len);
	const char *src = cur_istr(a, c, src_len);
	int err = c->bad || !cls ? -EINVAL : 0;
	__u32 ci = (__u32)a->n_mcls;

	if (!err && a->n_mcls && a->mcls[ci - 1].cls == cls && a->mcls[ci - 1].src == src) {
		ci--; /* the same class again (dumped again at start): one pair */
	} else if (!err) {
		if (a->n_mcls >= UINT32_MAX ||
		    grow(a, (void **)&a->mcls, &a->cap_mcls, a->n_mcls, sizeof(*a->mcls)))
			return -ENOSPC;
		a->mcls[a->n_mcls++] = (struct jm_cls){ cls, src };
	}
	/* each method takes 16 bytes at least: n cannot exceed what is there */
	for (__u32 i = 0; !err && i < n; i++)
		err = parse_method(a, c, ci);
	return err;
}

/*
 * The first of n sorted entries of size bytes whose key (a __u64, the entry's first
 * member: jm_bkey.addr, jm_pc.pc) is at or after key; n: none
 */
static size_t key_lower_bound(const void *arr, size_t n, size_t size, __u64 key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (*(const __u64 *)((const char *)arr + mid * size) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t blob_lower_bound(const struct jvm_agent *a, __u64 addr)
{
	return key_lower_bound(a->bkeys, a->n_blobs, sizeof(*a->bkeys), addr);
}

static struct jm_blob *blob_at(const struct jvm_agent *a, size_t i)
{
	return &a->bpool[a->bkeys[i].idx];
}

static __u64 bkey_end(const struct jm_bkey *k)
{
	return k->addr + k->size;
}

static void blob_remove(struct jvm_agent *a, size_t i)
{
	struct jm_blob *b = blob_at(a, i);
	struct jm_side *m = side_find(a, b->method_id);

	if (m && m->n_blobs)
		m->n_blobs--;
	blob_free(a, b);
	memset(b, 0, sizeof(*b));
	b->off = a->bfree;
	a->bfree = a->bkeys[i].idx;
	memmove(&a->bkeys[i], &a->bkeys[i + 1], (a->n_blobs - i - 1) * sizeof(a->bkeys[0]));
	a->moved += (a->n_blobs - i - 1) * sizeof(a->bkeys[0]);
	a->n_blobs--;
}

/* b goes in (its tables become the pool's), replacing the blobs it overlaps; 0 or -errno */
static int blob_insert(struct jvm_agent *a, struct jm_blob *b)
{
	size_t i = blob_lower_bound(a, b->addr);
	struct jm_side *m;
	__u32 idx;

	if (b->end - b->addr > UINT32_MAX)
		return -EINVAL;
	if (i > 0 && bkey_end(&a->bkeys[i - 1]) > b->addr)
		blob_remove(a, --i);
	while (i < a->n_blobs && a->bkeys[i].addr < b->end)
		blob_remove(a, i);
	if (grow(a, (void **)&a->bkeys, &a->cap_bkeys, a->n_blobs, sizeof(*a->bkeys)))
		return -ENOMEM;
	if (a->bfree != BFREE_NONE) {
		idx = a->bfree;
		a->bfree = (__u32)a->bpool[idx].off;
	} else {
		if (a->n_bpool >= BFREE_NONE ||
		    grow(a, (void **)&a->bpool, &a->cap_bpool, a->n_bpool, sizeof(*a->bpool)))
			return -ENOMEM;
		idx = (__u32)a->n_bpool++;
	}
	memmove(&a->bkeys[i + 1], &a->bkeys[i], (a->n_blobs - i) * sizeof(a->bkeys[0]));
	a->moved += (a->n_blobs - i) * sizeof(a->bkeys[0]);
	a->bkeys[i] = (struct jm_bkey){ b->addr, (__u32)(b->end - b->addr), idx };
	a->bpool[idx] = *b;
	a->n_blobs++;
	m = method_find(a, b->method_id) ? side_get(a, b->method_id) : NULL;
	if (m)
		m->n_blobs++;
	return 0;
}

static struct jm_blob *blob_find(const struct jvm_agent *a, __u64 pc)
{
	size_t i = blob_lower_bound(a, pc + 1);

	if (i == 0 || pc >= bkey_end(&a->bkeys[i - 1]))
		return NULL;
	return blob_at(a, i - 1);
}

/*
 * A code-load record's inline table: n_pcs of (u64 pc, u32 n, n of (u64 method, u32 bci)),
 * pcs ascending. Checked whole; with b->pcs set (room for n_pcs) and b->chain (room for
 * max_chain), stored there; else only its (callee, caller) pairs go to the edge map.
 */
#define EDGE_RECENT 64
static int parse_pcs(struct jvm_agent *a, struct cur *c, struct jm_blob *b, __u32 n_pcs,
		     size_t max_chain)
{
	__u64 prev = 0, last = 0;
	size_t n_chain = 0;
	/*
	 * The pairs put lately, direct-mapped: neighbouring pcs mostly repeat their chains,
	 * and a probe of the JVM's whole edge map is a cache miss (javac: 5% of jprof's CPU)
	 */
	__u64 recent[EDGE_RECENT][2];

	memset(recent, 0, sizeof(recent));
	for (__u32 i = 0; i < n_pcs && !c->bad; i++) {
		__u64 pc = cur_u64(c);
		__u32 n = cur_u32(c);

		if ((__u64)n * 12 > c->left || (i && pc < prev) ||
		    (b->chain && n > max_chain - n_chain)) {
			c->bad = 1;
			break;
		}
		prev = pc;
		if (b->pcs)
			b->pcs[i] = (struct jm_pc){ .pc = pc, .first = (__u32)n_chain, .n = n };
		for (__u32 j = 0; j < n; j++) {
			__u64 m = cur_u64(c);
			__s32 bci = (__s32)cur_u32(c);

			if (b->chain) {
				b->chain[n_chain + j] = m;
				b->chain_bci[n_chain + j] = bci;
			}
			/* the evidence for "inlined into its caller" used for deeper frames */
			else if (j > 0) {
				__u64 *r = recent[kv_hash(last, m) % EDGE_RECENT];

				if ((r[0] != last || r[1] != m) && kv_put(a, &a->edges, last, m, 1))
					c->bad = 1;
				r[0] = last;
				r[1] = m;
			}
			last = m;
		}
		n_chain += n;
		if (b->pcs)
			b->n_pcs = i + 1;
	}
	if (b->chain)
		b->n_chain = (__u32)n_chain;
	return c->bad ? -EINVAL : 0;
}

static int parse_code_load(struct jvm_agent *a, struct cur *c)
{
	struct jm_blob b = { 0 };
	const unsigned char *body = c->p;
	__u32 size, n_pcs;

	b.off = a->rec_off + (__u64)(c->p - a->rec_body);
	b.addr = cur_u64(c);
	size = cur_u32(c);
	n_pcs = cur_u32(c);
	b.method_id = cur_u64(c);
	if (c->bad || !size || b.addr + size < b.addr || !b.method_id)
		return -EINVAL;
	b.end = b.addr + size;
	/* 12 bytes per pc and per frame at least: bounded by the record's size */
	if ((__u64)n_pcs * 12 > c->left || parse_pcs(a, c, &b, n_pcs, 0))
		return -EINVAL;
	b.len = n_pcs ? (__u32)(c->p - body) : 0;
	return blob_insert(a, &b) ? -EINVAL : 0;
}

/*
 * b's inline table, read again from its record in the dictionary file (the JVM's user
 * writes that file: the record must still be b's, and is checked again whole). False
 * when b has none or it cannot be had; then it is never tried again.
 */
static bool blob_pcs(struct jvm_agent *a, struct jm_blob *b)
{
	unsigned char *body;
	size_t max_chain;
	struct cur c;
	__u32 n_pcs;

	if (b->pcs)
		return true;
	if (!b->len || b->len > JP_DICT_REC_MAX)
		return false;
	if (charge(a, b->len)) { /* the read buffer, given back below */
		b->len = 0;
		return false;
	}
	body = malloc(b->len);
	if (!body || pread(a->dict_fd, body, b->len, (off_t)b->off) != (ssize_t)b->len)
		goto out;
	c = (struct cur){ .p = body, .left = b->len };
	if (cur_u64(&c) != b->addr || cur_u32(&c) != b->end - b->addr)
		goto out;
	n_pcs = cur_u32(&c);
	if (cur_u64(&c) != b->method_id || !n_pcs || (__u64)n_pcs * 12 > c.left)
		goto out;
	max_chain = c.left / 12;
	if (charge(a, (size_t)n_pcs * sizeof(*b->pcs) + max_chain * CHAIN_BYTES))
		goto out;
	b->pcs = calloc(n_pcs, sizeof(*b->pcs));
	b->chain = calloc(max_chain ? max_chain : 1, sizeof(*b->chain));
	b->chain_bci = calloc(max_chain ? max_chain : 1, sizeof(*b->chain_bci));
	if (!b->pcs || !b->chain || !b->chain_bci || parse_pcs(a, &c, b, n_pcs, max_chain)) {
		uncharge(a, (size_t)n_pcs * sizeof(*b->pcs) + max_chain * CHAIN_BYTES);
		free(b->pcs);
		free(b->chain);
		free(b->chain_bci);
		b->pcs = NULL;
		b->chain = NULL;
		b->chain_bci = NULL;
		b->n_pcs = b->n_chain = 0;
		goto out;
	}
	/* keep what the table has: the charge follows n_pcs and n_chain from here */
	uncharge(a, (size_t)(n_pcs - b->n_pcs) * sizeof(*b->pcs) +
			    (max_chain - b->n_chain) * CHAIN_BYTES);
	if (b->n_chain && b->n_chain < max_chain) {
		__u64 *ch = realloc(b->chain, (size_t)b->n_chain * sizeof(*ch));
		__s32 *bci = realloc(b->chain_bci, (size_t)b->n_chain * sizeof(*bci));

		if (ch)
			b->chain = ch;
		if (bci)
			b->chain_bci = bci;
	}
	uncharge(a, b->len);
	free(body);
	return true;
out:
	uncharge(a, b->len);
	free(body);
	b->len = 0;
	return false;
}

static int parse_code_unload(struct jvm_agent *a, struct cur *c)
{
	__u64 addr = cur_u64(c), id = cur_u64(c);
	size_t i;

	if (c->bad)
		return -EINVAL;
	i = blob_lower_bound(a, addr);
	if (i < a->n_blobs && a->bkeys[i].addr == addr && blob_at(a, i)->method_id == id)
		blob_remove(a, i);
	return 0;
}

static int parse_stub(struct jvm_agent *a, struct cur *c)
{
	struct jm_blob b = { 0 };
	__u32 size;
	__u16 n;

	b.addr = cur_u64(c);
	size = cur_u32(c);
	n = cur_u16(c);
	(void)cur_u16(c);
	/* interned: a JVM's few hundred stubs share a few dozen names */
	b.stub = cur_istr(a, c, n);
	if (c->bad || !size || b.addr + size < b.addr)
		return -EINVAL;
	b.end = b.addr + size;
	b.is_interp = !strcmp(b.stub, "Interpreter");
	return blob_insert(a, &b);
}

static int parse_thread(struct jvm_agent *a, struct cur *c)
{
	__u32 tid = cur_u32(c), idx;
	__u16 n = cur_u16(c);
	char *name;

	(void)cur_u16(c);
	name = cur_str(a, c, n);
	if (c->bad || !name)
		goto out_bad;
	if (!kv_get(&a->thread_idx, tid, 0, &idx) && idx < a->n_threads) {
		str_free(a, a->threads[idx].name); /* tids are reused: the newest name wins */
		a->threads[idx].name = name;
		return 0;
	}
	if (grow(a, (void **)&a->threads, &a->cap_threads, a->n_threads, sizeof(a->threads[0])) ||
	    kv_put(a, &a->thread_idx, tid, 0, (__u32)a->n_threads))
		goto out_bad;
	a->threads[a->n_threads].tid = tid;
	a->threads[a->n_threads++].name = name;
	return 0;
out_bad:
	str_free(a, name);
	return -EINVAL;
}

/* JP_DICT_CLASS_ID: u64 class_id, u16 sig_len, u16 pad, sig (interned, charged) */
static int parse_class_id(struct jvm_agent *a, struct cur *c)
{
	__u64 id = cur_u64(c);
	__u16 n = cur_u16(c);
	const char *name;
	__u32 idx;

	(void)cur_u16(c);
	name = cur_istr(a, c, n);
	if (c->bad || !name || id == 0)
		return -EINVAL;
	if (!kv_get(&a->class_idx, id, 0, &idx) && idx < a->n_classes) {
		a->classes[idx].name = name;
		return 0;
	}
	if (grow(a, (void **)&a->classes, &a->cap_classes, a->n_classes, sizeof(a->classes[0])) ||
	    kv_put(a, &a->class_idx, id, 0, (__u32)a->n_classes))
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
		return parse_code_load(a, &c);
	case JP_DICT_CODE_UNLOAD:
		return parse_code_unload(a, &c);
	case JP_DICT_STUB:
		return parse_stub(a, &c);
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

static void dict_refresh(struct jvm_agent *a)
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
static void lookup_refresh(struct jvm_agent *a)
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

/* frame kinds ----------------------------------------------------------------- */

static int method_is_compiled(const struct jvm_agent *a, __u64 id)
{
	const struct jm_side *m = side_find(a, id);

	return m && m->n_blobs > 0;
}

/* the first of b's recorded pcs at or after pc (b->n_pcs: none) */
static size_t pc_lower_bound(const struct jm_blob *b, __u64 pc)
{
	return key_lower_bound(b->pcs, b->n_pcs, sizeof(*b->pcs), pc);
}

/*
 * Leaf group: a PC inside a compiled blob tells for sure. The blob's inline chain at the
 * PC (the first recorded pc at or after it, as HotSpot's pc_desc_near does) names how many
 * leaf frames are inlined; if that chain does not match AGCT's frames (no non-safepoint
 * info, or the table was truncated), the frames up to the first one that is the blob's
 * root method are inlined and that one is the JIT frame. Returns frames classified.
 */
static int classify_leaf(struct jvm_agent *a, __u64 pc, struct java_frame *f, int n)
{
	struct jm_blob *b = blob_find(a, pc);
	int k = -1;

	if (!b || n <= 0)
		return 0;
	if (!b->method_id) {
		if (b->is_interp && f[0].bci != -3) {
			f[0].kind = JP_FK_INTERP;
			return 1;
		}
		return 0;
	}
	if (blob_pcs(a, b) && b->n_pcs) {
		size_t lo = pc_lower_bound(b, pc);

		if (lo < b->n_pcs) {
			const struct jm_pc *p = &b->pcs[lo];
			__u32 len = p->n;

			if (len && len <= (__u32)n && b->chain[p->first + len - 1] == b->method_id) {
				k = (int)len - 1;
				for (__u32 j = 0; j < len; j++) {
					if (b->chain[p->first + j] != f[j].method_id)
						k = -1;
				}
			}
		}
	}
	for (int i = 0; k < 0 && i < n && i < INLINE_MAX; i++) {
		if (f[i].method_id == b->method_id)
			k = i;
	}
	if (k < 0)
		return 0;
	for (int i = 0; i < k; i++)
		f[i].kind = JP_FK_INLINED;
	f[k].kind = JP_FK_JIT;
	return k + 1;
}

/*
 * Kinds of AGCT frames (leaf first). Deeper frames have no PC, so it is evidence, not
 * proof: bci -3 is a Java native method; a frame whose (method, caller) pair appears in
 * some blob's inline chain is inlined; else a method with a live compiled blob is JIT;
 * else interpreted. A frame above an inlined one is at least JIT (it holds the code).
 * OSR and deoptimised frames can be misfiled; the leaf group is exact when the PC is
 * in a known blob.
 */
static void classify(struct jvm_agent *a, __u64 pc, struct java_frame *f, int n)
{
	int i;

	for (i = 0; i < n; i++)
		f[i].kind = JP_FK_INTERP;
	i = classify_leaf(a, pc, f, n);
	for (; i < n; i++) {
		if (f[i].bci == -3)
			f[i].kind = JP_FK_NATIVE;
		else if (i + 1 < n && !kv_get(&a->edges, f[i].method_id, f[i + 1].method_id,
					      &(__u32){ 0 }))
			f[i].kind = JP_FK_INLINED;
		else if (method_is_compiled(a, f[i].method_id) ||
			 (i > 0 && f[i - 1].kind == JP_FK_INLINED))
			f[i].kind = JP_FK_JIT;
	}
}

/* the ring ------------------------------------------------------------------- */

static int store_tail(struct jvm_agent *a)
{
	__u64 t = a->tail;

	/* an aligned 8-byte store into the page the agent maps */
	if (pwrite(a->ring_fd, &t, sizeof(t), offsetof(struct jp_ring_hdr, tail)) !=
	    (ssize_t)sizeof(t))
		return -EIO;
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
		classify(a, r.pc, a->frames, n);
	t.time_ns = r.time_ns;
	t.tid = r.tid;
	t.num_frames = n;
	t.pc = r.pc;
	t.frames = a->frames;
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
	__u64 head, mask = a->data_size - 1;
	int count = 0, err = 0;

	if (pread(a->ring_fd, &head, sizeof(head), offsetof(struct jp_ring_hdr, head)) !=
	    (ssize_t)sizeof(head))
		return -EIO;
	head = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
	dict_refresh(a);
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

/* names ---------------------------------------------------------------------- */

const char *jvm_agent__method_name(struct jvm_agent *a, __u64 method_id, unsigned int flags)
{
	struct jm_method *m = method_find(a, method_id);
	struct jm_method_x *x;
	char **slot;

	if (!m) {
		lookup_refresh(a);
		m = method_find(a, method_id);
		if (!m)
			return NULL;
	}
	x = method_x(a, m);
	if (!x)
		return NULL;
	slot = flags & JVM_NAME_DOTTED ? &x->dotted : &x->slash;
	if (!*slot) {
		const char *cls = a->mcls[m->cls].cls;
		size_t n = strlen(cls) + strlen(x->name) + 2;
		char *s;

		if (charge(a, n))
			return NULL;
		s = malloc(n);
		if (!s) {
			uncharge(a, n);
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
	dict_refresh(a);
	return a->dict_off;
}

__u64 jvm_agent__dict_read(const struct jvm_agent *a)
{
	return a->dict_off;
}

int jvm_agent__pc_chain(struct jvm_agent *a, __u64 pc, bool top, const __u64 **ret,
			const __s32 **ret_bci)
{
	static const __s32 no_bci = -1;
	struct jm_blob *b = blob_find(a, pc);

	if (!b)
		return -ENOENT;
	if (!b->method_id)
		return -EINVAL;
	if (blob_pcs(a, b) && b->n_pcs) {
		/* the interrupted pc: the first recorded pc after it (HotSpot: near(pc + 1)) */
		size_t lo = pc_lower_bound(b, top ? pc + 1 : pc);

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

const char *jvm_agent__code_name(struct jvm_agent *a, __u64 pc, bool *ret_java)
{
	struct jm_blob *b = blob_find(a, pc);

	if (!b) {
		lookup_refresh(a);
		b = blob_find(a, pc);
	}
	*ret_java = b && b->method_id;
	if (!b)
		return NULL;
	return b->method_id ? jvm_agent__method_name(a, b->method_id, 0) : b->stub;
}

int jvm_agent__line(struct jvm_agent *a, __u64 method_id, __s32 bci)
{
	struct jm_method *m = method_find(a, method_id);
	const struct jm_method_x *x;
	__u32 lo, hi;

	if (!m) {
		lookup_refresh(a);
		m = method_find(a, method_id);
	}
	if (!m || bci < 0 || !(x = method_x(a, m)))
		return -1;
	/* the entry with the greatest start <= bci: the table is sorted by bci (lines_load) */
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

	if (kv_get(&a->thread_idx, tid, 0, &i)) {
		/*
		 * A thread the agent never names (a GC or compiler worker) is asked about at each
		 * of its samples: it looks at the file (fstat) once, and again only once a poll's
		 * refresh has read more of it. A new thread looks at once.
		 */
		__u32 slot = (tid * 2654435761u) >> 24;

		if (a->tn_miss[slot].tid == tid && a->tn_miss[slot].seen == a->dict_seen_size)
			return NULL;
		lookup_refresh(a);
		if (kv_get(&a->thread_idx, tid, 0, &i)) {
			a->tn_miss[slot].tid = tid;
			a->tn_miss[slot].seen = a->dict_seen_size;
			return NULL;
		}
	}
	return i < a->n_threads ? a->threads[i].name : NULL;
}

const char *jvm_agent__class_name(struct jvm_agent *a, __u64 class_id)
{
	__u32 i;

	if (kv_get(&a->class_idx, class_id, 0, &i)) {
		lookup_refresh(a);
		if (kv_get(&a->class_idx, class_id, 0, &i))
			return NULL;
	}
	return i < a->n_classes ? a->classes[i].name : NULL;
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
	ret->handler_ns = SINCE(handler_ns);
	ret->handler_timed = SINCE(handler_timed);
	ret->events_ns = SINCE(events_ns);
	ret->ring_flags = h.flags;
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

__u64 jvm_agent__all_bytes(void)
{
	return __atomic_load_n(&agents_bytes, __ATOMIC_RELAXED);
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

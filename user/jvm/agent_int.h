/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent_int.h: what the agent channel reader's files share and nothing else includes: its
 * budgets, the reader's state (struct jvm_agent) and the dictionary's tables.
 *   agent_mem.c    budgets (per JVM and all JVMs), the (k1, k2) map, the record cursor, strings
 *   agent_ring.c   opening the channel, the ring: records, heartbeat, counters, the report
 *   agent_dict.c   the dictionary log: methods, line tables, classes, threads, its refreshes
 *   agent_code.c   compiled code: the blob table, inline tables, frame kinds of a trace
 *   agent_names.c  naming frames from the dictionary (methods, lines, code, threads, classes)
 * The public API is agent_ring.h.
 */
#ifndef JPROF_JVM_AGENT_INT_H
#define JPROF_JVM_AGENT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvm/agent_ring.h"
#include "ring.h"
#include "util/hmap.h"


#define TRACE_REC_MAX                                                                     \
	(sizeof(struct jp_trace_rec) + JP_DEPTH_MAX * sizeof(struct jp_frame) + JP_BLOCKER_MAX)
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
/*
 * Blobs' inline tables read from the dictionary file for lookups (ja_blob_pcs) are a cache:
 * past TABLES_MAX bytes in one JVM the ones read longest ago are freed (read again when
 * wanted). A JVM that compiles for hours looks up ever more blobs, 40 KB a table and more
 * for C2 code with deep inlining: uncapped, they held most of a daemon's RSS.
 */
#define TABLES_MAX   (2ull << 20)
#define TABLES_QUEUE 8192u /* tables remembered in the order read (their pool index) */
/*
 * The chains lookups found, by pc (jvm_agent__pc_chain): a sample's compiled frames are a
 * few thousand call sites, a JVM's tables hold hundreds of thousands of pcs. 2-way sets,
 * allocated at a JVM's first lookup (PCC_BYTES, charged); an entry is its blob's while
 * that blob (its code-load record's offset) is the one at the pc. A lookup reads its set's
 * keys (two sets a cache line, 128 KiB in all), then the one entry that matched.
 */
#define PCC_SETS  4096u
#define PCC_CHAIN 8
struct jm_pcc_set {
	__u64 key[2]; /* pc << 1 | top; 0: empty */
	__u32 gen[2]; /* blob_gen when the blob at the way's pc was last found to be its off's */
	__u32 mru;    /* the way found or filled last: the other one is replaced */
	__u32 pad;
};
struct jm_pcc {
	__s32 bci[PCC_CHAIN];
	__u32 n, pad;
	__u64 off; /* the blob's record offset */
	__u64 chain[PCC_CHAIN];
};
#define PCC_BYTES ((size_t)PCC_SETS * (sizeof(struct jm_pcc_set) + 2 * sizeof(struct jm_pcc)))
/* dictionary bytes parsed per refresh, so one huge dictionary never stalls the poll loop */
#define DICT_REFRESH_MAX (32ull << 20)
/*
 * ...and bytes moved to keep the compiled-code table sorted: inserting in descending
 * address order costs a memmove of the whole table per record, which a JVM's user could
 * use to stall jprof. Past this a refresh stops; the rest waits for the next poll.
 */
#define DICT_REFRESH_MOVES (64ull << 20)
/* a poll that found no new record looks at the dictionary's size at most this often */
#define DICT_POLL_IDLE_NS (250ull * 1000 * 1000)
#define DBUF_KEEP	 (1u << 20) /* a larger record buffer is freed after use */
#define DICT_CHUNK	 (64u << 10) /* dictionary bytes read at once: records are small */
/* lookups' refreshes of the dictionary: LOOKUP_REFRESH_MAX bytes per LOOKUP_WINDOW_NS */
#define LOOKUP_REFRESH_MAX (1u << 20)
#define LOOKUP_WINDOW_NS   (10ull * 1000 * 1000)
/* threads the dictionary does not name, remembered so they do not look at the file again */
#define THREAD_MISS_SLOTS 256u
#define THREAD_MISS_RELOOK_NS (500ull * 1000 * 1000)
/* ring records looked at in one poll: 16 times a join round's, a few ms of reads */
#define POLL_RECORDS_MAX 65536u

/* charged by every agent, released by jvm_agent__free (agents may live in other threads) */
/* charged by every agent, released by jvm_agent__free (agents may live in other threads) */
extern __u64 ja_agents_bytes;
/* inline tables held for lookups in all JVMs, and freed to make room (TABLES_MAX) */
extern __u64 ja_tables_bytes, ja_tables_evicted;


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
	bool is_interp;	      /* the template interpreter */
	bool used;	  /* its table answered a lookup since it was queued (a second chance) */
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
	__u64 tail_stored;  /* the tail as last written to the ring (written when it moved) */
	__s32 signo_polled; /* the header's signal word, as the last poll read it */
	__u64 dict_poll_ns; /* a poll's last look at the dictionary's size */
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
	struct hmap edges; /* (callee, caller) pairs seen in inline chains */
	struct jm_thread *threads;
	size_t n_threads, cap_threads;
	struct hmap thread_idx;
	struct jm_class *classes; /* JP_DICT_CLASS_ID: the class ids of events */
	size_t n_classes, cap_classes;
	struct hmap class_idx;
	__u64 events_unread; /* event records polled by a caller that takes none */
	__u64 blocker_bad;   /* blocker names of traces refused (bounds, characters, budget) */
	__u64 lr_window_ns, lr_bytes; /* lookup_refresh's window and bytes parsed in it */
	/*
	 * the inline tables held (tables_bytes) and the pool indexes of the blobs read, oldest
	 * first (a ring of TABLES_QUEUE; one whose blob went or was freed since is skipped)
	 */
	__u32 *tq;
	size_t tq_head, tq_n;
	__u64 tables_bytes, tables_evicted;
	struct jm_pcc_set *pcc_sets; /* PCC_SETS, then pcc; NULL until the first lookup */
	struct jm_pcc *pcc;	     /* PCC_SETS * 2: way w of set i at 2 * i + w */
	bool pcc_failed;	     /* its allocation failed: lookups go without it */
	__u64 pcc_hits, pcc_misses;
	/*
	 * counts the blobs that left the compiled-code table (blobs never overlap, so until one
	 * leaves, a blob found at a pc is still its blob): a cached chain checked under this
	 * count needs no search of the table for its blob
	 */
	__u32 blob_gen;
	/*
	 * threads the dictionary did not name, its size then and when (not looked for again
	 * before it grows, nor within THREAD_MISS_RELOOK_NS): a GC or compiler worker's
	 * samples ask at each sample, and a compiling JVM's dictionary grows all the time
	 */
	struct { __u32 tid; __u64 seen, ns; } tn_miss[THREAD_MISS_SLOTS];
	struct jm_str *strs;
	struct hmap str_idx; /* (hash, len) -> index in str_tab */
	struct jm_str **str_tab;
	size_t n_strs, cap_strs;
	__u64 events_since_ns; /* event records older than this are skipped (another reader's) */
	/*
	 * The agent's counters when this reader connected: they count for the JVM's life (an
	 * agent serves one recording after another), the report counts for this recording
	 */
	struct jp_ring_hdr base;
};

/* a method whose entry could not be read again */
extern struct jm_method_x ja_x_none;

/* a bounded cursor over a copied-out record */

struct cur {
	const unsigned char *p;
	size_t left;
	int bad;
};

/* agent_mem.c */
int ja_charge(struct jvm_agent *a, size_t n);
void ja_uncharge(struct jvm_agent *a, size_t n);
size_t ja_kv_hash(__u64 k1, __u64 k2);
/* (k1, k2) -> index maps (util/hmap), their arrays charged to a: 0 or -ENOENT */
int ja_kv_get(const struct hmap *m, __u64 k1, __u64 k2, __u32 *ret);
/* 0, -ENOSPC (budget) or -ENOMEM */
int ja_kv_put(struct jvm_agent *a, struct hmap *m, __u64 k1, __u64 k2, __u32 val);
int ja_grow(struct jvm_agent *a, void **p, size_t *cap, size_t n, size_t elem);
__u64 ja_cur_u64(struct cur *c);
__u32 ja_cur_u32(struct cur *c);
__u16 ja_cur_u16(struct cur *c);
char *ja_cur_str(struct jvm_agent *a, struct cur *c, size_t n);
void ja_str_free(struct jvm_agent *a, char *s);
const char *ja_intern(struct jvm_agent *a, const char *s, size_t n);
char *ja_cur_take(struct cur *c, size_t n);
const char *ja_cur_istr(struct jvm_agent *a, struct cur *c, size_t n);
/* agent_ring.c */
void ja_blob_free(struct jvm_agent *a, struct jm_blob *b);
void ja_x_free(struct jvm_agent *a, struct jm_method_x *x);
/* agent_dict.c */
struct jm_method *ja_method_find(const struct jvm_agent *a, __u64 id);
struct jm_side *ja_side_find(const struct jvm_agent *a, __u64 id);
struct jm_side *ja_side_get(struct jvm_agent *a, __u64 id);
__u32 ja_lines_load(struct jm_line *lines, struct cur *c, __u32 n);
struct jm_method_x *ja_method_x(struct jvm_agent *a, struct jm_method *m);
void ja_dict_refresh(struct jvm_agent *a);
void ja_lookup_refresh(struct jvm_agent *a);
/* agent_code.c */
struct jm_blob *ja_blob_find(const struct jvm_agent *a, __u64 pc);
int ja_parse_code_load(struct jvm_agent *a, struct cur *c);
bool ja_blob_pcs(struct jvm_agent *a, struct jm_blob *b);
int ja_parse_code_unload(struct jvm_agent *a, struct cur *c);
int ja_parse_stub(struct jvm_agent *a, struct cur *c);
size_t ja_pc_lower_bound(const struct jm_blob *b, __u64 pc);
void ja_classify(struct jvm_agent *a, __u64 pc, struct java_frame *f, int n);

#endif /* JPROF_JVM_AGENT_INT_H */

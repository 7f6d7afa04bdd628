/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * model.h: the profile model (see docs/DESIGN.md "The seams"). The join hands it resolved
 * samples: frames as identities (locations), labels, and values in event columns. It
 * keeps them pprof-shaped: interned strings, functions, mappings, locations, stacks,
 * label sets, and one row of values per (stack, label set). Names are strings of a
 * function, rendered by writers at write time (dotted Java names, lines). Not thread-safe.
 */
#ifndef JPROF_MODEL_H
#define JPROF_MODEL_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "../frame.h"

/* value columns; a sample adds to one or more of them */
enum jp_value {
	JP_VAL_CPU_SAMPLES = 0, /* on-CPU samples */
	JP_VAL_CPU_NS,		/* on-CPU time the samples stand for */
	JP_VAL_OFFCPU_NS,	/* blocked time */
	JP_VAL_SYSCALL_CALLS,	/* slow system calls */
	JP_VAL_SYSCALL_NS,	/* their time */
	JP_VAL_ALLOC_SPACE,	/* -e alloc: estimated bytes allocated */
	JP_VAL_ALLOC_OBJECTS,	/* ... and objects */
	JP_VAL_INUSE_SPACE,	/* -e live: estimated bytes still live at the end */
	JP_VAL_INUSE_OBJECTS,	/* ... and objects */
	JP_VAL_CONTENTIONS,	/* -e lock: contended monitor enters */
	JP_VAL_DELAY_NS,	/* ... and their wait */
	JP_VAL_PAUSE_NS,	/* -e wall: GC and safepoint pauses of a JVM (hsperfdata) */
	JP_VAL_MAX
};

/* pprof-style sample type of a column: ("cpu", "nanoseconds") ... */
const char *jp_value_type(enum jp_value v);
const char *jp_value_unit(enum jp_value v);

/* ids index the model's tables; 0 is "none" in every table */
typedef __u32 jp_id;

struct jp_func {
	const char *name; /* "pkg/Class.method", a C symbol, or a marker like "[unknown]" */
	const char *file; /* Java source file or native DSO path; "" when unknown */
	bool java;	  /* name is a Java method in internal form (rendered dotted on demand) */
};

struct jp_mapping {
	__u64 start, limit, offset; /* pprof Mapping: memory range and file offset */
	const char *file;	    /* DSO path, "[kernel]", "[jit]" */
	const char *build_id;	    /* "" when unknown */
};

struct jp_location {
	jp_id func;
	jp_id mapping;		 /* 0 for Java frames and markers */
	__u64 addr;		 /* native/kernel: the address; Java: 0 */
	__s32 line;		 /* Java source line, 0 unknown */
	enum jp_frame_kind kind; /* kind of this frame (JIT, inlined, interpreted, native, ...) */
};

struct jp_labels {
	__u32 pid, tid;
	const char *comm;      /* process name */
	const char *thread;    /* thread name (Java name when known) */
	__u64 cgroup;	       /* cgroup v2 id, 0 unknown */
	const char *container; /* short container id or name, "" for the host */
	const char *main;      /* the JVM's main class or jar as started, "" unknown (NULL: "") */
	/*
	 * 0: one process's thread. N > 0: N ended programs of one (comm, container, main),
	 * exited or exec'd, folded into one set (model__fold): pid, tid and cgroup 0, thread ""
	 */
	__u32 nfolded;
};

struct jp_sample_row {
	jp_id stack;
	jp_id labels;
	__u64 values[JP_VAL_MAX];
};

struct model;

/*
 * What a model's tables may hold in all, strings included; past it find-or-add returns 0
 * (model__add -ENOSPC) and counts a refusal. Every source of names, stacks and labels is
 * untrusted somewhere (a JVM's agent, a process's symbols, a file read by report).
 */
#ifndef JP_FUZZ_BUDGETS
#define MODEL_MAX_BYTES (1ull << 30)
#else /* fuzzing: small enough for a fuzzer's inputs to reach */
#define MODEL_MAX_BYTES (256ull << 10)
#endif

struct model *model__new(void);	   /* NULL + errno */
void model__free(struct model *m); /* NULL-safe */

/* interned copy of s (stable until model__free); NULL when out of memory */
const char *model__str(struct model *m, const char *s);

/* find-or-add; 0 when out of memory. Strings are interned, not borrowed. */
jp_id model__func(struct model *m, const char *name, const char *file, bool java);
jp_id model__mapping(struct model *m, const struct jp_mapping *mp);
jp_id model__location(struct model *m, const struct jp_location *loc);
jp_id model__labels(struct model *m, const struct jp_labels *l);
/*
 * Names process pid's labels without a main class by main (its samples taken before the
 * JVM was known): one process, one root. 0 or -ENOSPC/-ENOMEM (then some keep "").
 */
int model__name_process(struct model *m, __u32 pid, const char *main);
/*
 * A program's end for model__fold: process pid exited (comm NULL: every label set of the
 * pid ends), or it exec'd (comm: the name it ran under before, whose sets end; the sets of
 * its new program, under another name, are not touched).
 */
struct model_end {
	__u32 pid;
	const char *comm;
};
/*
 * Folds the label sets that ends[0..n) end (nothing adds to their ids any more) into one
 * set per (comm, container, main); their rows merge into that set's rows (totals
 * unchanged). nfolded counts the programs folded in: a process once per name it ran under,
 * so one that exec'd counts once under its old name (at the exec) and once under its new
 * one (at its exit). The dropped sets' ids are freed and reused by later model__labels: a
 * caller holding one of them must forget it (model__get_labels returns NULL for it). Memory
 * then follows the programs not folded and the names, not every process ever seen.
 * 0 or -ENOMEM/-ENOSPC (then nothing changed).
 */
int model__fold(struct model *m, const struct model_end *ends, size_t n);
/* model__fold of exited processes pids[0..n) */
int model__fold_pids(struct model *m, const __u32 *pids, size_t n);
/* a stack of location ids, leaf first */
jp_id model__stack(struct model *m, const jp_id *locs, size_t n);
/* the stack of locs[0..n) if the model has it, else 0 (nothing is added) */
jp_id model__stack_find(struct model *m, const jp_id *locs, size_t n);
/* the stack trie's nodes so far: what model__stack added is the growth of this */
size_t model__stack_nodes(const struct model *m);

/*
 * Adds values to the row of (stack, labels). 0 or -ENOMEM/-EINVAL, -ENOSPC when the
 * model's budget refused a new row (counted: model__over_budget).
 */
int model__add(struct model *m, jp_id stack, jp_id labels, enum jp_value v, __u64 value);

/*
 * Time: when samples happened, beside the rows' totals (model/tseries.h): per row, entries
 * of (slot, values) at 100 ms slots of the recording, coarser (200, 400 ms ...) when the
 * entries would pass their budget (64 MiB). model__set_clock says where slot 0 starts:
 * wall_ns (unix ns) at mono_ns (the scale of model__at: CLOCK_MONOTONIC for a recording, the
 * wall clock again for a file read); model__at sets the time of the model__add calls that
 * follow (0: untimed, as before any clock). A row's entries add up to its values when every
 * add to it was timed; less, never more, when not (a file without times).
 */
void model__set_clock(struct model *m, __u64 mono_ns, __u64 wall_ns);
void model__at(struct model *m, __u64 mono_ns);
/* the slots' length before the first entry (a file's: 100 ms or coarser); ignored after */
void model__set_time_res(struct model *m, __u32 res_ms);
/* mono_ns on the clock's scale of a wall time (unix ns); 0 without a clock */
__u64 model__mono_of(const struct model *m, __u64 wall_ns);

struct model_time {
	bool has_clock;
	__u64 start_unix_ns; /* wall time of slot 0's start */
	__u32 res_ms;	     /* a slot's length */
	__u32 coarsened;     /* times the slots doubled to fit */
	bool lost;	     /* the budget could not hold one entry a row: no times */
	size_t entries;
	__u32 max_slot; /* the last slot with an entry */
	size_t bytes;
};
void model__time_info(const struct model *m, struct model_time *ret);
struct jp_time_ent {
	size_t row;  /* model__row's i */
	__u32 slot;  /* starts at start_unix_ns + slot * res_ms */
	__u64 values[JP_VAL_MAX];
};
/*
 * Row i's entries in the order they came: the first's k + 1 (0: none), then the one after
 * entry k + 1 (0: the last). The first walk after a change links them all (O(entries)); a
 * model walked by two threads at once has to be walked by one first.
 */
size_t model__time_first(const struct model *m, size_t i);
size_t model__time_next(const struct model *m, size_t k);
/* entry k (0 <= k < entries), expanded into *buf (which it returns); NULL past the last */
const struct jp_time_ent *model__time(const struct model *m, size_t k, struct jp_time_ent *buf);
/* the time data's budget (TSERIES_MAX_BYTES by default); smaller for tests */
void model__set_time_max_bytes(struct model *m, size_t max_bytes);
/*
 * The time data's target (0: none, the default): past it (and TSERIES_ROW_FLOOR entries a
 * row) the slots coarsen, so a long recording's times stop growing with its length.
 */
void model__set_time_target_bytes(struct model *m, size_t target_bytes);
/*
 * Adds row src_i of src, with its times, to dst's row of (stack, labels) (ids of dst):
 * the timed parts at their times (src's clock's wall time), the rest untimed. 0 or -errno.
 */
int model__add_row_timed(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
			 size_t src_i);
/* the same, only the entries of src whose slot starts in [since_ns, until_ns) (unix ns) */
int model__add_row_range(struct model *dst, jp_id stack, jp_id labels, const struct model *src,
			 size_t src_i, __u64 since_ns, __u64 until_ns);

/*
 * sets row i's value of v (a column that exists); its time entries of v follow, in
 * proportion to their samples (CPU time) or to their old values. 0 or -EINVAL
 */
int model__set(struct model *m, size_t i, enum jp_value v, __u64 value);

/* drops every sample row, keeps the tables (a snapshot has been written) */
void model__reset(struct model *m);

/* reading; a pointer stays valid until the next call that adds to the model */
size_t model__rows(const struct model *m);

/* what the model holds: entries per table and bytes in all (for the -v report) */
struct model_mem {
	size_t strs, funcs, maps, locs, labels, stacks, stack_nodes, rows;
	size_t labels_free; /* ids freed by folds, not reused yet (labels counts the others) */
	__u64 folded;	    /* exited processes folded since model__new (per name they ran under) */
	__u64 folded_execs; /* programs folded at their exec (a model_end with a comm) */
	size_t bytes;
	size_t str_bytes, loc_bytes, stack_bytes, row_bytes; /* parts of bytes */
	size_t time_bytes, time_entries; /* the time data (budgeted apart: not in bytes) */
	__u64 over_budget; /* additions the budget refused */
};
void model__mem(const struct model *m, struct model_mem *ret);
/* the budget in bytes (MODEL_MAX_BYTES by default); smaller for tests */
void model__set_max_bytes(struct model *m, size_t max_bytes);
/* find-or-adds the budget refused since model__new (a refused sample counts once or more) */
__u64 model__over_budget(const struct model *m);
/* row i, expanded into *buf (which it returns); NULL past the last row */
const struct jp_sample_row *model__row(const struct model *m, size_t i, struct jp_sample_row *buf);
const struct jp_func *model__get_func(const struct model *m, jp_id id);
const struct jp_mapping *model__get_mapping(const struct model *m, jp_id id);
const struct jp_location *model__get_location(const struct model *m, jp_id id);
/* NULL for 0, past the last id, and for an id freed by model__fold_pids */
const struct jp_labels *model__get_labels(const struct model *m, jp_id id);
/*
 * locations of a stack, leaf first; *n their count. The model's own room (stacks are kept
 * as a trie): valid until the next model__get_stack of this model, which overwrites it, so
 * one model is read by one thread at a time
 */
const jp_id *model__get_stack(const struct model *m, jp_id id, size_t *n);
struct model_counts {
	size_t strings, funcs, mappings, locations, labels, stacks, rows;
};
void model__counts(const struct model *m, struct model_counts *ret);
__u64 model__total(const struct model *m, enum jp_value v);

#endif /* JPROF_MODEL_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * jfr_int.h: the JFR writer's own state and the functions its files share (jfr.c,
 * jfr_enc.c, jfr_types.c, jfr_events.c, jfr_pools.c); nothing else includes it. The
 * public interface is jfr.h.
 */
#ifndef JPROF_OUT_JFR_INT_H
#define JPROF_OUT_JFR_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "jfr.h"
#include "../util/bytebuf.h"
#include "../util/strindex.h"
#define JFR_HEADER_SIZE	  68
#define JFR_MAJOR	  2
#define JFR_MINOR	  1
#define JFR_FLAGS	  0x03 /* compressed integers | final chunk */
#define JFR_TICKS_PER_SEC 1000000000ull
#define JFR_START_TICKS	  1 /* ticks are ns since the recording's start, plus this */

#define EV_METADATA	  0
#define EV_CHECKPOINT	  1

/* type ids in our metadata; 0 and 1 are the metadata and checkpoint event ids */
enum {
	T_LONG = 20,
	T_INT,
	T_BOOLEAN,
	T_STRING,
	T_THREAD,
	T_THREADGROUP,
	T_CLASS,
	T_CLASSLOADER,
	T_METHOD,
	T_SYMBOL,
	T_PACKAGE,
	T_MODULE,
	T_STACKTRACE,
	T_STACKFRAME,
	T_FRAMETYPE,
	T_THREADSTATE,
	T_A_LABEL,
	T_A_DESCRIPTION,
	T_A_TIMESTAMP,
	T_A_TIMESPAN,
	T_A_CATEGORY,
	T_EV_EXECUTION_SAMPLE,
	T_EV_OFFCPU,
	T_EV_SYSCALL,
	T_EV_THREADINFO,
	T_EV_RECORDING,
	T_EV_GC,
	T_EV_ALLOC_SAMPLE,
	T_EV_MONITOR_ENTER,
	T_EV_METHOD_TRACE,
};

/* keys of the jdk.types.FrameType pool */
enum { FT_INTERPRETED = 1, FT_JIT, FT_INLINED, FT_NATIVE };
#define STATE_RUNNABLE 1

struct jmethod {
	__u32 cls, name, desc; /* keys of the class and symbol pools */
	__u32 modifiers;       /* JVM access flags: ACC_NATIVE for a Java native method */
};

#define JFR_ACC_NATIVE 0x0100

struct jfr {
	const struct model *m;
	const struct jfr_opts *o;
	struct model_counts c;
	unsigned char *stack_used;  /* [stacks + 1] */
	unsigned char *labels_used; /* [labels + 1] */
	unsigned char *func_kind;   /* [funcs + 2]: kind + 1 of its first frame, 0 unused */
	struct jmethod *methods;    /* [funcs + 2]; funcs + 1 is "no function" */
	struct strindex syms, classes, pkgs;
	struct {
		__u32 name, pkg; /* symbol key of its name, package key (0 none) */
	} * class_info;		 /* per class, by index */
	size_t class_info_cap;
	__u32 *pkg_name; /* symbol key of each package's name */
	size_t pkg_name_cap;
	size_t n_threads, n_stacks, n_methods; /* entries of those pools */
	struct bytebuf ev;		       /* the event being encoded */
	FILE *f;			       /* NULL while only sizing the events */
	__u64 ev_bytes;
	/*
	 * CPU samples over the writer's budget (out_jfr_max_samples): each row's n samples
	 * are written as round(n * smp_num / smp_den) events (smp_den 0: as they are)
	 */
	__u64 smp_num, smp_den;
	int err;
};

/* jfr_enc.c */
size_t jw_varint_enc(unsigned char *o, __u64 v);
void jb_varint(struct bytebuf *b, __u64 v);
void jb_long(struct bytebuf *b, __u64 v);
void jb_int(struct bytebuf *b, __s32 v);
void jb_be(struct bytebuf *b, __u64 v, int bytes);
void jb_str(struct bytebuf *b, const char *s);
size_t jw_event_size(size_t body);
void jb_event(struct bytebuf *dst, const struct bytebuf *body);

/* jfr_types.c */
int jw_write_metadata(struct bytebuf *out, __u64 start_ticks);

/* jfr_events.c */
const char *jw_nz(const char *s);
void jw_events(struct jfr *x);

/* jfr_pools.c */
__u32 jw_class_key(struct jfr *x, const char *name, size_t len, bool java);
void jw_resolve_methods(struct jfr *x);
int jw_write_constant_pool(struct jfr *x, struct bytebuf *b);

#endif /* JPROF_OUT_JFR_INT_H */

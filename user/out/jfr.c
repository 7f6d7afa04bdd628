// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jfr.c: the model as a JDK Flight Recorder chunk. Layout: the 68-byte header, the constant
 * pool event, the events, then the metadata event (our type descriptions as an element tree):
 * last, because JMC before 8.x stops reading events at the metadata event.
 * Integers are LEB128 varints (header flag 1), strings UTF-8. The events are encoded twice, once
 * to learn their size for the header and once to write them, so memory stays proportional to
 * the model, not to the number of samples; the output needs no seek (pipes work).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
};

/* keys of the jdk.types.FrameType pool */
enum { FT_INTERPRETED = 1, FT_JIT, FT_INLINED, FT_NATIVE };
#define STATE_RUNNABLE 1

/* JFR's varint: 7 bits a byte, little end first, at most 9 bytes (the 9th carries 8 bits) */
static size_t varint_enc(unsigned char *o, __u64 v)
{
	size_t n = 0;

	while (n < 8) {
		if (v < 0x80) {
			o[n++] = (unsigned char)v;
			return n;
		}
		o[n++] = (unsigned char)(v & 0x7f) | 0x80;
		v >>= 7;
	}
	o[n++] = (unsigned char)v;
	return n;
}

static size_t varint_len(__u64 v)
{
	unsigned char tmp[9];

	return varint_enc(tmp, v);
}

static void jb_varint(struct bytebuf *b, __u64 v)
{
	unsigned char tmp[9];

	bytebuf_add(b, tmp, varint_enc(tmp, v));
}

/* a Java long that is a count or a time: clamped, so that no reader sees it negative */
static void jb_long(struct bytebuf *b, __u64 v)
{
	jb_varint(b, v > (__u64)INT64_MAX ? (__u64)INT64_MAX : v);
}

/* a Java int: negative values travel as their 32-bit pattern */
static void jb_int(struct bytebuf *b, __s32 v)
{
	jb_varint(b, (__u32)v);
}

static void jb_be(struct bytebuf *b, __u64 v, int bytes)
{
	unsigned char tmp[8];

	for (int i = 0; i < bytes; i++)
		tmp[i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
	bytebuf_add(b, tmp, (size_t)bytes);
}

/* string encodings: 0 null, 1 empty, 3 UTF-8 bytes with their length */
static void jb_str(struct bytebuf *b, const char *s)
{
	size_t n;

	if (!s) {
		bytebuf_u8(b, 0);
		return;
	}
	n = strlen(s);
	if (!n) {
		bytebuf_u8(b, 1);
		return;
	}
	bytebuf_u8(b, 3);
	jb_varint(b, n);
	bytebuf_add(b, s, n);
}

/* the size of an event counts its own varint */
static size_t event_size(size_t body)
{
	size_t k = 1;

	while (varint_len(body + k) != k)
		k++;
	return body + k;
}

/* appends body as one event (size prefix + body) */
static void jb_event(struct bytebuf *dst, const struct bytebuf *body)
{
	if (body->err && !dst->err)
		dst->err = body->err;
	jb_varint(dst, event_size(body->n));
	bytebuf_add(dst, body->p, body->n);
}

/* ---- the metadata: our types as the element tree of the JDK's MetadataReader ---- */

#define F_CP	    1u /* constantPool="true": the value is a key into the type's pool */
#define F_ARRAY	    2u /* dimension="1" */
#define F_TIMESTAMP 4u /* @Timestamp("TICKS") */
#define F_TIMESPAN  8u /* @Timespan(unit) */

struct fdesc {
	const char *name;
	int type;
	unsigned flags;
	const char *label;
	const char *unit; /* of a timespan: "TICKS", "NANOSECONDS" */
};

struct cdesc {
	int id;
	const char *name;
	const char *super; /* NULL, "jdk.jfr.Event", "java.lang.annotation.Annotation" */
	int simple;	   /* simpleType="true": one field, shown as its value */
	const char *label, *desc;
	const char *cat[2]; /* @Category of events */
	const struct fdesc *f;
	int nf;
};

#define FIELDS(...)                               \
	.f = (const struct fdesc[]){__VA_ARGS__}, \
	.nf = sizeof((const struct fdesc[]){__VA_ARGS__}) / sizeof(struct fdesc)

#define ANNOTATION "java.lang.annotation.Annotation"
#define EVENT	   "jdk.jfr.Event"
#define START_TIME                                                   \
	{                                                            \
		"startTime", T_LONG, F_TIMESTAMP, "Start Time", NULL \
	}
#define DURATION                                                    \
	{                                                           \
		"duration", T_LONG, F_TIMESPAN, "Duration", "TICKS" \
	}

/* the tables leave trailing members zero (no label, no unit, ...) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct cdesc classes[] = {
	{T_LONG, "long"},
	{T_INT, "int"},
	{T_BOOLEAN, "boolean"},
	{T_STRING, "java.lang.String"},
	{T_A_LABEL, "jdk.jfr.Label", ANNOTATION, FIELDS({"value", T_STRING})},
	{T_A_DESCRIPTION, "jdk.jfr.Description", ANNOTATION, FIELDS({"value", T_STRING})},
	{T_A_TIMESTAMP, "jdk.jfr.Timestamp", ANNOTATION, FIELDS({"value", T_STRING})},
	{T_A_TIMESPAN, "jdk.jfr.Timespan", ANNOTATION, FIELDS({"value", T_STRING})},
	{T_A_CATEGORY, "jdk.jfr.Category", ANNOTATION, FIELDS({"value", T_STRING, F_ARRAY})},
	{T_THREAD, "java.lang.Thread", .label = "Thread",
	 FIELDS({"osName", T_STRING, 0, "OS Thread Name"},
		{"osThreadId", T_LONG, 0, "OS Thread Id"},
		{"javaName", T_STRING, 0, "Java Thread Name"},
		{"javaThreadId", T_LONG, 0, "Java Thread Id"},
		{"group", T_THREADGROUP, F_CP, "Java Thread Group"})},
	{T_THREADGROUP, "jdk.types.ThreadGroup", .label = "Thread Group",
	 FIELDS({"parent", T_THREADGROUP, F_CP, "Parent"}, {"name", T_STRING, 0, "Name"})},
	{T_CLASS, "java.lang.Class", .label = "Java Class",
	 FIELDS({"classLoader", T_CLASSLOADER, F_CP, "Class Loader"},
		{"name", T_SYMBOL, F_CP, "Name"}, {"package", T_PACKAGE, F_CP, "Package"},
		{"modifiers", T_INT, 0, "Access Modifiers"}, {"hidden", T_BOOLEAN, 0, "Hidden"})},
	{T_CLASSLOADER, "jdk.types.ClassLoader", .label = "Java Class Loader",
	 FIELDS({"type", T_CLASS, F_CP, "Type"}, {"name", T_SYMBOL, F_CP, "Name"})},
	{T_METHOD, "jdk.types.Method", .label = "Java Method",
	 FIELDS({"type", T_CLASS, F_CP, "Type"}, {"name", T_SYMBOL, F_CP, "Name"},
		{"descriptor", T_SYMBOL, F_CP, "Descriptor"},
		{"modifiers", T_INT, 0, "Access Modifiers"}, {"hidden", T_BOOLEAN, 0, "Hidden"})},
	{T_SYMBOL, "jdk.types.Symbol", .simple = 1, .label = "Symbol",
	 FIELDS({"string", T_STRING, 0, "String"})},
	{T_PACKAGE, "jdk.types.Package", .label = "Package",
	 FIELDS({"name", T_SYMBOL, F_CP, "Name"}, {"module", T_MODULE, F_CP, "Module"},
		{"exported", T_BOOLEAN, 0, "Exported"})},
	{T_MODULE, "jdk.types.Module", .label = "Module",
	 FIELDS({"name", T_SYMBOL, F_CP, "Name"}, {"version", T_SYMBOL, F_CP, "Version"},
		{"location", T_SYMBOL, F_CP, "Location"},
		{"classLoader", T_CLASSLOADER, F_CP, "Class Loader"})},
	{T_STACKTRACE, "jdk.types.StackTrace", .label = "Stacktrace",
	 FIELDS({"truncated", T_BOOLEAN, 0, "Truncated"},
		{"frames", T_STACKFRAME, F_ARRAY, "Stack Frames"})},
	{T_STACKFRAME, "jdk.types.StackFrame",
	 FIELDS({"method", T_METHOD, F_CP, "Java Method"}, {"lineNumber", T_INT, 0, "Line Number"},
		{"bytecodeIndex", T_INT, 0, "Bytecode Index"},
		{"type", T_FRAMETYPE, F_CP, "Frame Type"})},
	{T_FRAMETYPE, "jdk.types.FrameType", .simple = 1, .label = "Frame type",
	 FIELDS({"description", T_STRING, 0, "Description"})},
	{T_THREADSTATE, "jdk.types.ThreadState", .simple = 1, .label = "Java Thread State",
	 FIELDS({"name", T_STRING, 0, "Name"})},
	{T_EV_EXECUTION_SAMPLE, "jdk.ExecutionSample", EVENT, .label = "Method Profiling Sample",
	 .desc = "Snapshot of a threads state (jprof: one on-CPU sample, Java and native frames)",
	 .cat = {"Java Virtual Machine", "Profiling"},
	 FIELDS(START_TIME, {"sampledThread", T_THREAD, F_CP, "Thread"},
		{"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
		{"state", T_THREADSTATE, F_CP, "Thread State"})},
	{T_EV_OFFCPU, "jprof.OffCPU", EVENT, .label = "Off-CPU Time",
	 .desc = "Time a thread was blocked in this stack during the recording, in total (jprof)",
	 .cat = {"jprof", "Profiling"},
	 FIELDS(START_TIME, DURATION, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"})},
	{T_EV_SYSCALL, "jprof.Syscall", EVENT, .label = "Slow System Calls",
	 .desc = "Slow system calls of a thread in this stack during the recording: their count "
		 "and "
		 "total time (jprof)",
	 .cat = {"jprof", "Profiling"},
	 FIELDS(START_TIME, DURATION, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"}, {"calls", T_LONG, 0, "Calls"})},
	{T_EV_THREADINFO, "jprof.ThreadInfo", EVENT, .label = "Thread Labels",
	 .desc = "The process and container of a thread that has events in this recording (jprof)",
	 .cat = {"jprof", "Threads"},
	 FIELDS(START_TIME, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"pid", T_INT, 0, "Process Id"}, {"processName", T_STRING, 0, "Process Name"},
		{"container", T_STRING, 0, "Container"}, {"cgroupId", T_LONG, 0, "Cgroup Id"})},
	{T_EV_RECORDING, "jprof.Recording", EVENT, .label = "jprof Recording",
	 .desc = "What jprof recorded, and what it lost", .cat = {"jprof"},
	 FIELDS(START_TIME, DURATION, {"title", T_STRING, 0, "Title"},
		{"host", T_STRING, 0, "Host"}, {"command", T_STRING, 0, "Command"},
		{"events", T_STRING, 0, "Events"},
		{"samplingPeriod", T_LONG, F_TIMESPAN, "CPU Sampling Period", "NANOSECONDS"},
		{"samples", T_LONG, 0, "Samples"}, {"lost", T_LONG, 0, "Samples Lost"},
		{"losses", T_STRING, 0, "Losses"})},
	/* the JDK's fields (GCName and GCCause as plain strings), plus the JVM's pid */
	{T_EV_GC, "jdk.GarbageCollection", EVENT, .label = "Garbage Collection",
	 .desc = "A stop-the-world GC pause of a JVM, from its hsperfdata counters (jprof)",
	 .cat = {"Java Virtual Machine", "GC"},
	 FIELDS(START_TIME, DURATION, {"gcId", T_INT, 0, "GC Identifier"},
		{"name", T_STRING, 0, "Name"}, {"cause", T_STRING, 0, "When"},
		{"sumOfPauses", T_LONG, F_TIMESPAN, "Sum of Pauses", "TICKS"},
		{"longestPause", T_LONG, F_TIMESPAN, "Longest Pause", "TICKS"},
		{"pid", T_INT, 0, "Process Id"})},
	{T_EV_ALLOC_SAMPLE, "jdk.ObjectAllocationSample", EVENT, .label = "Object Allocation Sample",
	 .desc = "Estimated bytes allocated in this stack during the recording, in total "
		 "(jprof -e alloc: JVMTI sampled allocations)",
	 .cat = {"Java Application"},
	 FIELDS(START_TIME, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
		{"objectClass", T_CLASS, F_CP, "Object Class"}, {"weight", T_LONG, 0, "Sample Weight"})},
	{T_EV_MONITOR_ENTER, "jdk.JavaMonitorEnter", EVENT, .label = "Java Monitor Blocked",
	 .desc = "Time blocked entering contended monitors in this stack during the recording, in "
		 "total (jprof -e lock)",
	 .cat = {"Java Application"},
	 FIELDS(START_TIME, DURATION, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
		{"monitorClass", T_CLASS, F_CP, "Monitor Class"})},
};
#pragma GCC diagnostic pop

struct meta_enc {
	struct strindex strs;
	struct bytebuf tree;
	int err;
};

static void m_str(struct meta_enc *e, const char *s)
{
	long i = strindex_get(&e->strs, s, strlen(s));

	if (i < 0) {
		e->err = (int)i;
		return;
	}
	jb_varint(&e->tree, (__u64)i);
}

static void m_attr(struct meta_enc *e, const char *k, const char *v)
{
	m_str(e, k);
	m_str(e, v);
}

static void m_attr_int(struct meta_enc *e, const char *k, long v)
{
	char tmp[24];

	snprintf(tmp, sizeof(tmp), "%ld", v);
	m_attr(e, k, tmp);
}

/* an annotation element with one value attribute (no children) */
static void m_annotation(struct meta_enc *e, int type, const char *value)
{
	m_str(e, "annotation");
	jb_varint(&e->tree, value ? 2 : 1);
	m_attr_int(e, "class", type);
	if (value)
		m_attr(e, "value", value);
	jb_varint(&e->tree, 0);
}

static void m_field(struct meta_enc *e, const struct fdesc *f)
{
	int nattr = 2 + !!(f->flags & F_CP) + !!(f->flags & F_ARRAY);
	int nchild = !!f->label + !!(f->flags & (F_TIMESTAMP | F_TIMESPAN));

	m_str(e, "field");
	jb_varint(&e->tree, (__u64)nattr);
	m_attr(e, "name", f->name);
	m_attr_int(e, "class", f->type);
	if (f->flags & F_CP)
		m_attr(e, "constantPool", "true");
	if (f->flags & F_ARRAY)
		m_attr(e, "dimension", "1");
	jb_varint(&e->tree, (__u64)nchild);
	if (f->label)
		m_annotation(e, T_A_LABEL, f->label);
	if (f->flags & F_TIMESTAMP)
		m_annotation(e, T_A_TIMESTAMP, "TICKS");
	if (f->flags & F_TIMESPAN)
		m_annotation(e, T_A_TIMESPAN, f->unit);
}

static void m_class(struct meta_enc *e, const struct cdesc *c)
{
	int nattr = 2 + !!c->super + !!c->simple;
	int nchild = c->nf + !!c->label + !!c->desc + !!c->cat[0];

	m_str(e, "class");
	jb_varint(&e->tree, (__u64)nattr);
	m_attr(e, "name", c->name);
	if (c->super)
		m_attr(e, "superType", c->super);
	if (c->simple)
		m_attr(e, "simpleType", "true");
	m_attr_int(e, "id", c->id);
	jb_varint(&e->tree, (__u64)nchild);
	for (int i = 0; i < c->nf; i++)
		m_field(e, &c->f[i]);
	if (c->label)
		m_annotation(e, T_A_LABEL, c->label);
	if (c->desc)
		m_annotation(e, T_A_DESCRIPTION, c->desc);
	if (c->cat[0]) {
		/* an array value: attributes value-0, value-1, ... */
		m_str(e, "annotation");
		jb_varint(&e->tree, c->cat[1] ? 3 : 2);
		m_attr_int(e, "class", T_A_CATEGORY);
		m_attr(e, "value-0", c->cat[0]);
		if (c->cat[1])
			m_attr(e, "value-1", c->cat[1]);
		jb_varint(&e->tree, 0);
	}
}

/* the metadata event, appended to out */
static int write_metadata(struct bytebuf *out, __u64 start_ticks)
{
	struct meta_enc e = {0};
	struct bytebuf body = {0};
	int n = (int)(sizeof(classes) / sizeof(classes[0])), err;

	m_str(&e, "root");
	jb_varint(&e.tree, 0);
	jb_varint(&e.tree, 2);
	m_str(&e, "metadata");
	jb_varint(&e.tree, 0);
	jb_varint(&e.tree, (__u64)n);
	for (int i = 0; i < n; i++)
		m_class(&e, &classes[i]);
	m_str(&e, "region");
	jb_varint(&e.tree, 2);
	m_attr(&e, "locale", "en_US");
	m_attr(&e, "gmtOffset", "0");
	jb_varint(&e.tree, 0);

	jb_varint(&body, EV_METADATA);
	jb_varint(&body, start_ticks);
	jb_varint(&body, 0); /* duration */
	jb_varint(&body, 1); /* metadata id */
	jb_varint(&body, e.strs.n);
	for (size_t i = 0; i < e.strs.n; i++)
		jb_str(&body, e.strs.strs[i]);
	bytebuf_add(&body, e.tree.p, e.tree.n);
	err = e.err ? e.err : e.tree.err ? e.tree.err : body.err;
	if (!err)
		jb_event(out, &body);
	bytebuf_free(&body);
	bytebuf_free(&e.tree);
	strindex_free(&e.strs);
	return err ? err : out->err;
}

/* ---- the writer ---- */

struct jmethod {
	__u32 cls, name, desc; /* keys of the class and symbol pools */
};

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
	struct bytebuf ev;			       /* the event being encoded */
	FILE *f;			       /* NULL while only sizing the events */
	__u64 ev_bytes;
	int err;
};

static void ev_begin(struct jfr *x, int type)
{
	x->ev.n = 0;
	jb_varint(&x->ev, (__u64)type);
}

static void ev_end(struct jfr *x)
{
	unsigned char sz[9];
	size_t total, k;

	if (x->ev.err) {
		x->err = x->ev.err;
		return;
	}
	total = event_size(x->ev.n);
	x->ev_bytes += total;
	if (!x->f || x->err)
		return;
	k = varint_enc(sz, total);
	if (fwrite(sz, 1, k, x->f) != k || fwrite(x->ev.p, 1, x->ev.n, x->f) != x->ev.n)
		x->err = errno ? -errno : -EIO;
}

/*
 * the time of sample k of a row's n: the model keeps no time per sample, so each row's samples
 * are spread evenly over the recording (the middles of n equal slices)
 */
static __u64 sample_ticks(const struct jfr *x, __u64 k, __u64 n)
{
	/* a duration past 2^62 ns (146 years) is not real: clamped, ticks stay a Java long */
	__u64 d = x->o->duration_ns < (1ull << 62) ? x->o->duration_ns : 1ull << 62;

	return JFR_START_TICKS + (__u64)((unsigned __int128)(2 * k + 1) * d / (2 * n));
}

static const char *nz(const char *s)
{
	return s ? s : "";
}

/* one jdk.GarbageCollection per pause: each is one pause, so sum and longest are its length */
static void gc_events(struct jfr *x)
{
	for (size_t i = 0; i < x->o->n_gc_pauses && !x->err; i++) {
		const struct out_gc_pause *p = &x->o->gc_pauses[i];
		__u64 d = p->duration_ns < (1ull << 62) ? p->duration_ns : 1ull << 62;
		__u64 t = p->start_ns < (1ull << 62) ? p->start_ns : 1ull << 62;

		ev_begin(x, T_EV_GC);
		jb_varint(&x->ev, JFR_START_TICKS + t);
		jb_long(&x->ev, d);
		jb_int(&x->ev, (__s32)p->gc_id);
		jb_str(&x->ev, nz(p->name));
		jb_str(&x->ev, nz(p->cause));
		jb_long(&x->ev, d);
		jb_long(&x->ev, d);
		jb_int(&x->ev, (__s32)p->pid);
		ev_end(x);
	}
}

static __u32 class_key(struct jfr *x, const char *name, size_t len, bool java);

/* the class an agent event's leaf frame names ("byte[]_[a]", "pkg.Gate_[l]"); 0 none */
static __u32 leaf_class(struct jfr *x, jp_id stack, const char *suffix)
{
	size_t n = 0, len;
	const jp_id *l = stack ? model__get_stack(x->m, stack, &n) : NULL;
	const struct jp_location *loc = n ? model__get_location(x->m, l[0]) : NULL;
	const struct jp_func *f = loc ? model__get_func(x->m, loc->func) : NULL;

	if (!f || !f->name)
		return 0;
	len = strlen(f->name);
	if (len <= 4 || strcmp(f->name + len - 4, suffix))
		return 0;
	return class_key(x, f->name, len - 4, false);
}

/* every event; marks the stacks and threads they use */
static void events(struct jfr *x)
{
	const struct out_meta *meta = x->o->meta;

	for (size_t i = 0; i < model__rows(x->m) && !x->err; i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(x->m, i, &rb);
		__u64 n = r->values[JP_VAL_CPU_SAMPLES];
		__u64 off = r->values[JP_VAL_OFFCPU_NS];
		__u64 calls = r->values[JP_VAL_SYSCALL_CALLS], sc_ns = r->values[JP_VAL_SYSCALL_NS];

		/* an id the tables do not hold (none do) is written as null, never dangling */
		jp_id stack = r->stack <= x->c.stacks ? r->stack : 0;
		jp_id labels = r->labels <= x->c.labels ? r->labels : 0;

		__u64 alloc = r->values[JP_VAL_ALLOC_SPACE], delay = r->values[JP_VAL_DELAY_NS];

		if (!n && !off && !calls && !sc_ns && !alloc && !delay)
			continue;
		x->stack_used[stack] = 1;
		x->labels_used[labels] = 1;
		for (__u64 k = 0; k < n && !x->err; k++) {
			ev_begin(x, T_EV_EXECUTION_SAMPLE);
			jb_varint(&x->ev, sample_ticks(x, k, n));
			jb_varint(&x->ev, labels);
			jb_varint(&x->ev, stack);
			jb_varint(&x->ev, STATE_RUNNABLE);
			ev_end(x);
		}
		if (off) {
			ev_begin(x, T_EV_OFFCPU);
			jb_varint(&x->ev, JFR_START_TICKS);
			jb_long(&x->ev, off);
			jb_varint(&x->ev, labels);
			jb_varint(&x->ev, stack);
			ev_end(x);
		}
		if (calls || sc_ns) {
			ev_begin(x, T_EV_SYSCALL);
			jb_varint(&x->ev, JFR_START_TICKS);
			jb_long(&x->ev, sc_ns);
			jb_varint(&x->ev, labels);
			jb_varint(&x->ev, stack);
			jb_long(&x->ev, calls);
			ev_end(x);
		}
		if (alloc) {
			ev_begin(x, T_EV_ALLOC_SAMPLE);
			jb_varint(&x->ev, JFR_START_TICKS);
			jb_varint(&x->ev, labels);
			jb_varint(&x->ev, stack);
			jb_varint(&x->ev, leaf_class(x, stack, "_[a]"));
			jb_long(&x->ev, alloc);
			ev_end(x);
		}
		if (delay) {
			ev_begin(x, T_EV_MONITOR_ENTER);
			jb_varint(&x->ev, JFR_START_TICKS);
			jb_long(&x->ev, delay);
			jb_varint(&x->ev, labels);
			jb_varint(&x->ev, stack);
			jb_varint(&x->ev, leaf_class(x, stack, "_[l]"));
			ev_end(x);
		}
	}
	for (jp_id id = 1; id <= x->c.labels && !x->err; id++) {
		const struct jp_labels *l = model__get_labels(x->m, id);

		if (!x->labels_used[id] || !l)
			continue;
		ev_begin(x, T_EV_THREADINFO);
		jb_varint(&x->ev, JFR_START_TICKS);
		jb_varint(&x->ev, id);
		jb_int(&x->ev, (__s32)l->pid);
		jb_str(&x->ev, nz(l->comm));
		jb_str(&x->ev, nz(l->container));
		jb_long(&x->ev, l->cgroup);
		ev_end(x);
	}
	if (meta && !x->err) {
		ev_begin(x, T_EV_RECORDING);
		jb_varint(&x->ev, JFR_START_TICKS);
		jb_long(&x->ev, x->o->duration_ns);
		jb_str(&x->ev, meta->title);
		jb_str(&x->ev, meta->host);
		jb_str(&x->ev, meta->command);
		jb_str(&x->ev, meta->events);
		jb_long(&x->ev, x->o->period_ns);
		jb_long(&x->ev, meta->samples);
		jb_long(&x->ev, meta->lost);
		jb_str(&x->ev, meta->losses);
		ev_end(x);
	}
	gc_events(x);
}

/* key (index + 1) of s[0..len) in a pool map; 0 and x->err on failure */
static __u32 key_of(struct jfr *x, struct strindex *t, const char *s, size_t len)
{
	long i = strindex_get(t, s, len);

	if (i < 0) {
		x->err = (int)i;
		return 0;
	}
	return (__u32)i + 1;
}

static __u32 sym(struct jfr *x, const char *s, size_t len)
{
	return key_of(x, &x->syms, s, len);
}

/* room for entry i of an array that grows with a pool; 0 or -ENOMEM in x->err */
static int grow(struct jfr *x, void **arr, size_t *cap, size_t i, size_t elem)
{
	size_t ncap;
	void *p;

	if (i < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	p = realloc(*arr, ncap * elem);
	if (!p) {
		x->err = -ENOMEM;
		return x->err;
	}
	*arr = p;
	*cap = ncap;
	return 0;
}

/* package key of name[0..len), its name interned as a symbol when new */
static __u32 package_key(struct jfr *x, const char *name, size_t len)
{
	size_t before = x->pkgs.n;
	__u32 k = key_of(x, &x->pkgs, name, len);

	if (!k || x->pkgs.n == before)
		return k;
	if (grow(x, (void **)&x->pkg_name, &x->pkg_name_cap, k - 1, sizeof(*x->pkg_name)))
		return 0;
	x->pkg_name[k - 1] = sym(x, name, len);
	return k;
}

/*
 * class key of name[0..len); a new class gets its name as a symbol and, for a Java class
 * (internal form), its package, so that every pool is complete before the first is written
 */
static __u32 class_key(struct jfr *x, const char *name, size_t len, bool java)
{
	size_t before = x->classes.n;
	__u32 k = key_of(x, &x->classes, name, len);
	const char *slash;

	if (!k || x->classes.n == before)
		return k;
	if (grow(x, (void **)&x->class_info, &x->class_info_cap, k - 1, sizeof(*x->class_info)))
		return 0;
	x->class_info[k - 1].name = sym(x, name, len);
	x->class_info[k - 1].pkg = 0;
	slash = java ? memrchr(name, '/', len) : NULL;
	if (slash)
		x->class_info[k - 1].pkg = package_key(x, name, (size_t)(slash - name));
	return k;
}

/* the pseudo class of native code: where it lives */
static const char *native_class(const struct jp_func *f, enum jp_frame_kind kind)
{
	const char *file = f ? nz(f->file) : "", *slash;

	if (kind == JP_FK_KERNEL)
		return "[kernel]";
	if (kind == JP_FK_ROOT)
		return "[jprof]";
	if (!file[0])
		return "[native]";
	slash = strrchr(file, '/');
	return slash && slash[1] ? slash + 1 : file;
}

static void method_of(struct jfr *x, jp_id id)
{
	const struct jp_func *f = id <= x->c.funcs ? model__get_func(x->m, id) : NULL;
	enum jp_frame_kind kind = (enum jp_frame_kind)(x->func_kind[id] - 1);
	struct jmethod *jm = &x->methods[id];
	const char *name = f && f->name && f->name[0] ? f->name : "[unknown]";
	const char *cls;

	if (f && f->java) {
		/* "pkg/Class.method" or "pkg/Class.method(I)V": class up to the last '.' */
		const char *paren = strchr(name, '(');
		size_t end = paren ? (size_t)(paren - name) : strlen(name);
		const char *dot = memrchr(name, '.', end);

		if (dot) {
			jm->cls = class_key(x, name, (size_t)(dot - name), true);
			jm->name = sym(x, dot + 1, end - (size_t)(dot - name) - 1);
		} else {
			jm->cls = class_key(x, "[unknown]", 9, false);
			jm->name = sym(x, name, end);
		}
		jm->desc = paren ? sym(x, paren, strlen(paren)) : sym(x, "()V", 3);
		return;
	}
	cls = native_class(f, kind);
	jm->cls = class_key(x, cls, strlen(cls), false);
	jm->name = sym(x, name, strlen(name));
	jm->desc = sym(x, "()V", 3);
}

static __u32 method_key(const struct jfr *x, jp_id func)
{
	return func && func <= x->c.funcs ? func : (__u32)x->c.funcs + 1;
}

static int frame_type(enum jp_frame_kind k)
{
	switch (k) {
	case JP_FK_INTERP:
		return FT_INTERPRETED;
	case JP_FK_JIT:
		return FT_JIT;
	case JP_FK_INLINED:
		return FT_INLINED;
	default:
		return FT_NATIVE;
	}
}

/*
 * Synthetic frames (process, thread, container, event markers) say what JFR says with the
 * event's type and thread: they are left out of stack traces.
 */
static bool is_marker(const struct jp_location *loc)
{
	return loc && loc->kind == JP_FK_ROOT;
}

/* the methods, classes, packages and symbols the used stacks need */
static void resolve_methods(struct jfr *x)
{
	for (jp_id s = 1; s <= x->c.stacks; s++) {
		const jp_id *locs;
		size_t n;

		if (!x->stack_used[s])
			continue;
		locs = model__get_stack(x->m, s, &n);
		for (size_t i = 0; locs && i < n; i++) {
			const struct jp_location *loc = model__get_location(x->m, locs[i]);
			__u32 mk = method_key(x, loc ? loc->func : 0);

			if (is_marker(loc))
				continue;
			if (!x->func_kind[mk])
				x->func_kind[mk] =
					(unsigned char)((loc ? loc->kind : JP_FK_NATIVE) + 1);
		}
	}
	for (jp_id id = 1; id <= x->c.funcs + 1 && !x->err; id++) {
		if (x->func_kind[id]) {
			method_of(x, id);
			x->n_methods++;
		}
	}
	for (jp_id s = 1; s <= x->c.stacks; s++)
		x->n_stacks += x->stack_used[s];
	for (jp_id id = 1; id <= x->c.labels; id++)
		x->n_threads += x->labels_used[id] && model__get_labels(x->m, id);
}

/* the constant pool event's body: every pool's size is known before it is written */
static int write_constant_pool(struct jfr *x, struct bytebuf *b)
{
	static const char *const frame_types[] = {
		[FT_INTERPRETED] = "Interpreted",
		[FT_JIT] = "JIT compiled",
		[FT_INLINED] = "Inlined",
		[FT_NATIVE] = "Native",
	};
	size_t counts[] = {x->n_threads, x->n_stacks, x->n_methods,	   x->classes.n,
			   x->pkgs.n,	 x->syms.n,   1 /* frame types */, 1 /* thread states */};
	int npools = 0;

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		npools += counts[i] > 0;
	jb_varint(b, EV_CHECKPOINT);
	jb_varint(b, JFR_START_TICKS);
	jb_varint(b, 0); /* duration */
	jb_varint(b, 0); /* delta to the next pool: none */
	bytebuf_u8(b, 0);	 /* checkpoint type: generic */
	jb_varint(b, (__u64)npools);

	/* threads: one per label set */
	if (x->n_threads) {
		jb_varint(b, T_THREAD);
		jb_varint(b, x->n_threads);
	}
	for (jp_id id = 1; id <= x->c.labels; id++) {
		const struct jp_labels *l = model__get_labels(x->m, id);
		const char *thread = l ? nz(l->thread) : "";

		if (!x->labels_used[id] || !l)
			continue;
		jb_varint(b, id);
		jb_str(b, thread[0] ? thread : nz(l->comm));
		jb_varint(b, l->tid);
		jb_str(b, thread[0] ? thread : NULL);
		jb_varint(b, 0); /* javaThreadId: not known */
		jb_varint(b, 0); /* group: null */
	}

	if (x->n_stacks) {
		jb_varint(b, T_STACKTRACE);
		jb_varint(b, x->n_stacks);
	}
	for (jp_id s = 1; s <= x->c.stacks; s++) {
		const jp_id *locs;
		size_t n = 0, frames;

		if (!x->stack_used[s])
			continue;
		locs = model__get_stack(x->m, s, &n);
		if (!locs)
			n = 0;
		frames = 0;
		for (size_t i = 0; i < n; i++)
			frames += !is_marker(model__get_location(x->m, locs[i]));
		jb_varint(b, s);
		bytebuf_u8(b, 0); /* truncated */
		jb_varint(b, frames);
		for (size_t i = 0; i < n; i++) {
			const struct jp_location *loc = model__get_location(x->m, locs[i]);
			enum jp_frame_kind k = loc ? loc->kind : JP_FK_NATIVE;
			bool java = k == JP_FK_JIT || k == JP_FK_INLINED || k == JP_FK_INTERP;

			if (is_marker(loc))
				continue;

			jb_varint(b, method_key(x, loc ? loc->func : 0));
			jb_int(b, java && loc->line > 0 ? loc->line : -1);
			jb_int(b, 0); /* bytecode index: not kept */
			jb_varint(b, (__u64)frame_type(k));
		}
	}

	if (x->n_methods) {
		jb_varint(b, T_METHOD);
		jb_varint(b, x->n_methods);
	}
	for (jp_id id = 1; id <= x->c.funcs + 1; id++) {
		if (!x->func_kind[id])
			continue;
		jb_varint(b, id);
		jb_varint(b, x->methods[id].cls);
		jb_varint(b, x->methods[id].name);
		jb_varint(b, x->methods[id].desc);
		jb_int(b, 0); /* modifiers */
		bytebuf_u8(b, 0);  /* hidden */
	}

	if (x->classes.n) {
		jb_varint(b, T_CLASS);
		jb_varint(b, x->classes.n);
	}
	for (size_t i = 0; i < x->classes.n; i++) {
		jb_varint(b, i + 1);
		jb_varint(b, 0); /* class loader: null */
		jb_varint(b, x->class_info[i].name);
		jb_varint(b, x->class_info[i].pkg);
		jb_int(b, 0); /* modifiers */
		bytebuf_u8(b, 0);  /* hidden */
	}

	if (x->pkgs.n) {
		jb_varint(b, T_PACKAGE);
		jb_varint(b, x->pkgs.n);
	}
	for (size_t i = 0; i < x->pkgs.n; i++) {
		jb_varint(b, i + 1);
		jb_varint(b, x->pkg_name[i]);
		jb_varint(b, 0); /* module: null */
		bytebuf_u8(b, 1);	 /* exported */
	}

	if (x->syms.n) {
		jb_varint(b, T_SYMBOL);
		jb_varint(b, x->syms.n);
	}
	for (size_t i = 0; i < x->syms.n; i++) {
		jb_varint(b, i + 1);
		jb_str(b, x->syms.strs[i]);
	}

	jb_varint(b, T_FRAMETYPE);
	jb_varint(b, FT_NATIVE);
	for (int i = FT_INTERPRETED; i <= FT_NATIVE; i++) {
		jb_varint(b, (__u64)i);
		jb_str(b, frame_types[i]);
	}

	jb_varint(b, T_THREADSTATE);
	jb_varint(b, 1);
	jb_varint(b, STATE_RUNNABLE);
	jb_str(b, "STATE_RUNNABLE");
	return x->err ? x->err : b->err;
}

static void write_header(struct bytebuf *b, const struct jfr_opts *o, __u64 chunk_size, __u64 cp_off,
			 __u64 meta_off)
{
	bytebuf_add(b, "FLR", 4); /* with its '\0' */
	jb_be(b, JFR_MAJOR, 2);
	jb_be(b, JFR_MINOR, 2);
	jb_be(b, chunk_size, 8);
	jb_be(b, cp_off, 8);
	jb_be(b, meta_off, 8);
	jb_be(b, o->start_unix_ns, 8);
	jb_be(b, o->duration_ns, 8);
	jb_be(b, JFR_START_TICKS, 8);
	jb_be(b, JFR_TICKS_PER_SEC, 8);
	jb_be(b, 0, 3); /* file state 0: finished */
	bytebuf_u8(b, JFR_FLAGS);
}

int out_jfr_write(const struct model *m, const struct jfr_opts *o, FILE *f)
{
	struct jfr x = {.m = m, .o = o};
	struct bytebuf meta = {0}, cp = {0}, head = {0};
	unsigned char cp_size[9];
	size_t cp_size_len = 0;
	int err;

	if (!m || !o || !f)
		return -EINVAL;
	model__counts(m, &x.c);
	x.stack_used = calloc(x.c.stacks + 1, 1);
	x.labels_used = calloc(x.c.labels + 1, 1);
	x.func_kind = calloc(x.c.funcs + 2, 1);
	x.methods = calloc(x.c.funcs + 2, sizeof(*x.methods));
	if (!x.stack_used || !x.labels_used || !x.func_kind || !x.methods) {
		err = -ENOMEM;
		goto out_free;
	}
	/* first pass: sizes only, and what the events use */
	events(&x);
	resolve_methods(&x);
	err = x.err;
	if (!err)
		err = write_metadata(&meta, JFR_START_TICKS);
	if (!err)
		err = write_constant_pool(&x, &cp);
	if (err)
		goto out_free;
	/* the constant pool's size prefix is written apart from it: no copy of the largest part */
	cp_size_len = varint_enc(cp_size, event_size(cp.n));
	write_header(&head, o, JFR_HEADER_SIZE + cp_size_len + cp.n + x.ev_bytes + meta.n,
		     JFR_HEADER_SIZE, JFR_HEADER_SIZE + cp_size_len + cp.n + x.ev_bytes);
	if (head.err) {
		err = head.err;
		goto out_free;
	}
	if (fwrite(head.p, 1, head.n, f) != head.n ||
	    fwrite(cp_size, 1, cp_size_len, f) != cp_size_len || fwrite(cp.p, 1, cp.n, f) != cp.n) {
		err = errno ? -errno : -EIO;
		goto out_free;
	}
	/* second pass: the same events, written */
	x.f = f;
	x.ev_bytes = 0;
	events(&x);
	err = x.err;
	/* the metadata last: older JMC reads events up to the metadata event */
	if (!err && fwrite(meta.p, 1, meta.n, f) != meta.n)
		err = errno ? -errno : -EIO;
	if (!err && fflush(f))
		err = -errno ? -errno : -EIO;
out_free:
	bytebuf_free(&head);
	bytebuf_free(&meta);
	bytebuf_free(&cp);
	bytebuf_free(&x.ev);
	free(x.stack_used);
	free(x.labels_used);
	free(x.func_kind);
	free(x.methods);
	free(x.class_info);
	free(x.pkg_name);
	strindex_free(&x.syms);
	strindex_free(&x.classes);
	strindex_free(&x.pkgs);
	return err;
}

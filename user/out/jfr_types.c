// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jfr_types.c: the JFR writer's types, and the metadata event that describes them */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_int.h"

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
	 .desc = "The process (its main class or jar, for a JVM) and container of a thread that "
		 "has events in this recording (jprof)",
	 .cat = {"jprof", "Threads"},
	 FIELDS(START_TIME, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"pid", T_INT, 0, "Process Id"}, {"processName", T_STRING, 0, "Process Name"},
		{"mainClass", T_STRING, 0, "Main Class"}, {"container", T_STRING, 0, "Container"},
		{"cgroupId", T_LONG, 0, "Cgroup Id"})},
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
	{T_EV_ALLOC_SAMPLE, "jdk.ObjectAllocationSample", EVENT,
	 .label = "Object Allocation Sample",
	 .desc = "Estimated bytes allocated in this stack during the recording, in total "
		 "(jprof -e alloc: JVMTI sampled allocations)",
	 .cat = {"Java Application"},
	 FIELDS(START_TIME, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
		{"objectClass", T_CLASS, F_CP, "Object Class"},
		{"weight", T_LONG, 0, "Sample Weight"})},
	{T_EV_MONITOR_ENTER, "jdk.JavaMonitorEnter", EVENT, .label = "Java Monitor Blocked",
	 .desc = "Time blocked entering contended monitors in this stack during the recording, in "
		 "total (jprof -e lock)",
	 .cat = {"Java Application"},
	 FIELDS(START_TIME, DURATION, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
		{"monitorClass", T_CLASS, F_CP, "Monitor Class"})},
	/* JDK 25's fields, then jprof's split of the call's time */
	{T_EV_METHOD_TRACE, "jdk.MethodTrace", EVENT, .label = "Method Trace",
	 .desc = "A slow call of a traced method, its time split into CPU, off-CPU by reason, "
		 "system calls and GC pauses (jprof trace)",
	 .cat = {"Java Application"},
	 FIELDS(START_TIME, DURATION, {"eventThread", T_THREAD, F_CP, "Event Thread"},
		{"stackTrace", T_STACKTRACE, F_CP, "Stack Trace"},
		{"method", T_METHOD, F_CP, "Method"}, {"thrown", T_BOOLEAN, 0, "Thrown"},
		{"cpuTime", T_LONG, F_TIMESPAN, "CPU Time", "NANOSECONDS"},
		{"offCpuTime", T_LONG, F_TIMESPAN, "Off-CPU Time", "NANOSECONDS"},
		{"syscalls", T_LONG, 0, "System Calls"},
		{"syscallTime", T_LONG, F_TIMESPAN, "System Call Time", "NANOSECONDS"},
		{"gcPauses", T_INT, 0, "GC Pauses"},
		{"gcTime", T_LONG, F_TIMESPAN, "GC Pause Time", "NANOSECONDS"},
		{"split", T_STRING, 0, "Split"},
		{"syscallsByName", T_STRING, 0, "System Calls by Name"},
		{"arguments", T_STRING, 0, "Arguments"})},
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
int jw_write_metadata(struct bytebuf *out, __u64 start_ticks)
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_jfr_read.c: the JFR reader. Round trips through jprof's own writer (model ->
 * out_jfr_write -> model__read_jfr: the same stacks, labels and totals), a chunk laid out
 * as another writer would (other field order, Latin-1, char-array and pooled strings), and
 * malformed files: every truncation and every flipped byte is refused or read, never
 * trusted past its bounds (ASAN).
 */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "model/jfr_read.h"
#include "model/model.h"
#include "out/jfr.h"
#include "out/out.h"
#include "../out/jfr_model.h"

static unsigned char *write_mem(const struct model *m, const struct jfr_opts *o, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (out_jfr_write(m, o, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return (unsigned char *)buf;
}

/* adds an allocation and a monitor wait row, with their class leaves as record makes them */
static int add_agent_rows(struct model *m)
{
	struct jp_labels l = {.pid = 100, .tid = 101, .comm = "java", .thread = "main", .container = ""};
	jp_id main_ = known_loc(m, "com/acme/Hot.main", "Hot.java", true, JP_FK_INTERP, 5, 0);
	jp_id a[] = {known_loc(m, "byte[]_[a]", "", false, JP_FK_ROOT, 0, 0),
		     known_loc(m, "com/acme/Hot.alloc", "Hot.java", true, JP_FK_JIT, 30, 0), main_};
	jp_id k[] = {known_loc(m, "com.acme.Gate_[l]", "", false, JP_FK_ROOT, 0, 0),
		     known_loc(m, "com/acme/Gate.enter", "Gate.java", true, JP_FK_INTERP, 7, 0),
		     main_};
	/* Java native methods (the walk names them as AGCT does: kind native, no suffix), one in
	 * the unnamed package, beside native code of a library: each keeps its class */
	jp_id nat[] = {known_loc(m, "java.lang.String_[a]", "", false, JP_FK_ROOT, 0, 0),
		       known_loc(m, "malloc", "libc.so.6", false, JP_FK_NATIVE, 0, 0),
		       known_loc(m, "java/lang/Class.initClassName", "", true, JP_FK_NATIVE, 0, 0),
		       known_loc(m, "SignalSafety.reset", "", true, JP_FK_NATIVE, 0, 0), main_};
	jp_id sa = model__stack(m, a, 3), sk = model__stack(m, k, 3), sn = model__stack(m, nat, 5);
	jp_id lb = model__labels(m, &l);

	if (!sa || !sk || !sn || !lb)
		return -ENOMEM;
	return model__add(m, sa, lb, JP_VAL_ALLOC_SPACE, 123456) ?:
	       model__add(m, sn, lb, JP_VAL_ALLOC_SPACE, 524320) ?:
	       model__add(m, sk, lb, JP_VAL_DELAY_NS, 7000000);
}

/*
 * one line per row: labels, frames leaf first (name, kind, line) without the marker frames
 * JFR has no place for (a class leaf "X_[a]"/"X_[l]" is kept: the reader makes it again),
 * and the columns a JFR file keeps; sorted, joined by newlines
 */
static char *rows_text(const struct model *m)
{
	static const enum jp_value cols[] = {JP_VAL_CPU_SAMPLES, JP_VAL_OFFCPU_NS,
					     JP_VAL_SYSCALL_CALLS, JP_VAL_SYSCALL_NS,
					     JP_VAL_ALLOC_SPACE, JP_VAL_DELAY_NS};
	size_t n = model__rows(m), total = 1;
	char **lines = calloc(n + 1, sizeof(*lines)), *out;

	for (size_t i = 0; i < n; i++) {
		struct jp_sample_row rb;
		const struct jp_sample_row *r = model__row(m, i, &rb);
		const struct jp_labels *l = model__get_labels(m, r->labels);
		size_t ns = 0, len = 0;
		const jp_id *st = model__get_stack(m, r->stack, &ns);
		FILE *f = open_memstream(&lines[i], &len);

		fprintf(f, "%u/%u/%s/%s/%s/%llu/%s |", l->pid, l->tid, l->comm, l->thread,
			l->container, (unsigned long long)l->cgroup, l->main ? l->main : "");
		for (size_t k = 0; st && k < ns; k++) {
			const struct jp_location *loc = model__get_location(m, st[k]);
			const struct jp_func *fn = model__get_func(m, loc->func);
			size_t nl = strlen(fn->name);

			if (loc->kind == JP_FK_ROOT &&
			    !(nl > 4 && (!strcmp(fn->name + nl - 4, "_[a]") ||
					 !strcmp(fn->name + nl - 4, "_[l]"))))
				continue;
			fprintf(f, " %s/%d/%d/%d", fn->name, loc->kind, loc->line, fn->java);
		}
		fprintf(f, " |");
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
			fprintf(f, " %llu", (unsigned long long)r->values[cols[c]]);
		fclose(f);
		total += len + 1;
	}
	out = calloc(1, total);
	for (size_t i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
		free(lines[i]);
	}
	free(lines);
	return out;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *rows_sorted(const struct model *m)
{
	char *t = rows_text(m), *out, **l;
	size_t n = 0, cap = 16, total = strlen(t) + 1;

	l = malloc(cap * sizeof(*l));
	for (char *s = strtok(t, "\n"); s; s = strtok(NULL, "\n")) {
		if (n == cap)
			l = realloc(l, (cap *= 2) * sizeof(*l));
		l[n++] = s;
	}
	qsort(l, n, sizeof(*l), cmp_str);
	out = calloc(1, total);
	for (size_t i = 0; i < n; i++) {
		strcat(out, l[i]);
		strcat(out, "\n");
	}
	free(l);
	free(t);
	return out;
}

TEST(round_trip_known_model)
{
	struct model *m = model__new(), *back = model__new();
	struct out_meta meta = {.title = "jprof: CPU", .host = "box", .command = "jprof record -a",
				.events = "cpu,offcpu,syscalls", .samples = 100, .lost = 3};
	struct out_gc_pause gc[] = {{.start_ns = 1000000, .duration_ns = 2500000, .pid = 100,
				     .gc_id = 7, .name = "G1 young", .cause = "G1 Evacuation Pause"},
				    {.start_ns = 3000000000ull, .duration_ns = 40000000, .pid = 100,
				     .gc_id = 8, .name = "G1 full", .cause = "System.gc()"}};
	struct jfr_opts o = {.start_unix_ns = 1700000000000000000ull,
			     .duration_ns = 5000000000ull,
			     .period_ns = 10101010,
			     .meta = &meta,
			     .gc_pauses = gc,
			     .n_gc_pauses = 2};
	struct jfr_read_info info;
	unsigned char *buf;
	char why[256], *a, *b;
	size_t len = 0;

	ASSERT_TRUE(m && back);
	ASSERT_TRUE(!jfr_known_model(m) && !add_agent_rows(m));
	/* the JVM's main class labels its process: kept in jprof.ThreadInfo, read back */
	ASSERT_TRUE(!model__name_process(m, 100, "com.acme.Hot"));
	buf = write_mem(m, &o, &len);
	ASSERT_TRUE(buf);
	EXPECT_TRUE(jfr_read_is_jfr(buf, len));
	EXPECT_EQ(model__read_jfr_info(back, buf, len, &info, why, sizeof(why)), 0);
	EXPECT_STREQ(why, "");
	EXPECT_EQ(model__total(back, JP_VAL_CPU_SAMPLES), KNOWN_CPU_SAMPLES);
	EXPECT_EQ(model__total(back, JP_VAL_CPU_NS), KNOWN_CPU_SAMPLES * 10101010ull);
	EXPECT_EQ(model__total(back, JP_VAL_OFFCPU_NS), KNOWN_OFFCPU_NS);
	EXPECT_EQ(model__total(back, JP_VAL_SYSCALL_CALLS), KNOWN_SYSCALLS);
	EXPECT_EQ(model__total(back, JP_VAL_SYSCALL_NS), KNOWN_SYSCALL_NS);
	EXPECT_EQ(model__total(back, JP_VAL_ALLOC_SPACE), 123456 + 524320);
	EXPECT_EQ(model__total(back, JP_VAL_DELAY_NS), 7000000);
	a = rows_sorted(m);
	b = rows_sorted(back);
	EXPECT_STREQ(b, a);
	free(a);
	free(b);
	/* what the recording says about itself */
	EXPECT_EQ(info.chunks, 1);
	EXPECT_TRUE(info.jprof);
	EXPECT_EQ(info.start_unix_ns, o.start_unix_ns);
	EXPECT_EQ(info.duration_ns, o.duration_ns);
	EXPECT_EQ(info.period_ns, 10101010);
	EXPECT_STREQ(info.host, "box");
	EXPECT_STREQ(info.command, "jprof record -a");
	EXPECT_STREQ(info.events_list, "cpu,offcpu,syscalls");
	EXPECT_STREQ(info.title, "jprof: CPU");
	EXPECT_EQ(info.samples, 100);
	EXPECT_EQ(info.lost, 3);
	EXPECT_EQ(info.skipped, 0);
	EXPECT_EQ(info.unresolved, 0);
	ASSERT_TRUE(info.n_gc == 2);
	EXPECT_EQ(info.gc[1].start_ns, 3000000000ull);
	EXPECT_EQ(info.gc[1].duration_ns, 40000000);
	EXPECT_EQ(info.gc[1].gc_id, 8);
	EXPECT_EQ(info.gc[1].pid, 100);
	EXPECT_STREQ(info.gc[1].cause, "System.gc()");
	EXPECT_STREQ(info.gc[0].name, "G1 young");
	free(info.gc);
	free(buf);
	model__free(back);
	model__free(m);
}

TEST(round_trip_many_stacks_and_two_chunks)
{
	struct model *m = model__new(), *back = model__new();
	struct jfr_opts o = {.start_unix_ns = 1000000000, .duration_ns = 2000000000};
	struct jfr_read_info info;
	unsigned char *buf, *two;
	char why[256];
	size_t len = 0;

	ASSERT_TRUE(m && back && !jfr_bench_model(m, 20000, 3000));
	buf = write_mem(m, &o, &len);
	ASSERT_TRUE(buf);
	EXPECT_EQ(model__read_jfr(back, buf, len, why, sizeof(why)), 0);
	EXPECT_EQ(model__total(back, JP_VAL_CPU_SAMPLES), 20000);
	EXPECT_EQ(model__rows(back), model__rows(m));
	/* a file of two chunks (as a long JDK recording is): both are read, the times span them */
	two = malloc(2 * len);
	ASSERT_TRUE(two);
	memcpy(two, buf, len);
	memcpy(two + len, buf, len);
	two[len + 35] ^= 0x01; /* the second chunk starts 2^32 ns later (bit 32 of its start) */
	model__reset(back);
	EXPECT_EQ(model__read_jfr_info(back, two, 2 * len, &info, why, sizeof(why)), 0);
	EXPECT_EQ(info.chunks, 2);
	EXPECT_EQ(model__total(back, JP_VAL_CPU_SAMPLES), 40000);
	EXPECT_EQ(info.start_unix_ns, 1000000000);
	EXPECT_EQ(info.duration_ns, 2000000000ull + (1ull << 32));
	free(two);
	free(buf);
	model__free(back);
	model__free(m);
}

TEST(truncated_files_are_refused)
{
	struct model *m = model__new(), *back;
	struct jfr_opts o = {.duration_ns = 1000};
	unsigned char *buf;
	char why[256];
	size_t len = 0;

	ASSERT_TRUE(m && !jfr_known_model(m));
	buf = write_mem(m, &o, &len);
	ASSERT_TRUE(buf);
	for (size_t n = 0; n < len; n++) {
		back = model__new();
		ASSERT_TRUE(back);
		why[0] = '\0';
		EXPECT_EQ(model__read_jfr(back, buf, n, why, sizeof(why)), -EINVAL);
		EXPECT_TRUE(why[0]);
		EXPECT_EQ(model__rows(back), 0);
		model__free(back);
	}
	free(buf);
	model__free(m);
}

/* every byte changed, one at a time: read or refused, within bounds (ASAN checks) */
TEST(flipped_bytes_never_read_out_of_bounds)
{
	struct model *m = model__new();
	struct jfr_opts o = {.duration_ns = 1000};
	static const unsigned char vals[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
	unsigned char *buf, *copy;
	size_t len = 0, refused = 0, read = 0;
	char why[256];

	ASSERT_TRUE(m && !jfr_known_model(m));
	buf = write_mem(m, &o, &len);
	ASSERT_TRUE(buf);
	copy = malloc(len);
	ASSERT_TRUE(copy);
	for (size_t i = 0; i < len; i++) {
		for (size_t v = 0; v < sizeof(vals); v++) {
			struct model *back;
			int err;

			memcpy(copy, buf, len);
			if (copy[i] == vals[v])
				continue;
			back = model__new();
			copy[i] = vals[v];
			err = model__read_jfr(back, copy, len, why, sizeof(why));
			EXPECT_TRUE(err == 0 || err == -EINVAL);
			refused += err != 0;
			read += err == 0;
			model__free(back);
		}
	}
	EXPECT_TRUE(refused > 0 && read > 0);
	free(copy);
	free(buf);
	model__free(m);
}

/* ---- a chunk as another writer lays it out, built by hand ---- */

struct bld {
	unsigned char b[8192];
	size_t n;
};

static void b_u8(struct bld *b, unsigned v)
{
	b->b[b->n++] = (unsigned char)v;
}

static void b_var(struct bld *b, __u64 v)
{
	while (v >= 0x80) {
		b_u8(b, (unsigned)(v & 0x7f) | 0x80);
		v >>= 7;
	}
	b_u8(b, (unsigned)v);
}

static void b_be(struct bld *b, __u64 v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		b_u8(b, (unsigned)(v >> (8 * i)) & 0xff);
}

/* integers as the header's flag says: varints, or big-endian ints and longs (flag bit 0 off) */
static bool fixed_ints;

static void b_int(struct bld *b, __u64 v)
{
	if (fixed_ints)
		b_be(b, v, 4);
	else
		b_var(b, v);
}

static void b_long(struct bld *b, __u64 v)
{
	if (fixed_ints)
		b_be(b, v, 8);
	else
		b_var(b, v);
}

static void b_char(struct bld *b, __u64 v)
{
	if (fixed_ints)
		b_be(b, v, 2);
	else
		b_var(b, v);
}

static void b_utf8(struct bld *b, const char *s)
{
	b_u8(b, 3);
	b_int(b, strlen(s));
	memcpy(b->b + b->n, s, strlen(s));
	b->n += strlen(s);
}

/* an event: its size (a padded 5-byte varint, as async-profiler writes it; an int), then body */
static void b_event(struct bld *out, const struct bld *body)
{
	__u64 size = body->n + 5;

	if (fixed_ints) {
		b_be(out, body->n + 4, 4);
		memcpy(out->b + out->n, body->b, body->n);
		out->n += body->n;
		return;
	}
	for (int i = 0; i < 4; i++)
		b_u8(out, (unsigned)((size >> (7 * i)) & 0x7f) | 0x80);
	b_u8(out, (unsigned)(size >> 28));
	memcpy(out->b + out->n, body->b, body->n);
	out->n += body->n;
}

/* metadata strings, by index */
static const char *const ms[] = {
	"root", "metadata", "class", "field", "name", "id", "class", "constantPool", "true",
	"dimension", "1", "long", "int", "java.lang.String", "jdk.types.Symbol", "java.lang.Class",
	"jdk.types.Method", "jdk.types.FrameType", "jdk.types.StackFrame", "jdk.types.StackTrace",
	"java.lang.Thread", "jdk.ExecutionSample", "boolean", "string", "description",
	"lineNumber", "method", "type", "frames", "truncated", "osName", "osThreadId",
	"javaName", "startTime", "stackTrace", "sampledThread", "100", "101", "102", "103", "104",
	"105", "106", "107", "108", "109", "110", "111", "superType", "jdk.jfr.Event", "extra",
	"jdk.Unknown", "112",
};

static unsigned ms_i(const char *s)
{
	for (unsigned i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		if (!strcmp(ms[i], s))
			return i;
	abort();
}

static void b_class(struct bld *b, const char *name, const char *id, int nfields, bool event)
{
	b_int(b, ms_i("class"));
	b_int(b, event ? 3 : 2);
	b_int(b, ms_i("name"));
	b_int(b, ms_i(name));
	b_int(b, ms_i("id"));
	b_int(b, ms_i(id));
	if (event) {
		b_int(b, ms_i("superType"));
		b_int(b, ms_i("jdk.jfr.Event"));
	}
	b_int(b, (__u64)nfields);
}

/* the id (as its metadata string) of a class of foreign_chunk() */
static const char *cls_id(const char *name)
{
	static const char *const ids[][2] = {
		{"long", "100"},	     {"int", "101"},
		{"java.lang.String", "102"}, {"jdk.types.Symbol", "103"},
		{"java.lang.Class", "104"},  {"jdk.types.Method", "105"},
		{"jdk.types.FrameType", "106"}, {"jdk.types.StackFrame", "107"},
		{"jdk.types.StackTrace", "108"}, {"java.lang.Thread", "109"},
		{"boolean", "110"},
	};

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (!strcmp(ids[i][0], name))
			return ids[i][1];
	abort();
}

static void b_field(struct bld *b, const char *name, const char *cls, bool cp, bool array)
{
	b_int(b, ms_i("field"));
	b_int(b, 2u + cp + array);
	b_int(b, ms_i("name"));
	b_int(b, ms_i(name));
	b_int(b, 6); /* "class" */
	b_int(b, ms_i(cls_id(cls)));
	if (cp) {
		b_int(b, ms_i("constantPool"));
		b_int(b, ms_i("true"));
	}
	if (array) {
		b_int(b, ms_i("dimension"));
		b_int(b, ms_i("1"));
	}
	b_int(b, 0); /* no children */
}

/*
 * A chunk whose classes list their fields in another order than the JDK's, with an
 * extra field the reader must skip, a symbol in Latin-1, one as chars, one through the
 * string pool, and an event type the reader does not know. Three samples: two of
 * p/Cls.m\u00e9th (interpreted, line 42) under p/Cls.run, one of the unknown type.
 */
static size_t foreign_chunk(unsigned char *out, bool fixed)
{
	static struct bld c, meta, body, cp;
	size_t meta_off, cp_off;

	fixed_ints = fixed;
	memset(&c, 0, sizeof(c));
	memset(&meta, 0, sizeof(meta));
	memset(&cp, 0, sizeof(cp));
	/* metadata: type 0, start, duration, id, strings, root */
	b_long(&meta, 0);
	b_long(&meta, 0);
	b_long(&meta, 0);
	b_long(&meta, 1);
	b_int(&meta, sizeof(ms) / sizeof(ms[0]));
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		b_utf8(&meta, ms[i]);
	b_int(&meta, ms_i("root"));
	b_int(&meta, 0);
	b_int(&meta, 1);
	b_int(&meta, ms_i("metadata"));
	b_int(&meta, 0);
	b_int(&meta, 13);
	b_class(&meta, "long", "100", 0, false);
	b_class(&meta, "int", "101", 0, false);
	b_class(&meta, "java.lang.String", "102", 0, false);
	b_class(&meta, "boolean", "110", 0, false);
	b_class(&meta, "jdk.types.Symbol", "103", 1, false);
	b_field(&meta, "string", "java.lang.String", false, false);
	b_class(&meta, "java.lang.Class", "104", 2, false);
	b_field(&meta, "extra", "long", false, true); /* an array of longs before the name */
	b_field(&meta, "name", "jdk.types.Symbol", true, false);
	b_class(&meta, "jdk.types.Method", "105", 2, false);
	b_field(&meta, "name", "jdk.types.Symbol", true, false);
	b_field(&meta, "type", "java.lang.Class", true, false);
	b_class(&meta, "jdk.types.FrameType", "106", 1, false);
	b_field(&meta, "description", "java.lang.String", false, false);
	b_class(&meta, "jdk.types.StackFrame", "107", 3, false);
	b_field(&meta, "type", "jdk.types.FrameType", true, false);
	b_field(&meta, "lineNumber", "int", false, false);
	b_field(&meta, "method", "jdk.types.Method", true, false);
	b_class(&meta, "jdk.types.StackTrace", "108", 2, false);
	b_field(&meta, "frames", "jdk.types.StackFrame", false, true);
	b_field(&meta, "truncated", "boolean", false, false);
	b_class(&meta, "java.lang.Thread", "109", 3, false);
	b_field(&meta, "javaName", "java.lang.String", false, false);
	b_field(&meta, "osThreadId", "long", false, false);
	b_field(&meta, "osName", "java.lang.String", false, false);
	b_class(&meta, "jdk.ExecutionSample", "111", 3, true);
	b_field(&meta, "stackTrace", "jdk.types.StackTrace", true, false);
	b_field(&meta, "startTime", "long", false, false);
	b_field(&meta, "sampledThread", "java.lang.Thread", true, false);
	b_class(&meta, "jdk.Unknown", "112", 1, true);
	b_field(&meta, "startTime", "long", false, false);

	/* the constant pool: type 1, start, duration, delta, kind, pools */
	b_long(&cp, 1);
	b_long(&cp, 0);
	b_long(&cp, 0);
	b_long(&cp, 0);
	b_u8(&cp, 0);
	b_int(&cp, 8);
	b_long(&cp, 102); /* java.lang.String pool: key 9 */
	b_int(&cp, 1);
	b_long(&cp, 9);
	b_utf8(&cp, "run");
	b_long(&cp, 103); /* symbols: 1 "p/Cls" in chars, 2 "m\xe9th" in Latin-1, 3 via the pool */
	b_int(&cp, 3);
	b_long(&cp, 1);
	b_u8(&cp, 4);
	b_int(&cp, 5);
	for (const char *s = "p/Cls"; *s; s++)
		b_char(&cp, (unsigned char)*s);
	b_long(&cp, 2);
	b_u8(&cp, 5);
	b_int(&cp, 4);
	b_u8(&cp, 'm');
	b_u8(&cp, 0xe9);
	b_u8(&cp, 't');
	b_u8(&cp, 'h');
	b_long(&cp, 3);
	b_u8(&cp, 2);
	b_long(&cp, 9);
	b_long(&cp, 104); /* class 1: extra [7, 8], name symbol 1 */
	b_int(&cp, 1);
	b_long(&cp, 1);
	b_int(&cp, 2);
	b_long(&cp, 7);
	b_long(&cp, 8);
	b_long(&cp, 1);
	b_long(&cp, 105); /* methods 1 (m\xe9th), 2 (run) */
	b_int(&cp, 2);
	b_long(&cp, 1);
	b_long(&cp, 2);
	b_long(&cp, 1);
	b_long(&cp, 2);
	b_long(&cp, 3);
	b_long(&cp, 1);
	b_long(&cp, 106); /* frame type 1 */
	b_int(&cp, 1);
	b_long(&cp, 1);
	b_utf8(&cp, "Interpreted");
	b_long(&cp, 108); /* stack 5: m\xe9th:42 <- run:-1 */
	b_int(&cp, 1);
	b_long(&cp, 5);
	b_int(&cp, 2);
	b_long(&cp, 1);
	b_int(&cp, 42);
	b_long(&cp, 1);
	b_long(&cp, 1);
	b_int(&cp, 0xffffffff);
	b_long(&cp, 2);
	b_u8(&cp, 0);
	b_long(&cp, 109); /* thread 3: "w\xe9" in Latin-1, tid 777 */
	b_int(&cp, 1);
	b_long(&cp, 3);
	b_u8(&cp, 5);
	b_int(&cp, 2);
	b_u8(&cp, 'w');
	b_u8(&cp, 0xe9);
	b_long(&cp, 777);
	b_u8(&cp, 0);
	b_long(&cp, 110); /* a pool of booleans, to be skipped: key 1 -> 1 */
	b_int(&cp, 1);
	b_long(&cp, 1);
	b_u8(&cp, 1);

	b_be(&c, 0x464c5200, 4);
	b_be(&c, 2, 2);
	b_be(&c, 0, 2);
	for (int i = 0; i < 4; i++)
		b_be(&c, 0, 8); /* size and offsets (below), start */
	b_be(&c, 5000, 8);    /* duration */
	b_be(&c, 1000, 8);    /* start ticks */
	b_be(&c, 1000000, 8); /* ticks per second */
	b_be(&c, fixed ? 2 : 3, 4); /* final chunk, integers compressed or not */
	for (int i = 0; i < 2; i++) {
		memset(&body, 0, sizeof(body));
		b_long(&body, 111);
		b_long(&body, 5);
		b_long(&body, 1500);
		b_long(&body, 3);
		b_event(&c, &body);
	}
	memset(&body, 0, sizeof(body));
	b_long(&body, 112);
	b_long(&body, 1600);
	b_event(&c, &body);
	cp_off = c.n;
	b_event(&c, &cp);
	meta_off = c.n;
	b_event(&c, &meta);
	for (int i = 0; i < 8; i++) {
		c.b[8 + i] = (unsigned char)((__u64)c.n >> (56 - 8 * i));
		c.b[16 + i] = (unsigned char)((__u64)cp_off >> (56 - 8 * i));
		c.b[24 + i] = (unsigned char)((__u64)meta_off >> (56 - 8 * i));
	}
	memcpy(out, c.b, c.n);
	return c.n;
}

TEST(another_writers_layout_and_string_encodings)
{
	struct model *m = model__new();
	struct jfr_read_info info;
	unsigned char buf[8192];
	size_t len = foreign_chunk(buf, false);
	char why[256], *t;

	ASSERT_TRUE(m);
	/* the fuzzer's seed tests/fuzz/corpus/fuzz_jfr_read/foreign.jfr is this chunk */
	if (getenv("JFR_READ_SEED")) {
		FILE *f = fopen(getenv("JFR_READ_SEED"), "w");

		ASSERT_TRUE(f && fwrite(buf, 1, len, f) == len);
		fclose(f);
	}
	EXPECT_EQ(model__read_jfr_info(m, buf, len, &info, why, sizeof(why)), 0);
	EXPECT_STREQ(why, "");
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 2);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_NS), 0); /* no period stated */
	EXPECT_EQ(info.events, 2);
	EXPECT_EQ(info.skipped, 1);
	EXPECT_EQ(info.unresolved, 0);
	EXPECT_TRUE(!info.jprof);
	t = rows_sorted(m);
	EXPECT_STREQ(t, "0/777/java/w\xc3\xa9//0/ | p/Cls.m\xc3\xa9th/5/42/1 p/Cls.run/5/0/1 | 2 0 0 "
			"0 0 0\n");
	free(t);
	/* every truncation of it, too */
	for (size_t n = 0; n < len; n++) {
		struct model *b = model__new();

		EXPECT_EQ(model__read_jfr(b, buf, n, why, sizeof(why)), -EINVAL);
		model__free(b);
	}
	model__free(m);
}

TEST(not_jfr)
{
	struct model *m = model__new();
	char why[256];

	ASSERT_TRUE(m);
	EXPECT_TRUE(!jfr_read_is_jfr("FLX", 4));
	EXPECT_EQ(model__read_jfr(m, "FLR\0\0\x01", 6, why, sizeof(why)), -EINVAL);
	EXPECT_TRUE(strstr(why, "no JFR chunk") != NULL);
	model__free(m);
}

/* the same chunk with fixed-width big-endian integers (compressed-integers flag off) */
TEST(fixed_width_integers)
{
	struct model *m = model__new(), *v = model__new();
	unsigned char buf[8192], vbuf[8192];
	size_t len = foreign_chunk(buf, true), vlen = foreign_chunk(vbuf, false);
	char why[256], *a, *b;

	ASSERT_TRUE(m && v);
	EXPECT_TRUE(len > vlen);
	EXPECT_EQ(model__read_jfr(m, buf, len, why, sizeof(why)), 0);
	EXPECT_STREQ(why, "");
	EXPECT_EQ(model__read_jfr(v, vbuf, vlen, why, sizeof(why)), 0);
	a = rows_sorted(m);
	b = rows_sorted(v);
	EXPECT_STREQ(a, b);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 2);
	free(a);
	free(b);
	for (size_t n = 0; n < len; n++) {
		struct model *t = model__new();

		EXPECT_EQ(model__read_jfr(t, buf, n, why, sizeof(why)), -EINVAL);
		model__free(t);
	}
	model__free(v);
	model__free(m);
}

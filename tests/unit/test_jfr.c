// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_jfr.c: the JFR writer, read back by a small reader of our own that follows the
 * metadata it finds (as the JDK's parser does): header, sizes and offsets, the element tree,
 * every constant pool entry and every event field, event counts and the top frame.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "model/model.h"
#include "out/jfr.h"
#include "../out/jfr_model.h"

/* ---- a reader: every read is bounds-checked, the first error sticks ---- */

struct rd {
	const unsigned char *p;
	size_t n, pos;
	int err;
};

static __u64 rd_varint(struct rd *r)
{
	__u64 v = 0;

	for (int i = 0; i < 9; i++) {
		unsigned char b;

		if (r->pos >= r->n) {
			r->err = -EBADMSG;
			return 0;
		}
		b = r->p[r->pos++];
		if (i == 8)
			return v | (__u64)b << 56;
		v |= (__u64)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	return v;
}

static unsigned char rd_u8(struct rd *r)
{
	if (r->pos >= r->n) {
		r->err = -EBADMSG;
		return 0;
	}
	return r->p[r->pos++];
}

static __u64 rd_be(const unsigned char *p, int bytes)
{
	__u64 v = 0;

	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* a string into buf (NUL-terminated, cut to size); encodings 0, 1 and 3 only */
static void rd_str(struct rd *r, char *buf, size_t size)
{
	unsigned char enc = rd_u8(r);
	__u64 len;

	buf[0] = 0;
	if (enc == 0 || enc == 1)
		return;
	if (enc != 3) {
		r->err = -EBADMSG;
		return;
	}
	len = rd_varint(r);
	if (r->err || len > r->n - r->pos) {
		r->err = -EBADMSG;
		return;
	}
	snprintf(buf, size, "%.*s", (int)len, (const char *)r->p + r->pos);
	r->pos += len;
}

/* ---- the metadata, as far as a reader needs it ---- */

#define MAX_STRS    512
#define MAX_CLASSES 64
#define MAX_FIELDS  16
#define MAX_ENTRIES 4096

struct tfield {
	char name[32];
	__u64 type;
	int cp, array;
};

struct tclass {
	__u64 id;
	char name[64];
	int nf;
	struct tfield f[MAX_FIELDS];
};

struct entry {
	__u64 type, key;
	size_t pos; /* of the value */
};

struct jfile {
	struct rd r;
	char strs[MAX_STRS][96];
	size_t nstrs;
	struct tclass cls[MAX_CLASSES];
	int ncls;
	struct entry ent[MAX_ENTRIES];
	size_t nent;
	int elements;
};

static const char *str_at(struct jfile *j, __u64 i)
{
	if (i >= j->nstrs) {
		j->r.err = -EBADMSG;
		return "";
	}
	return j->strs[i];
}

static void parse_element(struct jfile *j, int depth, struct tclass *parent)
{
	const char *name = str_at(j, rd_varint(&j->r));
	__u64 nattr = rd_varint(&j->r), nchild;
	struct tclass *c = NULL;
	struct tfield *f = NULL;

	if (depth > 6 || j->r.err) {
		j->r.err = -EBADMSG;
		return;
	}
	j->elements++;
	if (!strcmp(name, "class") && depth == 2 && j->ncls < MAX_CLASSES)
		c = &j->cls[j->ncls++];
	if (!strcmp(name, "field") && parent && parent->nf < MAX_FIELDS)
		f = &parent->f[parent->nf++];
	for (__u64 i = 0; i < nattr && !j->r.err; i++) {
		const char *k = str_at(j, rd_varint(&j->r));
		const char *v = str_at(j, rd_varint(&j->r));

		if (c && !strcmp(k, "name"))
			snprintf(c->name, sizeof(c->name), "%s", v);
		if (c && !strcmp(k, "id"))
			c->id = strtoull(v, NULL, 10);
		if (f && !strcmp(k, "name"))
			snprintf(f->name, sizeof(f->name), "%s", v);
		if (f && !strcmp(k, "class"))
			f->type = strtoull(v, NULL, 10);
		if (f && !strcmp(k, "constantPool"))
			f->cp = !strcmp(v, "true");
		if (f && !strcmp(k, "dimension"))
			f->array = !strcmp(v, "1");
	}
	nchild = rd_varint(&j->r);
	for (__u64 i = 0; i < nchild && !j->r.err; i++)
		parse_element(j, depth + 1, c);
}

static struct tclass *class_by_id(struct jfile *j, __u64 id)
{
	for (int i = 0; i < j->ncls; i++)
		if (j->cls[i].id == id)
			return &j->cls[i];
	return NULL;
}

static struct tclass *class_by_name(struct jfile *j, const char *name)
{
	for (int i = 0; i < j->ncls; i++)
		if (!strcmp(j->cls[i].name, name))
			return &j->cls[i];
	return NULL;
}

/* skips one value of a type, as its metadata describes it */
static void skip_value(struct jfile *j, __u64 type, int depth)
{
	struct tclass *c = class_by_id(j, type);
	char tmp[8];

	if (!c || depth > 8) {
		j->r.err = -EBADMSG;
		return;
	}
	if (!strcmp(c->name, "long") || !strcmp(c->name, "int")) {
		rd_varint(&j->r);
		return;
	}
	if (!strcmp(c->name, "boolean")) {
		rd_u8(&j->r);
		return;
	}
	if (!strcmp(c->name, "java.lang.String")) {
		rd_str(&j->r, tmp, sizeof(tmp));
		return;
	}
	for (int i = 0; i < c->nf && !j->r.err; i++) {
		__u64 n = c->f[i].array ? rd_varint(&j->r) : 1;

		for (__u64 k = 0; k < n && !j->r.err; k++) {
			if (c->f[i].cp)
				rd_varint(&j->r);
			else
				skip_value(j, c->f[i].type, depth + 1);
		}
	}
}

static struct entry *find_entry(struct jfile *j, const char *type, __u64 key)
{
	struct tclass *c = class_by_name(j, type);

	for (size_t i = 0; c && i < j->nent; i++)
		if (j->ent[i].type == c->id && j->ent[i].key == key)
			return &j->ent[i];
	return NULL;
}

/* the string of a jdk.types.Symbol */
static void symbol(struct jfile *j, __u64 key, char *buf, size_t size)
{
	struct entry *e = find_entry(j, "jdk.types.Symbol", key);
	struct rd r = j->r;

	buf[0] = 0;
	if (!e)
		return;
	r.pos = e->pos;
	rd_str(&r, buf, size);
}

static bool has_symbol(struct jfile *j, const char *want)
{
	struct tclass *c = class_by_name(j, "jdk.types.Symbol");
	char buf[256];

	for (size_t i = 0; c && i < j->nent; i++) {
		if (j->ent[i].type != c->id)
			continue;
		symbol(j, j->ent[i].key, buf, sizeof(buf));
		if (!strcmp(buf, want))
			return true;
	}
	return false;
}

/* "class.method" of the top frame of a stack trace */
static void top_frame(struct jfile *j, __u64 stack, char *buf, size_t size)
{
	struct entry *e = find_entry(j, "jdk.types.StackTrace", stack);
	struct rd r = j->r;
	__u64 method, cls, name;
	char cname[128], mname[128];

	buf[0] = 0;
	if (!e)
		return;
	r.pos = e->pos;
	rd_u8(&r); /* truncated */
	if (!rd_varint(&r))
		return;
	method = rd_varint(&r);
	e = find_entry(j, "jdk.types.Method", method);
	if (!e)
		return;
	r.pos = e->pos;
	cls = rd_varint(&r);
	name = rd_varint(&r);
	e = find_entry(j, "java.lang.Class", cls);
	if (!e)
		return;
	r.pos = e->pos;
	rd_varint(&r); /* class loader */
	symbol(j, rd_varint(&r), cname, sizeof(cname));
	symbol(j, name, mname, sizeof(mname));
	snprintf(buf, size, "%s.%s", cname, mname);
}

struct counts {
	int exec, offcpu, syscall, threadinfo, recording, other;
	int top; /* samples whose top frame is com/acme/Hot.spin */
	__u64 offcpu_ns, syscalls;
	__u64 tmin, tmax; /* ticks of the first and last sample */
};

/* parses the whole chunk; 0 or -EBADMSG, with what failed on stderr */
static int parse(struct jfile *j, const unsigned char *p, size_t n, struct counts *ct)
{
	__u64 chunk, cp_off, meta_off, size, end, meta_end;
	struct tclass *exec, *off, *sc, *ti, *rec;

	memset(ct, 0, sizeof(*ct));
	j->r = (struct rd){.p = p, .n = n};
	if (n < 68 || memcmp(p, "FLR", 4) || rd_be(p + 4, 2) != 2 || rd_be(p + 6, 2) != 1)
		return -EBADMSG;
	chunk = rd_be(p + 8, 8);
	cp_off = rd_be(p + 16, 8);
	meta_off = rd_be(p + 24, 8);
	if (chunk != n || meta_off < 68 || cp_off < 68 || meta_off >= n || cp_off >= n ||
	    rd_be(p + 56, 8) != 1000000000ull || p[64] != 0 || p[67] != 3)
		return -EBADMSG;

	/* metadata: strings, then the element tree, ending where the event ends */
	j->r.pos = meta_off;
	size = rd_varint(&j->r);
	end = meta_off + size;
	if (rd_varint(&j->r) != 0)
		return -EBADMSG;
	rd_varint(&j->r); /* start */
	rd_varint(&j->r); /* duration */
	rd_varint(&j->r); /* metadata id */
	j->nstrs = rd_varint(&j->r);
	if (j->nstrs > MAX_STRS)
		return -EBADMSG;
	for (size_t i = 0; i < j->nstrs; i++)
		rd_str(&j->r, j->strs[i], sizeof(j->strs[i]));
	parse_element(j, 0, NULL);
	if (j->r.err || j->r.pos != end)
		return -EBADMSG;
	meta_end = end;

	/* the constant pool: every entry parsed by its type's fields */
	j->r.pos = cp_off;
	size = rd_varint(&j->r);
	end = cp_off + size;
	if (rd_varint(&j->r) != 1)
		return -EBADMSG;
	rd_varint(&j->r);
	rd_varint(&j->r);
	if (rd_varint(&j->r) != 0) /* delta: the only pool */
		return -EBADMSG;
	rd_u8(&j->r);
	for (__u64 npools = rd_varint(&j->r), i = 0; i < npools && !j->r.err; i++) {
		__u64 type = rd_varint(&j->r), count = rd_varint(&j->r);

		if (!count || !class_by_id(j, type))
			return -EBADMSG;
		for (__u64 k = 0; k < count && !j->r.err && j->nent < MAX_ENTRIES; k++) {
			struct entry *e = &j->ent[j->nent++];

			e->type = type;
			e->key = rd_varint(&j->r);
			e->pos = j->r.pos;
			skip_value(j, type, 0);
		}
	}
	if (j->r.err || j->r.pos != end)
		return -EBADMSG;

	/* events: after both, to the end of the chunk */
	exec = class_by_name(j, "jdk.ExecutionSample");
	off = class_by_name(j, "jprof.OffCPU");
	sc = class_by_name(j, "jprof.Syscall");
	ti = class_by_name(j, "jprof.ThreadInfo");
	rec = class_by_name(j, "jprof.Recording");
	if (!exec || !off || !sc || !ti || !rec)
		return -EBADMSG;
	/*
	 * every event from the header on; the constant pool and metadata events where the
	 * header says, the metadata last (JMC before 8.x stops reading there)
	 */
	j->r.pos = 68;
	while (j->r.pos < n && !j->r.err) {
		size_t start = j->r.pos;
		__u64 sz = rd_varint(&j->r), type = rd_varint(&j->r);

		if (!sz || sz > n - start)
			return -EBADMSG;
		if (type == 0 || type == 1) {
			if (start != (type ? cp_off : meta_off) || (!type && meta_end != n))
				return -EBADMSG;
			j->r.pos = start + sz;
			continue;
		}
		skip_value(j, type, 0);
		if (j->r.err || j->r.pos != start + sz)
			return -EBADMSG;
		if (type == exec->id) {
			struct rd r = {.p = p, .n = n, .pos = start};
			char top[256];
			__u64 t;

			rd_varint(&r);
			rd_varint(&r);
			t = rd_varint(&r); /* start */
			ct->tmin = ct->exec ? (t < ct->tmin ? t : ct->tmin) : t;
			ct->tmax = ct->exec ? (t > ct->tmax ? t : ct->tmax) : t;
			if (!find_entry(j, "java.lang.Thread", rd_varint(&r)))
				return -EBADMSG;
			top_frame(j, rd_varint(&r), top, sizeof(top));
			ct->top += !strcmp(top, "com/acme/Hot.spin");
			ct->exec++;
		} else if (type == off->id || type == sc->id) {
			struct rd r = {.p = p, .n = n, .pos = start};
			__u64 dur;

			rd_varint(&r);
			rd_varint(&r);
			rd_varint(&r);
			dur = rd_varint(&r);
			rd_varint(&r); /* thread */
			rd_varint(&r); /* stack */
			if (type == off->id) {
				ct->offcpu++;
				ct->offcpu_ns += dur;
			} else {
				ct->syscall++;
				ct->syscalls += rd_varint(&r);
			}
		} else if (type == ti->id) {
			ct->threadinfo++;
		} else if (type == rec->id) {
			ct->recording++;
		} else {
			ct->other++;
		}
	}
	return j->r.err ? j->r.err : j->r.pos == n ? 0 : -EBADMSG;
}

static unsigned char *write_mem(const struct model *m, const struct jfr_opts *o, size_t *len,
				int *err)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f) {
		*err = -errno;
		return NULL;
	}
	*err = out_jfr_write(m, o, f);
	fclose(f);
	return (unsigned char *)buf;
}

TEST(known_model_reads_back)
{
	struct model *m = model__new();
	struct out_meta meta = {.title = "t", .host = "h", .events = "cpu", .samples = 100};
	struct jfr_opts o = {.start_unix_ns = 1700000000000000000ull,
			     .duration_ns = 5000000000ull,
			     .period_ns = 10101010,
			     .meta = &meta};
	struct jfile *j = calloc(1, sizeof(*j));
	struct counts ct;
	unsigned char *buf;
	size_t len = 0;
	int err;

	ASSERT_TRUE(m && j);
	EXPECT_EQ(jfr_known_model(m), 0);
	buf = write_mem(m, &o, &len, &err);
	EXPECT_EQ(err, 0);
	ASSERT_TRUE(buf && len > 68);
	EXPECT_TRUE(!memcmp(buf, "FLR\0", 4));
	EXPECT_EQ(rd_be(buf + 8, 8), len);		/* chunk size */
	EXPECT_EQ(rd_be(buf + 32, 8), o.start_unix_ns); /* start */
	EXPECT_EQ(rd_be(buf + 40, 8), o.duration_ns);
	EXPECT_EQ(parse(j, buf, len, &ct), 0);
	EXPECT_TRUE(j->elements > 100);
	EXPECT_EQ(ct.exec, KNOWN_CPU_SAMPLES);
	EXPECT_EQ(ct.top, KNOWN_TOP_SAMPLES);
	/* samples spread over the recording: ticks are ns since its start, plus 1 */
	EXPECT_TRUE(ct.tmin >= 1 && ct.tmin < 1 + o.duration_ns / 10);
	EXPECT_TRUE(ct.tmax <= 1 + o.duration_ns && ct.tmax > 1 + o.duration_ns / 10 * 9);
	EXPECT_EQ(ct.offcpu, 1);
	EXPECT_EQ(ct.offcpu_ns, KNOWN_OFFCPU_NS);
	EXPECT_EQ(ct.syscall, 1);
	EXPECT_EQ(ct.syscalls, KNOWN_SYSCALLS);
	EXPECT_EQ(ct.threadinfo, KNOWN_THREADS);
	EXPECT_EQ(ct.recording, 1);
	EXPECT_EQ(ct.other, 0);
	/* the pools hold what the events use: 4 stacks, 3 threads, 4 frame types */
	EXPECT_TRUE(find_entry(j, "jdk.types.StackTrace", 4) != NULL);
	EXPECT_TRUE(find_entry(j, "java.lang.Thread", 3) != NULL);
	EXPECT_TRUE(find_entry(j, "jdk.types.FrameType", 4) != NULL);
	/* the off-CPU stack's marker frame is left out: its top frame is the kernel's */
	{
		char top[256];

		top_frame(j, 4, top, sizeof(top));
		EXPECT_STREQ(top, "[kernel].schedule");
		EXPECT_TRUE(!has_symbol(j, "[off-cpu]"));
		EXPECT_TRUE(has_symbol(j, "schedule"));
	}
	free(buf);

	/* the same model twice gives the same bytes */
	{
		size_t len2;
		unsigned char *b2 = write_mem(m, &o, &len2, &err),
			      *b1 = write_mem(m, &o, &len, &err);

		EXPECT_TRUE(b1 && b2 && len == len2 && !memcmp(b1, b2, len));
		free(b1);
		free(b2);
	}
	free(j);
	model__free(m);
}

TEST(empty_model_and_no_meta)
{
	struct model *m = model__new();
	struct jfr_opts o = {0};
	struct jfile *j = calloc(1, sizeof(*j));
	struct counts ct;
	unsigned char *buf;
	size_t len = 0;
	int err;

	ASSERT_TRUE(m && j);
	buf = write_mem(m, &o, &len, &err);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(parse(j, buf, len, &ct), 0);
	EXPECT_EQ(ct.exec + ct.offcpu + ct.syscall + ct.threadinfo + ct.recording, 0);
	free(buf);
	free(j);
	model__free(m);
}

TEST(errors)
{
	struct model *m = model__new();
	struct jfr_opts o = {.duration_ns = 1000};
	FILE *full = fopen("/dev/full", "w");

	ASSERT_TRUE(m);
	EXPECT_EQ(out_jfr_write(NULL, &o, stdout), -EINVAL);
	EXPECT_EQ(out_jfr_write(m, NULL, stdout), -EINVAL);
	EXPECT_EQ(jfr_known_model(m), 0);
	if (full) {
		/* a full disk is an error, never a silently short file */
		EXPECT_TRUE(out_jfr_write(m, &o, full) < 0);
		fclose(full);
	}
	model__free(m);
}

/* large values need JFR's 9-byte varint; a stack deeper than a varint byte counts */
TEST(big_values_and_deep_stacks)
{
	struct model *m = model__new();
	struct jp_labels lab = {.pid = 0xffffffffu,
				.tid = 7,
				.comm = "c",
				.thread = NULL,
				.container = NULL,
				.cgroup = ~0ull};
	struct jfr_opts o = {.start_unix_ns = ~0ull >> 1, .duration_ns = 1};
	struct jfile *j = calloc(1, sizeof(*j));
	jp_id locs[300], st, l;
	struct counts ct;
	unsigned char *buf;
	size_t len = 0;
	int err;

	ASSERT_TRUE(m && j);
	for (int i = 0; i < 300; i++) {
		char name[32];

		snprintf(name, sizeof(name), i % 2 ? "a/B.m%d" : "nomethoddot%d", i);
		locs[i] = known_loc(m, name, "", i % 2, i % 2 ? JP_FK_JIT : JP_FK_KERNEL, i, ~0ull);
	}
	st = model__stack(m, locs, 300);
	l = model__labels(m, &lab);
	EXPECT_EQ(model__add(m, st, l, JP_VAL_OFFCPU_NS, ~0ull), 0);
	EXPECT_EQ(model__add(m, st, l, JP_VAL_CPU_SAMPLES, 3), 0);
	buf = write_mem(m, &o, &len, &err);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(parse(j, buf, len, &ct), 0);
	EXPECT_EQ(ct.exec, 3);
	EXPECT_EQ(ct.offcpu_ns, INT64_MAX); /* clamped: a Java long */
	free(buf);
	free(j);
	model__free(m);
}

/*
 * A file's claim of 2^40 CPU samples (one event each) is written as the writer's budget of
 * events, each row's in proportion, not 2^40 events (a fuzzer found the loop)
 */
TEST(sample_claims_over_the_budget)
{
	struct model *m = model__new();
	struct jp_labels lab = {.pid = 1, .tid = 1, .comm = "c"};
	struct jfr_opts o = {.start_unix_ns = 1, .duration_ns = 1000000000};
	struct jfile *j = calloc(1, sizeof(*j));
	jp_id a, b, l;
	struct counts ct;
	unsigned char *buf;
	size_t len = 0;
	__u64 was;
	int err;

	ASSERT_TRUE(m && j);
	a = known_loc(m, "a/A.big", "", 1, JP_FK_JIT, 1, 0);
	b = known_loc(m, "a/B.small", "", 1, JP_FK_JIT, 2, 0);
	l = model__labels(m, &lab);
	EXPECT_EQ(model__add(m, model__stack(m, &a, 1), l, JP_VAL_CPU_SAMPLES, 3ull << 40), 0);
	EXPECT_EQ(model__add(m, model__stack(m, &b, 1), l, JP_VAL_CPU_SAMPLES, 1ull << 40), 0);
	was = out_jfr_max_samples(1000);
	buf = write_mem(m, &o, &len, &err);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(out_jfr_samples_scaled(), 4ull << 40);
	EXPECT_EQ(parse(j, buf, len, &ct), 0);
	EXPECT_EQ(ct.exec, 1000); /* 750 + 250 */
	free(buf);
	/* under the budget: every sample its event, nothing scaled */
	(void)out_jfr_max_samples(was);
	model__free(m);
	m = model__new();
	ASSERT_TRUE(m);
	a = known_loc(m, "a/A.big", "", 1, JP_FK_JIT, 1, 0);
	l = model__labels(m, &lab);
	EXPECT_EQ(model__add(m, model__stack(m, &a, 1), l, JP_VAL_CPU_SAMPLES, 1234), 0);
	buf = write_mem(m, &o, &len, &err);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(out_jfr_samples_scaled(), 0);
	EXPECT_EQ(parse(j, buf, len, &ct), 0);
	EXPECT_EQ(ct.exec, 1234);
	free(buf);
	free(j);
	model__free(m);
}

/*
 * jprof trace's slow calls: one jdk.MethodTrace each, its encoding as our metadata says (the
 * reader walks every field), its method the stack's first frame that is no marker, its time
 * clamped to the recording, a stack id the model lacks written as null
 */
TEST(method_traces_read_back)
{
	struct model *m = model__new();
	struct jp_labels lab = {.pid = 42, .tid = 7, .comm = "java", .thread = "worker"};
	struct jfr_opts o = {.start_unix_ns = 1, .duration_ns = 1000000000};
	struct out_method_trace ev[3] = {0};
	struct jfile *j = calloc(1, sizeof(*j));
	jp_id locs[3], st1, st2;
	struct counts ct;
	unsigned char *buf;
	size_t len = 0;
	char top[256];
	int err;

	ASSERT_TRUE(m && j);
	locs[0] = known_loc(m, "JVM 42", "", false, JP_FK_ROOT, 0, 0);
	locs[1] = known_loc(m, "a/Svc.place(I)V", "", true, JP_FK_JIT, 0, 0);
	locs[2] = known_loc(m, "a/Svc.main([Ljava/lang/String;)V", "", true, JP_FK_JIT, 0, 0);
	st1 = model__stack(m, locs + 1, 2);
	st2 = model__stack(m, locs, 3);
	ev[0] = (struct out_method_trace){.start_ns = 1000,
					  .dur_ns = 50000000,
					  .thrown = true,
					  .stack = st1,
					  .labels = model__labels(m, &lab),
					  .has_split = true,
					  .cpu_ns = 10000000,
					  .off_ns = 40000000,
					  .sc_count = 3,
					  .sc_ns = 39000000,
					  .split = "cpu 10.00 ms",
					  .syscalls = "syscalls 3"};
	ev[1] = ev[0];
	ev[1].stack = st2;
	ev[1].start_ns = 5000000000ull; /* past the recording's end */
	ev[1].split = NULL;
	ev[2] = ev[0];
	ev[2].stack = 999; /* no such stack */
	o.method_traces = ev;
	o.n_method_traces = 3;
	buf = write_mem(m, &o, &len, &err);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(parse(j, buf, len, &ct), 0);
	EXPECT_EQ(ct.other, 3); /* the method traces: no row of the model has an event */
	EXPECT_EQ(ct.exec + ct.offcpu + ct.syscall, 0);
	EXPECT_EQ(ct.threadinfo, 1);
	EXPECT_TRUE(find_entry(j, "java.lang.Thread", ev[0].labels) != NULL);
	top_frame(j, st1, top, sizeof(top));
	EXPECT_STREQ(top, "a/Svc.place");
	top_frame(j, st2, top, sizeof(top)); /* the marker is left out */
	EXPECT_STREQ(top, "a/Svc.place");
	EXPECT_TRUE(has_symbol(j, "(I)V"));
	EXPECT_TRUE(!has_symbol(j, "JVM 42"));
	free(buf);
	free(j);
	model__free(m);
}

/* the writers' benchmark shape, smaller; the e2e and `make bench-jfr` run the full size */
TEST(bench_model_reads_back)
{
	struct model *m = model__new();
	struct jfr_opts o = {.duration_ns = 60000000000ull};
	unsigned char *buf;
	size_t len = 0;
	int err;

	ASSERT_TRUE(m);
	EXPECT_EQ(jfr_bench_model(m, 20000, 500), 0);
	EXPECT_EQ(model__total(m, JP_VAL_CPU_SAMPLES), 20000);
	buf = write_mem(m, &o, &len, &err);
	EXPECT_EQ(err, 0);
	EXPECT_TRUE(len > 20000 * 5);
	EXPECT_EQ(rd_be(buf + 8, 8), len);
	free(buf);
	model__free(m);
}

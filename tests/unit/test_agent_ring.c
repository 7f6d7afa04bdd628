/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* test_agent_ring.c: the agent channel reader on ring and dict files written here. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "jvm/agent_ring.h"
#include "jvm/jwalk.h"
#include "ring.h"
#include "../common/agentfile.h"

#define DATA_SIZE JP_RING_DATA_MIN

/* ids as the JVM would hand them out */
#define M_RUN  0x1000
#define M_OUT  0x2000
#define M_MIX  0x3000
#define M_NAT  0x4000
#define BLOB   0x7f0000100000ull

struct fixture {
	char dir[64], ring[96], dict[96];
	unsigned char *mem; /* header + data, written to the ring file by flush() */
	unsigned char dbuf[8192];
	size_t dlen;
};

static struct jp_ring_hdr *hdr(struct fixture *f)
{
	return (struct jp_ring_hdr *)f->mem;
}

/* writes the ring file; the tail field only when asked: it is the reader's */
static void flush_ring_tail(struct fixture *f, int with_tail)
{
	size_t t = offsetof(struct jp_ring_hdr, tail), end = JP_RING_HDR_SIZE + DATA_SIZE;
	int fd = open(f->ring, O_WRONLY | O_CREAT, 0600);

	if (with_tail) {
		(void)!pwrite(fd, f->mem, end, 0);
	} else {
		(void)!pwrite(fd, f->mem, t, 0);
		(void)!pwrite(fd, f->mem + t + 8, end - t - 8, (off_t)(t + 8));
	}
	close(fd);
}

static void flush_ring(struct fixture *f)
{
	flush_ring_tail(f, 0);
}

static void flush_dict(struct fixture *f, size_t len)
{
	int fd = open(f->dict, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	(void)!write(fd, f->dbuf, len);
	close(fd);
}

static void fixture_init(struct fixture *f)
{
	struct jp_dict_hdr dh;

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/jprof-ut-XXXXXX");
	if (!mkdtemp(f->dir))
		abort();
	snprintf(f->ring, sizeof(f->ring), "%s/r.ring", f->dir);
	snprintf(f->dict, sizeof(f->dict), "%s/r.dict", f->dir);
	f->mem = calloc(1, JP_RING_HDR_SIZE + DATA_SIZE);
	agentfile_ring_hdr(hdr(f), DATA_SIZE, 42, 37, 64);
	agentfile_dict_hdr(&dh, 42);
	memcpy(f->dbuf, &dh, sizeof(dh));
	f->dlen = sizeof(dh);
	flush_ring_tail(f, 1);
	flush_dict(f, f->dlen);
}

static void fixture_fini(struct fixture *f)
{
	unlink(f->ring);
	unlink(f->dict);
	rmdir(f->dir);
	free(f->mem);
}

static void d_put(struct fixture *f, const void *p, size_t n)
{
	memcpy(f->dbuf + f->dlen, p, n);
	f->dlen += n;
}

static void d_u16(struct fixture *f, __u16 v)
{
	d_put(f, &v, 2);
}

static void d_u32(struct fixture *f, __u32 v)
{
	d_put(f, &v, 4);
}

static void d_u64(struct fixture *f, __u64 v)
{
	d_put(f, &v, 8);
}

static size_t d_begin(struct fixture *f, __u16 type)
{
	struct jp_dict_rec r = { 0, type, 0 };
	size_t at = f->dlen;

	d_put(f, &r, sizeof(r));
	return at;
}

static void d_end(struct fixture *f, size_t at)
{
	__u32 len = (__u32)(f->dlen - at);

	memcpy(f->dbuf + at, &len, 4);
}

static void d_method(struct fixture *f, __u64 id, const char *name, __u32 n_lines)
{
	d_u64(f, id);
	d_u16(f, (__u16)strlen(name));
	d_u16(f, 3);
	d_u32(f, n_lines);
	d_put(f, name, strlen(name));
	d_put(f, "()V", 3);
	for (__u32 i = 0; i < n_lines; i++) {
		d_u32(f, i * 10);	/* bci */
		d_u32(f, 100 + i); /* line */
	}
}

/* class pkg/Work { run, outer, mix, nat } + a blob of outer with mix inlined + a thread */
static void write_dict(struct fixture *f)
{
	size_t at = d_begin(f, JP_DICT_CLASS);

	d_u16(f, 10);
	d_u16(f, 9);
	d_u32(f, 4);
	d_put(f, "Lpkg/Work;", 10);
	d_put(f, "Work.java", 9);
	d_method(f, M_RUN, "run", 2);
	d_method(f, M_OUT, "outer", 3);
	d_method(f, M_MIX, "mix", 1);
	d_method(f, M_NAT, "nat", 0);
	d_end(f, at);
	at = d_begin(f, JP_DICT_CODE_LOAD);
	d_u64(f, BLOB);
	d_u32(f, 0x100);
	d_u32(f, 2);
	d_u64(f, M_OUT);
	d_u64(f, BLOB + 0x10); /* pc 1: outer only */
	d_u32(f, 1);
	d_u64(f, M_OUT);
	d_u32(f, 5);
	d_u64(f, BLOB + 0x40); /* pc 2: mix inlined into outer */
	d_u32(f, 2);
	d_u64(f, M_MIX);
	d_u32(f, 2);
	d_u64(f, M_OUT);
	d_u32(f, 12);
	d_end(f, at);
	at = d_begin(f, JP_DICT_THREAD);
	d_u32(f, 77);
	d_u16(f, 6);
	d_u16(f, 0);
	d_put(f, "worker", 6);
	d_end(f, at);
}

/* appends a committed trace at head; frames leaf first */
static void put_trace(struct fixture *f, __u32 tid, __u64 pc, int n, const struct jp_frame *fr,
		      int commit)
{
	__u64 pos = hdr(f)->head;
	struct jp_trace_rec *r = (struct jp_trace_rec *)(f->mem + JP_RING_HDR_SIZE + (pos % DATA_SIZE));
	__u32 len = sizeof(*r) + (__u32)(n > 0 ? n : 0) * sizeof(*fr);

	memset(r, 0, sizeof(*r));
	r->h.len = len;
	r->h.type = JP_REC_TRACE;
	r->h.seq = commit ? pos : pos - DATA_SIZE;
	r->time_ns = 1000 + pos;
	r->pc = pc;
	r->tid = tid;
	r->num_frames = n;
	if (n > 0)
		memcpy(r + 1, fr, (size_t)n * sizeof(*fr));
	hdr(f)->head = pos + len;
}

struct seen {
	int n;
	struct java_trace t[8];
	struct java_frame fr[8][8];
};

static int collect(void *ctx, const struct java_trace *t)
{
	struct seen *s = ctx;

	if (s->n < 8) {
		s->t[s->n] = *t;
		for (int i = 0; i < t->num_frames && i < 8; i++)
			s->fr[s->n][i] = t->frames[i];
		s->n++;
	}
	return 0;
}

static const struct jp_frame stack4[] = {
	{ .bci = 12, .method_id = M_MIX },
	{ .bci = 5, .method_id = M_OUT },
	{ .bci = 20, .method_id = M_RUN },
	{ .bci = -3, .method_id = M_NAT },
};

TEST(well_formed_traces_and_names)
{
	struct fixture f;
	struct jvm_agent *a;
	struct seen s = { 0 };
	struct jvm_agent_stats st;
	__u64 tail = 0;
	int fd;

	fixture_init(&f);
	write_dict(&f);
	flush_dict(&f, f.dlen);
	put_trace(&f, 77, BLOB + 0x3c, 4, stack4, 1);
	put_trace(&f, 78, 0, JAVA_TRACE_ERR_NOT_JAVA_THREAD, NULL, 1);
	put_trace(&f, 77, 0x1234, 2, stack4 + 1, 1); /* pc outside any blob */
	hdr(&f)->agct_err[2] = 5; /* before this reader: an earlier recording's */
	flush_ring(&f);

	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_EQ(jvm_agent__signo(a), 37);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 3);
	ASSERT_TRUE(s.n == 3);
	EXPECT_EQ(s.t[0].tid, 77);
	EXPECT_EQ(s.t[0].num_frames, 4);
	EXPECT_EQ(s.fr[0][0].kind, JP_FK_INLINED);
	EXPECT_EQ(s.fr[0][1].kind, JP_FK_JIT);
	EXPECT_EQ(s.fr[0][2].kind, JP_FK_INTERP);
	EXPECT_EQ(s.fr[0][3].kind, JP_FK_NATIVE);
	EXPECT_EQ(s.t[1].num_frames, JAVA_TRACE_ERR_NOT_JAVA_THREAD);
	/* no PC evidence: outer has a blob (JIT), run has none */
	EXPECT_EQ(s.fr[2][0].kind, JP_FK_JIT);
	EXPECT_EQ(s.fr[2][1].kind, JP_FK_INTERP);
	EXPECT_STREQ(jvm_agent__method_name(a, M_MIX, 0), "pkg/Work.mix");
	EXPECT_STREQ(jvm_agent__method_name(a, M_MIX, JVM_NAME_DOTTED), "pkg.Work.mix");
	EXPECT_TRUE(!jvm_agent__method_name(a, 0x9999, 0));
	EXPECT_EQ(jvm_agent__line(a, M_OUT, 25), 102);
	EXPECT_EQ(jvm_agent__line(a, M_OUT, 0), 100);
	EXPECT_EQ(jvm_agent__line(a, M_OUT, -1), -1);
	EXPECT_STREQ(jvm_agent__thread_name(a, 77), "worker");
	EXPECT_TRUE(!jvm_agent__thread_name(a, 78));
	/* the consumer's tail reached the producer's head, in the file */
	fd = open(f.ring, O_RDONLY);
	EXPECT_EQ(pread(fd, &tail, 8, offsetof(struct jp_ring_hdr, tail)), 8);
	close(fd);
	EXPECT_EQ(tail, hdr(&f)->head);
	/* the counters count from this reader's start: the 5 before it are not this recording's */
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.agct_err[2], 0);
	hdr(&f)->agct_err[2] = 12;
	hdr(&f)->ring_full = 0; /* went back: an untrusted counter never gives a negative */
	flush_ring(&f);
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.agct_err[2], 7);
	EXPECT_EQ(st.ring_full, 0);
	EXPECT_EQ(st.malformed, 0);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 0);
	EXPECT_STREQ(java_trace_err_str(-2), "GC active");
	jvm_agent__free(a);
	fixture_fini(&f);
}

static __u64 file_tail(const struct fixture *f)
{
	__u64 tail = 0;
	int fd = open(f->ring, O_RDONLY);

	if (pread(fd, &tail, 8, offsetof(struct jp_ring_hdr, tail)) != 8)
		tail = ~0ull;
	close(fd);
	return tail;
}

/*
 * A poll reads the signal word with the head, in one read; it writes the tail only when
 * it consumed something (a daemon polls every JVM's idle ring ten times a second)
 */
TEST(a_poll_reads_the_signal_and_writes_the_tail_only_when_it_moved)
{
	const __u64 mark = 0x5a5a0;
	struct fixture f;
	struct jvm_agent *a;
	struct seen s = {0};
	int fd;

	fixture_init(&f);
	write_dict(&f);
	flush_dict(&f, f.dlen);
	put_trace(&f, 77, BLOB + 0x3c, 4, stack4, 1);
	flush_ring(&f);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_EQ(jvm_agent__signo_polled(a), 37); /* as the header said at the open */
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 1);
	EXPECT_EQ(file_tail(&f), hdr(&f)->head);
	/* nothing new: the tail is not written (the mark stays) */
	fd = open(f.ring, O_WRONLY);
	EXPECT_EQ(pwrite(fd, &mark, 8, offsetof(struct jp_ring_hdr, tail)), 8);
	close(fd);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 0);
	EXPECT_EQ(file_tail(&f), mark);
	EXPECT_EQ(jvm_agent__signo_polled(a), 37);
	/* the agent withdraws: the next poll sees it, the fresh read agrees */
	hdr(&f)->signo = 0;
	put_trace(&f, 77, BLOB + 0x3c, 4, stack4, 1);
	flush_ring(&f);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 1);
	EXPECT_EQ(jvm_agent__signo_polled(a), 0);
	EXPECT_EQ(jvm_agent__signo(a), 0);
	EXPECT_EQ(file_tail(&f), hdr(&f)->head); /* consumed: written again */
	/* a signal no agent may choose reads as none, polled or not */
	hdr(&f)->signo = SIGKILL;
	flush_ring(&f);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 0);
	EXPECT_EQ(jvm_agent__signo_polled(a), 0);
	EXPECT_EQ(jvm_agent__signo(a), 0);
	jvm_agent__free(a);
	fixture_fini(&f);
}

/*
 * A blob's inline table is read from the dictionary file the first time a sample's PC
 * falls in it, and only while the record there is still that blob's. The table tells
 * here what the fallback cannot: outer inlined into itself (a recursive call).
 */
static size_t write_self_inlined_blob(struct fixture *f)
{
	size_t at = d_begin(f, JP_DICT_CODE_LOAD), body = at + sizeof(struct jp_dict_rec);

	d_u64(f, BLOB + 0x1000);
	d_u32(f, 0x100);
	d_u32(f, 1);
	d_u64(f, M_OUT);
	d_u64(f, BLOB + 0x1040); /* outer inlined into outer */
	d_u32(f, 2);
	d_u64(f, M_OUT);
	d_u32(f, 3);
	d_u64(f, M_OUT);
	d_u32(f, 9);
	d_end(f, at);
	return body;
}

static const struct jp_frame self2[] = {
	{ .bci = 3, .method_id = M_OUT },
	{ .bci = 9, .method_id = M_OUT },
	{ .bci = 20, .method_id = M_RUN },
};

TEST(inline_tables_read_when_first_sampled)
{
	struct fixture f;
	struct jvm_agent *a;
	struct jvm_agent_stats st;
	struct seen s = { 0 };
	__u64 before, bad = BLOB + 0x5000;
	size_t body;
	int fd;

	for (int rewrite = 0; rewrite < 2; rewrite++) {
		fixture_init(&f);
		write_dict(&f);
		body = write_self_inlined_blob(&f);
		flush_dict(&f, f.dlen);
		a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
		ASSERT_TRUE(a);
		/* a sample outside the blob: the dictionary is read, the table is not */
		put_trace(&f, 77, 0x1234, 3, self2, 1);
		flush_ring(&f);
		EXPECT_EQ(jvm_agent__poll(a, collect, &s), 1);
		jvm_agent__stats(a, &st);
		before = st.bytes;
		EXPECT_TRUE(before > 0);
		if (rewrite) { /* the JVM's user rewrites the record after jprof read it */
			fd = open(f.dict, O_WRONLY);
			EXPECT_EQ(pwrite(fd, &bad, 8, (off_t)body), 8);
			close(fd);
		}
		memset(&s, 0, sizeof(s));
		put_trace(&f, 77, BLOB + 0x1038, 3, self2, 1);
		put_trace(&f, 77, BLOB + 0x1038, 3, self2, 1);
		flush_ring(&f);
		EXPECT_EQ(jvm_agent__poll(a, collect, &s), 2);
		ASSERT_TRUE(s.n == 2);
		for (int k = 0; k < 2; k++) {
			/* rewritten: the table is not used; the first frame of the root is JIT */
			EXPECT_EQ(s.fr[k][0].kind, rewrite ? JP_FK_JIT : JP_FK_INLINED);
			EXPECT_EQ(s.fr[k][1].kind, JP_FK_JIT);
		}
		jvm_agent__stats(a, &st);
		/* read once and kept (two pcs entries, three chain slots), or nothing kept */
		if (rewrite)
			EXPECT_EQ(st.bytes, before);
		else
			EXPECT_TRUE(st.bytes > before && st.bytes <= before + 64);
		EXPECT_EQ(st.malformed, 0);
		jvm_agent__free(a);
		EXPECT_EQ(jvm_agent__all_bytes(), 0);
		fixture_fini(&f);
	}
}

static void d_code(struct fixture *f, __u64 addr, __u32 size, __u64 method)
{
	size_t at = d_begin(f, JP_DICT_CODE_LOAD);

	d_u64(f, addr);
	d_u32(f, size);
	d_u32(f, 0);
	d_u64(f, method);
	d_end(f, at);
}

/*
 * Code unloaded, code overlapping older code: the index forgets the old blobs and the
 * pool's slots are reused; a PC finds the blob that holds it now, or none.
 */
TEST(unloaded_and_overlapped_code_leaves_the_index)
{
	const __u64 base = BLOB + 0x10000;
	struct fixture f;
	struct jvm_agent *a;
	struct seen s = { 0 };
	size_t at;

	fixture_init(&f);
	write_dict(&f);
	d_code(&f, base, 0x100, M_RUN);
	at = d_begin(&f, JP_DICT_CODE_UNLOAD);
	d_u64(&f, base);
	d_u64(&f, M_RUN);
	d_end(&f, at);
	d_code(&f, base, 0x100, M_RUN);	      /* the freed slot again */
	d_code(&f, base + 0x80, 0x100, M_MIX); /* overlaps it: it goes */
	d_code(&f, base + 0x400, 0x40, M_MIX);
	flush_dict(&f, f.dlen);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	put_trace(&f, 77, base + 0x90, 4, stack4, 1);  /* in the newest blob: mix is JIT */
	put_trace(&f, 77, base + 0x10, 4, stack4, 1);  /* where the overlapped one was */
	put_trace(&f, 77, base + 0x410, 4, stack4, 1); /* the last one */
	flush_ring(&f);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 3);
	ASSERT_TRUE(s.n == 3);
	EXPECT_EQ(s.fr[0][0].kind, JP_FK_JIT);
	/*
	 * no blob there: mix by the inline pair (mix, outer) from write_dict's blob, outer
	 * has compiled code, run has none left (its blob would have made it the JIT frame)
	 */
	EXPECT_EQ(s.fr[1][0].kind, JP_FK_INLINED);
	EXPECT_EQ(s.fr[1][1].kind, JP_FK_JIT);
	EXPECT_EQ(s.fr[1][2].kind, JP_FK_INTERP);
	EXPECT_EQ(s.fr[2][0].kind, JP_FK_JIT);
	jvm_agent__free(a);
	EXPECT_EQ(jvm_agent__all_bytes(), 0);
	fixture_fini(&f);
}

/* JIT code in a sample without a Java stack is named from the dictionary, not a perf map */
TEST(code_named_by_address)
{
	struct fixture f;
	struct jvm_agent *a;
	const char *name;
	bool java = false;
	size_t at;

	fixture_init(&f);
	write_dict(&f);
	at = d_begin(&f, JP_DICT_STUB);
	d_u64(&f, BLOB + 0x1000);
	d_u32(&f, 0x200);
	d_u16(&f, 16);
	d_u16(&f, 0);
	d_put(&f, "StubRoutines (1)", 16);
	d_end(&f, at);
	flush_dict(&f, f.dlen);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	name = jvm_agent__code_name(a, BLOB + 0x40, &java);
	EXPECT_STREQ(name ? name : "(null)", "pkg/Work.outer");
	EXPECT_TRUE(java);
	name = jvm_agent__code_name(a, BLOB + 0x11ff, &java);
	EXPECT_STREQ(name ? name : "(null)", "StubRoutines (1)");
	EXPECT_TRUE(!java);
	EXPECT_TRUE(jvm_agent__code_name(a, BLOB + 0x1200, &java) == NULL);
	EXPECT_TRUE(jvm_agent__code_name(a, BLOB - 1, &java) == NULL);
	jvm_agent__free(a);
	EXPECT_EQ(jvm_agent__all_bytes(), 0);
	fixture_fini(&f);
}

/* a class record of signature sig, no source file, with one method */
static void d_class1(struct fixture *f, const char *sig, __u64 id, const char *method)
{
	size_t at = d_begin(f, JP_DICT_CLASS);

	d_u16(f, (__u16)strlen(sig));
	d_u16(f, 0);
	d_u32(f, 1);
	d_put(f, sig, strlen(sig));
	d_method(f, id, method, 0);
	d_end(f, at);
}

static const char *norm(const char *in, char *buf)
{
	strcpy(buf, in);
	EXPECT_EQ(jvm_agent__hidden_class_norm(buf, strlen(buf)), strlen(buf));
	return buf;
}

/* hidden classes lose their address, JDK 17 lambdas their number; other names stay */
TEST(hidden_class_names_without_addresses)
{
	struct fixture f;
	struct jvm_agent *a;
	char b[128];

	EXPECT_STREQ(norm("java/lang/invoke/LambdaForm$MH.0x00007fa6584b4000", b),
		     "java/lang/invoke/LambdaForm$MH");
	EXPECT_STREQ(norm("pkg/Foo$$Lambda$14.0x0000000800c01234", b), "pkg/Foo$$Lambda");
	EXPECT_STREQ(norm("pkg/Foo$$Lambda.0x000001a2b3c4d000", b), "pkg/Foo$$Lambda");
	EXPECT_STREQ(norm("pkg/Foo$$Lambda$14", b), "pkg/Foo$$Lambda");
	EXPECT_STREQ(norm("pkg/Cafe", b), "pkg/Cafe");
	EXPECT_STREQ(norm("pkg/Face.0x", b), "pkg/Face.0x");
	EXPECT_STREQ(norm("pkg/Lambda$14", b), "pkg/Lambda$14");
	EXPECT_STREQ(norm("Foo$$Lambda$", b), "Foo$$Lambda$");
	EXPECT_STREQ(norm(".0x12", b), "");
	EXPECT_STREQ(norm("", b), "");

	/* two LambdaForms of one JVM: one name, interned once, for both classes' methods */
	fixture_init(&f);
	d_class1(&f, "Ljava/lang/invoke/LambdaForm$MH.0x00007fa6584b4000;", 0x501, "invoke");
	d_class1(&f, "Ljava/lang/invoke/LambdaForm$MH.0x00007fa658521000;", 0x502, "invoke");
	flush_dict(&f, f.dlen);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_STREQ(jvm_agent__method_name(a, 0x501, 0), "java/lang/invoke/LambdaForm$MH.invoke");
	EXPECT_STREQ(jvm_agent__method_name(a, 0x502, JVM_NAME_DOTTED),
		     "java.lang.invoke.LambdaForm$MH.invoke");
	jvm_agent__free(a);
	fixture_fini(&f);
}

TEST(uncommitted_record_waits)
{
	struct fixture f;
	struct jvm_agent *a;
	struct seen s = { 0 };

	fixture_init(&f);
	put_trace(&f, 1, 0, 1, stack4, 0);
	flush_ring(&f);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 0);
	/* now commit it */
	((struct jp_rec_hdr *)(f.mem + JP_RING_HDR_SIZE))->seq = 0;
	flush_ring(&f);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 1);
	EXPECT_TRUE(!jvm_agent__method_name(a, M_MIX, 0));
	jvm_agent__free(a);
	fixture_fini(&f);
}

TEST(wraparound_with_pad)
{
	struct fixture f;
	struct jvm_agent *a;
	struct seen s = { 0 };
	struct jp_rec_hdr *pad;
	__u64 start = 3 * DATA_SIZE - 32;

	fixture_init(&f);
	/* producer and consumer three laps in; a 32-byte pad closes the lap */
	hdr(&f)->head = start;
	hdr(&f)->tail = start;
	pad = (struct jp_rec_hdr *)(f.mem + JP_RING_HDR_SIZE + DATA_SIZE - 32);
	pad->seq = start;
	pad->len = 32;
	pad->type = JP_REC_PAD;
	hdr(&f)->head = start + 32;
	put_trace(&f, 5, 0, 2, stack4, 1);
	flush_ring_tail(&f, 1);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 1);
	EXPECT_EQ(s.t[0].tid, 5);
	jvm_agent__free(a);
	fixture_fini(&f);
}

TEST(torn_dict_tail_is_retried)
{
	struct fixture f;
	struct jvm_agent *a;
	size_t full;

	fixture_init(&f);
	write_dict(&f);
	full = f.dlen;
	flush_dict(&f, full - 3); /* the thread record is torn */
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_STREQ(jvm_agent__method_name(a, M_RUN, 0), "pkg/Work.run");
	EXPECT_TRUE(!jvm_agent__thread_name(a, 77));
	flush_dict(&f, full);
	/* a thread not named looks at the file at most every 10 ms; a poll's refresh reads it */
	EXPECT_TRUE(jvm_agent__dict_refresh(a) > 0);
	EXPECT_STREQ(jvm_agent__thread_name(a, 77), "worker");
	jvm_agent__free(a);
	fixture_fini(&f);
}

TEST(malicious_sizes)
{
	struct fixture f;
	struct jvm_agent *a;
	struct seen s = { 0 };
	struct jvm_agent_stats st;
	struct jp_trace_rec *r;

	fixture_init(&f);
	/* a record claiming more frames than its length holds */
	put_trace(&f, 1, 0, 2, stack4, 1);
	r = (struct jp_trace_rec *)(f.mem + JP_RING_HDR_SIZE);
	r->num_frames = 1000000;
	/* then one with a length past the end of the data area */
	put_trace(&f, 2, 0, 1, stack4, 1);
	r = (struct jp_trace_rec *)(f.mem + JP_RING_HDR_SIZE + sizeof(*r) + 2 * sizeof(struct jp_frame));
	r->h.len = 0x7ffffff0;
	flush_ring(&f);
	/* a dict record with a length below its own header */
	d_put(&f, &(struct jp_dict_rec){ 3, JP_DICT_CLASS, 0 }, sizeof(struct jp_dict_rec));
	flush_dict(&f, f.dlen);

	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	/* the first is read but rejected (never reaches the callback), the second stops it */
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 1);
	EXPECT_EQ(s.n, 0);
	EXPECT_TRUE(!jvm_agent__method_name(a, M_RUN, 0));
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.malformed, 3);
	/* a head lapping the tail is resynchronised, never looped over */
	hdr(&f)->head += 10ull * DATA_SIZE;
	flush_ring(&f);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 0);
	jvm_agent__free(a);

	/* header lies: data_size not a power of two / file size mismatch */
	hdr(&f)->data_size = DATA_SIZE + 16;
	flush_ring(&f);
	errno = 0;
	EXPECT_TRUE(!jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1));
	EXPECT_EQ(errno, EPROTO);
	hdr(&f)->data_size = DATA_SIZE * 2;
	flush_ring(&f);
	EXPECT_TRUE(!jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1));
	hdr(&f)->data_size = DATA_SIZE;
	hdr(&f)->magic = 0;
	flush_ring(&f);
	EXPECT_TRUE(!jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1));
	fixture_fini(&f);
}

TEST(wrong_owner_and_symlinks_refused)
{
	struct fixture f;
	char link[128];
	struct jvm_agent *a;

	fixture_init(&f);
	errno = 0;
	EXPECT_TRUE(!jvm_agent__open_files(f.ring, f.dict, getuid() + 1));
	EXPECT_EQ(errno, EPERM);
	a = jvm_agent__open_files(f.ring, f.dict, getuid());
	EXPECT_TRUE(a);
	jvm_agent__free(a);
	snprintf(link, sizeof(link), "%s/link.ring", f.dir);
	EXPECT_EQ(symlink(f.ring, link), 0);
	errno = 0;
	EXPECT_TRUE(!jvm_agent__open_files(link, f.dict, (unsigned int)-1));
	EXPECT_EQ(errno, ELOOP);
	unlink(link);
	/* a directory is not a ring */
	EXPECT_TRUE(!jvm_agent__open_files(f.dir, f.dict, (unsigned int)-1));
	/* no agent at all */
	errno = 0;
	EXPECT_TRUE(!jvm_agent__open(0x7ffffff0, 1));
	EXPECT_TRUE(errno != 0);
	fixture_fini(&f);
}

/*
 * One class record with a 64 KiB signature, a 64 KiB source name and as many methods as
 * fit in a record: the names are held once per class, not once per method (that was
 * ~100k x 128 KiB = 13 GB before).
 */
TEST(class_strings_interned_once)
{
	struct fixture f;
	struct jvm_agent_stats st;
	struct jvm_agent *a;
	unsigned char *buf;
	const size_t sig = 65535, src = 65535, cap = JP_DICT_REC_MAX;
	size_t len, n_methods = 0;
	struct jp_dict_rec r = { 0, JP_DICT_CLASS, 0 };
	__u16 v16;
	__u32 v32;
	int fd;

	fixture_init(&f);
	buf = malloc(cap);
	len = sizeof(r) + 8 + sig + src;
	buf[sizeof(r) + 8] = 'L';
	memset(buf + sizeof(r) + 9, 'c', sig - 2);
	buf[sizeof(r) + 8 + sig - 1] = ';';
	memset(buf + sizeof(r) + 8 + sig, 's', src);
	while (len + 17 <= cap) {
		__u64 id = 0x10000 + n_methods;

		memcpy(buf + len, &id, 8);
		v16 = 1;
		memcpy(buf + len + 8, &v16, 2);
		v16 = 0;
		memcpy(buf + len + 10, &v16, 2);
		v32 = 0;
		memcpy(buf + len + 12, &v32, 4);
		buf[len + 16] = 'm';
		len += 17;
		n_methods++;
	}
	r.len = (__u32)len;
	memcpy(buf, &r, sizeof(r));
	v16 = (__u16)sig;
	memcpy(buf + sizeof(r), &v16, 2);
	v16 = (__u16)src;
	memcpy(buf + sizeof(r) + 2, &v16, 2);
	v32 = (__u32)n_methods;
	memcpy(buf + sizeof(r) + 4, &v32, 4);
	fd = open(f.dict, O_WRONLY | O_APPEND);
	EXPECT_EQ(write(fd, buf, len), (ssize_t)len);
	close(fd);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a);
	EXPECT_TRUE(jvm_agent__method_name(a, 0x10000, 0) != NULL);
	EXPECT_TRUE(jvm_agent__method_name(a, 0x10000 + n_methods - 1, 0) != NULL);
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.malformed, 0);
	EXPECT_EQ(st.over_budget, 0);
	EXPECT_TRUE(n_methods > 400000);
	/* methods, index, two 64 KiB strings, two names built: ~100 bytes per method */
	EXPECT_TRUE(st.bytes < n_methods * 160 + 4 * 65536);
	jvm_agent__free(a);
	free(buf);
	fixture_fini(&f);
}

/* a small budget: records past it are dropped and counted, what came before stays usable */
TEST(dict_budget_counts_and_keeps_going)
{
	struct fixture f;
	struct jvm_agent_stats st;
	struct jvm_agent *a;
	char name[32];
	__u64 all;

	fixture_init(&f);
	for (int c = 0; c < 40; c++) {
		size_t at = d_begin(&f, JP_DICT_CLASS);

		snprintf(name, sizeof(name), "LC%02d;", c);
		d_u16(&f, (__u16)strlen(name));
		d_u16(&f, 0);
		d_u32(&f, 1);
		d_put(&f, name, strlen(name));
		d_method(&f, 0x100 + (__u64)c, "m", 8);
		d_end(&f, at);
	}
	flush_dict(&f, f.dlen);
	/* what the 40 methods' index takes, and the first method's name and lines */
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a);
	EXPECT_EQ(jvm_agent__line(a, 0x100, 15), 101);
	jvm_agent__stats(a, &st);
	all = st.bytes;
	EXPECT_EQ(st.over_budget, 0);
	/* budget spent: what was read stays usable, what would need more is refused */
	jvm_agent__set_max_bytes(a, all);
	EXPECT_EQ(jvm_agent__line(a, 0x100, 15), 101);
	EXPECT_EQ(jvm_agent__line(a, 0x100 + 39, 15), -1);
	jvm_agent__stats(a, &st);
	EXPECT_TRUE(st.over_budget > 0);
	EXPECT_TRUE(st.bytes <= all);
	jvm_agent__free(a);
	/* a budget under what the index needs: the rest of the classes are left out, counted */
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a);
	jvm_agent__set_max_bytes(a, all / 2);
	EXPECT_EQ(jvm_agent__line(a, 0x100 + 39, 15), -1);
	jvm_agent__stats(a, &st);
	EXPECT_TRUE(st.over_budget > 0);
	EXPECT_EQ(st.malformed, 0);
	EXPECT_TRUE(st.bytes <= all / 2);
	jvm_agent__free(a);
	fixture_fini(&f);
}

/* appends a class record "LT;" with one method id of n (bci, line) pairs from line_of */
static void append_lines_method(struct fixture *f, __u64 id, __u32 n, agentfile_line_fn line_of)
{
	int fd = open(f->dict, O_WRONLY | O_APPEND);

	EXPECT_EQ(agentfile_put_class1(fd, "LT;", id, "m", n, line_of, NULL), 0);
	close(fd);
}

/* starts 0, 10, 20 ... in descending order: line 100 + bci / 10 */
static void lines_desc(void *ctx, __u32 i, __s32 *bci, __s32 *line)
{
	__u32 k = 65535 - i;

	(void)ctx;
	*bci = (__s32)(k * 10);
	*line = (__s32)(100 + k);
}

/* a JVMTI table in no order, with a start given twice: the later entry wins, as before */
static void lines_shuffled(void *ctx, __u32 i, __s32 *bci, __s32 *line)
{
	static const __s32 t[][2] = { { 30, 4 }, { 0, 1 }, { 20, 3 }, { 10, 2 }, { 20, 33 } };

	(void)ctx;
	*bci = t[i][0];
	*line = t[i][1];
}

static void lines_many(void *ctx, __u32 i, __s32 *bci, __s32 *line)
{
	(void)ctx;
	*bci = (__s32)i;
	*line = (__s32)i + 1;
}

/*
 * Line tables are sorted when read, and a lookup is a binary search: a 65,536-entry table
 * in descending order answers 200,000 lookups in well under a second (a scan took 10 us
 * each); a table larger than any method's bytecode can have is refused, counted.
 */
TEST(line_table_sorted_searched_bounded)
{
	struct timespec t0, t1;
	struct jvm_agent_stats st;
	struct fixture f;
	struct jvm_agent *a;
	int sum = 0;

	fixture_init(&f);
	append_lines_method(&f, 0x100, 5, lines_shuffled);
	append_lines_method(&f, 0x200, 65536, lines_desc);
	append_lines_method(&f, 0x300, 1000000, lines_many);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_EQ(jvm_agent__line(a, 0x100, 0), 1);
	EXPECT_EQ(jvm_agent__line(a, 0x100, 9), 1);
	EXPECT_EQ(jvm_agent__line(a, 0x100, 10), 2);
	EXPECT_EQ(jvm_agent__line(a, 0x100, 25), 33);
	EXPECT_EQ(jvm_agent__line(a, 0x100, 1000), 4);
	EXPECT_EQ(jvm_agent__line(a, 0x100, -1), -1);
	EXPECT_EQ(jvm_agent__line(a, 0x200, 0), 100);
	EXPECT_EQ(jvm_agent__line(a, 0x200, 15), 101);
	EXPECT_EQ(jvm_agent__line(a, 0x200, 655350), 100 + 65535);
	EXPECT_EQ(jvm_agent__line(a, 0x200, 1 << 30), 100 + 65535);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 200000; i++)
		sum += jvm_agent__line(a, 0x200, (i * 7919) % 655360) > 0;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_EQ(sum, 200000);
	EXPECT_TRUE((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) <
		    1000000000L);
	/* the million-entry table: the method is named, its frames have no line */
	EXPECT_STREQ(jvm_agent__method_name(a, 0x300, 0), "T.m");
	EXPECT_EQ(jvm_agent__line(a, 0x300, 5), -1);
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.over_budget, 1);
	EXPECT_EQ(st.malformed, 0);
	jvm_agent__free(a);
	fixture_fini(&f);
}

/*
 * Method ids aimed at one slot of an unkeyed multiplicative hash ((id * C) >> 17 of every
 * table up to 2^20 slots: id * C = k << 37) cost a probe each, not a scan of all before
 * them: 100,000 of them are read and found in well under the seconds a scan per id took.
 */
TEST(method_ids_aimed_at_one_slot_stay_cheap)
{
	const __u64 c = 0x9e3779b97f4a7c15ull;
	const __u32 n = 100000;
	size_t len = sizeof(struct jp_dict_rec) + 8 + 3 + (size_t)n * 17, w = 0;
	unsigned char *buf = malloc(len);
	struct jp_dict_rec r = { (__u32)len, JP_DICT_CLASS, 0 };
	struct timespec t0, t1;
	struct fixture f;
	struct jvm_agent *a;
	__u64 inv = c, found = 0;
	__u16 v16;
	int fd;

	ASSERT_TRUE(buf != NULL);
	for (int i = 0; i < 5; i++)
		inv *= 2 - c * inv; /* Newton: c * inv == 1 (mod 2^64) */
	fixture_init(&f);
	memcpy(buf, &r, sizeof(r));
	w = sizeof(r);
	v16 = 3;
	memcpy(buf + w, &v16, 2);
	v16 = 0;
	memcpy(buf + w + 2, &v16, 2);
	memcpy(buf + w + 4, &n, 4);
	memcpy(buf + w + 8, "LT;", 3);
	w += 11;
	for (__u32 k = 1; k <= n; k++) {
		__u64 id = ((__u64)k << 37) * inv;

		memcpy(buf + w, &id, 8);
		v16 = 1;
		memcpy(buf + w + 8, &v16, 2);
		memset(buf + w + 10, 0, 6);
		buf[w + 16] = 'm';
		w += 17;
	}
	fd = open(f.dict, O_WRONLY | O_APPEND);
	EXPECT_EQ(write(fd, buf, len), (ssize_t)len);
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	for (__u32 k = 1; k <= n; k += 97)
		found += jvm_agent__method_name(a, ((__u64)k << 37) * inv, 0) != NULL;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_EQ(found, (n + 96) / 97);
	EXPECT_TRUE((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) <
		    2000000000L);
	jvm_agent__free(a);
	free(buf);
	fixture_fini(&f);
}

/* a FIFO where the ring should be is never opened (an open would block or be seen) */
TEST(fifo_never_opened)
{
	struct fixture f;
	char fifo[128];

	fixture_init(&f);
	snprintf(fifo, sizeof(fifo), "%s/fifo.ring", f.dir);
	EXPECT_EQ(mkfifo(fifo, 0600), 0);
	errno = 0;
	EXPECT_TRUE(!jvm_agent__open_files(fifo, f.dict, (unsigned int)-1));
	EXPECT_EQ(errno, EBADFD);
	unlink(fifo);
	fixture_fini(&f);
}

/* codes no agent writes (INT_MIN, INT_MAX-ish) pass as codes without UB (UBSan is fatal here) */
TEST(extreme_codes)
{
	struct fixture f;
	struct jvm_agent *a;
	struct seen s = { 0 };

	fixture_init(&f);
	put_trace(&f, 1, 0, -2147483647 - 1, NULL, 1);
	put_trace(&f, 2, 0, -12, NULL, 1);
	flush_ring(&f);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 2);
	EXPECT_EQ(s.n, 2);
	EXPECT_EQ(s.t[0].num_frames, -2147483647 - 1);
	EXPECT_STREQ(java_trace_err_str(s.t[0].num_frames), "unknown error");
	EXPECT_STREQ(java_trace_err_str(s.t[1].num_frames), "unknown error");
	jvm_agent__free(a);
	fixture_fini(&f);
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Compiled code announced in descending address order: each record moves the whole
 * sorted table (30k records: ~25 GB of memmove). One refresh stops after a bounded amount
 * and the next ones go on, so no single poll stalls.
 */
/* a code-load record's header and fixed fields at p (len: the whole record's): past them */
static unsigned char *code_load_hdr(unsigned char *p, __u32 len, __u64 addr, __u32 size,
				    __u32 n_pcs, __u64 method)
{
	struct jp_dict_rec r = { len, JP_DICT_CODE_LOAD, 0 };

	memcpy(p, &r, 8);
	memcpy(p + 8, &addr, 8);
	memcpy(p + 16, &size, 4);
	memcpy(p + 20, &n_pcs, 4);
	memcpy(p + 24, &method, 8);
	return p + 32;
}

TEST(descending_code_loads_bounded_per_refresh)
{
	const unsigned int n = 30000;
	struct fixture f;
	struct jvm_agent *a;
	unsigned char *buf, *p;
	double t0, worst = 0;
	int fd, rounds = 0;

	fixture_init(&f);
	buf = malloc((size_t)n * 32);
	p = buf;
	for (unsigned int i = 0; i < n; i++)
		p = code_load_hdr(p, 32, 0x7f0000000000ull + (__u64)(n - i) * 0x100, 0x80, 0,
				  0x1000);
	fd = open(f.dict, O_WRONLY | O_APPEND);
	EXPECT_EQ(write(fd, buf, (size_t)n * 32), (ssize_t)n * 32);
	close(fd);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a);
	/* each unknown lookup refreshes once; the whole dictionary needs several */
	for (; rounds < 100; rounds++) {
		struct jvm_agent_stats st;

		t0 = cpu_s();
		(void)jvm_agent__line(a, 0x999, 0);
		if (cpu_s() - t0 > worst)
			worst = cpu_s() - t0;
		jvm_agent__stats(a, &st);
		if (st.malformed)
			break;
		if (rounds > 2 && cpu_s() - t0 < 0.001)
			break; /* nothing left to read */
	}
	EXPECT_TRUE(rounds > 3);
	EXPECT_TRUE(worst < 1.0);
	jvm_agent__free(a);
	free(buf);
	fixture_fini(&f);
}

/*
 * Inline tables read for lookups are a cache of TABLES_MAX bytes a JVM: 64 blobs of 2,000
 * pcs with 3-deep chains (104 KB a table, 6.6 MB in all) are each looked up twice in turn;
 * every answer is right, the tables held stay under the cap, the ones read longest ago go
 * and are read again; a pc looked up before is answered without its table (the lookups'
 * cache by pc), and freeing the JVM gives every byte back.
 */
/*
 * nb compiled blobs of np pcs each, every pc's chain depth frames deep (bci: blob * 10000
 * + pc's index), appended to f's dictionary and read by a new reader; *ret_rec: the bytes
 * of one blob's record
 */
#define TBL_BLOB(b) (BLOB + 0x100000 + (__u64)(b)*0x10000)
static struct jvm_agent *open_many_blobs(struct fixture *f, unsigned int nb, unsigned int np,
					 unsigned int depth, size_t *ret_rec)
{
	size_t rec = 8 + 24 + (size_t)np * (12 + 12 * depth);
	struct jvm_agent *a;
	unsigned char *buf, *p;
	int fd;

	write_dict(f);
	flush_dict(f, f->dlen);
	buf = malloc(rec * nb);
	if (!buf)
		return NULL;
	p = buf;
	for (unsigned int b = 0; b < nb; b++) {
		p = code_load_hdr(p, (__u32)rec, TBL_BLOB(b), 0x8000, np, M_RUN);
		for (unsigned int i = 0; i < np; i++) {
			__u64 pc = TBL_BLOB(b) + 4 * i;

			memcpy(p, &pc, 8);
			memcpy(p + 8, &depth, 4);
			p += 12;
			for (unsigned int d = 0; d < depth; d++) {
				/* innermost first, the blob's own method last; bci: blob and pc */
				__u64 m = d + 1 == depth ? M_RUN : M_OUT + d;
				__s32 bci = (__s32)(b * 10000 + i);

				memcpy(p, &m, 8);
				memcpy(p + 8, &bci, 4);
				p += 12;
			}
		}
	}
	fd = open(f->dict, O_WRONLY | O_APPEND);
	if (write(fd, buf, rec * nb) != (ssize_t)(rec * nb))
		abort();
	close(fd);
	free(buf);
	a = jvm_agent__open_files(f->ring, f->dict, (unsigned int)-1);
	while (a && jvm_agent__dict_refresh(a) < f->dlen + rec * nb)
		;
	*ret_rec = rec;
	return a;
}

TEST(inline_tables_held_are_a_bounded_cache)
{
	const unsigned int nb = 64, np = 2000, depth = 3;
	__u64 held, evicted, peak = 0, reread;
	struct fixture f;
	struct jvm_agent *a;
	size_t rec;

	fixture_init(&f);
	a = open_many_blobs(&f, nb, np, depth, &rec);
	ASSERT_TRUE(a);
	for (int round = 0; round < 2; round++) {
		for (unsigned int b = 0; b < nb; b++) {
			/* another pc each round: the lookups' own cache (by pc) does not answer */
			__u32 at = 777 + (__u32)round;
			__u64 pc = TBL_BLOB(b) + 4 * at;
			const __u64 *chain;
			const __s32 *bci;
			int n = jvm_agent__pc_chain(a, pc, false, &chain, &bci);

			ASSERT_TRUE(n == (int)depth);
			EXPECT_EQ(chain[0], M_OUT);
			EXPECT_EQ(chain[depth - 1], M_RUN);
			EXPECT_EQ(bci[0], (__s32)(b * 10000 + at));
			jvm_agent__all_tables(&held, &evicted);
			if (held > peak)
				peak = held;
		}
	}
	/*
	 * the first round's pcs again, their tables long freed: from the lookups' cache. Its
	 * sets have two ways and a keyed hash: three of the 128 pcs in one set (about one run
	 * in 50) send one back to its table
	 */
	reread = 0;
	for (unsigned int b = 0; b < nb; b++) {
		__u64 pc = TBL_BLOB(b) + 4 * 777, before, after;
		const __u64 *chain;
		const __s32 *bci;

		jvm_agent__all_tables(&held, &before);
		ASSERT_TRUE(jvm_agent__pc_chain(a, pc, false, &chain, &bci) == (int)depth);
		EXPECT_EQ(chain[1], M_OUT + 1);
		EXPECT_EQ(bci[2], (__s32)(b * 10000 + 777));
		jvm_agent__all_tables(&held, &after);
		reread += after != before;
	}
	EXPECT_TRUE(reread <= 2);
	jvm_agent__all_tables(&held, &evicted);
	printf("    tables: %.2f MB at most, %llu freed for room\n", peak / 1048576.0,
	       (unsigned long long)evicted);
	EXPECT_TRUE(peak > (1ull << 20));
	EXPECT_TRUE(peak <= (2ull << 20));
	EXPECT_TRUE(evicted >= nb); /* the second round found none of the first's */
	jvm_agent__free(a);
	jvm_agent__all_tables(&held, &evicted);
	EXPECT_EQ(held, 0);
	EXPECT_EQ(jvm_agent__all_bytes(), 0);
	fixture_fini(&f);
}

/*
 * A table that keeps answering lookups keeps its place while the cold ones come and go
 * (a compiling JVM's hot methods): its record is spoilt in the file after the first read,
 * so a second read would find it not checking out and name the compiled method alone
 */
TEST(a_table_in_use_is_not_freed_for_cold_ones)
{
	const unsigned int nb = 64, np = 2000, depth = 3;
	__u64 held, before, evicted, junk = 0x0bad0bad0bad0badull;
	struct fixture f;
	struct jvm_agent *a;
	const __u64 *chain;
	const __s32 *bci;
	size_t rec;
	int fd;

	fixture_init(&f);
	a = open_many_blobs(&f, nb, np, depth, &rec);
	ASSERT_TRUE(a);
	jvm_agent__all_tables(&held, &before);
	ASSERT_TRUE(jvm_agent__pc_chain(a, TBL_BLOB(0), false, &chain, &bci) == (int)depth);
	/* blob 0's record body: its address first, as the reader checks it */
	fd = open(f.dict, O_WRONLY);
	EXPECT_EQ(pwrite(fd, &junk, 8, (off_t)(f.dlen + sizeof(struct jp_dict_rec))), 8);
	close(fd);
	for (unsigned int b = 1; b < nb; b++) {
		/* a cold table read (the oldest unused freed for it), then blob 0's at a new pc */
		ASSERT_TRUE(jvm_agent__pc_chain(a, TBL_BLOB(b) + 4, false, &chain, &bci) ==
			    (int)depth);
		ASSERT_TRUE(jvm_agent__pc_chain(a, TBL_BLOB(0) + 4 * b, false, &chain, &bci) ==
			    (int)depth);
		EXPECT_EQ(bci[0], (__s32)b);
	}
	jvm_agent__all_tables(&held, &evicted);
	EXPECT_TRUE(evicted - before >= nb / 2); /* the cold ones did come and go */
	jvm_agent__free(a);
	fixture_fini(&f);
}

/* a ring left in /tmp by an earlier process with our pid is not ours: -ESTALE */
TEST(stale_ring_of_a_reused_pid_refused)
{
	struct fixture f;
	char ring[64], dict[64];
	struct timespec ts;
	struct jvm_agent *a;
	void *map;
	int fd;

	fixture_init(&f);
	/* jprof finds them by the mapping that names them, as the agent maps its ring */
	snprintf(ring, sizeof(ring), "/tmp/jprof-%d-0123456789abcdef.ring", (int)getpid());
	snprintf(dict, sizeof(dict), "/tmp/jprof-%d-0123456789abcdef.dict", (int)getpid());
	errno = 0;
	EXPECT_TRUE(!jvm_agent__open((__u32)getpid(), (__u32)getpid()));
	EXPECT_EQ(errno, ENOENT);
	hdr(&f)->start_ns = 1; /* the agent started long before this process */
	fd = open(ring, O_RDWR | O_CREAT | O_TRUNC, 0600);
	EXPECT_EQ(write(fd, f.mem, JP_RING_HDR_SIZE + DATA_SIZE), JP_RING_HDR_SIZE + DATA_SIZE);
	map = mmap(NULL, JP_RING_HDR_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_TRUE(map != MAP_FAILED);
	close(fd);
	fd = open(dict, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	EXPECT_EQ(write(fd, f.dbuf, f.dlen), (ssize_t)f.dlen);
	close(fd);
	errno = 0;
	a = jvm_agent__open((__u32)getpid(), (__u32)getpid());
	EXPECT_TRUE(!a);
	EXPECT_EQ(errno, ESTALE);
	/* the same files from an agent started now are this process's */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	hdr(&f)->start_ns = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	fd = open(ring, O_WRONLY);
	EXPECT_EQ(pwrite(fd, f.mem, sizeof(struct jp_ring_hdr), 0), (ssize_t)sizeof(struct jp_ring_hdr));
	close(fd);
	a = jvm_agent__open((__u32)getpid(), (__u32)getpid());
	EXPECT_TRUE(a);
	jvm_agent__free(a);
	/* a ring given up ("(deleted)" in maps) is no channel */
	unlink(ring);
	errno = 0;
	EXPECT_TRUE(!jvm_agent__open((__u32)getpid(), (__u32)getpid()));
	EXPECT_EQ(errno, ENOENT);
	munmap(map, JP_RING_HDR_SIZE);
	unlink(dict);
	fixture_fini(&f);
}

/* appends a committed event record at head */
static void put_event(struct fixture *f, __u16 kind, __u64 class_id, __u64 tag, int n,
		      const struct jp_frame *fr)
{
	__u64 pos = hdr(f)->head;
	struct jp_event_rec *r = (struct jp_event_rec *)(f->mem + JP_RING_HDR_SIZE + (pos % DATA_SIZE));
	__u32 len = sizeof(*r) + (__u32)(n > 0 ? n : 0) * sizeof(*fr);

	memset(r, 0, sizeof(*r));
	r->h.len = len;
	r->h.type = JP_REC_EVENT;
	r->h.seq = pos;
	r->time_ns = 5000 + pos;
	r->tid = 77;
	r->kind = kind;
	r->size = 24;
	r->weight = 524300;
	r->class_id = class_id;
	r->tag = tag;
	r->num_frames = n;
	if (n > 0)
		memcpy(r + 1, fr, (size_t)n * sizeof(*fr));
	hdr(f)->head = pos + len;
}

struct seen_ev {
	int n;
	struct java_event e[8];
	struct java_frame fr[8][4];
};

static int collect_ev(void *ctx, const struct java_event *e)
{
	struct seen_ev *s = ctx;

	if (s->n < 8) {
		s->e[s->n] = *e;
		for (int i = 0; i < e->num_frames && i < 4; i++)
			s->fr[s->n][i] = e->frames[i];
		s->n++;
	}
	return 0;
}

TEST(event_records_and_class_ids)
{
	struct fixture f;
	struct jvm_agent *a;
	struct seen s = { 0 };
	struct seen_ev se = { 0 };
	struct jvm_agent_stats st;
	size_t at;

	fixture_init(&f);
	write_dict(&f);
	at = d_begin(&f, JP_DICT_CLASS_ID);
	d_u64(&f, 3);
	d_u16(&f, 18);
	d_u16(&f, 0);
	d_put(&f, "Ljava/lang/String;", 18);
	d_end(&f, at);
	flush_dict(&f, f.dlen);
	put_event(&f, JP_AEV_ALLOC, 3, 9, 2, stack4 + 2);
	put_trace(&f, 77, 0, 1, stack4, 1);
	put_event(&f, JP_AEV_FREE, 0, 9, 0, NULL);
	put_event(&f, JP_AEV_MAX, 3, 0, 0, NULL); /* unknown kind: malformed */
	flush_ring(&f);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_EQ(jvm_agent__poll_events(a, collect, NULL, &s), 4); /* traces only */
	EXPECT_EQ(s.n, 1);
	jvm_agent__free(a);

	/* again, events to their own collector; 1 event was counted for an earlier reader */
	hdr(&f)->tail = 0;
	hdr(&f)->events = 1;
	flush_ring_tail(&f, 1);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	hdr(&f)->events = 4;
	hdr(&f)->events_dropped = 2;
	flush_ring(&f);
	EXPECT_EQ(jvm_agent__poll_events(a, NULL, collect_ev, &se), 4);
	ASSERT_TRUE(se.n == 2);
	EXPECT_EQ(se.e[0].kind, JP_AEV_ALLOC);
	EXPECT_EQ(se.e[0].size, 24);
	EXPECT_EQ(se.e[0].weight, 524300);
	EXPECT_EQ(se.e[0].tag, 9);
	EXPECT_EQ(se.e[0].num_frames, 2);
	EXPECT_EQ(se.fr[0][0].method_id, M_RUN);
	EXPECT_EQ(se.fr[0][1].kind, JP_FK_NATIVE);
	EXPECT_STREQ(jvm_agent__class_name(a, se.e[0].class_id), "Ljava/lang/String;");
	EXPECT_TRUE(!jvm_agent__class_name(a, 4));
	EXPECT_EQ(se.e[1].kind, JP_AEV_FREE);
	EXPECT_EQ(se.e[1].num_frames, 0);
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.events, 3);
	EXPECT_EQ(st.events_dropped, 2);
	EXPECT_EQ(st.malformed, 1);
	jvm_agent__free(a);

	/* an old reader's poll: events skipped unread (not even looked at: the bad one too) */
	hdr(&f)->tail = 0;
	flush_ring_tail(&f, 1);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_EQ(jvm_agent__poll(a, NULL, NULL), 4);
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.events_unread, 3);
	EXPECT_EQ(st.malformed, 0);
	jvm_agent__free(a);
	fixture_fini(&f);
}

TEST(other_ring_version_refused)
{
	struct fixture f;

	fixture_init(&f);
	hdr(&f)->version = JP_RING_VERSION - 1;
	flush_ring_tail(&f, 1);
	EXPECT_TRUE(!jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1));
	fixture_fini(&f);
}

/* a walk block as an agent publishes it: two heaps, JDK 25's offsets */
static struct jp_ring_walk *walk_block(struct fixture *f)
{
	struct jp_ring_walk *w = (struct jp_ring_walk *)(f->mem + JP_RING_WALK_OFF);

	memset(w, 0, sizeof(*w));
	w->n_heaps = 2;
	w->heaps[0].lo = 0x7f0000000000ull;
	w->heaps[0].hi = w->heaps[0].lo + (16 << 20);
	w->heaps[0].segmap = 0x7f1000000000ull;
	w->heaps[0].log2_seg = 7;
	w->heaps[1] = w->heaps[0];
	w->heaps[1].lo = w->heaps[0].hi;
	w->heaps[1].hi = w->heaps[1].lo + (16 << 20);
	w->call_stub_ret = w->heaps[1].lo + 0x100;
	w->heap_block = 16;
	w->blob_name = 8;
	w->blob_frame_size = 44;
	w->blob_frame_complete = 54;
	w->blob_code = 36;
	w->code_is_offset = 1;
	w->method_const = 8;
	w->const_size = 56;
	w->const_code_size = 34;
	w->frame_complete_size = 2;
	w->anchor_sp = 0;
	w->anchor_pc = 16;
	w->anchor_fp = 8;
	w->hb_length = 0;
	w->hb_used = 8;
	w->hb_length_size = 8;
	w->magic = JP_RING_WALK_MAGIC;
	return w;
}

TEST(walk_layout_checked)
{
	struct fixture f;
	struct jvm_agent *a;
	struct jp_ring_walk *w;
	struct jp_jwalk jw;

	fixture_init(&f);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_EQ(jvm_agent__walk(a, &jw), -ENOENT); /* an agent that published none */
	w = walk_block(&f);
	flush_ring_tail(&f, 1);
	EXPECT_EQ(jvm_agent__walk(a, &jw), 0);
	EXPECT_EQ(jw.n_heaps, 2);
	EXPECT_EQ(jw.heaps[1].lo, w->heaps[1].lo);
	EXPECT_EQ(jw.blob_frame_size, 44);
	EXPECT_EQ(jw.frame_complete_size, 2);
	EXPECT_EQ(jw.anchor_pc, 16);
	EXPECT_EQ(jw.hb_length_size, 8);
	EXPECT_EQ(jw.hb_used, 8);
	/*
	 * the HeapBlock as published -> the blob cache's length size: JDK 25's (8 bytes, a
	 * uint32_t length); an agent before the HeapBlock fields and a HeapBlock larger than
	 * BPF reads: accepted, without the cache
	 */
	static const struct {
		__u32 heap_block;
		__u16 used, length_size, want;
	} hb[] = { { 8, 4, 4, 4 }, { 16, 0, 0, 0 }, { 32, 8, 8, 0 } };
	for (size_t i = 0; i < sizeof(hb) / sizeof(hb[0]); i++) {
		w = walk_block(&f);
		w->heap_block = hb[i].heap_block;
		w->hb_used = hb[i].used;
		w->hb_length_size = hb[i].length_size;
		flush_ring_tail(&f, 1);
		EXPECT_EQ(jvm_agent__walk(a, &jw), 0);
		EXPECT_EQ(jw.hb_length_size, hb[i].want);
	}
	/* each field BPF would use out of its range: refused whole */
	for (int bad = 0; bad < 9; bad++) {
		w = walk_block(&f);
		switch (bad) {
		case 0: w->n_heaps = 4; break;
		case 1: w->heaps[1].log2_seg = 3; break;
		case 2: w->heaps[0].hi = w->heaps[0].lo; break;
		case 3: w->blob_code = JP_JW_BLOB_HDR - 7; break;
		case 4: w->frame_complete_size = 8; break;
		case 5: w->heaps[0].hi = w->heaps[0].lo + (8ull << 30); break;
		case 6: w->anchor_fp = 0x100; break;
		case 7: w->hb_used = 16; break;
		case 8: w->hb_length_size = 2; break;
		}
		flush_ring_tail(&f, 1);
		EXPECT_EQ(jvm_agent__walk(a, &jw), -EPROTO);
	}
	jvm_agent__free(a);
	fixture_fini(&f);
}

TEST(pc_chain_as_agct_finds_it)
{
	struct fixture f;
	struct jvm_agent *a;
	const __u64 *ch;
	const __s32 *bci;

	fixture_init(&f);
	write_dict(&f);
	flush_dict(&f, f.dlen);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_TRUE(jvm_agent__dict_refresh(a) > 0); /* the join's polls read it */
	/* a caller's pc: the recorded pc at or after it (a return address is one) */
	ASSERT_TRUE(jvm_agent__pc_chain(a, BLOB + 0x40, false, &ch, &bci) == 2);
	EXPECT_EQ(ch[0], M_MIX);
	EXPECT_EQ(ch[1], M_OUT);
	EXPECT_EQ(bci[0], 2);
	EXPECT_EQ(bci[1], 12);
	ASSERT_TRUE(jvm_agent__pc_chain(a, BLOB + 0x10, false, &ch, &bci) == 1);
	EXPECT_EQ(bci[0], 5);
	/* the interrupted pc: the first recorded pc after it; none after: the method alone */
	ASSERT_TRUE(jvm_agent__pc_chain(a, BLOB + 0x10, true, &ch, &bci) == 2);
	EXPECT_EQ(ch[0], M_MIX);
	ASSERT_TRUE(jvm_agent__pc_chain(a, BLOB + 0x40, true, &ch, &bci) == 1);
	EXPECT_EQ(ch[0], M_OUT);
	EXPECT_EQ(bci[0], -1);
	EXPECT_EQ(jvm_agent__pc_chain(a, BLOB + 0x100, false, &ch, &bci), -ENOENT);
	jvm_agent__free(a);
	fixture_fini(&f);
}

/*
 * A chain found is kept by pc (agent_names.c) and given again without a search of the
 * code table while that table is unchanged; code unloaded, or other code at the pc, and
 * the pc's chain is what the table says now
 */
TEST(a_chain_kept_by_pc_follows_the_code_at_the_pc)
{
	const __u64 base = BLOB + 0x10000;
	struct fixture f;
	struct jvm_agent *a;
	const __u64 *ch;
	const __s32 *bci;
	size_t at;

	fixture_init(&f);
	write_dict(&f);
	d_code(&f, base, 0x100, M_RUN);
	flush_dict(&f, f.dlen);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_TRUE(jvm_agent__dict_refresh(a) > 0);
	for (int i = 0; i < 2; i++) {
		ASSERT_TRUE(jvm_agent__pc_chain(a, base + 0x10, false, &ch, &bci) == 1);
		EXPECT_EQ(ch[0], M_RUN);
	}
	at = d_begin(&f, JP_DICT_CODE_UNLOAD);
	d_u64(&f, base);
	d_u64(&f, M_RUN);
	d_end(&f, at);
	flush_dict(&f, f.dlen);
	EXPECT_TRUE(jvm_agent__dict_refresh(a) > 0);
	EXPECT_EQ(jvm_agent__pc_chain(a, base + 0x10, false, &ch, &bci), -ENOENT);
	d_code(&f, base, 0x100, M_MIX);
	flush_dict(&f, f.dlen);
	EXPECT_TRUE(jvm_agent__dict_refresh(a) > 0);
	for (int i = 0; i < 2; i++) {
		ASSERT_TRUE(jvm_agent__pc_chain(a, base + 0x10, false, &ch, &bci) == 1);
		EXPECT_EQ(ch[0], M_MIX);
	}
	/* code elsewhere comes: the pc's chain is the same, found again */
	d_code(&f, base + 0x1000, 0x100, M_RUN);
	flush_dict(&f, f.dlen);
	EXPECT_TRUE(jvm_agent__dict_refresh(a) > 0);
	ASSERT_TRUE(jvm_agent__pc_chain(a, base + 0x10, false, &ch, &bci) == 1);
	EXPECT_EQ(ch[0], M_MIX);
	jvm_agent__free(a);
	EXPECT_EQ(jvm_agent__all_bytes(), 0);
	fixture_fini(&f);
}

struct learnt {
	int known, forgotten;
	__u64 last;
};

static void on_method(void *ctx, __u32 pid, __u64 method, bool known)
{
	struct learnt *l = ctx;

	(void)pid;
	*(known ? &l->known : &l->forgotten) += 1;
	l->last = method;
}

TEST(bpf_walk_compared_learnt_and_named)
{
	/* leaf in outer's code (mix inlined at the next recorded pc), called by run, interpreted */
	const struct jp_jframe fr[2] = { { .pc = BLOB + 0x3f }, { .pc = 7, .method = 0xabc0 } };
	const struct java_frame agct[3] = { { M_MIX, 2, JP_FK_INLINED }, { M_OUT, 12, JP_FK_JIT },
					    { M_RUN, 7, JP_FK_INTERP } };
	struct java_frame other[3];
	struct jp_sample s = { .jstack_len = 2, .jstack_err = JP_JW_ENTRY };
	struct java_trace tr = { .num_frames = 3, .frames = agct }, got;
	struct learnt l = { 0 };
	struct jwalk_stats st;
	struct fixture f;
	struct jvm_agent *a;
	struct jwalk *w;

	fixture_init(&f);
	write_dict(&f);
	flush_dict(&f, f.dlen);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	ASSERT_TRUE(a);
	EXPECT_TRUE(jvm_agent__dict_refresh(a) > 0);
	w = jwalk__new(42, on_method, &l);
	ASSERT_TRUE(w);
	/* run's Method* is not known yet: not named, then learnt from an agreeing sample */
	EXPECT_EQ(jwalk__trace(w, a, &s, fr, &got), -ENOENT);
	jwalk__compare(w, a, &s, fr, &tr);
	EXPECT_EQ(l.known, 1);
	EXPECT_EQ(l.last, 0xabc0);
	ASSERT_TRUE(jwalk__trace(w, a, &s, fr, &got) == 0);
	ASSERT_TRUE(got.num_frames == 3);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(got.frames[i].method_id, agct[i].method_id);
		EXPECT_EQ(got.frames[i].bci, agct[i].bci);
		EXPECT_EQ(got.frames[i].kind, agct[i].kind);
	}
	/* the agent names the leaf's compiled method alone: agrees but for the inlining */
	tr = (struct java_trace){ .num_frames = 2, .frames = agct + 1 };
	jwalk__compare(w, a, &s, fr, &tr);
	/* the Method* names another method now (memory reused): forgotten, here and in BPF */
	memcpy(other, agct, sizeof(other));
	other[2].method_id = M_NAT;
	tr = (struct java_trace){ .num_frames = 3, .frames = other };
	jwalk__compare(w, a, &s, fr, &tr);
	EXPECT_EQ(l.forgotten, 1);
	EXPECT_EQ(jwalk__trace(w, a, &s, fr, &got), -ENOENT);
	/* a walk that gave up is counted, never compared */
	s.jstack_err = JP_JW_STUB;
	jwalk__compare(w, a, &s, fr, &tr);
	jwalk__stats(w, &st);
	EXPECT_EQ(st.walked, 4);
	EXPECT_EQ(st.compared, 3);
	EXPECT_EQ(st.agree, 1);
	EXPECT_EQ(st.learned, 1);
	EXPECT_EQ(st.leaf_inlining, 1);
	EXPECT_EQ(st.differ, 1);
	EXPECT_EQ(st.unlearned, 1);
	EXPECT_EQ(st.named, 1);
	EXPECT_EQ(st.ends[JP_JW_STUB + JW_END_BIAS], 1);
	EXPECT_EQ(st.methods, 0);
	jwalk__free(w);
	jvm_agent__free(a);
	fixture_fini(&f);
}

/*
 * A park trace with its blocker's class after the frames (JP_TRACE_F_BLOCKER): name_len
 * bytes of name, the record's len extra (16-aligned past the frames unless given)
 */
static void put_blocker_trace(struct fixture *f, __u32 tid, int n, __u8 flags, __u8 name_len,
			      const char *name, __u32 extra)
{
	__u64 pos = hdr(f)->head;
	struct jp_trace_rec *r =
		(struct jp_trace_rec *)(f->mem + JP_RING_HDR_SIZE + (pos % DATA_SIZE));
	__u32 len = sizeof(*r) + (__u32)n * sizeof(struct jp_frame) + extra;

	memset(r, 0, len);
	r->h.len = len;
	r->h.type = JP_REC_TRACE;
	r->h.seq = pos;
	r->time_ns = 1000 + pos;
	r->tid = tid;
	r->num_frames = n;
	r->flags = flags;
	r->blocker_len = name_len;
	memcpy(r + 1, stack4, (size_t)n * sizeof(struct jp_frame));
	if (name)
		memcpy((char *)(r + 1) + (size_t)n * sizeof(struct jp_frame), name,
		       strnlen(name, extra));
	hdr(f)->head = pos + len;
}

TEST(park_blocker_names_checked)
{
	static const char lock[] = "java/util/concurrent/locks/ReentrantLock$NonfairSync";
	char big[JP_BLOCKER_MAX + 17];
	struct fixture f;
	struct jvm_agent *a;
	struct jvm_agent_stats st;
	struct seen s = { 0 };

	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fixture_init(&f);
	/* 0: well formed, twice (one interned string) */
	put_blocker_trace(&f, 1, 2, JP_TRACE_F_BLOCKER, sizeof(lock) - 1, lock, 64);
	put_blocker_trace(&f, 2, 2, JP_TRACE_F_BLOCKER, sizeof(lock) - 1, lock, 64);
	/* 2: a length past the record's end */
	put_blocker_trace(&f, 3, 2, JP_TRACE_F_BLOCKER, 200, lock, 64);
	/* 3: a length of 0; 4: a name with a ';' and a control character */
	put_blocker_trace(&f, 4, 2, JP_TRACE_F_BLOCKER, 0, lock, 64);
	put_blocker_trace(&f, 5, 1, JP_TRACE_F_BLOCKER, 8, "a/b;c\n/d", 16);
	/* 5: no flag: the bytes are not a name (an agent before it left stale ones) */
	put_blocker_trace(&f, 6, 1, 0, sizeof(lock) - 1, lock, 64);
	/* 6: a hidden class, its address dropped */
	put_blocker_trace(&f, 7, 1, JP_TRACE_F_BLOCKER, 32, "pkg/Foo$$Lambda+0x0000000801001a", 32);
	flush_ring(&f);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 7);
	EXPECT_EQ(s.n, 7);
	EXPECT_STREQ(s.t[0].blocker, lock);
	EXPECT_TRUE(s.t[0].blocker == s.t[1].blocker);
	EXPECT_EQ(s.t[0].num_frames, 2);
	EXPECT_TRUE(!s.t[2].blocker);
	EXPECT_EQ(s.t[2].num_frames, 2);
	EXPECT_TRUE(!s.t[3].blocker);
	EXPECT_TRUE(!s.t[4].blocker);
	EXPECT_TRUE(!s.t[5].blocker);
	EXPECT_STREQ(s.t[6].blocker, "pkg/Foo$$Lambda");
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.blocker_bad, 3);
	EXPECT_EQ(st.malformed, 0);
	/* a name longer than JP_BLOCKER_MAX: refused, the trace kept */
	s.n = 0;
	jvm_agent__free(a);
	fixture_fini(&f);
	fixture_init(&f);
	put_blocker_trace(&f, 8, 1, JP_TRACE_F_BLOCKER, 255, big, JP_BLOCKER_MAX + 128);
	/* frames without room for any name: the trace still comes, unnamed */
	put_blocker_trace(&f, 9, 4, JP_TRACE_F_BLOCKER, 16, NULL, 0);
	flush_ring(&f);
	a = jvm_agent__open_files(f.ring, f.dict, (unsigned int)-1);
	EXPECT_TRUE(a);
	EXPECT_EQ(jvm_agent__poll(a, collect, &s), 2);
	EXPECT_TRUE(!s.t[0].blocker);
	EXPECT_TRUE(!s.t[1].blocker);
	EXPECT_EQ(s.t[1].num_frames, 4);
	jvm_agent__stats(a, &st);
	EXPECT_EQ(st.blocker_bad, 2);
	jvm_agent__free(a);
	fixture_fini(&f);
}

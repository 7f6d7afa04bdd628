/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* methods.c: the dictionary log (methods, compiled code, stubs, threads) that jprof names frames with. */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include <jvmticmlr.h> /* after jvmti.h: it uses jint, jmethodID */

static int dict_fd = -1; /* open for the life of the process: never closed under a writer */
static int dict_torn;	 /* a short write tore the log: nothing more is appended */
static __u64 dict_size;	 /* bytes written or promised, atomically */
static char dict_file[512];

/* a growable record under construction; oom sticks */
struct jpa_buf {
	unsigned char *p;
	size_t len, cap;
	int oom;
};

static void buf_put(struct jpa_buf *b, const void *src, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		unsigned char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void buf_u16(struct jpa_buf *b, __u16 v)
{
	buf_put(b, &v, sizeof(v));
}

static void buf_u32(struct jpa_buf *b, __u32 v)
{
	buf_put(b, &v, sizeof(v));
}

static void buf_u64(struct jpa_buf *b, __u64 v)
{
	buf_put(b, &v, sizeof(v));
}

static __u16 str_len16(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0xffff ? 0xffff : (__u16)n;
}

/* starts a record: the jp_dict_rec header is patched by rec_write() */
static void rec_begin(struct jpa_buf *b, __u16 type)
{
	struct jp_dict_rec r = { .type = type };

	b->len = 0;
	b->oom = 0;
	buf_put(b, &r, sizeof(r));
}

/* one write() on the O_APPEND fd: a reader sees the whole record or a torn tail */
static void rec_write(struct jpa_buf *b)
{
	__u64 off;
	ssize_t n;

	if (dict_fd < 0)
		return;
	if (b->oom || b->len > JP_DICT_REC_MAX || __atomic_load_n(&dict_torn, __ATOMIC_ACQUIRE)) {
		jpa_ring_count(JPA_DICT_DROPPED, 1);
		return;
	}
	((struct jp_dict_rec *)b->p)->len = (__u32)b->len;
	off = __atomic_fetch_add(&dict_size, b->len, __ATOMIC_RELAXED);
	if (off + b->len > JP_DICT_SIZE_MAX) {
		__atomic_fetch_sub(&dict_size, b->len, __ATOMIC_RELAXED);
		jpa_ring_count(JPA_DICT_DROPPED, 1);
		return;
	}
	do {
		n = write(dict_fd, b->p, b->len);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)b->len) {
		/*
		 * A short write leaves a torn record the reader stops at: stop writing. The fd
		 * stays open for the life of the process: other JVMTI threads may be inside
		 * write() on it right now, and a closed number may be reused by the JVM.
		 */
		jpa_ring_count(JPA_DICT_DROPPED, 1);
		if (n > 0)
			__atomic_store_n(&dict_torn, 1, __ATOMIC_RELEASE);
		return;
	}
	jpa_ring_count(JPA_DICT_BYTES, b->len);
}

int jpa_dict_open(const char *dir, __u32 pid)
{
	struct jp_dict_hdr h = {
		.magic = JP_DICT_MAGIC,
		.version = JP_RING_VERSION,
		.hdr_size = sizeof(h),
		.pid = pid,
	};
	int fd, err;

	err = jpa_channel_path(dict_file, sizeof(dict_file), dir, pid, "dict");
	if (err)
		return err;
	/* the JVM's user and root only: class, method and thread names, JIT addresses */
	fd = jpa_create(dict_file, O_WRONLY | O_APPEND, 0600);
	if (fd < 0)
		return fd;
	if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
		err = errno ? -errno : -EIO;
		close(fd);
		unlink(dict_file);
		dict_file[0] = '\0';
		return err;
	}
	dict_size = sizeof(h);
	dict_fd = fd;
	return 0;
}

const char *jpa_dict_path(void)
{
	return dict_file;
}

static void put_class_head(struct jpa_buf *b, const char *sig, const char *src)
{
	rec_begin(b, JP_DICT_CLASS);
	buf_u16(b, str_len16(sig));
	buf_u16(b, str_len16(src));
	buf_u32(b, 0); /* n_methods, patched */
	buf_put(b, sig, str_len16(sig));
	buf_put(b, src, str_len16(src));
}

static void flush_class(struct jpa_buf *b, __u32 n_methods)
{
	/* n_methods sits after the record header and the two u16 lengths */
	if (!b->oom && b->len >= sizeof(struct jp_dict_rec) + 8)
		memcpy(b->p + sizeof(struct jp_dict_rec) + 4, &n_methods, sizeof(n_methods));
	rec_write(b);
}

static void put_method(jvmtiEnv *jvmti, struct jpa_buf *b, jmethodID m)
{
	jvmtiLineNumberEntry *lines = NULL;
	char *name = NULL, *msig = NULL;
	jint n_lines = 0;

	if ((*jvmti)->GetMethodName(jvmti, m, &name, &msig, NULL) != JVMTI_ERROR_NONE)
		name = msig = NULL;
	/* native and abstract methods have none: ABSENT_INFORMATION / NATIVE_METHOD */
	if ((*jvmti)->GetLineNumberTable(jvmti, m, &n_lines, &lines) != JVMTI_ERROR_NONE) {
		lines = NULL;
		n_lines = 0;
	}
	buf_u64(b, (__u64)(uintptr_t)m);
	buf_u16(b, str_len16(name));
	buf_u16(b, str_len16(msig));
	buf_u32(b, (__u32)n_lines);
	buf_put(b, name, str_len16(name));
	buf_put(b, msig, str_len16(msig));
	for (jint i = 0; i < n_lines; i++) {
		__s32 bci = lines[i].start_location > 0x7fffffff ? 0x7fffffff
								 : (__s32)lines[i].start_location;

		buf_u32(b, (__u32)bci);
		buf_u32(b, (__u32)lines[i].line_number);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)msig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)lines);
}

void jpa_dict_class(jvmtiEnv *jvmti, jclass klass)
{
	struct jpa_buf b = { 0 };
	jmethodID *methods = NULL;
	char *sig = NULL, *src = NULL;
	jint status = 0, n = 0;
	__u32 in_rec = 0;

	if ((*jvmti)->GetClassStatus(jvmti, klass, &status) != JVMTI_ERROR_NONE ||
	    !(status & JVMTI_CLASS_STATUS_PREPARED) ||
	    (status & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PRIMITIVE)))
		return;
	/* this is also what creates the jmethodIDs AGCT needs: without them frames are NULL */
	if ((*jvmti)->GetClassMethods(jvmti, klass, &n, &methods) != JVMTI_ERROR_NONE)
		return;
	if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE)
		sig = NULL;
	if ((*jvmti)->GetSourceFileName(jvmti, klass, &src) != JVMTI_ERROR_NONE)
		src = NULL;
	if (dict_fd >= 0 && n > 0) {
		put_class_head(&b, sig, src);
		for (jint i = 0; i < n; i++) {
			/* keep records well under the cap: a big class comes in several */
			if (b.len > JP_DICT_REC_MAX / 2) {
				flush_class(&b, in_rec);
				put_class_head(&b, sig, src);
				in_rec = 0;
			}
			put_method(jvmti, &b, methods[i]);
			in_rec++;
		}
		flush_class(&b, in_rec);
	}
	free(b.p);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)src);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)methods);
}

static const jvmtiCompiledMethodLoadInlineRecord *find_inline_info(const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;

	/* a list of records, HotSpot sends one; bounded anyway */
	for (int i = 0; h && i < 16; i++, h = h->next) {
		if (h->kind == JVMTI_CMLR_INLINE_INFO)
			return (const jvmtiCompiledMethodLoadInlineRecord *)h;
	}
	return NULL;
}

void jpa_dict_code_load(jmethodID method, const void *addr, __u32 size, const void *compile_info)
{
	const jvmtiCompiledMethodLoadInlineRecord *ii = find_inline_info(compile_info);
	struct jpa_buf b = { 0 };
	__u32 n_pcs = 0;

	if (dict_fd < 0)
		return;
	rec_begin(&b, JP_DICT_CODE_LOAD);
	buf_u64(&b, (__u64)(uintptr_t)addr);
	buf_u32(&b, size);
	buf_u32(&b, 0); /* n_pcs, patched */
	buf_u64(&b, (__u64)(uintptr_t)method);
	for (jint i = 0; ii && i < ii->numpcs; i++) {
		const PCStackInfo *pc = &ii->pcinfo[i];
		size_t need = 12 + (size_t)(pc->numstackframes > 0 ? pc->numstackframes : 0) * 12;

		if (pc->numstackframes <= 0)
			continue;
		/* a truncated table only costs precision in the reader's kind heuristic */
		if (b.len + need > JP_DICT_REC_MAX)
			break;
		buf_u64(&b, (__u64)(uintptr_t)pc->pc);
		buf_u32(&b, (__u32)pc->numstackframes);
		for (jint j = 0; j < pc->numstackframes; j++) {
			buf_u64(&b, (__u64)(uintptr_t)pc->methods[j]);
			buf_u32(&b, (__u32)(pc->bcis ? pc->bcis[j] : -1));
		}
		n_pcs++;
	}
	if (!b.oom)
		memcpy(b.p + sizeof(struct jp_dict_rec) + 12, &n_pcs, sizeof(n_pcs));
	rec_write(&b);
	free(b.p);
}

void jpa_dict_code_unload(jmethodID method, const void *addr)
{
	unsigned char rec[sizeof(struct jp_dict_rec) + 16];
	struct jpa_buf b = { .p = rec, .cap = sizeof(rec) };

	rec_begin(&b, JP_DICT_CODE_UNLOAD);
	buf_u64(&b, (__u64)(uintptr_t)addr);
	buf_u64(&b, (__u64)(uintptr_t)method);
	rec_write(&b);
}

#define PUT_U64 1 /* the record starts with a u64 */
#define PUT_U32 2 /* then a u32 */

/* a record of [u64] [u32] u16 name_len, u16 pad, name (cut at 512 bytes) */
static void put_named(__u16 type, __u64 a, __u32 b32, int fields, const char *name)
{
	unsigned char rec[sizeof(struct jp_dict_rec) + 16 + 512];
	struct jpa_buf b = { .p = rec, .cap = sizeof(rec) };
	__u16 n = str_len16(name);

	if (n > 512)
		n = 512;
	rec_begin(&b, type);
	if (fields & PUT_U64)
		buf_u64(&b, a);
	if (fields & PUT_U32)
		buf_u32(&b, b32);
	buf_u16(&b, n);
	buf_u16(&b, 0);
	buf_put(&b, name, n);
	rec_write(&b);
}

void jpa_dict_stub(const char *name, const void *addr, __u32 size)
{
	put_named(JP_DICT_STUB, (__u64)(uintptr_t)addr, size, PUT_U64 | PUT_U32, name);
}

void jpa_dict_thread(__u32 tid, const char *name)
{
	put_named(JP_DICT_THREAD, 0, tid, PUT_U32, name);
}

void jpa_dict_class_id(__u64 class_id, const char *sig)
{
	put_named(JP_DICT_CLASS_ID, class_id, 0, PUT_U64, sig);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jfr_pools.c: the JFR writer's constant pools: threads, stacks, methods, classes, symbols */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_int.h"

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
__u32 jw_class_key(struct jfr *x, const char *name, size_t len, bool java)
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
	const char *file = f ? jw_nz(f->file) : "", *slash;

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
			jm->cls = jw_class_key(x, name, (size_t)(dot - name), true);
			jm->name = sym(x, dot + 1, end - (size_t)(dot - name) - 1);
		} else {
			jm->cls = jw_class_key(x, "[unknown]", 9, false);
			jm->name = sym(x, name, end);
		}
		jm->desc = paren ? sym(x, paren, strlen(paren)) : sym(x, "()V", 3);
		/* a Java native method is a Native frame of its own class: the reader tells it
		 * from native code's pseudo classes ("libc.so.6") by this flag */
		jm->modifiers = kind == JP_FK_NATIVE ? JFR_ACC_NATIVE : 0;
		return;
	}
	cls = native_class(f, kind);
	jm->cls = jw_class_key(x, cls, strlen(cls), false);
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
void jw_resolve_methods(struct jfr *x)
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
int jw_write_constant_pool(struct jfr *x, struct bytebuf *b)
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
	jb_varint(b, 0);  /* duration */
	jb_varint(b, 0);  /* delta to the next pool: none */
	bytebuf_u8(b, 0); /* checkpoint type: generic */
	jb_varint(b, (__u64)npools);

	/* threads: one per label set */
	if (x->n_threads) {
		jb_varint(b, T_THREAD);
		jb_varint(b, x->n_threads);
	}
	for (jp_id id = 1; id <= x->c.labels; id++) {
		const struct jp_labels *l = model__get_labels(x->m, id);
		const char *thread = l ? jw_nz(l->thread) : "";
		char folded[64];

		if (!x->labels_used[id] || !l)
			continue;
		if (l->nfolded) { /* exited processes added up: no thread of their own */
			snprintf(folded, sizeof(folded), "%.16s [%u exited processes]",
				 jw_nz(l->comm), l->nfolded);
			thread = folded;
		}
		jb_varint(b, id);
		jb_str(b, thread[0] ? thread : jw_nz(l->comm));
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
		jb_int(b, x->methods[id].modifiers);
		bytebuf_u8(b, 0); /* hidden */
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
		jb_int(b, 0);	  /* modifiers */
		bytebuf_u8(b, 0); /* hidden */
	}

	if (x->pkgs.n) {
		jb_varint(b, T_PACKAGE);
		jb_varint(b, x->pkgs.n);
	}
	for (size_t i = 0; i < x->pkgs.n; i++) {
		jb_varint(b, i + 1);
		jb_varint(b, x->pkg_name[i]);
		jb_varint(b, 0);  /* module: null */
		bytebuf_u8(b, 1); /* exported */
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

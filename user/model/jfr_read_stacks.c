// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jfr_read_stacks.c: JFR frames, stack traces and threads as model locations, stacks and labels */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_read_int.h"

/* ---- frames, stacks, threads ---- */

/* "java/lang/String" -> "java.lang.String", "[B" -> "byte[]", "[Lp/C;" -> "p.C[]" */
void jr_class_display(const char *s, char *out, size_t size)
{
	static const char prim[] = "ZBCSIJFD";
	static const char *const pname[] = {"boolean", "byte", "char",	"short",
					    "int",     "long", "float", "double"};
	size_t dims = 0, w = 0, n;
	const char *p;

	while (s[dims] == '[' && dims < 16)
		dims++;
	p = s + dims;
	n = strlen(p);
	if (dims && p[0] == 'L' && n >= 2 && p[n - 1] == ';') {
		p++;
		n -= 2;
	} else if (dims && n == 1 && strchr(prim, p[0])) {
		p = pname[strchr(prim, p[0]) - prim];
		n = strlen(p);
	} else if (dims) {
		p = s;
		n = strlen(s);
		dims = 0;
	}
	for (size_t i = 0; i < n && w + 1 < size; i++)
		out[w++] = p[i] == '/' ? '.' : p[i];
	for (size_t i = 0; i < dims && w + 2 < size; i++) {
		out[w++] = '[';
		out[w++] = ']';
	}
	out[w] = '\0';
}

/*
 * A hidden class's name ends in its address in that JVM ("Foo$$Lambda$88+0x00007fc09c007a08/
 * 1790421142" in JDK 17, "Foo$$Lambda/0x000000001b045210" in 25, "LambdaForm$MH+0x..."): as
 * jprof's agent does, the address and a lambda's number go ("Foo$$Lambda", "LambdaForm$MH"),
 * so the same code is one frame in every JVM and run.
 */
static void hidden_class_norm(char *s)
{
	size_t n = strlen(s), k;

	for (size_t i = 1; i + 2 < n; i++) {
		if ((s[i] == '+' || s[i] == '/' || s[i] == '.') && s[i + 1] == '0' &&
		    s[i + 2] == 'x' && i + 3 < n && strchr("0123456789abcdefABCDEF", s[i + 3])) {
			n = i;
			break;
		}
	}
	for (k = n; k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9'; k--)
		;
	if (k < n && k >= 9 && !memcmp(s + k - 9, "$$Lambda$", 9))
		n = k - 1;
	s[n] = '\0';
}

static enum jp_frame_kind frame_kind(struct ctx *c, __u32 ci, __u64 key)
{
	static const struct {
		const char *name;
		enum jp_frame_kind kind;
	} fk[] = {
		{"Interpreted", JP_FK_INTERP}, {"JIT compiled", JP_FK_JIT},
		{"C1 compiled", JP_FK_JIT},    {"Inlined", JP_FK_INLINED},
		{"Native", JP_FK_NATIVE},      {"C++", JP_FK_NATIVE},
		{"Kernel", JP_FK_KERNEL},
	};
	struct cpent *e = jr_cp_find(c, c->cls[ci].id, key);
	char d[64];

	if (e && e->cache[0])
		return (enum jp_frame_kind)(e->cache[0] - 1);
	if (!jr_resolve_string(c, ci, key, d, sizeof(d), 3))
		return JP_FK_NATIVE;
	for (size_t i = 0; i < sizeof(fk) / sizeof(fk[0]); i++) {
		if (!strcmp(d, fk[i].name)) {
			if (e)
				e->cache[0] = fk[i].kind + 1;
			return fk[i].kind;
		}
	}
	return JP_FK_NATIVE;
}

static bool java_kind(enum jp_frame_kind k)
{
	return k == JP_FK_JIT || k == JP_FK_INLINED || k == JP_FK_INTERP;
}

/*
 * The model location of a frame: its method's function (cached on the method's entry, with
 * jprof's pseudo classes of native code: "[kernel]", libjvm.so), line and kind.
 */
static jp_id frame_loc(struct ctx *c, __u32 mci, __u64 mkey, __s64 line, enum jp_frame_kind kind)
{
	struct cpent *e = jr_cp_get(c, mci, mkey);
	const struct jclass *k = &c->cls[mci];
	struct jp_location loc = {.line = line > 0 && line <= 0x7fffffff ? (__s32)line : 0};

	if (e && e->cache[0]) {
		loc.func = e->cache[0];
		if (e->cache[1])
			kind = (enum jp_frame_kind)(e->cache[1] - 1);
	} else {
		char cls[JFR_MAX_STR] = "", name[JFR_MAX_STR] = "", desc[256] = "";
		char full[2 * JFR_MAX_STR + 256];
		enum jp_frame_kind native = JP_FK_MAX;
		__u64 mods = 0;
		bool java;
		struct rd r;

		if (e) {
			r = (struct rd){c->buf, e->pos, c->c_end, 0};
			for (__u32 i = 0; i < k->nf && !r.err; i++) {
				const struct jfield *f = &c->fld[k->f0 + i];
				__u64 ck;

				if (f->role == R_TYPE && f->cp) {
					ck = jr_rd_long(c, &r);
					if (!r.err)
						(void)jr_resolve_string(c, f->cls, ck, cls,
									sizeof(cls), 4);
				} else if (f->role == R_NAME) {
					(void)jr_rd_str_field(c, &r, f, name, sizeof(name), 3);
				} else if (f->role == R_DESCRIPTOR) {
					(void)jr_rd_str_field(c, &r, f, desc, sizeof(desc), 3);
				} else if (f->role == R_MODIFIERS) {
					if (!jr_rd_num(c, &r, f, &mods))
						mods = 0;
				} else {
					jr_skip_field(c, &r, f, 0);
				}
			}
			if (r.err)
				name[0] = '\0';
			if (!c->jprof)
				hidden_class_norm(cls);
		}
		if (!name[0])
			snprintf(name, sizeof(name), "[unknown]");
		/*
		 * jprof writes native code as Native frames of a pseudo class: where it lives;
		 * a Java native method as a Native frame of its class, flagged ACC_NATIVE
		 */
		if (c->jprof && !java_kind(kind) && !(mods & JR_ACC_NATIVE)) {
			java = false;
			native = !strcmp(cls, "[kernel]")    ? JP_FK_KERNEL
				 : !strcmp(cls, "libjvm.so") ? JP_FK_JVM
							     : JP_FK_NATIVE;
			loc.func =
				model__func(c->m, name, strcmp(cls, "[native]") ? cls : "", false);
		} else {
			java = cls[0] && (java_kind(kind) || kind == JP_FK_NATIVE);
			/* jprof's writer puts "()V" where the model's name had no descriptor */
			if (java)
				snprintf(full, sizeof(full), "%s.%s%s", cls, name,
					 c->jprof && strcmp(desc, "()V") ? desc : "");
			else
				snprintf(full, sizeof(full), "%s", name);
			loc.func = model__func(c->m, full, "", java);
		}
		if (!loc.func)
			return 0;
		if (e) {
			e->cache[0] = loc.func;
			e->cache[1] = native != JP_FK_MAX ? native + 1 : 0;
		}
		if (native != JP_FK_MAX)
			kind = native;
	}
	loc.kind = kind;
	return model__location(c->m, &loc);
}

/* one StackFrame value at r; 0 on error */
static jp_id read_frame(struct ctx *c, struct rd *r, __u32 fci)
{
	const struct jclass *k = &c->cls[fci];
	__u64 mkey = 0, tkey = 0, v;
	__s64 line = 0;
	__u32 mci = ~0u, tci = ~0u;

	if (k->prim != P_STRUCT) {
		r->err = -EINVAL;
		return 0;
	}
	for (__u32 i = 0; i < k->nf && !r->err; i++) {
		const struct jfield *f = &c->fld[k->f0 + i];

		if (f->role == R_METHOD && f->cp && !f->array) {
			mkey = jr_rd_long(c, r);
			mci = f->cls;
		} else if (f->role == R_TYPE && f->cp && !f->array) {
			tkey = jr_rd_long(c, r);
			tci = f->cls;
		} else if (f->role == R_LINE && jr_rd_num(c, r, f, &v)) {
			line = (__s64)v;
		} else if (f->role == R_LINE || f->role == R_METHOD || f->role == R_TYPE) {
			;
		} else {
			jr_skip_field(c, r, f, 0);
		}
	}
	if (!r->err && mci == ~0u)
		r->err = -EINVAL; /* a frame of no method */
	if (r->err)
		return 0;
	return frame_loc(c, mci, mkey, line, tci != ~0u ? frame_kind(c, tci, tkey) : JP_FK_NATIVE);
}

/* the model stack of a stack trace key (cached); 0 for none; -1 in *err on failure */
jp_id jr_stack_of(struct ctx *c, __u32 sci, __u64 key, int *err)
{
	struct cpent *e = jr_cp_get(c, sci, key);
	const struct jclass *k = &c->cls[sci];
	size_t n = 0;
	struct rd r;
	jp_id id;

	if (!e)
		return 0;
	if (e->cache[0])
		return e->cache[0];
	r = (struct rd){c->buf, e->pos, c->c_end, 0};
	for (__u32 i = 0; i < k->nf && !r.err; i++) {
		const struct jfield *f = &c->fld[k->f0 + i];
		__u32 nf;

		if (f->role != R_FRAMES || !f->array || f->cp) {
			jr_skip_field(c, &r, f, 0);
			continue;
		}
		nf = jr_rd_count(c, &r);
		for (__u32 j = 0; j < nf && !r.err; j++) {
			jp_id loc;

			if (n >= JFR_MAX_DEPTH) {
				c->info->cut_stacks++; /* leaf first: the root end goes */
				break;
			}
			loc = read_frame(c, &r, f->cls);
			if (!loc && !r.err) {
				*err = -ENOMEM;
				return 0;
			}
			c->stack_buf[n++] = loc;
		}
		break; /* nothing after the frames is needed */
	}
	if (r.err) {
		*err = r.err == -E2BIG ? jr_bad(c, "stack trace nested over the limits", e->pos)
				       : jr_bad(c, "malformed stack trace", e->pos);
		return 0;
	}
	id = model__stack(c->m, c->stack_buf, n);
	if (!id && n)
		*err = -ENOMEM;
	e->cache[0] = id;
	return id;
}

/* the labels of a thread key (cached on its entry) */
jp_id jr_labels_of(struct ctx *c, __u32 tci, __u64 key)
{
	struct cpent *e = tci != ~0u ? jr_cp_get(c, tci, key) : NULL;
	struct cpent *ti = c->ti_cls != ~0u ? jr_cp_find(c, TI_TYPE, key) : NULL;
	char os[256] = "", jn[256] = "", comm[256] = "java", cont[256] = "", main[256] = "";
	struct jp_labels l = {
		.pid = c->pid, .comm = comm, .thread = "", .container = cont, .main = main};
	struct rd r;
	__u64 v;
	jp_id id;

	if (e && e->cache[0])
		return e->cache[0];
	if (e) {
		const struct jclass *k = &c->cls[tci];

		r = (struct rd){c->buf, e->pos, c->c_end, 0};
		for (__u32 i = 0; i < k->nf && !r.err; i++) {
			const struct jfield *f = &c->fld[k->f0 + i];

			if (f->role == R_OS_NAME)
				(void)jr_rd_str_field(c, &r, f, os, sizeof(os), 3);
			else if (f->role == R_JAVA_NAME)
				(void)jr_rd_str_field(c, &r, f, jn, sizeof(jn), 3);
			else if (f->role == R_OS_TID && jr_rd_num(c, &r, f, &v))
				l.tid = v <= 0xffffffffu ? (__u32)v : 0;
			else if (f->role != R_OS_TID)
				jr_skip_field(c, &r, f, 0);
		}
		/* a JVM's own threads (GC, compiler) have only an OS name in a JDK file */
		l.thread = jn[0] || ti || c->jprof ? jn : os;
	}
	if (c->jprof) {
		comm[0] = '\0';
		l.pid = 0;
	}
	if (ti) {
		const struct jclass *k = &c->cls[c->ti_cls];

		r = (struct rd){c->buf, ti->pos, c->c_end, 0};
		for (__u32 i = 0; i < k->nf && !r.err; i++) {
			const struct jfield *f = &c->fld[k->f0 + i];

			if (f->role == R_PID && jr_rd_num(c, &r, f, &v))
				l.pid = v <= 0xffffffffu ? (__u32)v : 0;
			else if (f->role == R_PROCESS)
				(void)jr_rd_str_field(c, &r, f, comm, sizeof(comm), 3);
			else if (f->role == R_MAIN)
				(void)jr_rd_str_field(c, &r, f, main, sizeof(main), 3);
			else if (f->role == R_CONTAINER)
				(void)jr_rd_str_field(c, &r, f, cont, sizeof(cont), 3);
			else if (f->role == R_CGROUP && jr_rd_num(c, &r, f, &v))
				l.cgroup = v;
			else if (f->role != R_PID && f->role != R_CGROUP)
				jr_skip_field(c, &r, f, 0);
		}
	}
	id = model__labels(c->m, &l);
	if (e)
		e->cache[0] = id;
	return id;
}

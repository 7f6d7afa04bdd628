/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_helper.c: the method trace's helper class jprof/Trace, defined once (the boot loader),
 * its timing natives bound to trace.c's, and --args: the arg natives, which keep a traced
 * call's leading arguments per thread while it runs.
 *
 * The arg natives run on the application's threads right after enter, like the timing
 * natives: no lock, no allocation (a thread-local table, set up at a thread's first touch as
 * trace.c's stack), never blocking. A String is read with GetStringLength and GetStringRegion
 * into our own buffer: no application code (no toString), nothing allocated by the JVM. Calls
 * deeper than JPA_TARGS_DEPTH keep none.
 */
#include <errno.h>
#include <string.h>

#include "agent.h"
#include "bytecode.h"

#define JPA_TARGS_DEPTH 16
#define JPA_TARGS_STR	16 /* chars of a String kept (each char < 128, else '?') */

struct targs {
	__u8 kind[JPA_TARGS_DEPTH][JPA_BC_ARGS_MAX]; /* enum jpa_targ_kind, 0 none */
	__u64 val[JPA_TARGS_DEPTH][JPA_BC_ARGS_MAX]; /* the bits; a String's length */
	char str[JPA_TARGS_DEPTH][JPA_BC_ARGS_MAX][JPA_TARGS_STR];
};

static __thread struct targs t_args;
static jclass t_helper; /* global ref */
static int t_has_args;	/* the arg natives are bound */

void jpa_targs_reset(unsigned int depth)
{
	if (depth < JPA_TARGS_DEPTH)
		memset(t_args.kind[depth], 0, sizeof(t_args.kind[depth]));
}

/* the slot of argument pos of the calling thread's innermost traced call; NULL none */
static int slot(jint pos, unsigned int *ret_depth)
{
	int d = jpa_trace_depth();

	if (d < 0 || d >= JPA_TARGS_DEPTH || pos < 0 || pos >= JPA_BC_ARGS_MAX)
		return -1;
	*ret_depth = (unsigned int)d;
	return 0;
}

static void keep(jint pos, __u8 kind, __u64 bits)
{
	unsigned int d;

	if (slot(pos, &d))
		return;
	t_args.val[d][pos] = bits;
	t_args.kind[d][pos] = kind;
}

static void JNICALL n_arg_i(JNIEnv *env, jclass c, jint pos, jint v)
{
	(void)env;
	(void)c;
	keep(pos, JPA_TARG_INT, (__u64)(__u32)v);
}

static void JNICALL n_arg_j(JNIEnv *env, jclass c, jint pos, jlong v)
{
	(void)env;
	(void)c;
	keep(pos, JPA_TARG_LONG, (__u64)v);
}

static void JNICALL n_arg_f(JNIEnv *env, jclass c, jint pos, jfloat v)
{
	__u32 bits;

	(void)env;
	(void)c;
	memcpy(&bits, &v, sizeof(bits));
	keep(pos, JPA_TARG_FLOAT, bits);
}

static void JNICALL n_arg_d(JNIEnv *env, jclass c, jint pos, jdouble v)
{
	__u64 bits;

	(void)env;
	(void)c;
	memcpy(&bits, &v, sizeof(bits));
	keep(pos, JPA_TARG_DOUBLE, bits);
}

static void JNICALL n_arg_s(JNIEnv *env, jclass c, jint pos, jstring s)
{
	jchar buf[JPA_TARGS_STR];
	unsigned int d;
	jsize len, n;

	(void)c;
	if (slot(pos, &d))
		return;
	if (!s) {
		t_args.kind[d][pos] = JPA_TARG_NULL;
		return;
	}
	len = (*env)->GetStringLength(env, s);
	n = len < JPA_TARGS_STR ? len : JPA_TARGS_STR;
	if (n < 0)
		return;
	(*env)->GetStringRegion(env, s, 0, n, buf); /* within its length: throws nothing */
	for (jsize i = 0; i < n; i++)
		t_args.str[d][pos][i] = buf[i] >= 32 && buf[i] < 127 ? (char)buf[i] : '?';
	t_args.val[d][pos] = (__u64)len;
	t_args.kind[d][pos] = JPA_TARG_STRING;
}

int jpa_targs_get(unsigned int depth, struct jpa_targ *out)
{
	int n = 0;

	if (depth >= JPA_TARGS_DEPTH)
		return 0;
	for (int k = 0; k < JPA_BC_ARGS_MAX; k++) {
		if (!t_args.kind[depth][k])
			continue;
		out[n].pos = (__u8)k;
		out[n].kind = t_args.kind[depth][k];
		out[n].val = t_args.val[depth][k];
		memcpy(out[n].str, t_args.str[depth][k], sizeof(out[n].str));
		n++;
	}
	return n;
}

int jpa_trace_define_helper(JNIEnv *env, const JNINativeMethod *timing, int *ret_has_args)
{
	static const JNINativeMethod args[JPA_BC_ARG_KINDS] = {
		{(char *)"argI", (char *)"(II)V", (void *)n_arg_i},
		{(char *)"argJ", (char *)"(IJ)V", (void *)n_arg_j},
		{(char *)"argF", (char *)"(IF)V", (void *)n_arg_f},
		{(char *)"argD", (char *)"(ID)V", (void *)n_arg_d},
		{(char *)"argS", (char *)"(ILjava/lang/String;)V", (void *)n_arg_s},
	};
	uint8_t bytes[1024];
	int n = jpa_bc_helper_class(bytes, sizeof(bytes));
	jclass c;

	*ret_has_args = t_has_args;
	if (t_helper)
		return 0;
	if (n < 0)
		return n;
	c = (*env)->DefineClass(env, JPA_BC_HELPER, NULL, (const jbyte *)bytes, n);
	if (!c) {
		(*env)->ExceptionClear(env);
		/* a helper of an earlier copy of this agent: found, its natives bound again */
		c = (*env)->FindClass(env, JPA_BC_HELPER);
		if (!c) {
			(*env)->ExceptionClear(env);
			return -EEXIST;
		}
	}
	if ((*env)->RegisterNatives(env, c, timing, 3)) {
		(*env)->ExceptionClear(env);
		(*env)->DeleteLocalRef(env, c);
		return -EINVAL;
	}
	/* an earlier copy's helper may have no arg natives: then no --args */
	t_has_args = !(*env)->RegisterNatives(env, c, args, JPA_BC_ARG_KINDS);
	if (!t_has_args)
		(*env)->ExceptionClear(env);
	t_helper = (*env)->NewGlobalRef(env, c);
	(*env)->DeleteLocalRef(env, c);
	*ret_has_args = t_has_args;
	return t_helper ? 0 : -ENOMEM;
}

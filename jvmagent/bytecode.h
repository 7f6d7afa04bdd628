/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bytecode.h: the class-file rewriter of the method trace (plain C, no JVM, untrusted input). */
#ifndef JPROF_BYTECODE_H
#define JPROF_BYTECODE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The helper class the rewritten methods call: three public static native methods taking
 * the traced method's id (0..JPA_BC_ID_MAX): enter at entry, leave before every return,
 * thrown in the catch-all handler, which then rethrows.
 */
#define JPA_BC_HELPER	  "jprof/Trace"
#define JPA_BC_HELPER_DOT "jprof.Trace"
#define JPA_BC_ENTER	  "enter"
#define JPA_BC_LEAVE	  "leave"
#define JPA_BC_THROWN	  "thrown"
#define JPA_BC_ID_MAX	  32767	      /* an sipush operand */
#define JPA_BC_CLASS_MAX  (64u << 20) /* class files larger than this are left as they are */
#define JPA_BC_NAME_MAX	  1024	      /* longer class/method names and descriptors never match */
/*
 * --args: after enter, a call per leading argument of a supported type, (position, value):
 * argI (int, boolean, byte, char, short), argJ (long), argF, argD, argS (String, or null)
 */
#define JPA_BC_ARGS_MAX	 4
#define JPA_BC_ARG_KINDS 5
#define JPA_BC_ARG_NAMES                               \
	{                                              \
		"argI", "argJ", "argF", "argD", "argS" \
	}
#define JPA_BC_ARG_DESCS                                                     \
	{                                                                    \
		"(II)V", "(IJ)V", "(IF)V", "(ID)V", "(ILjava/lang/String;)V" \
	}

/*
 * Which methods to rewrite. match: the method's id (0..JPA_BC_ID_MAX) or -1 to leave it;
 * called for every method of the class (names in modified UTF-8, "pkg/Class", "name",
 * "(I)V"). refuse: a matched method left as it is, with a one-line reason.
 */
struct jpa_bc_ops {
	int (*match)(void *ctx, const char *cls, const char *name, const char *desc,
		     uint16_t access);
	void (*refuse)(void *ctx, int id, const char *cls, const char *name, const char *desc,
		       const char *reason);
	void *ctx;
	unsigned int args; /* pass the first args (<= JPA_BC_ARGS_MAX) arguments; 0 none */
};

/*
 * Rewrites the matched methods of the class file in[0..len). Returns the number of methods
 * rewritten (>= 1) with *ret_out (malloc'ed, the caller frees) and *ret_len set; 0 when
 * nothing was rewritten (no match, or all refused: *ret_out untouched); -EINVAL for bytes
 * that are no class file it can read, -E2BIG over a budget, -ENOMEM. In every failure the
 * class is to be left unchanged. Thread-safe (no global state).
 */
int jpa_bc_rewrite(const uint8_t *in, size_t len, const struct jpa_bc_ops *ops, uint8_t **ret_out,
		   size_t *ret_len);

/*
 * the helper class file (JPA_BC_HELPER: enter, leave, thrown, then the JPA_BC_ARG_KINDS arg
 * natives) into buf; its length, or -E2BIG when cap is short
 */
int jpa_bc_helper_class(uint8_t *buf, size_t cap);

#endif /* JPROF_BYTECODE_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* frame.h: the kinds every frame carries, from the join through to the writers. */
#ifndef JPROF_FRAME_H
#define JPROF_FRAME_H

enum jp_frame_kind {
	JP_FK_NATIVE = 0, /* user-space native code (libc, the app's own ELF) */
	JP_FK_KERNEL,	  /* kernel, folded suffix _[k] */
	JP_FK_JVM,	  /* JVM-internal native code (libjvm.so, stubs, interpreter) */
	JP_FK_JIT,	  /* Java, JIT-compiled (C1/C2), folded suffix _[j] */
	JP_FK_INLINED,	  /* Java, inlined into a JIT frame, folded suffix _[i] */
	JP_FK_INTERP,	  /* Java, interpreted, folded suffix _[0] */
	JP_FK_ROOT,	  /* synthetic: process / thread / container / event markers */
	JP_FK_MAX
};

/* folded-output suffix of a kind ("" when none) */
static inline const char *jp_frame_kind_suffix(enum jp_frame_kind k)
{
	switch (k) {
	case JP_FK_KERNEL:
		return "_[k]";
	case JP_FK_JIT:
		return "_[j]";
	case JP_FK_INLINED:
		return "_[i]";
	case JP_FK_INTERP:
		return "_[0]";
	default:
		return "";
	}
}

#endif /* JPROF_FRAME_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* demangle.h: C++ (Itanium ABI) names through libstdc++'s __cxa_demangle, loaded lazily. */
#ifndef JPROF_SYM_DEMANGLE_H
#define JPROF_SYM_DEMANGLE_H

#include <stdbool.h>

/*
 * Demangles an "_Z..." name. Returns a malloc'd string the caller frees, or NULL
 * when name is not mangled, is invalid, or no demangler is available. With
 * keep_params false the top-level parameter list and what follows it (cv
 * qualifiers, "[clone .cold]") are dropped: "ns::f(int) const" -> "ns::f".
 * Thread-safe.
 */
char *jp_demangle(const char *name, bool keep_params);

/* Cuts the parameter list off a demangled name in place (the keep_params=false rule). */
void jp_demangle_strip_params(char *s);

#endif /* JPROF_SYM_DEMANGLE_H */

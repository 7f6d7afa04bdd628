// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* demangle.c: C++ demangling without linking libstdc++: dlopen it on first use. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn cxa_demangle;
static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;

static void demangle_init(void)
{
	void *h;

	/* already in the process (a C++ runtime is linked in)? */
	cxa_demangle = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (cxa_demangle)
		return;
	/* kept open for the life of the process, on purpose */
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		cxa_demangle = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
}

void jp_demangle_strip_params(char *s)
{
	size_t n = strlen(s);
	int depth = 0;

	/* the parameter list is the last balanced (...) group; skip qualifiers after it */
	while (n && s[n - 1] != ')') {
		if (s[n - 1] == ']' || s[n - 1] == '(')
			return; /* "[clone .cold]" after params is handled below; odd shapes left alone */
		n--;
	}
	if (!n)
		return;
	while (n--) {
		if (s[n] == ')') {
			depth++;
		} else if (s[n] == '(') {
			if (--depth == 0)
				break;
		}
	}
	if (depth == 0 && n > 0 && n != (size_t)-1)
		s[n] = '\0';
}

static void strip_clone_suffix(char *s)
{
	char *c = strstr(s, " [clone ");

	if (c)
		*c = '\0';
}

char *jp_demangle(const char *name, bool keep_params)
{
	int status = -1;
	char *out;

	if (!name || name[0] != '_' || name[1] != 'Z')
		return NULL;
	(void)pthread_once(&demangle_once, demangle_init);
	if (!cxa_demangle)
		return NULL;
	out = cxa_demangle(name, NULL, NULL, &status);
	if (status || !out) {
		free(out);
		return NULL;
	}
	if (!keep_params) {
		strip_clone_suffix(out);
		jp_demangle_strip_params(out);
	}
	return out;
}

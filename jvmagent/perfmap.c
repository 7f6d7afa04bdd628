/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * perfmap.c: /tmp/perf-<pid>.map for JIT code and stubs (perf jit-interface.txt):
 * "START SIZE name", hex without 0x, one write() per line on an O_APPEND fd.
 * Java methods are named "pkg.Class::method" (dotted class, no signature), stubs by
 * the name HotSpot gives them ("Interpreter", "StubRoutines (1)", ...).
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"

static int map_fd = -1;

int jpa_perfmap_open(const char *dir, __u32 pid)
{
	char path[512];
	int err, fd;

	err = jpa_path(path, sizeof(path), dir, "perf", pid, "map");
	if (err)
		return err;
	fd = jpa_create(path, O_WRONLY | O_APPEND, 0644);
	if (fd < 0)
		return fd;
	map_fd = fd;
	return 0;
}

/* perf splits a line at its end only, but a newline inside a name would start a new one */
static void sanitize(char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
	}
}

static void put_line(const void *addr, __u32 size, const char *name)
{
	char line[1024];
	int n;

	if (map_fd < 0)
		return;
	n = snprintf(line, sizeof(line) - 1, "%lx %x %s", (unsigned long)(uintptr_t)addr, size,
		     name);
	if (n < 0) {
		jpa_ring_count(JPA_PERFMAP_DROPPED, 1);
		return;
	}
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2; /* truncated name */
	line[n] = '\0';
	sanitize(line);
	line[n++] = '\n';
	if (write(map_fd, line, (size_t)n) != n)
		jpa_ring_count(JPA_PERFMAP_DROPPED, 1);
}

void jpa_perfmap_method(jvmtiEnv *jvmti, jmethodID method, const void *addr, __u32 size)
{
	char *csig = NULL, *name = NULL, cls[512];
	jclass klass = NULL;
	size_t i = 0;

	if (map_fd < 0)
		return;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) != JVMTI_ERROR_NONE ||
	    (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL) != JVMTI_ERROR_NONE)
		csig = NULL;
	if ((*jvmti)->GetMethodName(jvmti, method, &name, NULL, NULL) != JVMTI_ERROR_NONE)
		name = NULL;
	/* "Lpkg/Class;" -> "pkg.Class" */
	if (csig) {
		const char *s = csig[0] == 'L' ? csig + 1 : csig;

		for (; s[i] && s[i] != ';' && i < sizeof(cls) - 1; i++)
			cls[i] = s[i] == '/' ? '.' : s[i];
	}
	cls[i] = '\0';
	{
		char full[1024];

		snprintf(full, sizeof(full), "%s::%s", i ? cls : "?", name ? name : "?");
		put_line(addr, size, full);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	if (klass) {
		JNIEnv *env = jpa_jni_env();

		/* callbacks may come in bulk (GenerateEvents): don't pile up local refs */
		if (env)
			(*env)->DeleteLocalRef(env, klass);
	}
}

void jpa_perfmap_stub(const char *name, const void *addr, __u32 size)
{
	put_line(addr, size, name ? name : "stub");
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libsigsafety.c: SignalSafety's natives: reset the agent's signal, withdraw it, or execv. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../jvmagent/ring.h"

/*
 * The signal whose handler lives in the jprof agent's library (found by dladdr, so this
 * knows nothing of the agent's ABI), set back to SIG_DFL. Returns the signal, or -1 when
 * no such handler is installed.
 */
JNIEXPORT jint JNICALL Java_SignalSafety_resetAgentSignal(JNIEnv *env, jclass cls)
{
	struct sigaction sa, dfl = { .sa_handler = SIG_DFL };
	Dl_info info;

	(void)env;
	(void)cls;
	/* the signals the agent answers on (its fault handlers for SIGSEGV/SIGBUS are not) */
	for (int i = 0, sig; (sig = i == 0 ? SIGURG : i == 1 ? SIGWINCH : SIGRTMIN + i - 2) <= SIGRTMAX;
	     i++) {
		if (sigaction(sig, NULL, &sa))
			continue;
		if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
			continue;
		if (!dladdr((void *)sa.sa_handler, &info) || !info.dli_fname ||
		    !strstr(info.dli_fname, "jprofagent"))
			continue;
		sigemptyset(&dfl.sa_mask);
		if (sigaction(sig, &dfl, NULL))
			return -1;
		return sig;
	}
	return -1;
}

/*
 * What the agent does when it stops answering (jpa_stacks_stop): the ring header's signal
 * back to 0, the handler left installed. Returns 0 or -errno.
 */
JNIEXPORT jint JNICALL Java_SignalSafety_withdrawSignal(JNIEnv *env, jclass cls)
{
	char line[4096], want[32], *path = NULL;
	__s32 zero = 0;
	int fd, err = 0;
	size_t n;
	FILE *f;

	(void)env;
	(void)cls;
	/* the ring's name has a random token: the mapping names it (jvmagent/ring.h) */
	snprintf(want, sizeof(want), "/jprof-%d-", (int)getpid());
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (!path && fgets(line, sizeof(line), f)) {
		n = strcspn(line, "\n");
		line[n] = '\0';
		if (n > 5 && !strcmp(line + n - 5, ".ring") && strstr(line, want))
			path = strchr(line, '/');
	}
	fclose(f);
	if (!path)
		return -ENOENT;
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, &zero, sizeof(zero), offsetof(struct jp_ring_hdr, signo)) != sizeof(zero))
		err = -EIO;
	close(fd);
	return err;
}

/*
 * execv(argv[0], argv) with every signal unblocked, so nothing but the disposition
 * decides what a real-time signal does to the new program. Returns -errno on failure.
 */
JNIEXPORT jint JNICALL Java_SignalSafety_execProgram(JNIEnv *env, jclass cls, jobjectArray args)
{
	jsize n = (*env)->GetArrayLength(env, args);
	char **argv = calloc((size_t)n + 1, sizeof(*argv));
	sigset_t none;

	(void)cls;
	if (!argv || n < 1)
		return -EINVAL;
	for (jsize i = 0; i < n; i++) {
		jstring s = (jstring)(*env)->GetObjectArrayElement(env, args, i);
		const char *c = (*env)->GetStringUTFChars(env, s, NULL);

		argv[i] = c ? strdup(c) : NULL;
		if (c)
			(*env)->ReleaseStringUTFChars(env, s, c);
		if (!argv[i])
			return -ENOMEM;
	}
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	execv(argv[0], argv);
	return -errno;
}

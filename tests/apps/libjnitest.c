// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libjnitest.c: JavaHot.nativeWrites: a JNI method that makes n write() syscalls. */
#include <fcntl.h>
#include <jni.h>
#include <unistd.h>

__attribute__((noinline)) static long jni_write_loop(int fd, jint n)
{
	char c = 'j';
	long ok = 0;

	for (jint i = 0; i < n; i++)
		ok += write(fd, &c, 1) == 1;
	return ok;
}

JNIEXPORT jlong JNICALL Java_JavaHot_nativeWrites(JNIEnv *env, jclass cls, jint n)
{
	static int fd = -1;

	(void)env;
	(void)cls;
	if (fd < 0)
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return fd < 0 ? -1 : jni_write_loop(fd, n);
}

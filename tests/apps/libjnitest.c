// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libjnitest.c: JavaHot.nativeWrites: a JNI method that makes n write() syscalls;
 * JavaHot.startNativeThenJava: a native thread that spins in C, then attaches to the JVM
 * and runs JavaHot.attachedWork.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <jni.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
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

static JavaVM *jnat_vm;
static jlong jnat_native_ns, jnat_java_ns;
static volatile uint64_t jnat_sink;

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* the native phase: a thread the JVM does not know, on CPU */
__attribute__((noinline)) static void jnat_spin(jlong ns)
{
	int64_t end = mono_ns() + ns;
	uint64_t x = 1;

	while (mono_ns() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	jnat_sink = x;
}

static void *jnat_main(void *arg)
{
	JavaVMAttachArgs aa = { .version = JNI_VERSION_1_8, .name = "jnat", .group = NULL };
	JNIEnv *env;
	jclass cls;
	jmethodID m;

	(void)arg;
	jnat_spin(jnat_native_ns);
	if ((*jnat_vm)->AttachCurrentThread(jnat_vm, (void **)&env, &aa) != JNI_OK)
		return NULL;
	cls = (*env)->FindClass(env, "JavaHot");
	m = cls ? (*env)->GetStaticMethodID(env, cls, "attachedWork", "(J)V") : NULL;
	if (m)
		(*env)->CallStaticVoidMethod(env, cls, m, jnat_java_ns);
	(*jnat_vm)->DetachCurrentThread(jnat_vm);
	return NULL;
}

JNIEXPORT jint JNICALL Java_JavaHot_startNativeThenJava(JNIEnv *env, jclass cls, jlong native_ns,
							 jlong java_ns)
{
	pthread_t t;

	(void)cls;
	if ((*env)->GetJavaVM(env, &jnat_vm) != JNI_OK)
		return -1;
	jnat_native_ns = native_ns;
	jnat_java_ns = java_ns;
	if (pthread_create(&t, NULL, jnat_main, NULL))
		return -1;
	pthread_setname_np(t, "jnat");
	/* not joined: main's join of no Java thread returns at once; the JVM waits for it */
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * agent.c: libjprofagent entry points (load at start, dynamic attach, unload), options and
 * the JVMTI event wiring. Fails soft: one "jprof agent: ..." line on stderr, the JVM runs on.
 *
 * Options: comma-separated signo=N (the signal to answer on: SIGURG, SIGWINCH or a
 * real-time one; default: SIGURG if free, see jpa_stacks_start), depth=N (frames per
 * trace, 1..4096, default 2048), ring=KB (data area, rounded up to a power of two,
 * 64..65536), dir=PATH (instead of /tmp; tests only), recompile (see jpa_recompile),
 * perfmap (also write /tmp/perf-<pid>.map of the JIT code, for perf and other tools; jprof
 * names JIT code from the dictionary), testfault=N (TESTS ONLY: every Nth stack walk faults
 * on purpose inside the protected region, to show the fault is caught and reported),
 * lock, alloc[=BYTES], live (JVMTI events: their capabilities; they are on only while a
 * reader wants them, see watch.c), trace=P1|P2 (an attach starts a method trace of the
 * methods the patterns name, see trace.c; also beside another jprof's agent copy) and
 * traceslow=US (its calls of at least US microseconds get their Java stack).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "agent_opts.h"
#include "bytecode.h"

#define JPA_EXPORT __attribute__((visibility("default")))


static JavaVM *jvm;
static jvmtiEnv *jvmti;
static int started; /* one agent per process: a second attach is a no-op */
static struct jpa_opts opts;

void jpa_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "jprof agent: ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	/* one write: the JVM's own output may interleave but never splits our line */
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

int jpa_path(char *buf, size_t size, const char *dir, const char *name, __u32 pid,
	     const char *ext)
{
	int n = snprintf(buf, size, "%s/%s-%u.%s", dir, name, pid, ext);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static char chan_token[JP_CHAN_TOKEN_LEN + 1];

int jpa_channel_path(char *buf, size_t size, const char *dir, __u32 pid, const char *ext)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[JP_CHAN_TOKEN_LEN / 2];
	ssize_t n;
	int len;

	/* start() runs once at a time (its `started` flag): no race on the token */
	if (!chan_token[0]) {
		do
			n = getrandom(r, sizeof(r), GRND_NONBLOCK);
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof(r))
			return n < 0 ? -errno : -EIO;
		for (size_t i = 0; i < sizeof(r); i++) {
			chan_token[2 * i] = hex[r[i] >> 4];
			chan_token[2 * i + 1] = hex[r[i] & 15];
		}
		chan_token[JP_CHAN_TOKEN_LEN] = '\0';
	}
	len = snprintf(buf, size, "%s/jprof-%u-%s.%s", dir, pid, chan_token, ext);
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

int jpa_create(const char *path, int flags, unsigned int mode)
{
	int fd;

	/* a file (or a symlink planted by someone else) from an older JVM of the same pid */
	if (unlink(path) && errno != ENOENT)
		return -errno;
	fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	(void)fchmod(fd, mode); /* exactly mode, whatever the JVM's umask */
	return fd;
}

int jpa_thread_start(void *(*fn)(void *))
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int err;

	sigfillset(&all);
	/* a fault is a fault: never blocked (the kernel would kill the process) */
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGTRAP);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&t, &attr, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return err;
}

JNIEnv *jpa_jni_env(void)
{
	JNIEnv *env = NULL;

	if (!jvm || (*jvm)->GetEnv(jvm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
		return NULL;
	return env;
}

static __u32 gettid32(void)
{
	return (__u32)syscall(SYS_gettid);
}

static char *thread_name(jthread thread, JNIEnv *env)
{
	jvmtiThreadInfo info;

	memset(&info, 0, sizeof(info));
	if ((*jvmti)->GetThreadInfo(jvmti, thread, &info) != JVMTI_ERROR_NONE)
		return NULL;
	if (env) {
		if (info.thread_group)
			(*env)->DeleteLocalRef(env, info.thread_group);
		if (info.context_class_loader)
			(*env)->DeleteLocalRef(env, info.context_class_loader);
	}
	return info.name; /* Deallocate() it */
}

/* comm is the Java name cut to 15 bytes, or (newer JDKs) its first 7 + ".." + last 6 */
static int comm_matches(const char *comm, const char *name)
{
	size_t n = strlen(name);
	char abbr[16];

	if (n <= 15)
		return !strcmp(comm, name);
	if (!strncmp(comm, name, 15) && strlen(comm) == 15)
		return 1;
	snprintf(abbr, sizeof(abbr), "%.7s..%s", name, name + n - 6);
	return !strcmp(comm, abbr);
}

/*
 * Names of threads that started before we listened to ThreadStart. JVMTI does not give
 * OS tids, but HotSpot names each Java thread's native thread after it: match
 * /proc/self/task/<tid>/comm against the Java names, keeping only unambiguous matches.
 */
static void name_running_threads(JNIEnv *env)
{
	jthread *threads = NULL;
	char **names;
	jint n = 0;
	DIR *d;
	struct dirent *de;

	if ((*jvmti)->GetAllThreads(jvmti, &n, &threads) != JVMTI_ERROR_NONE || n <= 0)
		return;
	names = calloc((size_t)n, sizeof(*names));
	for (jint i = 0; names && i < n; i++)
		names[i] = thread_name(threads[i], env);
	d = names ? opendir("/proc/self/task") : NULL;
	while (d && (de = readdir(d))) {
		char path[64], comm[32];
		int fd, len, match = -1, hits = 0;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/comm", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = (int)read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (len <= 0)
			continue;
		comm[len] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		for (jint i = 0; i < n; i++) {
			if (names[i] && comm_matches(comm, names[i])) {
				match = i;
				hits++;
			}
		}
		if (hits == 1)
			jpa_dict_thread((__u32)strtoul(de->d_name, NULL, 10), names[match]);
	}
	if (d)
		closedir(d);
	for (jint i = 0; names && i < n; i++)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)names[i]);
	free(names);
	for (jint i = 0; env && i < n; i++)
		(*env)->DeleteLocalRef(env, threads[i]);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
}

static void dump_loaded_classes(JNIEnv *env)
{
	jclass *classes = NULL;
	jint n = 0;

	if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++) {
		jpa_dict_class(jvmti, classes[i]);
		if (env)
			(*env)->DeleteLocalRef(env, classes[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

/* JVMTI callbacks ---------------------------------------------------------- */

/* AGCT answers -1 (ticks_no_class_load) unless someone listens to ClassLoad */
static void JNICALL on_class_load(jvmtiEnv *j, JNIEnv *env, jthread thread, jclass klass)
{
	(void)j;
	(void)env;
	(void)thread;
	(void)klass;
}

static void JNICALL on_class_prepare(jvmtiEnv *j, JNIEnv *env, jthread thread, jclass klass)
{
	(void)env;
	(void)thread;
	jpa_dict_class(j, klass);
}

static void JNICALL on_compiled_method_load(jvmtiEnv *j, jmethodID method, jint code_size,
					    const void *code_addr, jint map_length,
					    const jvmtiAddrLocationMap *map, const void *compile_info)
{
	(void)map_length;
	(void)map;
	jpa_dict_code_load(method, code_addr, (__u32)code_size, compile_info);
	jpa_perfmap_method(j, method, code_addr, (__u32)code_size);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *j, jmethodID method, const void *code_addr)
{
	(void)j;
	jpa_dict_code_unload(method, code_addr);
}

static void JNICALL on_dynamic_code(jvmtiEnv *j, const char *name, const void *address,
				    jint length)
{
	(void)j;
	jpa_dict_stub(name, address, (__u32)length);
	jpa_perfmap_stub(name, address, (__u32)length);
}

static void JNICALL on_thread_start(jvmtiEnv *j, JNIEnv *env, jthread thread)
{
	char *name;

	/* first: the handler can walk this thread from now on */
	jpa_threads_start(env, thread);
	name = thread_name(thread, env);
	if (name)
		jpa_dict_thread(gettid32(), name);
	(*j)->Deallocate(j, (unsigned char *)name);
}

static void JNICALL on_thread_end(jvmtiEnv *j, JNIEnv *env, jthread thread)
{
	(void)j;
	jpa_threads_end(env, thread);
}

/* the live phase: the rest of the setup, then the handler last (jmethodIDs exist by then) */
static int go_live(JNIEnv *env, jthread current)
{
	jthread self = NULL;
	int err;

	if (!current && (*jvmti)->GetCurrentThread(jvmti, &self) == JVMTI_ERROR_NONE)
		current = self;
	if (current) {
		char *name = thread_name(current, env);

		if (name)
			jpa_dict_thread(gettid32(), name);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	}
	dump_loaded_classes(env);
	name_running_threads(env);
	/* ThreadStart/End are on already: a thread is either in the scan or starts later */
	err = jpa_threads_init(env, current);
	if (err) {
		jpa_log("no stack sampling: JVM thread key not found (%s), going on without it",
			strerror(-err));
		goto out;
	}
	jpa_threads_scan(jvmti, env);
	if (opts.nofallback)
		jpa_stacks_no_fallback();
	err = jpa_stacks_test_faults(opts.testfault);
	if (!err)
		err = jpa_stacks_start(opts.signo);
	/* after the VMStructs lookup of jpa_stacks_start; off (logged) when it cannot be proved */
	if (!err && current)
		(void)jpa_blocker_init(env, current);
	/* after the stacks' VMStructs lookup: it gives the OS tids of other threads */
	jpa_events_scan_blocked(env);
	if (err)
		jpa_log("no stack sampling: %s (%s), continuing without it",
			err == -ENOENT ? "AsyncGetCallTrace not found" : "signal setup failed",
			strerror(-err));
out:
	if (self && env)
		(*env)->DeleteLocalRef(env, self);
	return err;
}

/*
 * The watcher (watch.c) switches lock/alloc/live on while a reader wants them and off
 * when it is gone. An agent loaded at the JVM's start has no reader yet: its events wait
 * for one. Without a watcher the events asked are simply on, as before it.
 */
static void start_watcher(void)
{
	int err;

	if (!jpa_events_active())
		return; /* nothing to switch: no thread either (a later attach adding events starts it) */
	err = jpa_watch_start(jvm, opts.alloc_interval);
	if (err) {
		jpa_log("no watcher thread (%s): lock/alloc events stay on for the JVM's life",
			strerror(-err));
		(void)jpa_events_enable(jpa_events_active(), opts.alloc_interval, opts.depth);
	}
}

static void JNICALL on_vm_init(jvmtiEnv *j, JNIEnv *env, jthread thread)
{
	(void)j;
	(void)go_live(env, thread);
	start_watcher();
}

/* the JVM is going away (also on System.exit, where Agent_OnUnload never comes) */
static void drop_channel(void)
{
	jpa_stacks_stop();
	if (jpa_ring_path()[0])
		unlink(jpa_ring_path());
	if (jpa_dict_path()[0])
		unlink(jpa_dict_path());
}

static void JNICALL on_vm_death(jvmtiEnv *j, JNIEnv *env)
{
	(void)j;
	(void)env;
	jpa_watch_stop();
	jpa_trace_vm_death();
	drop_channel();
}

static void fill_callbacks(jvmtiEventCallbacks *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->ClassLoad = on_class_load;
	cb->ClassPrepare = on_class_prepare;
	cb->CompiledMethodLoad = on_compiled_method_load;
	cb->CompiledMethodUnload = on_compiled_method_unload;
	cb->DynamicCodeGenerated = on_dynamic_code;
	cb->ThreadStart = on_thread_start;
	cb->ThreadEnd = on_thread_end;
	cb->VMInit = on_vm_init;
	cb->VMDeath = on_vm_death;
	cb->ClassFileLoadHook = jpa_trace_cflh; /* its event is on only while a trace runs */
	jpa_events_callbacks(cb);
}

/* the events this agent sends, in the ring header: jprof names a JVM that lacks some */
static void publish_events(void)
{
	unsigned int ev = jpa_events_active();

	jpa_ring_set_flags((ev & JPA_EV_LOCK ? JP_RING_F_EV_LOCK : 0) |
			   (ev & JPA_EV_ALLOC ? JP_RING_F_EV_ALLOC : 0) |
			   (ev & JPA_EV_LIVE ? JP_RING_F_EV_LIVE : 0));
}

static int set_events(int live)
{
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_CLASS_LOAD,
		JVMTI_EVENT_CLASS_PREPARE,
		JVMTI_EVENT_COMPILED_METHOD_LOAD,
		JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
		JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
		JVMTI_EVENT_THREAD_START,
		JVMTI_EVENT_THREAD_END,
		JVMTI_EVENT_VM_DEATH,
	};
	jvmtiEventCallbacks cb;
	jvmtiCapabilities caps;

	memset(&caps, 0, sizeof(caps));
	caps.can_get_line_numbers = 1;
	caps.can_get_source_file_name = 1;
	/* also what makes C1/C2 record non-safepoint debug info (DebugNonSafepoints) */
	caps.can_generate_compiled_method_load_events = 1;
	if (jpa_events_caps(jvmti, opts.events, &caps))
		jpa_log("no JVMTI capabilities for lock/alloc events, going on without them");
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
		return -ENOTSUP;
	fill_callbacks(&cb);
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL))
			return -EINVAL;
	}
	if (!live &&
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_INIT, NULL))
		return -EINVAL;
	if (opts.events != jpa_events_active())
		jpa_log("JVM lacks some event capabilities: asked 0x%x, got 0x%x", opts.events,
			jpa_events_active());
	/* at the JVM's start no reader is there yet: the watcher switches them on for one */
	if (jpa_events_enable(live ? opts.events : 0, opts.alloc_interval, opts.depth))
		jpa_log("enabling lock/alloc events failed, going on without some");
	else
		publish_events();
	if (live)
		jpa_watch_arrival(opts.events, opts.alloc_interval);
	return 0;
}

/*
 * A later attach of this same library (jprof copies it to a name made of its contents, so
 * the same build loads the same copy) asking for events this agent does not send yet:
 * they are added now, live. The capabilities they need are live-phase ones in HotSpot.
 * An agent loaded from another file (at the JVM's start, another build) is another copy:
 * it never gets here, and jprof says which events that JVM lacks.
 */
static int add_events(const char *options)
{
	struct jpa_opts o;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	unsigned int had = jpa_events_active();
	int err = jpa_parse_options(options, &o);

	if (err || !jvmti || !jpa_ring_path()[0] || !(o.events & ~had))
		return err;
	memset(&caps, 0, sizeof(caps));
	if (jpa_events_caps(jvmti, had | o.events, &caps) ||
	    (*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		jpa_log("no JVMTI capabilities for the events asked (0x%x), going on without them",
			o.events);
		return 0;
	}
	fill_callbacks(&cb);
	jpa_watch_arrival(o.events, o.alloc_interval);
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    jpa_events_enable(o.events, o.alloc_interval ? o.alloc_interval : opts.alloc_interval,
			      opts.depth)) {
		jpa_log("enabling lock/alloc events failed, going on without some");
		return 0;
	}
	publish_events();
	start_watcher(); /* the first events of this agent: its watcher starts now */
	if (jpa_events_active() & ~had & JPA_EV_LOCK)
		jpa_events_scan_blocked(jpa_jni_env());
	jpa_log("events added on a later attach: 0x%x", jpa_events_active());
	return 0;
}

/*
 * Code compiled before a late attach has no non-safepoint debug info. HotSpot's first
 * class redefinition after start-up cannot tell which compiled code depends on the
 * class (dependencies were not recorded), so it deoptimizes all of it; the JIT then
 * recompiles the hot code, this time with the info. One retransformation of one
 * class with unchanged bytes (no ClassFileLoadHook is enabled) triggers exactly that.
 * It costs a short slowdown while hot code recompiles, hence opt-in.
 */
static void jpa_recompile(void)
{
	jvmtiCapabilities caps;
	jclass *classes = NULL;
	jint n = 0;
	jboolean ok;

	memset(&caps, 0, sizeof(caps));
	caps.can_retransform_classes = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		jpa_log("recompile: cannot retransform classes in this JVM, skipping");
		return;
	}
	if ((*jvmti)->GetLoadedClasses(jvmti, &n, &classes) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n; i++) {
		ok = JNI_FALSE;
		if ((*jvmti)->IsModifiableClass(jvmti, classes[i], &ok) != JVMTI_ERROR_NONE || !ok)
			continue;
		if ((*jvmti)->RetransformClasses(jvmti, 1, &classes[i]) == JVMTI_ERROR_NONE)
			break;
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)classes);
}

/*
 * Another copy of this library (a different path: each jprof copies its own agent into
 * the JVM's /tmp) already runs here if this process maps a live jprof-<pid>-<token>.ring. Our
 * `started` flag is per copy; two agents would each install a handler and fight over
 * the channel files.
 */
static int other_agent_runs(__u32 pid)
{
	const size_t tail = JP_CHAN_TOKEN_LEN + sizeof(".ring") - 1;
	char line[4096], want[32];
	size_t wn, n;
	int found = 0;
	FILE *f;

	snprintf(want, sizeof(want), "/jprof-%u-", pid);
	wn = strlen(want);
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n = strcspn(line, "\n");
		line[n] = '\0';
		/* a "(deleted)" one belongs to an agent that gave the channel up */
		if (n < wn + tail || strcmp(line + n - 5, ".ring") ||
		    strncmp(line + n - tail - wn, want, wn))
			continue;
		found = strspn(line + n - tail, "0123456789abcdef") == JP_CHAN_TOKEN_LEN;
	}
	fclose(f);
	return found;
}

static void JNICALL on_vm_death_trace(jvmtiEnv *j, JNIEnv *env)
{
	(void)j;
	(void)env;
	jpa_trace_vm_death();
}

/*
 * Another copy of the agent (another jprof's) runs the stacks and the channel here: this
 * copy runs a method trace alone, with an environment of its own that listens to the class
 * file hook and VMDeath only. Later attaches of this copy start traces (later_attach).
 */
static int trace_only(JavaVM *vm)
{
	jvmtiEventCallbacks cb;

	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		return -ENOTSUP;
	jvm = vm;
	memset(&cb, 0, sizeof(cb));
	cb.ClassFileLoadHook = jpa_trace_cflh;
	cb.VMDeath = on_vm_death_trace;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL))
		return -EINVAL;
	jpa_log("another jprof agent runs in this JVM: this one runs the method trace alone");
	return jpa_trace_start(jvmti, jvm, jpa_jni_env(), opts.dir, opts.trace,
			       opts.trace_slow_us * 1000ull, opts.trace_args);
}

/* a later attach: the events it asks added, and a method trace started when it asks one */
static int later_attach(const char *options)
{
	static struct jpa_opts o; /* attaches come one at a time (the JVM's attach listener) */
	int err = add_events(options);

	if (err || jpa_parse_options(options, &o) || !o.trace[0] || !jvmti)
		return err;
	return jpa_trace_start(jvmti, jvm, jpa_jni_env(), opts.dir, o.trace,
			       o.trace_slow_us * 1000ull, o.trace_args);
}

static int start(JavaVM *vm, const char *options, int attached)
{
	__u32 pid = (__u32)getpid();
	int err;

	if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL))
		/* attached twice: the first one keeps running, with the events asked now too */
		return attached ? later_attach(options) : 0;
	if (other_agent_runs(pid)) {
		/* a method trace needs none of the channel: it runs beside the other copy */
		if (attached && !jpa_parse_options(options, &opts) && opts.trace[0])
			return trace_only(vm);
		/* like a second attach of the same copy: a no-op, the first one keeps running */
		jpa_log("another jprof agent already runs in this JVM, not starting");
		return 0;
	}
	err = jpa_parse_options(options, &opts);
	if (!err) {
		jint rc = (*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2);

		/*
		 * JNI_EDETACHED: not the live phase yet (an attach served while the JVM still
		 * starts); jprof tries again later (-EAGAIN), so nothing is said here
		 */
		if (rc == JNI_EDETACHED)
			err = -EAGAIN;
		else if (rc != JNI_OK)
			jpa_log("no JVMTI 1.2 environment, not starting");
		if (rc != JNI_OK && !err)
			err = -ENOTSUP;
	}
	if (err) {
		/* nothing done yet: a later attach with good options may still start */
		__atomic_store_n(&started, 0, __ATOMIC_RELEASE);
		return err;
	}
	jvm = vm;
	err = jpa_ring_open(opts.dir, pid, opts.ring_bytes, opts.depth,
			    (attached ? JP_RING_F_ATTACHED : 0) | JP_RING_F_EV_KNOWN);
	if (!err)
		err = jpa_dict_open(opts.dir, pid);
	if (err) {
		jpa_log("cannot create %s/jprof-%u-%s.{ring,dict}: %s, not starting", opts.dir,
			pid, chan_token[0] ? chan_token : "<token>", strerror(-err));
		/* nothing is hooked yet: a later attach (once there is room) may try again */
		if (!jpa_ring_path()[0])
			__atomic_store_n(&started, 0, __ATOMIC_RELEASE);
		return JP_AGENT_RC_FILES + err;
	}
	/*
	 * Only when asked: jprof names JIT code from the dictionary, and a perf map costs
	 * JVMTI calls per compiled method and a file left in /tmp after the JVM (perf reads
	 * it after the fact)
	 */
	err = opts.perfmap ? jpa_perfmap_open(opts.dir, pid) : 0;
	if (err)
		jpa_log("cannot create %s/perf-%u.map: %s, continuing without it", opts.dir, pid,
			strerror(-err));
	err = set_events(attached);
	if (err) {
		jpa_log("JVMTI setup failed (%s), not starting", strerror(-err));
		return err;
	}
	if (!attached) {
		if (opts.trace[0])
			jpa_log("trace= needs a running JVM (jprof trace attaches), ignored");
		return 0; /* the rest at VMInit */
	}
	/*
	 * Code compiled before now has no non-safepoint debug info: its samples land on the
	 * nearest safepoint's method until it is recompiled. Replay what exists.
	 */
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	err = go_live(jpa_jni_env(), NULL);
	start_watcher();
	if (!err && opts.recompile)
		jpa_recompile();
	/* a trace does not need the stacks: asked for, its error is the attach's answer */
	if (opts.trace[0])
		err = jpa_trace_start(jvmti, jvm, jpa_jni_env(), opts.dir, opts.trace,
				      opts.trace_slow_us * 1000ull, opts.trace_args);
	return err;
}

JPA_EXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	/* never JNI_ERR here: that would stop the JVM from starting */
	(void)start(vm, options, 0);
	return JNI_OK;
}

JPA_EXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	int err = start(vm, options, 1);

	/* the reason, for jprof (ring.h JP_AGENT_RC_FILES); never 0 when it failed */
	return err ? (jint)err : JNI_OK;
}

JPA_EXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	jpa_watch_stop();
	/* tell jprof, and drop the channel files (its open fds still read) */
	drop_channel();
}

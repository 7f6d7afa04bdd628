// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* join.c: kernel sample + Java trace -> one stack of typed frames -> profile. */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "join.h"
#include "clock.h"
#include "log.h"
#include "model/model.h"
#include "sym/syms.h"
#include "jvm/agent_ring.h"
#include "kernel/syscalls.h"

#define JOIN_WAIT_NS	 (1500ull * 1000 * 1000) /* how long a sample waits for its trace */
#define JOIN_MAX_FRAMES	 (JP_MAX_KSTACK + JP_MAX_USTACK + 4096 + 8)
#define JOIN_NAME_POOL	 (256 * 1024)
#define TIDMAP_RESCAN_NS (100ull * 1000 * 1000)

/* why a JVM sample has no Java stack */
enum miss_reason {
	MISS_AGCT = 0,	 /* + AGCT code, see agct[] */
	MISS_SIG_BUSY,	 /* bpf_send_signal_thread -EBUSY */
	MISS_SIG_ERR,	 /* other signal errors */
	MISS_NO_TRACE,	 /* signal sent, no trace came within the bound (ring full, handler) */
	MISS_NOT_SENT,	 /* agent not ready when sampled */
	MISS_AGENT_BUSY, /* handler re-entered */
	MISS_NO_AGENT,	 /* JVM without an agent (attach failed or disabled) */
	MISS_FAULT,	 /* the agent's walk faulted; caught in the JVM */
	MISS_OTHER,	 /* a code the agent should not send */
	MISS_MAX
};

static const char *const miss_names[MISS_MAX] = {
	[MISS_AGCT] = "AGCT", [MISS_SIG_BUSY] = "signal busy (-EBUSY)",
	[MISS_SIG_ERR] = "signal failed", [MISS_NO_TRACE] = "no trace from the agent",
	[MISS_NOT_SENT] = "agent not ready", [MISS_AGENT_BUSY] = "agent busy",
	[MISS_NO_AGENT] = "no agent", [MISS_FAULT] = "stack walk faulted (caught)",
	[MISS_OTHER] = "unknown agent code",
};

struct tid_pair {
	__u32 nstid, tid;
};

struct jvm_ent {
	__u32 pid, nspid;
	char comm[JP_COMM_LEN + 1];
	struct jvm_agent *a; /* NULL: a JVM without agent */
	char note[160];
	struct tid_pair *tids;
	size_t ntids;
	__u64 tids_scanned_ns;
	/* report */
	__u64 samples, java_samples, complete, internal;
	__u64 miss[MISS_MAX];
	__u64 agct[12];
};

struct pending {
	struct jvm_ent *jvm;
	struct jp_sample s;
	__u64 *frames; /* kstack then ustack */
};

struct ptrace {
	struct jvm_ent *jvm;
	struct java_trace t;
	struct java_frame *frames;
	__u64 seen_ns;
};

struct join {
	struct syms *syms;
	struct model *model;
	struct join_opts o;
	struct jvm_ent **jvms;
	size_t njvms;
	struct pending *pend;
	size_t npend, cap_pend;
	struct ptrace *ptr;
	size_t nptr, cap_ptr;
	/* per-sample scratch: the stack as model locations, leaf first */
	jp_id locs[JOIN_MAX_FRAMES];
	char pool[JOIN_NAME_POOL];
	size_t pool_used;
	/* distinct pids seen: small open-addressing set */
	__u32 *pidset;
	size_t pidset_cap, pidset_n;
	struct join_stats st;
	__u64 now_ns;
	struct jvm_ent *cur_jvm; /* during a poll callback */
};

struct join *join__new(struct syms *syms, struct model *model, const struct join_opts *o)
{
	struct join *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->syms = syms;
	j->model = model;
	j->o = *o;
	return j;
}

static void jvm_ent__free(struct jvm_ent *e)
{
	if (!e)
		return;
	jvm_agent__free(e->a);
	free(e->tids);
	free(e);
}

void join__free(struct join *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->njvms; i++)
		jvm_ent__free(j->jvms[i]);
	free(j->jvms);
	for (size_t i = 0; i < j->npend; i++)
		free(j->pend[i].frames);
	free(j->pend);
	for (size_t i = 0; i < j->nptr; i++)
		free(j->ptr[i].frames);
	free(j->ptr);
	free(j->pidset);
	free(j);
}

static struct jvm_ent *find_jvm(const struct join *j, __u32 pid)
{
	for (size_t i = 0; i < j->njvms; i++)
		if (j->jvms[i]->pid == pid)
			return j->jvms[i];
	return NULL;
}

void join__set_jvm_note(struct join *j, __u32 pid, const char *note)
{
	struct jvm_ent *e = find_jvm(j, pid);

	if (e)
		snprintf(e->note, sizeof(e->note), "%s", note);
}

bool join__knows_jvm(const struct join *j, __u32 pid)
{
	return find_jvm(j, pid) != NULL;
}

bool join__has_jvm(const struct join *j, __u32 pid)
{
	struct jvm_ent *e = find_jvm(j, pid);

	return e && e->a;
}

int join__add_jvm(struct join *j, __u32 pid, __u32 nspid, const char *comm, struct jvm_agent *a)
{
	struct jvm_ent *e = find_jvm(j, pid), **n;

	if (e) { /* a JVM known without agent that got one */
		jvm_agent__free(e->a);
		e->a = a;
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	n = realloc(j->jvms, (j->njvms + 1) * sizeof(*n));
	if (!n) {
		free(e);
		return -ENOMEM;
	}
	j->jvms = n;
	e->pid = pid;
	e->nspid = nspid;
	e->a = a;
	snprintf(e->comm, sizeof(e->comm), "%s", comm ? comm : "java");
	j->jvms[j->njvms++] = e;
	return 0;
}

/* ---- pid namespaces: the agent reports thread ids of its own namespace ---- */

static void tidmap_rescan(struct jvm_ent *e, __u64 now)
{
	char path[64], line[256];
	struct dirent *de;
	size_t n = 0, cap = 0;
	struct tid_pair *v = NULL;
	DIR *d;

	e->tids_scanned_ns = now;
	snprintf(path, sizeof(path), "/proc/%u/task", e->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned int tid, nstid = 0;
		FILE *f;

		if (sscanf(de->d_name, "%u", &tid) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/status", e->pid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "NSpid:", 6))
				continue;
			for (char *p = line + 6, *end; *p; p = end) {
				unsigned long x = strtoul(p, &end, 10);
				if (end == p)
					break;
				nstid = (__u32)x;
			}
			break;
		}
		fclose(f);
		if (!nstid)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct tid_pair *nv = realloc(v, nc * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		v[n].nstid = nstid;
		v[n].tid = tid;
		n++;
	}
	closedir(d);
	free(e->tids);
	e->tids = v;
	e->ntids = n;
}

static __u32 host_tid(struct jvm_ent *e, __u32 nstid, __u64 now)
{
	if (e->pid == e->nspid)
		return nstid;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < e->ntids; i++)
			if (e->tids[i].nstid == nstid)
				return e->tids[i].tid;
		if (pass || now - e->tids_scanned_ns < TIDMAP_RESCAN_NS)
			break;
		tidmap_rescan(e, now);
	}
	return 0;
}

static __u32 ns_tid(struct jvm_ent *e, __u32 tid)
{
	if (e->pid == e->nspid)
		return tid;
	for (size_t i = 0; i < e->ntids; i++)
		if (e->tids[i].tid == tid)
			return e->tids[i].nstid;
	return 0;
}

/* ---- building stacks ---- */

static const char *pool_fmt(struct join *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *pool_fmt(struct join *j, const char *fmt, ...)
{
	size_t room = sizeof(j->pool) - j->pool_used;
	char *p = j->pool + j->pool_used;
	va_list ap;
	int n;

	if (room < 2)
		return "[...]";
	va_start(ap, fmt);
	n = vsnprintf(p, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return "[?]";
	j->pool_used += ((size_t)n < room ? (size_t)n : room - 1) + 1;
	return p;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* true for code in the JVM's code cache: JIT methods, the interpreter, stubs */
static bool in_code_cache(const struct jp_sym *sym)
{
	if (sym->kind == JP_FK_JIT)
		return true;
	if (!sym->dso)
		return true; /* anonymous executable memory */
	return !strcmp(sym->dso, "[jit]") || !strncmp(sym->dso, "[anon", 5) ||
	       !strcmp(sym->dso, "//anon") || !strcmp(sym->dso, "[perf-map]");
}

/* one frame of the stack being built, interned as a model location (name and file copied) */
static void push_loc(struct join *j, size_t *n, const char *name, const char *file, bool java,
		     enum jp_frame_kind kind, __u64 addr, __s32 line)
{
	struct jp_location loc = { .addr = addr, .line = line, .kind = kind };
	jp_id id;

	if (*n >= JOIN_MAX_FRAMES)
		return;
	loc.func = model__func(j->model, name, file, java);
	id = loc.func ? model__location(j->model, &loc) : 0;
	if (!id) {
		j->st.model_full++;
		return;
	}
	j->locs[(*n)++] = id;
}

/* a marker or a name without address: syscall leaves, [off-cpu], [no Java stack: ...] */
static void push(struct join *j, size_t *n, const char *name, enum jp_frame_kind kind)
{
	push_loc(j, n, name, "", false, kind, 0, 0);
}

/*
 * A JIT method named by a perf map, in the dictionary's form ("pkg/Class.method"), so one
 * method has one name whichever source named it. The agent writes "pkg.Class::method", jcmd
 * Compiler.perfmap "ret pkg.Class.method(args)". NULL when name is no such method.
 */
static const char *java_from_perfmap(struct join *j, const char *name)
{
	const char *sep = strstr(name, "::"), *start = name, *end, *paren, *sp, *meth;
	size_t clen;
	char *out;

	paren = strchr(name, '(');
	end = paren ? paren : name + strlen(name);
	/* a return type before the name (jcmd): the last space before the parameters */
	for (sp = end; sp > name && sp[-1] != ' '; sp--)
		;
	if (sp > name)
		start = sp;
	if (sep && sep >= start && sep < end) {
		clen = (size_t)(sep - start);
		meth = sep + 2;
	} else {
		const char *dot = NULL;

		for (const char *p = start; p < end; p++)
			if (*p == '.')
				dot = p;
		if (!dot)
			return NULL;
		clen = (size_t)(dot - start);
		meth = dot + 1;
	}
	if (!clen || meth >= end)
		return NULL;
	out = (char *)pool_fmt(j, "%.*s.%.*s", (int)clen, start, (int)(end - meth), meth);
	if (out < j->pool || out >= j->pool + sizeof(j->pool))
		return NULL; /* the pool is full: pool_fmt gave a constant marker */
	for (size_t i = 0; i < clen && out[i]; i++)
		if (out[i] == '.')
			out[i] = '/';
	return out;
}

static void push_user(struct join *j, size_t *n, __u32 pid, __u64 addr, const struct jp_sym *sym)
{
	const char *dso = sym->dso ? sym->dso : "", *java;

	(void)pid;
	if (sym->name && sym->kind == JP_FK_JIT && (java = java_from_perfmap(j, sym->name)))
		push_loc(j, n, java, "", true, JP_FK_JIT, addr, 0);
	else if (sym->name)
		push_loc(j, n, sym->name, dso, false, sym->kind, addr, 0);
	else if (sym->dso)
		push_loc(j, n,
			 pool_fmt(j, "%s+0x%llx", base_name(sym->dso), (unsigned long long)sym->offset),
			 dso, false, sym->kind, addr, 0);
	else
		push_loc(j, n, "[unknown]", "", false, JP_FK_NATIVE, addr, 0);
}

static void resolve_user(struct join *j, __u32 pid, __u64 addr, struct jp_sym *sym)
{
	memset(sym, 0, sizeof(*sym));
	sym->kind = JP_FK_NATIVE;
	if (syms__user(j->syms, pid, addr, sym) < 0) {
		sym->name = NULL;
		sym->dso = NULL;
		sym->kind = JP_FK_NATIVE;
		sym->offset = addr;
	}
}

/* the leaf-most frames that say what a weight is: the slow syscall, or blocked time */
static void push_event_leaf(struct join *j, size_t *n, const struct jp_sample *s)
{
	if (s->kind == JP_EV_SYSCALL && s->syscall_nr >= 0)
		push(j, n, pool_fmt(j, "%s", syscall_name(s->syscall_nr)), JP_FK_ROOT);
	else if (s->kind == JP_EV_OFFCPU && j->o.mark_offcpu)
		push(j, n, "[off-cpu]", JP_FK_ROOT);
}

/*
 * Stacks taken inside a tracepoint program start with the program itself and the
 * tracing glue (bpf_trace_run4, __bpf_trace_sched_switch): not the traced code's.
 */
static __u32 skip_bpf_frames(struct join *j, const struct jp_sample *s, const __u64 *kstack)
{
	struct jp_sym sym;

	for (__u32 i = 0; i < s->kstack_len && i < 4; i++) {
		if (syms__kernel(j->syms, kstack[i], &sym) == 0 && sym.name &&
		    (!strncmp(sym.name, "bpf_trace_run", 13) || !strncmp(sym.name, "__bpf_trace_", 12)))
			return i + 1;
	}
	return 0;
}

static void push_kernel(struct join *j, size_t *n, const struct jp_sample *s, const __u64 *kstack)
{
	struct jp_sym sym;

	push_event_leaf(j, n, s);
	for (__u32 i = s->kind == JP_EV_CPU ? 0 : skip_bpf_frames(j, s, kstack); i < s->kstack_len;
	     i++) {
		if (syms__kernel(j->syms, kstack[i], &sym) == 0 && sym.name)
			push_loc(j, n, sym.name, sym.dso ? sym.dso : "[kernel]", false, JP_FK_KERNEL,
				 kstack[i], 0);
		else
			push_loc(j, n, "[unknown]", "[kernel]", false, JP_FK_KERNEL, kstack[i], 0);
	}
}

/* a Java frame: function in internal form ("pkg/Class.method"), source line when known */
static void push_java(struct join *j, size_t *n, struct jvm_ent *e, const struct java_frame *f)
{
	const char *name = jvm_agent__method_name(e->a, f->method_id, 0);
	int line = f->bci >= 0 && name ? jvm_agent__line(e->a, f->method_id, f->bci) : -1;

	if (!name)
		push_loc(j, n, "[unknown Java method]", "", false, f->kind, 0, 0);
	else
		push_loc(j, n, name, "", true, f->kind, 0, line > 0 ? line : 0);
}

/*
 * The sample's labels, its stack (marker at the root end), and its values: one CPU sample
 * stands for the sampling period; blocked and syscall time weigh their nanoseconds.
 */
static int commit(struct join *j, const struct jp_sample *s, struct jvm_ent *e, size_t n,
		  const char *marker)
{
	char comm[JP_COMM_LEN + 1], pcomm[JP_COMM_LEN + 1];
	struct jp_labels l = { .pid = s->pid, .tid = s->tid, .cgroup = s->cgroup_id,
			       .container = "" };
	jp_id stack, labels;
	int err;

	memcpy(comm, s->comm, JP_COMM_LEN);
	comm[JP_COMM_LEN] = '\0';
	memcpy(pcomm, s->pcomm, JP_COMM_LEN);
	pcomm[JP_COMM_LEN] = '\0';
	if (!pcomm[0])
		memcpy(pcomm, comm, sizeof(pcomm));
	l.comm = pcomm;
	l.thread = e && e->a ? jvm_agent__thread_name(e->a, ns_tid(e, s->tid)) : NULL;
	if (!l.thread)
		l.thread = comm;
	if (marker)
		push(j, &n, marker, JP_FK_ROOT);
	j->pool_used = 0;
	stack = model__stack(j->model, j->locs, n);
	labels = model__labels(j->model, &l);
	if (!stack || !labels)
		return -ENOMEM;
	switch (s->kind) {
	case JP_EV_CPU:
		err = model__add(j->model, stack, labels, JP_VAL_CPU_SAMPLES, 1);
		if (!err)
			err = model__add(j->model, stack, labels, JP_VAL_CPU_NS, j->o.cpu_period_ns);
		break;
	case JP_EV_OFFCPU:
		err = model__add(j->model, stack, labels, JP_VAL_OFFCPU_NS, s->weight);
		break;
	default:
		err = model__add(j->model, stack, labels, JP_VAL_SYSCALL_CALLS, 1);
		if (!err)
			err = model__add(j->model, stack, labels, JP_VAL_SYSCALL_NS, s->weight);
		break;
	}
	if (!err)
		j->st.samples++;
	return err;
}

/* A sample with only native information: perf-map names over the frame-pointer walk. */
static int add_native(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		      const __u64 *ustack, struct jvm_ent *e, const char *marker)
{
	struct jp_sym sym;
	size_t n = 0;

	push_kernel(j, &n, s, kstack);
	for (__u32 i = 0; i < s->ustack_len; i++) {
		resolve_user(j, s->pid, ustack[i], &sym);
		push_user(j, &n, s->pid, ustack[i], &sym);
	}
	return commit(j, s, e, n, marker);
}

/*
 * Kernel frames, native frames down to the code cache, then the Java frames. The
 * native frames below the Java entry (JavaCalls, thread start) are left out: the
 * frame-pointer walk reaches them only through interpreted frames or with
 * -XX:+PreserveFramePointer, so keeping them would put one Java stack under two
 * different roots depending on how far each walk got.
 */
static int add_java(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		    const __u64 *ustack, struct jvm_ent *e, const struct java_trace *t)
{
	struct jp_sym sym;
	size_t n = 0;

	push_kernel(j, &n, s, kstack);
	for (__u32 i = 0; i < s->ustack_len; i++) {
		resolve_user(j, s->pid, ustack[i], &sym);
		if (in_code_cache(&sym))
			break;
		push_user(j, &n, s->pid, ustack[i], &sym);
	}
	for (int f = 0; f < t->num_frames; f++)
		push_java(j, &n, e, &t->frames[f]);
	return commit(j, s, e, n, NULL);
}

static const char *miss_marker(struct join *j, enum miss_reason r, int code)
{
	if (r == MISS_AGCT)
		return pool_fmt(j, "[no Java stack: %s]", java_trace_err_str(code));
	return pool_fmt(j, "[no Java stack: %s]", miss_names[r]);
}

static int add_missing(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		       const __u64 *ustack, struct jvm_ent *e, enum miss_reason r, int code)
{
	e->samples++;
	e->java_samples++;
	e->miss[r]++;
	if (r == MISS_AGCT && code <= 0 && -code < 12)
		e->agct[-code]++;
	return add_native(j, s, kstack, ustack, e, miss_marker(j, r, code));
}

/*
 * HotSpot JavaThreads that never run Java code (compilers, service threads) answer
 * AGCT with -3 ("unknown, not Java") rather than 0: their top frame lookup fails before
 * the no-Java-frame check. By their native thread names they are JVM-internal.
 */
static bool jvm_service_thread(const char *comm)
{
	static const char *const prefixes[] = {
		"C1 CompilerThre", "C2 CompilerThre", "Sweeper thread", "Service Thread",
		"Monitor Deflati", "Notification Th", "Signal Dispatch", "JVMCI",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(comm, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* a sample meets its trace */
static int finish(struct join *j, const struct jp_sample *s, const __u64 *frames, struct jvm_ent *e,
		  const struct java_trace *t)
{
	const __u64 *kstack = frames, *ustack = frames + s->kstack_len;
	char comm[JP_COMM_LEN + 1];

	memcpy(comm, s->comm, JP_COMM_LEN);
	comm[JP_COMM_LEN] = '\0';
	j->st.jvm_samples++;
	if (t->num_frames > 0) {
		e->samples++;
		e->java_samples++;
		e->complete++;
		j->st.java_complete++;
		return add_java(j, s, kstack, ustack, e, t);
	}
	if (t->num_frames == JAVA_TRACE_ERR_NOT_JAVA_THREAD || t->num_frames == 0 ||
	    (t->num_frames == -3 && jvm_service_thread(comm))) {
		/* JVM-internal thread, or a Java thread with no Java frame yet: natives are the truth */
		e->samples++;
		e->internal++;
		return add_native(j, s, kstack, ustack, e, NULL);
	}
	if (t->num_frames == JAVA_TRACE_ERR_BUSY)
		return add_missing(j, s, kstack, ustack, e, MISS_AGENT_BUSY, 0);
	if (t->num_frames == JAVA_TRACE_ERR_FAULT)
		return add_missing(j, s, kstack, ustack, e, MISS_FAULT, 0);
	if (t->num_frames < JAVA_TRACE_ERR_MIN)
		return add_missing(j, s, kstack, ustack, e, MISS_OTHER, 0);
	return add_missing(j, s, kstack, ustack, e, MISS_AGCT, t->num_frames);
}

/* ---- pending samples and traces ---- */

static void pidset_add(struct join *j, __u32 pid)
{
	size_t i;

	if (j->pidset_n * 2 >= j->pidset_cap) {
		size_t nc = j->pidset_cap ? j->pidset_cap * 2 : 1024;
		__u32 *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return;
		for (i = 0; i < j->pidset_cap; i++) {
			__u32 p = j->pidset[i];
			size_t h;
			if (!p)
				continue;
			for (h = (p * 2654435761u) & (nc - 1); ns[h]; h = (h + 1) & (nc - 1))
				;
			ns[h] = p;
		}
		free(j->pidset);
		j->pidset = ns;
		j->pidset_cap = nc;
	}
	for (i = (pid * 2654435761u) & (j->pidset_cap - 1); j->pidset[i];
	     i = (i + 1) & (j->pidset_cap - 1))
		if (j->pidset[i] == pid)
			return;
	j->pidset[i] = pid;
	j->pidset_n++;
	j->st.processes = j->pidset_n;
}

int join__sample(struct join *j, const struct jp_sample *s, const __u64 *kstack,
		 const __u64 *ustack)
{
	struct jvm_ent *e = find_jvm(j, s->pid);
	struct pending *p;
	size_t nf;

	if (s->pid)
		pidset_add(j, s->pid);
	if (!e)
		return add_native(j, s, kstack, ustack, NULL, NULL);
	if (!e->a) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e, MISS_NO_AGENT, 0);
	}
	if (!(s->flags & JP_SF_SIGNALED)) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e, MISS_NOT_SENT, 0);
	}
	if (s->sig_err) {
		j->st.jvm_samples++;
		return add_missing(j, s, kstack, ustack, e,
				   s->sig_err == -EBUSY ? MISS_SIG_BUSY : MISS_SIG_ERR, 0);
	}
	if (j->npend == j->cap_pend) {
		size_t nc = j->cap_pend ? j->cap_pend * 2 : 256;
		struct pending *np = realloc(j->pend, nc * sizeof(*np));
		if (!np)
			return -ENOMEM;
		j->pend = np;
		j->cap_pend = nc;
	}
	nf = (size_t)s->kstack_len + s->ustack_len;
	p = &j->pend[j->npend];
	p->frames = malloc(nf ? nf * sizeof(__u64) : 1);
	if (!p->frames)
		return -ENOMEM;
	memcpy(p->frames, kstack, s->kstack_len * sizeof(__u64));
	memcpy(p->frames + s->kstack_len, ustack, s->ustack_len * sizeof(__u64));
	p->s = *s;
	p->jvm = e;
	j->npend++;
	return 0;
}

static void pend_remove(struct join *j, size_t i)
{
	free(j->pend[i].frames);
	memmove(&j->pend[i], &j->pend[i + 1], (j->npend - i - 1) * sizeof(j->pend[0]));
	j->npend--;
}

/* the newest waiting sample of (pid, tid) not later than t; -1 if none */
static long pend_find(const struct join *j, __u32 pid, __u32 tid, __u64 t)
{
	for (size_t i = j->npend; i > 0; i--) {
		const struct pending *p = &j->pend[i - 1];
		if (p->s.pid == pid && p->s.tid == tid && p->s.time_ns <= t)
			return (long)(i - 1);
	}
	return -1;
}

static int try_match(struct join *j, struct jvm_ent *e, const struct java_trace *t)
{
	__u32 tid = host_tid(e, t->tid, j->now_ns);
	long i;
	int err;

	if (!tid)
		return 0;
	i = pend_find(j, e->pid, tid, t->time_ns);
	if (i < 0)
		return 0;
	err = finish(j, &j->pend[i].s, j->pend[i].frames, e, t);
	pend_remove(j, (size_t)i);
	return err ? err : 1;
}

static int keep_trace(struct join *j, struct jvm_ent *e, const struct java_trace *t)
{
	struct ptrace *p;
	size_t sz;

	if (j->nptr == j->cap_ptr) {
		size_t nc = j->cap_ptr ? j->cap_ptr * 2 : 64;
		struct ptrace *np = realloc(j->ptr, nc * sizeof(*np));
		if (!np)
			return -ENOMEM;
		j->ptr = np;
		j->cap_ptr = nc;
	}
	p = &j->ptr[j->nptr];
	sz = t->num_frames > 0 ? (size_t)t->num_frames * sizeof(*t->frames) : 1;
	p->frames = malloc(sz);
	if (!p->frames)
		return -ENOMEM;
	if (t->num_frames > 0)
		memcpy(p->frames, t->frames, sz);
	p->jvm = e;
	p->t = *t;
	p->t.frames = p->frames;
	p->seen_ns = j->now_ns;
	j->nptr++;
	return 0;
}

static int on_trace(void *ctx, const struct java_trace *t)
{
	struct join *j = ctx;
	int r = try_match(j, j->cur_jvm, t);

	if (r < 0)
		return r;
	if (r == 0)
		return keep_trace(j, j->cur_jvm, t);
	return 0;
}

static int retry_traces(struct join *j, bool final)
{
	size_t i = 0;
	int r;

	while (i < j->nptr) {
		struct ptrace *p = &j->ptr[i];
		r = try_match(j, p->jvm, &p->t);
		if (r < 0)
			return r;
		if (r == 0 && !final && j->now_ns - p->seen_ns < JOIN_WAIT_NS) {
			i++;
			continue;
		}
		if (r == 0)
			j->st.unmatched_traces++;
		free(p->frames);
		memmove(p, p + 1, (j->nptr - i - 1) * sizeof(*p));
		j->nptr--;
	}
	return 0;
}

static int expire(struct join *j, bool all)
{
	size_t i = 0;
	int err;

	while (i < j->npend) {
		struct pending *p = &j->pend[i];
		if (!all && p->s.time_ns + JOIN_WAIT_NS > j->now_ns) {
			i++;
			continue;
		}
		j->st.jvm_samples++;
		err = add_missing(j, &p->s, p->frames, p->frames + p->s.kstack_len, p->jvm,
				  MISS_NO_TRACE, 0);
		pend_remove(j, i);
		if (err)
			return err;
	}
	return 0;
}

static int poll_agents(struct join *j)
{
	int err;

	for (size_t i = 0; i < j->njvms; i++) {
		if (!j->jvms[i]->a)
			continue;
		j->cur_jvm = j->jvms[i];
		err = jvm_agent__poll(j->jvms[i]->a, on_trace, j);
		if (err < 0 && err != -EAGAIN)
			pr_debug("JVM %u: reading the agent ring: %s", j->jvms[i]->pid, strerror(-err));
	}
	j->cur_jvm = NULL;
	return 0;
}

int join__poll(struct join *j, __u64 now_ns)
{
	int err;

	j->now_ns = now_ns ? now_ns : mono_ns();
	poll_agents(j);
	err = retry_traces(j, false);
	if (err)
		return err;
	return expire(j, false);
}

int join__flush(struct join *j)
{
	int err;

	j->now_ns = mono_ns();
	poll_agents(j);
	err = retry_traces(j, true);
	if (err)
		return err;
	return expire(j, true);
}

void join__stats(const struct join *j, struct join_stats *ret)
{
	*ret = j->st;
}

void join__report(const struct join *j, FILE *f)
{
	for (size_t i = 0; i < j->njvms; i++) {
		const struct jvm_ent *e = j->jvms[i];
		char why[1024];
		size_t w = 0;

		why[0] = '\0';
		for (int r = 0; r < MISS_MAX; r++) {
			if (r == MISS_AGCT) {
				for (int c = 0; c < 12; c++)
					if (e->agct[c])
						w += snprintf(why + w, w < sizeof(why) ? sizeof(why) - w : 0,
							      "%s%llu %s", w ? ", " : "",
							      (unsigned long long)e->agct[c],
							      java_trace_err_str(-c));
				continue;
			}
			if (e->miss[r])
				w += snprintf(why + w, w < sizeof(why) ? sizeof(why) - w : 0, "%s%llu %s",
					      w ? ", " : "", (unsigned long long)e->miss[r], miss_names[r]);
		}
		fprintf(f,
			"jprof: JVM %u (%s): %llu samples, %llu in Java threads of which %llu with "
			"complete Java stacks (%.1f%%), %llu in JVM-internal threads%s%s\n",
			e->pid, e->comm, (unsigned long long)e->samples,
			(unsigned long long)e->java_samples, (unsigned long long)e->complete,
			e->java_samples ? 100.0 * e->complete / e->java_samples : 0.0,
			(unsigned long long)e->internal, why[0] ? "; missing: " : "", why);
		if (e->note[0])
			fprintf(f, "jprof: JVM %u: %s\n", e->pid, e->note);
	}
}

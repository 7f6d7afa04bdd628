// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * frames.c: the frames of a stack as model locations, leaf first: kernel, native (named by
 * sym/, or as JIT code by the agent's dictionary or a perf map), Java (the agent's or BPF's
 * frames, inlined ones expanded), event leaves and markers. Resolved frames are cached.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "join/join_int.h"
#include "clock.h"
#include "log.h"
#include "opts.h"
#include "model/spread.h"
#include "kernel/syscalls.h"
#include "util/cgroup.h"
#include "util/hashkey.h"

const char *jn_pool_fmt(struct join *j, const char *fmt, ...)
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
static jp_id push_loc(struct join *j, size_t *n, const char *name, const char *file, bool java,
		      enum jp_frame_kind kind, __u64 addr, __s32 line)
{
	struct jp_location loc = {.addr = addr, .line = line, .kind = kind};
	jp_id id;

	if (*n >= JOIN_MAX_FRAMES)
		return 0;
	loc.func = model__func(j->model, name, file, java);
	id = loc.func ? model__location(j->model, &loc) : 0;
	if (!id) {
		j->st.model_full++;
		j->memo_off = true;
		return 0;
	}
	j->locs[(*n)++] = id;
	return id;
}

static struct loc_cache_ent *loc_cache_slot(struct join *j, __u64 a, __u64 b, __u32 c)
{
	__u64 h = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ c * 0x165667b19e3779f9ull;

	return &j->lc[(h ^ h >> 29) & (LOC_CACHE_SLOTS - 1)];
}

__u32 jn_lc_gen(struct join *j)
{
	__u64 g = syms__generation(j->syms);

	if (g != j->lc_syms_gen) {
		j->lc_syms_gen = g;
		j->lc_gen++; /* every entry of the old generation is a miss now */
	}
	return j->lc_gen;
}

/* pushes the cached location of key (a, b, c): true, or false when not cached */
static bool loc_cache_get(struct join *j, size_t *n, __u64 a, __u64 b, __u32 c)
{
	const struct loc_cache_ent *x;

	if (!j->lc)
		return false;
	jn_lc_gen(j);
	x = loc_cache_slot(j, a, b, c);
	if (x->gen != j->lc_gen || x->a != a || x->b != b || x->c != c || !x->id)
		return false;
	if (*n < JOIN_MAX_FRAMES)
		j->locs[(*n)++] = x->id;
	return true;
}

static void loc_cache_put(struct join *j, __u64 a, __u64 b, __u32 c, jp_id id)
{
	struct loc_cache_ent *x;

	if (!j->lc || !id)
		return;
	x = loc_cache_slot(j, a, b, c);
	x->a = a;
	x->b = b;
	x->c = c;
	x->gen = j->lc_gen;
	x->id = id;
}

/* a marker or a name without address: syscall leaves, [off-cpu], [no Java stack: ...] */
void jn_push(struct join *j, size_t *n, const char *name, enum jp_frame_kind kind)
{
	push_loc(j, n, name, "", false, kind, 0, 0);
}

void jn_push_java_name(struct join *j, size_t *n, const char *name, enum jp_frame_kind kind)
{
	push_loc(j, n, name, "", true, kind, 0, 0);
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
	out = (char *)jn_pool_fmt(j, "%.*s.%.*s", (int)clen, start, (int)(end - meth), meth);
	if (out < j->pool || out >= j->pool + sizeof(j->pool))
		return NULL; /* the pool is full: pool_fmt gave a constant marker */
	for (size_t i = 0; i < clen && out[i]; i++)
		if (out[i] == '.')
			out[i] = '/';
	return out;
}

static jp_id push_user(struct join *j, size_t *n, const struct jp_sym *sym)
{
	const char *dso = sym->dso ? sym->dso : "", *java;
	/*
	 * a frame in a file is the file's address, not this process's: the processes that run
	 * one binary (a JVM started again and again, a pool of servers) share its locations
	 * and their stacks in the model, where ASLR would make each process's its own. Code in
	 * no file (JIT code, stubs, anonymous memory, an address nothing maps: file_addr 0)
	 * has no address another process shares: keyed by it, each short-lived JVM's
	 * interpreter and stubs, and each unknown frame, would be locations and stacks of
	 * their own. jprof names such a frame itself: its name and kind are its location.
	 */
	__u64 addr = sym->file_addr;

	if (sym->name && sym->kind == JP_FK_JIT && (java = java_from_perfmap(j, sym->name)))
		return push_loc(j, n, java, "", true, JP_FK_JIT, addr, 0);
	if (sym->name)
		return push_loc(j, n, sym->name, dso, false, sym->kind, addr, 0);
	if (sym->dso)
		return push_loc(j, n,
				jn_pool_fmt(j, "%s+0x%llx", base_name(sym->dso),
					    (unsigned long long)sym->offset),
				dso, false, sym->kind, addr, 0);
	return push_loc(j, n, "[unknown]", "", false, JP_FK_NATIVE, addr, 0);
}

/*
 * A CPU sample's first frame with an address is the pc it interrupted, any instruction of
 * its function; the frames past it are return addresses, a few call sites a function. Keyed
 * by the pc, one stack of functions was as many stacks (and rows, and time entries) as its
 * leaf had sampled instructions: a long recording's model grew with them (issue 27). Such a
 * leaf is keyed by its function's start, as flame graphs, folded text and pprof's default
 * granularity show it (perf annotate is for instructions); a frame with no symbol keeps its
 * address, which names it. True once for the frame that is such a leaf.
 */
static bool take_leaf_pc(struct join *j)
{
	bool leaf = j->leaf_pc;

	j->leaf_pc = false;
	return leaf;
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

/*
 * The user frame at addr of pid, from the cache or resolved. With stop_at_code, a frame in
 * the code cache (where the Java frames take over) is not pushed: false.
 */
bool jn_push_user_frame(struct join *j, size_t *n, __u32 pid, __u64 addr, bool stop_at_code)
{
	bool leaf = take_leaf_pc(j);
	struct jp_sym sym;

	if (loc_cache_get(j, n, LC_USER | pid, addr, leaf))
		return true;
	/* where Java takes over, the JIT frame's name is not needed: no perf-map lookup */
	if (stop_at_code && syms__user_anon(j->syms, pid, addr))
		return false;
	resolve_user(j, pid, addr, &sym);
	if (in_code_cache(&sym)) {
		if (stop_at_code)
			return false;
		(void)push_user(j, n, &sym);
		return true;
	}
	if (leaf && sym.name && sym.file_addr >= sym.offset)
		sym.file_addr -= sym.offset;
	loc_cache_put(j, LC_USER | pid, addr, leaf, push_user(j, n, &sym));
	return true;
}

/* the leaf-most frames that say what a weight is: the slow syscall, or blocked time */
static void push_event_leaf(struct join *j, size_t *n, const struct jp_sample *s)
{
	if (s->kind == JP_EV_SYSCALL && s->syscall_nr >= 0)
		jn_push(j, n, jn_pool_fmt(j, "%s", syscall_name(s->syscall_nr)), JP_FK_ROOT);
	else if (s->kind == JP_EV_CPU && (s->flags & JP_SF_CPU_TAIL))
		jn_push(j, n, "[cpu after the last sample]", JP_FK_ROOT);
	else if (s->kind == JP_EV_OFFCPU && (s->flags & JP_SF_RUNNABLE))
		jn_push(j, n, "[runnable]", JP_FK_ROOT);
	else if (s->kind == JP_EV_OFFCPU && j->o.mark_offcpu)
		jn_push(j, n, "[off-cpu]", JP_FK_ROOT);
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
		    (!strncmp(sym.name, "bpf_trace_run", 13) ||
		     !strncmp(sym.name, "__bpf_trace_", 12)))
			return i + 1;
	}
	return 0;
}

void jn_push_kernel(struct join *j, size_t *n, const struct jp_sample *s, const __u64 *kstack)
{
	struct jp_sym sym;

	j->leaf_pc = s->kind == JP_EV_CPU;
	push_event_leaf(j, n, s);
	for (__u32 i = s->kind == JP_EV_CPU ? 0 : skip_bpf_frames(j, s, kstack); i < s->kstack_len;
	     i++) {
		bool leaf = take_leaf_pc(j);
		jp_id id;

		if (loc_cache_get(j, n, LC_KERNEL, kstack[i], leaf))
			continue;
		if (syms__kernel(j->syms, kstack[i], &sym) == 0 && sym.name)
			id = push_loc(j, n, sym.name, sym.dso ? sym.dso : "[kernel]", false,
				      JP_FK_KERNEL,
				      leaf && kstack[i] >= sym.offset ? kstack[i] - sym.offset
								      : kstack[i],
				      0);
		else
			id = push_loc(j, n, "[unknown]", "[kernel]", false, JP_FK_KERNEL, kstack[i],
				      0);
		loc_cache_put(j, LC_KERNEL, kstack[i], leaf, id);
	}
}

/* a Java frame: function in internal form ("pkg/Class.method"), source line when known */
void jn_push_java(struct join *j, size_t *n, struct jvm_ent *e, const struct java_frame *f)
{
	__u64 key = LC_JAVA | e->serial;
	__u32 c = (__u32)f->bci << 3 | ((__u32)f->kind & 7);
	const char *name;
	int line;
	jp_id id;

	if (loc_cache_get(j, n, key, f->method_id, c))
		return;
	if (!j->late && j->deadline_ns && ++j->late_count % JOIN_LATE_EVERY == 0 &&
	    mono_ns() > j->deadline_ns + JN_NS(j, JOIN_LATE_NS))
		j->late = true;
	if (j->late) {
		if (!j->late_marked)
			jn_push(j, n, JOIN_LATE_MARKER, JP_FK_ROOT);
		j->late_marked = true;
		j->memo_off = true;
		return;
	}
	name = jvm_agent__method_name(e->a, f->method_id, 0);
	line = f->bci >= 0 && name ? jvm_agent__line(e->a, f->method_id, f->bci) : -1;
	if (!name) {
		/* not cached: the dictionary may name it later */
		j->memo_off = true;
		push_loc(j, n, "[unknown Java method]", "", false, f->kind, 0, 0);
		return;
	}
	id = push_loc(j, n, name, "", true, f->kind, 0, line > 0 ? line : 0);
	/*
	 * a named method's line table came in the same dictionary entry: a method without one
	 * (a lambda's hidden class, a LambdaForm: at the root of many a thread) stays so
	 */
	loc_cache_put(j, key, f->method_id, c, id);
}

/* a stack is built: its JVM counts it when its Java frames were cut for time */
void jn_late_done(struct join *j, struct jvm_ent *e)
{
	if (j->late_marked && e)
		e->time_drops++;
	j->late_marked = false;
}

/*
 * A frame in a JVM's code cache, named by its agent's dictionary (it knows the code a perf
 * map would, and is read anyway): false when it is not such a frame. An address in
 * anonymous memory that no code holds (a frame-pointer walk gone astray in native code)
 * is "[unknown]", as it was when no perf map named it: not a Java frame.
 */
bool jn_push_agent_code(struct join *j, size_t *n, struct jvm_ent *e, __u32 pid, __u64 addr)
{
	const char *name;
	bool java;

	if (!e || !e->a || !syms__user_anon(j->syms, pid, addr))
		return false;
	(void)take_leaf_pc(j); /* its location has no address */
	name = jvm_agent__code_name(e->a, addr, &java);
	/* code-cache addresses are this JVM's own: address 0, as in push_user */
	if (!name)
		push_loc(j, n, "[unknown]", "", false, JP_FK_NATIVE, 0, 0);
	else
		push_loc(j, n, name, "", java, java ? JP_FK_JIT : JP_FK_JVM, 0, 0);
	return true;
}

/* the agent's library: its handler's frames */
static bool is_agent_dso(const char *dso)
{
	const char *b = dso ? base_name(dso) : "";

	return !strncmp(b, "libjprofagent", 13) || !strncmp(b, "jprof-agent-", 12);
}

/*
 * The part of a sample's stack below its Java frames: the kernel stack, then the user
 * stack up to the first frame in the code cache (where the Java frames take over).
 */
void jn_push_native_part(struct join *j, size_t *n, const struct jp_sample *s, const __u64 *kstack,
			 const __u64 *ustack)
{
	jn_push_kernel(j, n, s, kstack);
	for (__u32 i = 0; i < s->ustack_len; i++)
		if (!jn_push_user_frame(j, n, s->pid, ustack[i], true))
			break;
}

/* the agent's frames (its signal handler) are on the sample's user stack, below Java */
bool jn_agent_on_stack(struct join *j, const struct jp_sample *s, const __u64 *ustack)
{
	struct jp_sym sym;

	for (__u32 i = 0; i < s->ustack_len; i++) {
		resolve_user(j, s->pid, ustack[i], &sym);
		if (in_code_cache(&sym))
			return false;
		if (is_agent_dso(sym.dso))
			return true;
	}
	return false;
}

const char *jn_miss_marker(struct join *j, enum miss_reason r, int code)
{
	char *m;

	if (r == MISS_AGCT && (code > 0 || code <= -MISS_AGCT_CODES))
		return jn_pool_fmt(j, "[no Java stack: %s]", java_trace_err_str(code));
	m = r == MISS_AGCT ? j->agct_marks[-code] : j->miss_marks[r];
	if (!m[0])
		snprintf(m, sizeof(j->miss_marks[0]), "[no Java stack: %s]",
			 r == MISS_AGCT ? java_trace_err_str(code) : join_miss_names[r]);
	return m;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* syms.h: names for kernel and user addresses. One front (syms) over ksyms, ELF, perf maps. */
#ifndef JPROF_SYMS_H
#define JPROF_SYMS_H

#include <linux/types.h>
#include <stdbool.h>

#include "../frame.h"

/* one resolved address; strings are owned by the syms object and live until syms__free() */
struct jp_sym {
	const char *name; /* symbol (demangled), or NULL when unknown */
	const char *dso;  /* path of the mapping ("[kernel]", module name, "[jit]"), or NULL */
	__u64 offset;	  /* address - symbol start */
	/*
	 * in a file's mapping: the address in the file's own terms, the ELF virtual address
	 * (the file offset when that is unknown), the same in every process that maps the
	 * file; 0 elsewhere
	 */
	__u64 file_addr;
	enum jp_frame_kind
		kind; /* JP_FK_KERNEL, JP_FK_NATIVE, JP_FK_JVM (libjvm.so, JVM stubs) or JP_FK_JIT */
};

struct syms;

/*
 * Creates the symbolizer. kallsyms_path NULL means /proc/kallsyms (unreadable: no
 * kernel names, not an error). NULL + errno on failure. A syms object is not
 * thread-safe: use it from one thread at a time. Module parsers usable on their
 * own: ksyms.h, procmaps.h, perfmap.h, elf_syms.h, demangle.h.
 */
struct syms *syms__new(const char *kallsyms_path);
/*
 * Frees every symbol table (ELF files, perf maps, kallsyms) and forgets every pid; the
 * counters stay for the report. Lookups after it find nothing. For the end of a
 * recording, once every frame is resolved, so the writers' memory comes on top of less.
 */
void syms__release(struct syms *s);
void syms__free(struct syms *s); /* NULL-safe */

/* Kernel address. Returns 0 and fills *ret, -ENOENT when no symbol covers it. */
int syms__kernel(struct syms *s, __u64 addr, struct jp_sym *ret);

/*
 * Snapshots /proc/<pid>/maps now and opens the ELF files it names (through
 * /proc/<pid>/root), so a process that exits later still resolves. Cheap when
 * already done for this pid; call it when a pid is first seen.
 */
int syms__add_pid(struct syms *s, __u32 pid);

/*
 * On: lookups (syms__user, syms__user_anon) read no file: a pid not loaded yet, a miss
 * that would re-read a pid's maps or perf map, are noted (and the lookup answers without
 * them); syms__load_wanted makes those loads, off the sample path. For the record loop,
 * whose ring callback must not do file I/O. Off (the default): lookups load as they go.
 */
void syms__defer_loads(struct syms *s, bool on);
/* pid's maps and files are to be read by the next syms__load_wanted (unless loaded already) */
void syms__want_pid(struct syms *s, __u32 pid);
/* makes the loads noted since the last call; how many pids it looked at */
size_t syms__load_wanted(struct syms *s);

/*
 * pid's JIT code is named by someone else (its JVM's agent): its perf map is never read
 * again, and the one read is freed by syms__free_dropped. Anonymous code then resolves
 * to no name.
 */
void syms__perfmap_off(struct syms *s, __u32 pid);

/* Forgets a pid (its maps are re-read on next use), e.g. after exec. */
void syms__drop_pid(struct syms *s, __u32 pid);
/*
 * Frees the perf maps of dropped pids, which syms__drop_pid keeps because names it
 * returned may still be in use, and the ELF tables of files no live pid has mapped for
 * 30 s (looked at every 5 s): call it where no returned name is held any more.
 */
void syms__free_dropped(struct syms *s);

/*
 * User address of pid. Fills *ret; ret->name is NULL when nothing names it (then
 * ret->dso may still be set). Addresses in anonymous executable memory are looked
 * up in the pid's perf map (/tmp/perf-<nspid>.map in its mount namespace), which
 * is re-read, rate-limited, when it grows. Returns 0, or -errno (-ESRCH: unknown pid).
 */
int syms__user(struct syms *s, __u32 pid, __u64 addr, struct jp_sym *ret);

/*
 * The address of pid is in no file's mapping: anonymous executable memory (a JIT's code),
 * or not mapped, or the pid unknown. What syms__user would name from a perf map or not at
 * all, without the perf map: for a caller that only needs to know where code ends.
 */
bool syms__user_anon(struct syms *s, __u32 pid, __u64 addr);

/*
 * Bumped whenever what an address of some pid resolves to may change (a pid's maps re-read
 * or dropped): a caller's cache of resolved user addresses is good while it stays the same.
 * Perf maps (JIT code) are not covered: their names change at the same address.
 */
__u64 syms__generation(const struct syms *s);

/* counters for the end-of-run report and benchmarks */
struct syms_stats {
	__u64 pids, dsos, dso_cache_hits, perfmap_reloads, unresolved;
	__u64 dsos_unloaded, dsos_reloaded; /* tables freed: no live process mapped the file */
	__u64 unsafe_files; /* refused: symlink, mount crossed, not regular, swapped inode, link */
	__u64 elf_over_budget;	   /* ELF files or tables left out by a size budget */
	__u64 perfmap_not_owned;   /* perf maps not owned by their process's user: ignored */
	__u64 perfmap_dropped;	   /* perf map entries left out by the per-map budget */
	__u64 perfmap_over_budget; /* perf map reads skipped: global budget spent */
	__u64 paths_over_budget;   /* mapping paths not kept: path budget spent */
	__u64 elf_bytes, perfmap_bytes; /* held now */
	__u64 debug_files;		/* separate debug files found (build id, .gnu_debuglink) */
	__u64 deferred;			/* lookups that left a load for syms__load_wanted */
	__u64 loads_not_wanted;		/* loads not noted: too many pids waiting at once */
	__u64 maps_reads;		/* /proc/PID/maps read (a new pid, or a miss) */
	__u64 files_kept; /* mappings read again, their file known from the last read: no open */
};
void syms__stats(const struct syms *s, struct syms_stats *ret);

/*
 * Minimum time between re-reads of one pid's maps or perf map on a miss
 * (default 100 ms; 0 re-reads on every miss, for tests).
 */
void syms__set_reload_interval_ms(struct syms *s, __u32 ms);

/* how long a file no live pid maps keeps its ELF tables (default 30 s; tests use less) */
void syms__set_dso_idle_ms(struct syms *s, __u32 ms);

#endif /* JPROF_SYMS_H */

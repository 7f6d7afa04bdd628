/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * syms_int.h: the symbolizer's state (struct syms, per-pid snapshots, cached files) and
 * what its two files share: sym/syms.c (pids, lookups, lifetime) and sym/syms_files.c
 * (files of other processes opened safely, ELF tables cached by file, interned paths).
 */
#ifndef JPROF_SYMS_INT_H
#define JPROF_SYMS_INT_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "elf_syms.h"
#include "../clock.h"
#include "ksyms.h"
#include "perfmap.h"
#include "procmaps.h"
#include "util/hashkey.h"
#include "util/hmap.h"
#include "util/intern.h"
#include "util/strpool.h"
#include "syms.h"
#include "util/safe_open.h"

#define RELOAD_INTERVAL_NS_DEFAULT (100ull * 1000 * 1000)
#define MAPS_WAIT_MAX_NS	   (1600ull * 1000 * 1000)
/*
 * Global budgets over all processes (each file and each perf map has its own, smaller
 * one): past them a file gets no symbols and a perf map is not read further, counted.
 */
#define SYMS_MAX_ELF_BYTES     (1ull << 30)
#define SYMS_MAX_PERFMAP_BYTES (512ull << 20)
/*
 * Versions (size, mtime) of one file (device, inode) whose symbols are kept: a user who
 * rewrites a library in place between the starts of its processes makes every process
 * load a new version, and the old ones stay in use by the processes that mapped them.
 */
#define SYMS_MAX_VERSIONS 4
/* distinct mapping paths kept (a process may map 65k files with 4 KiB paths) */
#define SYMS_MAX_PATH_BYTES (64u << 20)

/* one file on disk, shared by every process that maps it */
struct dso {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct elf_syms *es;  /* NULL when not a readable ELF file */
	struct elf_syms *dbg; /* its separate debug file's symbols (names only), or NULL */
	/*
	 * mappings of live pids that use it; at 0 since idle_ns for DSO_IDLE_NS, its tables
	 * are freed (unloaded) and read again if a process maps the file later
	 */
	unsigned int refs;
	bool unloaded;
	__u64 idle_ns;
};

/* a file no process maps keeps its tables this long (a program run again and again) */
#define DSO_IDLE_NS	   (30ull * 1000 * 1000 * 1000)
#define DSO_SWEEP_EVERY_NS (5ull * 1000 * 1000 * 1000)

/* one executable mapping of a process */
struct umap {
	__u64 start, end, offset;
	__u64 inode; /* of the mapped file, as the maps line says (with dev) */
	__u32 dev_major, dev_minor;
	const char *path; /* interned; NULL for anonymous memory */
	struct dso *dso;  /* NULL for anonymous memory or unreadable files */
	enum jp_map_type type;
	bool is_jvm; /* libjvm.so */
};

struct pid_state {
	__u32 pid, nspid;
	uid_t uid;	   /* effective uid: the only owner its perf map may have */
	struct umap *maps; /* sorted by start */
	size_t n;
	bool has_anon_exec; /* JIT code possible: look for a perf map */
	__u64 maps_read_ns;
	/*
	 * the wait before a miss reads its maps again: doubles (up to MAPS_WAIT_MAX_NS) while
	 * reads find no mapping changed (a frame-pointer walk gone astray misses at each
	 * sample), back to the reload interval when one did (a dlopen)
	 */
	__u64 maps_wait_ns;
	struct perfmap *pm; /* NULL until a perf map was found */
	__u64 pm_read_ns;
	bool no_perfmap; /* its JIT code is named elsewhere (the JVM's agent): never read one */
};

struct syms {
	struct ksyms *ksyms;
	struct hmap pids;	   /* pid -> struct pid_state * */
	struct hmap dsos;	   /* struct dso *, by dev/ino/size/mtime */
	struct intern paths;	   /* interned mapping paths */
	struct perfmap **dead_pms; /* perf maps of dropped pids: their names must outlive them */
	size_t ndead, cap_dead;
	struct elf_syms *vdso; /* our own vdso image, the same one the kernel gives everyone */
	bool vdso_tried;
	__u64 reload_interval_ns;
	/*
	 * syms__defer_loads: lookups read no file; what they would have read waits here for
	 * syms__load_wanted (pid, what), at most WANTS_MAX
	 */
	bool defer;
	struct want {
		__u32 pid;
		unsigned int what; /* WANT_* */
	} wants[256];
	size_t nwants;
	__u64 generation;	   /* see syms__generation */
	__u64 elf_bytes, pm_bytes; /* held, against the global budgets */
	__u64 dso_sweep_ns;	   /* the last look for files no process maps */
	__u64 dso_idle_ns;	   /* DSO_IDLE_NS, or what syms__set_dso_idle_ms set */
	struct syms_stats stats;
};

/* syms_files.c */
const char *sy_intern_path(struct syms *s, const char *path);
void sy_count_refusal(struct syms *s, int err);
struct dso *sy_get_dso(struct syms *s, __u32 pid, const struct jp_map *m);
/* frees the tables of files no live process has mapped for DSO_IDLE_NS (every 5 s) */
void sy_unload_idle_dsos(struct syms *s, __u64 now);
struct elf_syms *sy_get_vdso(struct syms *s);
bool sy_path_is_libjvm(const char *path);

#endif /* JPROF_SYMS_INT_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sym_elf.c: ELF symbol tables, MiniDebugInfo, demangling, and live processes. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "harness.h"
#include "sym/demangle.h"
#include "sym/elf_syms.h"
#include "sym/syms.h"
#include "sym_fixture.h"

#define ELFGEN_NO_MAIN
#include "../apps/elfgen.c" /* the e2e tests' hostile ELF writer */

static struct elf_syms *load(const char *name)
{
	struct elf_syms *e = NULL;
	int fd = open(fx_path(name), O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (elf_syms__load_fd(fd, &e))
		e = NULL;
	close(fd);
	return e;
}

/* resolve sym's own address (+delta) in an ELF by virtual address */
static void expect_vaddr(struct elf_syms *e, const char *elf, const char *sym, __u64 delta)
{
	unsigned long long a = fx_nm(elf, sym);
	const char *name;
	__u64 off = ~0ull;

	EXPECT_TRUE(a != 0);
	name = elf_syms__find(e, a + delta, &off);
	EXPECT_STREQ(name, sym);
	EXPECT_EQ(off, delta);
}

TEST(elf_pie_nopie_shared)
{
	static const char *const names[] = {"fx_pie", "fx_nopie", "libfx.so"};

	for (size_t i = 0; i < 3; i++) {
		struct elf_syms *e = load(names[i]);

		ASSERT_TRUE(e);
		EXPECT_TRUE(elf_syms__count(e) > 3);
		EXPECT_EQ(strlen(elf_syms__build_id(e)), 40);
		expect_vaddr(e, names[i], "jp_fx_alpha", 0);
		expect_vaddr(e, names[i], "jp_fx_beta", 3);
		expect_vaddr(e, names[i], "jp_fx_local", 1);
		elf_syms__free(e);
	}
}

TEST(elf_file_offsets)
{
	struct elf_syms *e = load("fx_nopie");
	__u64 v;

	ASSERT_TRUE(e);
	/* non-PIE x86-64: text at 0x401000, file offset 0x1000 */
	EXPECT_EQ(elf_syms__file_to_vaddr(e, 0x1000, &v), 0);
	EXPECT_EQ(v, 0x401000);
	EXPECT_EQ(elf_syms__file_to_vaddr(e, 1ull << 40, &v), -ENOENT);
	elf_syms__free(e);
}

TEST(elf_minidebuginfo)
{
	struct elf_syms *e = load("fx_mini");

	ASSERT_TRUE(e);
	/* jp_fx_local is static: only the .gnu_debugdata symtab names it */
	expect_vaddr(e, "fx_mini", "jp_fx_local", 2);
	expect_vaddr(e, "fx_mini", "jp_fx_alpha", 0);
	expect_vaddr(e, "fx_mini", "main", 0);
	elf_syms__free(e);
}

TEST(elf_split_debug_file)
{
	struct elf_syms *e = load("fx_split"), *d = load("fx_split.debug");

	ASSERT_TRUE(e && d);
	EXPECT_TRUE(!elf_syms__has_symtab(e));
	EXPECT_STREQ(elf_syms__debuglink(e), "fx_split.debug");
	EXPECT_TRUE(elf_syms__has_symtab(d));
	/* the very build: the same build id; the static function only in the debug file */
	EXPECT_TRUE(elf_syms__build_id(e)[0] != '\0');
	EXPECT_STREQ(elf_syms__build_id(e), elf_syms__build_id(d));
	EXPECT_TRUE(elf_syms__count(d) > elf_syms__count(e));
	expect_vaddr(d, "fx_split", "jp_fx_local", 2);
	elf_syms__free(e);
	elf_syms__free(d);
}

TEST(elf_not_elf)
{
	struct elf_syms *e = NULL;
	int fd = open(fx_path("maps.txt"), O_RDONLY);

	ASSERT_TRUE(fd >= 0);
	EXPECT_EQ(elf_syms__load_fd(fd, &e), -ENOEXEC);
	EXPECT_TRUE(e == NULL);
	close(fd);
	EXPECT_EQ(elf_syms__load_mem("\177ELF", 4, &e), -ENOEXEC);
	elf_syms__free(NULL);
}

TEST(demangle)
{
	char *s = jp_demangle("_ZN4jpfx6WidgetIiE4spinEi", false);
	char buf[128];

	EXPECT_STREQ(s, "jpfx::Widget<int>::spin");
	free(s);
	s = jp_demangle("_ZNK4jpfx6WidgetIiE4spinEi", true);
	EXPECT_STREQ(s, "jpfx::Widget<int>::spin(int) const");
	free(s);
	EXPECT_TRUE(jp_demangle("main", false) == NULL);
	EXPECT_TRUE(jp_demangle("_Zbogus", false) == NULL);
	strcpy(buf, "Foo::operator()(int) const");
	jp_demangle_strip_params(buf);
	EXPECT_STREQ(buf, "Foo::operator()");
	strcpy(buf, "(anonymous namespace)::f(std::vector<int, std::allocator<int> > const&)");
	jp_demangle_strip_params(buf);
	EXPECT_STREQ(buf, "(anonymous namespace)::f");
	strcpy(buf, "plain");
	jp_demangle_strip_params(buf);
	EXPECT_STREQ(buf, "plain");
}

/* starts a fixture program; it prints its function addresses and waits on stdin */
struct child {
	pid_t pid;
	int in_fd;
	unsigned long long addr[3];
};

static int child_start(const char *prog, struct child *c)
{
	int in[2], out[2];
	char line[256];
	FILE *f;
	int n;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(fx_path(prog), prog, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	f = fdopen(out[0], "r");
	memset(c->addr, 0, sizeof(c->addr));
	n = f && fgets(line, sizeof(line), f)
		    ? sscanf(line, "%llx %llx %llx", &c->addr[0], &c->addr[1], &c->addr[2])
		    : 0;
	if (f)
		fclose(f);
	return n > 0 ? 0 : -1;
}

static void child_stop(struct child *c)
{
	close(c->in_fd);
	(void)waitpid(c->pid, NULL, 0);
}

TEST(live_exec_fixtures)
{
	static const char *const progs[] = {"fx_pie", "fx_nopie", "fx_mini"};
	struct syms *s = syms__new(fx_path("kallsyms.txt"));

	ASSERT_TRUE(s);
	for (size_t i = 0; i < 3; i++) {
		struct child c;
		struct jp_sym r;

		ASSERT_TRUE(child_start(progs[i], &c) == 0);
		EXPECT_EQ(syms__add_pid(s, (__u32)c.pid), 0);
		EXPECT_EQ(syms__user(s, (__u32)c.pid, c.addr[0] + 4, &r), 0);
		EXPECT_STREQ(r.name, "jp_fx_alpha");
		EXPECT_EQ(r.offset, 4);
		EXPECT_EQ(r.kind, JP_FK_NATIVE);
		EXPECT_TRUE(r.dso && strstr(r.dso, progs[i]));
		EXPECT_EQ(syms__user(s, (__u32)c.pid, c.addr[1], &r), 0);
		EXPECT_STREQ(r.name, "jp_fx_beta");
		EXPECT_EQ(r.offset, 0);
		/* exits now; the snapshot still resolves */
		child_stop(&c);
		EXPECT_EQ(syms__user(s, (__u32)c.pid, c.addr[2] + 1, &r), 0);
		EXPECT_STREQ(r.name, "jp_fx_local");
		EXPECT_EQ(r.offset, 1);
		syms__drop_pid(s, (__u32)c.pid);
		EXPECT_EQ(syms__user(s, (__u32)c.pid, c.addr[0], &r), -ESRCH);
	}
	syms__free(s);
}

TEST(live_cxx_demangled)
{
	struct syms *s = syms__new(fx_path("kallsyms.txt"));
	struct child c;
	struct jp_sym r;

	ASSERT_TRUE(s);
	ASSERT_TRUE(child_start("fx_cxx", &c) == 0);
	EXPECT_EQ(syms__user(s, (__u32)c.pid, c.addr[0] + 2, &r), 0);
	EXPECT_STREQ(r.name, "jpfx::Widget<int>::spin");
	EXPECT_EQ(r.offset, 2);
	child_stop(&c);
	syms__free(s);
}

__attribute__((noinline)) int test_sym_marker_fn(int x)
{
	return x * 3 + 1;
}

TEST(live_forked_child_and_shared_lib)
{
	struct syms *s = syms__new(fx_path("kallsyms.txt"));
	void *h = dlopen(fx_path("libfx.so"), RTLD_NOW | RTLD_LOCAL);
	void *beta = h ? dlsym(h, "jp_fx_beta") : NULL;
	struct syms_stats st;
	struct jp_sym r;
	int p[2];
	pid_t pid;
	char c;

	ASSERT_TRUE(s && beta);
	ASSERT_TRUE(pipe(p) == 0);
	pid = fork();
	ASSERT_TRUE(pid >= 0);
	if (!pid) {
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	/* same layout as ours after fork: our own function, and the dlopen'ed library */
	EXPECT_EQ(syms__user(s, (__u32)pid, (__u64)(unsigned long)test_sym_marker_fn + 1, &r), 0);
	EXPECT_STREQ(r.name, "test_sym_marker_fn");
	EXPECT_EQ(r.offset, 1);
	EXPECT_EQ(syms__user(s, (__u32)pid, (__u64)(unsigned long)beta, &r), 0);
	EXPECT_STREQ(r.name, "jp_fx_beta");
	EXPECT_TRUE(r.dso && strstr(r.dso, "libfx.so"));
	/* in the file's own terms: the ELF virtual address, the same wherever it is loaded */
	{
		Dl_info di;

		ASSERT_TRUE(dladdr(beta, &di) && di.dli_fbase);
		EXPECT_EQ(r.file_addr, (__u64)(unsigned long)beta - (__u64)(unsigned long)di.dli_fbase);
	}
	/* libc: any libc function resolves to a name in libc */
	EXPECT_EQ(syms__user(s, (__u32)pid, (__u64)(unsigned long)&getpid, &r), 0);
	EXPECT_TRUE(r.name != NULL);
	EXPECT_TRUE(r.dso && strstr(r.dso, "libc"));
	/* unmapped address: no name, still 0 */
	EXPECT_EQ(syms__user(s, (__u32)pid, 16, &r), 0);
	EXPECT_TRUE(r.name == NULL);
	close(p[1]);
	(void)waitpid(pid, NULL, 0);

	/* our own pid too: the DSOs come from the cache */
	EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)beta, &r), 0);
	EXPECT_STREQ(r.name, "jp_fx_beta");
	syms__stats(s, &st);
	EXPECT_EQ(st.pids, 2);
	EXPECT_TRUE(st.dso_cache_hits > 0);
	syms__free(s);
	dlclose(h);
}

/*
 * A miss reads the pid's maps again, but a read that finds them unchanged doubles the wait
 * before the next (a frame-pointer walk gone astray misses at every sample: each read
 * opens every mapped file); a read that finds a new mapping (a dlopen) ends the wait.
 */
TEST(live_maps_reread_backs_off)
{
	struct syms *s = syms__new(fx_path("kallsyms.txt"));
	struct syms_stats st;
	struct jp_sym r;
	__u64 t0, reads, before_open, opened;
	void *h, *beta;

	ASSERT_TRUE(s);
	syms__set_reload_interval_ms(s, 10);
	EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)test_sym_marker_fn, &r), 0);
	EXPECT_STREQ(r.name, "test_sym_marker_fn");
	syms__stats(s, &st);
	opened = st.dsos + st.dso_cache_hits;
	EXPECT_EQ(st.files_kept, 0);
	/* 500 ms of misses, one a millisecond: 10, 20, 40, 80, 160 ms apart, not every 10 ms */
	for (t0 = mono_ns(); mono_ns() - t0 < 500000000ull;) {
		EXPECT_EQ(syms__user(s, (__u32)getpid(), 16, &r), 0);
		EXPECT_TRUE(r.name == NULL);
		usleep(1000);
	}
	syms__stats(s, &st);
	reads = st.maps_reads;
	printf("# maps read %llu times in 500 ms of misses (50 without the back-off)\n",
	       (unsigned long long)reads);
	EXPECT_TRUE(reads >= 4 && reads <= 8);
	/* the same mappings again: their files are the ones known, none opened again */
	EXPECT_EQ(st.dsos + st.dso_cache_hits, opened);
	EXPECT_TRUE(st.files_kept >= reads - 1);
	/* a library mapped now is found by a miss within the longest wait */
	ASSERT_TRUE(!dlopen(fx_path("libfx.so"), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD));
	h = dlopen(fx_path("libfx.so"), RTLD_NOW | RTLD_LOCAL);
	beta = h ? dlsym(h, "jp_fx_beta") : NULL;
	ASSERT_TRUE(beta);
	before_open = mono_ns();
	do {
		EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)beta, &r), 0);
		if (r.name)
			break;
		usleep(1000);
	} while (mono_ns() - before_open < 3000000000ull);
	EXPECT_STREQ(r.name, "jp_fx_beta");
	EXPECT_TRUE(mono_ns() - before_open < 2000000000ull);
	/* and that read found a change: misses read again at the reload interval */
	syms__stats(s, &st);
	reads = st.maps_reads;
	usleep(15000);
	EXPECT_EQ(syms__user(s, (__u32)getpid(), 16, &r), 0);
	syms__stats(s, &st);
	EXPECT_EQ(st.maps_reads, reads + 1);
	syms__free(s);
	dlclose(h);
}

/* a file no live pid maps loses its tables after the idle time; a pid mapping it again reads them */
TEST(live_files_follow_live_pids)
{
	struct syms *s = syms__new(fx_path("kallsyms.txt"));
	void *h = dlopen(fx_path("libfx.so"), RTLD_NOW | RTLD_LOCAL);
	void *beta = h ? dlsym(h, "jp_fx_beta") : NULL;
	struct timespec nap = {0, 300 * 1000 * 1000};
	struct syms_stats st;
	struct jp_sym r;

	ASSERT_TRUE(s && beta);
	syms__set_dso_idle_ms(s, 200);
	EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)beta, &r), 0);
	EXPECT_STREQ(r.name, "jp_fx_beta");
	syms__stats(s, &st);
	ASSERT_TRUE(st.elf_bytes > 0);
	/* still mapped by a live pid: kept however long */
	nanosleep(&nap, NULL);
	syms__free_dropped(s);
	syms__stats(s, &st);
	EXPECT_EQ(st.dsos_unloaded, 0);
	/* the pid goes: its files are idle, then unloaded */
	syms__drop_pid(s, (__u32)getpid());
	syms__free_dropped(s);
	syms__stats(s, &st);
	EXPECT_EQ(st.dsos_unloaded, 0); /* not idle long enough yet */
	nanosleep(&nap, NULL);
	syms__free_dropped(s);
	syms__stats(s, &st);
	EXPECT_TRUE(st.dsos_unloaded > 0);
	EXPECT_EQ(st.elf_bytes, 0);
	/* mapped again: read again, named as before */
	EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)beta, &r), 0);
	EXPECT_STREQ(r.name, "jp_fx_beta");
	syms__stats(s, &st);
	EXPECT_TRUE(st.dsos_reloaded > 0);
	EXPECT_TRUE(st.elf_bytes > 0);
	syms__free(s);
	dlclose(h);
}

TEST(live_vdso)
{
	struct syms *s = syms__new(fx_path("kallsyms.txt"));
	void *h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct jp_sym r;

	ASSERT_TRUE(s);
	if (fn) {
		EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)fn, &r), 0);
		EXPECT_TRUE(r.name && strstr(r.name, "clock_gettime"));
		EXPECT_STREQ(r.dso, "[vdso]");
	}
	if (h)
		dlclose(h);
	syms__free(s);
}

TEST(live_perfmap_jit)
{
	struct syms *s = syms__new(fx_path("kallsyms.txt"));
	char path[64], line[128];
	struct jp_sym r;
	void *code;
	int fd, n;

	ASSERT_TRUE(s);
	syms__set_reload_interval_ms(s, 0);
	/* anonymous executable memory, as a JIT has */
	code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(code != MAP_FAILED);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
	ASSERT_TRUE(fd >= 0);
	n = snprintf(line, sizeof(line), "%lx 100 Interpreter\n", (unsigned long)code);
	EXPECT_EQ(write(fd, line, (size_t)n), n);
	EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)code + 0x10, &r), 0);
	EXPECT_STREQ(r.name, "Interpreter");
	EXPECT_EQ(r.kind, JP_FK_JVM);
	EXPECT_EQ(r.offset, 0x10);
	EXPECT_STREQ(r.dso, "[jit]");
	/* appended later: found by the incremental re-read on a miss */
	n = snprintf(line, sizeof(line), "%lx 40 java.lang.String::hashCode()\n",
		     (unsigned long)code + 0x1000);
	EXPECT_EQ(write(fd, line, (size_t)n), n);
	EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)code + 0x1004, &r), 0);
	EXPECT_STREQ(r.name, "java.lang.String::hashCode()");
	EXPECT_EQ(r.kind, JP_FK_JIT);
	EXPECT_EQ(r.offset, 4);
	EXPECT_EQ(syms__user(s, (__u32)getpid(), (__u64)(unsigned long)code + 0x1800, &r), 0);
	EXPECT_TRUE(r.name == NULL);
	close(fd);
	unlink(path);
	munmap(code, 8192);
	syms__free(s);
}

static struct elf_syms *load_path(const char *path, int *ret_err)
{
	struct elf_syms *e = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*ret_err = fd < 0 ? -errno : elf_syms__load_fd(fd, &e);
	if (fd >= 0)
		close(fd);
	return *ret_err ? NULL : e;
}

/*
 * 200k symbols that all name one 1 MiB string: held once (it was copied per symbol:
 * 200 GB), and sorting them compares a bounded prefix only.
 */
TEST(huge_shared_name_held_once)
{
	char path[] = "/tmp/jprof-ut-elf-XXXXXX";
	const unsigned long n = 200000, len = (1ul << 20) - 16;
	struct elf_syms *e;
	const char *name;
	__u64 off;
	int fd = mkstemp(path), err;

	EXPECT_TRUE(fd >= 0);
	close(fd);
	for (int suffix = 0; suffix < 2; suffix++) {
		EXPECT_EQ(elfgen_write(path, n, len, suffix), 0);
		e = load_path(path, &err);
		EXPECT_EQ(err, 0);
		EXPECT_EQ(elf_syms__count(e), n);
		EXPECT_TRUE(elf_syms__bytes(e) < n * sizeof(void *) * 6 + 2 * len);
		EXPECT_EQ(elf_syms__over_budget(e), 0);
		name = elf_syms__find(e, 0x10000 + 16 * 7 + 3, &off);
		EXPECT_TRUE(name && strlen(name) == (suffix ? len - 7 : len));
		EXPECT_EQ(off, 3);
		elf_syms__free(e);
	}
	unlink(path);
}

/* a (sparse) file claiming 2^31 sections is refused before libelf sizes anything by it */
TEST(absurd_section_count_refused)
{
	char path[] = "/tmp/jprof-ut-elf-XXXXXX";
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr s0 = { 0 };
	int fd = mkstemp(path), err;

	EXPECT_TRUE(fd >= 0);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(s0);
	eh.e_shoff = 4096;
	eh.e_shnum = 0; /* the count is in section 0 */
	s0.sh_size = 1ull << 31;
	EXPECT_EQ(pwrite(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	EXPECT_EQ(pwrite(fd, &s0, sizeof(s0), 4096), (ssize_t)sizeof(s0));
	EXPECT_EQ(ftruncate(fd, 1ll << 37), 0); /* 128 GiB, sparse */
	close(fd);
	EXPECT_TRUE(!load_path(path, &err));
	EXPECT_EQ(err, -E2BIG);
	unlink(path);
}

/* the same for a 32-bit file, by its program header count in section 0 (PN_XNUM) */
TEST(absurd_phdr_count_refused_elf32)
{
	char path[] = "/tmp/jprof-ut-elf-XXXXXX";
	Elf32_Ehdr eh = { 0 };
	Elf32_Shdr s0 = { 0 };
	int fd = mkstemp(path), err;

	EXPECT_TRUE(fd >= 0);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32; /* the rest of the header is never read */
	eh.e_shoff = 4096;
	eh.e_shnum = 1;
	eh.e_phnum = PN_XNUM; /* the count is in section 0 */
	s0.sh_info = 1u << 31;
	EXPECT_EQ(pwrite(fd, &eh, sizeof(eh), 0), (ssize_t)sizeof(eh));
	EXPECT_EQ(pwrite(fd, &s0, sizeof(s0), 4096), (ssize_t)sizeof(s0));
	EXPECT_EQ(ftruncate(fd, 1ll << 20), 0);
	close(fd);
	EXPECT_TRUE(!load_path(path, &err));
	EXPECT_EQ(err, -E2BIG);
	unlink(path);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_procfs.c: the threads of a process in another pid namespace, by their tids there
 * and here (proc_ns_tids_at), from fixture task directories: sorted, looked up, and what is
 * not a thread's status left out or counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "util/procfs.h"

struct fixture {
	char path[64];
	int dfd;
};

static void fx_init(struct fixture *f)
{
	snprintf(f->path, sizeof(f->path), "/tmp/test_procfs.XXXXXX");
	f->dfd = mkdtemp(f->path) ? open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

/* task/<name>/status with text (NULL: the directory alone) */
static void fx_task(struct fixture *f, const char *name, const char *text)
{
	char p[160];
	FILE *s;

	snprintf(p, sizeof(p), "%s/%s", f->path, name);
	(void)mkdir(p, 0700);
	if (!text)
		return;
	snprintf(p, sizeof(p), "%s/%s/status", f->path, name);
	s = fopen(p, "w");
	if (s) {
		fputs(text, s);
		fclose(s);
	}
}

static void fx_free(struct fixture *f)
{
	char cmd[96];

	if (f->dfd >= 0)
		close(f->dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->path);
	(void)!system(cmd);
}

#define STATUS(name, nspid)                                                 \
	"Name:\t" name "\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t900\n" \
	"NSpid:\t" nspid "\nNSpgid:\t900\t1\n"

TEST(threads_by_their_namespace_tid)
{
	struct fixture f;
	struct proc_nstid m[8];
	size_t n = 99, bad = 99;

	fx_init(&f);
	ASSERT_TRUE(f.dfd >= 0);
	fx_task(&f, "900", STATUS("java", "900\t1"));
	fx_task(&f, "917", STATUS("worker-j", "917\t18"));
	fx_task(&f, "905", STATUS("C2 Compiler", "905\t6"));
	/* nested namespaces: the last field is the innermost */
	fx_task(&f, "930", STATUS("Name\\nNSpid:\t1 2", "930\t40\t7"));
	EXPECT_EQ(proc_ns_tids_at(f.dfd, m, 8, &n, &bad), 0);
	EXPECT_EQ(n, 4);
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(m[0].nstid, 1);
	EXPECT_EQ(m[0].tid, 900);
	EXPECT_EQ(m[1].nstid, 6);
	EXPECT_EQ(m[2].nstid, 7);
	EXPECT_EQ(m[2].tid, 930);
	EXPECT_EQ(m[3].nstid, 18);
	EXPECT_EQ(proc_nstid_host(m, n, 18), 917);
	EXPECT_EQ(proc_nstid_host(m, n, 1), 900);
	EXPECT_EQ(proc_nstid_host(m, n, 917), 0);
	EXPECT_EQ(proc_nstid_host(m, 0, 1), 0);
	fx_free(&f);
}

TEST(what_is_not_a_thread_left_out)
{
	struct fixture f;
	struct proc_nstid m[8];
	size_t n = 99, bad = 99;

	fx_init(&f);
	ASSERT_TRUE(f.dfd >= 0);
	fx_task(&f, "900", STATUS("java", "900\t1"));
	fx_task(&f, "901", NULL);			     /* exited: no status */
	fx_task(&f, "902", STATUS("x", "903\t3"));	     /* names another thread */
	fx_task(&f, "904", STATUS("x", "904\t-4"));	     /* not a number */
	fx_task(&f, "906", STATUS("x", "906\t99999999999")); /* too large */
	fx_task(&f, "907", STATUS("x", "907\t0"));	     /* no tid 0 */
	fx_task(&f, "908", STATUS("x", "908 5x"));	     /* junk after it */
	fx_task(&f, "0909", STATUS("x", "909\t9"));	     /* not a task name */
	fx_task(&f, "self", STATUS("x", "910\t10"));
	EXPECT_EQ(proc_ns_tids_at(f.dfd, m, 8, &n, &bad), 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(bad, 5);
	EXPECT_EQ(m[0].tid, 900);
	fx_free(&f);
}

TEST(no_nspid_is_no_namespace_and_the_budget_holds)
{
	struct fixture f;
	struct proc_nstid m[2];
	size_t n = 99;

	fx_init(&f);
	ASSERT_TRUE(f.dfd >= 0);
	/* a kernel before 4.1 */
	fx_task(&f, "900", "Name:\tjava\nTgid:\t900\n");
	EXPECT_EQ(proc_ns_tids_at(f.dfd, m, 2, &n, NULL), 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(m[0].nstid, 900);
	EXPECT_EQ(m[0].tid, 900);
	fx_task(&f, "901", STATUS("a", "901\t2"));
	fx_task(&f, "902", STATUS("b", "902\t3"));
	n = 99;
	EXPECT_EQ(proc_ns_tids_at(f.dfd, m, 2, &n, NULL), -E2BIG);
	EXPECT_EQ(n, 99); /* written only on success */
	fx_free(&f);
}

TEST(this_process)
{
	struct proc_nstid m[64];
	size_t n = 0;

	EXPECT_EQ(proc_ns_tids((__u32)getpid(), m, 64, &n, NULL), 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(m[0].tid, (__u32)getpid());
	EXPECT_EQ(proc_ns_tids(0, m, 64, &n, NULL), -ESRCH);
}

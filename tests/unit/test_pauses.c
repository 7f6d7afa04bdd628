// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_pauses.c: hsperfdata readers follow live processes: an exited JVM's fd is closed, its pauses kept. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "jvm/pauses.h"

/* a PerfData v2 file under construction (as in test_hsperf.c) */
struct pd {
	unsigned char b[8192];
	size_t len;
	unsigned int n;
};

static void put32(unsigned char *p, unsigned int v)
{
	memcpy(p, &v, 4);
}

static void pd_add(struct pd *d, const char *name, char type, const void *data, unsigned int dlen,
		   unsigned int vlen)
{
	unsigned char *e = d->b + d->len;
	unsigned int noff = 20, doff = (unsigned int)(noff + strlen(name) + 1 + 7) & ~7u;
	unsigned int elen = (doff + dlen + 7) & ~7u;

	put32(e, elen);
	put32(e + 4, noff);
	put32(e + 8, vlen);
	e[12] = (unsigned char)type;
	e[14] = 1;
	e[15] = 3;
	put32(e + 16, doff);
	memcpy(e + noff, name, strlen(name) + 1);
	memcpy(e + doff, data, dlen);
	d->len += elen;
	put32(d->b + 28, ++d->n);
}

static void pd_long(struct pd *d, const char *name, unsigned long long v)
{
	pd_add(d, name, 'J', &v, 8, 0);
}

static void pd_jvm(struct pd *d, unsigned long long inv)
{
	memset(d, 0, sizeof(*d));
	d->b[0] = 0xca, d->b[1] = 0xfe, d->b[2] = 0xc0, d->b[3] = 0xc0;
	d->b[4] = 1;
	d->b[5] = 2;
	d->b[7] = 1;
	put32(d->b + 24, 32);
	d->len = 32;
	pd_long(d, "sun.os.hrt.frequency", 1000000000ull);
	pd_long(d, "sun.gc.collector.0.invocations", inv);
	pd_long(d, "sun.gc.collector.0.time", inv * 1000000);
	pd_long(d, "sun.gc.collector.0.lastEntryTime", inv * 10000000);
	pd_long(d, "sun.gc.collector.0.lastExitTime", inv * 10000000 + 1000000);
}

static char dir[128], user[24];

static void write_file(pid_t pid, const struct pd *d)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", dir, (int)pid);
	f = fopen(path, "w");
	EXPECT_TRUE(f != NULL);
	if (!f)
		return;
	fwrite(d->b, 1, d->len, f);
	fclose(f);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = -1; /* the directory's own */

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

static pid_t child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void jvm_of(pid_t pid, struct jvm_info *j)
{
	memset(j, 0, sizeof(*j));
	j->pid = j->nspid = (__u32)pid;
	j->uid = geteuid();
	snprintf(j->user, sizeof(j->user), "%s", user);
	snprintf(j->main, sizeof(j->main), "Main%d", (int)pid);
}

static void count_jvm(void *ctx, const struct jvm_info *jvm, const struct hsperf *h)
{
	(void)jvm;
	(void)h;
	(*(int *)ctx)++;
}

static __u64 now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

TEST(exited_jvms_release_their_fd)
{
	struct pauses *p = pauses__new();
	struct jvm_info j;
	struct pd d;
	pid_t a, b;
	int fds0, n = 0;
	char *txt = NULL;
	size_t len = 0;
	FILE *m;
	__u64 t;

	snprintf(user, sizeof(user), "jprof-test-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/tmp/hsperfdata_%s", user);
	EXPECT_EQ(mkdir(dir, 0755), 0);
	fds0 = count_fds();
	a = child();
	b = child();
	pd_jvm(&d, 1);
	write_file(a, &d);
	write_file(b, &d);
	jvm_of(a, &j);
	EXPECT_EQ(pauses__add(p, &j, false), 1);
	jvm_of(b, &j);
	EXPECT_EQ(pauses__add(p, &j, false), 1);
	t = now();
	/* a round of reads has a time budget (2 ms): on a loaded host a round may open one */
	for (int i = 0; i < 50 && count_fds() < fds0 + 2; i++)
		pauses__poll(p, t, false);
	EXPECT_EQ(count_fds(), fds0 + 2); /* a reader per live JVM */
	/* a pauses once; b does not */
	pd_jvm(&d, 2);
	write_file(a, &d);
	pauses__poll(p, t + 200000000ull, false);

	/* both exit: their files stay (a killed JVM leaves it), their fds must not */
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
	pauses__poll(p, t + 2000000000ull, false);
	EXPECT_EQ(count_fds(), fds0);
	/* a's pause stays for the report, b (nothing counted) is forgotten */
	pauses__for_each_jvm(p, count_jvm, &n);
	EXPECT_EQ(n, 1);
	m = open_memstream(&txt, &len);
	pauses__report(p, m);
	fclose(m);
	EXPECT_TRUE(txt && strstr(txt, "G1") == NULL); /* no name in the file: "collector 0" */
	EXPECT_TRUE(txt && strstr(txt, "collector 0") != NULL);
	free(txt);
	pauses__free(p);
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/%d", dir, (int)a);
		unlink(path);
		snprintf(path, sizeof(path), "%s/%d", dir, (int)b);
		unlink(path);
	}
	rmdir(dir);
}

TEST(a_file_that_is_not_perfdata_is_dropped)
{
	struct pauses *p = pauses__new();
	struct jvm_info j;
	struct pd d;
	pid_t a;
	int fds0;
	char *txt = NULL, path[256];
	size_t len = 0;
	FILE *m;
	__u64 t = now();

	snprintf(user, sizeof(user), "jprof-test-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "/tmp/hsperfdata_%s", user);
	EXPECT_EQ(mkdir(dir, 0755), 0);
	fds0 = count_fds();
	a = child();
	memset(&d, 'x', sizeof(d));
	d.len = sizeof(d.b);
	write_file(a, &d);
	jvm_of(a, &j);
	EXPECT_EQ(pauses__add(p, &j, false), 1);
	for (int i = 0; i < 25; i++)
		pauses__poll(p, t + (__u64)i * 1000000000ull, false);
	EXPECT_EQ(count_fds(), fds0); /* dropped, though its process lives on */
	m = open_memstream(&txt, &len);
	pauses__report(p, m);
	fclose(m);
	EXPECT_TRUE(txt && strstr(txt, "1 hsperfdata files dropped: not PerfData") != NULL);
	free(txt);
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	pauses__free(p);
	snprintf(path, sizeof(path), "%s/%d", dir, (int)a);
	unlink(path);
	rmdir(dir);
}

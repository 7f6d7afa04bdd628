// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_discover.c: JVM discovery on the fixture /proc tree in tests/fixtures/proc. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "jvm/discover.h"

#define FIXTURE "tests/fixtures/proc"
#define HEX64	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void cmdline(const char *buf, size_t len, const char *want_main, int want_no_attach)
{
	char main[64] = "unchanged";
	int no_attach = -1;

	jvm_parse_cmdline(buf, len, main, sizeof(main), &no_attach);
	EXPECT_STREQ(main, want_main);
	EXPECT_EQ(no_attach, want_no_attach);
}

#define CMDLINE(lit, main, no_attach) cmdline(lit, sizeof(lit) - 1, main, no_attach)

TEST(cmdline_main_class_after_options)
{
	CMDLINE("java\0-Xmx1g\0-cp\0a.jar\0Main\0arg\0", "Main", 0);
	CMDLINE("java\0-classpath\0x\0--class-path\0y\0pkg.Main\0", "pkg.Main", 0);
	CMDLINE("java\0--module-path\0/m\0--add-modules\0ALL\0--add-opens\0a/b=c\0M\0", "M", 0);
	CMDLINE("java\0-p\0/m\0--add-exports\0a/b=c\0--add-reads\0a=b\0--patch-module\0a=b\0M\0",
		"M", 0);
	CMDLINE("java\0--add-opens=java.base/java.io=ALL\0-splash:s.png\0@args\0Main\0", "Main", 0);
	CMDLINE("java\0--source\0"
		"17\0Hello.java\0",
		"Hello.java", 0);
}

TEST(cmdline_jdk_tool_launchers)
{
	/* javac's main class wins over its first source file (issue 25) */
	CMDLINE("/usr/lib/jvm/jdk/bin/javac\0-d\0out\0src/A.java\0src/B.java\0",
		"com.sun.tools.javac.Main", 0);
	CMDLINE("javac\0-J-XX:+DisableAttachMechanism\0A.java\0", "com.sun.tools.javac.Main", 1);
	CMDLINE("jar\0cf\0x.jar\0A.class\0", "sun.tools.jar.Main", 0);
	/* not a tool: a launcher named like one only by its directory */
	CMDLINE("/opt/javac/bin/java\0Main\0", "Main", 0);
	CMDLINE("java\0-m\0jdk.compiler/com.sun.tools.javac.Main\0A.java\0",
		"jdk.compiler/com.sun.tools.javac.Main", 0);
}

TEST(cmdline_jar_and_module)
{
	CMDLINE("java\0-jar\0/srv/app.jar\0--port\0", "/srv/app.jar", 0);
	CMDLINE("java\0-m\0org.app/org.app.Main\0", "org.app/org.app.Main", 0);
	CMDLINE("java\0--module\0mod/cls\0", "mod/cls", 0);
	CMDLINE("java\0--module=mod/cls\0x\0", "mod/cls", 0);
	/* the class path argument of -cp is not the main class, even when it looks like one */
	CMDLINE("java\0-cp\0Main\0-jar\0x.jar\0", "x.jar", 0);
}

TEST(cmdline_attach_flag_last_one_before_main_wins)
{
	CMDLINE("java\0-XX:+DisableAttachMechanism\0Main\0", "Main", 1);
	CMDLINE("java\0-XX:+DisableAttachMechanism\0-XX:-DisableAttachMechanism\0M\0", "M", 0);
	/* after the main class it is a program argument */
	CMDLINE("java\0-XX:+DisableAttachMechanism\0M\0-XX:-DisableAttachMechanism\0", "M", 1);
	CMDLINE("java\0M\0-XX:+DisableAttachMechanism\0", "M", 0);
	CMDLINE("java\0-cp\0-XX:+DisableAttachMechanism\0M\0", "M", 0);
}

TEST(cmdline_degenerate)
{
	CMDLINE("", "", 0);
	CMDLINE("java", "", 0);
	CMDLINE("java\0", "", 0);
	CMDLINE("java\0-cp\0", "", 0);
	CMDLINE("java\0-jar\0", "", 0);
	CMDLINE("java\0\0\0-version\0", "", 0);
	/* truncated read: last argument without its NUL */
	CMDLINE("java\0-Xmx1g\0com.ex", "com.ex", 0);
	CMDLINE("java\0-XX:+DisableAttachMechanism", "", 1);
	/* control bytes never reach a terminal */
	CMDLINE("java\0\x1b[2Jevil\0", "?[2Jevil", 0);
}

TEST(cmdline_long_main_is_truncated)
{
	char buf[512], main[16];
	int no_attach;

	memset(buf, 'A', sizeof(buf));
	memcpy(buf, "java\0", 5);
	jvm_parse_cmdline(buf, sizeof(buf), main, sizeof(main), &no_attach);
	EXPECT_EQ(strlen(main), 15);
}

static void cgroup(const char *buf, const char *want)
{
	char id[80] = "unchanged";

	jvm_parse_cgroup(buf, strlen(buf), id, sizeof(id));
	EXPECT_STREQ(id, want);
}

TEST(cgroup_container_ids)
{
	cgroup("0::/system.slice/docker-" HEX64 ".scope\n", "0123456789ab");
	cgroup("0::/docker/" HEX64 "\n", "0123456789ab");
	cgroup("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12_34.slice/"
	       "cri-containerd-" HEX64 ".scope\n",
	       "0123456789ab");
	cgroup("0::/machine.slice/libpod-" HEX64 ".scope/container\n", "0123456789ab");
	cgroup("0::/kubepods/burstable/pod1234/crio-" HEX64, "0123456789ab");
	/* innermost id wins (docker in docker) */
	cgroup("0::/docker/" HEX64 "/docker/fedcba9876543210fedcba9876543210fedcba9876543210fedcb"
	       "a9876543210\n",
	       "fedcba987654");
	/* v1 only */
	cgroup("12:memory:/docker/" HEX64 "\n1:name=systemd:/docker/" HEX64 "\n", "0123456789ab");
}

TEST(cgroup_no_container)
{
	cgroup("0::/\n", "");
	cgroup("0::/user.slice/user-1000.slice/session-2.scope\n", "");
	cgroup("0::/system.slice/docker-" HEX64 "0.scope\n", ""); /* 65 hex */
	cgroup("0::/x/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\n", "");
	cgroup("0::/x/g" HEX64 "\n", "");
	cgroup("", "");
	cgroup(":::\n0\n::\n\n", "");
	cgroup("0::", "");
}

TEST(probe_plain_jvm_in_docker)
{
	struct jvm_info j;

	ASSERT_TRUE(jvm_probe(FIXTURE, 100, &j) == 0);
	EXPECT_EQ(j.pid, 100);
	EXPECT_EQ(j.nspid, 100);
	EXPECT_EQ(j.uid, 0);
	EXPECT_STREQ(j.user, "root");
	EXPECT_STREQ(j.version, "17.0.15");
	EXPECT_STREQ(j.main, "com.example.Main");
	EXPECT_STREQ(j.container, "0123456789ab");
	EXPECT_STREQ(j.java_home, "/usr/lib/jvm/java-17-openjdk-amd64");
	EXPECT_EQ(j.agent, JVM_AGENT_NONE);
	EXPECT_EQ(jvm_signal_caught(FIXTURE, 100, SIGQUIT), 1);
	EXPECT_EQ(jvm_signal_caught(FIXTURE, 100, SIGUSR1), 0);
}

TEST(probe_jar_in_pid_namespace_with_agent)
{
	struct jvm_info j;

	ASSERT_TRUE(jvm_probe(FIXTURE, 101, &j) == 0);
	EXPECT_EQ(j.nspid, 7);
	EXPECT_EQ(j.uid, 4243);
	EXPECT_EQ(j.gid, 5152);
	EXPECT_STREQ(j.main, "/srv/app.jar");
	EXPECT_STREQ(j.container, "fedcba987654");
	EXPECT_STREQ(j.java_home, "/opt/jdk8/jre");
	EXPECT_STREQ(j.version, "1.8.0_412"); /* JDK 8: release above jre/ */
	EXPECT_EQ(j.agent, JVM_AGENT_LOADED);
	EXPECT_EQ(jvm_signal_caught(FIXTURE, 101, SIGQUIT), 0);
}

TEST(probe_module_no_attach_release_symlink_not_followed)
{
	struct jvm_info j;

	ASSERT_TRUE(jvm_probe(FIXTURE, 104, &j) == 0);
	EXPECT_STREQ(j.main, "org.app/org.app.Main");
	EXPECT_EQ(j.agent, JVM_AGENT_NO_ATTACH);
	EXPECT_STREQ(j.container, "");
	/* release -> /opt/real-release: a JDK's user may plant it, so no link is followed */
	EXPECT_STREQ(j.version, "?");
}

TEST(probe_env_options_and_missing_release)
{
	struct jvm_info j;

	ASSERT_TRUE(jvm_probe(FIXTURE, 105, &j) == 0);
	EXPECT_EQ(j.nspid, 1);
	EXPECT_STREQ(j.main, "Main");
	EXPECT_EQ(j.agent, JVM_AGENT_NO_ATTACH); /* JAVA_TOOL_OPTIONS */
	EXPECT_STREQ(j.version, "?");
	EXPECT_STREQ(j.container, "0123456789ab");
}

TEST(probe_errors)
{
	struct jvm_info j;

	EXPECT_EQ(jvm_probe(FIXTURE, 102, &j), -ENOEXEC);
	EXPECT_EQ(jvm_probe(FIXTURE, 999, &j), -ESRCH);
	EXPECT_EQ(jvm_signal_caught(FIXTURE, 999, SIGQUIT), -ESRCH);
	/* garbage: overlong maps line, binary bytes, unparsable Uid: an error, no crash */
	EXPECT_TRUE(jvm_probe(FIXTURE, 103, &j) < 0);
	EXPECT_TRUE(jvm_signal_caught(FIXTURE, 103, SIGQUIT) < 0);
	EXPECT_EQ(jvm_probe("/nonexistent-proc", 1, &j), -ESRCH);
}

TEST(discover_lists_jvms_sorted)
{
	struct jvm_info *all = NULL;
	int n;

	n = jvm_discover(FIXTURE, &all);
	ASSERT_TRUE(n == 4);
	EXPECT_EQ(all[0].pid, 100);
	EXPECT_EQ(all[1].pid, 101);
	EXPECT_EQ(all[2].pid, 104);
	EXPECT_EQ(all[3].pid, 105);
	free(all);
	EXPECT_EQ(jvm_discover("/nonexistent-proc", &all), -ENOENT);
}

TEST(discover_real_proc_does_not_crash)
{
	struct jvm_info *all = NULL;
	int n;

	n = jvm_discover("/proc", &all);
	EXPECT_TRUE(n >= 0);
	for (int i = 0; i < n; i++)
		EXPECT_TRUE(all[i].pid > 0 && all[i].nspid > 0);
	free(all);
}

TEST(groups_line_parsed_bounded_and_strict)
{
	gid_t g[4];
	static const char st[] =
		"Name:\tjava\nUid:\t1000\t1000\t1000\t1000\nGroups:\t4 27 1000 \nX: 1\n";

	EXPECT_EQ(jvm_parse_groups(st, sizeof(st) - 1, g, 4), 3);
	EXPECT_EQ(g[0], 4);
	EXPECT_EQ(g[1], 27);
	EXPECT_EQ(g[2], 1000);
	EXPECT_EQ(jvm_parse_groups(st, sizeof(st) - 1, g, 2), -E2BIG);
	/* no groups at all: an empty list, not an error */
	EXPECT_EQ(jvm_parse_groups("Groups:\t\nUid: 0\n", 17, g, 4), 0);
	EXPECT_EQ(jvm_parse_groups("Groups:", 7, g, 4), 0);
	EXPECT_EQ(jvm_parse_groups("Uid: 1\n", 7, g, 4), -ENOENT);
	/* malformed: signs, letters, overflow, (gid_t)-1 */
	EXPECT_EQ(jvm_parse_groups("Groups: -1\n", 11, g, 4), -EINVAL);
	EXPECT_EQ(jvm_parse_groups("Groups: 12a\n", 12, g, 4), -EINVAL);
	EXPECT_EQ(jvm_parse_groups("Groups: 99999999999\n", 20, g, 4), -EINVAL);
	EXPECT_EQ(jvm_parse_groups("Groups: 4294967295\n", 19, g, 4), -EINVAL);
	/* not NUL-terminated: stops at len */
	EXPECT_EQ(jvm_parse_groups("Groups: 5 6", 11, g, 4), 2);
	EXPECT_EQ(g[1], 6);
	EXPECT_EQ(jvm_parse_groups("Groups: 5 6", 10, g, 4), 1);
}

TEST(groups_and_signal_state_of_this_process)
{
	gid_t g[1024];
	int n = jvm_read_groups("/proc", (__u32)getpid(), g, 1024);

	EXPECT_EQ(n, getgroups(1024, g));
	/* the harness does not catch SIGQUIT; nonexistent pids are gone */
	EXPECT_EQ(jvm_signal_caught("/proc", (__u32)getpid(), SIGQUIT), 0);
	EXPECT_EQ(jvm_signal_caught("/proc", 2147483646u, SIGQUIT), -ESRCH);
	EXPECT_EQ(jvm_read_groups("/proc", 2147483646u, g, 4), -ESRCH);
}

/* a fake /proc/<pid> whose JDK's release (or a directory on its path) is what the test makes */
static void fake_jvm(const char *proc, unsigned int pid)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "mkdir -p %s/%u/root/jdk/lib/server %s/%u/root/real", proc, pid, proc,
		 pid);
	EXPECT_EQ(system(p), 0);
	snprintf(p, sizeof(p), "%s/%u/maps", proc, pid);
	f = fopen(p, "w");
	fputs("7f-8f r-xp 0 0:0 1 /jdk/lib/server/libjvm.so\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/%u/status", proc, pid);
	f = fopen(p, "w");
	fputs("Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nNSpid:\t7\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/%u/cmdline", proc, pid);
	f = fopen(p, "w");
	fwrite("java\0Main\0", 1, 10, f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/%u/root/real/release", proc, pid);
	f = fopen(p, "w");
	fputs("JAVA_VERSION=\"9.9.9\"\n", f);
	fclose(f);
}

/*
 * What the JVM's user controls is never followed or opened: a release that is a symlink
 * (to a root-only file), a FIFO (would block a plain open), a directory symlink on the
 * JDK's path, a file the user could not read. A plain readable one is read.
 */
TEST(release_planted_by_the_jvm_user_is_not_opened)
{
	char proc[128], p[300], q[1024];
	struct jvm_info j;

	snprintf(proc, sizeof(proc), "build/tmp-test-discover-%d", (int)getpid());
	fake_jvm(proc, 11);
	snprintf(p, sizeof(p), "%s/11/root/jdk/release", proc);
	EXPECT_EQ(symlink("/real/release", p), 0);
	ASSERT_TRUE(jvm_probe(proc, 11, &j) == 0);
	EXPECT_STREQ(j.version, "?");

	unlink(p);
	EXPECT_EQ(mkfifo(p, 0644), 0);
	ASSERT_TRUE(jvm_probe(proc, 11, &j) == 0); /* returns: the FIFO was never opened */
	EXPECT_STREQ(j.version, "?");

	unlink(p);
	snprintf(q, sizeof(q), "%s/11/root/real/release", proc);
	EXPECT_EQ(link(q, p), 0);
	EXPECT_EQ(chmod(q, 0600), 0);
	EXPECT_EQ(chown(q, 0, 0), geteuid() == 0 ? 0 : -1);
	ASSERT_TRUE(jvm_probe(proc, 11, &j) == 0);
	EXPECT_STREQ(j.version, geteuid() == 0 ? "?" : "9.9.9"); /* not root: the file is ours */
	EXPECT_EQ(chmod(q, 0644), 0);
	ASSERT_TRUE(jvm_probe(proc, 11, &j) == 0);
	EXPECT_STREQ(j.version, "9.9.9");

	/* the JDK directory itself a symlink: libjvm's path in maps has none, so refuse */
	fake_jvm(proc, 12);
	snprintf(p, sizeof(p), "%s/12/root/jdk", proc);
	snprintf(q, sizeof(q), "rm -rf %s && ln -s real %s && mkdir -p %s/12/root/real/lib/server",
		 p, p, proc);
	EXPECT_EQ(system(q), 0);
	ASSERT_TRUE(jvm_probe(proc, 12, &j) == 0);
	EXPECT_STREQ(j.version, "?");
	snprintf(p, sizeof(p), "rm -rf %s", proc);
	EXPECT_EQ(system(p), 0);
}

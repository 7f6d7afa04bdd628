// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_cgroup.c: cgroup2 mount, container and pod names in cgroup paths, the tree walk. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "util/cgroup.h"
#include "util/ttysafe.h"
#include "jvm/discover.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID   "1b2c3d4e-aaaa-bbbb-cccc-0123456789ab"
#define UID_  "1b2c3d4e_aaaa_bbbb_cccc_0123456789ab"

TEST(mountinfo_finds_cgroup2)
{
	static const char mi[] = "24 30 0:22 / /sys rw,nosuid - sysfs sysfs rw\n"
				 "31 24 0:26 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
				 "40 31 0:38 /sub /elsewhere rw - cgroup2 cgroup2 rw\n"
				 "41 31 0:38 / /sys/fs/cgroup/uni\\040fied rw,relatime shared:9 - "
				 "cgroup2 cgroup2 rw\n";
	char out[64] = "x";

	EXPECT_EQ(cgroup_parse_mountinfo(mi, sizeof(mi) - 1, out, sizeof(out)), 0);
	EXPECT_STREQ(out, "/sys/fs/cgroup/uni fied");
	EXPECT_EQ(cgroup_parse_mountinfo(mi, 100, out, sizeof(out)), -ENOENT);
	EXPECT_EQ(cgroup_parse_mountinfo("garbage - cgroup2", 17, out, sizeof(out)), -ENOENT);
	EXPECT_EQ(cgroup_parse_mountinfo("", 0, out, sizeof(out)), -ENOENT);
}

static int dir(const char *name, char *full, char *label)
{
	return cgroup_dir_container(name, full, 72, label, CGROUP_NAME_LEN);
}

TEST(dir_names_of_engines)
{
	char full[72], label[CGROUP_NAME_LEN];

	EXPECT_EQ(dir("docker-" HEX64 ".scope", full, label), 1);
	EXPECT_STREQ(full, HEX64);
	EXPECT_STREQ(label, "0123456789ab");
	EXPECT_EQ(dir("cri-containerd-" HEX64 ".scope", full, label), 1);
	EXPECT_EQ(dir("crio-" HEX64 ".scope", full, label), 1);
	EXPECT_EQ(dir("libpod-" HEX64 ".scope", full, label), 1);
	EXPECT_EQ(dir(HEX64, full, label), 1); /* cgroupfs driver: /docker/<id> */
	EXPECT_EQ(dir("kubepods-burstable-pod" UID_ ".slice", full, label), 2);
	EXPECT_STREQ(full, UID);
	EXPECT_STREQ(label, "pod" UID);
	EXPECT_EQ(dir("pod" UID, full, label), 2);
	/* not containers */
	EXPECT_EQ(dir("crio-conmon-" HEX64 ".scope", full, label), 0);
	EXPECT_STREQ(full, "");
	EXPECT_STREQ(label, "");
	EXPECT_EQ(dir("docker-" HEX64 "0.scope", full, label), 0);
	EXPECT_EQ(dir("docker-" HEX64 ".service", full, label), 0);
	EXPECT_EQ(
		dir("docker-0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef.scope",
		    full, label),
		0);
	EXPECT_EQ(dir("kubepods-burstable.slice", full, label), 0);
	EXPECT_EQ(dir("xpod" UID, full, label), 0);
	EXPECT_EQ(dir("pod" UID "x", full, label), 0);
	EXPECT_EQ(dir("session-1.scope", full, label), 0);
	EXPECT_EQ(dir("", full, label), 0);
}

TEST(path_label_innermost)
{
	char l[CGROUP_NAME_LEN];

	cgroup_path_label("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
			  ".slice/cri-containerd-" HEX64 ".scope",
			  l, sizeof(l));
	EXPECT_STREQ(l, "0123456789ab");
	cgroup_path_label("/kubepods.slice/kubepods-pod" UID_ ".slice", l, sizeof(l));
	EXPECT_STREQ(l, "pod" UID);
	cgroup_path_label("/system.slice/docker-" HEX64 ".scope/init", l, sizeof(l));
	EXPECT_STREQ(l, "0123456789ab");
	cgroup_path_label("/user.slice/user-0.slice/session-1.scope", l, sizeof(l));
	EXPECT_STREQ(l, "");
	cgroup_path_label("", l, sizeof(l));
	EXPECT_STREQ(l, "");
	cgroup_path_label("////", l, sizeof(l));
	EXPECT_STREQ(l, "");
}

TEST(proc_cgroup_v2_line)
{
	static const char both[] = "12:memory:/docker/x\n0::/system.slice/a.scope\n";
	char p[32] = "x";

	jvm_parse_cgroup_v2(both, sizeof(both) - 1, p, sizeof(p));
	EXPECT_STREQ(p, "/system.slice/a.scope");
	jvm_parse_cgroup_v2("0::/a/very/long/path/that/does/not/fit/here", 43, p, sizeof(p));
	EXPECT_STREQ(p, ""); /* never a truncated, other cgroup */
	jvm_parse_cgroup_v2("1:name=systemd:/x\n", 18, p, sizeof(p));
	EXPECT_STREQ(p, "");
	jvm_parse_cgroup_v2("0::/a\0b", 7, p, sizeof(p));
	EXPECT_STREQ(p, "");
}

/* plain directories stand in for the cgroup tree: the walk, levels and prefix matching */
TEST(walk_and_find_container)
{
	char root[] = "/tmp/jprof-test-cgroup.XXXXXX", path[512], err[256];
	struct cgroup_dir *v = NULL;
	const char *dirs[] = {
		"/system.slice",
		"/system.slice/docker-" HEX64 ".scope",
		"/system.slice/docker-" HEX64 ".scope/init",
		"/kubepods.slice",
		"/kubepods.slice/kubepods-pod" UID_ ".slice",
		"/kubepods.slice/kubepods-pod" UID_
		".slice/"
		"cri-containerd-fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210."
		"scope",
		"/kubepods.slice/kubepods-pod" UID_
		".slice/"
		"cri-containerd-fedcba9876543210fedcba9876543210fedcba9876543210fedcba98765432ff."
		"scope",
	};
	__u64 id;
	__u32 level;
	int n;

	EXPECT_TRUE(mkdtemp(root) != NULL);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
		EXPECT_EQ(mkdir(path, 0755), 0);
	}
	n = cgroup_find_container(root, "0123", &v, err, sizeof(err));
	EXPECT_EQ(n, 1);
	if (n == 1) {
		EXPECT_EQ(v[0].level, 2u);
		EXPECT_STREQ(v[0].name, "0123456789ab");
	}
	free(v);
	v = NULL;
	/* the pod selects its directory (its containers are below it) */
	n = cgroup_find_container(root, "pod1b2c3d4e_aaaa", &v, err, sizeof(err));
	EXPECT_EQ(n, 1);
	if (n == 1)
		EXPECT_EQ(v[0].level, 2u);
	free(v);
	v = NULL;
	EXPECT_EQ(cgroup_find_container(root, "fedcba", &v, err, sizeof(err)), -EEXIST);
	EXPECT_TRUE(strstr(err, "fedcba98765432ff") != NULL);
	EXPECT_TRUE(strstr(err, "fedcba9876543210 ") != NULL ||
		    strstr(err, "9876543210fedcba9876543210 ") != NULL);
	EXPECT_EQ(cgroup_find_container(root, "abcdef99", &v, err, sizeof(err)), -ENOENT);
	EXPECT_EQ(cgroup_find_container(root, "pod", &v, err, sizeof(err)), -EINVAL);

	EXPECT_EQ(cgroup_stat(root, "system.slice/docker-" HEX64 ".scope", &id, &level), 0);
	EXPECT_EQ(level, 2u);
	snprintf(path, sizeof(path), "%s/kubepods.slice/", root);
	EXPECT_EQ(cgroup_stat(root, path, &id, &level), 0);
	EXPECT_EQ(level, 1u);
	EXPECT_EQ(cgroup_stat(root, "/etc", &id, &level), -ENOENT); /* /proc/<pid>/cgroup style */
	EXPECT_EQ(cgroup_stat(root, "/system.slice", &id, &level), 0);
	EXPECT_EQ(level, 1u);
	EXPECT_EQ(cgroup_stat(root, "/", &id, &level), 0);
	EXPECT_EQ(level, 0u);
	EXPECT_EQ(cgroup_stat(root, "system.slice/../..", &id, &level), -EINVAL);
	EXPECT_EQ(cgroup_stat(root, "nope", &id, &level), -ENOENT);

	for (size_t i = sizeof(dirs) / sizeof(dirs[0]); i > 0; i--) {
		snprintf(path, sizeof(path), "%s%s", root, dirs[i - 1]);
		rmdir(path);
	}
	rmdir(root);
}

static bool pick_named(const struct cgroup_dir *d, void *ctx)
{
	(void)ctx;
	return d->name[0] != '\0';
}

/*
 * A user with a delegated subtree: 5,000 cgroups of its own do not make the walk fail or
 * hide root's containers, and its copy of a real container's full id neither gets that
 * container's label nor is selected by --container.
 */
TEST(delegated_subtree_flood_and_copied_id)
{
	char root[] = "/tmp/jprof-test-cgroup.XXXXXX", path[512], err[256];
	struct cgroup_dir *v = NULL;
	struct cgroup_names *names;
	unsigned long skipped = 0;
	__u64 id_copy = 0, id_real = 0;
	__u32 level;
	int n, real = 0, copies = 0;

	if (geteuid() != 0)
		return; /* chown needs root: make test runs as root */
	EXPECT_TRUE(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "%s/system.slice", root);
	EXPECT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/system.slice/docker-" HEX64 ".scope", root);
	EXPECT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/user", root);
	EXPECT_EQ(mkdir(path, 0755), 0);
	EXPECT_EQ(chown(path, 65534, 65534), 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(path, sizeof(path), "%s/user/g%d", root, i);
		EXPECT_EQ(mkdir(path, 0755), 0);
		EXPECT_EQ(chown(path, 65534, 65534), 0);
	}
	snprintf(path, sizeof(path), "%s/user/docker-" HEX64 ".scope", root);
	EXPECT_EQ(mkdir(path, 0755), 0);
	EXPECT_EQ(chown(path, 65534, 65534), 0);

	n = cgroup_walk(root, pick_named, NULL, &v, &skipped);
	EXPECT_TRUE(n >= 1);
	EXPECT_TRUE(skipped > 0);
	for (int i = 0; i < n; i++) {
		if (!strcmp(v[i].name, "0123456789ab"))
			real++;
		else if (!strcmp(v[i].name, "0123456789ab~u65534"))
			copies++;
	}
	EXPECT_EQ(real, 1);
	EXPECT_TRUE(copies <= 1);
	free(v);
	v = NULL;
	/* the full id selects root's directory only */
	n = cgroup_find_container(root, HEX64, &v, err, sizeof(err));
	EXPECT_EQ(n, 1);
	if (n == 1)
		EXPECT_TRUE(strstr(v[0].path, "/system.slice/") != NULL);
	free(v);
	/* labels: the copy is told apart */
	EXPECT_EQ(cgroup_stat(root, "system.slice/docker-" HEX64 ".scope", &id_real, &level), 0);
	EXPECT_EQ(cgroup_stat(root, "user/docker-" HEX64 ".scope", &id_copy, &level), 0);
	names = cgroup_names__new(root);
	EXPECT_STREQ(cgroup_names__get(names, id_real), "0123456789ab");
	EXPECT_TRUE(strcmp(cgroup_names__get(names, id_copy), "0123456789ab") != 0);
	cgroup_names__free(names);

	snprintf(path, sizeof(path), "rm -rf %s", root);
	EXPECT_EQ(system(path), 0);
}

/* two containers whose ids share their first 12 hex digits are labelled with their full ids */
TEST(shared_short_id_gets_full_labels)
{
	char root[] = "/tmp/jprof-test-cgroup.XXXXXX", path[512];
	static const char a[] = "0123456789ab" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			  b[] = "0123456789ab" "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
			  o[] = "fedcba987654" "cccccccccccccccccccccccccccccccccccccccccccccccccccc";
	struct cgroup_names *names;
	__u64 ia = 0, ib = 0, io = 0, inner = 0;
	__u32 level;

	EXPECT_TRUE(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "%s/docker-%s.scope", root, a);
	EXPECT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/docker-%s.scope/inner", root, a);
	EXPECT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/docker-%s.scope", root, b);
	EXPECT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/docker-%s.scope", root, o);
	EXPECT_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "docker-%s.scope", a);
	EXPECT_EQ(cgroup_stat(root, path, &ia, &level), 0);
	snprintf(path, sizeof(path), "docker-%s.scope/inner", a);
	EXPECT_EQ(cgroup_stat(root, path, &inner, &level), 0);
	snprintf(path, sizeof(path), "docker-%s.scope", b);
	EXPECT_EQ(cgroup_stat(root, path, &ib, &level), 0);
	snprintf(path, sizeof(path), "docker-%s.scope", o);
	EXPECT_EQ(cgroup_stat(root, path, &io, &level), 0);
	names = cgroup_names__new(root);
	ASSERT_TRUE(names != NULL);
	EXPECT_STREQ(cgroup_names__get(names, ia), a);
	EXPECT_STREQ(cgroup_names__get(names, inner), a); /* its own container: the same */
	EXPECT_STREQ(cgroup_names__get(names, ib), b);
	EXPECT_STREQ(cgroup_names__get(names, io), "fedcba987654"); /* alone: short */
	cgroup_names__free(names);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	EXPECT_EQ(system(path), 0);
}

TEST(control_characters_are_escaped)
{
	char buf[64];

	EXPECT_STREQ(tty_escape("a\x1b[2Jb\\c\n", buf, sizeof(buf), 0), "a\\x1b[2Jb\\\\c\\x0a");
	EXPECT_STREQ(tty_escape("line\x07\n", buf, sizeof(buf), 1), "line\\x07\n");
	/* cut before an escape that would not fit whole */
	EXPECT_STREQ(tty_escape("abc\x1b", buf, 6, 0), "abc");
	EXPECT_STREQ(tty_escape("caf\xc3\xa9", buf, sizeof(buf), 0), "caf\xc3\xa9");
}

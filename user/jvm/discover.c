// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * discover.c: finds JVMs through /proc; every byte read there is untrusted and may vanish.
 * This file probes a process (its maps, JDK release, container, user); discover_proc.c
 * reads /proc files within bounds, discover_cmdline.c its command line and environment.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "discover.h"
#include "discover_int.h"
#include "util/safe_open.h"
#include "util/cgroup.h"
#include "log.h"

/* pathname field of a maps line (after address, perms, offset, dev, inode), or NULL */
static char *maps_path(char *line)
{
	char *p = line;
	int field;

	for (field = 0; field < 5; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return NULL;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	while (*p == ' ')
		p++;
	if (*p != '/')
		return NULL;
	p[strcspn(p, "\n")] = '\0';
	return p;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * Scans maps for libjvm.so (fills java_home) and our agent. Returns 1 for a JVM, 0 when
 * libjvm.so is not mapped, -errno when maps cannot be read.
 */
static int scan_maps(int dfd, struct jvm_info *info)
{
	char *line, *path, *slash;
	int fd, is_jvm = 0, lines = 0, truncated = 0;
	FILE *f;

	fd = openat(dfd, "maps", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	line = malloc(MAPS_LINE_MAX);
	if (!line) {
		fclose(f);
		return -ENOMEM;
	}
	errno = 0;
	while (lines++ < MAPS_LINES_MAX && fgets(line, MAPS_LINE_MAX, f)) {
		/* the tail of an overlong line is not a line of its own */
		int was_truncated = truncated;

		truncated = !strchr(line, '\n') && !feof(f);
		if (was_truncated)
			continue;
		path = maps_path(line);
		if (!path)
			continue;
		if (ends_with(path, " (deleted)"))
			path[strlen(path) - strlen(" (deleted)")] = '\0';
		if (strstr(path, "libjprofagent") || strstr(path, "jprof-agent-"))
			info->agent = JVM_AGENT_LOADED;
		slash = strrchr(path, '/');
		if (is_jvm || strcmp(slash + 1, "libjvm.so"))
			continue;
		is_jvm = 1;
		/* <home>/lib/server/libjvm.so (9+), <home>/jre/lib/<arch>/server/libjvm.so (8) */
		*slash = '\0';
		slash = strstr(path, "/lib/");
		while (slash && strstr(slash + 1, "/lib/"))
			slash = strstr(slash + 1, "/lib/");
		if (slash && slash != path)
			dc_copy_clean(info->java_home, sizeof(info->java_home), path,
				      (size_t)(slash - path));
	}
	/* a process that exits mid-read makes read() fail with ESRCH or return short */
	if (ferror(f) && !is_jvm) {
		int err = errno ? -errno : -EIO;

		free(line);
		fclose(f);
		return err;
	}
	free(line);
	fclose(f);
	return is_jvm;
}

/*
 * A JDK's release file, which the JVM's user may have planted (a JDK unpacked in a home
 * directory): resolved inside the process's root with no symlink on any component
 * (java_home comes from /proc/<pid>/maps, where the kernel writes paths without links),
 * only a regular file (O_PATH first: a FIFO or device is never opened), and only one the
 * JVM's user could read itself (a hard link to a root-only file is not read for it).
 */
static int open_release(int root_fd, const char *path, uid_t uid)
{
	struct stat st;
	int fd;

	fd = safe_open_at(root_fd, path, SAFE_IN_ROOT, &SAFE_EXPECT_ANY, &st);
	if (fd < 0)
		return fd;
	if (!(st.st_mode & S_IROTH) && !(st.st_uid == uid && (st.st_mode & S_IRUSR))) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

/* JAVA_VERSION="17.0.15" from <home>/release, resolved inside the process's root */
static void read_version(int dfd, const char *home, uid_t uid, char *version, size_t version_len)
{
	char path[sizeof(((struct jvm_info *)0)->java_home) + 16], *buf;
	const char *v;
	int root_fd, fd, tries;
	size_t n;
	ssize_t len;

	dc_copy_clean(version, version_len, "?", 1);
	if (!*home)
		return;
	root_fd = openat(dfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return;
	buf = malloc(RELEASE_MAX);
	if (!buf)
		goto out_close;
	/* JDK 8 keeps release one level above the jre/ that holds libjvm.so */
	for (tries = 0; tries < 2; tries++) {
		if (tries == 0)
			snprintf(path, sizeof(path), "%s/release", home);
		else if (ends_with(home, "/jre"))
			snprintf(path, sizeof(path), "%.*s/release", (int)(strlen(home) - 4), home);
		else
			break;
		fd = open_release(root_fd, path, uid);
		if (fd < 0)
			continue;
		len = dc_read_bounded_fd(fd, buf, RELEASE_MAX);
		close(fd);
		if (len <= 0)
			continue;
		for (v = buf; v; v = strchr(v, '\n') ? strchr(v, '\n') + 1 : NULL) {
			if (!strncmp(v, "JAVA_VERSION=", 13))
				break;
		}
		if (!v)
			continue;
		v += 13;
		if (*v == '"')
			v++;
		n = strcspn(v, "\"\n");
		if (!n)
			continue;
		dc_copy_clean(version, version_len, v, n);
		break;
	}
	free(buf);
out_close:
	close(root_fd);
}

static int hex_lower(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* the last 64-hex run in s[0..len) that is not part of a longer word */
static const char *find_container_id(const char *s, size_t len)
{
	const char *found = NULL;
	size_t i = 0, n;

	while (i < len) {
		if (!hex_lower((unsigned char)s[i])) {
			i++;
			continue;
		}
		n = 0;
		while (i + n < len && hex_lower((unsigned char)s[i + n]))
			n++;
		if (n == CONTAINER_ID_LEN && (i == 0 || !isalnum((unsigned char)s[i - 1])) &&
		    (i + n == len || !isalnum((unsigned char)s[i + n])))
			found = s + i;
		i += n;
		while (i < len && isalnum((unsigned char)s[i]))
			i++;
	}
	return found;
}

void jvm_parse_cgroup(const char *buf, size_t len, char *container, size_t container_len)
{
	const char *line, *end = buf + len, *eol, *path, *id, *any = NULL, *v2 = NULL;

	if (container_len)
		container[0] = '\0';
	for (line = buf; line < end; line = eol + 1) {
		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		/* "hierarchy-id:controllers:path"; v2 is "0::path" */
		path = memchr(line, ':', (size_t)(eol - line));
		if (path)
			path = memchr(path + 1, ':', (size_t)(eol - path - 1));
		if (!path)
			continue;
		path++;
		id = find_container_id(path, (size_t)(eol - path));
		if (!id)
			continue;
		if (!strncmp(line, "0::", 3) && !v2)
			v2 = id;
		if (!any)
			any = id;
	}
	id = v2 ? v2 : any;
	if (id)
		dc_copy_clean(container, container_len, id, CONTAINER_SHORT);
}

void jvm_parse_cgroup_v2(const char *buf, size_t len, char *path, size_t path_len)
{
	const char *line, *end = buf + len, *eol;
	size_t l;

	if (path_len)
		path[0] = '\0';
	for (line = buf; line < end; line = eol + 1) {
		eol = memchr(line, '\n', (size_t)(end - line));
		if (!eol)
			eol = end;
		if ((size_t)(eol - line) < 4 || strncmp(line, "0::/", 4))
			continue;
		l = (size_t)(eol - line) - 3;
		/* a path cut short would name another cgroup: none rather than a wrong one */
		if (l >= path_len || memchr(line + 3, '\0', l))
			return;
		memcpy(path, line + 3, l);
		path[l] = '\0';
		return;
	}
}

static void user_name(uid_t uid, char *name, size_t name_len)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (!getpwuid_r(uid, &pw, buf, sizeof(buf), &res) && res && res->pw_name[0])
		dc_copy_clean(name, name_len, res->pw_name, strlen(res->pw_name));
	else
		snprintf(name, name_len, "%u", (unsigned int)uid);
}

int jvm_probe(const char *proc_root, __u32 pid, struct jvm_info *ret)
{
	char path[PATH_MAX], *buf = NULL;
	struct jvm_info info;
	unsigned long val;
	ssize_t len;
	int dfd, err;

	memset(&info, 0, sizeof(info));
	info.pid = pid;
	if (snprintf(path, sizeof(path), "%s/%u", proc_root, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = scan_maps(dfd, &info);
	if (err == 0)
		err = -ENOEXEC;
	if (err < 0)
		goto out_close;
	buf = malloc(STATUS_MAX);
	err = -ENOMEM;
	if (!buf)
		goto out_close;
	len = dc_read_bounded(dfd, "status", buf, STATUS_MAX);
	if (len < 0) {
		err = (int)len;
		goto out_close;
	}
	err = -EINVAL;
	if (dc_status_uint(buf, "Uid", 1, &val) || val > UINT32_MAX - 1)
		goto out_close;
	info.uid = (uid_t)val;
	if (dc_status_uint(buf, "Gid", 1, &val) || val > UINT32_MAX - 1)
		goto out_close;
	info.gid = (gid_t)val;
	/* NSpid appeared in 4.1; without it there are no pid namespaces to care about */
	info.nspid = pid;
	if (!dc_status_uint(buf, "NSpid", -1, &val) && val && val <= UINT32_MAX)
		info.nspid = (__u32)val;
	len = dc_read_bounded(dfd, "cgroup", buf, CGROUP_MAX);
	if (len > 0) {
		char label[CGROUP_NAME_LEN];

		jvm_parse_cgroup(buf, (size_t)len, info.container, sizeof(info.container));
		jvm_parse_cgroup_v2(buf, (size_t)len, info.cgroup, sizeof(info.cgroup));
		/* the name samples of this cgroup get (a pod's too), when v2 names one */
		cgroup_path_label(info.cgroup, label, sizeof(label));
		if (label[0])
			snprintf(info.container, sizeof(info.container), "%s", label);
	}
	dc_read_cmdline_env(dfd, &info);
	read_version(dfd, info.java_home, info.uid, info.version, sizeof(info.version));
	user_name(info.uid, info.user, sizeof(info.user));
	*ret = info;
	err = 0;
out_close:
	free(buf);
	close(dfd);
	/* a process that exited while we read it is simply gone */
	if (err == -ENOENT)
		err = -ESRCH;
	return err;
}

static int cmp_pid(const void *a, const void *b)
{
	__u32 x = ((const struct jvm_info *)a)->pid, y = ((const struct jvm_info *)b)->pid;

	return (x > y) - (x < y);
}

int jvm_discover(const char *proc_root, struct jvm_info **ret)
{
	struct jvm_info *arr = NULL, *tmp;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir(proc_root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long pid;
		char *end;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		errno = 0;
		pid = strtoul(de->d_name, &end, 10);
		if (errno || *end || !pid || pid > UINT32_MAX)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;

			if (ncap > SIZE_MAX / sizeof(*arr)) {
				err = -ENOMEM;
				goto out_free;
			}
			tmp = realloc(arr, ncap * sizeof(*arr));
			if (!tmp) {
				err = -ENOMEM;
				goto out_free;
			}
			arr = tmp;
			cap = ncap;
		}
		err = jvm_probe(proc_root, (__u32)pid, &arr[n]);
		if (err == -ENOMEM)
			goto out_free;
		if (err) {
			/* gone, not a JVM, or unreadable: not ours to list */
			if (err != -ESRCH && err != -ENOEXEC)
				pr_debug("discover: pid %lu skipped: %s", pid, strerror(-err));
			err = 0;
			continue;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(arr, n, sizeof(*arr), cmp_pid);
	*ret = arr;
	return (int)n;
out_free:
	closedir(d);
	free(arr);
	return err;
}

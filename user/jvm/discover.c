// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* discover.c: finds JVMs through /proc; every byte read there is untrusted and may vanish. */
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
#include "util/safe_open.h"
#include "util/cgroup.h"
#include "log.h"

/* size limits for files other users' processes control (or whose size they control) */
#define STATUS_MAX	 (16 * 1024)
#define CMDLINE_MAX	 (128 * 1024)
#define ENVIRON_MAX	 (128 * 1024)
#define CGROUP_MAX	 (16 * 1024)
#define RELEASE_MAX	 (16 * 1024)
#define MAPS_LINE_MAX	 (PATH_MAX + 256)
#define MAPS_LINES_MAX	 (1 << 20)
#define CONTAINER_ID_LEN 64
#define CONTAINER_SHORT	 12

/* tri-state of -XX:[+-]DisableAttachMechanism while scanning options in JVM order */
enum { ATTACH_FLAG_UNSET = -1, ATTACH_FLAG_OFF = 0, ATTACH_FLAG_ON = 1 };

int jvm_open_in_root(int root_fd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (__u64)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd >= 0)
		return fd;
	if (errno != ENOSYS)
		return -errno;
	/* before 5.6: no in-root resolution; at least never follow the last component */
	while (*path == '/')
		path++;
	fd = openat(root_fd, *path ? path : ".", flags | O_CLOEXEC | O_NOFOLLOW, mode);
	return fd < 0 ? -errno : fd;
}

/* reads at most cap - 1 bytes of dir_fd/name into buf, NUL-terminated; returns length or -errno */
static ssize_t read_bounded_fd(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while (len < cap - 1) {
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

static ssize_t read_bounded(int dir_fd, const char *name, char *buf, size_t cap)
{
	ssize_t len;
	int fd;

	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	len = read_bounded_fd(fd, buf, cap);
	close(fd);
	return len;
}

/* copies src[0..len) to dst, stopping at NUL, replacing bytes a terminal might act on */
static void copy_clean(char *dst, size_t dst_len, const char *src, size_t len)
{
	size_t i;

	if (!dst_len)
		return;
	for (i = 0; i < len && i < dst_len - 1 && src[i]; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[i] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	dst[i] = '\0';
}

/* value of "key:" at the start of a line in a status-like buffer, or NULL */
static const char *status_value(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			p += klen + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* n-th (0-based) whitespace-separated unsigned field of a status line; n < 0: the last one */
static int status_uint(const char *buf, const char *key, int n, unsigned long *ret)
{
	const char *p = status_value(buf, key);
	unsigned long val = 0;
	int i = 0, found = 0;

	if (!p)
		return -ENOENT;
	while (*p && *p != '\n') {
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n')
			break;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		val = strtoul(p, &end, 10);
		if (errno || (*end && *end != ' ' && *end != '\t' && *end != '\n'))
			return -EINVAL;
		if (i == n) {
			*ret = val;
			return 0;
		}
		found = 1;
		i++;
		p = end;
	}
	if (n < 0 && found) {
		*ret = val;
		return 0;
	}
	return -ENOENT;
}

/* SigCgt bit of sig in a status buffer: 1, 0, or -EINVAL when absent or malformed */
static int status_sig_caught(const char *buf, int sig)
{
	unsigned long long mask;
	const char *p;
	char *end;

	p = status_value(buf, "SigCgt");
	if (!p || !isxdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	mask = strtoull(p, &end, 16);
	if (errno || (*end && *end != '\n'))
		return -EINVAL;
	return (mask >> (sig - 1)) & 1;
}

int jvm_signal_caught_fd(int status_fd, int sig)
{
	char *buf;
	ssize_t len = 0, n;
	int err;

	if (sig < 1 || sig > 64)
		return -EINVAL;
	buf = malloc(STATUS_MAX);
	if (!buf)
		return -ENOMEM;
	/* proc files are generated at each read from offset 0: this is the state now */
	while (len < STATUS_MAX - 1) {
		n = pread(status_fd, buf + len, STATUS_MAX - 1 - (size_t)len, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0)
				len = -errno;
			break;
		}
		len += n;
	}
	if (len < 0) {
		err = len == -ESRCH || len == -ENOENT ? -ESRCH : (int)len;
		goto out_free;
	}
	buf[len] = '\0';
	err = status_sig_caught(buf, sig);
out_free:
	free(buf);
	return err;
}

int jvm_signal_caught(const char *proc_root, __u32 pid, int sig)
{
	char path[PATH_MAX];
	int fd, err;

	if (sig < 1 || sig > 64)
		return -EINVAL;
	if (snprintf(path, sizeof(path), "%s/%u/status", proc_root, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = jvm_signal_caught_fd(fd, sig);
	close(fd);
	return err;
}

int jvm_parse_groups(const char *buf, size_t len, gid_t *groups, int max)
{
	const char *p = buf, *end = buf + len;
	int n = 0;

	/* "Groups:" then space-separated decimal gids up to the end of the line */
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) >= 7 && !memcmp(p, "Groups:", 7)) {
			p += 7;
			while (p < eol) {
				unsigned long long v = 0;
				int digits = 0;

				while (p < eol && (*p == ' ' || *p == '\t'))
					p++;
				if (p == eol)
					break;
				while (p < eol && *p >= '0' && *p <= '9') {
					v = v * 10 + (unsigned long long)(*p - '0');
					if (++digits > 10)
						return -EINVAL;
					p++;
				}
				if (!digits || (p < eol && *p != ' ' && *p != '\t') ||
				    v >= 0xffffffffULL)
					return -EINVAL;
				if (n >= max)
					return -E2BIG;
				groups[n++] = (gid_t)v;
			}
			return n;
		}
		p = eol + 1;
	}
	return -ENOENT;
}

int jvm_read_groups(const char *proc_root, __u32 pid, gid_t *groups, int max)
{
	char path[PATH_MAX], *buf;
	ssize_t len;
	int dfd, err;

	if (snprintf(path, sizeof(path), "%s/%u", proc_root, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = malloc(STATUS_MAX);
	if (!buf) {
		close(dfd);
		return -ENOMEM;
	}
	len = read_bounded(dfd, "status", buf, STATUS_MAX);
	close(dfd);
	if (len < 0)
		err = len == -ENOENT ? -ESRCH : (int)len;
	else
		err = jvm_parse_groups(buf, (size_t)len, groups, max);
	free(buf);
	return err;
}

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
			copy_clean(info->java_home, sizeof(info->java_home), path,
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

	copy_clean(version, version_len, "?", 1);
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
		len = read_bounded_fd(fd, buf, RELEASE_MAX);
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
		copy_clean(version, version_len, v, n);
		break;
	}
	free(buf);
out_close:
	close(root_fd);
}

static int is_opt_with_arg(const char *a)
{
	/* launcher options whose value is the next argument (java --help, --help-extra) */
	static const char *const with_arg[] = {
		"-cp",
		"-classpath",
		"--class-path",
		"-p",
		"--module-path",
		"--upgrade-module-path",
		"--add-modules",
		"--add-opens",
		"--add-exports",
		"--add-reads",
		"--patch-module",
		"--limit-modules",
		"-d",
		"--describe-module",
		"--enable-native-access",
		"--source",
	};
	size_t i;

	for (i = 0; i < sizeof(with_arg) / sizeof(with_arg[0]); i++)
		if (!strcmp(a, with_arg[i]))
			return 1;
	return 0;
}

static void attach_flag_of(const char *a, int *state)
{
	if (!strcmp(a, "-XX:+DisableAttachMechanism"))
		*state = ATTACH_FLAG_ON;
	else if (!strcmp(a, "-XX:-DisableAttachMechanism"))
		*state = ATTACH_FLAG_OFF;
}

/*
 * The JDK's tool launchers (javac, jar...) start their tool's main class from a module:
 * their own arguments are the tool's (javac's first source file is no main class).
 */
static const char *tool_main(const char *argv0, size_t len)
{
	static const char *const tools[][2] = {
		{"javac", "com.sun.tools.javac.Main"},
		{"jar", "sun.tools.jar.Main"},
		{"javadoc", "jdk.javadoc.internal.tool.Main"},
		{"jshell", "jdk.internal.jshell.tool.JShellToolProvider"},
		{"jlink", "jdk.tools.jlink.internal.Main"},
		{"jdeps", "com.sun.tools.jdeps.Main"},
		{"jpackage", "jdk.jpackage.main.Main"},
		{"jcmd", "sun.tools.jcmd.JCmd"},
		{"jps", "sun.tools.jps.Jps"},
		{"jstack", "sun.tools.jstack.JStack"},
		{"jmap", "sun.tools.jmap.JMap"},
		{"jstat", "sun.tools.jstat.Jstat"},
		{"jfr", "jdk.jfr.internal.tool.Main"},
		{"keytool", "sun.security.tools.keytool.Main"},
		{"serialver", "sun.tools.serialver.SerialVer"},
	};
	const char *base = memrchr(argv0, '/', len);
	size_t blen;

	base = base ? base + 1 : argv0;
	blen = len - (size_t)(base - argv0);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (strlen(tools[i][0]) == blen && !memcmp(base, tools[i][0], blen))
			return tools[i][1];
	return NULL;
}

/* like jvm_parse_cmdline, leaving *state alone when the flag is absent */
static void parse_cmdline(const char *buf, size_t len, char *main, size_t main_len, int *state)
{
	const char *end = buf + len, *a, *next;
	int argi = 0, take_next = 0, skip_next = 0;
	const char *tool = NULL;

	if (main_len)
		main[0] = '\0';
	for (a = buf; a < end; a = next, argi++) {
		size_t alen = strnlen(a, (size_t)(end - a));

		next = a + alen + 1;
		if (argi == 0) { /* the launcher itself */
			tool = tool_main(a, alen);
			if (tool)
				copy_clean(main, main_len, tool, strlen(tool));
			continue;
		}
		if (tool) { /* only the attach flags of -J options matter */
			if (!strncmp(a, "-J", 2) && alen > 2 && a + alen < end)
				attach_flag_of(a + 2, state);
			continue;
		}
		if (take_next) {
			copy_clean(main, main_len, a, alen);
			return;
		}
		if (skip_next) {
			skip_next = 0;
			continue;
		}
		if (alen == (size_t)(end - a)) {
			/* last argument not NUL-terminated (truncated read): compare on a copy */
			char tmp[64];

			copy_clean(tmp, sizeof(tmp), a, alen);
			attach_flag_of(tmp, state);
			if (tmp[0] != '-' && tmp[0] != '@' && alen)
				copy_clean(main, main_len, a, alen);
			return;
		}
		if (!strcmp(a, "-jar") || !strcmp(a, "-m") || !strcmp(a, "--module")) {
			take_next = 1;
		} else if (!strncmp(a, "--module=", 9)) {
			copy_clean(main, main_len, a + 9, alen - 9);
			return;
		} else if (is_opt_with_arg(a)) {
			skip_next = 1;
		} else if (a[0] == '-' || a[0] == '@' || !alen) {
			attach_flag_of(a, state);
		} else {
			copy_clean(main, main_len, a, alen);
			return;
		}
	}
}

void jvm_parse_cmdline(const char *buf, size_t len, char *main, size_t main_len, int *ret_no_attach)
{
	int state = ATTACH_FLAG_UNSET;

	parse_cmdline(buf, len, main, main_len, &state);
	*ret_no_attach = state == ATTACH_FLAG_ON;
}

/* applies -XX:[+-]DisableAttachMechanism tokens of an options variable (space separated) */
static void scan_env_options(const char *val, size_t len, int *state)
{
	char tok[64];
	size_t i = 0, n;

	while (i < len) {
		while (i < len && isspace((unsigned char)val[i]))
			i++;
		n = 0;
		while (i + n < len && !isspace((unsigned char)val[i + n]))
			n++;
		if (n && n < sizeof(tok)) {
			memcpy(tok, val + i, n);
			tok[n] = '\0';
			attach_flag_of(tok, state);
		}
		i += n;
	}
}

/* value of NAME= in a NUL-separated environ buffer, or NULL */
static const char *environ_value(const char *buf, size_t len, const char *name, size_t *ret_len)
{
	size_t nlen = strlen(name);
	const char *p = buf, *end = buf + len;

	while (p < end) {
		size_t elen = strnlen(p, (size_t)(end - p));

		if (elen > nlen && !strncmp(p, name, nlen) && p[nlen] == '=') {
			*ret_len = elen - nlen - 1;
			return p + nlen + 1;
		}
		p += elen + 1;
	}
	return NULL;
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
		copy_clean(container, container_len, id, CONTAINER_SHORT);
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
		copy_clean(name, name_len, res->pw_name, strlen(res->pw_name));
	else
		snprintf(name, name_len, "%u", (unsigned int)uid);
}

/* the option state HotSpot ends up with: JAVA_TOOL_OPTIONS < command line < _JAVA_OPTIONS */
static void read_cmdline_env(int dfd, struct jvm_info *info)
{
	int state = ATTACH_FLAG_UNSET, cmd_state = ATTACH_FLAG_UNSET;
	const char *v;
	ssize_t len, elen;
	size_t vlen;
	char *buf, *env;

	buf = malloc(CMDLINE_MAX);
	env = malloc(ENVIRON_MAX);
	if (!buf || !env)
		goto out_free;
	elen = read_bounded(dfd, "environ", env, ENVIRON_MAX);
	v = elen > 0 ? environ_value(env, (size_t)elen, "JAVA_TOOL_OPTIONS", &vlen) : NULL;
	if (v)
		scan_env_options(v, vlen, &state);
	len = read_bounded(dfd, "cmdline", buf, CMDLINE_MAX);
	if (len > 0) {
		parse_cmdline(buf, (size_t)len, info->main, sizeof(info->main), &cmd_state);
		if (cmd_state != ATTACH_FLAG_UNSET)
			state = cmd_state;
		/* not started by the java launcher (embedded JVM): name the executable */
		if (!info->main[0]) {
			const char *base = strrchr(buf, '/');

			base = base ? base + 1 : buf;
			copy_clean(info->main, sizeof(info->main), base, strlen(base));
		}
	}
	v = elen > 0 ? environ_value(env, (size_t)elen, "_JAVA_OPTIONS", &vlen) : NULL;
	if (v)
		scan_env_options(v, vlen, &state);
	if (state == ATTACH_FLAG_ON && info->agent != JVM_AGENT_LOADED)
		info->agent = JVM_AGENT_NO_ATTACH;
out_free:
	free(buf);
	free(env);
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
	len = read_bounded(dfd, "status", buf, STATUS_MAX);
	if (len < 0) {
		err = (int)len;
		goto out_close;
	}
	err = -EINVAL;
	if (status_uint(buf, "Uid", 1, &val) || val > UINT32_MAX - 1)
		goto out_close;
	info.uid = (uid_t)val;
	if (status_uint(buf, "Gid", 1, &val) || val > UINT32_MAX - 1)
		goto out_close;
	info.gid = (gid_t)val;
	/* NSpid appeared in 4.1; without it there are no pid namespaces to care about */
	info.nspid = pid;
	if (!status_uint(buf, "NSpid", -1, &val) && val && val <= UINT32_MAX)
		info.nspid = (__u32)val;
	len = read_bounded(dfd, "cgroup", buf, CGROUP_MAX);
	if (len > 0) {
		char label[CGROUP_NAME_LEN];

		jvm_parse_cgroup(buf, (size_t)len, info.container, sizeof(info.container));
		jvm_parse_cgroup_v2(buf, (size_t)len, info.cgroup, sizeof(info.cgroup));
		/* the name samples of this cgroup get (a pod's too), when v2 names one */
		cgroup_path_label(info.cgroup, label, sizeof(label));
		if (label[0])
			snprintf(info.container, sizeof(info.container), "%s", label);
	}
	read_cmdline_env(dfd, &info);
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

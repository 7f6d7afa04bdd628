// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* agent_files.c: find a JVM's agent channel files (jprof-<nspid>-<token>.{ring,dict}) through its maps. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jvm/agent_files.h"
#include "log.h"
#include "ring.h"
#include "util/safe_open.h"

/* path ends in "jprof-<nspid>-<token>.<ext>" (2: "jprof-<nspid>.<ext>"), ext 4 letters */
static int name_match(const char *path, __u32 nspid, const char *ext, const char **ret_base)
{
	const size_t tail = JP_CHAN_TOKEN_LEN + 5;
	char want[32];
	size_t n = strlen(path), wn;

	if (n < 5 || path[n - 5] != '.' || strcmp(path + n - 4, ext))
		return 0;
	wn = (size_t)snprintf(want, sizeof(want), "jprof-%u.%s", nspid, ext);
	if (n >= wn && !strcmp(path + n - wn, want) && (n == wn || path[n - wn - 1] == '/'))
		return 2;
	wn = (size_t)snprintf(want, sizeof(want), "jprof-%u-", nspid);
	if (n < wn + tail || strncmp(path + n - tail - wn, want, wn) ||
	    (n > wn + tail && path[n - tail - wn - 1] != '/'))
		return 0;
	if (strspn(path + n - tail, "0123456789abcdef") != JP_CHAN_TOKEN_LEN)
		return 0;
	if (ret_base)
		*ret_base = path + n - tail - wn;
	return 1;
}

int jvm_chan_name_match(const char *path, __u32 nspid, const char **ret_base)
{
	return name_match(path, nspid, "ring", ret_base);
}

/* "start-end perms offset major:minor inode path": the path, or "" */
static const char *maps_path(const char *line)
{
	int off = 0;

	(void)sscanf(line, "%*x-%*x %*4s %*x %*x:%*x %*u %n", &off);
	return line + off;
}

int jvm_chan_files_find(__u32 pid, __u32 nspid, struct jvm_chan_files *ret)
{
	char path[64], line[4096];
	size_t lines = 0, bytes = 0, n;
	const char *p, *base;
	bool partial = false, old = false;
	int found = 0, err;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		n = strlen(line);
		bytes += n;
		if (bytes > JVM_MAPS_MAX_BYTES || lines > JVM_MAPS_MAX_LINES)
			break;
		/* the rest of a longer line: its path is not ours (ours fit the buffer) */
		if (partial) {
			partial = line[n - 1] != '\n';
			continue;
		}
		lines++;
		partial = line[n - 1] != '\n';
		if (partial)
			continue;
		line[n - 1] = '\0';
		p = maps_path(line);
		switch (jvm_chan_name_match(p, nspid, &base)) {
		case 1:
			found = 1;
			break;
		case 2:
			old = true;
			break;
		}
	}
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (found) {
		n = strlen(base) - (sizeof(".ring") - 1);
		snprintf(ret->ring, sizeof(ret->ring), "%s", base);
		snprintf(ret->dict, sizeof(ret->dict), "%.*s.dict", (int)n, base);
		return 0;
	}
	if (old) {
		pr_warn("JVM %u: its jprof agent is of an older version (channel file "
			"jprof-%u.ring), this jprof reads version %u: no Java stacks from it "
			"(restart the JVM)",
			pid, nspid, JP_RING_VERSION);
		return -EPROTO;
	}
	if (err)
		return err;
	return bytes > JVM_MAPS_MAX_BYTES || lines > JVM_MAPS_MAX_LINES ? -E2BIG : -ENOENT;
}

/* a ring of jvm's user in the directory tmp_fd that began before start_ns */
static bool ring_stale(int tmp_fd, const char *name, uid_t uid, __u64 start_ns)
{
	struct safe_expect exp = {.uid = uid, .one_link = true};
	struct jp_ring_hdr h;
	bool stale;
	int fd;

	fd = safe_open_at(tmp_fd, name, SAFE_BENEATH | SAFE_SAME_MOUNT, &exp, NULL);
	if (fd < 0)
		return false;
	stale = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.magic == JP_RING_MAGIC &&
		h.start_ns < start_ns;
	close(fd);
	return stale;
}

int jvm_chan_files_sweep(int tmp_fd, __u32 nspid, uid_t uid, __u64 start_ns)
{
	unsigned int seen = 0;
	struct dirent *de;
	const char *base;
	char dict[64];
	struct stat st;
	int dfd, n = 0;
	DIR *d;

	if (!start_ns)
		return 0;
	dfd = openat(tmp_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while (seen++ < JVM_TMP_MAX_ENTRIES && (de = readdir(d))) {
		if (name_match(de->d_name, nspid, "ring", &base) != 1)
			continue;
		/* another user's file is not this JVM's: never opened, never removed */
		if (fstatat(tmp_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    st.st_uid != uid || !ring_stale(tmp_fd, de->d_name, uid, start_ns))
			continue;
		snprintf(dict, sizeof(dict), "%.*s.dict", (int)(strlen(de->d_name) - 5),
			 de->d_name);
		/* by name in that directory: unlink follows nothing */
		if (!unlinkat(tmp_fd, de->d_name, 0))
			n++;
		if (!fstatat(tmp_fd, dict, &st, AT_SYMLINK_NOFOLLOW) && st.st_uid == uid &&
		    !unlinkat(tmp_fd, dict, 0))
			n++;
	}
	closedir(d);
	return n;
}

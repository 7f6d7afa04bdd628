// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_proc_status.c: a fake /proc/<pid> (maps, status, cgroup, cmdline, environ and the
 * JDK's release file under root/) -> jvm_probe, the way discovery reads a process, plus
 * the status readers the attach uses (SigCgt, Groups) and the exposed parsers on the raw bytes.
 * Input: u8 sig, then six sections, each u16 length, u8 repeat (the file holds the bytes
 * 1 + repeat times, up to 512 KiB) + bytes: maps, status, cgroup, cmdline, environ, release
 * (the last takes the rest; a JVM's libjvm.so under /j/lib/server/ finds release at root/j/).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/discover.h"

#define PID	 4242
#define FILE_MAX (512 * 1024)

static const char *const names[] = {"maps",    "status",  "cgroup",
				    "cmdline", "environ", "root/j/release"};
#define NSECT (sizeof(names) / sizeof(names[0]))

static char proc_root[64], pid_dir[96];

/* the bytes reps times over: small inputs reach the readers' size caps (128 KiB cmdline) */
static void put(const char *name, const uint8_t *p, size_t n, size_t reps)
{
	char path[160];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", pid_dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	for (size_t r = 0; r < reps && n && (r + 1) * n <= FILE_MAX; r++)
		if (write(fd, p, n) != (ssize_t)n)
			abort();
	close(fd);
}

static void cleanup(void)
{
	char path[160];

	for (size_t i = 0; i < NSECT; i++) {
		snprintf(path, sizeof(path), "%s/%s", pid_dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/root/j", pid_dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/root", pid_dir);
	rmdir(path);
	rmdir(pid_dir);
	rmdir(proc_root);
}

static void setup_once(void)
{
	char path[160];

	snprintf(proc_root, sizeof(proc_root), "/tmp/fuzz-proc-%d", (int)getpid());
	snprintf(pid_dir, sizeof(pid_dir), "%s/%d", proc_root, PID);
	if ((mkdir(proc_root, 0700) && errno != EEXIST) ||
	    (mkdir(pid_dir, 0700) && errno != EEXIST))
		abort();
	snprintf(path, sizeof(path), "%s/root", pid_dir);
	if (mkdir(path, 0700) && errno != EEXIST)
		abort();
	snprintf(path, sizeof(path), "%s/root/j", pid_dir);
	if (mkdir(path, 0700) && errno != EEXIST)
		abort();
	atexit(cleanup);
}

static void check_str(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	/* NUL-terminated in its field, nothing a terminal acts on */
	if (n == cap)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sect[NSECT];
	size_t len[NSECT];
	char main_cls[256], container[80], path[160];
	gid_t groups[64];
	struct jvm_info info;
	int sig, fd, ret, no_attach;

	if (!proc_root[0])
		setup_once();
	if (size < 1)
		return 0;
	sig = data[0] % 70; /* out of range too */
	data++;
	size--;
	for (size_t i = 0; i < NSECT; i++) {
		size_t n = size >= 3 ? (size_t)(data[0] | data[1] << 8) : 0;
		size_t reps = size >= 3 ? 1 + (size_t)data[2] : 1;

		data += size >= 3 ? 3 : size;
		size -= size >= 3 ? 3 : size;
		if (n > size || i == NSECT - 1)
			n = size;
		sect[i] = data;
		len[i] = n;
		put(names[i], data, n, reps);
		data += n;
		size -= n;
	}

	memset(&info, 0x55, sizeof(info));
	ret = jvm_probe(proc_root, PID, &info);
	if (getenv("FUZZ_PROC_VERBOSE")) /* to see what a corpus file reaches */
		fprintf(stderr,
			"probe %d: nspid %u uid %u main \"%.40s\" container \"%s\" version \"%s\" "
			"agent %d\n",
			ret, ret ? 0 : info.nspid, ret ? 0 : (unsigned int)info.uid,
			ret ? "" : info.main, ret ? "" : info.container, ret ? "" : info.version,
			ret ? -1 : (int)info.agent);
	if (ret == 0) {
		if (info.pid != PID || !info.nspid || info.uid == (uid_t)-1 ||
		    info.gid == (gid_t)-1)
			abort();
		check_str(info.user, sizeof(info.user));
		check_str(info.version, sizeof(info.version));
		check_str(info.main, sizeof(info.main));
		check_str(info.container, sizeof(info.container));
		check_str(info.java_home, sizeof(info.java_home));
	} else if (ret != -ENOEXEC && ret != -EINVAL && ret != -ESRCH) {
		abort();
	}

	snprintf(path, sizeof(path), "%s/status", pid_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		abort();
	ret = jvm_signal_caught_fd(fd, sig);
	if (ret != 0 && ret != 1 && ret != -EINVAL)
		abort();
	close(fd);
	ret = jvm_read_groups(proc_root, PID, groups, (int)(sizeof(groups) / sizeof(groups[0])));
	if (ret > (int)(sizeof(groups) / sizeof(groups[0])))
		abort();
	ret = jvm_parse_groups((const char *)sect[1], len[1], groups, 4);
	if (ret > 4)
		abort();

	/* the parsers on the raw bytes: no NUL at the end, sizes down to 1 */
	jvm_parse_cgroup((const char *)sect[2], len[2], container, 1 + sig % sizeof(container));
	check_str(container, sizeof(container));
	jvm_parse_cmdline((const char *)sect[3], len[3], main_cls,
			  1 + (size_t)sig * 3 % sizeof(main_cls), &no_attach);
	check_str(main_cls, sizeof(main_cls));
	if (no_attach != 0 && no_attach != 1)
		abort();
	return 0;
}

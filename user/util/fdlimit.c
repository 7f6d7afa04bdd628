// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fdlimit.c: RLIMIT_NOFILE raised at start; use near it and EMFILE are reported once. */
#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>

#include "util/fdlimit.h"
#include "log.h"

#define SOFT_MAX    (1ul << 20) /* the kernel's default fs.nr_open */
#define CHECK_EVERY 2000000000ull

static unsigned long soft_limit, in_use;
static __u64 next_check_ns, exhausted;
static bool warned_near, warned_out;

unsigned long fdlimit_raise(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit want = rl;

		want.rlim_cur = rl.rlim_max > SOFT_MAX ? SOFT_MAX : rl.rlim_max;
		if (want.rlim_cur > rl.rlim_cur && !setrlimit(RLIMIT_NOFILE, &want))
			rl.rlim_cur = want.rlim_cur;
	}
	soft_limit = rl.rlim_cur == RLIM_INFINITY ? SOFT_MAX : (unsigned long)rl.rlim_cur;
	return soft_limit;
}

unsigned long fdlimit_soft(void)
{
	struct rlimit rl;

	if (!soft_limit && !getrlimit(RLIMIT_NOFILE, &rl))
		soft_limit = rl.rlim_cur == RLIM_INFINITY ? SOFT_MAX : (unsigned long)rl.rlim_cur;
	return soft_limit;
}

/* open fds, counted up to limit + 1 (a count past it means nothing more) */
static unsigned long count_fds(unsigned long limit)
{
	unsigned long n = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return in_use; /* no fd left for the directory: keep the last count */
	while (n <= limit && (d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n ? n - 1 : 0; /* the directory's own fd */
}

unsigned long fdlimit_check(__u64 now_ns)
{
	unsigned long limit = fdlimit_soft();

	if (!limit || now_ns < next_check_ns)
		return in_use;
	next_check_ns = now_ns + CHECK_EVERY;
	in_use = count_fds(limit);
	if (!warned_near && in_use > limit / 4 * 3) {
		warned_near = true;
		pr_warn("%lu of %lu file descriptors in use: new JVMs may not be watched or "
			"attached; raise the limit (ulimit -n) and run again",
			in_use, limit);
	}
	return in_use;
}

bool fdlimit_room(void)
{
	unsigned long limit = fdlimit_soft();

	return !limit || in_use < limit / 2;
}

void fdlimit_note(int err, const char *what)
{
	if (err != -EMFILE && err != -ENFILE)
		return;
	exhausted++;
	/* until the next count, assume the worst: budgets that ask fdlimit_room() back off */
	in_use = fdlimit_soft();
	next_check_ns = 0;
	if (warned_out)
		return;
	warned_out = true;
	pr_warn("out of file descriptors (%s, limit %lu) opening %s: some JVMs will not be "
		"watched or attached; raise the limit (ulimit -n) and run again",
		err == -EMFILE ? "this process" : "the whole system", fdlimit_soft(), what);
}

__u64 fdlimit_exhausted(void)
{
	return exhausted;
}

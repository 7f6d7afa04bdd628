// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* attach_test.c: drives jvm_probe + jvm_attach_agent for tests/e2e/attach.bats. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/attach.h"
#include "jvm/discover.h"
#include "log.h"

static const char *const agent_states[] = {"none", "loaded", "no-attach"};

static int parse_pid(const char *s, __u32 *ret)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || !v || v > 0x7fffffffUL)
		return -EINVAL;
	*ret = (__u32)v;
	return 0;
}

static void print_info(const struct jvm_info *j)
{
	printf("pid=%u nspid=%u uid=%u gid=%u user=%s version=%s main=%s container=%s "
	       "home=%s agent=%s\n",
	       j->pid, j->nspid, (unsigned int)j->uid, (unsigned int)j->gid, j->user, j->version,
	       j->main, j->container[0] ? j->container : "-", j->java_home, agent_states[j->agent]);
}

static int usage(void)
{
	fprintf(stderr, "usage: attach_test [-v] [-t TIMEOUT_MS] PID AGENT.so [OPTIONS]\n"
			"       attach_test [-v] --probe PID\n"
			"       attach_test [-v] --discover\n");
	return EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	struct jvm_info info, *all = NULL;
	int i = 1, timeout_ms = 10000, n, ret;
	char err[256];
	__u32 pid;

	if (i < argc && !strcmp(argv[i], "-v")) {
		log_set_level(LOG_DEBUG);
		i++;
	}
	if (i + 1 < argc && !strcmp(argv[i], "-t")) {
		__u32 v;

		if (parse_pid(argv[i + 1], &v))
			return usage();
		timeout_ms = (int)v;
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "--discover")) {
		n = jvm_discover("/proc", &all);
		if (n < 0) {
			printf("error: discover: %s\n", strerror(-n));
			return EXIT_FAILURE;
		}
		for (int k = 0; k < n; k++)
			print_info(&all[k]);
		free(all);
		return EXIT_SUCCESS;
	}
	if (i + 1 < argc && !strcmp(argv[i], "--probe")) {
		if (parse_pid(argv[i + 1], &pid))
			return usage();
		ret = jvm_probe("/proc", pid, &info);
		if (ret) {
			printf("error: probe: %s\n", strerror(-ret));
			return EXIT_FAILURE;
		}
		print_info(&info);
		return EXIT_SUCCESS;
	}
	if (argc - i < 2 || argc - i > 3 || parse_pid(argv[i], &pid))
		return usage();
	/* jvm_attach_agent re-reads /proc; a probe failure is its error to report */
	memset(&info, 0, sizeof(info));
	if (!jvm_probe("/proc", pid, &info))
		print_info(&info);
	info.pid = pid;
	ret = jvm_attach_agent(&info, argv[i + 1], argc - i > 2 ? argv[i + 2] : NULL, timeout_ms,
			       err, sizeof(err));
	if (ret < 0) {
		printf("error: %s (%s)\n", err, strerror(-ret));
		return EXIT_FAILURE;
	}
	printf("%s\n", ret == 1 ? "already loaded" : "attached");
	return EXIT_SUCCESS;
}

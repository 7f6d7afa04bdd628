// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* marker_agent.c: throwaway JVMTI agent for attach tests: appends a line to the file in its options. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jni.h>

/* options: "<marker file>" or "fail:<marker file>" (then Agent_OnAttach returns 42) */
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	const char *path = options ? options : "";
	int fail = !strncmp(path, "fail:", 5);
	char line[64];
	int fd, n;

	(void)vm;
	(void)reserved;
	if (fail)
		path += 5;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return 43;
	n = snprintf(line, sizeof(line), "attached pid=%d\n", (int)getpid());
	if (write(fd, line, (size_t)n) != n)
		fail = 1;
	close(fd);
	return fail ? 42 : 0;
}

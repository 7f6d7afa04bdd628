// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* discover_cmdline.c: a JVM's command line and environment: main class or tool, attach allowed */
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
				dc_copy_clean(main, main_len, tool, strlen(tool));
			continue;
		}
		if (tool) { /* only the attach flags of -J options matter */
			if (!strncmp(a, "-J", 2) && alen > 2 && a + alen < end)
				attach_flag_of(a + 2, state);
			continue;
		}
		if (take_next) {
			dc_copy_clean(main, main_len, a, alen);
			return;
		}
		if (skip_next) {
			skip_next = 0;
			continue;
		}
		if (alen == (size_t)(end - a)) {
			/* last argument not NUL-terminated (truncated read): compare on a copy */
			char tmp[64];

			dc_copy_clean(tmp, sizeof(tmp), a, alen);
			attach_flag_of(tmp, state);
			if (tmp[0] != '-' && tmp[0] != '@' && alen)
				dc_copy_clean(main, main_len, a, alen);
			return;
		}
		if (!strcmp(a, "-jar") || !strcmp(a, "-m") || !strcmp(a, "--module")) {
			take_next = 1;
		} else if (!strncmp(a, "--module=", 9)) {
			dc_copy_clean(main, main_len, a + 9, alen - 9);
			return;
		} else if (is_opt_with_arg(a)) {
			skip_next = 1;
		} else if (a[0] == '-' || a[0] == '@' || !alen) {
			attach_flag_of(a, state);
		} else {
			dc_copy_clean(main, main_len, a, alen);
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

/* the option state HotSpot ends up with: JAVA_TOOL_OPTIONS < command line < _JAVA_OPTIONS */
void dc_read_cmdline_env(int dfd, struct jvm_info *info)
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
	elen = dc_read_bounded(dfd, "environ", env, ENVIRON_MAX);
	v = elen > 0 ? environ_value(env, (size_t)elen, "JAVA_TOOL_OPTIONS", &vlen) : NULL;
	if (v)
		scan_env_options(v, vlen, &state);
	len = dc_read_bounded(dfd, "cmdline", buf, CMDLINE_MAX);
	if (len > 0) {
		parse_cmdline(buf, (size_t)len, info->main, sizeof(info->main), &cmd_state);
		if (cmd_state != ATTACH_FLAG_UNSET)
			state = cmd_state;
		/* not started by the java launcher (embedded JVM): name the executable */
		if (!info->main[0]) {
			const char *base = strrchr(buf, '/');

			base = base ? base + 1 : buf;
			dc_copy_clean(info->main, sizeof(info->main), base, strlen(base));
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

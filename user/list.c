// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* list.c: `jprof list`: the JVMs on this host, their agents and the events they have on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "list.h"
#include "log.h"
#include "jvm/agent_ring.h"
#include "jvm/discover.h"

/* the events an agent has switched on, for `jprof list` (jvm_agent__events_str) */
static void agent_events_str(const struct jvm_info *jvm, char *buf, size_t size)
{
	struct jvm_agent *a;

	snprintf(buf, size, "%s", jvm->agent == JVM_AGENT_LOADED ? "?" : "-");
	if (jvm->agent != JVM_AGENT_LOADED)
		return;
	a = jvm_agent__open(jvm->pid, jvm->nspid);
	if (a)
		(void)jvm_agent__events_str(a, buf, size);
	jvm_agent__free(a);
}

int list_run(const struct jp_opts *o)
{
	struct jvm_info *list = NULL;
	static const char *const state[] = { "none", "loaded", "attach-disabled" };
	int n;

	if (o->list_containers)
		return containers_list_run(o);
	n = jvm_discover("/proc", &list);
	if (n < 0) {
		pr_err("reading /proc: %s", strerror(-n));
		return JP_EXIT_FAILURE;
	}
	printf("%-8s %-8s %-12s %-10s %-15s %-16s %-12s %s\n", "PID", "NSPID", "USER", "VERSION",
	       "AGENT", "EVENTS", "CONTAINER", "MAIN");
	for (int i = 0; i < n; i++) {
		char ev[32];

		agent_events_str(&list[i], ev, sizeof(ev));
		printf("%-8u %-8u %-12s %-10s %-15s %-16s %-12s %s\n", list[i].pid, list[i].nspid,
		       list[i].user, list[i].version, state[list[i].agent % 3], ev,
		       list[i].container[0] ? list[i].container : "-", list[i].main);
	}
	free(list);
	return JP_EXIT_OK;
}

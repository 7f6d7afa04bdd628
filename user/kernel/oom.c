// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* oom.c: loads oom.bpf.c and hands its OOM kills to the daemon's triggers. */
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "kernel/oom.h"
#include "util/why.h"
#include "oom_event.h"
#include "oom.skel.h"

struct oom_watch {
	struct oom_bpf *skel;
	struct ring_buffer *rb;
	oom_fn fn;
	void *ctx;
};

static int on_event(void *ctx, void *data, size_t len)
{
	struct oom_watch *w = ctx;
	const struct jp_oom_event *e = data;
	char comm[JP_OOM_COMM_LEN + 1] = "", path[64];
	struct oom_kill k;

	if (len < sizeof(*e))
		return 0;
	memcpy(comm, e->comm, JP_OOM_COMM_LEN);
	if (!comm[0]) { /* a kernel before 6.8 passes the pid: its name while it is there */
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%u/comm", e->pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
	}
	k = (struct oom_kill){
		.time_ns = e->time_ns, .pid = e->pid, .tid = e->tid, .uid = e->uid, .comm = comm};
	w->fn(w->ctx, &k);
	return 0;
}

int oom_watch__start(struct oom_watch **ret, char *why, size_t why_len)
{
	struct oom_watch *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	w->skel = oom_bpf__open_and_load();
	if (!w->skel) {
		err = set_why(why, why_len, -errno, "oom.bpf.c would not load: %s",
			      strerror(errno));
		goto out_free;
	}
	err = oom_bpf__attach(w->skel);
	if (err) {
		set_why(why, why_len, err, "no oom:mark_victim tracepoint to attach to: %s",
			strerror(-err));
		goto out_free;
	}
	w->rb = ring_buffer__new(bpf_map__fd(w->skel->maps.oom_events), on_event, w, NULL);
	if (!w->rb) {
		err = set_why(why, why_len, -errno, "no ring buffer: %s", strerror(errno));
		goto out_free;
	}
	*ret = w;
	return 0;
out_free:
	oom_watch__free(w);
	return err;
}

int oom_watch__poll(struct oom_watch *w, oom_fn fn, void *ctx)
{
	w->fn = fn;
	w->ctx = ctx;
	return ring_buffer__consume(w->rb);
}

__u64 oom_watch__lost(const struct oom_watch *w)
{
	return w && w->skel->bss ? w->skel->bss->oom_lost : 0;
}

void oom_watch__free(struct oom_watch *w)
{
	if (!w)
		return;
	ring_buffer__free(w->rb);
	oom_bpf__destroy(w->skel);
	free(w);
}

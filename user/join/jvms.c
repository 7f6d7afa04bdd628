// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * jvms.c: the join's JVMs: registered (with or without an agent), found by pid (util/hmap),
 * named and labelled, their thread ids mapped (namespace tid to host tid),
 * retired when their process goes (the ring read to its end; the newest JOIN_RETIRED_KEEP
 * kept for the report, older ones added up), and what the capture side must learn of them
 * (join__take_updates), and the heartbeat that keeps their agents' events on.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "join/join_int.h"
#include "clock.h"
#include "log.h"
#include "opts.h"
#include "model/model.h"
#include "util/hmap.h"

/* the samples on a JVM's list of waiting ones (by jnode), freed unaccounted: the JVM goes */
static void pends_free(struct join *j, struct dl *h)
{
	while (!dl_empty(h)) {
		struct dl *n = h->next;

		dl_del(n);
		blk_free(&j->blk, dl_entry(n, struct pend, jnode));
	}
}

void jn_jvm_free(struct join *j, struct jvm_ent *e)
{
	if (!e)
		return;
	jwalk__free(e->jw);
	pends_free(j, &e->pend);
	pends_free(j, &e->jwait);
	pends_free(j, &e->early);
	vmnames__free(e->vn);
	j->early_bytes -= e->early_bytes;
	while (!dl_empty(&e->traces)) {
		struct dl *n = e->traces.next;

		dl_del(n);
		blk_free(&j->blk, dl_entry(n, struct ptr, jnode));
	}
	jvm_agent__free(e->a);
	free(e->tids);
	free(e->by_host);
	free(e);
}


/*
 * The live JVMs by pid (util/hmap): a lookup per sample costs a hash and a probe or two,
 * whatever the number of JVMs that came and went (they stay in jvms[] for the report only).
 */
struct jvm_ent *jn_find_jvm(const struct join *j, __u32 pid)
{
	const __u64 *v = hmap_find(&j->by_pid, pid);

	return v ? (struct jvm_ent *)(uintptr_t)*v : NULL;
}

void join__set_jvm_name(struct join *j, __u32 pid, const char *name)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e && name && *name) {
		snprintf(e->name, sizeof(e->name), "%s", name);
		/* its samples before it was known join its root */
		model__name_process(j->model, pid, e->name);
	}
}

bool join__only_jvm(const struct join *j, char *buf, size_t size)
{
	const struct jvm_ent *e = j->njvms && !j->folded.jvms ? j->jvms[0] : NULL;

	if (!e)
		return false;
	for (size_t i = 1; i < j->njvms; i++)
		if (j->jvms[i]->pid != e->pid)
			return false;
	if (!e || !e->name[0])
		return false;
	snprintf(buf, size, "%s [%u] %s", e->comm, e->pid, e->name);
	return true;
}

void join__set_jvm_cgroup(struct join *j, __u32 pid, __u64 cgroup_id)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e)
		e->cgroup = cgroup_id;
}

void join__set_jvm_note(struct join *j, __u32 pid, const char *note)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e)
		snprintf(e->note, sizeof(e->note), "%s", note);
}

void join__set_jvm_pending(struct join *j, __u32 pid, bool pending)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e)
		e->pending = pending;
}

bool join__knows_jvm(const struct join *j, __u32 pid)
{
	return jn_find_jvm(j, pid) != NULL;
}

bool join__has_jvm(const struct join *j, __u32 pid)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	return e && e->a;
}

/*
 * An update for the capture side waits in the join until the record loop takes it. Over
 * JOIN_UPDATES_MAX one that only saves signals is dropped (and counted); one that withdraws
 * a Method* BPF must no longer name is always kept.
 */
void jn_update(struct join *j, const struct join_update *u)
{
	bool must = u->kind == JOIN_UP_JW_METHOD && !u->on;

	if (j->nups >= JOIN_UPDATES_MAX && !must) {
		j->st.updates_dropped++;
		return;
	}
	if (j->nups == j->ups_cap) {
		size_t nc = j->ups_cap ? j->ups_cap * 2 : 256;
		struct join_update *nv = realloc(j->ups, nc * sizeof(*nv));

		if (!nv) {
			j->st.updates_dropped++; /* a withdrawal too: out of memory */
			return;
		}
		j->ups = nv;
		j->ups_cap = nc;
	}
	j->ups[j->nups++] = *u;
}

/* jwalk's callback: a Method* was learnt or forgotten */
void jn_jw_method(void *ctx, __u32 pid, __u64 method, bool known)
{
	jn_update(ctx,
		  &(struct join_update){
			  .kind = JOIN_UP_JW_METHOD, .pid = pid, .method = method, .on = known});
}

size_t join__take_updates(struct join *j, struct join_update *buf, size_t max)
{
	size_t n = j->nups < max ? j->nups : max;

	if (!n)
		return 0;
	memcpy(buf, j->ups, n * sizeof(*buf));
	memmove(j->ups, j->ups + n, (j->nups - n) * sizeof(*buf));
	j->nups -= n;
	return n;
}

int join__add_jvm(struct join *j, __u32 pid, __u32 nspid, const char *comm, struct jvm_agent *a)
{
	struct jvm_ent *e = jn_find_jvm(j, pid), **n;

	/* the agent's dictionary names its code: the perf map it also writes is not read */
	if (a)
		syms__perfmap_off(j->syms, pid);
	if (e) { /* a JVM known without agent that got one */
		jvm_agent__free(e->a);
		e->a = a;
		e->serial = ++j->serials; /* its Java frames are looked up anew */
		return 0;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->serial = ++j->serials;
	if (j->njvms == j->jvms_cap) {
		size_t nc = j->jvms_cap ? j->jvms_cap * 2 : 16;

		n = realloc(j->jvms, nc * sizeof(*n));
		if (!n) {
			free(e);
			return -ENOMEM;
		}
		j->jvms = n;
		j->jvms_cap = nc;
	}
	e->pid = pid;
	if (hmap_put(&j->by_pid, pid, (uintptr_t)e) < 0) {
		free(e);
		return -ENOMEM;
	}
	e->nspid = nspid;
	e->a = a;
	dl_init(&e->pend);
	dl_init(&e->traces);
	dl_init(&e->jwait);
	dl_init(&e->early);
	dl_init(&e->unresolved);
	snprintf(e->comm, sizeof(e->comm), "%s", comm ? comm : "java");
	j->jvms[j->njvms++] = e;
	return 0;
}

static int by_nstid(const void *a, const void *b)
{
	const struct tid_pair *x = a, *y = b;

	return x->nstid < y->nstid ? -1 : x->nstid > y->nstid;
}

static int by_tid(const void *a, const void *b)
{
	const struct tid_pair *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* both directions by binary search: a JVM in a container may have thousands of threads */
void jn_tidmap_rescan(struct jvm_ent *e, __u64 now)
{
	char path[64], line[256];
	struct dirent *de;
	size_t n = 0, cap = 0;
	struct tid_pair *v = NULL;
	DIR *d;

	e->tids_scanned_ns = now;
	snprintf(path, sizeof(path), "/proc/%u/task", e->pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned int tid, nstid = 0;
		FILE *f;

		if (sscanf(de->d_name, "%u", &tid) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/status", e->pid, tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "NSpid:", 6))
				continue;
			for (char *p = line + 6, *end; *p; p = end) {
				unsigned long x = strtoul(p, &end, 10);
				if (end == p)
					break;
				nstid = (__u32)x;
			}
			break;
		}
		fclose(f);
		if (!nstid)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct tid_pair *nv = realloc(v, nc * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		v[n].nstid = nstid;
		v[n].tid = tid;
		n++;
	}
	closedir(d);
	free(e->tids);
	free(e->by_host);
	e->tids = v;
	e->ntids = n;
	e->by_host = n ? malloc(n * sizeof(*v)) : NULL;
	if (n)
		qsort(v, n, sizeof(*v), by_nstid);
	if (e->by_host) {
		memcpy(e->by_host, v, n * sizeof(*v));
		qsort(e->by_host, n, sizeof(*v), by_tid);
	}
}

__u32 jn_host_tid(struct jvm_ent *e, __u32 nstid, __u64 now)
{
	struct tid_pair key = {.nstid = nstid}, *hit;

	if (e->pid == e->nspid)
		return nstid;
	for (int pass = 0; pass < 2; pass++) {
		hit = e->ntids ? bsearch(&key, e->tids, e->ntids, sizeof(key), by_nstid) : NULL;
		if (hit)
			return hit->tid;
		if (pass || now - e->tids_scanned_ns < TIDMAP_RESCAN_NS)
			break;
		jn_tidmap_rescan(e, now);
	}
	return 0;
}

__u32 jn_ns_tid(struct jvm_ent *e, __u32 tid)
{
	struct tid_pair key = {.tid = tid}, *hit;

	if (e->pid == e->nspid)
		return tid;
	hit = e->by_host ? bsearch(&key, e->by_host, e->ntids, sizeof(key), by_tid) : NULL;
	return hit ? hit->nstid : 0;
}

/* the agent goes, its figures stay for the report */
void jn_free_agent(struct jvm_ent *e)
{
	jvm_agent__stats(e->a, &e->final);
	jvm_agent__free(e->a);
	e->a = NULL;
	e->final_kept = true;
}

/* the oldest retired JVM's figures go to j->folded, its entry is freed */
static void fold_oldest_retired(struct join *j)
{
	struct jvm_agent_stats as;
	struct jvm_fold *f = &j->folded;
	struct jvm_ent *e;
	size_t i;

	for (i = 0; i < j->njvms && !j->jvms[i]->retired; i++)
		;
	if (i == j->njvms)
		return;
	e = j->jvms[i];
	f->jvms++;
	f->samples += e->samples;
	f->java_samples += e->java_samples;
	f->complete += e->complete;
	f->internal += e->internal;
	if (e->final_kept) {
		as = e->final;
		f->agent_lost += as.ring_full + as.events_dropped;
	}
	jn_jvm_free(j, e);
	memmove(&j->jvms[i], &j->jvms[i + 1], (j->njvms - i - 1) * sizeof(*j->jvms));
	j->njvms--;
	j->nretired--;
	if (j->rr >= j->njvms)
		j->rr = 0;
}

int join__retire_jvm(struct join *j, __u32 pid, __u64 now_ns)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);
	int err = 0, n = 0;

	if (!e || e->retired)
		return 0;
	if (e->a) {
		/* what its ring still holds (in a round's time), then no sample of it waits */
		jn_time_bound(j, mono_ns() + JN_NS(j, JOIN_POLL_ROUND_NS));
		j->cur_jvm = e;
		do {
			j->round_left = j->o.traces_per_round;
			err = jvm_agent__poll_events(e->a, jn_on_trace,
						     j->o.joined_events ? jn_on_event : NULL, j);
		} while (err == -EAGAIN && !j->round_left && mono_ns() <= j->deadline_ns &&
			 ++n < 64);
		j->cur_jvm = NULL;
		j->now_ns = now_ns;
		err = jn_retry_dirty(j);
		if (!err)
			err = jn_expire(j, e, true);
		jn_time_bound(j, 0);
		e->unread_end += jvm_agent__unread(e->a);
		jn_free_agent(e);
	} else {
		/* walked before an agent that never came: shown as far as known */
		j->now_ns = now_ns;
		err = jn_expire(j, e, true);
	}
	jn_ev_drop_pid(j->live, pid);
	jn_ev_drop_pid(j->waits, pid);
	/* what the report says of them stays; what they hold goes (JOIN_RETIRED_KEEP of these) */
	jwalk__stats(e->jw, &e->jw_st);
	jwalk__free(e->jw);
	e->jw = NULL;
	if (e->vn) {
		vmnames__stats(e->vn, &e->vn_st);
		e->vn_had = true;
		vmnames__free(e->vn);
		e->vn = NULL;
	}
	free(e->tids);
	free(e->by_host);
	e->tids = e->by_host = NULL;
	e->ntids = 0;
	e->retired = true;
	(void)hmap_del(&j->by_pid, e->pid, NULL);
	e->pending = false;
	if (++j->nretired > JOIN_RETIRED_KEEP)
		fold_oldest_retired(j);
	return err;
}

void join__set_jvm_vmnames(struct join *j, __u32 pid, struct vmnames *vn)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (!e) {
		vmnames__free(vn);
		return;
	}
	vmnames__free(e->vn);
	e->vn = vn;
}

void join__set_jvm_threads_known(struct join *j, __u32 pid, bool known)
{
	struct jvm_ent *e = jn_find_jvm(j, pid);

	if (e)
		e->threads_known = known;
}

void join__set_agent_events(struct join *j, __u32 agent_events, __u32 joined_events)
{
	j->o.agent_events = agent_events;
	j->o.joined_events = joined_events;
}

void join__set_parks(struct join *j, bool parks, bool parks_only)
{
	j->o.parks = parks;
	j->o.offcpu_parks_only = parks_only;
}

/* the reader protocol: every agent of the join learns this jprof still reads it */
void join__heartbeat(struct join *j, __u64 now_ns, __u32 agent_events, __u32 alloc_interval)
{
	__u32 want = (agent_events & JP_AGENT_EV_LOCK ? JP_RING_F_EV_LOCK : 0) |
		     (agent_events & JP_AGENT_EV_ALLOC ? JP_RING_F_EV_ALLOC : 0) |
		     (agent_events & JP_AGENT_EV_LIVE ? JP_RING_F_EV_LIVE : 0);

	/* other events or another interval wanted (SIGHUP): every ring at once */
	bool changed = want != j->beat_want || alloc_interval != j->beat_ivl;

	j->beat_want = want;
	j->beat_ivl = alloc_interval;
	for (size_t i = 0; i < j->njvms; i++) {
		struct jvm_ent *e = j->jvms[i];

		/* a new agent's at once too */
		if (!e->a || e->retired ||
		    (!changed && e->beat_ns && now_ns - e->beat_ns < JOIN_BEAT_NS))
			continue;
		e->beat_ns = now_ns;
		(void)jvm_agent__heartbeat(e->a, now_ns, want, alloc_interval);
	}
}

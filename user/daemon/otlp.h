/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * otlp.h: a profile as an OpenTelemetry ExportProfilesServiceRequest, the body of
 * POST /v1development/profiles (OTLP/HTTP, application/x-protobuf), in the v1development
 * schema (third_party/opentelemetry-proto). Encoded by hand, as out/pprof.c encodes pprof.
 *
 * One ResourceProfiles (host.name), one ScopeProfiles (jprof), one Profile per value column
 * that holds anything (OTLP has one sample type a profile): a sample per model row with that
 * value, its stack and its label set's attributes (process.pid, process.executable.name,
 * thread.id, thread.name, container.id, jprof.main, jprof.exited_processes). The dictionary's
 * tables follow the model's: mapping, location and stack i are the model's id i, entry 0 the
 * zero value each table must start with.
 */
#ifndef JPROF_DAEMON_OTLP_H
#define JPROF_DAEMON_OTLP_H

#include <linux/types.h>
#include <stddef.h>

#include "model/model.h"
#include "util/bytebuf.h"

struct otlp_meta {
	const char *host; /* resource attribute host.name; NULL: none */
	__u64 time_ns;	  /* the profile's start, ns since the epoch */
	__u64 duration_ns;
	__u64 period_ns; /* CPU nanoseconds a sample stands for; 0 unknown */
};

/* the request for m into out (appended); 0 or -ENOMEM */
int otlp_encode(const struct model *m, const struct otlp_meta *meta, struct bytebuf *out);

/*
 * A segment (its pprof, gzip'ed or not, read with model__read_pprof's budgets) as a request
 * into out; host as otlp_meta's. 0, -ENOMEM, or -EINVAL with the reason in why.
 */
int otlp_from_pprof(const void *pprof, size_t len, const char *host, struct bytebuf *out, char *why,
		    size_t why_len);

#endif /* JPROF_DAEMON_OTLP_H */

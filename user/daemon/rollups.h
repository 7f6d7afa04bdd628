/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rollups.h: `jprof daemon`'s roll-ups (store/store.h): each completed period's segments
 * (an hour's: STORE_ROLLUP_S, and each of its STORE_ROLLUP_PARTS parts', ten minutes') merged
 * into one file by a thread of its own at the lowest priority (nice 19, every signal
 * blocked), off the recording's path; the loop's thread only puts the result in place
 * (store__add_rollup: a rename). The newest completed part first, its period once its last
 * part is (made of the parts' roll-ups), then older ones without a valid roll-up (a store of
 * an older daemon, a restart), one at a time.
 */
#ifndef JPROF_DAEMON_ROLLUPS_H
#define JPROF_DAEMON_ROLLUPS_H

#include <linux/types.h>

#include "store/store.h"

struct rollups;

/*
 * Roll-ups of period_s (0: none, and NULL), and of its STORE_ROLLUP_PARTS parts when it divides
 * into them in whole seconds, for the store in dir (the writer's, opened by the caller; the
 * thread opens it as a reader). NULL out of memory: the store goes without.
 */
struct rollups *rollups__new(const char *dir, unsigned int period_s);
/*
 * The loop's thread, each round: a finished roll-up put in place in s, the next period (one
 * ending at or before open_start_s, the open interval's start) handed to the thread.
 */
void rollups__tick(struct rollups *ru, struct store *s, __u64 open_start_s, __u64 now_s);
/* the thread stopped (between two segments) and gone; a finished roll-up put in place first */
void rollups__free(struct rollups *ru, struct store *s, __u64 now_s);
/* roll-ups written and not (a period's segments changed meanwhile, one unreadable, ...) */
void rollups__counts(const struct rollups *ru, __u64 *ret_written, __u64 *ret_failed);

#endif /* JPROF_DAEMON_ROLLUPS_H */

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# wall_check.py: checks a `jprof record -e wall` folded profile of WallMix: each worker's
# on-CPU + runnable + blocked time is within MAX_PCT of the recording's duration, and its
# blocked share within MAX_PP of what it measured itself (time in park/wait / wall time:
# the threads' patterns are steady, so the recording's window shows the same split; the
# on-CPU and runnable shares depend on the load of the shared machine, the blocked one not).
# Usage: wall_check.py FOLDED WALLMIX_OUTPUT DURATION_S MAX_PCT MAX_PP
import re
import sys


def main():
    folded, app_out = sys.argv[1], sys.argv[2]
    dur, max_pct, max_pp = map(float, sys.argv[3:6])
    truth = {}  # thread name -> blocked fraction it measured
    for line in open(app_out):
        f = line.split()
        if len(f) == 4 and all(x.isdigit() for x in f[1:]):
            truth[f[0]] = int(f[3]) / int(f[2])
    parts = {}  # thread name -> [cpu, runnable, blocked] ns
    other = {}  # time under other roots (JVM threads, a thread known by another name)
    for line in open(folded):
        stack, _, w = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        m = re.match(r"(.*) \[\d+\]$", frames[1]) if len(frames) > 1 else None
        if not m or m.group(1) not in truth:
            other[frames[1] if len(frames) > 1 else stack] = other.get(
                frames[1] if len(frames) > 1 else stack, 0) + int(w)
            continue
        p = parts.setdefault(m.group(1), [0, 0, 0])
        if "[runnable]" in frames:
            p[1] += int(w)
        elif "[off-cpu]" in frames:
            p[2] += int(w)
        else:
            p[0] += int(w)
    bad = 0 if len(parts) == len(truth) and truth else 1
    for name in sorted(truth):
        cpu, run, blk = (x / 1e9 for x in parts.get(name, [0, 0, 0]))
        tot = cpu + run + blk
        err = 100.0 * (tot - dur) / dur
        share = 100.0 * blk / tot if tot else 0
        want = 100.0 * truth[name]
        print("%-8s cpu %.3f s runnable %.3f s blocked %.3f s = %.3f s of %.3f s (%+.2f%%); "
              "blocked %.2f%% (thread's own %.2f%%, %+.2f pp)" %
              (name, cpu, run, blk, tot, dur, err, share, want, share - want))
        # the blinker's own "blocked" time includes the CPU of 20,000 park calls a second:
        # only its total is checked
        if abs(err) > max_pct or (name != "blinker" and abs(share - want) > max_pp):
            bad = 1
    # after the table: where time under no worker's root went (a thread known by another
    # name, the JVM's own threads)
    for root, ns in sorted(other.items(), key=lambda kv: -kv[1])[:8]:
        print("other root %s: %.3f s" % (root, ns / 1e9))
    sys.exit(bad)


main()

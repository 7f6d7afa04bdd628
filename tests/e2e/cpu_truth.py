#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# cpu_truth.py: compares a --per-thread --cpu-time folded profile with a program's own
# per-thread CPU times ("tid function cpu_ns" lines); prints the errors, exits 1 over a limit.
# Usage: cpu_truth.py FOLDED TRUTH MAX_THREAD_PP MAX_METHOD_PP MAX_TOTAL_PCT
import re
import sys


def main():
    folded, truth_file = sys.argv[1], sys.argv[2]
    max_thread_pp, max_method_pp, max_total_pct = map(float, sys.argv[3:6])

    truth = {}  # tid -> (function, ns)
    for line in open(truth_file):
        f = line.split()
        if len(f) == 3 and f[0].isdigit():
            truth[f[0]] = (f[1], int(f[2]))
    if len(truth) < 2:
        sys.exit("no ground truth in %s" % truth_file)
    per_tid, per_fn = {}, {}
    for line in open(folded):
        stack, _, w = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        m = re.search(r"\[(\d+)\]$", frames[1]) if len(frames) > 1 else None
        if not m or m.group(1) not in truth:
            continue
        tid = m.group(1)
        per_tid[tid] = per_tid.get(tid, 0) + int(w)
        fn = truth[tid][0]
        # the busy function anywhere in the stack (Java frames may carry _[j]/_[i] and a class)
        if any(re.search(r"(^|[./])%s(_\[[a-z0-9]\])?$" % fn, x) for x in frames[2:]):
            per_fn[fn] = per_fn.get(fn, 0) + int(w)
    t_all = sum(v[1] for v in truth.values())
    m_all = sum(per_tid.values())
    bad = 0
    if not m_all:
        print("no CPU time of these threads in %s" % folded)
        bad = 1
    for tid, (fn, ns) in sorted(truth.items()):
        got = per_tid.get(tid, 0)
        ts, ms = 100.0 * ns / t_all, 100.0 * got / m_all if m_all else 0
        fs = 100.0 * per_fn.get(fn, 0) / m_all if m_all else 0
        tot = 100.0 * (got - ns) / ns
        print("tid %s %-14s truth %6.3f%% (%.3f s)  thread %6.3f%% (err %+.3f pp)  "
              "method %6.3f%% (err %+.3f pp)  total %.3f s (err %+.2f%%)" %
              (tid, fn, ts, ns / 1e9, ms, ms - ts, fs, fs - ts, got / 1e9, tot))
        if abs(ms - ts) > max_thread_pp or abs(fs - ts) > max_method_pp or abs(tot) > max_total_pct:
            bad = 1
    sys.exit(bad)


main()

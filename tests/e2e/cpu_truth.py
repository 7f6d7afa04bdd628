#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# cpu_truth.py: compares a --per-thread folded profile (CPU time, jprof's default) with a
# program's own per-thread CPU times; prints the errors, exits 1 over a limit.
# Usage: cpu_truth.py FOLDED TRUTH MAX_THREAD_PP MAX_METHOD_PP MAX_TOTAL_PCT
#          TRUTH: "tid function cpu_ns" lines (duty, DutyCycle: one busy function a thread)
#        cpu_truth.py --split FOLDED OUTPUT MAX_THREAD_PP MAX_METHOD_MAE_PP
#          OUTPUT: Accuracy's "thread NAME NS" and "method NAME METHOD|other NS" lines
#          (each thread splits its busy time between its methods); every thread's share
#          within MAX_THREAD_PP, the methods' mean absolute error within MAX_METHOD_MAE_PP
#          (or 1.8x what random sampling alone leaves, when more: a loaded host)
# bench/suite.py imports split_errors.
import math
import re
import statistics
import sys


def split_profile(path, names):
    """weight per Accuracy worker and per (worker, method), from a --per-thread folded
    profile; NAMES: {thread name: the methods its output names}. A sample's method is the
    innermost frame that is one of its thread's (a Java frame "Accuracy.hotA_[j]": the name
    before the type suffix), "other" where none is."""
    per_thread, per_method = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if not stack or not n.isdigit():
                continue
            frames = stack.split(";")
            if len(frames) < 2:
                continue
            m = re.match(r"(\S+) \[\d+\]$", frames[1])
            if not m or m.group(1) not in names:
                continue
            t = m.group(1)
            meth = "other"
            for fr in frames[2:]:
                name = re.sub(r"_\[[a-z0-9]+\]$", "", fr)
                short = name.rpartition(".")[2]
                if name != short and short in names[t]:
                    meth = short
            per_thread[t] = per_thread.get(t, 0) + int(n)
            per_method[(t, meth)] = per_method.get((t, meth), 0) + int(n)
    return per_thread, per_method


def split_errors(folded, output, hz=99):
    """Accuracy's OUTPUT (its text) against the FOLDED profile: a dict with the truth, the
    profile's figures, and the errors of each share in percentage points; HZ: the
    sampling rate, for the per-method error that sampling alone leaves"""
    truth_t, truth_m = {}, {}
    for line in output.splitlines():
        f = line.split()
        if f[:1] == ["thread"] and len(f) == 3:
            truth_t[f[1]] = int(f[2])
        elif f[:1] == ["method"] and len(f) == 4:
            truth_m[(f[1], f[2])] = int(f[3])
    names = {t: {m for (tt, m) in truth_m if tt == t and m != "other"} for t in truth_t}
    got_t, got_m = split_profile(folded, names)
    tt, gt = sum(truth_t.values()), sum(got_t.values())
    if not tt or not gt:
        raise ValueError(f"no CPU time of the workers: truth {truth_t}, profile {got_t}")
    err_t = {t: 100 * (got_t.get(t, 0) / gt - truth_t[t] / tt) for t in truth_t}
    err_m = {f"{t}.{m}": 100 * (got_m.get((t, m), 0) / gt - truth_m[(t, m)] / tt)
             for (t, m) in truth_m}
    # what sampling alone leaves: a thread's n samples (its CPU seconds x hz) fall in a
    # method with its true fraction q, so the method's share moves by share x sqrt(q(1-q)/n)
    # (binomial), |error| by sqrt(2/pi) of that on average; the mean over the methods is the
    # floor a sampler's per-method MAE sits on, with no bias of its own
    floor = []
    for (t, m), ns in truth_m.items():
        n = truth_t[t] / 1e9 * hz
        q = min(max(ns / truth_t[t], 0.0), 1.0) if truth_t[t] else 0.0
        floor.append(100 * truth_t[t] / tt * math.sqrt(q * (1 - q) / n) * math.sqrt(2 / math.pi)
                     if n >= 1 else 0)
    return {"truth_cpu_ns": truth_t, "truth_method_ns": {f"{t}.{m}": v for (t, m), v in
                                                         truth_m.items()},
            "profile_total": gt, "profile_per_thread": got_t,
            "thread_error_pp": err_t, "method_error_pp": err_m,
            "thread_mae_pp": statistics.mean(abs(x) for x in err_t.values()),
            "method_mae_pp": statistics.mean(abs(x) for x in err_m.values()),
            "method_floor_pp": statistics.mean(floor) if floor else 0,
            "truth_total": tt}


def main_split():
    folded, output = sys.argv[2], open(sys.argv[3]).read()
    max_thread_pp, max_method_pp = map(float, sys.argv[4:6])
    try:
        r = split_errors(folded, output)
    except ValueError as e:
        sys.exit(str(e))
    for t, e in sorted(r["thread_error_pp"].items()):
        print("thread %-7s truth %.3f s  profile %.3f s  share err %+.3f pp" %
              (t, r["truth_cpu_ns"][t] / 1e9, r["profile_per_thread"].get(t, 0) / 1e9, e))
    for m, e in sorted(r["method_error_pp"].items()):
        print("method %-12s truth %.3f s  share err %+.3f pp" %
              (m, r["truth_method_ns"][m] / 1e9, e))
    print("MAE: per-thread %.3f pp, per-method %.3f pp (sampling alone: %.3f); "
          "profile / truth %.4f" % (r["thread_mae_pp"], r["method_mae_pp"],
                                    r["method_floor_pp"], r["profile_total"] / r["truth_total"]))
    # each thread's share, and the methods' mean error (the issue's measure: one method's
    # share moves with its few hundred samples, the mean over nine less). A loaded host
    # gives the workers few and scattered CPU slices, so the samples fall at random: there
    # the bound is 1.8x what random sampling alone leaves (its mean over about six
    # independent errors spreads by ~30%: 2.6 sigma), a bias still shows above it
    worst_t = max(abs(x) for x in r["thread_error_pp"].values())
    max_method_pp = max(max_method_pp, 1.8 * r["method_floor_pp"])
    print("bounds: thread %.3f pp, per-method MAE %.3f pp" % (max_thread_pp, max_method_pp))
    sys.exit(1 if worst_t > max_thread_pp or r["method_mae_pp"] > max_method_pp else 0)


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


if __name__ == "__main__":
    main_split() if sys.argv[1:2] == ["--split"] else main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""agg.py: what --aggregate (CPU stacks counted in the kernel) saves, on one busy JVM.

One JVM (JavaHot split: a thread spinning in compiled code, one busy half the time; or
with --h2, H2Load: 4 threads of JDBC transactions on H2, deep stacks; with --native,
hotab, a C program) is
recorded with `jprof record -p PID -F 999` alternately with --no-aggregate and --aggregate,
ROUNDS times, so a shared host's drift hits both alike. In each run's steady state (from
1 s after its sampler is loaded, which takes seconds on a loaded host, for SECS - 2 s) it
reads, from bpf_stats (kernel.bpf_stats_enabled, set
for the run and restored), the sampler program's run time per sample (run_time_ns /
run_cnt of this jprof's on_cpu_sample), and jprof's own CPU time per second of wall
(its threads' schedstat); from jprof -v, the ring records per second (the samples BPF
took, less those it counted). Prints the medians of each mode, and JSON with --json.
With --baseline BUILD it compares two builds instead, both without --aggregate, rounds
alternating which goes first: jprof's CPU per sample of each, and their ratio. With --all
jprof records the whole host (-a, as a user runs it: jprof's own process, the load's and
the host's others too) instead of -p PID.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def prog_ids(pid):
    """ids of the BPF programs process pid holds (its fds' fdinfo)"""
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def prog_stats(pid):
    """(run_time_ns, run_cnt) of on_cpu_sample loaded by process pid, or None"""
    ids = prog_ids(pid)
    out = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True,
                         text=True, check=False).stdout
    for p in json.loads(out or "[]"):
        if p.get("name") == "on_cpu_sample" and p.get("id") in ids:
            return p.get("run_time_ns", 0), p.get("run_cnt", 0)
    return None


def cpu_ns(pid):
    """the CPU time of all of pid's threads (schedstat: ns, not clock ticks)"""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def one_run(build, jpid, secs, agg, out_dir, whole=False):
    """one recording of jpid (or the host) at 999 Hz, with --aggregate or not; its figures"""
    cmd = [os.path.join(build, "jprof"), "record", "-v"] + \
        (["-a"] if whole else ["-p", str(jpid)]) + ["-F", "999",
           "-d", str(secs), "--aggregate" if agg else "--no-aggregate",
           "-o", os.path.join(out_dir, "a.folded" if agg else "p.folded")]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # -d counts from when sampling starts: on a loaded host jprof takes seconds to get there
    t_start = time.monotonic()
    while prog_stats(p.pid) is None and time.monotonic() - t_start < 20 and p.poll() is None:
        time.sleep(0.1)
    time.sleep(1.0)
    s0, c0, t0 = prog_stats(p.pid), cpu_ns(p.pid), time.monotonic()
    time.sleep(secs - 2.0)
    s1, c1, t1 = prog_stats(p.pid), cpu_ns(p.pid), time.monotonic()
    err = p.communicate()[1]
    if p.returncode or not s0 or not s1:
        sys.exit(f"jprof failed ({p.returncode}) or no program stats:\n{err}")
    taken = counted = 0
    for line in err.splitlines():
        if line.startswith("jprof: debug: bpf: "):
            taken = int(line.split()[3])
        if line.startswith("jprof: debug: aggregation: "):
            counted = int(line.split()[3])
    runs = s1[1] - s0[1]
    return {
        "bpf_ns_per_sample": (s1[0] - s0[0]) / runs if runs else 0.0,
        "jprof_cpu_ms_per_s": (c1 - c0) / 1e6 / (t1 - t0),
        "records_per_s": (taken - counted) / secs,
        "samples_per_s": taken / secs,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=int, default=6)
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    ap.add_argument("--json", help="write the runs and medians here")
    ap.add_argument("--h2", action="store_true",
                    help="H2Load (4 threads of JDBC on H2: deep stacks) instead of JavaHot")
    ap.add_argument("--baseline", metavar="BUILD",
                    help="compare this build with BUILD (both plain), not the two modes")
    ap.add_argument("--native", action="store_true",
                    help="hotab (a C program, one thread in two functions) instead of JavaHot")
    ap.add_argument("--all", action="store_true",
                    help="record the whole host (-a) instead of the load's pid (-p)")
    a = ap.parse_args()
    if a.secs < 4:
        sys.exit("--secs: at least 4")
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        was = f.read().strip()
    apps = os.path.join(a.build, "tests", "apps")
    life = a.rounds * 2 * (a.secs + 3) + 10
    if a.native:
        cmd = [os.path.join(apps, "hotab"), str(life)]
    elif a.h2:
        cmd = [a.java, "-cp", "/usr/share/java/h2.jar:" + apps, "H2Load", "4", str(life), "3"]
    else:
        cmd = [a.java, "-cp", apps, "JavaHot", "split", str(life)]
    jvm = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    if a.baseline:
        modes = [("this", a.build, False), ("baseline", a.baseline, False)]
    else:
        modes = [("plain", a.build, False), ("aggregate", a.build, True)]
    runs = {m[0]: [] for m in modes}
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        if not a.native:
            jvm.stdout.readline()  # "ready"
        time.sleep(1)
        with tempfile.TemporaryDirectory() as d:
            for i in range(a.rounds):
                # a baseline comparison alternates which build goes first (drift hits both)
                for name, build, agg in (modes[::-1] if a.baseline and i % 2 else modes):
                    r = one_run(build, jvm.pid, a.secs, agg, d, a.all)
                    r["jprof_us_per_sample"] = (r["jprof_cpu_ms_per_s"] * 1e3 /
                                                r["samples_per_s"] if r["samples_per_s"] else 0.0)
                    runs[name].append(r)
                    print(f"{name:9s} " + " ".join(f"{k} {v:.2f}" for k, v in r.items()),
                          flush=True)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(was)
        jvm.terminate()
        jvm.wait()
    med = {m: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
           for m, rs in runs.items()}
    for m, v in med.items():
        print(f"median {m:9s} " + " ".join(f"{k} {x:.2f}" for k, x in v.items()))
    if a.baseline:
        ratios = [t["jprof_us_per_sample"] / b["jprof_us_per_sample"]
                  for t, b in zip(runs["this"], runs["baseline"]) if b["jprof_us_per_sample"]]
        med["ratio_us_per_sample"] = statistics.median(ratios) if ratios else 0.0
        print(f"jprof's CPU per sample, this build / baseline: x{med['ratio_us_per_sample']:.3f} "
              f"(median of {len(ratios)} rounds; each " +
              ", ".join(f"{x:.3f}" for x in ratios) + ")")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": runs, "median": med}, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""bpfcost.py: the BPF sample program's cost per sample, Java walk in BPF against --java-walk signal.

Two workloads, each one JVM serving throughout: shallow (bench/JavaWork on 2 threads, a few
frames deep) and h2 (bench/H2Bench: 2 workers of JDBC transactions on Debian's H2, deep
stacks, allocation and locks). For each, ROUNDS rounds in which both modes run in turn (the
order alternates round by round: ABBA), each `jprof record -p PID -F 999 -v` for SECS s, with
kernel.bpf_stats_enabled=1 (restored on every exit path). The cpu sampler's perf_event
program's run_cnt and run_time_ns, and jprof's counters of samples kept (the target's) and
left out (other processes': -p filters in BPF), are read with bpftool 1 s after jprof says
"recording" (the agent's start and the JIT's reaction to it are behind) and again at the
end: ns a target sample = the run time's delta over the target samples' delta (an upper
bound: the other processes' runs, left out at once, add theirs; ns a run, over all runs, is
printed too). Also from jprof -v: signals per sample.

Prints, per workload and mode, the median [min..max] ns per sample and signals per sample;
--json FILE writes every figure. --baseline BUILD compares two builds instead of two modes:
BUILD's walk ("base") against --build's ("walk"), in the same ABBA rounds, and prints the
ratio of their medians. Needs root, `make all apps` and, for h2, libh2-java.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import host  # bench/, beside this file: jprof_progs (the programs a jprof holds)
import overhead  # its process helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H2_JAR = "/usr/share/java/h2.jar"
BPF_STATS = "/proc/sys/kernel/bpf_stats_enabled"
MODES = {"walk": [], "signal": ["--java-walk", "signal"]}

saved_sysctl = None


def restore_sysctl():
    global saved_sysctl
    if saved_sysctl is not None:
        with open(BPF_STATS, "w") as f:
            f.write(saved_sysctl)
        saved_sysctl = None


def cleanup():
    overhead.kill_children()
    restore_sysctl()


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


JP_STAT_SAMPLES, JP_STAT_FILTERED = 0, 7  # bpf/jprof.h


def stats_map(pid):
    """the id of jprof PID's "stats" map (per-CPU counters, bpf/jprof.h JP_STAT_*)"""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                m = re.search(r"^map_id:\s*(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            ids.add(int(m.group(1)))
    out = subprocess.run(["bpftool", "map", "show", "--json"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    for mp in json.loads(out):
        if mp.get("id") in ids and mp.get("name") == "stats":
            return mp["id"]
    raise RuntimeError(f"jprof {pid} holds no stats map")


def stat(map_id, idx):
    out = subprocess.run(["bpftool", "map", "lookup", "id", str(map_id), "key"] +
                         [str(b) for b in idx.to_bytes(4, "little")] + ["--json"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return sum(v["value"] for v in json.loads(out)["formatted"]["values"])


def sampler(pid, map_id):
    """(run_cnt, run_time_ns) of the perf_event program(s) jprof PID holds, and its samples
    of the target and of other processes (filtered out in BPF)"""
    progs = [p for p in host.jprof_progs(pid) if p["type"] == "perf_event"]
    return (sum(p["run_cnt"] for p in progs), sum(p["run_time_ns"] for p in progs),
            stat(map_id, JP_STAT_SAMPLES), stat(map_id, JP_STAT_FILTERED))


def one_run(jprof, pid, mode, secs, tmp):
    err = open(os.path.join(tmp, f"jprof-{mode}.err"), "w+")
    if isinstance(jprof, dict):  # --baseline: a build a mode
        jprof = jprof[mode]
    p = overhead.spawn([jprof, "record", "-v", "-p", str(pid), "-F", "999"] + MODES[mode] +
                       ["-o", os.path.join(tmp, f"out-{mode}.folded")], stderr=err)
    deadline = time.monotonic() + 60
    while True:
        err.seek(0)
        if "recording" in err.read():
            break
        if p.poll() is not None or time.monotonic() > deadline:
            err.seek(0)
            raise RuntimeError(f"jprof did not start: {err.read()[-2000:]}")
        time.sleep(0.05)
    time.sleep(1.0)
    map_id = stats_map(p.pid)
    c0, t0, s0, f0 = sampler(p.pid, map_id)
    time.sleep(secs)
    c1, t1, s1, f1 = sampler(p.pid, map_id)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=120)
    overhead.children.remove(p)
    err.seek(0)
    text = err.read()
    err.close()
    if p.returncode != 0:
        raise RuntimeError(f"jprof failed ({p.returncode}): {text[-2000:]}")
    m = re.search(r"bpf: (\d+) samples, .* (\d+) signals ", text)
    samples, signals = (int(m.group(1)), int(m.group(2))) if m else (None, None)
    runs, target = c1 - c0, s1 - s0
    return {"runs": runs, "run_time_ns": t1 - t0, "target_samples": target,
            "filtered": f1 - f0, "ns_per_run": (t1 - t0) / runs if runs else None,
            # every run's time over the target's samples: the other processes' samples,
            # left out at once, add their share (an upper bound)
            "ns_per_sample": (t1 - t0) / target if target else None,
            "samples": samples, "signals": signals,
            "signals_per_sample": signals / samples if samples else None}


def split_cost(rs):
    """least squares over the runs of T = x * target + y * others: x the ns of a target
    sample, y of another process's sample left out (None: too few runs or no spread)"""
    pts = [(e["target_samples"], e["runs"] - e["target_samples"], e["run_time_ns"])
           for e in rs if e["runs"]]
    saa = sum(a * a for a, _, _ in pts)
    sbb = sum(b * b for _, b, _ in pts)
    sab = sum(a * b for a, b, _ in pts)
    sat = sum(a * t for a, _, t in pts)
    sbt = sum(b * t for _, b, t in pts)
    det = saa * sbb - sab * sab
    if len(pts) < 3 or det <= 1e-9 * saa * sbb:
        return None, None
    x, y = (sat * sbb - sbt * sab) / det, (saa * sbt - sab * sat) / det
    # a loaded host's noise can swamp the spread of the target's share: no split then
    return (x, y) if x > 0 and y > 0 else (None, None)


def workload(name, cmd, a, tmp):
    with open(os.path.join(tmp, f"{name}.err"), "w") as err:
        w = overhead.spawn(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                           text=True)
    for line in w.stdout:
        if line.strip() == "ready":
            break
    else:
        raise RuntimeError(f"{name}: the workload did not start")
    res = {m: [] for m in MODES}
    try:
        time.sleep(2)  # past the warm-up's end: every worker at work
        for r in range(a.rounds):
            order = list(MODES) if r % 2 == 0 else list(reversed(MODES))
            for mode in order:
                res[mode].append(one_run(a.jprof, w.pid, mode, a.secs, tmp))
                e = res[mode][-1]
                print(f"  {name} round {r + 1} {mode:<6}: {e['ns_per_sample'] or 0:6.0f} ns a "
                      f"target sample ({e['target_samples']} of {e['runs']} runs, "
                      f"{e['ns_per_run'] or 0:.0f} ns a run), signals {e['signals']} of "
                      f"{e['samples']}", flush=True)
    finally:
        w.stdin.close()
        overhead.stop_gently([w])
        overhead.children.remove(w)
    out = {"runs": res}
    for mode, rs in res.items():
        ns = [e["ns_per_sample"] for e in rs if e["ns_per_sample"] is not None]
        nr = [e["ns_per_run"] for e in rs if e["ns_per_run"] is not None]
        sg = [e["signals_per_sample"] for e in rs if e["signals_per_sample"] is not None]
        share = [e["target_samples"] / e["runs"] for e in rs if e["runs"]]
        x, y = split_cost(rs)
        out[mode] = {"ns_per_sample_median": statistics.median(ns) if ns else None,
                     "ns_per_sample_range": [min(ns), max(ns)] if ns else None,
                     "ns_per_run_median": statistics.median(nr) if nr else None,
                     "target_share_median": statistics.median(share) if share else None,
                     "fit_ns_per_target_sample": x, "fit_ns_per_other_run": y,
                     "signals_per_sample_median": statistics.median(sg) if sg else None}
    return out


def main():
    global saved_sysctl
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--secs", type=int, default=5, help="seconds measured per run")
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    ap.add_argument("--only", default="shallow,h2", help="shallow, h2 (default: both)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--baseline", metavar="BUILD",
                    help="compare BUILD's BPF walk with --build's, not the walk with the signal")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bpfcost.py: needs root")
    a.jprof = os.path.join(os.path.abspath(a.build), "jprof")
    if a.baseline:
        MODES.clear()
        MODES.update({"base": [], "walk": []})
        a.jprof = {"base": os.path.join(os.path.abspath(a.baseline), "jprof"), "walk": a.jprof}
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    res = {"loadavg_start": os.getloadavg()}
    with open(BPF_STATS) as f:
        saved_sysctl = f.read().strip()
    try:
        with open(BPF_STATS, "w") as f:
            f.write("1")
        with tempfile.TemporaryDirectory(prefix="jprof-bpfcost-") as tmp:
            subprocess.check_call(["javac", "-d", tmp, "-cp", H2_JAR,
                                   os.path.join(REPO, "bench", "JavaWork.java"),
                                   os.path.join(REPO, "bench", "H2Bench.java")])
            cmds = {"shallow": [a.java, "-cp", tmp, "JavaWork", "2", "0"],
                    "h2": [a.java, "-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch", "-cp",
                           f"{H2_JAR}:{tmp}", "H2Bench", "2", "0", "5000", "5", "own"]}
            for name in a.only.split(","):
                if name == "h2" and not os.path.exists(H2_JAR):
                    sys.exit(f"bpfcost.py: {H2_JAR} missing (Debian: libh2-java)")
                print(f"{name}: {a.rounds} rounds x {a.secs} s a mode, 999 Hz", flush=True)
                res[name] = workload(name, cmds[name], a, tmp)
    finally:
        cleanup()
    res["loadavg_end"] = os.getloadavg()
    print("\nthe BPF sample program's run time per sample (bpf_stats), median [min..max]; "
          "signals per sample, median")
    for name in a.only.split(","):
        for mode in MODES:
            e = res[name][mode]
            if e["ns_per_sample_median"] is None:
                print(f"  {name:<8} {mode:<7} no samples")
                continue
            lo, hi = e["ns_per_sample_range"]
            sg = e["signals_per_sample_median"]
            print(f"  {name:<8} {mode:<7} {e['ns_per_sample_median']:7.0f} ns "
                  f"[{lo:.0f}..{hi:.0f}] a target sample ({e['ns_per_run_median']:.0f} ns a "
                  f"run, {100 * e['target_share_median']:.0f}% of the runs the target's), "
                  f"signals {100 * sg if sg is not None else 0:.1f}%")
            if e["fit_ns_per_target_sample"] is not None:
                print(f"  {'':<8} {'':<7} fitted over the runs: "
                      f"{e['fit_ns_per_target_sample']:.0f} ns a target sample, "
                      f"{e['fit_ns_per_other_run']:.0f} ns a sample left out")
        if a.baseline and res[name]["base"]["ns_per_sample_median"] and \
                res[name]["walk"]["ns_per_sample_median"]:
            print(f"  {name:<8} this build / the baseline: x"
                  f"{res[name]['walk']['ns_per_sample_median'] / res[name]['base']['ns_per_sample_median']:.3f}"
                  f" ns a target sample")
    print(f"  load average {res['loadavg_start'][0]:.2f} at start, "
          f"{res['loadavg_end'][0]:.2f} at the end")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()

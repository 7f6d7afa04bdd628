#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""host.py: whole-host figures of `jprof record -a`: start-up, BPF cost per sample, own CPU/RSS.

  first   time from start to first sample with 0, 1 and 10 JVMs present (each JVM:
          tests/apps/ManyThreads with 2 busy threads); `record -a -d 2`, RUNS runs per
          count. Run 1 attaches the agent into JVMs that do not have it yet; the later
          runs find it loaded, so both are reported (run 1, median of the rest).
  bpf     BPF run time per run of each of jprof's programs (kernel.bpf_stats_enabled=1,
          bpftool prog show: run_time_ns / run_cnt) while recording -a at 99 and 999 Hz
          with one Java workload running; the sysctl is restored on every exit path.
  self    jprof's own CPU time and peak RSS (/usr/bin/time -v) for `record -a -d SECS`
          at 99 and 999 Hz with 3 JVMs present.

Prints a table per part and, with --json FILE, writes every figure there. Needs root and
`make all apps`.
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

import overhead  # bench/, beside this file: its process helpers

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BPF_STATS = "/proc/sys/kernel/bpf_stats_enabled"

children = []  # every process started here, killed on any exit
saved_sysctl = None


def cleanup():
    global saved_sysctl
    overhead.stop_gently(children)
    children.clear()
    if saved_sysctl is not None:
        with open(BPF_STATS, "w") as f:
            f.write(saved_sysctl)
        saved_sysctl = None


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


def start_jvms(n, java, apps, tmp, threads=2):
    """n ManyThreads JVMs, each with `threads` busy threads; returns once all print ready."""
    jvms = []
    for _ in range(n):
        p = subprocess.Popen([java, "-Xms16m", "-Xmx64m", "-XX:+UseSerialGC", "-cp", apps,
                              "ManyThreads", str(threads), "3600"],
                             cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
        children.append(p)
        jvms.append(p)
    for p in jvms:  # ManyThreads prints "ready" once its threads run
        line = p.stdout.readline()
        if line.strip() != "ready":
            sys.exit(f"host.py: a JVM did not start (printed {line!r})")
    return jvms


def stop_jvms(jvms):
    overhead.stop_gently(jvms)  # a SIGKILL would leave their agents' files in /tmp
    for p in jvms:
        children.remove(p)


def jprof_summary(text):
    m = re.search(r"first sample (\d+) ms after start \(sampling from (\d+) ms\)", text)
    jv = re.search(r"(\d+) JVMs \((\d+) with Java stacks\)", text)
    return {"first_sample_ms": int(m.group(1)) if m else None,
            "sampling_from_ms": int(m.group(2)) if m else None,
            "jvms": int(jv.group(1)) if jv else None,
            "jvms_with_java": int(jv.group(2)) if jv else None}


def run_jprof(jprof, args, tmp, timeout=120):
    r = subprocess.run([jprof, "record", "-a", "-v"] + args + ["-o", os.path.join(tmp, "out.folded")],
                       cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"host.py: jprof failed ({r.returncode}): {r.stderr}")
    return r.stderr


def part_first(a, jprof, tmp):
    res = {}
    print(f"\ntime to first sample, `jprof record -a -d 2`, {a.runs} runs per JVM count")
    print(f"  {'JVMs':>4} {'run 1 ms':>9} {'median later ms':>16} {'sampling from (med)':>20} "
          f"{'JVMs seen':>10}")
    for n in (0, 1, 10):
        jvms = start_jvms(n, a.java, a.apps, tmp)
        time.sleep(1.0)  # let the JVMs' start-up JIT burst pass
        runs = [jprof_summary(run_jprof(jprof, ["-d", "2"], tmp)) for _ in range(a.runs)]
        stop_jvms(jvms)
        first = [r["first_sample_ms"] for r in runs]
        later = [x for x in first[1:] if x is not None]
        samp = [r["sampling_from_ms"] for r in runs if r["sampling_from_ms"] is not None]
        res[str(n)] = {"runs": runs, "first_run_ms": first[0],
                       "median_later_ms": statistics.median(later) if later else None,
                       "median_all_ms": statistics.median([x for x in first if x is not None]),
                       "median_sampling_from_ms": statistics.median(samp) if samp else None}
        e = res[str(n)]
        print(f"  {n:>4} {str(e['first_run_ms']):>9} {str(e['median_later_ms']):>16} "
              f"{str(e['median_sampling_from_ms']):>20} "
              f"{'/'.join(str(r['jvms']) for r in runs):>10}")
    return res


def prog_ids_of(pid):
    """ids of the BPF programs process PID holds an fd of (/proc/PID/fdinfo: prog_id)"""
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                m = re.search(r"^prog_id:\s*(\d+)", f.read(), re.M)
        except OSError:
            continue
        if m:
            ids.add(int(m.group(1)))
    return ids


def jprof_progs(pid):
    # bpftool's "pids" needs its BPF pid iterator, which Debian's build lacks: match the ids
    # of the programs jprof holds instead (another jprof may run beside it)
    mine = prog_ids_of(pid)
    out = subprocess.run(["bpftool", "prog", "show", "--json"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    progs = []
    for p in json.loads(out):
        if p.get("id") in mine:
            progs.append({"name": p.get("name", "?"), "type": p.get("type", "?"),
                          "run_cnt": p.get("run_cnt", 0), "run_time_ns": p.get("run_time_ns", 0)})
    return progs


def part_bpf(a, jprof, tmp):
    global saved_sysctl
    with open(BPF_STATS) as f:
        saved_sysctl = f.read().strip()
    with open(BPF_STATS, "w") as f:
        f.write("1")
    res = {}
    try:
        jvms = start_jvms(1, a.java, a.apps, tmp)
        for hz in (99, 999):
            err = open(os.path.join(tmp, f"bpf-{hz}.err"), "w+")
            p = subprocess.Popen([jprof, "record", "-a", "-F", str(hz), "-o",
                                  os.path.join(tmp, "out.folded")], cwd=tmp,
                                 stdout=subprocess.DEVNULL, stderr=err)
            children.append(p)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and p.poll() is None:
                err.seek(0)
                if "recording" in err.read():
                    break
                time.sleep(0.05)
            time.sleep(a.secs)
            progs = jprof_progs(p.pid)  # before it exits: its programs go with it
            p.send_signal(signal.SIGINT)
            p.wait(timeout=60)
            children.remove(p)
            err.close()
            for pr in progs:
                pr["ns_per_run"] = pr["run_time_ns"] / pr["run_cnt"] if pr["run_cnt"] else None
            samples = sum(pr["run_cnt"] for pr in progs if pr["type"] == "perf_event")
            total = sum(pr["run_time_ns"] for pr in progs)
            res[str(hz)] = {"programs": progs, "perf_event_runs": samples,
                            "all_programs_ns_per_sample": total / samples if samples else None}
            print(f"\nBPF run time, `record -a -F {hz}` for {a.secs} s, 1 JVM with 2 busy threads")
            print(f"  {'program':<20} {'type':<16} {'runs':>9} {'ns/run':>9}")
            for pr in sorted(progs, key=lambda x: -x["run_time_ns"]):
                npr = f"{pr['ns_per_run']:.0f}" if pr["ns_per_run"] is not None else "-"
                print(f"  {pr['name']:<20} {pr['type']:<16} {pr['run_cnt']:>9} {npr:>9}")
            if samples:
                print(f"  all programs' run time per perf_event run (sample): "
                      f"{total / samples:.0f} ns")
        stop_jvms(jvms)
    finally:
        with open(BPF_STATS, "w") as f:
            f.write(saved_sysctl)
        saved_sysctl = None
    return res


def part_self(a, jprof, tmp):
    res = {}
    jvms = start_jvms(3, a.java, a.apps, tmp)
    print(f"\njprof's own resources, `record -a -d {a.secs}`, 3 JVMs with 2 busy threads each")
    print(f"  {'Hz':>4} {'user s':>7} {'sys s':>7} {'%core':>6} {'wall s':>7} {'peak RSS':>9}")
    for hz in (99, 999):
        tf = os.path.join(tmp, "time.txt")
        r = subprocess.run(["/usr/bin/time", "-v", "-o", tf, jprof, "record", "-a", "-F", str(hz),
                            "-d", str(a.secs), "-o", os.path.join(tmp, "out.folded")],
                           cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=a.secs + 120)
        if r.returncode != 0:
            sys.exit(f"host.py: jprof failed: {r.stderr}")
        with open(tf) as f:
            t = f.read()

        def field(name):
            m = re.search(re.escape(name) + r": (\S+)", t)
            return m.group(1) if m else "0"
        wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
        wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
        e = {"user_s": float(field("User time (seconds)")),
             "sys_s": float(field("System time (seconds)")),
             "wall_s": wall_s, "peak_rss_kb": int(field("Maximum resident set size (kbytes)"))}
        e["cpu_pct_of_core"] = 100.0 * (e["user_s"] + e["sys_s"]) / wall_s if wall_s else None
        e.update(jprof_summary(r.stderr))
        res[str(hz)] = e
        print(f"  {hz:>4} {e['user_s']:>7.2f} {e['sys_s']:>7.2f} {e['cpu_pct_of_core']:>6.1f} "
              f"{wall_s:>7.2f} {e['peak_rss_kb'] / 1024:>6.1f} MB")
    stop_jvms(jvms)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", default=["first", "bpf", "self"],
                    help="first, bpf, self (default: all)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--runs", type=int, default=5, help="runs per JVM count (first)")
    ap.add_argument("--secs", type=int, default=5, help="recording length (bpf, self)")
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("host.py: needs root")
    jprof = os.path.join(os.path.abspath(a.build), "jprof")
    a.apps = os.path.join(os.path.abspath(a.build), "tests", "apps")
    for f in (jprof, os.path.join(a.apps, "ManyThreads.class")):
        if not os.path.exists(f):
            sys.exit(f"host.py: {f} missing (make all apps)")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    parts = {"first": part_first, "bpf": part_bpf, "self": part_self}
    out = {}
    try:
        with tempfile.TemporaryDirectory(prefix="jprof-host-") as tmp:
            for name in a.parts:
                if name not in parts:
                    sys.exit(f"host.py: unknown part {name}")
                out[name] = parts[name](a, jprof, tmp)
    finally:
        cleanup()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""stopwrite.py: how long jprof takes from SIGINT to its exit on a deep-stack recording.

Issue 33 asks that stopping and writing a 30,000-sample deep-stack recording take at most
0.3 s. One H2 JVM under JDBC load (bench/H2Bench.java, Debian's libh2-java: two workers,
JDBC -> H2's parser and MVStore, 40-70 frames deep) is recorded with `record -v -p PID
-F 999` into pprof and HTML (and, with --all-formats, folded, JFR and speedscope too) until
about --samples samples were taken (the rate times the JVM's CPU time), then jprof gets
SIGINT. Each run prints the wall time from SIGINT to exit, jprof's CPU over that stop (its
rusage at exit minus /proc's reading just before the signal), the samples the recording
says it holds, and -v's "stop:" line (where the time went). Several runs, each a fresh
jprof on the same JVM; the medians are printed last.
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

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H2_JAR = "/usr/share/java/h2.jar"
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid):
    """utime + stime of a live process, from /proc (0 if it is gone)"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0.0


def one_run(a, jvm_pid, tmp, k):
    outs = [os.path.join(tmp, f"r{k}.pb.gz"), os.path.join(tmp, f"r{k}.html")]
    if a.all_formats:
        outs += [os.path.join(tmp, f"r{k}.folded"), os.path.join(tmp, f"r{k}.jfr"),
                 os.path.join(tmp, f"r{k}.speedscope.json")]
    cmd = [os.path.join(a.build, "jprof"), "record", "-v", "-p", str(jvm_pid), "-F",
           str(a.hz)]
    for o in outs:
        cmd += ["-o", o]
    err = open(os.path.join(tmp, f"r{k}.err"), "w+")
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    # a sample per 1/hz of the JVM's CPU time: stop once it ran long enough (a loaded host
    # gives it less than its two workers want), or after 3 minutes
    jvm0, t_start = proc_cpu_s(jvm_pid), time.monotonic()
    while (proc_cpu_s(jvm_pid) - jvm0) * a.hz < a.samples and time.monotonic() - t_start < 180:
        time.sleep(0.2)
    cpu_before = proc_cpu_s(p.pid)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    cpu = ru.ru_utime + ru.ru_stime - cpu_before
    err.seek(0)
    text = err.read()
    err.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"stopwrite.py: jprof failed:\n{text}")
    m = re.search(r"^jprof: (\d+) samples", text, re.M)
    stop = re.search(r"stop: (.*)$", text, re.M)
    sizes = {os.path.basename(o): os.path.getsize(o) for o in outs}
    return {"wall_s": wall, "cpu_s": cpu, "samples": int(m.group(1)) if m else 0,
            "stop_line": stop.group(1) if stop else "", "sizes": sizes}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    ap.add_argument("--samples", type=int, default=30000)
    ap.add_argument("--hz", type=int, default=999)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--all-formats", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("stopwrite.py: run as root (jprof record)")
    if not os.path.exists(H2_JAR):
        sys.exit(f"stopwrite.py: {H2_JAR} missing: install Debian's libh2-java")
    with tempfile.TemporaryDirectory(prefix="jprof-stopwrite-") as tmp:
        subprocess.check_call(["javac", "-d", tmp, "-cp", H2_JAR,
                               os.path.join(REPO, "bench/H2Bench.java")])
        jvm = subprocess.Popen([a.java, "-Xms256m", "-Xmx256m", "-cp", f"{H2_JAR}:{tmp}",
                                "H2Bench", "2", "0", "5000", "5", "own"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            for line in jvm.stdout:
                if line.strip() == "ready":
                    break
            else:
                sys.exit("stopwrite.py: H2Bench did not start")
            runs = []
            for k in range(a.runs):
                r = one_run(a, jvm.pid, tmp, k)
                runs.append(r)
                print(f"stopwrite: run {k + 1}: {r['samples']} samples; SIGINT to exit "
                      f"{r['wall_s'] * 1000:.0f} ms wall, {r['cpu_s'] * 1000:.0f} ms CPU; "
                      f"stop: {r['stop_line']}; "
                      + ", ".join(f"{n} {s / 1e3:.0f} kB" for n, s in r["sizes"].items()),
                      flush=True)
        finally:
            jvm.stdin.close()
            jvm.wait(timeout=30)
    res = {"runs": runs, "hz": a.hz,
           "median_wall_s": statistics.median(r["wall_s"] for r in runs),
           "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
           "median_samples": statistics.median(r["samples"] for r in runs)}
    print(f"stopwrite: H2 under JDBC load, -F {a.hz}, {res['median_samples']:.0f} samples "
          f"(median of {a.runs}): SIGINT to exit {res['median_wall_s'] * 1000:.0f} ms wall, "
          f"{res['median_cpu_s'] * 1000:.0f} ms of jprof's CPU (target: 300 ms)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""churn.py: jprof's RSS and open fds over a long `record -a` while processes and JVMs churn.

`jprof record -a -F HZ -o churn.pb.gz` for MINUTES (default 30) while 3 long-lived JVMs
(tests/apps/ManyThreads, one busy thread each, ~40 Java frames a stack) are sampled and a
driver starts and reaps, at steady rates that reach the totals at the end:
  PROCS short-lived processes (default 50,000 in 30 minutes), in turn out of every 20:
    12 /bin/true (fork, exec, exit), 5 churnproc (bench/churnproc.c) spinning 5-20 ms of
    CPU (sampled, symbolized), 2 churnproc of 3 threads, 1 `sh -c 'exec churnproc'` (an
    exec that changes the comm); churnproc is built as 16 variants (own function names,
    own build id), each copied under 4 names: 64 binaries and comms
  JVMS short-lived JVMs (default 2,000 in 30 minutes): tests/apps/ShortLived, ~0.5 s of
    work, the quickest JVM flags, at most MAX_JVMS (3) alive at once; jprof attaches its
    agent to those it finds.
A shorter --minutes scales the default totals with it (the same rates as the full run).
Every SAMPLE_SECS (60) it reads jprof's VmRSS, VmHWM, open fds (/proc/PID/fd) and CPU, and
prints a row. At the end: RSS and fd growth over the last 20 minutes (the last 2/3 of a
shorter run), the peak, the long-lived JVMs' complete-Java-stack share from jprof's
per-JVM report lines and their Java stacks rooted at Thread.run in the profile (as
tests/e2e/realapps.bats counts them), the short-lived JVMs' figures, and the agent files
the exited JVMs left in /tmp. Prints figures; asserts nothing.

--daemon: `jprof daemon -F HZ --store DIR --interval 60` (then SIGTERM) in place of record
(issue: the always-on mode over hours of churn); the profile is then read back from its store.
--cgroup: everything the run starts (not jprof) in a cgroup v2 directory of its own, and jprof
given `--cgroup` of it: a soak that leaves other processes of a shared host alone (it attaches
no agent to their JVMs, samples none of their threads).

Needs root and `make all apps`. --json FILE writes every figure.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import longrun  # bench/, beside this file: proc_figures, rss_parts
import overhead  # stop_gently

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FULL_MINUTES = 30
FULL_PROCS = 50000
FULL_JVMS = 2000
VARIANTS, NAMES_PER_VARIANT = 16, 4
MAX_LIVE_PROCS = 32  # a slow host falls behind the rate, it is not forked at
TICK_S = 0.02
# the quickest JVM start: CDS archive, C1 only, small stacks and heap, one GC thread
SHORT_JVM_FLAGS = ["-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xss256k", "-Xmx32m",
                   "-XX:+UseSerialGC"]
SHORT_JVM_MS = 500
# realapps.bats' rooted(): samples with a Java frame, and of those the ones whose Java
# stack starts at the threads' root (ManyThreads' threads run spin() from Thread.run)
JAVA_FRAME = re.compile(r"_\[[ji0]\]")
ROOT = re.compile(r"^java;java/lang/Thread\.run_\[")
FOLDED_LINE = re.compile(r"^jprof: (\d+) more JVMs that exited .*?: (\d+) samples, (\d+) in Java "
                         r"threads of which (\d+) with complete")
JVM_LINE = re.compile(r"^jprof: JVM (\d+) \(([^)]*)\): (\d+) samples, (\d+) in Java threads of "
                      r"which (\d+) with complete Java stacks")
AFTER = re.compile(r"([\d.]+)% of the (\d+) after the agent connected")
children = []  # the long-lived JVMs and jprof
churn = []  # short-lived processes and JVMs not reaped yet


CGROUP = {}  # --cgroup: "root" (the cgroup2 mount), "orig" and "dir" (absolute paths)


def cleanup():
    overhead.stop_gently(churn + children)
    churn.clear()
    children.clear()
    if CGROUP.get("dir"):
        cgroup_leave()


def cgroup_enter():
    """this process into a new cgroup v2 directory (its children follow): (root, relative)"""
    root = None
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "cgroup2":
                root = fields[1]
                break
    if not root:
        raise RuntimeError("--cgroup: no cgroup2 mount in /proc/self/mounts")
    with open("/proc/self/cgroup") as f:
        rel = next(ln.split(":", 2)[2].strip() for ln in f if ln.startswith("0::"))
    CGROUP["root"], CGROUP["orig"] = root, os.path.join(root, rel.lstrip("/"))
    name = f"jprof-churn-{os.getpid()}"
    CGROUP["dir"] = os.path.join(root, name)
    os.mkdir(CGROUP["dir"])
    with open(os.path.join(CGROUP["dir"], "cgroup.procs"), "w") as f:
        f.write("0")
    return name


def cgroup_leave():
    """back where it was, and the directory removed once its processes are gone"""
    try:
        with open(os.path.join(CGROUP["orig"], "cgroup.procs"), "w") as f:
            f.write("0")
    except OSError:
        pass
    for _ in range(100):
        try:
            os.rmdir(CGROUP["dir"])
            break
        except OSError:
            time.sleep(0.1)
    CGROUP.pop("dir", None)


def outside_cgroup():
    """preexec_fn of jprof itself: in the cgroup it was started from, not the run's"""
    with open(os.path.join(CGROUP["orig"], "cgroup.procs"), "w") as f:
        f.write("0")


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


def fd_kinds(pid):
    """open fds of PID by what they point at, digits left out: {kind: count}"""
    kinds = {}
    d = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(d)
    except OSError:
        return kinds
    for fd in fds:
        try:
            k = os.readlink(os.path.join(d, fd))
        except OSError:
            continue
        # an agent's files: /tmp/jprof-PID-TOKEN.ring
        k = re.sub(r"\d+", "N", re.sub(r"/jprof-\d+-\w+\.", "/jprof-PID-TOKEN.", k))
        kinds[k] = kinds.get(k, 0) + 1
    return kinds


def build_bins(tmp):
    """VARIANTS x NAMES_PER_VARIANT churnproc binaries, each under its own name"""
    src = os.path.join(REPO, "bench", "churnproc.c")
    bins = []
    for v in range(VARIANTS):
        first = os.path.join(tmp, f"chp{v:02d}a")
        subprocess.check_call(["cc", "-O1", "-g", "-pthread", f"-DCHURN_VARIANT={v}", src,
                               "-o", first])
        bins.append(first)
        for k in range(1, NAMES_PER_VARIANT):
            name = os.path.join(tmp, f"chp{v:02d}{chr(ord('a') + k)}")
            shutil.copy(first, name)
            bins.append(name)
    return bins


def proc_argv(i, bins):
    """the i-th short-lived process (its kind in turn out of every 20)"""
    b = bins[i % len(bins)]
    ms = str(5 + (i * 7) % 16)
    k = i % 20
    if k < 12:
        return "true", ["/bin/true"]
    if k < 17:
        return "spin", [b, ms, "1"]
    if k < 19:
        return "threads", [b, ms, "3"]
    return "exec", ["/bin/sh", "-c", f"exec {b} {ms} 1"]


def sample(jp_pid, t0, row_of):
    f = longrun.proc_figures(jp_pid)
    if not f:
        return None
    try:
        fds = len(os.listdir(f"/proc/{jp_pid}/fd"))
    except OSError:
        return None
    r = {"t": round(time.monotonic() - t0, 1), "rss_kb": f[0], "hwm_kb": f[1], "cpu_s": f[2],
         "fds": fds, "load1": round(os.getloadavg()[0], 2)}
    r.update(row_of())
    return r


def print_row(r, prev):
    cpu = (f"{100 * (r['cpu_s'] - prev['cpu_s']) / max(r['t'] - prev['t'], 1e-3):.2f}"
           if prev else "-")
    print(f"  {r['t'] / 60:>5.1f} {r['rss_kb'] / 1024:>8.1f} {r['hwm_kb'] / 1024:>8.1f} "
          f"{r['fds']:>5} {cpu:>6} {r['procs']:>7} {r['jvms']:>6} {r['jvms_alive']:>5} "
          f"{r['load1']:>6.2f}", flush=True)


def growth_window(timeline, minutes):
    """(first, last) rows of the last 20 minutes (2/3 of a shorter run): first is the last
    row at or before that span's start, so the span is at least that long"""
    last = timeline[-1]
    span = min(20 * 60, minutes * 60 * 2 / 3)
    before = [r for r in timeline if r["t"] <= last["t"] - span + 5]
    return (before[-1] if before else timeline[0]), last, span


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--minutes", type=float, default=float(FULL_MINUTES))
    ap.add_argument("--procs", type=int, help=f"short-lived processes in all (default "
                    f"{FULL_PROCS} x MINUTES / {FULL_MINUTES})")
    ap.add_argument("--jvms", type=int, help=f"short-lived JVMs in all (default {FULL_JVMS} x "
                    f"MINUTES / {FULL_MINUTES})")
    ap.add_argument("--max-jvms", type=int, default=3, help="short-lived JVMs alive at once")
    ap.add_argument("--hz", type=int, default=99)
    ap.add_argument("--sample-secs", type=float, default=60.0)
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    ap.add_argument("--json")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="jprof -v: its memory by owner at the end is printed")
    ap.add_argument("--keep", metavar="FILE", help="keep the profile (churn.pb.gz) here")
    ap.add_argument("--daemon", action="store_true",
                    help="jprof daemon into a store of its own, not record")
    ap.add_argument("--cgroup", action="store_true",
                    help="the run's processes in a cgroup of their own, jprof --cgroup of it")
    a = ap.parse_args()
    if a.procs is None:
        a.procs = round(FULL_PROCS * a.minutes / FULL_MINUTES)
    if a.jvms is None:
        a.jvms = round(FULL_JVMS * a.minutes / FULL_MINUTES)
    if os.geteuid() != 0:
        sys.exit("churn.py: needs root")
    a.build = os.path.abspath(a.build)
    jprof = os.path.join(a.build, "jprof")
    apps = os.path.join(a.build, "tests", "apps")
    for f in (jprof, os.path.join(apps, "ManyThreads.class"),
              os.path.join(apps, "ShortLived.class"), a.java):
        if not os.path.exists(f):
            sys.exit(f"churn.py: {f} missing (make all apps)")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with tempfile.TemporaryDirectory(prefix="jprof-churn-") as tmp:
        try:
            res = run(a, tmp, jprof, apps)
            if a.keep:
                shutil.copyfile(os.path.join(tmp, "churn.pb.gz"), a.keep)
        except (RuntimeError, subprocess.SubprocessError, OSError) as e:
            sys.exit(f"churn.py: {e}")
        finally:
            cleanup()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


def run(a, tmp, jprof, apps):
    bins = build_bins(tmp)
    dur = a.minutes * 60
    longs = []
    target = ["-a"]
    if a.cgroup:
        target = ["--cgroup", cgroup_enter()]
    for _ in range(3):
        p = subprocess.Popen([a.java, "-Xmx64m", "-XX:+UseSerialGC", "-cp", apps,
                              "ManyThreads", "1", str(int(dur) + 3600)], cwd=tmp,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        children.append(p)
        longs.append(p)
    for p in longs:
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError("a long-lived ManyThreads JVM did not start")
    errpath = os.path.join(tmp, "jprof.err")
    pb = os.path.join(tmp, "churn.pb.gz")
    errf = open(errpath, "w+")
    store = os.path.join(tmp, "store")
    if a.daemon:
        argv = [jprof, "daemon", "-F", str(a.hz), "--store", store, "--interval", "60"]
        if a.cgroup:  # else the whole host, the daemon's default
            argv += target
    else:
        argv = [jprof, "record"] + target + ["-F", str(a.hz), "-o", pb]
    jp = subprocess.Popen(argv + (["-v"] if a.verbose else []), cwd=tmp,
                          stdout=subprocess.DEVNULL, stderr=errf,
                          preexec_fn=outside_cgroup if a.cgroup else None)
    children.append(jp)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        errf.seek(0)
        if re.search(r"recording|daemon|segment", errf.read()):
            break
        if jp.poll() is not None:
            errf.seek(0)
            raise RuntimeError(f"jprof exited early: {errf.read()[-2000:]}")
        time.sleep(0.05)
    print(f"churn: {a.minutes:g} min, `{' '.join(argv[1:2] + target + ['-F', str(a.hz)])}`, "
          f"3 long-lived JVMs "
          f"({', '.join(str(p.pid) for p in longs)}); target {a.procs} short-lived processes "
          f"({a.procs / dur:.1f}/s) and {a.jvms} short-lived JVMs ({a.jvms / dur:.2f}/s, "
          f"at most {a.max_jvms} at once)", flush=True)
    print(f"  {'min':>5} {'RSS MB':>8} {'HWM MB':>8} {'fds':>5} {'%core':>6} {'procs':>7} "
          f"{'JVMs':>6} {'alive':>5} {'load1':>6}", flush=True)
    st = {"procs": 0, "procs_failed": 0, "jvms": 0, "jvms_failed": 0, "jvms_max_alive": 0,
          "kinds": {}}
    live_procs, live_jvms, jvm_pids = [], [], set()
    t0 = time.monotonic()

    def row_of():
        return {"procs": st["procs"], "jvms": st["jvms"], "jvms_alive": len(live_jvms)}
    timeline = [sample(jp.pid, t0, row_of)]
    fds_first = fd_kinds(jp.pid)
    parts = None
    print_row(timeline[0], None)
    next_sample = a.sample_secs

    def reap(live, failed_key):
        for p in list(live):
            if p.poll() is not None:
                live.remove(p)
                churn.remove(p)
                if p.returncode != 0:
                    st[failed_key] += 1
    while True:
        el = time.monotonic() - t0
        if el >= dur:
            break
        reap(live_procs, "procs_failed")
        reap(live_jvms, "jvms_failed")
        due = min(a.procs, int(a.procs * el / dur) + 1)
        while st["procs"] < due and len(live_procs) < MAX_LIVE_PROCS:
            kind, argv = proc_argv(st["procs"], bins)
            p = subprocess.Popen(argv, cwd=tmp, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            churn.append(p)
            live_procs.append(p)
            st["procs"] += 1
            st["kinds"][kind] = st["kinds"].get(kind, 0) + 1
        due = min(a.jvms, int(a.jvms * el / dur) + 1)
        if st["jvms"] < due and len(live_jvms) < a.max_jvms:
            p = subprocess.Popen([a.java] + SHORT_JVM_FLAGS + ["-cp", apps, "ShortLived",
                                                               str(SHORT_JVM_MS)],
                                 cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            churn.append(p)
            live_jvms.append(p)
            jvm_pids.add(p.pid)
            st["jvms"] += 1
            st["jvms_max_alive"] = max(st["jvms_max_alive"], len(live_jvms))
        if el >= next_sample:
            r = sample(jp.pid, t0, row_of)
            if r is None:
                raise RuntimeError("jprof exited during the run")
            print_row(r, timeline[-1])
            timeline.append(r)
            if not parts or r["rss_kb"] >= parts["rss_kb"]:
                p = longrun.rss_parts(jp.pid)
                if p:
                    parts = dict(p, rss_kb=r["rss_kb"], t=r["t"])
            next_sample += a.sample_secs
        time.sleep(TICK_S)
    # the last ones finish (a JVM takes about a second), then the closing row
    deadline = time.monotonic() + 30
    while (live_procs or live_jvms) and time.monotonic() < deadline:
        reap(live_procs, "procs_failed")
        reap(live_jvms, "jvms_failed")
        time.sleep(0.1)
    unfinished = len(live_procs) + len(live_jvms)
    overhead.stop_gently(churn)
    churn.clear()
    r = sample(jp.pid, t0, row_of)
    if r is None:
        raise RuntimeError("jprof exited during the run")
    print_row(r, timeline[-1])
    timeline.append(r)
    if not parts or r["rss_kb"] >= parts["rss_kb"]:
        p = longrun.rss_parts(jp.pid)
        if p:
            parts = dict(p, rss_kb=r["rss_kb"], t=r["t"])
    fds_last = fd_kinds(jp.pid)
    t_stop = time.monotonic()
    jp.send_signal(signal.SIGTERM if a.daemon else signal.SIGINT)
    _, status, ru = os.wait4(jp.pid, 0)
    jp.returncode = os.waitstatus_to_exitcode(status)
    children.remove(jp)
    stop_s = time.monotonic() - t_stop
    errf.seek(0)
    err = errf.read()
    errf.close()
    for ln in err.splitlines():
        if "debug: memory:" in ln or "debug: heap:" in ln:
            print("churn: " + ln)
    if jp.returncode != 0:
        raise RuntimeError(f"jprof exited {jp.returncode}: {err[-2000:]}")
    if a.daemon:  # the whole store, as one profile
        subprocess.run([jprof, "report", "--store", store, "-o", pb], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    # the long-lived JVMs: jprof's per-JVM lines and, in the profile, their rooted stacks
    long_pids = {p.pid for p in longs}
    per_jvm = {}
    for line in err.splitlines():
        m = JVM_LINE.match(line)
        if not m:
            continue
        e = {"pid": int(m.group(1)), "name": m.group(2), "samples": int(m.group(3)),
             "java": int(m.group(4)), "complete": int(m.group(5))}
        ma = AFTER.search(line)
        if ma:
            e["after_pct"], e["after"] = float(ma.group(1)), int(ma.group(2))
        per_jvm.setdefault(e["pid"], e)  # a pid reused by a later JVM: the first line
    long_lines = [per_jvm[p] for p in sorted(long_pids) if p in per_jvm]
    lj = sum(e["java"] for e in long_lines)
    lc = sum(e["complete"] for e in long_lines)
    folded = os.path.join(tmp, "long.folded")
    subprocess.run([jprof, "report", pb, "-p", ",".join(str(p) for p in sorted(long_pids)),
                    "-o", folded], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rooted = with_java = 0
    with open(folded) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if JAVA_FRAME.search(stack) and "[no Java stack" not in stack:
                with_java += int(n)
                if ROOT.search(stack):
                    rooted += int(n)
    # the short-lived JVMs: how many jprof reported, with Java stacks, and what they left
    short_lines = [e for p, e in per_jvm.items() if p in jvm_pids]
    sj = sum(e["java"] for e in short_lines)
    sc = sum(e["complete"] for e in short_lines)
    left = [n for n in os.listdir("/tmp")
            if (m := re.match(r"jprof-(\d+)-", n)) and int(m.group(1)) in jvm_pids and
            not os.path.exists(f"/proc/{m.group(1)}")]
    for n in left:  # counted, then removed: the machine is shared
        try:
            os.unlink(os.path.join("/tmp", n))
        except OSError:
            pass

    first, last, span = growth_window(timeline, a.minutes)
    res = {"minutes": a.minutes, "hz": a.hz, "daemon": a.daemon, "cgroup": a.cgroup, "procs_target": a.procs, "jvms_target": a.jvms,
           "procs_started": st["procs"], "procs_failed": st["procs_failed"],
           "proc_kinds": st["kinds"], "jvms_started": st["jvms"],
           "jvms_failed": st["jvms_failed"], "jvms_max_alive": st["jvms_max_alive"],
           "unfinished_at_end": unfinished, "long_pids": sorted(long_pids),
           "timeline": timeline, "rss_parts": parts,
           "growth_span_s": last["t"] - first["t"], "growth_span_asked_s": span,
           "rss_growth_mb": (last["rss_kb"] - first["rss_kb"]) / 1024,
           "rss_window_max_over_first_mb":
           (max(r["rss_kb"] for r in timeline if r["t"] >= first["t"]) - first["rss_kb"]) / 1024,
           "fd_growth": last["fds"] - first["fds"],
           "peak_rss_mb": ru.ru_maxrss / 1024,
           "peak_fds": max(r["fds"] for r in timeline),
           "cpu_s": ru.ru_utime + ru.ru_stime, "stop_s": round(stop_s, 1),
           "fd_kinds_first": fds_first, "fd_kinds_last": fds_last,
           "long_jvms": long_lines,
           "long_complete_pct": 100 * lc / lj if lj else None,
           "long_rooted": rooted, "long_with_java": with_java,
           "long_rooted_pct": 100 * rooted / with_java if with_java else None,
           "short_jvms_reported": len(short_lines),
           "short_jvms_with_java": sum(1 for e in short_lines if e["java"]),
           "short_jvms_with_complete": sum(1 for e in short_lines if e["complete"]),
           "short_complete_pct": 100 * sc / sj if sj else None,
           "agent_files_left": len(left),
           "summary": [ln for ln in err.splitlines() if "samples (cpu-clock" in ln or
                       "evicted" in ln or "symbols:" in ln or "memory:" in ln or
                       "lost" in ln and not ln.startswith("jprof: JVM ")]}

    print(f"churn: ran {st['procs']} short-lived processes ({', '.join(f'{k} {v}' for k, v in sorted(st['kinds'].items()))}; "
          f"{st['procs_failed']} failed) and {st['jvms']} short-lived JVMs ({st['jvms_failed']} "
          f"failed, at most {st['jvms_max_alive']} alive at once) of {a.procs} and {a.jvms} "
          f"asked; {unfinished} still running at the end")
    print(f"churn: jprof RSS {first['rss_kb'] / 1024:.1f} -> {last['rss_kb'] / 1024:.1f} MB "
          f"over the last {res['growth_span_s'] / 60:.1f} min ({res['rss_growth_mb']:+.2f} MB; "
          f"highest reading {res['rss_window_max_over_first_mb']:+.2f} MB above the first), "
          f"open fds {first['fds']} -> {last['fds']} ({res['fd_growth']:+d}); peak RSS "
          f"{res['peak_rss_mb']:.1f} MB, peak fds {res['peak_fds']}")
    print(f"churn: jprof CPU {res['cpu_s']:.1f} s ({100 * res['cpu_s'] / max(last['t'], 1):.2f}% "
          f"of a core over the run, the final write included); it took {res['stop_s']} s to "
          f"write and exit after {'SIGTERM' if a.daemon else 'SIGINT'}")
    for e in long_lines:
        after = (f", {e['after_pct']:.1f}% of the {e['after']} after the agent connected"
                 if "after_pct" in e else "")
        print(f"churn: long-lived JVM {e['pid']}: {e['complete']} of {e['java']} Java-thread "
              f"samples with complete Java stacks "
              f"({100 * e['complete'] / e['java'] if e['java'] else 0:.1f}%{after})")
    print(f"churn: long-lived JVMs together: complete Java stacks "
          + (f"{res['long_complete_pct']:.2f}% of {lj}" if lj else "none")
          + f" (jprof's report); rooted at Thread.run {rooted} of {with_java} samples with a "
          "Java stack" + (f" ({res['long_rooted_pct']:.2f}%)" if with_java else "")
          + " (the profile)")
    print(f"churn: short-lived JVMs in jprof's report: {len(short_lines)} of {st['jvms']}, "
          f"{res['short_jvms_with_java']} with samples in Java threads, "
          f"{res['short_jvms_with_complete']} with complete Java stacks "
          + (f"({res['short_complete_pct']:.1f}% of their {sj} Java-thread samples)"
             if sj else "") + f"; agent files they left in /tmp: {len(left)} (removed)")
    # JVMs that exited beyond the newest 128 are added up in one line of jprof's report
    for line in err.splitlines():
        m = FOLDED_LINE.match(line)
        if m:
            print(f"churn: and {m.group(1)} more JVMs that exited, added up by jprof (short-lived "
                  f"ones and any other JVM of the host): {m.group(3)} samples in Java threads, "
                  f"{m.group(4)} with complete Java stacks")
    for k in sorted(set(fds_first) | set(fds_last)):
        if fds_first.get(k, 0) != fds_last.get(k, 0):
            print(f"churn: fds to {k}: {fds_first.get(k, 0)} -> {fds_last.get(k, 0)}")
    for line in res["summary"]:
        print(line)
    if parts:
        print(f'churn: at the largest RSS read ({parts["rss_kb"] / 1024:.1f} MB at '
              f'{parts["t"] / 60:.1f} min): anonymous {parts["RssAnon"] / 1024:.1f} MB, files '
              f'{parts["RssFile"] / 1024:.1f} MB, shared (BPF ring buffer) '
              f'{parts["RssShmem"] / 1024:.1f} MB')
    return res


if __name__ == "__main__":
    main()

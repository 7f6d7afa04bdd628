#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""longrun.py: jprof's own cost over a long whole-host recording of real applications.

`jprof record -a -F HZ -d SECS` while the host runs 10 JVMs: Debian's H2 database under a
2-thread JDBC load (bench/H2Bench.java), javac compiling java.util from the JDK's src.zip
over and over (a new JVM every round: JIT, class loading, processes that come and go; with
--javac jvm every round in one JVM, as a build daemon runs it), and
8 idle H2 TCP servers (a server's idle threads). Every
10 s it reads jprof's RSS and CPU time from /proc; at the end it reports peak RSS (the
kernel's VmHWM high-water mark), jprof's CPU in % of one core over the whole run and over
the steady state (after the first 30 s: the attaches are done), RSS growth over the second
half, and the per-JVM completeness lines jprof printed.

--daemon: `jprof daemon -a -F HZ --store DIR --interval N` for SECS (then SIGTERM) in place of
record: the same figures, and the store's size: bytes per segment and per hour, and per day at
that rate (what README's sizing says).

What the applications lose is more than jprof's own CPU: its BPF programs run in their time
(kernel.bpf_stats_enabled is set for the run and restored: run_time_ns of the programs jprof
holds). Their steady-state CPU is printed beside jprof's, and the two as a share of the
machine: the CPU the applications could not have, on a host they keep busy. A same-run
throughput ratio (`bench/suite.py`) cannot resolve 0.5% on this host; this bound can.

Needs root, `make all apps`, libh2-java and openjdk-17-source. --json FILE writes every figure.
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

import host  # bench/, beside this file: jprof_progs (the programs a jprof holds)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H2_JAR = "/usr/share/java/h2.jar"
TICK = os.sysconf("SC_CLK_TCK")
children = []


def cleanup():
    # SIGTERM first: a JVM that exits runs its agent's exit hook, which removes its files
    # from /tmp (a SIGKILL leaves 4-8 MB a JVM behind)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in children:
            if p.poll() is not None and sig == signal.SIGKILL:
                continue  # reaped: its group id may be another's by now
            try:
                os.killpg(p.pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + 10
        for p in children:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
    children.clear()


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


def spawn(argv, **kw):
    p = subprocess.Popen(argv, start_new_session=True, **kw)
    children.append(p)
    return p


def proc_figures(pid):
    """(rss_kb, hwm_kb, cpu_s) of a live process, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            st = f.read()
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    rss = int(re.search(r"VmRSS:\s+(\d+)", st).group(1))
    hwm = int(re.search(r"VmHWM:\s+(\d+)", st).group(1))
    fields = stat[stat.rindex(")") + 2:].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    return rss, hwm, cpu


def rss_parts(pid):
    """RSS by kind (anonymous: the heap; file: code; shmem: the BPF ring buffer) and the
    largest mappings, in kB, or None"""
    try:
        with open(f"/proc/{pid}/status") as f:
            st = f.read()
        with open(f"/proc/{pid}/smaps") as f:
            sm = f.read().splitlines()
    except OSError:
        return None
    parts = {k: int(re.search(k + r":\s+(\d+)", st).group(1))
             for k in ("RssAnon", "RssFile", "RssShmem")}
    maps, name = {}, None
    for line in sm:
        m = re.match(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$", line)
        if m:
            name = m.group(1) or "[anon]"
        elif line.startswith("Rss:") and name:
            maps[name] = maps.get(name, 0) + int(line.split()[1])
    parts["largest"] = sorted(maps.items(), key=lambda kv: -kv[1])[:6]
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--secs", type=int, default=600)
    ap.add_argument("--hz", type=int,
                    help="-F (default: record 99 Hz; the daemon its own default, 19 Hz)")
    ap.add_argument("--jdk", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--json")
    ap.add_argument("--daemon", action="store_true",
                    help="jprof daemon into a store of its own, not record")
    ap.add_argument("--interval", type=int, default=60, help="--daemon: seconds a segment")
    ap.add_argument("--keep", metavar="FILE", help="keep the profile (host.folded) here")
    ap.add_argument("--javac", choices=("fork", "jvm"), default="fork",
                    help="fork: a javac process (a new JVM) each round; jvm: every round in "
                    "one JVM that lives the whole run (bench/JavacLoop.java, a build daemon's)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("longrun.py: needs root")
    if a.hz is None:
        a.hz = 19 if a.daemon else 99  # the daemon's own default: given by not giving -F
    jprof = os.path.join(a.build, "jprof")
    apps = os.path.join(a.build, "tests", "apps")
    src_zip = os.path.join(a.jdk, "lib", "src.zip")
    for f, why in ((jprof, "make all"), (os.path.join(apps, "ManyThreads.class"), "make apps"),
                   (H2_JAR, "Debian libh2-java"), (src_zip, "Debian openjdk-17-source")):
        if not os.path.exists(f):
            sys.exit(f"longrun.py: {f} missing ({why})")
    java, javac = os.path.join(a.jdk, "bin", "java"), os.path.join(a.jdk, "bin", "javac")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with open(host.BPF_STATS) as f:
        saved_stats = f.read().strip()
    with tempfile.TemporaryDirectory(prefix="jprof-longrun-") as tmp:
        try:
            with open(host.BPF_STATS, "w") as f:
                f.write("1")
            res = run(a, tmp, jprof, apps, src_zip, java, javac)
            if a.keep:
                shutil.copyfile(os.path.join(tmp, "host.folded"), a.keep)
        finally:
            cleanup()  # before the directory goes: javac writes into it
            with open(host.BPF_STATS, "w") as f:
                f.write(saved_stats)
    print(f"longrun: {a.secs} s at {a.hz} Hz, {res['jvms_at_start']} JVMs: peak RSS "
          f"{res['peak_rss_mb']:.1f} MB (second half grew {res['rss_growth_mb']:+.1f} MB); "
          f"jprof CPU {res['cpu_pct_all']:.2f}% of a core overall, "
          f"{res['cpu_pct_steady']:.2f}% in steady state; {res['javac_rounds']} javac rounds")
    if res.get("bpf_pct_steady") is not None:
        print(f"longrun: steady state: its BPF programs {res['bpf_pct_steady']:.3f}% of a core "
              f"({res['bpf_runs_per_s']:.0f} runs/s, {res['bpf_us_per_run']:.1f} us a run); jprof "
              f"and BPF together {res['machine_pct_steady']:.3f}% of the machine's "
              f"{res['ncpu']} CPUs: the CPU the applications could not have")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


def run(a, tmp, jprof, apps, src_zip, java, javac):
    subprocess.check_call([javac, "-d", tmp, "-cp", H2_JAR,
                           os.path.join(REPO, "bench", "H2Bench.java")])
    src = os.path.join(tmp, "src")
    os.makedirs(src)
    subprocess.check_call(["unzip", "-q", src_zip, "java.base/java/util/*"], cwd=src)
    files = [os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs
             if f.endswith(".java") and "/concurrent" not in d]
    with open(os.path.join(tmp, "files.txt"), "w") as f:
        f.write("\n".join(files) + "\n")
    # 8 idle H2 TCP servers and H2 under load, all up before the recording
    for i in range(8):
        spawn([java, "-Xmx64m", "-cp", H2_JAR, "org.h2.tools.Server", "-tcp", "-tcpPort",
               str(19301 + i), "-baseDir", os.path.join(tmp, f"h2-{i}")],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # KEEP 50000: a table of 100,000 rows, so the load stays steady for the whole run (with
    # a growing table the 256 MB heap was full within a minute: the JVM then spent the run
    # in full GCs, its Java threads nearly idle)
    h2 = spawn([java, "-Xmx256m", "-cp", f"{H2_JAR}:{tmp}", "H2Bench", "2", str(a.secs + 60),
                "50000"],
               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
               text=True)
    if h2.stdout.readline().strip() != "ready":
        raise RuntimeError("H2Bench did not start")
    h2.stdin.write("go\n")
    h2.stdin.flush()
    jargs = ["-nowarn", "-XDignore.symbol.file", "--patch-module",
             f"java.base={src}/java.base",
             "-d", f"{tmp}/classes", f"@{tmp}/files.txt"]
    if a.javac == "jvm":
        # javac rounds in one JVM that lives as long as the run (a build daemon's)
        subprocess.check_call([javac, "-d", tmp, os.path.join(REPO, "bench", "JavacLoop.java")])
        spawn([java, "-cp", tmp, "JavacLoop", f"{tmp}/rounds"] + jargs,
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        # javac rounds, one JVM each, until the recording ends
        spawn(["bash", "-c", 'n=0; while :; do "$0" "$@" >/dev/null 2>&1; n=$((n+1)); '
               f'echo $n >{tmp}/rounds; done', javac] + jargs)
    time.sleep(3)
    jvms = len([d for d in os.listdir("/proc") if d.isdigit() and
                os.path.exists(f"/proc/{d}/exe") and
                os.path.realpath(f"/proc/{d}/exe").endswith("/bin/java")])
    errpath = os.path.join(tmp, "jprof.err")
    store = os.path.join(tmp, "store")
    if a.daemon:
        argv = [jprof, "daemon", "-v", "--store", store, "--interval", str(a.interval)]
        if a.hz != 19:
            argv[2:2] = ["-F", str(a.hz)]
    else:
        argv = [jprof, "record", "-a", "-v", "-F", str(a.hz), "-d", str(a.secs), "-o",
                os.path.join(tmp, "host.folded")]
    with open(errpath, "w") as errf:
        jp = spawn(argv, stdout=subprocess.DEVNULL, stderr=errf)
    t0 = time.monotonic()
    stopped = False
    timeline = []
    parts = None  # what the RSS was made of at its largest reading
    while True:
        # wait4: this child's own rusage (peak RSS and CPU up to its very end)
        pid, status, ru = os.wait4(jp.pid, os.WNOHANG)
        if pid:
            jp.returncode = os.waitstatus_to_exitcode(status)
            break
        if a.daemon and not stopped and time.monotonic() - t0 >= a.secs:
            os.kill(jp.pid, signal.SIGTERM)  # the daemon writes its open interval and ends
            stopped = True
        f = proc_figures(jp.pid)
        if f:
            progs = host.jprof_progs(jp.pid) if not stopped else []
            timeline.append({"t": round(time.monotonic() - t0, 1), "rss_kb": f[0],
                             "hwm_kb": f[1], "cpu_s": f[2],
                             "bpf_ns": sum(p["run_time_ns"] for p in progs) if progs else None,
                             "bpf_runs": sum(p["run_cnt"] for p in progs) if progs else None})
            if not parts or f[0] >= parts["rss_kb"]:
                p = rss_parts(jp.pid)
                if p:
                    parts = dict(p, rss_kb=f[0], t=timeline[-1]["t"])
        time.sleep(1 if not timeline or timeline[-1]["t"] < 10 or
                   (a.daemon and not stopped and a.secs - (time.monotonic() - t0) < 10) else 10)
    wall = time.monotonic() - t0
    with open(errpath) as f:
        err = f.read()
    loop_rounds = 0
    try:
        with open(os.path.join(tmp, "rounds")) as f:
            loop_rounds = int(f.read() or 0)
    except (OSError, ValueError):
        pass
    if jp.returncode != 0:
        raise RuntimeError(f"jprof exited {jp.returncode}: {err[-2000:]}")
    if len(timeline) < 3:
        raise RuntimeError("jprof ended too early to be measured")
    steady = [p for p in timeline if p["t"] >= 30] or timeline
    half = [p for p in timeline if p["t"] >= timeline[-1]["t"] / 2] or timeline
    res = {"secs": a.secs, "hz": a.hz, "jvms_at_start": jvms, "javac_rounds": loop_rounds,
           "javac": a.javac,
           "peak_rss_mb": ru.ru_maxrss / 1024,
           "rss_growth_mb": (half[-1]["rss_kb"] - half[0]["rss_kb"]) / 1024,
           "cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": round(wall, 1),
           "cpu_pct_all": 100 * (ru.ru_utime + ru.ru_stime) / wall,
           "cpu_pct_steady": 100 * (steady[-1]["cpu_s"] - steady[0]["cpu_s"]) /
           max(steady[-1]["t"] - steady[0]["t"], 1),
           "timeline": timeline, "rss_parts": parts,
           "jvm_lines": [l for l in err.splitlines() if re.match(r"jprof: JVM \d+ \(", l)],
           "summary": [l for l in err.splitlines() if "samples (cpu-clock" in l or
                       "evicted" in l or "symbols:" in l or "memory:" in l]}
    # the BPF programs' run time over the steady state (readings while jprof held them)
    bsteady = [p for p in steady if p.get("bpf_ns") is not None]
    if len(bsteady) >= 2:
        dt = max(bsteady[-1]["t"] - bsteady[0]["t"], 1)
        runs = bsteady[-1]["bpf_runs"] - bsteady[0]["bpf_runs"]
        bns = bsteady[-1]["bpf_ns"] - bsteady[0]["bpf_ns"]
        res["ncpu"] = os.cpu_count()
        res["bpf_pct_steady"] = 100 * bns / 1e9 / dt
        res["bpf_runs_per_s"] = runs / dt
        res["bpf_us_per_run"] = bns / 1e3 / max(runs, 1)
        res["machine_pct_steady"] = (res["cpu_pct_steady"] + res["bpf_pct_steady"]) / res["ncpu"]
    if a.daemon:
        res.update(store_figures(store, a.interval))
        print(f'longrun: the store: {res["segments"]} segments of {a.interval} s, '
              f'{res["segment_kb_mean"]:.1f} kB a full segment (max {res["segment_kb_max"]:.1f}), '
              f'{res["mb_per_hour"]:.2f} MB an hour, {res["mb_per_day"]:.0f} MB a day at this rate')
    for line in res["summary"]:
        print(line)
    if parts:
        print(f'longrun: at the largest RSS read ({parts["rss_kb"] / 1024:.1f} MB at '
              f'{parts["t"]:.0f} s): heap and other anonymous {parts["RssAnon"] / 1024:.1f} MB, '
              f'files {parts["RssFile"] / 1024:.1f} MB, shared (BPF ring buffer) '
              f'{parts["RssShmem"] / 1024:.1f} MB; largest mappings: ' +
              ", ".join(f"{n} {kb / 1024:.1f}" for n, kb in parts["largest"]))
    print("longrun: RSS/high-water MB over time: " +
          ", ".join(f'{p["t"]:.0f}s {p["rss_kb"] / 1024:.0f}/{p["hwm_kb"] / 1024:.0f}'
                    for p in timeline))
    return res


def store_figures(store, interval):
    """the daemon's segments: their count, mean and largest size of the full ones (the first
    and the last are cut by the start and SIGTERM), and that rate per hour and per day"""
    seg = os.path.join(store, "segments")
    sizes = []
    for name in sorted(os.listdir(seg)):
        m = re.match(r"^(\d{8}T\d{6}Z)-(\d{8}T\d{6}Z)\.pb\.gz$", name)
        if m:
            sizes.append(os.path.getsize(os.path.join(seg, name)))
    if len(sizes) < 3:
        raise RuntimeError(f"the daemon wrote {len(sizes)} segments: too few to measure")
    full = sizes[1:-1]
    mean = sum(full) / len(full)
    return {"segments": len(sizes), "interval_s": interval, "segment_kb_mean": mean / 1024,
            "segment_kb_max": max(full) / 1024, "store_bytes": sum(sizes),
            "mb_per_hour": mean * 3600 / interval / 2**20,
            "mb_per_day": mean * 86400 / interval / 2**20}


if __name__ == "__main__":
    main()

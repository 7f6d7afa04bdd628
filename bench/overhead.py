#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""overhead.py: wall-time overhead of `jprof record -a` on fixed C and Java workloads.

Each round runs every configuration once, in turn (baseline, jprof at 99 Hz, jprof at
999 Hz; for C also `perf record -a -g` at 999 Hz, the kernel's own sampler, which shows
what sampling itself costs on the machine; for Java also JFR's `profile` settings), so
drifts of a shared machine hit all of them alike. The workload waits on stdin until the
profiler is up, so the figure is steady-state overhead, not start-up. Prints medians,
the median of the per-round ratios against the baseline of the same round, and jprof's
own CPU time (percent of one core) split into start-up (until it reports that it
records) and steady state (the rest), and its peak RSS. --java-windows measures the
Java workload in windows of one serving JVM instead (see windows()): a JVM a run adds
its JIT outcome to the noise.
"""
import argparse
import atexit
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
children = []  # every process started here: killed on any exit
PID_ONLY = False  # jprof -p WORKLOAD instead of -a (leaves a shared host's other JVMs alone)


def stop_gently(procs, grace=10.0):
    """SIGTERM, SIGKILL GRACE s later: a JVM that exits runs its agent's exit hook, which
    removes its files from /tmp, and a child benchmark (longrun.py, run by suite.py) stops
    the process groups it started, which a SIGKILL of it would leave running"""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        p.terminate()
    deadline = time.monotonic() + grace
    for p in live:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def kill_children():
    stop_gently(children)
    children.clear()


def on_signal(signum, _frame):
    kill_children()
    sys.exit(128 + signum)


def spawn(cmd, **kw):
    p = subprocess.Popen(cmd, **kw)
    children.append(p)
    return p


def start_workload(cmd):
    p = spawn(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in p.stdout:  # the JVM may log first (JFR does)
        if line.strip() == "ready":
            return p
    p.kill()
    sys.exit(f"workload did not start: {cmd}")


def finish_workload(p, keys=("elapsed_ms",)):
    """lets the workload run; returns {KEY: VALUE} of the figures it prints as KEY=VALUE"""
    p.stdin.write("\n")
    p.stdin.flush()
    out = p.stdout.read()
    p.wait()
    figs = {}
    for tok in out.split():
        k, eq, v = tok.partition("=")
        if eq and k in keys:
            figs[k] = float(v)
    missing = [k for k in keys if k not in figs]
    if missing:
        sys.exit(f"workload printed no {', '.join(missing)}: {out!r}")
    return figs


def start_jprof(jprof, freq, tmp, pid, extra_args=(), whole_host=False):
    err = open(os.path.join(tmp, f"jprof-{freq}.err"), "w+")
    t0 = time.monotonic()
    scope = ["-p", str(pid)] if PID_ONLY and not whole_host else ["-a"]
    p = spawn([jprof, "record"] + scope + list(extra_args) +
              ["-F", str(freq), "-o", os.path.join(tmp, f"out-{freq}.folded")], stderr=err)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        err.seek(0)
        if "recording" in err.read():
            break
        if p.poll() is not None:
            err.seek(0)
            sys.exit(f"jprof exited early: {err.read()}")
        time.sleep(0.05)
    return p, t0, err


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_run_ns(pid):
    """the process's CPU time in ns, its threads' scheduler runtimes added (the tick-based
    utime and stime of /proc/PID/stat count 10 ms steps: too coarse for a window)"""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that exited: its time went to the process, not seen here
    return total


def stop_jprof(p, t0, err, ready):
    p.send_signal(signal.SIGINT)
    _, status, ru = os.wait4(p.pid, 0)
    now = time.monotonic()
    secs = now - t0
    err.seek(0)
    text = err.read()
    err.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"jprof failed: {text}")
    cpu = ru.ru_utime + ru.ru_stime
    ready_t, ready_cpu = ready
    return {"cpu_pct": 100.0 * cpu / secs, "rss_mb": ru.ru_maxrss / 1024.0,
            "startup_cpu_s": ready_cpu,
            "steady_pct": 100.0 * (cpu - ready_cpu) / max(now - ready_t, 1e-3),
            "summary": text.strip().splitlines()[-1] if text.strip() else ""}


def run_config(workload_cmd, config, jprof, tmp, keys=("elapsed_ms",)):
    extra = {}
    cmd = list(workload_cmd)
    if config == "jfr":
        jfr = os.path.join(tmp, "rec.jfr")
        cmd.insert(1, f"-XX:StartFlightRecording=settings=profile,filename={jfr}")
    w = start_workload(cmd)
    if config.startswith("perf"):  # the kernel's own sampler, as a reference
        freq = int(config.split("@")[1])
        scope = ["-p", str(w.pid)] if PID_ONLY else ["-a"]
        pf = spawn(["perf", "record"] + scope + ["-g", "-F", str(freq), "-o",
                               os.path.join(tmp, "perf.data")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        ms = finish_workload(w, keys)
        pf.send_signal(signal.SIGINT)
        pf.wait()
        return ms, extra
    if config.startswith("jprof"):
        freq = int(config.split("@")[1])
        # jprof-native@HZ: no agent, so no stack requests: BPF's and jprof's share alone;
        # jprof-bpfwalk@HZ: --java-walk bpf (the default), BPF walks the Java stacks it can;
        # jprof-signal@HZ: --java-walk signal, a signal for every Java stack
        extra_args = ["--no-attach"] if config.startswith("jprof-native") else []
        if config.startswith("jprof-bpfwalk"):
            extra_args = ["--java-walk", "bpf"]
        elif config.startswith("jprof-signal"):
            extra_args = ["--java-walk", "signal"]
        jp, t0, err = start_jprof(jprof, freq, tmp, w.pid, extra_args)
        time.sleep(1.0)  # attach done; let the JVM settle
        ready = (time.monotonic(), proc_cpu_s(jp.pid))
        ms = finish_workload(w, keys)
        extra = stop_jprof(jp, t0, err, ready)
    else:
        # baseline, JFR and "again" (the baseline a second time in the round: its ratio is
        # the noise any other configuration's ratio has to stand out of)
        time.sleep(1.0)  # the pause a profiled run has too: configurations differ only by it
        ms = finish_workload(w, keys)
    return ms, extra


def bench(name, workload_cmd, configs, runs, jprof, tmp, key="elapsed_ms", also=()):
    """KEY: the workload's figure; elapsed_ms (lower is better) or a throughput. ALSO: more
    figures the same runs print, each in a table of its own and in the result under "also"
    """
    keys = (key,) + tuple(also)
    figs = {k: {c: [] for c in configs} for k in keys}
    extras = {c: [] for c in configs}
    for r in range(runs):
        order = configs if r % 2 == 0 else list(reversed(configs))
        for c in order:
            f, ex = run_config(workload_cmd, c, jprof, tmp, keys)
            for k in keys:
                figs[k][c].append(f[k])
            if ex:
                extras[c].append(ex)
    out = table(name, runs, configs, key, figs[key], extras)
    out["also"] = {k: table(name, runs, configs, k, figs[k], {}) for k in also}
    return out


def table(name, runs, configs, key, res, extras):
    """prints one figure's table: each configuration's median, its per-round ratios"""
    base = res["baseline"]
    print(f"\n{name}: {runs} rounds, configurations interleaved")
    print(f"  {'config':<12} {'median ' + key:>10} {'ratio':>7} {'min..max ratio':>16} "
          f"{'jprof start-up CPU':>19} {'steady CPU %core':>17} {'peak RSS':>9}")
    for c in configs:
        ratios = [a / b for a, b in zip(res[c], base)]
        line = (f"  {c:<12} {statistics.median(res[c]):>10.1f} {statistics.median(ratios):>7.4f} "
                f"{min(ratios):>7.4f}..{max(ratios):<7.4f}")
        if extras.get(c):
            start = statistics.median(e["startup_cpu_s"] for e in extras[c])
            steady = statistics.median(e["steady_pct"] for e in extras[c])
            rss = max(e["rss_mb"] for e in extras[c])
            line += f" {start * 1000:>16.0f} ms {steady:>16.2f}% {rss:>6.1f} MB"
        print(line)
    for c in configs:
        if extras.get(c):
            print(f"  last {c} summary: {extras[c][-1]['summary']}")
    out = {"rounds": runs, "metric": key}
    for c in configs:
        ratios = [a / b for a, b in zip(res[c], base)]
        out[c] = {"values": res[c], "median": statistics.median(res[c]), "ratios": ratios,
                  "median_ratio": statistics.median(ratios), "jprof": extras.get(c, [])}
    return out


def window_figs(w):
    """asks a serving workload (H2Bench SECS 0, JavaWork ROUNDS 0) for its totals:
    {ops, work_cpu_ns, t_ns}"""
    w.stdin.write("\n")
    w.stdin.flush()
    line = w.stdout.readline()
    figs = dict(tok.split("=") for tok in line.split() if "=" in tok)
    if not {"ops", "work_cpu_ns", "t_ns"} <= figs.keys():
        sys.exit(f"workload answered no totals: {line!r}")
    return {k: int(v) for k, v in figs.items()}


def start_profiler(config, w, java, jprof, tmp):
    """starts CONFIG's profiler on the running workload w (a JVM of JAVA for jfr); returns
    how to stop it, which returns jprof's figures or None"""
    if config.startswith("jprof"):
        freq = int(config.split("@")[1])
        extra_args = {"jprof-native": ["--no-attach"], "jprof-bpfwalk": ["--java-walk", "bpf"],
                      "jprof-signal": ["--java-walk", "signal"]}.get(config.split("@")[0], [])
        jp, t0, err = start_jprof(jprof, freq, tmp, w.pid, extra_args)
        ready = (time.monotonic(), proc_cpu_s(jp.pid))
        def stop():
            return stop_jprof(jp, t0, err, ready)
        stop.pid = jp.pid  # windows() reads its CPU time over the measured window
        return stop
    if config.startswith("perf"):
        freq = int(config.split("@")[1])
        scope = ["-p", str(w.pid)] if PID_ONLY else ["-a"]
        pf = spawn(["perf", "record"] + scope + ["-g", "-F", str(freq), "-o",
                   os.path.join(tmp, "perf.data")], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)

        def stop():
            pf.send_signal(signal.SIGINT)
            pf.wait()
        return stop
    if config == "jfr":  # JFR's profile settings, started and stopped in the running JVM
        jcmd = os.path.join(os.path.dirname(os.path.realpath(java)), "jcmd")
        subprocess.run([jcmd, str(w.pid), "JFR.start", "name=bench", "settings=profile",
                        "filename=" + os.path.join(tmp, "rec.jfr")], check=True,
                       stdout=subprocess.DEVNULL)

        def stop_jfr():
            subprocess.run([jcmd, str(w.pid), "JFR.stop", "name=bench"], check=True,
                           stdout=subprocess.DEVNULL)
        return stop_jfr
    return lambda: None  # baseline, again


# what `perf stat -p` counts in the target JVM over each measured window (windows()): what a
# sample costs the target outside jprof's own code. Hardware counters are often absent in a VM
# (this host's say <not supported>): then the software ones are what there is.
STAT_EVENTS = ("task-clock", "context-switches", "cpu-migrations", "page-faults", "cycles",
               "instructions", "cache-misses", "dTLB-load-misses")


def start_stat(pid, tmp):
    """perf stat of pid's threads until stop_stat; None without perf"""
    if not shutil.which("perf"):
        return None
    out = os.path.join(tmp, "stat.csv")
    p = spawn(["perf", "stat", "-x", ",", "-e", ",".join(STAT_EVENTS), "-p", str(pid), "-o",
               out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.out = out
    return p


def stop_stat(p):
    """{event: count or None (not supported)} of a perf stat started by start_stat"""
    if not p:
        return {}
    p.send_signal(signal.SIGINT)
    p.wait()
    res = {}
    try:
        with open(p.out) as f:
            for line in f:
                cols = line.strip().split(",")
                if len(cols) > 2 and cols[2] in STAT_EVENTS:
                    try:
                        res[cols[2]] = float(cols[0])
                    except ValueError:
                        res[cols[2]] = None
    except OSError:
        pass
    return res


def windows(name, workload_cmd, configs, rounds, secs, jprof, tmp, switch=0.05):
    """
    One JVM serving throughout (H2Bench SECS 0, JavaWork ROUNDS 0), measured in windows of
    SECS seconds: for each window its profiler is started, given 1 s to settle (a baseline
    window waits as long), the workload's totals are read before and after the window, the
    profiler is stopped; `perf stat -p` counts the JVM's own events over the same seconds
    (STAT_EVENTS, per operation in the output). Each round runs every configuration but the baseline once (every
    other round backwards), each window between two baseline windows, and compares it with
    their mean: seconds apart in the same JVM, on the same compiled code and heap. This host
    switches the same JVM for seconds to a minute between two speeds (one half the other),
    and separate JVMs add the spread of their JIT outcomes. A window whose two baselines
    differ by more than SWITCH (a switch fell there) is left out of the ratios and counted;
    "again" (the baseline as a configuration) shows what noise is left. The agent stays
    loaded between windows once jprof attached, as after any recording in production.
    """
    others = [c for c in configs if c != "baseline"]
    keys = ("ops_per_s", "ops_per_cpu_s")
    res = {c: {k: [] for k in keys} for c in configs}
    ratios = {c: {k: [] for k in keys} for c in configs}
    left_out = {c: 0 for c in configs}
    extras = {c: [] for c in configs}
    stats = {c: {e: [] for e in STAT_EVENTS} for c in configs}  # per operation
    w = start_workload(workload_cmd)

    def window(c, count):
        stop = start_profiler(c, w, workload_cmd[0], jprof, tmp)
        pid = getattr(stop, "pid", None)
        time.sleep(1.0)
        st = start_stat(w.pid, tmp) if count else None
        a = window_figs(w)
        cpu_a = proc_run_ns(pid) if pid else 0
        time.sleep(secs if count else 0.2)
        b = window_figs(w)
        cpu_b = proc_run_ns(pid) if pid else 0
        counts = stop_stat(st)
        ex = stop()
        if ex and count:
            # jprof's CPU over the measured window alone: its steady state, without its
            # start and its output at the end, which a 3 s window would weigh 100 times
            # more than an hour's recording does
            ex["window_pct"] = 100.0 * (cpu_b - cpu_a) / max(b["t_ns"] - a["t_ns"], 1)
            extras[c].append(ex)
        ops = b["ops"] - a["ops"]
        for e, v in counts.items():
            stats[c][e].append(v / ops if v is not None and ops else None)
        return {"ops_per_s": ops / ((b["t_ns"] - a["t_ns"]) / 1e9),
                "ops_per_cpu_s": ops / max((b["work_cpu_ns"] - a["work_cpu_ns"]) / 1e9, 1e-9)}

    try:
        # round -1, not counted: each profiler's first start in this JVM (JFR sets itself
        # up, jprof loads its agent); start-up is what the start-up parts measure
        for r in range(-1, rounds):
            count = r >= 0
            before = window("baseline", count)
            for c in (others if r % 2 == 0 else list(reversed(others))):
                fig = window(c, count)
                after = window("baseline", count)
                if count:
                    base = {k: (before[k] + after[k]) / 2 for k in keys}
                    for k in keys:
                        res[c][k].append(fig[k])
                        res["baseline"][k].append(base[k])
                    if abs(before["ops_per_s"] / after["ops_per_s"] - 1) > switch:
                        left_out[c] += 1
                    else:
                        for k in keys:
                            ratios[c][k].append(fig[k] / base[k])
                before = after
    finally:
        w.stdin.close()
        w.wait()
    out = {"rounds": rounds, "window_s": secs, "switch": switch, "metric": "ops_per_s",
           "also": {"ops_per_cpu_s": {"rounds": rounds, "window_s": secs}}}
    for k in keys:
        print(f"\n{name}: windows of {secs:g} s in one JVM, {rounds} rounds; {k} against the "
              f"mean of the baseline windows before and after (pairs whose two baselines "
              f"differ by > {switch:.0%} left out)")
        print(f"  {'config':<17} {'median ' + k:>14} {'ratio':>7} {'min..max ratio':>16} "
              f"{'left out':>9} {'window CPU %core':>17} {'peak RSS':>9}")
        dst = out if k == "ops_per_s" else out["also"][k]
        for c in configs:
            rs = ratios[c][k]
            med = statistics.median(res[c][k]) if res[c][k] else float("nan")
            line = f"  {c:<17} {med:>14.1f}"
            if c != "baseline":
                line += (f" {statistics.median(rs):>7.4f} {min(rs):>7.4f}..{max(rs):<7.4f}"
                         if rs else f" {'-':>7} {'-':>16}")
                line += f" {left_out[c]:>4} of {rounds:<2}"
            if extras[c] and k == "ops_per_s":
                line += (f" {statistics.median(e['window_pct'] for e in extras[c]):>16.2f}%"
                         f" {max(e['rss_mb'] for e in extras[c]):>6.1f} MB")
            print(line)
            dst[c] = {"values": res[c][k], "median": med, "ratios": rs,
                      "median_ratio": statistics.median(rs) if rs else None,
                      "left_out": left_out[c], "jprof": extras[c] if k == "ops_per_s" else []}
    if any(stats[c][e] for c in configs for e in STAT_EVENTS):
        print(f"\n{name}: the JVM's own events per operation (perf stat -p over each measured "
              f"window; median; ratio to the baseline windows' median)")
        print("  " + f"{'config':<17}" + "".join(f"{e:>18}" for e in STAT_EVENTS))
        out["perf_stat_per_op"] = {}
        for c in configs:
            line = f"  {c:<17}"
            out["perf_stat_per_op"][c] = {}
            for e in STAT_EVENTS:
                vs = [v for v in stats[c][e] if v is not None]
                bs = [v for v in stats["baseline"][e] if v is not None]
                if not vs:
                    line += f"{'n/a':>18}"
                    out["perf_stat_per_op"][c][e] = None
                    continue
                med = statistics.median(vs)
                ratio = med / statistics.median(bs) if bs and statistics.median(bs) else None
                out["perf_stat_per_op"][c][e] = {"median": med, "ratio": ratio}
                line += f"{med:>11.4g}" + (f" x{ratio:<5.3f}" if ratio and c != "baseline"
                                           else " " * 7)
            print(line)
    for c in configs:
        if extras[c]:
            print(f"  last {c} summary: {extras[c][-1]['summary']}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--only", choices=["c", "java"], default=None)
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies each workload's fixed amount of work (quick runs: < 1)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--c-configs", default="baseline,again,jprof@99,jprof@999,perf@999",
                    help="the C workload's configurations, comma-separated: baseline, again "
                    "(the baseline once more: the noise), jprof@HZ, perf@HZ")
    ap.add_argument("--java-configs", default="baseline,again,jprof@99,jprof@999,"
                    "jprof-signal@999,jfr",
                    help="the Java workload's configurations, comma-separated: baseline, "
                    "again, jprof@HZ, jprof-native@HZ (no agent: BPF and jprof alone), "
                    "jprof-bpfwalk@HZ (--java-walk bpf), jprof-signal@HZ (--java-walk signal), jfr")
    ap.add_argument("--java-windows", type=int, default=0, metavar="ROUNDS",
                    help="the Java workload in windows of one serving JVM (see windows()), "
                    "ROUNDS rounds, instead of a JVM a run (--runs)")
    ap.add_argument("--window-secs", type=float, default=3.0,
                    help="--java-windows: each window's measured seconds")
    ap.add_argument("--java-metric", choices=["elapsed_ms", "work_cpu_ms"], default="elapsed_ms",
                    help="the Java workload's figure: its wall time, or its work threads' own "
                    "CPU time (signal handlers and interrupts included; other processes not)")
    ap.add_argument("--pid-only", action="store_true",
                    help="jprof -p WORKLOAD, not -a (a host shared with other JVMs)")
    a = ap.parse_args()
    global PID_ONLY
    PID_ONLY = a.pid_only
    jprof = os.path.join(a.build, "jprof")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    atexit.register(kill_children)
    out = {}
    with tempfile.TemporaryDirectory(prefix="jprof-bench-") as tmp:
        cwork = os.path.join(tmp, "cpuwork")
        subprocess.check_call(["cc", "-O2", "-pthread", os.path.join(REPO, "bench/cpuwork.c"),
                               "-o", cwork])
        subprocess.check_call(["javac", "-d", tmp, os.path.join(REPO, "bench/JavaWork.java")])
        if a.only in (None, "c"):
            cfgs = a.c_configs.split(",")
            if not shutil.which("perf"):
                cfgs = [c for c in cfgs if not c.startswith("perf")]
            out["c"] = bench("C workload (2 threads, fixed work)",
                             [cwork, "2", str(int(7000000000 * a.scale))], cfgs, a.runs, jprof,
                             tmp)
        if a.only in (None, "java") and a.java_windows:
            cfgs = a.java_configs.split(",")
            if not shutil.which("perf"):
                cfgs = [c for c in cfgs if not c.startswith("perf")]
            out["java"] = windows("Java workload (2 threads, CPU-bound)",
                                  [a.java, "-cp", tmp, "JavaWork", "2", "0"],
                                  ["baseline"] + [c for c in cfgs if c != "baseline"],
                                  a.java_windows, a.window_secs, jprof, tmp)
        elif a.only in (None, "java"):
            out["java"] = bench("Java workload (2 threads, fixed work)",
                                [a.java, "-cp", tmp, "JavaWork", "2", str(int(3000 * a.scale))],
                                a.java_configs.split(","), a.runs, jprof, tmp,
                                key=a.java_metric)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

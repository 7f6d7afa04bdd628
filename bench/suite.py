#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""suite.py: `make bench`: every benchmark of jprof in one run, as a text summary and JSON.

Parts (in this order; --only picks some):
  overhead   bench/overhead.py: C and Java CPU-bound workloads, baseline vs jprof 99/999 Hz
             vs perf (vs JFR for Java): C a process a run, interleaved rounds, ratios against
             the same round's baseline; Java in interleaved windows of one serving JVM
  sigfloor   bench/sigfloor.c: what a signal alone costs the thread it interrupts on this
             host (no profiler; an empty handler, 999 Hz a thread): the floor under any
             profiler that takes Java stacks in a signal handler
  h2         a real application's throughput: JDBC transactions on Debian's H2 (libh2-java,
             bench/H2Bench.java), baseline vs jprof 99/999 Hz vs perf vs JFR profile, in
             interleaved windows of one serving JVM (overhead.windows); the JVM's own events
             per transaction in each window (perf stat -p: task clock, switches, migrations,
             page faults, and cycles, instructions, cache and dTLB misses where counted)
  tomcat     a real application server's throughput: Debian's Tomcat 10 (libtomcat10-java,
             tests/apps/TomcatLoad.java: 2 keep-alive loopback HTTP clients in the JVM), the
             same windows and configurations as h2; requests per second and per second of
             the JVM's CPU
  host       bench/host.py: time to first sample (0/1/10 JVMs), BPF run time per program,
             jprof's own CPU and peak RSS
  bpfcost    bench/bpfcost.py: the BPF sample program's ns per sample (bpf_stats) on a
             shallow busy JVM and on H2 under JDBC load at 999 Hz, the Java walk in BPF
             against --java-walk signal, alternating in one run; signals per sample
  syscalls   bench/syscalls.sh: cost of the syscall and off-CPU programs per syscall
  events     bench/events.sh: -e alloc, live and lock on an allocation- and a lock-heavy JVM
             against a baseline, a second baseline and JFR profile: throughput and CPU per op
  load       bench/load.sh: 1 JVM x 200 busy threads on the saturated host
  scale      10 JVMs x 10 busy threads, `record -a`: jprof's CPU (steady state, whole run),
             peak RSS, first sample, JVMs with Java stacks
  accuracy   tests/apps/Accuracy.java (3 threads at 100/50/25% duty, own CPU clock) under
             `record -p PID -F 99 --per-thread` on JDK 17 and 25, samples counted
             (--samples) once and weighed by CPU time (the default) 3 times; its mixed
             workload (6 threads: CPU, allocation, system calls, a contended monitor,
             bursts) 3 times: per-thread and per-method error in pp, beside what random
             sampling alone leaves; 30 s a run (--accuracy-secs N for longer)
  formats    `jprof report` of ~1M samples over 100,000 stacks into each format: time, RSS
  join       bench/join_bench.c: ns per sample of the join+aggregate, this tree against the
             last commit before the model redesign (built in a temporary dir under /tmp)
  html       load time of a 100,000-stack HTML flame graph in headless Chromium
  soak       tests/e2e/agent_safety.bats' thread churn under 999 Hz at 90 s a JDK (the
             suite runs it for 20 s)
  serve      bench/serve.py: `jprof serve` over a day of 30-s segments (2,880 of 5,000
             distinct stacks each): the timeline, an hour's and the day's flame graph, a
             directory of 200 recordings
  daemon     bench/longrun.py --daemon --javac jvm: `jprof daemon` at its default rate over
             the same 10 JVMs, javac's rounds in one long-lived JVM: the store's size per
             segment, hour and day; jprof's CPU and RSS
  longrun    bench/longrun.py: `record -a` for 10 minutes (1 in quick mode) over 10 JVMs of
             real work (H2 under load, javac rounds, idle servers): jprof's peak RSS, RSS
             growth, own CPU in % of a core
  churn      bench/churn.py: `record -a` for 30 minutes (3 in quick mode) while 50,000
             short-lived processes and 2,000 short-lived JVMs start and exit (the totals
             scale with the minutes) and 3 long-lived JVMs are sampled: jprof's RSS and open
             fds every minute, their growth over the last 20 minutes (2/3 of a shorter
             run), the long-lived JVMs' complete Java stacks
  daemon-churn  bench/churn.py --daemon --cgroup: `jprof daemon` for 2 hours (3 minutes in
             quick mode) under the same churn, confined to a cgroup of its own: RSS and fds
             flat after warm-up, its CPU
  trace      bench/trace.py: `jprof trace` of H2's executeQuery under JDBC load (cost per
             call, throughput, 100 start/stop cycles: classes, metaspace, recompilation),
             and the kernel split's cost per system call and per thread handoff
             (bench/SplitWork.java, --split-micro read and pingpong)

  agg        bench/agg.py: --aggregate (CPU stacks counted in the kernel) against a record
             per sample at 999 Hz, alternating, on a C program, JavaHot and H2: BPF run time
             per sample, jprof's CPU per second, ring records per second

BENCH_QUICK=1 (or --quick): few repetitions and short durations, to check that it works.
Writes OUT/bench/results-<UTC date>.json and .txt. Needs root and `make all apps sc-driver`.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
import cpu_truth  # noqa: E402  (Accuracy's figures against a profile, as accuracy.bats checks)
import host  # noqa: E402  (its JVM helpers; its cleanup() kills what they started)
import overhead  # noqa: E402

H2_JAR = "/usr/share/java/h2.jar"
TOMCAT_JARS = [f"/usr/share/java/tomcat10-{j}.jar" for j in (
    "catalina", "servlet-api", "coyote", "util", "util-scan", "juli", "api", "jni", "jaspic-api",
    "annotations-api")]
JDK25_JAVA = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"
# the last commit before user/model/ existed (b0bd1fb added it): the join "before" the redesign
# the join part's baseline: the last commit before the model redesign, or JPROF_JOIN_BEFORE
BEFORE_MODEL = os.environ.get("JPROF_JOIN_BEFORE", "c7de993")
summary = []  # the text summary's lines


def say(line):
    print(line, flush=True)
    summary.append(line)


def cleanup():
    overhead.kill_children()
    host.cleanup()


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


def run_logged(cmd, timeout, **kw):
    """runs cmd, its output shown as it comes and returned; a failure stops the suite"""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    overhead.children.append(p)
    lines = []
    t_end = time.monotonic() + timeout
    for line in p.stdout:
        print("  | " + line, end="", flush=True)
        lines.append(line)
        if time.monotonic() > t_end:
            p.kill()
    p.wait()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode})")
    return "".join(lines)


def time_v(cmd, timeout, **kw):
    """runs cmd under /usr/bin/time -v; returns (wall s, CPU s, peak RSS MB, stderr)"""
    with tempfile.NamedTemporaryFile("r", prefix="jprof-time-") as tf:
        r = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name] + cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=timeout, **kw)
        t = tf.read()
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")

    def field(name):
        m = re.search(re.escape(name) + r": (\S+)", t)
        return m.group(1) if m else "0"
    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return wall_s, cpu, int(field("Maximum resident set size (kbytes)")) / 1024.0, r.stderr


def med(xs):
    return statistics.median(xs) if xs else None


def ratio_line(name, res, configs, better):
    parts = []
    for c in configs:
        if c in res and c != "baseline":
            r, rs = res[c]["median_ratio"], res[c]["ratios"]
            # the spread says how much a loaded host's drift leaves of the median
            label = "baseline again (the noise)" if c == "again" else c
            # overhead.windows: pairs left out where the host switched speed
            out = f", {res[c]['left_out']} left out" if res[c].get("left_out") else ""
            parts.append(f"{label} x{r:.3f} [{min(rs):.2f}..{max(rs):.2f}{out}]" if rs
                         else f"{label}: every pair left out")
    against = ("the baseline windows either side" if "window_s" in res
               else "the same round's baseline")
    say(f"{name}: " + ", ".join(parts) + f" (median [min..max] ratio to {against}; "
        f"{better}; {res['rounds']} rounds)")
    if res.get("again", {}).get("ratios") and res.get("jprof@99", {}).get("ratios"):
        # "within noise": jprof's median ratio inside the range the baseline's own repeat spans
        lo, hi = min(res["again"]["ratios"]), max(res["again"]["ratios"])
        r = res["jprof@99"]["median_ratio"]
        say(f"  jprof@99 x{r:.3f} is {'within' if lo <= r <= hi else 'outside'} the baseline's "
            f"own spread [{lo:.3f}..{hi:.3f}]")


# --- parts ---------------------------------------------------------------------------------

def part_overhead(a, tmp):
    js = os.path.join(tmp, "overhead.json")
    # C: a process a run, wall time. Java: windows of one serving JVM (overhead.windows),
    # rounds per second: a JVM a run adds its JIT's outcome to the noise (x0.93..1.04
    # for the baseline against itself, where windows give x0.99..1.01)
    java_cfgs = ["again", "jprof@99", "jprof@999", "jprof-signal@999", "perf@999", "jfr"]
    run_logged([sys.executable, os.path.join(REPO, "bench/overhead.py"), "--build", a.build,
                "--runs", str(a.runs), "--scale", str(0.15 if a.quick else 1.0), "--java",
                a.java, "--java-windows", str(2 if a.quick else 10),
                "--window-secs", str(2 if a.quick else 3),
                "--java-configs", ",".join(["baseline"] + java_cfgs),
                "--json", js] + (["--pid-only"] if a.pid_only else []), 3600)
    with open(js) as f:
        res = json.load(f)
    for k, cfgs, name, better in (
            ("c", ["again", "jprof@99", "jprof@999", "perf@999"], "overhead c wall",
             "lower is better"),
            ("java", java_cfgs, "overhead java rounds per second", "higher is better")):
        if k in res:
            ratio_line(name, res[k], cfgs, better)
            if "ops_per_cpu_s" in res[k].get("also", {}):
                ratio_line("overhead java rounds per second of the workers' CPU",
                           res[k]["also"]["ops_per_cpu_s"], cfgs, better)
            for c in ("jprof@99", "jprof@999", "jprof-signal@999"):
                if c not in res[k]:
                    continue
                ex = res[k][c]["jprof"]
                if ex:
                    # windows: jprof's CPU over the measured windows alone
                    pct = "window_pct" if "window_pct" in ex[0] else "steady_pct"
                    say(f"  jprof {c}: steady CPU {med([e[pct] for e in ex]):.2f}% "
                        f"of a core, peak RSS {max(e['rss_mb'] for e in ex):.1f} MB")
    return res


def part_sigfloor(a, tmp):
    exe = os.path.join(tmp, "sigfloor")
    subprocess.check_call(["cc", "-O2", "-pthread", os.path.join(REPO, "bench/sigfloor.c"),
                           "-o", exe])
    res = {}
    # one thread: the sender runs on the other CPU, so only the interrupted thread's loss
    # counts; two: both CPUs busy, the sender's own syscalls included
    for threads in (1, 2):
        out = run_logged([exe, str(threads), "999", "300000000" if a.quick else "1500000000",
                          "3" if a.quick else "7"], 600)
        m = re.search(r"median x([\d.]+) \[([\d.]+)\.\.([\d.]+)\], ([\d.]+) us a signal", out)
        if not m:
            raise RuntimeError(f"sigfloor: no result in {out[-500:]}")
        res[f"{threads}_threads"] = {"median_ratio": float(m.group(1)),
                                     "range": [float(m.group(2)), float(m.group(3))],
                                     "us_per_signal": float(m.group(4)), "output": out}
    say("signal floor (no profiler, empty handler, 999 Hz a thread): " +
        ", ".join(f"{k.split('_')[0]} thread{'s' if k[0] != '1' else ''} x{v['median_ratio']:.3f} "
                  f"[{v['range'][0]:.3f}..{v['range'][1]:.3f}], {v['us_per_signal']:.1f} us a signal"
                  for k, v in res.items()))
    return res


def server_windows(a, tmp, name, args):
    """a serving JVM (java ARGS, its heap committed and touched up front) measured in
    windows without and with each profiler (overhead.windows): (result, configurations)"""
    rounds, secs = (2, 2) if a.quick else (12, 3)
    configs = ["baseline", "again", "jprof@99", "jprof@999", "jprof-signal@999"]
    if shutil.which("perf"):
        configs.append("perf@999")
    configs.append("jfr")
    res = overhead.windows(name, [a.java, "-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch"] + args,
                           configs, rounds, secs, a.jprof, tmp)
    return res, configs


def part_h2(a, tmp):
    if not os.path.exists(H2_JAR):
        raise RuntimeError(f"{H2_JAR} missing: install Debian's libh2-java "
                           "(scripts/install-deps.sh)")
    subprocess.check_call(["javac", "-d", tmp, "-cp", H2_JAR,
                           os.path.join(REPO, "bench/H2Bench.java")])
    # one JVM serving throughout, measured in windows with and without each profiler
    # (overhead.windows); each worker on its own table, a steady table size, the heap
    # committed and touched up front: what is left of the noise is the host's
    res, configs = server_windows(a, tmp, "H2 JDBC transactions, 2 threads", [
        "-cp", f"{H2_JAR}:{tmp}", "H2Bench", "2", "0", "5000", "5", "own"])
    ratio_line("H2 throughput", res, configs, "higher is better")
    ratio_line("H2 transactions per second of the workers' CPU", res["also"]["ops_per_cpu_s"],
               configs, "higher is better")
    ps = res.get("perf_stat_per_op")
    if ps:
        def figs(c):
            return ", ".join(f"{e} x{v['ratio']:.3f}" for e, v in ps[c].items()
                             if v and v["ratio"]) or "none"
        missing = [e for e, v in ps["baseline"].items() if not v]
        say("H2, the JVM's own events per transaction against the baseline windows (perf stat "
            "-p): " + "; ".join(f"{c}: {figs(c)}" for c in configs if c != "baseline")
            + (f" (not counted on this host: {', '.join(missing)})" if missing else ""))
    return res


def part_tomcat(a, tmp):
    if not all(os.path.exists(j) for j in TOMCAT_JARS):
        raise RuntimeError("Tomcat 10 missing: install Debian's libtomcat10-java "
                           "(scripts/install-deps.sh)")
    apps = os.path.join(a.build, "tests", "apps")
    if not os.path.exists(os.path.join(apps, "TomcatLoad.class")):
        raise RuntimeError(f"TomcatLoad not built in {apps} (make apps)")
    # 2 clients: the server's threads and the clients share the 2 cores, none waits idle
    res, configs = server_windows(a, tmp, "Tomcat HTTP requests, 2 clients", [
        "-cp", ":".join(TOMCAT_JARS + [apps]), "TomcatLoad", "2", "0", "5",
        os.path.join(tmp, "tomcat")])
    ratio_line("Tomcat throughput", res, configs, "higher is better")
    ratio_line("Tomcat requests per second of the JVM's CPU", res["also"]["ops_per_cpu_s"],
               configs, "higher is better")
    return res


def part_host(a, tmp):
    js = os.path.join(tmp, "host.json")
    run_logged([sys.executable, os.path.join(REPO, "bench/host.py"), "--build", a.build,
                "--runs", str(a.runs), "--secs", str(3 if a.quick else 6), "--java", a.java,
                "--json", js], 3600)
    with open(js) as f:
        res = json.load(f)
    f = res.get("first", {})
    say("first sample ms (median of runs) with 0/1/10 JVMs: " +
        "/".join(str(f.get(n, {}).get("median_all_ms")) for n in ("0", "1", "10")))
    for hz, e in res.get("bpf", {}).items():
        v = e.get("all_programs_ns_per_sample")
        say(f"BPF run time per sample at {hz} Hz: {v:.0f} ns" if v else
            f"BPF run time at {hz} Hz: no samples")
    for hz, e in res.get("self", {}).items():
        say(f"jprof itself at {hz} Hz, 3 JVMs: {e['cpu_pct_of_core']:.2f}% of a core, "
            f"peak RSS {e['peak_rss_kb'] / 1024:.1f} MB")
    return res


def part_bpfcost(a, tmp):
    js = os.path.join(tmp, "bpfcost.json")
    run_logged([sys.executable, os.path.join(REPO, "bench/bpfcost.py"), "--build", a.build,
                "--rounds", "2" if a.quick else "6", "--secs", "2" if a.quick else "5",
                "--java", a.java, "--json", js], 3600)
    with open(js) as f:
        res = json.load(f)
    for name in ("shallow", "h2"):
        figs = []
        for mode in ("walk", "signal"):
            e = res.get(name, {}).get(mode, {})
            if e.get("ns_per_sample_median") is None:
                continue
            sg = e.get("signals_per_sample_median")
            figs.append(f"{mode} {e['ns_per_sample_median'] / 1000:.1f} us "
                        f"[{e['ns_per_sample_range'][0] / 1000:.1f}.."
                        f"{e['ns_per_sample_range'][1] / 1000:.1f}] "
                        f"({e['ns_per_run_median'] / 1000:.1f} us a run"
                        + (f", {100 * sg:.1f}% signalled" if sg is not None else "") + ")")
        if figs:
            say(f"BPF sample program at 999 Hz, {name}, run time over the target's samples "
                "(an upper bound: other processes' samples, left out, add theirs): "
                + ", ".join(figs))
    return res


def part_syscalls(a, tmp):
    out = run_logged(["bash", os.path.join(REPO, "bench/syscalls.sh"), str(a.runs),
                      "300000" if a.quick else "2000000"], 3600, env=dict(os.environ, OUT=a.build))
    res = {m.group(1): float(m.group(2))
           for m in re.finditer(r"median ratio (\S+): x([\d.]+)", out)}
    say("syscall cost ratio (1-byte writes): " +
        ", ".join(f"{k} x{v:.2f}" for k, v in res.items()))
    return {"median_ratio": res, "output": out}


def part_events(a, tmp):
    secs = 3 if a.quick else 6
    out = run_logged(["bash", os.path.join(REPO, "bench/events.sh"), str(a.runs), str(secs)],
                     3600, env=dict(os.environ, OUT=a.build,
                                    JAVA_HOME=os.path.dirname(os.path.dirname(a.java))))
    res = {}
    for m in re.finditer(r"events: (\w+) workload, ([\w ]+): throughput x([\d.]+) .*?"
                         r"CPU per op x([\d.]+)", out):
        res[f"{m.group(1)}/{m.group(2)}"] = {"throughput": float(m.group(3)),
                                              "cpu_per_op": float(m.group(4))}
    cb = {f"{m.group(1)}/{m.group(2)}": float(m.group(3)) for m in re.finditer(
        r"events: (\w+) workload, (\w+): agent callbacks ([\d.]+) us each", out)}
    say("JVM events (alloc- and lock-heavy JVMs): " + ", ".join(
        f"{k} throughput x{v['throughput']:.3f} CPU/op x{v['cpu_per_op']:.3f}"
        for k, v in res.items()) + "; agent callbacks " +
        ", ".join(f"{k} {v:.1f} us" for k, v in cb.items()) +
        f" (median ratio to the same round's baseline; {a.runs} rounds)")
    return {"median_ratio": res, "callback_us": cb, "output": out}


def part_load(a, tmp):
    secs = 5 if a.quick else 20
    out = run_logged(["bash", os.path.join(REPO, "bench/load.sh"), a.jprof, "200", str(secs)],
                     secs + 900)
    res = {"threads": 200, "secs": secs, "output": out}
    m = re.search(r"jprof cpu ([\d.]+) s .*?, ([\d.]+) s from start of recording to exit, "
                  r"(-?[\d.]+) s past", out)
    if m:
        res.update(cpu_s=float(m.group(1)), wall_s=float(m.group(2)),
                   past_d_s=float(m.group(3)))
    res.update(host.jprof_summary(out))
    m = re.search(r"(\d+) in Java threads of which (\d+) with complete Java stacks", out)
    if m:
        res.update(java_thread_samples=int(m.group(1)), complete_java_stacks=int(m.group(2)))
    say(f"load 1 JVM x 200 threads, -F 999 -d {secs}: jprof CPU {res.get('cpu_s')} s, "
        f"{res.get('past_d_s')} s past -d, JVMs with Java stacks "
        f"{res.get('jvms_with_java')}/{res.get('jvms')}, complete Java stacks "
        f"{res.get('complete_java_stacks')} of {res.get('java_thread_samples')} samples")
    return res


def part_scale(a, tmp):
    secs = 4 if a.quick else 15
    apps = os.path.join(a.build, "tests", "apps")
    jvms = host.start_jvms(10, a.java, apps, tmp, threads=10)
    res = {"jvms": 10, "threads_per_jvm": 10, "secs": secs}
    try:
        time.sleep(1.0)
        for hz in (99, 999):
            # the whole run (start, 10 attaches, final write) and its steady state: the
            # SECS after the attaches, by jprof's threads' scheduler runtime, which is
            # what an hour's recording costs a host
            jp, t0, err = overhead.start_jprof(a.jprof, hz, tmp, 0, whole_host=True)
            time.sleep(2.0)
            c0, w0 = overhead.proc_run_ns(jp.pid), time.monotonic_ns()
            time.sleep(secs)
            c1, w1 = overhead.proc_run_ns(jp.pid), time.monotonic_ns()
            ex = overhead.stop_jprof(jp, t0, err, (time.monotonic(), 0))
            with open(os.path.join(tmp, f"jprof-{hz}.err")) as f:
                err_text = f.read()
            e = {"secs": secs, "cpu_pct_of_core": ex["cpu_pct"],
                 "steady_pct_of_core": 100 * (c1 - c0) / (w1 - w0), "peak_rss_mb": ex["rss_mb"],
                 "report": err_text.strip().splitlines()[-6:]}
            e.update(host.jprof_summary(err_text))
            res[str(hz)] = e
            say(f"scale 10 JVMs x 10 threads, -F {hz}: jprof {e['steady_pct_of_core']:.2f}% "
                f"of a core in {secs} s of steady state ({e['cpu_pct_of_core']:.1f}% over the whole "
                f"run, start and attaches included), peak RSS {e['peak_rss_mb']:.1f} MB, first "
                f"sample {e['first_sample_ms']} ms, JVMs with Java stacks "
                f"{e['jvms_with_java']}/{e['jvms']}")
    finally:
        host.stop_jvms(jvms)
    return res


def part_accuracy(a, tmp):
    subprocess.check_call(["javac", "-d", tmp, os.path.join(REPO, "tests/apps/Accuracy.java")])
    # 30 s by default; --accuracy-secs for longer runs (sampling's own error falls as
    # 1/sqrt(seconds), so a bias shows above it)
    secs = a.accuracy_secs or (10 if a.quick else 30)
    runs = []
    # on JDK 17 and 25: the duty-cycle workload with samples counted (--samples) once, then
    # weighed by CPU time (the default) 3 times (the issue's repetitions); the mixed one
    # (Accuracy --mixed: 6 threads of different kinds) 3 times by default
    javas = [("17", a.java)] + ([("25", JDK25_JAVA)] if os.path.exists(JDK25_JAVA) else [])
    reps = 1 if a.quick else 3
    plan = [(jdk, java, wl, m) for jdk, java in javas
            for wl, m in [("duty", "samples")] + [("duty", "default")] * reps +
            [("mixed", "default")] * reps]
    modes = sorted({f"{jdk} {wl} {m}" for jdk, _, wl, m in plan})
    for r, (jdk, java, wl, mode) in enumerate(plan):
        w = overhead.start_workload([java, "-cp", tmp, "Accuracy"] +
                                    (["--mixed"] if wl == "mixed" else []) + [str(secs)])
        folded = os.path.join(tmp, "acc.folded")
        err = open(os.path.join(tmp, "acc.err"), "w+")
        # the default: each sample weighs its thread's CPU time since its previous one
        jp = overhead.spawn([a.jprof, "record", "-v", "-p", str(w.pid), "-F", "99",
                             "--per-thread"] +
                            (["--samples"] if mode == "samples" else []) + ["-o", folded],
                            stderr=err, cwd=tmp)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            err.seek(0)
            if "recording" in err.read() or jp.poll() is not None:
                break
            time.sleep(0.05)
        if jp.poll() is not None:
            err.seek(0)
            raise RuntimeError(f"jprof exited early: {err.read()}")
        time.sleep(1.0)
        w.stdin.write("\n")
        w.stdin.flush()
        out = w.stdout.read()
        w.wait()
        jp.send_signal(signal.SIGINT)
        jp.wait(timeout=120)
        err.seek(0)
        report = err.read()
        err.close()
        if jp.returncode != 0:
            raise RuntimeError(f"jprof failed: {report}")
        # the profile, the workload's own figures and jprof's report, for a second look
        shutil.copy(folded, os.path.join(a.build, "bench", f"accuracy-{r + 1}.folded"))
        for ext, text in (("out", out), ("err", report)):
            with open(os.path.join(a.build, "bench", f"accuracy-{r + 1}.{ext}"), "w") as f:
                f.write(text)
        try:
            run = cpu_truth.split_errors(folded, out)
        except ValueError as e:
            raise RuntimeError(f"accuracy: {e}; jprof said: {report[-1500:]}")
        tt, gt = run["truth_total"], run["profile_total"]
        run["mode"] = f"{jdk} {wl} {mode}"
        # samples: samples / (CPU time x 99 Hz); default: profile ns / true ns
        run["profile_over_truth"] = gt / (tt / 1e9) / 99 if mode == "samples" else gt / tt
        runs.append(run)
        say(f"accuracy run {r + 1} (JDK {jdk}, {secs} s at 99 Hz, {mode}, {wl} workload, "
            f"{len(run['truth_cpu_ns'])} workers): "
            f"per-thread MAE "
            f"{run['thread_mae_pp']:.3f} pp, per-method MAE {run['method_mae_pp']:.3f} pp "
            f"(sampling alone: {run['method_floor_pp']:.3f}); "
            + ("samples / (CPU time x 99 Hz)" if mode == "samples" else
               "profile CPU time / the threads' own") + f" = {run['profile_over_truth']:.4f}")
    return {"secs": secs, "hz": 99, "runs": runs,
            "median_thread_mae_pp": {m: med([r["thread_mae_pp"] for r in runs if r["mode"] == m])
                                     for m in modes},
            "median_method_mae_pp": {m: med([r["method_mae_pp"] for r in runs if r["mode"] == m])
                                     for m in modes},
            "max_thread_mae_pp": {m: max(r["thread_mae_pp"] for r in runs if r["mode"] == m)
                                  for m in modes},
            "max_method_mae_pp": {m: max(r["method_mae_pp"] for r in runs if r["mode"] == m)
                                  for m in modes},
            "median_method_floor_pp": {m: med([r["method_floor_pp"] for r in runs
                                               if r["mode"] == m]) for m in modes}}


def big_folded(tmp, stacks=100000, samples=1000000):
    """STACKS distinct stacks (tests/e2e/gen_folded.py) with counts rescaled to ~SAMPLES"""
    raw = subprocess.run([sys.executable, os.path.join(REPO, "tests/e2e/gen_folded.py"),
                          str(stacks), "7"], check=True, stdout=subprocess.PIPE,
                         text=True).stdout.splitlines()
    rows = [(s, int(n)) for s, _, n in (ln.rpartition(" ") for ln in raw)]
    total = sum(n for _, n in rows)
    spare = samples - len(rows)  # every stack keeps at least one sample
    path = os.path.join(tmp, "big.folded")
    got = 0
    with open(path, "w") as f:
        for s, n in rows:
            c = 1 + n * spare // total
            if got == 0:  # the rounding's remainder goes to the first stack
                c += samples - len(rows) - sum(m * spare // total for _, m in rows)
            got += c
            f.write(f"{s} {c}\n")
    return path, got


FORMATS = {"folded": "out.folded", "html": "out.html", "pprof": "out.pb.gz", "jfr": "out.jfr",
           "speedscope": "out.speedscope.json"}


def part_formats(a, tmp):
    path, n = big_folded(tmp)
    res = {"stacks": 100000, "samples": n}
    reps = 1 if a.quick else 2
    for fmt, name in FORMATS.items():
        walls, rsss = [], []
        for _ in range(reps):
            out = os.path.join(tmp, name)
            wall, _, rss, _ = time_v([a.jprof, "report", path, "-o", out], 900)
            walls.append(wall)
            rsss.append(rss)
        res[fmt] = {"wall_s": walls, "median_wall_s": med(walls), "peak_rss_mb": max(rsss),
                    "bytes": os.path.getsize(out)}
    say(f"formats, `jprof report` of {n} samples over 100,000 stacks (folded input): " +
        ", ".join(f"{k} {v['median_wall_s']:.2f} s {v['peak_rss_mb']:.0f} MB"
                  for k, v in res.items() if isinstance(v, dict)))
    return res


def part_join(a, tmp):
    before = tempfile.mkdtemp(prefix="jprof-before-", dir="/tmp")
    try:
        arch = subprocess.Popen(["git", "-C", REPO, "archive", BEFORE_MODEL],
                                stdout=subprocess.PIPE)
        subprocess.check_call(["tar", "-x", "-C", before], stdin=arch.stdout)
        if arch.wait() != 0:
            raise RuntimeError(f"git archive {BEFORE_MODEL} failed")
        print(f"  building {BEFORE_MODEL} in {before} (the join before the model redesign)",
              flush=True)
        r = subprocess.run(["make", "-j2", "Q=@", "all"], cwd=before, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"building {BEFORE_MODEL} failed: {r.stdout[-2000:]}")
        bins = {}
        for tag, tree, outdir in (("before", before, os.path.join(before, "build")),
                                  ("after", REPO, a.build)):
            objs = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(outdir, "user"))
                    for f in fs if f.endswith(".o") and f != "main.o"]
            binp = os.path.join(tmp, f"join_bench_{tag}")
            model = os.path.exists(os.path.join(tree, "user", "model", "model.h"))
            subprocess.check_call(
                ["cc"] + (["-DJP_BENCH_MODEL"] if model else []) +
                ["-std=gnu11", "-D_GNU_SOURCE", "-O2", "-g", "-fno-omit-frame-pointer",
                 "-Wall", "-Wextra", "-Werror", "-I" + os.path.join(tree, "user"),
                 "-I" + os.path.join(outdir, "bpf"), "-I" + os.path.join(tree, "bpf"),
                 "-I" + os.path.join(tree, "jvmagent"), os.path.join(REPO, "bench/join_bench.c")]
                + objs + ["-lbpf", "-lelf", "-lz", "-llzma", "-lpthread", "-lmicrohttpd", "-lcurl",
                          "-o", binp])
            bins[tag] = binp
    finally:
        shutil.rmtree(before, ignore_errors=True)
    args = ["64", "200", "4"] if a.quick else ["64", "2000", "4"]
    res = {"before_rev": BEFORE_MODEL, "args": args, "before": [], "after": []}
    for _ in range(a.runs + 1):
        for tag in ("before", "after"):  # interleaved: a shared machine drifts alike
            out = subprocess.run([bins[tag]] + args, check=True, stdout=subprocess.PIPE,
                                 text=True).stdout
            m = re.search(r"(\d+) ns per sample", out)
            if not m:
                raise RuntimeError(f"join_bench printed no ns per sample: {out!r}")
            res[tag].append(int(m.group(1)))
    ratios = [b / n for b, n in zip(res["before"], res["after"])]
    res["median_ns_before"] = med(res["before"])
    res["median_ns_after"] = med(res["after"])
    res["median_ratio_before_after"] = med(ratios)
    say(f"join+aggregate ns per sample: before the model ({BEFORE_MODEL}) "
        f"{res['median_ns_before']}, after {res['median_ns_after']} "
        f"(before/after x{res['median_ratio_before_after']:.2f}, {len(ratios)} interleaved pairs)")
    return res


def part_html(a, tmp):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise RuntimeError("chromium missing (Debian package chromium)")
    path, n = big_folded(tmp)
    html = os.path.join(tmp, "big.html")
    subprocess.check_call([a.jprof, "report", path, "-o", html], stdout=subprocess.DEVNULL)
    loads, paints = [], []
    for i in range(1 if a.quick else 3):
        d = os.path.join(tmp, f"html{i}")
        os.mkdir(d)
        r = subprocess.run([sys.executable, os.path.join(REPO, "tests/e2e/html_driver.py"),
                            "--html", html, "--out", d, "--chromium", chromium, "load"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=600)
        step = None
        for line in r.stdout.splitlines():
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if "load_ms" in j:
                step = j
        if r.returncode != 0 or not step:
            raise RuntimeError(f"html_driver failed: {r.stdout[-1500:]} {r.stderr[-1500:]}")
        loads.append(step["load_ms"])
        paints.append(step.get("painted_ms"))
    res = {"stacks": 100000, "samples": n, "bytes": os.path.getsize(html), "load_ms": loads,
           "painted_ms": paints, "median_load_ms": med(loads),
           "median_painted_ms": med([p for p in paints if p is not None])}
    say(f"HTML of 100,000 stacks ({res['bytes'] / 1e6:.1f} MB) in headless Chromium: load "
        f"{res['median_load_ms']} ms, painted {res['median_painted_ms']} ms")
    return res


def part_longrun(a, tmp):
    js = os.path.join(tmp, "longrun.json")
    run_logged([sys.executable, os.path.join(REPO, "bench/longrun.py"), "--build", a.build,
                "--secs", str(60 if a.quick else 600), "--json", js], 1200)
    with open(js) as f:
        res = json.load(f)
    say(f"10 JVMs of real work, record -a at 99 Hz for {res['secs']} s: jprof peak RSS "
        f"{res['peak_rss_mb']:.1f} MB (second half {res['rss_growth_mb']:+.1f} MB), CPU "
        f"{res['cpu_pct_steady']:.2f}% of a core in steady state, {res['cpu_pct_all']:.2f}% "
        "overall")
    return res


def part_daemon(a, tmp):
    """10 long-lived JVMs of real work under `jprof daemon` as it runs by default (-a, 19 Hz,
    60 s segments; javac's rounds in one JVM, as a build daemon runs them): its cost and the
    store's size per day at that rate"""
    js = os.path.join(tmp, "daemon.json")
    secs, interval = (120, 20) if a.quick else (900, 60)
    run_logged([sys.executable, os.path.join(REPO, "bench/longrun.py"), "--build", a.build,
                "--daemon", "--javac", "jvm", "--secs", str(secs), "--interval", str(interval),
                "--json", js], secs + 1200)
    with open(js) as f:
        res = json.load(f)
    say(f"daemon, 10 JVMs of real work, -a at {res['hz']} Hz for {secs} s in {interval} s "
        "segments: "
        f"{res['segment_kb_mean']:.1f} kB a segment, {res['mb_per_day']:.0f} MB a day; jprof "
        f"peak RSS {res['peak_rss_mb']:.1f} MB (second half {res['rss_growth_mb']:+.1f} MB), "
        f"CPU {res['cpu_pct_steady']:.2f}% of a core in steady state")
    return res


def part_soak(a, tmp):
    """the e2e suite's thread-churn stress at its long length: 90 s a JDK (20 in the suite)"""
    secs = 30 if a.quick else 90
    env = dict(os.environ, STRESS_SECS=str(secs), JPROF=a.jprof,
               JPROF_AGENT=os.path.join(a.build, "libjprofagent.so"),
               APPS=os.path.join(a.build, "tests", "apps"))
    out = run_logged(["bats", "-f", "thousands of short-lived threads",
                      os.path.join(REPO, "tests/e2e/agent_safety.bats")], 2 * secs + 900, env=env)
    failed = len(re.findall(r"^not ok", out, re.M))
    say(f"soak: thread churn under 999 Hz for {secs} s on JDK 17 and 25: "
        f"{'no deadlock, Java frames seen' if not failed else f'{failed} FAILED'}")
    if failed:
        raise RuntimeError("the thread-churn soak failed")
    return {"secs": secs, "output": out[-4000:]}


def churn_run(a, tmp, what, minutes, extra):
    """bench/churn.py for MINUTES with EXTRA arguments: its figures, and a line of them"""
    js = os.path.join(tmp, "churn.json")
    run_logged([sys.executable, os.path.join(REPO, "bench/churn.py"), "--build", a.build,
                "--minutes", str(minutes), "--java", a.java, "--json", js] + extra,
               minutes * 60 + 1200)
    with open(js) as f:
        res = json.load(f)
    pct = lambda k: f"{res[k]:.2f}%" if res[k] is not None else "none"
    say(f"{what} at 99 Hz for {minutes} min: {res['procs_started']} short-lived processes and "
        f"{res['jvms_started']} short-lived JVMs ran; jprof RSS {res['rss_growth_mb']:+.2f} MB "
        f"and open fds {res['fd_growth']:+d} over the last {res['growth_span_s'] / 60:.1f} min, "
        f"peak RSS {res['peak_rss_mb']:.1f} MB, peak fds {res['peak_fds']}, CPU "
        f"{100 * res['cpu_s'] / (minutes * 60):.2f}% of a core; long-lived JVMs' complete "
        f"Java stacks {pct('long_complete_pct')}, rooted at Thread.run "
        f"{pct('long_rooted_pct')}")
    return res


def part_churn(a, tmp):
    return churn_run(a, tmp, "churn, record -a", 3 if a.quick else 30, [])


def part_daemon_churn(a, tmp):
    """the always-on mode over two hours of churn: churn.py --daemon, confined to a cgroup of
    its own (the host's other processes are left alone)"""
    minutes = 3 if a.quick else 120
    return churn_run(a, tmp, "daemon-churn, daemon --cgroup", minutes,
                     ["--daemon", "--cgroup", "--sample-secs", "300" if minutes >= 60 else "30"])


def part_trace(a, tmp):
    """jprof trace on H2 under JDBC load: per-call and throughput cost, 100 start/stop cycles;
    the kernel split's cost per system call and per handoff (bench/SplitWork.java)"""
    if not os.path.exists(H2_JAR):
        raise RuntimeError(f"{H2_JAR} missing: install Debian's libh2-java "
                           "(scripts/install-deps.sh)")
    out = run_logged([sys.executable, os.path.join(REPO, "bench/trace.py"), "--jprof", a.jprof,
                      "--h2", H2_JAR, "--java", a.java, "--rounds", "2" if a.quick else "5",
                      "--secs", "3" if a.quick else "5", "--settle", "5" if a.quick else "15",
                      "--cycles", "100"], 1800)
    res = json.loads(out[out.index("{"):])
    rows = res["rows"]
    say(f"trace {res['method']} on H2 (2 threads): throughput x{med([r['throughput_ratio'] for r in rows]):.3f}, "
        f"CPU per transaction x{med([r['cpu_per_op_ratio'] for r in rows]):.3f}, "
        f"{med([r['ns_per_call'] for r in rows]):.0f} ns a call ({med([r['calls_per_op'] for r in rows]):.2f} "
        f"calls a transaction; the agent's estimate {med([r['agent_cost_ns'] for r in rows]):.0f} ns), "
        f"median of {len(rows)} windows against the untraced ones beside them")
    b, one, end = res["before"], res["after_1"], res["after_all"]
    say(f"trace: {res['cycles']} start/stop cycles in {res['cycles_s']} s: classes {b['classes_loaded']} "
        f"before, {one['classes_loaded']} after the first, {end['classes_loaded']} after the last; "
        f"metaspace used {b['metaspace_used_kb']:.0f}/{one['metaspace_used_kb']:.0f}/"
        f"{end['metaspace_used_kb']:.0f} KB (live {b.get('metaspace_live_kb')}/"
        f"{one.get('metaspace_live_kb')}/{end.get('metaspace_live_kb')}; old class versions kept "
        f"{end.get('old_versions_alive')} after {end.get('full_gcs')} full GCs); executeQuery in the code cache after: "
        f"{sum(1 for c in res['compiled_after'] if c.split()[2] == '0')} in use; "
        f"VerifyErrors {res['verify_errors']}")
    # the kernel split of slow calls: what it adds per system call and per thread handoff
    for mode in ("read", "pingpong"):
        out = run_logged([sys.executable, os.path.join(REPO, "bench/trace.py"), "--jprof", a.jprof,
                          "--java", a.java, "--split-micro", mode, "--rounds",
                          "1" if a.quick else "3", "--secs", "2" if a.quick else "4",
                          "--settle", "2" if a.quick else "4"], 1800)
        m = json.loads(out[out.index("{"):])
        pairs = m["split_pairs"]
        res["split_" + mode] = m
        say(f"trace split, SplitWork {mode}: the traced JVM's CPU per work() x"
            f"{med([p['cpu_per_op_ratio'] for p in pairs]):.3f} with the kernel split against "
            f"without, {med([p['ns_per_event_jvm'] for p in pairs]):.0f} ns a kernel event "
            f"({med([p['events_per_op'] for p in pairs]):.0f} events a call), jprof "
            f"{med([p['jprof_ns_per_event'] for p in pairs]):.0f} ns an event; lost "
            f"{sum(p['lost_kernel'] + p['lost_budget'] for p in pairs)}")
    return res


def part_serve(a, tmp):
    """jprof serve over a day of 30-s segments of 5,000 distinct stacks: timeline, an hour's
    and the day's flame graph, the recordings list"""
    js = os.path.join(tmp, "serve.json")
    run_logged([sys.executable, os.path.join(REPO, "bench/serve.py"), "--build", a.build,
                "--distinct", "5000", "--runs", "1" if a.quick else "3", "--json", js], 3600)
    with open(js) as f:
        res = json.load(f)
    say(f"serve over a day ({res['segments']} segments of {res['segment_kb']:.0f} kB, "
        f"{res['source']}): timeline {res['segments_index']['s']:.3f} s (index), all counted "
        f"without it in {res['segments_noindex']['s_all_counted']:.1f} s; the last hour's flame "
        f"graph {res['profile_hour_html']['s']:.2f} s (pprof {res['profile_hour_pprof']['s']:.2f} "
        f"s); the day's {res['profile_day_html']['s']:.1f} s"
        + (f" ({res['profile_day_html']['error']})" if res['profile_day_html']['error'] else "")
        + f"; 200 recordings listed in {res['recordings']['s']:.3f} s")
    return res


def part_stopwrite(a, tmp):
    """stop and write: SIGINT to exit on a 30,000-sample H2 recording at 999 Hz (issue 33)"""
    js = os.path.join(tmp, "stopwrite.json")
    run_logged([sys.executable, os.path.join(REPO, "bench/stopwrite.py"), "--build", a.build,
                "--java", a.java, "--runs", "1" if a.quick else "3", "--json", js], 1800)
    with open(js) as f:
        res = json.load(f)
    say(f"stop and write, H2 at {res['hz']} Hz, {res['median_samples']:.0f} samples: SIGINT "
        f"to exit {res['median_wall_s'] * 1000:.0f} ms wall, {res['median_cpu_s'] * 1000:.0f} "
        f"ms of jprof's CPU (median of {len(res['runs'])}; target 300 ms)")
    return res


def part_agg(a, tmp):
    """bench/agg.py: --aggregate against a record per sample, on a C program, JavaHot and H2"""
    res = {}
    for name, extra in (("native", ["--native"]), ("javahot", []), ("h2", ["--h2"])):
        if name == "h2" and not os.path.exists(H2_JAR):
            continue
        js = os.path.join(tmp, f"agg-{name}.json")
        run_logged([sys.executable, os.path.join(REPO, "bench/agg.py"), "--build", a.build,
                    "--rounds", str(a.runs), "--secs", str(5 if a.quick else 8), "--java",
                    a.java, "--json", js] + extra, 1800)
        with open(js) as f:
            res[name] = json.load(f)["median"]
        p, g = res[name]["plain"], res[name]["aggregate"]
        say(f"--aggregate, {name}, 999 Hz: BPF {p['bpf_ns_per_sample']:.0f} -> "
            f"{g['bpf_ns_per_sample']:.0f} ns a sample, jprof {p['jprof_cpu_ms_per_s']:.1f} -> "
            f"{g['jprof_cpu_ms_per_s']:.1f} ms/s, ring records {p['records_per_s']:.0f} -> "
            f"{g['records_per_s']:.0f} a second")
    return res


PARTS = {"overhead": part_overhead, "sigfloor": part_sigfloor, "h2": part_h2, "tomcat": part_tomcat, "host": part_host, "bpfcost": part_bpfcost,
         "syscalls": part_syscalls,
         "events": part_events, "load": part_load, "scale": part_scale, "accuracy": part_accuracy,
         "formats": part_formats, "join": part_join, "html": part_html,
         "longrun": part_longrun, "daemon": part_daemon, "churn": part_churn,
         "daemon-churn": part_daemon_churn, "trace": part_trace,
         "serve": part_serve, "stopwrite": part_stopwrite, "agg": part_agg}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--only", default=",".join(PARTS), help="comma-separated parts")
    ap.add_argument("--quick", action="store_true", default=bool(os.environ.get("BENCH_QUICK")))
    ap.add_argument("--pid-only", action="store_true",
                    default=bool(os.environ.get("BENCH_PID_ONLY")),
                    help="overhead and h2: jprof/perf -p WORKLOAD, not -a (a host where "
                    "others' JVMs run)")
    ap.add_argument("--accuracy-secs", type=int, default=0,
                    help="accuracy: seconds a run (default 30, 10 with --quick)")
    ap.add_argument("--java", default=os.path.join(os.environ.get(
        "JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64"), "bin", "java"))
    a = ap.parse_args()
    for name in a.only.split(","):
        if name not in PARTS:
            sys.exit(f"suite.py: unknown part {name} (parts: {', '.join(PARTS)})")
    if os.geteuid() != 0:
        sys.exit("suite.py: needs root")
    a.build = os.path.abspath(a.build)
    a.jprof = os.path.join(a.build, "jprof")
    a.runs = 2 if a.quick else 5
    overhead.PID_ONLY = a.pid_only
    for f in (a.jprof, os.path.join(a.build, "tests", "apps", "ManyThreads.class")):
        if not os.path.exists(f):
            sys.exit(f"suite.py: {f} missing (make all apps sc-driver)")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    os.makedirs(os.path.join(a.build, "bench"), exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc)
    base = os.path.join(a.build, "bench", "results-" + stamp.strftime("%Y-%m-%dT%H%M%SZ"))
    results = {"started": stamp.isoformat(), "quick": a.quick, "pid_only": a.pid_only,
               "java": a.java,
               "commit": subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"],
                                        stdout=subprocess.PIPE, text=True).stdout.strip(),
               "host": {"nproc": os.cpu_count(), "loadavg_start": os.getloadavg()},
               "parts": {}, "failed": {}}
    say(f"jprof bench {'QUICK ' if a.quick else ''}{results['commit'][:12]} "
        f"{stamp:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f} at start")
    try:
        for name in a.only.split(","):
            print(f"\n== {name} ==", flush=True)
            t0 = time.monotonic()
            with tempfile.TemporaryDirectory(prefix=f"jprof-bench-{name}-") as tmp:
                try:
                    results["parts"][name] = PARTS[name](a, tmp)
                except (RuntimeError, subprocess.SubprocessError, OSError) as e:
                    results["failed"][name] = str(e)
                    say(f"{name}: FAILED: {e}")
                finally:
                    cleanup()
            results.setdefault("part_secs", {})[name] = round(time.monotonic() - t0, 1)
    finally:
        cleanup()
        results["host"]["loadavg_end"] = os.getloadavg()
        with open(base + ".json", "w") as f:
            json.dump(results, f, indent=1)
        with open(base + ".txt", "w") as f:
            f.write("\n".join(summary) + "\n")
        print("\n== summary ==\n" + "\n".join(summary))
        print(f"\nwritten: {base}.json, {base}.txt")
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()

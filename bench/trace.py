#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""trace.py: jprof trace on Debian's H2 under JDBC load (issue 30): its cost and 100 cycles.

One H2Bench JVM serving throughout (bench/H2Bench.java, SECS 0: its totals on each stdin
line). Windows of SECS seconds alternate untraced and traced (jprof trace -p PID METHOD), each
SETTLE seconds after the trace's start or stop: both retransform the class, which deoptimizes
the compiled code that inlined the method, and H2's hot paths take seconds to compile again
on a loaded host (measured without the wait, the windows compare a re-warming JVM); each traced window is compared with the mean of
the untraced ones on either side: throughput (transactions/s) and the workers' CPU per
transaction, whose difference divided by the traced calls per transaction is the per-call
cost in ns. Then CYCLES start/stop cycles of the trace on the same JVM: before the first, after
the first and after the last, the JVM's loaded classes (jstat -class) and metaspace used
(jstat -gc MU; and live: jcmd VM.metaspace's used less the blocks freed for reuse), each
after two full GCs (jcmd GC.run) and more, 1 s apart, while live still falls (6 at most),
with the old class versions the JVM kept at its last purge (it runs with
-Xlog:redefine+class+iklass+purge=trace); and whether METHOD is in the code cache
(jcmd Compiler.codelist) a few seconds after the last cycle. Any VerifyError in the JVM's
output fails. Prints one JSON object.
  bench/trace.py --jprof build/jprof --h2 /usr/share/java/h2.jar [--rounds N] [--secs S]

--split: the cost of the kernel split instead (mtrace.bpf.c: a record per system call and
per off-CPU interval of the traced JVM's threads). Traced windows alternate without it
(--no-kernel) and with it, each SETTLE seconds after its start (both retransform alike);
the workers' CPU per transaction of the two (the BPF programs run on the traced threads'
time, the syscall tracepoints in their system time), divided by the events per transaction
(jprof -v's count over the trace's life), is the cost of one event in the JVM; jprof's own
CPU over the window (/proc/PID/stat) per event is the reading's. The slow calls (--slow 1ms)
are split as usual.

--split-micro: the same on bench/SplitWork.java (MODE read: 100 read system calls a work()
call; MODE pingpong: 100 handoffs between two threads, futex calls and context switches),
tracing SplitWork.work, with an untraced window first: the cost of one system call or one
handoff untraced, traced without the split and traced with it.

--split-unseen: switch-ins the kernel split never sees (mtrace.bpf.c close_unseen) on
bench/SleepWork.java (6 threads sleeping 40 ms, 3 times each, replaced by new ones; 2
spinners), ROUNDS traces of SECS s, --slow 1ms --top 100: jprof -v's count of switch-ins not
seen (intervals ended at their wait's return, spans unsure) and the 100 slowest calls kept:
incomplete ones, and ones all on the CPU though not marked (the fault this catches: 0).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METHOD = "org.h2.command.Command.executeQuery"


def totals(w):
    w.stdin.write("\n")
    w.stdin.flush()
    line = w.stdout.readline()
    figs = dict(tok.split("=") for tok in line.split() if "=" in tok)
    if not {"ops", "work_cpu_ns", "t_ns"} <= figs.keys():
        sys.exit(f"trace.py: H2Bench answered no totals: {line!r}")
    return {k: int(v) for k, v in figs.items()}


def start_trace(jprof, pid, out_json, err_path, extra=(), method=METHOD):
    err = open(err_path, "w+")
    p = subprocess.Popen([jprof, "trace", "-p", str(pid), method, "-o", out_json, *extra],
                         stdout=subprocess.DEVNULL, stderr=err)
    for _ in range(300):
        err.seek(0)
        if "jprof: tracing" in err.read():
            return p, err
        if p.poll() is not None:
            break
        time.sleep(0.05)
    err.seek(0)
    p.kill()
    sys.exit(f"trace.py: jprof trace did not start: {err.read()}")


def stop_trace(p, err):
    cpu_ns = None
    if p.poll() is None:  # (send_signal would reap it unseen)
        p.send_signal(signal.SIGINT)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        cpu_ns = (ru.ru_utime + ru.ru_stime) * 1e9
    rc = p.returncode
    err.seek(0)
    text = err.read()
    err.close()
    if rc != 0:
        sys.exit(f"trace.py: jprof trace exited {rc}: {text}")
    return text, cpu_ns  # cpu_ns None: it had ended by itself


def proc_cpu_ns(pid):
    with open(f"/proc/{pid}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) * 1e9 / os.sysconf("SC_CLK_TCK")


def split_bench(a, w, tmp, res, method=METHOD):
    """traced windows without and with the kernel split, alternating"""
    rows = []
    for r in range(a.rounds):
        for kernel in (False, True):
            out = os.path.join(tmp, f"s{r}{int(kernel)}.json")
            extra = ["-v", "--slow", "1ms"] + ([] if kernel else ["--no-kernel"])
            p, err = start_trace(a.jprof, w.pid, out, os.path.join(tmp, f"s{r}.err"), extra,
                                 method)
            life0 = totals(w)
            time.sleep(a.settle)
            c0 = proc_cpu_ns(p.pid)
            t = window(w, a.secs)
            jprof_cpu_ns = proc_cpu_ns(p.pid) - c0
            text, alive = stop_trace(p, err)
            if alive is None:
                sys.exit(f"trace.py: jprof trace ended before it was stopped: {text}")
            life_ops = totals(w)["ops"] - life0["ops"]
            m = re.search(r"kernel split: (\d+) off-CPU intervals, (\d+) system calls \((\d+) "
                          r"short ones in (\d+) batches\); lost: (\d+) ring buffer full, "
                          r"(\d+) thread table full, (\d+) over", text)
            g = [int(x) for x in m.groups()] if m else [0] * 7
            ev = [g[0], g[1], g[4], g[5], g[6]]  # system calls: all, batched or not
            records = g[0] + g[1] - g[2] + g[3]
            with open(out) as f:
                d = json.load(f)
            t.update(kernel=kernel, life_ops=life_ops,
                     calls=sum(m.get("calls", 0) for m in d["methods"]), off=ev[0], sc=ev[1],
                     lost_kernel=ev[2] + ev[3], lost_budget=ev[4], records=records,
                     jprof_cpu_ns=jprof_cpu_ns,
                     split_slow=sum(1 for c in d["slowest"] if c.get("split", {}).get("kernel")))
            rows.append(t)
    res["split_windows"] = rows
    pairs = []
    for r in range(a.rounds):
        n, k = rows[2 * r], rows[2 * r + 1]
        ev_per_op = (k["off"] + k["sc"]) / max(k["life_ops"], 1)
        added = k["cpu_ns_per_op"] - n["cpu_ns_per_op"]
        pairs.append({"throughput_ratio": k["ops_per_s"] / n["ops_per_s"],
                      "cpu_per_op_ratio": k["cpu_ns_per_op"] / n["cpu_ns_per_op"],
                      "events_per_op": ev_per_op,
                      "syscalls_per_op": k["sc"] / max(k["life_ops"], 1),
                      "switches_per_op": k["off"] / max(k["life_ops"], 1),
                      "calls_per_op": k["calls"] / max(k["life_ops"], 1),
                      "ns_per_event_jvm": added / max(ev_per_op, 1e-9),
                      "ns_per_call_jvm": added / max(k["calls"] / max(k["life_ops"], 1), 1e-9),
                      "jprof_ns_per_event": (k["jprof_cpu_ns"] - n["jprof_cpu_ns"]) /
                      max(ev_per_op * k["ops"], 1),
                      "records_per_event": k["records"] / max(k["off"] + k["sc"], 1),
                      "lost_kernel": k["lost_kernel"], "lost_budget": k["lost_budget"]})
    res["split_pairs"] = pairs


def window(w, secs):
    a = totals(w)
    time.sleep(secs)
    b = totals(w)
    dt = (b["t_ns"] - a["t_ns"]) / 1e9
    ops = b["ops"] - a["ops"]
    return {"ops": ops, "ops_per_s": ops / dt, "cpu_ns_per_op": (b["work_cpu_ns"] - a["work_cpu_ns"]) / max(ops, 1)}


def versions_alive(purge_log):
    """the old class versions the JVM kept at its last purge (-Xlog:redefine+class+iklass+purge)"""
    live = None
    try:
        with open(purge_log) as f:
            for line in f:
                m = re.search(r"previous version stats: live=(\d+)", line)
                if m:
                    live = int(m[1])
    except OSError:
        pass
    return live


def live_kb(jdk, pid):
    # jstat's MU counts the blocks the JVM freed (kept for reuse) as used: live is used less them
    ms = subprocess.run([f"{jdk}/bin/jcmd", str(pid), "VM.metaspace"], stdout=subprocess.PIPE,
                        text=True, check=True).stdout.split("Total Usage", 1)[-1]
    both = next((ln for ln in ms.splitlines() if ln.strip().startswith("Both:")), "")
    unit = {"bytes": 1 / 1024, "KB": 1, "MB": 1024}
    used = re.search(r"([0-9.]+) (bytes|KB|MB) \( *[<0-9]+%\) used", both)
    freed = re.search(r"deallocated: [0-9]+ blocks with ([0-9.]+) (bytes|KB|MB)", both)
    return (float(used[1]) * unit[used[2]] - (float(freed[1]) * unit[freed[2]] if freed else 0)
            if used else None)


def jvm_state(java, pid, purge_log=None):
    jdk = os.path.dirname(os.path.dirname(os.path.realpath(java)))
    gc = lambda: subprocess.run([f"{jdk}/bin/jcmd", str(pid), "GC.run"],
                                stdout=subprocess.DEVNULL, check=True)
    # two full GCs: JDK 25's first marks the code a retransformation made not entrant, a later
    # one unloads it and the class versions it held (seen on MathLoop: one GC was not enough)
    for _ in range(2):
        gc()
    # then more, 1 s apart, while live metaspace still falls: an old version is kept as long
    # as anything marks it (a JIT compilation begun before the retransformation, on H2 under
    # load: 3 of 38 versions at the second GC, none at the fourth)
    live, gcs = live_kb(jdk, pid), 2
    while gcs < 6 and live is not None:
        time.sleep(1)
        gc()
        gcs += 1
        now = live_kb(jdk, pid)
        if now is None or now > live - 1:
            break
        live = now
    cls = subprocess.run([f"{jdk}/bin/jstat", "-class", str(pid)], stdout=subprocess.PIPE,
                         text=True, check=True).stdout.split("\n")
    gcs_out = subprocess.run([f"{jdk}/bin/jstat", "-gc", str(pid)], stdout=subprocess.PIPE,
                             text=True, check=True).stdout.split("\n")
    hdr, val = gcs_out[0].split(), gcs_out[1].split()
    return {"classes_loaded": int(cls[1].split()[0]),
            "classes_unloaded": int(cls[1].split()[2]),
            "metaspace_used_kb": float(val[hdr.index("MU")]),
            "metaspace_live_kb": round(live, 1) if live is not None else None,
            "full_gcs": gcs,
            "old_versions_alive": versions_alive(purge_log) if purge_log else None}


def compiled(java, pid):
    jdk = os.path.dirname(os.path.dirname(os.path.realpath(java)))
    out = subprocess.run([f"{jdk}/bin/jcmd", str(pid), "Compiler.codelist"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if "org.h2.command.Command.executeQuery" in line]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jprof", default=os.path.join(REPO, "build", "jprof"))
    ap.add_argument("--h2", default="/usr/share/java/h2.jar")
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64/bin/java")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--secs", type=float, default=3)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--settle", type=float, default=15,
                    help="seconds between the trace's start and its window (recompilation)")
    ap.add_argument("--split", action="store_true",
                    help="the kernel split's cost (with and without --no-kernel) instead")
    ap.add_argument("--split-micro", choices=("read", "pingpong"),
                    help="the kernel split's cost per system call or handoff (SplitWork)")
    ap.add_argument("--split-unseen", action="store_true",
                    help="switch-ins the kernel split never sees (SleepWork)")
    a = ap.parse_args()
    if a.split_micro:
        return micro(a)
    if a.split_unseen:
        return unseen(a)
    res = {"method": METHOD, "rounds": a.rounds, "secs": a.secs, "cycles": a.cycles,
           "settle": a.settle}
    with tempfile.TemporaryDirectory(prefix="jprof-bench-trace-") as tmp:
        subprocess.check_call(["javac", "-d", tmp, "-cp", a.h2,
                               os.path.join(REPO, "bench/H2Bench.java")])
        log = open(os.path.join(tmp, "jvm.err"), "w+")
        purge_log = os.path.join(tmp, "purge.log")
        w = subprocess.Popen([a.java, "-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch",
                              f"-Xlog:redefine+class+iklass+purge=trace:file={purge_log}",
                              "-XX:+EnableDynamicAgentLoading", "-cp", f"{a.h2}:{tmp}",
                              "H2Bench", "2", "0", "5000", "5", "own"], cwd=tmp,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            for line in w.stdout:
                if line.strip() == "ready":
                    break
            if a.split:
                split_bench(a, w, tmp, res)
                finish(res, w, log)
            res["before"] = jvm_state(a.java, w.pid, purge_log)
            base = [window(w, a.secs)]
            traced = []
            for r in range(a.rounds):
                out = os.path.join(tmp, f"t{r}.json")
                p, err = start_trace(a.jprof, w.pid, out, os.path.join(tmp, f"t{r}.err"))
                life0 = totals(w)  # the trace counts every call from its start to its stop
                time.sleep(a.settle)  # the retransform deoptimizes; the JIT compiles again
                t = window(w, a.secs)
                stop_trace(p, err)
                life_ops = totals(w)["ops"] - life0["ops"]
                with open(out) as f:
                    d = json.load(f)
                m = d["methods"][0]
                t.update(calls=m["calls"], life_ops=life_ops, p50_ns=m["p50_ns"],
                         agent_cost_ns=d["cost_ns"])
                traced.append(t)
                time.sleep(a.settle)  # the classes' own bytes back: deoptimized again
                base.append(window(w, a.secs))
            rows = []
            for i, t in enumerate(traced):
                b_ops = (base[i]["ops_per_s"] + base[i + 1]["ops_per_s"]) / 2
                b_cpu = (base[i]["cpu_ns_per_op"] + base[i + 1]["cpu_ns_per_op"]) / 2
                calls_per_op = t["calls"] / max(t["life_ops"], 1)
                rows.append({"throughput_ratio": t["ops_per_s"] / b_ops,
                             "cpu_per_op_ratio": t["cpu_ns_per_op"] / b_cpu,
                             "calls_per_op": calls_per_op,
                             "ns_per_call": (t["cpu_ns_per_op"] - b_cpu) / max(calls_per_op, 1e-9),
                             "agent_cost_ns": t["agent_cost_ns"], "p50_ns": t["p50_ns"]})
            res.update(base=base, traced=traced, rows=rows)
            res["after_1"] = None
            t0 = time.monotonic()
            for c in range(a.cycles):
                p, err = start_trace(a.jprof, w.pid, os.path.join(tmp, "c.json"),
                                     os.path.join(tmp, "c.err"))
                time.sleep(0.2)
                stop_trace(p, err)
                if c == 0:
                    res["after_1"] = jvm_state(a.java, w.pid, purge_log)
            res["cycles_s"] = round(time.monotonic() - t0, 1)
            res["after_all"] = jvm_state(a.java, w.pid, purge_log)
            time.sleep(5)  # under load the JIT compiles the method again
            res["compiled_after"] = compiled(a.java, w.pid)
            res["after_window"] = window(w, a.secs)
        except BaseException:
            w.kill()
            w.wait()
            raise
        finish(res, w, log)


def micro(a):
    res = {"mode": a.split_micro, "rounds": a.rounds, "secs": a.secs, "settle": a.settle}
    with tempfile.TemporaryDirectory(prefix="jprof-bench-split-") as tmp:
        subprocess.check_call(["javac", "-d", tmp, os.path.join(REPO, "bench/SplitWork.java")])
        log = open(os.path.join(tmp, "jvm.err"), "w+")
        w = subprocess.Popen([a.java, "-XX:+EnableDynamicAgentLoading", "-cp", tmp,
                              "SplitWork", a.split_micro], cwd=tmp, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            for line in w.stdout:
                if line.strip() == "ready":
                    break
            res["untraced"] = window(w, a.secs)
            split_bench(a, w, tmp, res, "SplitWork.work")
        except BaseException:
            w.kill()
            w.wait()
            raise
        finish(res, w, log)


def unseen(a):
    res = {"rounds": a.rounds, "secs": a.secs}
    with tempfile.TemporaryDirectory(prefix="jprof-bench-unseen-") as tmp:
        subprocess.check_call(["javac", "-d", tmp, os.path.join(REPO, "bench/SleepWork.java")])
        log = open(os.path.join(tmp, "jvm.err"), "w+")
        w = subprocess.Popen([a.java, "-XX:+EnableDynamicAgentLoading", "-cp", tmp, "SleepWork",
                              "6", "2"], cwd=tmp, stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            for line in w.stdout:
                if line.strip() == "ready":
                    break
            rows = []
            for r in range(a.rounds):
                out = os.path.join(tmp, f"u{r}.json")
                p = subprocess.run([a.jprof, "trace", "-v", "-p", str(w.pid), "SleepWork.sleep40",
                                    "--slow", "1ms", "--top", "100", "-d",
                                    str(max(1, round(a.secs))), "-o", out],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if p.returncode != 0:
                    sys.exit(f"trace.py: jprof trace exited {p.returncode}: {p.stderr}")
                m = re.search(r"switch-ins not seen (\d+) \((\d+) ended at their wait's return, "
                              r"(\d+) spans unsure\)", p.stderr)
                with open(out) as f:
                    d = json.load(f)
                kept = d["slowest"]
                inc = [c for c in kept if c["split"].get("incomplete")]
                rows.append({"calls": d["methods"][0]["calls"] if d["methods"] else 0,
                             "unseen": int(m[1]) if m else None,
                             "ended_at_return": int(m[2]) if m else None,
                             "unsure": int(m[3]) if m else None,
                             "kept": len(kept), "kept_incomplete": len(inc),
                             "kept_on_cpu_unmarked": sum(
                                 1 for c in kept if not c["split"].get("incomplete")
                                 and c["split"].get("sleeping_ns", 0) < 39e6)})
            res["rows"] = rows
        except BaseException:
            w.kill()
            w.wait()
            raise
        finish(res, w, log)


def finish(res, w, log):
    w.kill()
    w.wait()
    log.seek(0)
    res["verify_errors"] = len(re.findall(r"VerifyError", log.read()))
    json.dump(res, sys.stdout, indent=1)
    print()
    sys.exit(1 if res["verify_errors"] else 0)


if __name__ == "__main__":
    main()

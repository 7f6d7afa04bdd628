#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""serve.py: how fast `jprof serve` answers over a day's store (issue 29's figures).

A day of 30-s segments (2,880) is made from 4 source segments copied under the names of a
whole day (--retime: each copy's time_nanos set to its own start, so that timed samples fall
in their copy's interval, as a daemon's do, and an hour's do not fold onto 4 moments): by default `jprof daemon -p` of a busy JVM (bench/JavaWork) and a native program
(small segments); --distinct N: folded profiles of N distinct Java-like stacks each
(tests/e2e/gen_folded.py, 4 seeds), written as segments by `jprof report` (5,000: ~290 kB, the
size of a busy 2-CPU host's 30-s segment, README); --source DIR: the segments of a store of
yours (e.g. one `make bench`'s daemon part left).
Then the roll-ups, as the daemon writes them: `jprof daemon --store` of the day (-p of an idle
process) until it has merged every whole ten minutes and UTC hour of it (the newest first;
--no-rollups: none).
Then, against `jprof serve` on a free loopback port, each request timed from the client
(curl-like, urllib), median of --runs, with the host's load (1-minute average) after it:
  - /api/segments with the daemon's index (the timeline: what the page asks first),
  - /api/segments without the index (a store whose index was lost: counted a second a request),
  - /api/profile of the last whole UTC hour (120 segments, one roll-up) as HTML, and as pprof,
    of an hour that cuts two at ten minutes (40 of one, 20 of the next: 6 roll-ups of ten
    minutes), and of the last 3,600 s (two hours cut at a segment's edge: roll-ups of ten
    minutes and up to 20 segments at its ends) as HTML and pprof,
  - /api/profile of the whole day (2,880 segments) as HTML (once; serve stops a report at
    60 s: then its answer is the figure),
  - /api/recordings over --recordings of 200 saved recordings.
The profiles are timed with the roll-ups and without them (their directory moved away between
requests of the same server: before/after in one run), alternating; the pprof answers of the
two ways compared by digest (the HTML's time cells come in a hash map's random order).
--compare OTHER_BUILD: the hours' ranges (whole and cut, HTML, pprof) also from OTHER_BUILD's
jprof serve, over the same segments with the hours' roll-ups only (a daemon that made no
roll-ups of ten minutes), the two servers' requests alternating (same machine, same load), and
their ratios (e.g. main's build against this tree's).
Needs root (the daemon), `make all`. --json FILE writes every figure. --keep DIR: the day's
store (and its roll-ups) made in DIR/day and left there, used again by the next run with it.
"""
import argparse
import calendar
import gzip
import hashlib
import json
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEG_S = 30
DAY = 2880


def seg_name(start):
    f = "%Y%m%dT%H%M%SZ"
    return (time.strftime(f, time.gmtime(start)) + "-" +
            time.strftime(f, time.gmtime(start + SEG_S)) + ".pb.gz")


def span_s(name):
    """the seconds a segment's or roll-up's name START-END... covers"""
    f = "%Y%m%dT%H%M%SZ"
    a, b = (calendar.timegm(time.strptime(name[i:i + 16], f)) for i in (0, 17))
    return b - a


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record_source(jprof, build, tmp, java):
    """4 segments of a busy JVM and a native program, by a real daemon"""
    src = os.path.join(tmp, "src")
    classes = os.path.join(tmp, "classes")
    os.makedirs(classes)
    subprocess.run([os.path.join(java, "bin", "javac"), "-d", classes,
                    os.path.join(REPO, "bench", "JavaWork.java")], check=True)
    jw = subprocess.Popen([os.path.join(java, "bin", "java"), "-cp", classes, "JavaWork", "2", "100000"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    hot = subprocess.Popen([os.path.join(build, "tests", "apps", "hotab"), "60"],
                           stdout=subprocess.DEVNULL)
    time.sleep(2)
    d = subprocess.Popen([jprof, "daemon", "--store", src, "-p", f"{jw.pid},{hot.pid}",
                          "--interval", "5"], stderr=open(os.path.join(tmp, "daemon.err"), "w"))
    time.sleep(21)
    d.send_signal(signal.SIGTERM)
    d.wait(timeout=30)
    if d.returncode:
        with open(os.path.join(tmp, "daemon.err")) as f:
            raise RuntimeError("jprof daemon failed: " + f.read()[-2000:])
    for p in (jw, hot):
        p.kill()
        p.wait()
    return src


def timed_samples(data, start_ns):
    """a gzip'ed pprof whose every Sample gets a time_ms label (one 100-ms slot of the 30 s,
    spread), time_nanos start_ns and the comment jprof:time_res_ms=100: as a daemon's
    segment of a busy host, where most stacks are seen in one slot"""
    b = gzip.decompress(data)
    fields, i = [], 0
    nstr = 0
    while i < len(b):
        key, j = varint(b, i)
        field, wt = key >> 3, key & 7
        if wt != 2 and field not in (9, 10, 12, 13, 14):
            raise ValueError("unexpected field")
        if wt == 0:
            _, j = varint(b, j)
        elif wt == 2:
            n, j = varint(b, j)
            j += n
        else:
            j += 8 if wt == 1 else 4
        fields.append((field, wt, b[i:j]))
        nstr += field == 6
        i = j
    k_time, k_res = nstr, nstr + 1
    out, k = bytearray(), 0
    for field, wt, raw in fields:
        if field == 9:
            continue
        if field == 2:
            ms = (k * 7919) % 300 * 100
            label = put_varint(1 << 3) + put_varint(k_time) + put_varint(3 << 3) + put_varint(ms)
            _, j = varint(raw, 0)
            n, j = varint(raw, j)
            body = raw[j:j + n] + put_varint(3 << 3 | 2) + put_varint(len(label)) + label
            raw = put_varint(2 << 3 | 2) + put_varint(len(body)) + body
            k += 1
        out += raw
    for sidx, text in ((k_time, b"time_ms"), (k_res, b"jprof:time_res_ms=100")):
        out += put_varint(6 << 3 | 2) + put_varint(len(text)) + text
    out += put_varint(13 << 3) + put_varint(k_res)
    out += put_varint(9 << 3) + put_varint(start_ns)
    return gzip.compress(bytes(out), 6)


def generated_source(jprof, tmp, distinct, timed=False):
    """a store of 4 segments of distinct generated stacks each (timed: their samples too)"""
    src = os.path.join(tmp, "gen")
    os.makedirs(os.path.join(src, "segments"))
    t = int(time.time()) - 3600
    for seed in range(4):
        folded = os.path.join(tmp, f"gen{seed}.folded")
        with open(folded, "w") as f:
            subprocess.run([sys.executable, os.path.join(REPO, "tests/e2e/gen_folded.py"),
                            str(distinct), str(seed + 1)], stdout=f, check=True)
        seg = os.path.join(src, "segments", seg_name(t + seed * SEG_S))
        subprocess.run([jprof, "report", folded, "-o", seg], check=True,
                       stderr=subprocess.DEVNULL)
        os.unlink(folded)
        if timed:
            with open(seg, "rb") as f:
                data = timed_samples(f.read(), (t + seed * SEG_S) * 10**9)
            with open(seg, "wb") as f:
                f.write(data)
    return src


def varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i


def put_varint(v):
    out = bytearray()
    while True:
        c = v & 0x7f
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


class Retimer:
    """copies of a gzip'ed pprof, each with its time_nanos (field 9) set to its start: its
    samples' time_ms labels count from there, so a copy's samples happen in the copy's own
    interval. The body (every field but 9) is deflated once and flushed to a byte boundary;
    each copy adds its field 9 as the stream's last block (a copy of the compressor), so a day
    of copies costs a day of writes, not of compressions"""

    def __init__(self, data):
        body = retimed_body(data)
        self.z = zlib.compressobj(6, zlib.DEFLATED, -15)
        self.head = self.z.compress(body) + self.z.flush(zlib.Z_SYNC_FLUSH)
        self.crc, self.size = zlib.crc32(body), len(body)

    def copy(self, start_ns):
        tail = put_varint(9 << 3) + put_varint(start_ns)
        z = self.z.copy()
        return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + self.head + z.compress(tail) +
                z.flush() + struct.pack("<II", zlib.crc32(tail, self.crc),
                                        (self.size + len(tail)) & 0xffffffff))


def retimed_body(data):
    """a gzip'ed pprof's bytes without its time_nanos (field 9)"""
    b = gzip.decompress(data)
    out, i = bytearray(), 0
    while i < len(b):
        key, j = varint(b, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            _, j = varint(b, j)
        elif wt == 1:
            j += 8
        elif wt == 2:
            n, j = varint(b, j)
            j += n
        elif wt == 5:
            j += 4
        else:
            raise ValueError("not a pprof file")
        if field != 9:
            out += b[i:j]
        i = j
    return bytes(out)


def make_day(src, dst, jprof, retime=False):
    """DAY segments in the store dst (dst/segments, dst/index) from those of the store src;
    retime: each copy's samples moved into its own interval (as a daemon's would be)"""
    src = os.path.join(src, "segments")
    segs = sorted(f for f in os.listdir(src) if f.endswith(".pb.gz") and f[0] != ".")
    if not segs:
        raise RuntimeError(f"no segments in {src}")
    os.makedirs(os.path.join(dst, "segments"), mode=0o700)
    end = int(time.time()) // SEG_S * SEG_S
    start = end - DAY * SEG_S
    lines = []
    raw = {}
    for i in range(DAY):
        s = os.path.join(src, segs[i % len(segs)])
        name = seg_name(start + i * SEG_S)
        if retime:
            if s not in raw:
                with open(s, "rb") as f:
                    raw[s] = Retimer(f.read())
            with open(os.path.join(dst, "segments", name), "wb") as f:
                f.write(raw[s].copy((start + i * SEG_S) * 10**9))
        else:
            shutil.copyfile(s, os.path.join(dst, "segments", name))
        lines.append((name, os.path.getsize(os.path.join(dst, "segments", name))))
    if jprof:
        # the samples of each source segment, as the daemon's index says them
        counts = {}
        for f in segs:
            out = subprocess.run([jprof, "report", os.path.join(src, f), "-f", "folded"],
                                 capture_output=True, text=True, check=True).stdout
            counts[f] = sum(int(l.rsplit(" ", 1)[1]) for l in out.splitlines() if l.strip())
        with open(os.path.join(dst, "index"), "w") as f:
            for i, (name, size) in enumerate(lines):
                f.write(f"{name} {counts[segs[i % len(segs)]]} {size}\n")
    return start, end, sum(sz for _, sz in lines)


def rollups_wanted(start, end, now):
    """the roll-ups the daemon makes of the segments [start, end) when its interval opens at
    now: each completed period of ten minutes and of an hour with 2 segments or more, an hour
    not when they lie in one of its parts (the same segments)"""
    def segs(a, b):
        return max(0, (min(b, end) - max(a, start)) // SEG_S)
    n = 0
    for p in (600, 3600):
        for a in range(start // p * p, now // p * p, p):
            if segs(a, a + p) < 2:
                continue
            if p == 3600 and any(segs(a + k, a + k + 600) == segs(a, a + p)
                                 for k in range(0, 3600, 600)):
                continue
            n += 1
    return n


def make_rollups(jprof, store, start, end, tmp, timeout=1800):
    """the roll-ups of the store's ten minutes and hours, by `jprof daemon` as it writes them"""
    want = rollups_wanted(start, end, int(time.time()))
    idle = subprocess.Popen(["sleep", str(timeout + 60)])
    d = subprocess.Popen([jprof, "daemon", "--store", store, "-p", str(idle.pid),
                          "--interval", "60", "--max-age", "30d", "--max-size", "100G"],
                         stderr=open(os.path.join(tmp, "rollups.err"), "w"))
    t0 = time.monotonic()
    rdir = os.path.join(store, "rollups")
    n = 0
    try:
        while time.monotonic() - t0 < timeout and d.poll() is None:
            n = len([f for f in os.listdir(rdir) if f[0] != "."]) if os.path.isdir(rdir) else 0
            if n >= want:
                break
            time.sleep(1)
    finally:
        d.send_signal(signal.SIGTERM)
        d.wait(timeout=60)
        idle.kill()
        idle.wait()
    took = time.monotonic() - t0
    size = sum(os.path.getsize(os.path.join(rdir, f)) for f in os.listdir(rdir)) \
        if os.path.isdir(rdir) else 0
    if n < want:
        with open(os.path.join(tmp, "rollups.err")) as f:
            sys.stderr.write(f.read()[-2000:])
    return want, n, took, size


LAST = {}  # the digest of timed()'s last answer


def timed(url, token, runs):
    """median, min, max seconds and the answer's bytes (an error answer: its status and line)"""
    times, size, err = [], 0, None
    for _ in range(runs):
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                body = r.read()
        except urllib.error.HTTPError as e:
            body, err = b"", f"{e.code} {e.read().decode(errors='replace').strip()}"
        times.append(time.monotonic() - t0)
        size = len(body)
        LAST["sha256"] = hashlib.sha256(body).hexdigest()
        LAST["body"] = body
    return statistics.median(times), min(times), max(times), size, err


def start_serve(jprof, args, tmp):
    tokfile = os.path.join(tmp, "token")
    with open(tokfile, "w") as f:
        f.write("0123456789abcdef0123456789abcdef\n")
    os.chmod(tokfile, 0o600)
    port = free_port()
    p = subprocess.Popen([jprof, "serve", *args, "--listen", f"127.0.0.1:{port}",
                          "--token-file", tokfile], stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    if "token=" not in line:
        p.kill()
        raise RuntimeError("serve did not start: " + line + p.stderr.read())
    return p, f"http://127.0.0.1:{port}", "0123456789abcdef0123456789abcdef"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--java", default="/usr/lib/jvm/java-17-openjdk-amd64")
    ap.add_argument("--source", help="a store whose segments make the day")
    ap.add_argument("--distinct", type=int, help="generated segments of N distinct stacks")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--compare", metavar="OTHER_BUILD",
                    help="the hour's flame graph from OTHER_BUILD's jprof too, alternating")
    ap.add_argument("--no-rollups", action="store_true", help="no roll-ups: segments only")
    ap.add_argument("--retime", action="store_true",
                    help="each copy's samples at its own times (timed sources: a daemon's)")
    ap.add_argument("--timed", action="store_true",
                    help="--distinct's samples timed: each at one 100-ms slot of its segment")
    ap.add_argument("--keep-diff", metavar="DIR",
                    help="answers that differ with and without roll-ups, kept in DIR")
    ap.add_argument("--keep", metavar="DIR",
                    help="the day's store made in DIR/day and kept; when there, used again")
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid():
        sys.exit("serve.py: needs root (the daemon)")
    jprof = os.path.join(a.build, "jprof")
    tmp = tempfile.mkdtemp(prefix="jprof-bench-serve-")
    res = {}
    procs = []
    try:
        store = os.path.join(a.keep or tmp, "day")
        kept = os.path.join(store, "bench.json")
        if a.keep and os.path.exists(kept):  # made by an earlier run: its day again
            with open(kept) as f:
                start, end, total = json.load(f)
            if os.path.isdir(store + "/rollups.off") and not os.path.isdir(store + "/rollups"):
                os.rename(store + "/rollups.off", store + "/rollups")
            if os.path.exists(store + "/index.kept"):
                os.rename(store + "/index.kept", store + "/index")
        else:
            src = (a.source or (generated_source(jprof, tmp, a.distinct, a.timed) if a.distinct
                                else record_source(jprof, a.build, tmp, a.java)))
            start, end, total = make_day(src, store, jprof, a.retime)
            if a.keep:
                with open(kept, "w") as f:
                    json.dump([start, end, total], f)
        res["segments"] = DAY
        res["source"] = a.source or (f"generated, {a.distinct} distinct stacks a segment"
                                     + (", timed" if a.timed else "")
                                     if a.distinct else "jprof daemon -p JavaWork,hotab")
        res["store_mb"] = total / 1e6
        res["segment_kb"] = total / DAY / 1e3
        recs = os.path.join(tmp, "recs")
        os.makedirs(recs, mode=0o700)
        for i, f in enumerate(sorted(os.listdir(os.path.join(store, "segments")))[:200]):
            shutil.copyfile(os.path.join(store, "segments", f),
                            os.path.join(recs, f"rec{i:03d}.pb.gz"))
        print(f"serve: a day of {DAY} segments of {res['segment_kb']:.0f} kB "
              f"({res['store_mb']:.0f} MB; {res['source']})", flush=True)
        if not a.no_rollups:
            want, n, took, size = make_rollups(jprof, store, start, end, tmp)
            res["rollups"] = {"wanted": want, "written": n, "s": took, "mb": size / 1e6}
            print(f"serve: roll-ups: {n} of {want} (ten minutes and hours) written by jprof daemon in "
                  f"{took:.0f} s ({size / 1e6:.0f} MB)", flush=True)
        p, base, tok = start_serve(jprof, ["--store", store, "--recordings", recs], tmp)
        procs.append(p)
        h0 = end // 3600 * 3600 - 3600  # the last whole UTC hour
        hour = f"since={h0}&until={h0 + 3600}"
        cut = f"since={h0 - 2400}&until={h0 + 1200}"  # 40 min of one hour, 20 of the next
        last = f"since={end - 3600}&until={end}"  # two hours cut at a segment's edge
        figures = [
            ("segments_index", "/api/segments"),
            ("profile_hour_html", f"/api/profile?{hour}"),
            ("profile_hour_pprof", f"/api/profile?{hour}&format=pprof"),
            ("profile_cut_hour_html", f"/api/profile?{cut}"),
            ("profile_last3600s_html", f"/api/profile?{last}"),
            ("profile_last3600s_pprof", f"/api/profile?{last}&format=pprof"),
            ("profile_day_html", f"/api/profile?since={start}&until={end}"),
            ("recordings", "/api/recordings"),
        ]
        rdir, rdir_off = os.path.join(store, "rollups"), os.path.join(store, "rollups.off")
        bodies = {}
        for key, path in figures:
            profile = key.startswith("profile_")
            ways = [("", None)]
            if profile and os.path.isdir(rdir):  # without roll-ups, then with, alternating
                ways = [("_segments", rdir_off), ("", rdir)]
            runs = 1 if "day" in key else a.runs
            for suffix, where in ways:
                res[key + suffix] = {"runs": []}
            for _ in range(runs if len(ways) > 1 else 1):
                for suffix, where in ways:
                    if where == rdir_off and os.path.isdir(rdir):
                        os.rename(rdir, rdir_off)
                    elif where == rdir and os.path.isdir(rdir_off):
                        os.rename(rdir_off, rdir)
                    med, lo, hi, size, err = timed(base + path, tok,
                                                   1 if len(ways) > 1 else runs)
                    r = res[key + suffix]
                    r["runs"].append(med)
                    r.update({"bytes": size, "error": err, "sha256": LAST["sha256"]})
                    bodies[key + suffix] = LAST["body"]
            for suffix, _ in ways:
                r = res[key + suffix]
                r.update({"s": statistics.median(r["runs"]), "min": min(r["runs"]),
                          "max": max(r["runs"])})
                same = ""
                # pprof only: the HTML's time cells come in the order of a hash map whose
                # key is random per process (two answers of the same way differ too)
                if suffix == "" and len(ways) > 1 and "pprof" in key:
                    r["same_answer"] = r["sha256"] == res[key + "_segments"]["sha256"]
                    if not r["same_answer"] and a.keep_diff:  # for a look at what differs
                        for k in (key, key + "_segments"):
                            with open(os.path.join(a.keep_diff, k), "wb") as f:
                                f.write(bodies[k])
                    same = ("; the same answer as from the segments" if r["same_answer"]
                            else "; NOT the answer the segments give")
                r["load"] = os.getloadavg()[0]
                print(f"serve: {path.split('?')[0]} {key + suffix}: {r['s']:.3f} s "
                      f"[{r['min']:.3f}..{r['max']:.3f}], {r['bytes']} bytes" +
                      (f"; answered {r['error']}" if r['error'] else "") + same +
                      f" (load {r['load']:.1f})", flush=True)
        if a.compare:
            # the same requests to the other build's server, alternating with this one's; its
            # store has the hours' roll-ups only (what a daemon without parts made): the same
            # segments, linked
            other = os.path.join(tmp, "hours")
            os.makedirs(os.path.join(other, "segments"), mode=0o700)
            os.makedirs(os.path.join(other, "rollups"), mode=0o700)
            os.chmod(other, 0o700)
            for f in os.listdir(os.path.join(store, "segments")):
                os.link(os.path.join(store, "segments", f), os.path.join(other, "segments", f))
            for f in os.listdir(rdir) if os.path.isdir(rdir) else []:
                if f[0] != "." and span_s(f) == 3600:
                    os.link(os.path.join(rdir, f), os.path.join(other, "rollups", f))
            q, qbase, qtok = start_serve(os.path.join(a.compare, "jprof"),
                                         ["--store", other, "--recordings", recs], tmp)
            procs.append(q)
            for key, path in figures[1:6]:
                this, other = [], []
                for _ in range(a.runs):
                    other.append(timed(qbase + path, qtok, 1)[0])
                    this.append(timed(base + path, tok, 1)[0])
                mo, mt = statistics.median(other), statistics.median(this)
                res[key + "_compare"] = {"other_build": a.compare, "other_s": mo, "this_s": mt,
                                         "ratio": mo / mt if mt else None,
                                         "other_runs": other, "this_runs": this}
                res[key + "_compare"]["load"] = os.getloadavg()[0]
                print(f"serve: {key}: {a.compare} {mo:.3f} s, this build {mt:.3f} s: "
                      f"x{mo / mt:.2f} (medians of {a.runs}, alternating; load "
                      f"{res[key + '_compare']['load']:.1f})", flush=True)
            q.terminate()
            q.wait(timeout=10)
        p.terminate()
        p.wait(timeout=10)
        # without the index: a fresh server counts segments a second a request
        os.rename(os.path.join(store, "index"), os.path.join(store, "index.kept"))
        p, base, tok = start_serve(jprof, ["--store", store], tmp)
        procs.append(p)
        t0 = time.monotonic()
        n = 0
        while True:
            med, lo, hi, size, err = timed(base + "/api/segments", tok, 1)
            n += 1
            with urllib.request.urlopen(urllib.request.Request(
                    base + "/api/segments", headers={"Authorization": f"Bearer {tok}"})) as r:
                pending = json.load(r)["pending"]
            if not pending or n > 200:
                break
        res["segments_noindex"] = {"s_all_counted": time.monotonic() - t0, "requests": n,
                                   "first_s": med}
        print(f"serve: /api/segments without the index: every segment counted after {n} "
              f"requests, {res['segments_noindex']['s_all_counted']:.1f} s", flush=True)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        if a.keep and os.path.exists(os.path.join(store, "index.kept")):
            os.rename(os.path.join(store, "index.kept"), os.path.join(store, "index"))
    print(json.dumps(res, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()

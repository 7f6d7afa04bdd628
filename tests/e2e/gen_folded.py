#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# gen_folded.py: writes N distinct folded stacks shaped like a Java profile (shared prefixes,
# Java, native and kernel frames), deterministic for a seed; for load tests of the writers.
# With "bomb KIND OUT" it writes one of the hostile inputs of jprof report (issue 26) to OUT:
#   zip       a 1 MB .pb.gz whose 1000 MiB of protobuf is empty samples, one field per 2 bytes
#   strings   a .pb.gz with 64 million empty strings (2 bytes each)
#   locs      a .pb.gz with 16 million locations (4 bytes each)
#   roots     folded, 2 million distinct root frames in random order (one line each)
#   deep      folded, one stack of 2 million frames
#   longname  folded, one frame named by 1 MiB of 'x'
"""usage: gen_folded.py N [SEED] > big.folded | gen_folded.py bomb KIND OUT"""
import gzip
import random
import sys


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vfield(num, v):
    return varint(num << 3) + varint(v)


def pprof_head():
    """string table "", "samples", "count" and one sample type (samples/count)"""
    return (field(1, vfield(1, 1) + vfield(2, 2)) + field(6, b"") + field(6, b"samples") +
            field(6, b"count"))


def bomb(kind, path):
    if kind in ("zip", "strings", "locs"):
        unit, times = {"zip": (field(2, b""), 500), "strings": (field(6, b""), 64),
                       "locs": (field(4, vfield(1, 1)), 16)}[kind]
        unit *= 1 << 20
        with gzip.open(path, "wb", compresslevel=9) as f:
            f.write(pprof_head())
            for _ in range(times):
                f.write(unit)
        return 0
    with open(path, "w") as f:
        if kind == "roots":
            rnd = random.Random(1)
            ids = list(range(2 << 20))
            rnd.shuffle(ids)
            for i in ids:
                f.write("Root%07d 1\n" % i)
        elif kind == "deep":
            f.write(";".join("f%d" % i for i in range(2 << 20)) + " 1\n")
        elif kind == "longname":
            f.write("main;" + "x" * (1 << 20) + " 1\n")
        else:
            print("unknown bomb " + kind, file=sys.stderr)
            return 2
    return 0


def main(argv):
    if len(argv) == 3 and argv[0] == "bomb":
        return bomb(argv[1], argv[2])
    if not argv or not argv[0].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    want = int(argv[0])
    rnd = random.Random(int(argv[1]) if len(argv) > 1 else 1)
    pkgs = ["com.acme.%s" % w for w in ("web", "db", "cache", "json", "auth", "queue", "util",
                                        "http", "io", "sched", "metrics", "search")]
    java = ["%s.%s%d.%s%d" % (rnd.choice(pkgs), rnd.choice(("Service", "Handler", "Codec",
            "Pool", "Store", "Parser")), rnd.randrange(400), rnd.choice(("run", "get", "put",
            "apply", "read", "write", "parse", "call")), rnd.randrange(50)) for _ in range(30000)]
    java = sorted(set(java))
    native = ["libc.so.6`%s" % n for n in ("read", "write", "memcpy", "malloc", "free",
              "pthread_cond_wait", "epoll_wait", "__lll_lock_wait")] + \
             ["Unsafe_Park", "JVM_Sleep", "SharedRuntime::resolve", "G1CollectedHeap::collect"]
    kernel = ["entry_SYSCALL_64", "do_syscall_64", "__x64_sys_read", "vfs_read", "ksys_write",
              "schedule", "__schedule", "futex_wait", "do_epoll_wait", "copy_user_generic"]
    procs = ["[process %d java]" % (1000 + i) for i in range(12)]
    stacks, seen = [], set()
    while len(stacks) < want:
        if stacks and rnd.random() < 0.8:
            base = rnd.choice(stacks)
            cut = rnd.randrange(2, max(3, len(base)))
            s = list(base[:cut])
        else:
            s = [rnd.choice(procs), "java.lang.Thread.run_[j]"]
        # hot methods are called from many places: a skewed pick of the pool
        for _ in range(rnd.randrange(1, 12)):
            m = java[int(len(java) * rnd.random() ** 2)]
            s.append(m + rnd.choice(("_[j]", "_[j]", "_[i]", "_[0]")))
        if rnd.random() < 0.4:
            s.append(rnd.choice(native))
            if rnd.random() < 0.6:
                s += [k + "_[k]" for k in kernel[:rnd.randrange(2, 6)]]
        t = tuple(s)
        if t in seen:
            continue
        seen.add(t)
        stacks.append(t)
    out = sys.stdout
    for s in stacks:
        out.write("%s %d\n" % (";".join(s), int(1 + 1000 * rnd.random() ** 4)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

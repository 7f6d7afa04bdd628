#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# gen_folded.py: writes N distinct folded stacks shaped like a Java profile (shared prefixes,
# Java, native and kernel frames), deterministic for a seed; for load tests of the writers.
"""usage: gen_folded.py N [SEED] > big.folded"""
import random
import sys


def main(argv):
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// InlineHot: compiled code whose callers are inlined at a call (e2e: inlined frames named from
// the JVM's memory). Run with -XX:CompileCommand=dontinline,InlineHot::leaf: thread
// "worker-i" calls outer, where C2 inlines midA and midB, which calls leaf, compiled on its
// own; nearly every sample is in leaf with Thread.run ... outer, midA, midB below it, the
// last two inlined at leaf's call (a return address: recorded whatever DebugNonSafepoints is).
//   java InlineHot SECONDS
// Prints "ready" once the worker runs, and "done <checksum>" at the end.
public class InlineHot {
    static volatile long sink;

    static long leaf(int x) {
        long s = x;
        for (int i = 0; i < 2000; i++) {
            s = s * 6364136223846793005L + (i ^ x);
        }
        return s;
    }

    static long midB(int x) {
        return leaf(x) ^ x;
    }

    static long midA(int x) {
        return midB(x + 1) + 1;
    }

    static long outer(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += midA(i);
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        Thread t = new Thread(() -> {
            while (System.nanoTime() < end) {
                sink += outer(1000);
            }
        }, "worker-i");
        t.start();
        System.out.println("ready");
        t.join();
        System.out.println("done " + sink);
    }
}

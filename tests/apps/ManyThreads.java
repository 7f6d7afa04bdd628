// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// ManyThreads: N always-runnable Java threads for the load tests (a saturated host).
//   java ManyThreads THREADS SECONDS -- each thread "spin-<i>" spins in ManyThreads.burn (a
//                                       counted loop calling a small method) 32 calls of
//                                       ManyThreads.deep below ManyThreads.spin, until the end.
// Prints "ready" once every thread runs, and "done <checksum>" at the end.
import java.util.concurrent.CountDownLatch;

public class ManyThreads {
    static volatile long sink;

    static int mix(int x) {
        return (x * 31) ^ (x >>> 3);
    }

    static long burn(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += mix(i);
        }
        return s;
    }

    // deep stacks: each sample carries some 40 Java frames, as real servers' do
    static long deep(int depth, int n) {
        if (depth == 0) {
            return burn(n);
        }
        return deep(depth - 1, n) + depth;
    }

    static void spin(long endNs) {
        long s = 0;
        while (System.nanoTime() < endNs) {
            s += deep(32, 100_000);
        }
        sink += s;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        long secs = args.length > 1 ? Long.parseLong(args[1]) : 60;
        long end = System.nanoTime() + secs * 1_000_000_000L;
        CountDownLatch started = new CountDownLatch(n);
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            ts[i] = new Thread(() -> {
                started.countDown();
                spin(end);
            }, "spin-" + i);
            ts[i].start();
        }
        started.await();
        System.out.println("ready");
        System.out.flush();
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("done " + (sink & 0xffff));
    }
}

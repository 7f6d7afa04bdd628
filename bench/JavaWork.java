// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// JavaWork: fixed CPU-bound Java work on N threads (hashing, small allocations, a counted
// loop). Warms up, prints "ready", waits for a line on stdin, prints the elapsed ms.
// ROUNDS 0: serves instead, see serve().
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.HashMap;

public class JavaWork {
    static volatile long sink;

    static long round(int seed) {
        HashMap<Integer, String> m = new HashMap<>();
        long s = seed;
        for (int i = 0; i < 20_000; i++) {
            m.put(i, Integer.toString(i ^ seed));
        }
        for (int i = 0; i < 20_000; i++) {
            s += m.get(i).hashCode();
        }
        for (int i = 0; i < 2_000_000; i++) {
            s = s * 31 + (i ^ (s >>> 7));
        }
        return s;
    }

    static void work(int rounds, int seed) {
        long s = 0;
        for (int r = 0; r < rounds; r++) {
            s += round(seed + r);
        }
        sink += s;
    }

    static volatile boolean serving = true;

    /*
     * ROUNDS 0: the threads run rounds until stdin ends; each line read prints the totals
     * so far, "ops=N work_cpu_ns=N t_ns=N" (rounds done, the threads' own CPU time,
     * System.nanoTime), so a driver can measure windows of one JVM with and without a
     * profiler (bench/overhead.py's windows), on the same compiled code and heap.
     */
    static void serve(int threads, BufferedReader in) throws Exception {
        java.util.concurrent.atomic.AtomicLong ops = new java.util.concurrent.atomic.AtomicLong();
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            final int seed = i * 1000;
            ts[i] = new Thread(() -> {
                long s = 0;
                for (int r = 0; serving; r++) {
                    s += round(seed + r);
                    ops.incrementAndGet();
                }
                sink += s;
            }, "work-" + i);
            ts[i].start();
        }
        while (in.readLine() != null) {
            long cpu = 0;
            for (Thread t : ts)
                cpu += Math.max(mx.getThreadCpuTime(t.getId()), 0);
            System.out.printf("ops=%d work_cpu_ns=%d t_ns=%d%n", ops.get(), cpu, System.nanoTime());
            System.out.flush();
        }
        serving = false;
        for (Thread t : ts) t.join();
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 400;
        work(200, 1); // warm-up: let the JIT finish before the measured part
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        if (rounds == 0) {
            serve(threads, in);
            return;
        }
        in.readLine();
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[threads];
        java.util.concurrent.atomic.AtomicLong cpuNs = new java.util.concurrent.atomic.AtomicLong();
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int i = 0; i < threads; i++) {
            final int seed = i * 1000;
            ts[i] = new Thread(() -> {
                work(rounds, seed);
                cpuNs.addAndGet(mx.getCurrentThreadCpuTime());
            }, "work-" + i);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        // work_cpu_ms: the work threads' own CPU time (a profiler's signal handlers and the
        // interrupts it takes run on them): less noisy than the wall time on a shared host
        System.out.printf("elapsed_ms=%.3f work_cpu_ms=%.3f%n", (System.nanoTime() - t0) / 1e6,
                          cpuNs.get() / 1e6);
    }
}

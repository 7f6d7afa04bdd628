// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Phases.java: a phase change for the timeline tests: after "ready" it waits (asleep) for the file
// named by its second argument, then phaseA burns CPU for 2 s (the first argument), then phaseB
// for as long, then it exits.
public class Phases {
    static volatile long sink;

    static long spin(long x, long end) {
        while (System.nanoTime() < end)
            for (int i = 0; i < 100_000; i++)
                x = (x * 6364136223846793005L + 1442695040888963407L) ^ (x >>> 29);
        return x;
    }

    static long phaseA(long x, long end) {
        return spin(x, end);
    }

    static long phaseB(long x, long end) {
        return spin(x ^ 1, end);
    }

    public static void main(String[] args) throws Exception {
        long ms = args.length > 0 ? Long.parseLong(args[0]) * 1000 : 2000;
        long x = phaseA(1, System.nanoTime() + 300_000_000L); /* warm-up: compiled before */
        x = phaseB(x, System.nanoTime() + 300_000_000L);
        System.out.println("ready");
        System.out.flush();
        java.io.File go = new java.io.File(args.length > 1 ? args[1] : "/nonexistent");
        while (args.length > 1 && !go.exists())
            Thread.sleep(10);
        long t = System.nanoTime();
        x = phaseA(x, t + ms * 1_000_000L);
        x = phaseB(x, t + 2 * ms * 1_000_000L);
        sink = x;
        System.out.println("done " + sink);
    }
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Regress.java: a loop of two CPU-bound methods, steady (9 units) and slowed (1 unit, or 2 with
// "slow"): between a base and a slow run only slowed's share changes (1/10 -> 2/11 of the time: 1.82x).
public class Regress {
    static volatile long sink;

    static long steady(long x) {
        for (int i = 0; i < 9_000_000; i++)
            x = (x * 6364136223846793005L + 1442695040888963407L) ^ (x >>> 29);
        return x;
    }

    static long slowed(long x, int units) {
        for (int i = 0; i < 1_000_000 * units; i++)
            x = (x * 6364136223846793005L + 1442695040888963407L) ^ (x >>> 31);
        return x;
    }

    public static void main(String[] args) {
        int units = args.length > 0 && args[0].equals("slow") ? 2 : 1;
        long secs = args.length > 1 ? Long.parseLong(args[1]) : 10;
        long end = System.nanoTime() + secs * 1_000_000_000L, x = 1;
        System.out.println("ready");
        while (System.nanoTime() < end) {
            x = steady(x);
            x = slowed(x, units);
        }
        sink = x;
        System.out.println("done " + sink);
    }
}

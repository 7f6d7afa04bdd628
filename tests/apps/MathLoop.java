// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// MathLoop.java: a CPU-bound loop whose time is spent in JIT intrinsics and VM stubs (Math.sin/sqrt).
public class MathLoop {
    static volatile double sink;

    static double kernel(int n) {
        double s = 0;
        for (int i = 1; i <= n; i++) {
            s += Math.sin(i * 0.001) + Math.sqrt(i) + Math.cos(s * 1e-9) + Math.log(i);
        }
        return s;
    }

    public static void main(String[] args) {
        long secs = args.length > 0 ? Long.parseLong(args[0]) : 10;
        long end = System.nanoTime() + secs * 1_000_000_000L;
        System.out.println("ready");
        while (System.nanoTime() < end)
            sink += kernel(1_000_000);
        System.out.println("done " + sink);
    }
}

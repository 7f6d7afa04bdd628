// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// JprofWorkload: known hot methods for the agent tests. Run with
//   -XX:CompileCommand=dontinline,JprofWorkload::hotLoop
//   -XX:CompileCommand=dontinline,JprofWorkload::inlineCaller
// so hotLoop and inlineCaller are JIT frames of their own and mix is inlined into inlineCaller.
// Prints "jprof-workload ok ..." when every round computed the expected value.
public final class JprofWorkload {
    static volatile boolean stop;

    /** counted int loop without calls: C2 needs no safepoint poll per iteration */
    static long hotLoop(int[] a) {
        long s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (a[i] * 31L) ^ (s >>> 7);
        }
        return s;
    }

    /** small enough to be inlined everywhere */
    static int mix(int x) {
        x ^= x >>> 16;
        x *= 0x85ebca6b;
        x ^= x >>> 13;
        x *= 0xc2b2ae35;
        x ^= x >>> 16;
        return x;
    }

    static long inlineCaller(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += mix(i + (int) s);
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        long millis = (long) (Double.parseDouble(args.length > 0 ? args[0] : "5") * 1000);
        int[] data = new int[1 << 16];
        for (int i = 0; i < data.length; i++) {
            data[i] = i * 7 + 3;
        }
        final long expectHot = hotLoop(data);
        final long expectInline = inlineCaller(100_000);
        final long[] rounds = new long[2];
        final boolean[] bad = new boolean[2];
        Thread hot = new Thread(() -> {
            while (!stop) {
                if (hotLoop(data) != expectHot) bad[0] = true;
                rounds[0]++;
            }
        }, "jprof-hot");
        Thread inline = new Thread(() -> {
            while (!stop) {
                if (inlineCaller(100_000) != expectInline) bad[1] = true;
                rounds[1]++;
            }
        }, "jprof-inline");
        hot.start();
        inline.start();
        System.out.println("jprof-workload started pid=" + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(millis);
        stop = true;
        hot.join();
        inline.join();
        boolean ok = !bad[0] && !bad[1] && rounds[0] > 0 && rounds[1] > 0;
        System.out.println((ok ? "jprof-workload ok" : "jprof-workload BAD")
                + " hot=" + rounds[0] + " inline=" + rounds[1]);
        System.exit(ok ? 0 : 1);
    }
}

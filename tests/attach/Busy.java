// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Busy: a JVM whose N threads spin in Busy.spin, for attach-under-load tests and measurements.
//   java Busy THREADS READY_FILE   -- creates READY_FILE once every thread runs, spins until killed
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;

public class Busy {
    static volatile long sink;

    static long spin(long seed) {
        long s = seed;
        for (int i = 0; i < 1_000_000; i++) {
            s = s * 6364136223846793005L + i;
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        CountDownLatch up = new CountDownLatch(n);
        for (int t = 0; t < n; t++) {
            final long seed = t;
            Thread th = new Thread(() -> {
                up.countDown();
                long s = seed;
                for (;;) {
                    s = spin(s);
                    sink = s;
                }
            }, "busy-" + t);
            th.setDaemon(true);
            th.start();
        }
        up.await();
        Files.write(Paths.get(args[1]), "ready\n".getBytes());
        Thread.sleep(Long.MAX_VALUE);
    }
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// CtWork: a light Java load for the container tests: thread "ct-worker" burns CPU in
// CtWork.burn about 40% of the time (so several JVMs fit on a shared 2-CPU host), and
// allocates 512 KiB in CtWork.fill after each burst (about 30 MB/s: allocation samples).
//   java CtWork SECONDS READY_FILE  -- writes READY_FILE once the worker runs
import java.nio.file.Files;
import java.nio.file.Path;

public class CtWork {
    static volatile long sink;
    static volatile long[] kept;

    static long[] fill() {
        return new long[64 * 1024];
    }

    static long burn(long untilNs) {
        long s = 0;
        while (System.nanoTime() < untilNs) {
            for (int i = 0; i < 10_000; i++) {
                s += (i * 31L) ^ (s >>> 3);
            }
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
        Thread t = new Thread(() -> {
            try {
                while (System.nanoTime() < end) {
                    sink += burn(System.nanoTime() + 10_000_000L);
                    kept = fill();
                    Thread.sleep(15);
                }
            } catch (InterruptedException e) {
                // end of the run
            }
        }, "ct-worker");
        t.start();
        Files.writeString(Path.of(args[1]), "ready\n");
        t.join();
    }
}

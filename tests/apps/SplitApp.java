// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// SplitApp.java: slow calls of known make-up for jprof trace's kernel split (tests/e2e/trace.bats).
// It prints "ready", then each time DIR/goN appears (N = 1, 2, ...) runs: sleep40 x3
// (Thread.sleep(40)), fsync x3 (writes 4 MiB to DIR/fsync.dat and fsyncs it), spin30 x3
// (30 ms of CPU, no call out), contended x3 (enters a monitor another thread holds for
// 40 ms: it waits ~40 ms), gc x3 (4 MiB allocated, then System.gc(): a GC pause; 250 ms
// apart, so that hsperfdata, read every 100 ms, shows each), and writes DIR/doneN; it
// exits on DIR/quit.
import java.io.FileOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

public class SplitApp {
    static final Object LOCK = new Object();
    static volatile long sink;

    static void sleep40() throws InterruptedException {
        Thread.sleep(40);
    }

    static void fsync(Path f) throws Exception {
        byte[] b = new byte[1 << 20];
        for (int i = 0; i < b.length; i++)
            b[i] = (byte) (i * 31 + sink);
        try (FileOutputStream o = new FileOutputStream(f.toFile())) {
            for (int i = 0; i < 4; i++)
                o.write(b);
            o.getFD().sync();
        }
    }

    static void spin30() {
        long end = System.nanoTime() + 30_000_000L, x = sink;
        while (System.nanoTime() < end)
            for (int i = 0; i < 1000; i++)
                x = x * 6364136223846793005L + 1442695040888963407L;
        sink = x;
    }

    static void contended() {
        synchronized (LOCK) {
            sink++;
        }
    }

    static void gc() {
        byte[][] a = new byte[64][];
        for (int i = 0; i < a.length; i++)
            a[i] = new byte[64 << 10];
        sink += a.length;
        System.gc();
    }

    // another thread takes LOCK and holds it 40 ms; contended() then waits for it
    static void holdThenContend() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            synchronized (LOCK) {
                held.countDown();
                long end = System.nanoTime() + 40_000_000L;
                while (System.nanoTime() < end) {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }, "holder");
        t.start();
        held.await();
        contended();
        t.join();
    }

    static void phase(Path dir) {
        try {
            for (int i = 0; i < 3; i++)
                sleep40();
            for (int i = 0; i < 3; i++)
                fsync(dir.resolve("fsync.dat"));
            for (int i = 0; i < 3; i++)
                spin30();
            for (int i = 0; i < 3; i++)
                holdThenContend();
            for (int i = 0; i < 3; i++) {
                gc();
                Thread.sleep(250);
            }
            Files.deleteIfExists(dir.resolve("fsync.dat"));
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        System.out.println("ready");
        for (int n = 1; !Files.exists(dir.resolve("quit")); Thread.sleep(10)) {
            if (!Files.exists(dir.resolve("go" + n)))
                continue;
            // each phase on a thread of its own: no compiled frame of an earlier phase, with
            // the methods inlined as they were before a retransform, runs on into this one
            Thread t = new Thread(() -> phase(dir), "phase" + n);
            t.start();
            t.join();
            Files.writeString(dir.resolve("done" + n), "done\n");
            System.out.println("done" + n);
            n++;
        }
    }
}

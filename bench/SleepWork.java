// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// SleepWork: threads that sleep, for jprof trace's kernel split (bench/trace.py --split-unseen).
// SleepWork THREADS SPINNERS: THREADS threads each call sleep40() (Thread.sleep(40)) 3 times
// and end, each replaced by a new one, forever; SPINNERS threads spin (a loaded host). Prints
// "ready".
public class SleepWork {
    static volatile long sink;

    static void sleep40() throws InterruptedException {
        Thread.sleep(40);
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]), spinners = Integer.parseInt(args[1]);
        for (int i = 0; i < spinners; i++) {
            Thread t = new Thread(() -> {
                long x = 1;
                for (;;) {
                    x = x * 6364136223846793005L + 1442695040888963407L;
                    if (x == 0)
                        sink = x;
                }
            }, "spinner" + i);
            t.setDaemon(true);
            t.start();
        }
        for (int i = 0; i < n; i++) {
            final int id = i;
            Thread t = new Thread(() -> {
                for (int g = 0;; g++) {
                    Thread s = new Thread(() -> {
                        try {
                            for (int c = 0; c < 3; c++)
                                sleep40();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }, "sleeper" + id + "-" + g);
                    s.start();
                    try {
                        s.join();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "starter" + i);
            t.setDaemon(true);
            t.start();
        }
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

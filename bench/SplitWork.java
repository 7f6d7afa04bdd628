// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// SplitWork: the events jprof trace's kernel split records, at a known rate (bench/trace.py
// --split-micro). MODE read: one thread calls work(), 100 one-byte reads of /dev/zero (100
// read system calls), in a loop; MODE pingpong: work() hands a token to a second thread and
// back 100 times (LockSupport park/unpark: futex calls and 2 context switches a handoff).
// Prints "ready", then on each stdin line "ops=N work_cpu_ns=N t_ns=N": system calls or
// handoffs so far, both threads' CPU time, System.nanoTime.
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class SplitWork {
    static final AtomicLong ops = new AtomicLong();
    static volatile long sink;
    static volatile int turn; // pingpong: 0 main's, 1 the partner's
    static volatile Thread mainT, partner;

    static void work(FileInputStream in) throws Exception {
        long s = 0;
        for (int i = 0; i < 100; i++)
            s += in.read();
        sink += s;
        ops.addAndGet(100);
    }

    static void work() {
        for (int i = 0; i < 100; i++) {
            turn = 1;
            LockSupport.unpark(partner);
            while (turn != 0)
                LockSupport.park();
        }
        ops.addAndGet(100);
    }

    public static void main(String[] args) throws Exception {
        boolean read = args[0].equals("read");
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread w = new Thread(() -> {
            try (FileInputStream in = new FileInputStream("/dev/zero")) {
                mainT = Thread.currentThread();
                while (true) {
                    if (read)
                        work(in);
                    else
                        work();
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "worker");
        partner = new Thread(() -> {
            while (true) {
                while (turn != 1)
                    LockSupport.park();
                turn = 0;
                LockSupport.unpark(mainT);
            }
        }, "partner");
        partner.setDaemon(true);
        w.setDaemon(true);
        partner.start();
        w.start();
        Thread.sleep(3000);
        System.out.println("ready");
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        while (r.readLine() != null) {
            long cpu = Math.max(mx.getThreadCpuTime(w.getId()), 0)
                    + Math.max(mx.getThreadCpuTime(partner.getId()), 0);
            System.out.printf("ops=%d work_cpu_ns=%d t_ns=%d%n", ops.get(), cpu, System.nanoTime());
        }
    }
}

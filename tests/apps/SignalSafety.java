// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// SignalSafety: a JVM with the jprof agent that, mid-recording, stops handling the agent's
// signal: it execs a non-Java program (same pid) or resets the signal to SIG_DFL.
//
//   java SignalSafety exec|reset|withdraw cpu|sleep GO_FILE SECONDS [PROGRAM ARGS...]
//
// Prints "ready", works (cpu: spinning threads; sleep: threads in 1 ms sleeps) until
// GO_FILE exists, then 1.5 s more with the agent answering. Then "reset": the signal goes
// back to SIG_DFL and the same work runs SECONDS more, then "jvm survived"; "withdraw":
// the same, but the ring header's signal goes to 0 as when the agent stops; "exec":
// execv(PROGRAM, ARGS). A stray stack request kills the process ("Real-time signal").
import java.io.File;

public class SignalSafety {
    static volatile long sink;
    static volatile boolean stop;

    static native int resetAgentSignal();

    static native int withdrawSignal();

    static native int execProgram(String[] argv);

    static void spinFor(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end && !stop) {
            for (int i = 0; i < 10000; i++) {
                sink += i * 31L;
            }
        }
    }

    static void blockFor(long nanos) {
        long end = System.nanoTime() + nanos;
        try {
            while (System.nanoTime() < end && !stop) {
                Thread.sleep(1);
            }
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static void work(boolean cpu, long nanos) {
        if (cpu) {
            spinFor(nanos);
        } else {
            blockFor(nanos);
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        boolean cpu = args[1].equals("cpu");
        File go = new File(args[2]);
        long after = (long) (Double.parseDouble(args[3]) * 1e9);
        System.loadLibrary("sigsafety");

        Thread[] workers = new Thread[2];
        for (int i = 0; i < workers.length; i++) {
            workers[i] = new Thread(() -> {
                while (!stop) {
                    work(cpu, 100_000_000L);
                }
            }, "worker-" + i);
            workers[i].setDaemon(true);
            workers[i].start();
        }
        System.out.println("ready");
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (!go.exists()) {
            if (System.nanoTime() > deadline) {
                System.out.println("no go file");
                System.exit(3);
            }
            work(cpu, 50_000_000L);
        }
        work(cpu, 1_500_000_000L);

        if (mode.equals("withdraw")) {
            int err = withdrawSignal();
            System.out.println("withdrew " + err);
            if (err != 0) {
                System.exit(4);
            }
            work(cpu, after);
            stop = true;
            System.out.println("jvm survived");
            return;
        }
        if (mode.equals("reset")) {
            int sig = resetAgentSignal();
            System.out.println("reset signal " + sig);
            if (sig <= 0) {
                System.exit(4);
            }
            work(cpu, after);
            stop = true;
            System.out.println("jvm survived");
            return;
        }
        String[] argv = new String[args.length - 4];
        System.arraycopy(args, 4, argv, 0, argv.length);
        System.out.println("exec " + String.join(" ", argv));
        System.out.flush();
        int err = execProgram(argv);
        System.out.println("exec failed: " + err);
        System.exit(5);
    }
}

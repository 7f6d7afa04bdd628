// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Accuracy.java: accuracy ground truth (bench/suite.py, tests/e2e/accuracy.bats): threads at 100/50/25% duty measure their own CPU.
//
// Usage: java Accuracy SECS [TRIGGER]. Prints "ready", waits for a line on stdin (or for the
// file TRIGGER to exist: the profiler is up), runs SECS seconds, then prints one line per
// thread and per (thread, method):
//   thread NAME CPU_NS      method NAME hotA|hotB|other CPU_NS
// Each busy slice of a 10 ms period runs 2/3 of its wall time in hotA and 1/3 in hotB; the
// CPU of each part is the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID, via ThreadMXBean)
// read around it, so the split is measured, not assumed.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Paths;

public class Accuracy {
	static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
	static volatile long sink;

	// spins until the wall clock reaches `until`; the loop body is the work
	static long hotA(long until, long x) {
		while (System.nanoTime() < until)
			for (int i = 0; i < 200; i++)
				x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long hotB(long until, long x) {
		while (System.nanoTime() < until)
			for (int i = 0; i < 200; i++)
				x ^= (x << 13) ^ (x >>> 7) ^ (x << 17);
		return x;
	}

	static final class Worker extends Thread {
		final int duty;
		final long end;
		long cpu, cpuA, cpuB;

		Worker(int duty, long end) {
			super("duty" + duty);
			this.duty = duty;
			this.end = end;
		}

		@Override
		public void run() {
			final long period = 10_000_000L, busy = period * duty / 100;
			long c0 = MX.getCurrentThreadCpuTime(), x = duty;
			long next = System.nanoTime();
			while (next < end) {
				long a0 = MX.getCurrentThreadCpuTime();
				x = hotA(next + busy * 2 / 3, x);
				long a1 = MX.getCurrentThreadCpuTime();
				x = hotB(next + busy, x);
				long b1 = MX.getCurrentThreadCpuTime();
				cpuA += a1 - a0;
				cpuB += b1 - a1;
				next += period;
				long rest = next - System.nanoTime();
				if (rest > 0) {
					try {
						Thread.sleep(rest / 1_000_000, (int)(rest % 1_000_000));
					} catch (InterruptedException e) {
						return;
					}
				}
			}
			sink = x;
			cpu = MX.getCurrentThreadCpuTime() - c0;
		}
	}

	public static void main(String[] args) throws Exception {
		int secs = Integer.parseInt(args[0]);
		System.out.println("ready");
		System.out.flush();
		if (args.length > 1) {
			while (!Files.exists(Paths.get(args[1])))
				Thread.sleep(10);
		} else {
			new BufferedReader(new InputStreamReader(System.in)).readLine();
		}
		long end = System.nanoTime() + secs * 1_000_000_000L;
		Worker[] ws = { new Worker(100, end), new Worker(50, end), new Worker(25, end) };
		for (Worker w : ws)
			w.start();
		for (Worker w : ws)
			w.join();
		for (Worker w : ws) {
			System.out.println("thread " + w.getName() + " " + w.cpu);
			System.out.println("method " + w.getName() + " hotA " + w.cpuA);
			System.out.println("method " + w.getName() + " hotB " + w.cpuB);
			System.out.println("method " + w.getName() + " other " +
					   Math.max(0, w.cpu - w.cpuA - w.cpuB));
		}
	}
}

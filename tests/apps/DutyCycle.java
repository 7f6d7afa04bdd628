// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// DutyCycle.java TRIGGER SECONDS: ground truth for CPU accounting. Three threads ("full",
// "half", "quarter") run at 100, 50 and 25% duty cycle, each in its own busy method, for
// SECONDS from the moment the file TRIGGER exists. Each measures its own CPU time over its
// work (ThreadMXBean: clock_gettime(CLOCK_THREAD_CPUTIME_ID)); at the end the program prints
// "tid method cpu_ns" per thread, then "done". Prints "ready" when the threads wait.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

public class DutyCycle {
	static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
	static volatile long sink;
	static Path trigger;
	static double seconds;

	static final class Worker extends Thread {
		final int duty;
		final String method;
		volatile String tid = "?";
		volatile long cpuNs;

		Worker(String name, int duty, String method) {
			super(name);
			this.duty = duty;
			this.method = method;
		}

		static void spin(long ns) {
			long end = MX.getCurrentThreadCpuTime() + ns;
			while (MX.getCurrentThreadCpuTime() < end)
				for (int i = 0; i < 2000; i++)
					sink += i * 31L;
		}

		// one method per thread, so each thread's CPU has its own frame; the sleep is part
		// of it (Thread.sleep's own bookkeeping is CPU time of the thread, too)
		static void busyFull(long ns, long rest) throws InterruptedException {
			spin(ns);
			pause(rest);
		}

		static void busyHalf(long ns, long rest) throws InterruptedException {
			spin(ns);
			pause(rest);
		}

		static void busyQuarter(long ns, long rest) throws InterruptedException {
			spin(ns);
			pause(rest);
		}

		static void pause(long ns) throws InterruptedException {
			if (ns > 0)
				Thread.sleep(ns / 1_000_000L, (int) (ns % 1_000_000L));
		}

		@Override
		public void run() {
			final long slot = 20_000_000L; // 20 ms: busy duty% of it, sleep the rest
			try {
				tid = Files.readSymbolicLink(Paths.get("/proc/thread-self")).getFileName()
						.toString();
				while (!Files.exists(trigger))
					Thread.sleep(10);
				long c0 = MX.getCurrentThreadCpuTime();
				long end = System.nanoTime() + (long) (seconds * 1e9);
				while (System.nanoTime() < end) {
					long busy = slot * duty / 100;
					if (duty == 100)
						busyFull(busy, slot - busy);
					else if (duty == 50)
						busyHalf(busy, slot - busy);
					else
						busyQuarter(busy, slot - busy);
				}
				cpuNs = MX.getCurrentThreadCpuTime() - c0;
			} catch (Exception e) {
				throw new RuntimeException(e);
			}
		}
	}

	public static void main(String[] args) throws Exception {
		trigger = Paths.get(args[0]);
		seconds = Double.parseDouble(args[1]);
		Worker[] w = { new Worker("full", 100, "busyFull"), new Worker("half", 50, "busyHalf"),
				new Worker("quarter", 25, "busyQuarter") };
		for (Worker x : w)
			x.start();
		System.out.println("ready");
		for (Worker x : w)
			x.join();
		for (Worker x : w)
			System.out.println(x.tid + " " + x.method + " " + x.cpuNs);
		System.out.println("done");
	}
}

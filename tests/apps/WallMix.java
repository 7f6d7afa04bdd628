// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// WallMix.java SECONDS: threads that split their time in known fractions, for the wall-clock
// view. "spinner" runs all the time; "sleeper" sleeps all the time (Thread.sleep, 5 ms at a
// time); "mixed" spins 30% and sleeps 70% of each 10 ms; "waiter" waits on a monitor nobody
// notifies (Object.wait, 50 ms timeouts); "blinker" sleeps 50 us at a time, blocks far
// shorter than the default --min-block. Each thread measures its own CPU time, wall time
// and the wall time it spent inside park/wait calls, and prints "name cpu_ns wall_ns
// blocked_ns" at the end, then "done". Prints "ready" first.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.locks.LockSupport;

public class WallMix {
	static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
	static volatile long sink;
	static volatile boolean running = true;

	static void spinUntil(long endNanos) {
		while (System.nanoTime() < endNanos)
			for (int i = 0; i < 1000; i++)
				sink += i;
	}

	// wall time this thread spent blocked in park/wait
	static final ThreadLocal<long[]> BLOCKED = ThreadLocal.withInitial(() -> new long[1]);

	static void park(long ns) {
		long t0 = System.nanoTime();
		LockSupport.parkNanos(ns);
		BLOCKED.get()[0] += System.nanoTime() - t0;
	}

	static Thread worker(String name, Runnable body, StringBuilder out) {
		return new Thread(() -> {
			long c0 = MX.getCurrentThreadCpuTime(), w0 = System.nanoTime();
			body.run();
			long c1 = MX.getCurrentThreadCpuTime(), w1 = System.nanoTime();
			synchronized (out) {
				out.append(name).append(' ').append(c1 - c0).append(' ').append(w1 - w0)
						.append(' ').append(BLOCKED.get()[0]).append('\n');
			}
		}, name);
	}

	public static void main(String[] args) throws Exception {
		final long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
		final Object lock = new Object();
		StringBuilder out = new StringBuilder();
		Thread[] t = {
			worker("spinner", () -> spinUntil(end), out),
			worker("sleeper", () -> {
				while (System.nanoTime() < end)
					park(5_000_000L);
			}, out),
			worker("mixed", () -> {
				while (System.nanoTime() < end) {
					spinUntil(System.nanoTime() + 3_000_000L);
					park(7_000_000L);
				}
			}, out),
			worker("waiter", () -> {
				synchronized (lock) {
					while (System.nanoTime() < end) {
						long t0 = System.nanoTime();
						try {
							lock.wait(50);
						} catch (InterruptedException e) {
							return;
						}
						BLOCKED.get()[0] += System.nanoTime() - t0;
					}
				}
			}, out),
			worker("blinker", () -> {
				while (System.nanoTime() < end)
					park(50_000L);
			}, out),
		};
		for (Thread x : t)
			x.start();
		System.out.println("ready");
		for (Thread x : t)
			x.join();
		System.out.print(out);
		System.out.println("done");
	}
}

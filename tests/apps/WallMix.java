// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// WallMix.java SECONDS: threads that split their time in known fractions, for the wall-clock
// view. "spinner" runs all the time; "sleeper" sleeps all the time (Thread.sleep, 5 ms at a
// time); "mixed" spins 30% and sleeps 70% of each 10 ms; "waiter" waits on a monitor nobody
// notifies (Object.wait, 50 ms timeouts); "blinker" sleeps 50 us at a time, blocks far
// shorter than the default --min-block. Each thread measures its own CPU time, wall time
// and the wall time it spent inside park/wait calls, from when the file MARK.start appears
// until MARK.stop appears (checked every 20 ms; without MARK: its whole life), and prints
// "name cpu_ns wall_ns blocked_ns" at the end, then "done". Prints "ready" first. The threads
// end after SECONDS, or once MARK.end appears after MARK.stop (the profiler is done).
// Usage: WallMix SECONDS [MARK]
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.locks.LockSupport;

public class WallMix {
	static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
	static volatile long sink;
	static volatile boolean running = true;

	static void spinUntil(long endNanos) {
		Meter m = METER.get();
		while (running && System.nanoTime() < endNanos) {
			m.check();
			for (int i = 0; i < 1000; i++)
				sink += i;
		}
	}

	static String mark;

	// per thread: the window's CPU and wall time, blocked time within it, and its state
	static final class Meter {
		long c0, w0, c1, w1, blocked, nextCheck;
		int state; // 0: before the window, 1: in it, 2: after it

		boolean measuring() {
			return state == 1;
		}

		// at most every 20 ms: has the window begun or ended, is the run over?
		void check() {
			long now = System.nanoTime();
			if (now < nextCheck)
				return;
			nextCheck = now + 20_000_000L;
			if (state == 0 && (mark == null || new java.io.File(mark + ".start").exists())) {
				c0 = MX.getCurrentThreadCpuTime();
				w0 = System.nanoTime();
				state = 1;
			} else if (state == 1 && mark != null && new java.io.File(mark + ".stop").exists())
				stop();
			else if (state == 2 && mark != null && new java.io.File(mark + ".end").exists())
				running = false;
		}

		void stop() {
			if (state != 1)
				return;
			c1 = MX.getCurrentThreadCpuTime();
			w1 = System.nanoTime();
			state = 2;
		}
	}

	static final ThreadLocal<Meter> METER = ThreadLocal.withInitial(Meter::new);

	static void park(long ns) {
		Meter m = METER.get();
		m.check();
		long t0 = System.nanoTime();
		LockSupport.parkNanos(ns);
		if (m.measuring())
			m.blocked += System.nanoTime() - t0;
	}

	static Thread worker(String name, Runnable body, StringBuilder out) {
		return new Thread(() -> {
			Meter m = METER.get();
			m.check();
			body.run();
			m.stop();
			synchronized (out) {
				out.append(name).append(' ').append(m.c1 - m.c0).append(' ').append(m.w1 - m.w0)
						.append(' ').append(m.blocked).append('\n');
			}
		}, name);
	}

	public static void main(String[] args) throws Exception {
		final long end = System.nanoTime() + (long) (Double.parseDouble(args[0]) * 1e9);
		mark = args.length > 1 ? args[1] : null;
		final Object lock = new Object();
		StringBuilder out = new StringBuilder();
		Thread[] t = {
			worker("spinner", () -> spinUntil(end), out),
			worker("sleeper", () -> {
				while (running && System.nanoTime() < end)
					park(5_000_000L);
			}, out),
			worker("mixed", () -> {
				while (running && System.nanoTime() < end) {
					spinUntil(System.nanoTime() + 3_000_000L);
					park(7_000_000L);
				}
			}, out),
			worker("waiter", () -> {
				synchronized (lock) {
					while (running && System.nanoTime() < end) {
						Meter m = METER.get();
						m.check();
						long t0 = System.nanoTime();
						try {
							lock.wait(50);
						} catch (InterruptedException e) {
							return;
						}
						if (m.measuring())
							m.blocked += System.nanoTime() - t0;
					}
				}
			}, out),
			worker("blinker", () -> {
				while (running && System.nanoTime() < end)
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

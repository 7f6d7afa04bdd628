// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EventWork.java: the workloads of bench/events.sh. "alloc": 2 threads allocate short-lived
// objects of a few sizes (plus a slowly renewed kept set) as fast as they can; "lock": 4 threads
// take one monitor for short critical sections. Works WARM ms unmeasured (JIT, attach), then
// SECS s measured: prints "ops N cpu_ns C wall_ns W" of that window (C: the whole process's
// CPU time, every thread's: the workers', GC's, the JIT's and any agent's).
public class EventWork {
	static final Object lock = new Object();
	static final Object[] kept = new Object[16384];
	static volatile Object sink;
	static long shared;
	static final java.util.concurrent.atomic.AtomicLongArray done =
		new java.util.concurrent.atomic.AtomicLongArray(8);

	static void alloc(long end, int id) {
		long ops = 0;
		int k = 0;
		while (System.nanoTime() < end) {
			for (int i = 0; i < 1000; i++) {
				sink = new long[4 + (i & 15)];
				if ((i & 63) == 0)
					kept[k++ & (kept.length - 1)] = new byte[256];
			}
			done.lazySet(id, ++ops);
		}
	}

	static void lock(long end, int id) {
		long ops = 0;
		while (System.nanoTime() < end) {
			for (int i = 0; i < 100; i++) {
				synchronized (lock) {
					for (int j = 0; j < 200; j++)
						shared += j ^ shared;
				}
			}
			done.lazySet(id, ++ops);
		}
	}

	public static void main(String[] args) throws Exception {
		String mode = args[0];
		long warm = Long.parseLong(args[1]) * 1000000L;
		long t0 = System.nanoTime();
		long end = t0 + warm + Long.parseLong(args[2]) * 1000000000L;
		int n = mode.equals("lock") ? 4 : 2;
		Thread[] t = new Thread[n];
		for (int i = 0; i < n; i++) {
			int id = i;
			t[i] = new Thread(() -> {
				if (mode.equals("lock"))
					lock(end, id);
				else
					alloc(end, id);
			});
			t[i].start();
		}
		// the measured window starts after the warm-up (JIT done, the profiler attached)
		Thread.sleep(warm / 1000000L);
		com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
			java.lang.management.ManagementFactory.getOperatingSystemMXBean();
		long cpu0 = os.getProcessCpuTime(), w0 = System.nanoTime(), ops0 = sum(n);
		for (int i = 0; i < n; i++)
			t[i].join();
		long cpu1 = os.getProcessCpuTime(), w1 = System.nanoTime(), ops1 = sum(n);
		System.out.println("ops " + (ops1 - ops0) + " cpu_ns " + (cpu1 - cpu0) + " wall_ns " + (w1 - w0));
	}

	static long sum(int n) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += done.get(i);
		return s;
	}
}

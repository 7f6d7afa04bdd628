// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EvHot.java: three threads take turns on one monitor in a hot (JIT-compiled) loop, each
// holding it ~2 ms; prints the time they spent blocked entering it (whole run), as they measure it.
public class EvHot {
	static final Object LOCK = new Object();
	static long spins;
	static final java.util.concurrent.atomic.AtomicLong waited = new java.util.concurrent.atomic.AtomicLong();

	static void work() {
		long t0 = System.nanoTime();
		synchronized (LOCK) {
			long in = System.nanoTime();
			waited.addAndGet(in - t0);
			while (System.nanoTime() < in + 2000000)
				spins++;
		}
	}

	public static void main(String[] args) throws Exception {
		long warm = Long.parseLong(args[0]) * 1000000L, run = Long.parseLong(args[1]) * 1000000L;
		long start = System.nanoTime();
		Runnable r = () -> {
			while (System.nanoTime() < start + warm)
				work();
			while (System.nanoTime() < start + warm + run)
				work();
		};
		Thread[] t = new Thread[3];
		for (int i = 0; i < t.length; i++)
			(t[i] = new Thread(r, "hot-" + i)).start();
		System.out.println("ready");
		System.out.flush();
		for (Thread x : t)
			x.join();
		System.out.println("waited_ns " + waited.get());
	}
}

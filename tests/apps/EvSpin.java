// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EvSpin.java: four threads take one monitor for short critical sections in a hot loop, so
// waiters spin for it in the VM (ObjectMonitor) more than they park. Runs WARM + RUN ms.
public class EvSpin {
	static final Object LOCK = new Object();
	static long shared;

	static void work(long end) {
		while (System.nanoTime() < end) {
			for (int i = 0; i < 100; i++) {
				synchronized (LOCK) {
					for (int j = 0; j < 200; j++)
						shared += j ^ shared;
				}
			}
		}
	}

	public static void main(String[] args) throws Exception {
		long end = System.nanoTime() + (Long.parseLong(args[0]) + Long.parseLong(args[1])) * 1000000L;
		Thread[] t = new Thread[4];
		for (int i = 0; i < t.length; i++)
			(t[i] = new Thread(() -> work(end), "spin-" + i)).start();
		System.out.println("ready");
		for (Thread x : t)
			x.join();
	}
}

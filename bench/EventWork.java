// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EventWork.java: the workloads of bench/events.sh. "alloc": 2 threads allocate short-lived
// objects of a few sizes (plus a slowly renewed kept set) as fast as they can; "lock": 4 threads
// take one monitor for short critical sections. Waits WARM ms, works SECS s, prints "ops N".
public class EventWork {
	static final Object lock = new Object();
	static final Object[] kept = new Object[16384];
	static volatile Object sink;
	static long shared;

	static long alloc(long end) {
		long ops = 0;
		int k = 0;
		while (System.nanoTime() < end) {
			for (int i = 0; i < 1000; i++) {
				sink = new long[4 + (i & 15)];
				if ((i & 63) == 0)
					kept[k++ & (kept.length - 1)] = new byte[256];
			}
			ops++;
		}
		return ops;
	}

	static long lock(long end) {
		long ops = 0;
		while (System.nanoTime() < end) {
			for (int i = 0; i < 100; i++) {
				synchronized (lock) {
					for (int j = 0; j < 200; j++)
						shared += j ^ shared;
				}
			}
			ops++;
		}
		return ops;
	}

	public static void main(String[] args) throws Exception {
		String mode = args[0];
		Thread.sleep(Long.parseLong(args[1]));
		long end = System.nanoTime() + Long.parseLong(args[2]) * 1000000000L;
		int n = mode.equals("lock") ? 4 : 2;
		long[] ops = new long[n];
		Thread[] t = new Thread[n];
		for (int i = 0; i < n; i++) {
			int id = i;
			t[i] = new Thread(() -> ops[id] = mode.equals("lock") ? lock(end) : alloc(end));
			t[i].start();
		}
		long sum = 0;
		for (int i = 0; i < n; i++) {
			t[i].join();
			sum += ops[i];
		}
		System.out.println("ops " + sum);
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// ThreadChurn.java: thousands of short-lived threads, many starting while others run, each
// checking its own result; for the agent's deadlock stress and fault tests.
//
// java ThreadChurn SECONDS [CONCURRENT]: rounds of CONCURRENT (default 32) threads, each
// doing a little hot work and a little allocation, until SECONDS have passed (a round
// started by then still finishes). Prints "threadchurn ok threads=N rounds=R" only if every
// thread computed the expected value; else "threadchurn WRONG ..." and exit 1.

import java.util.concurrent.atomic.AtomicLong;

public class ThreadChurn {
	static final int N = 20000;
	static final AtomicLong wrong = new AtomicLong();

	// sum of (i * i) % 7919 for i < n: the hot frame the profile must show
	static long work(int n, long seed) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += ((long) i * i + seed) % 7919;
		return s;
	}

	static long expected(int n, long seed) {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += ((long) i * i + seed) % 7919;
		return s;
	}

	public static void main(String[] args) throws Exception {
		long secs = Long.parseLong(args[0]);
		int conc = args.length > 1 ? Integer.parseInt(args[1]) : 32;
		long want[] = new long[conc];
		for (int k = 0; k < conc; k++)
			want[k] = expected(N, k);
		long end = System.nanoTime() + secs * 1_000_000_000L;
		long threads = 0, rounds = 0;
		while (System.nanoTime() < end) {
			Thread[] ts = new Thread[conc];
			for (int k = 0; k < conc; k++) {
				final int seed = k;
				final long w = want[k];
				ts[k] = new Thread(() -> {
					StringBuilder sb = new StringBuilder();
					long s = work(N, seed);
					sb.append(s);
					if (s != w || !sb.toString().equals(Long.toString(w)))
						wrong.incrementAndGet();
				}, "churn-" + (threads + k));
				ts[k].start();
			}
			for (Thread t : ts)
				t.join();
			threads += conc;
			rounds++;
		}
		if (wrong.get() != 0) {
			System.out.println("threadchurn WRONG " + wrong.get() + " of " + threads);
			System.exit(1);
		}
		System.out.println("threadchurn ok threads=" + threads + " rounds=" + rounds);
	}
}

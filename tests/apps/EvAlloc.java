// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EvAlloc.java: known allocations for jvmevents.bats: per round, dying() allocates 3 MiB of
// 64-byte long[6] that die at once, keeping() 1 MiB of 1024-byte byte[1008] that stay live
// (up to KEEP_MAX); collects its garbage at the end; prints the bytes each allocated.
public class EvAlloc {
	static final int KEEP_MAX = 64 * 1024; // 64 MiB kept at most
	static final Object[] kept = new Object[KEEP_MAX];
	static int keptAt;
	static volatile Object last; // makes every dying array escape (no scalar replacement)

	static void dying(int n) {
		for (int i = 0; i < n; i++)
			last = new long[6];
	}

	static void keeping(int n) {
		for (int i = 0; i < n; i++) {
			kept[keptAt] = new byte[1008];
			keptAt = (keptAt + 1) % KEEP_MAX;
		}
	}

	public static void main(String[] args) throws Exception {
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(Long.parseLong(args[0])); // time for jprof to attach
		long end = System.nanoTime() + Long.parseLong(args[1]) * 1000000L, rounds = 0;
		while (System.nanoTime() < end) {
			dying(48 * 1024);
			keeping(1024);
			rounds++;
			Thread.sleep(2);
		}
		// what is unreachable goes now, so "live at the end" is what the program keeps;
		// the frees reach the agent from the JVM's service thread shortly after
		last = null;
		System.gc();
		Thread.sleep(1000);
		System.out.println("rounds " + rounds + " dying_bytes " + rounds * 48 * 1024 * 64 +
				   " kept_bytes " + rounds * 1024 * 1024);
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EvContend.java: known monitor contention for jvmevents.bats: a holder keeps a EvContend$Gate
// monitor HOLD_MS while a waiter blocks on it; prints the waiter's own measure of its waits.
public class EvContend {
	static final class Gate {
	}

	static final Gate GATE = new Gate();

	static void holdGate(long ms) {
		synchronized (GATE) {
			try {
				Thread.sleep(ms);
			} catch (InterruptedException e) {
				Thread.currentThread().interrupt();
			}
		}
	}

	static long blockedOnGate() {
		long t0 = System.nanoTime();
		synchronized (GATE) {
			return System.nanoTime() - t0;
		}
	}

	public static void main(String[] args) throws Exception {
		int rounds = Integer.parseInt(args[0]);
		long holdMs = Long.parseLong(args[1]);
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(Long.parseLong(args[2])); // time for jprof to attach
		long waited = 0;
		for (int i = 0; i < rounds; i++) {
			Thread h = new Thread(() -> holdGate(holdMs), "holder");
			h.start();
			while (!Thread.holdsLock(GATE) && h.getState() != Thread.State.TIMED_WAITING)
				Thread.onSpinWait();
			long[] w = new long[1];
			Thread t = new Thread(() -> w[0] = blockedOnGate(), "waiter");
			t.start();
			t.join();
			h.join();
			waited += w[0];
		}
		System.out.println("waited_ns " + waited);
	}
}

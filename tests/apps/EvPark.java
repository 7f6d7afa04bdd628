// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EvPark.java: known java.util.concurrent contention for jvmevents.bats: a holder keeps a
// ReentrantLock HOLD_MS while a waiter parks in lock(); prints the waiter's own measure.
import java.util.concurrent.locks.ReentrantLock;

public class EvPark {
	static final ReentrantLock LOCK = new ReentrantLock();

	static void holdLock(long ms) {
		LOCK.lock();
		try {
			Thread.sleep(ms);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		} finally {
			LOCK.unlock();
		}
	}

	static long parkedOnLock() {
		long t0 = System.nanoTime();
		LOCK.lock();
		long w = System.nanoTime() - t0;
		LOCK.unlock();
		return w;
	}

	public static void main(String[] args) throws Exception {
		int rounds = Integer.parseInt(args[0]);
		long holdMs = Long.parseLong(args[1]);
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(Long.parseLong(args[2])); // time for jprof to attach
		long waited = 0;
		for (int i = 0; i < rounds; i++) {
			Thread h = new Thread(() -> holdLock(holdMs), "holder");
			h.start();
			while (!LOCK.isLocked())
				Thread.onSpinWait();
			long[] w = new long[1];
			Thread t = new Thread(() -> w[0] = parkedOnLock(), "waiter");
			t.start();
			t.join();
			h.join();
			waited += w[0];
		}
		System.out.println("waited_ns " + waited);
	}
}

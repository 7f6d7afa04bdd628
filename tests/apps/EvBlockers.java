// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EvBlockers.java: parks of known blockers for jvmevents.bats. Each round a waiter parks
// HOLD_MS three times: in ReentrantLock.lock() while a holder keeps the lock (blocker: the
// lock's NonfairSync), in ArrayBlockingQueue.take() until a producer puts (blocker: the
// queue's notEmpty ConditionObject), and in LockSupport.park() with no blocker until it is
// unparked. Prints the waiter's own measure of each kind.
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

public class EvBlockers {
	static final ReentrantLock LOCK = new ReentrantLock();
	static final ArrayBlockingQueue<Integer> QUEUE = new ArrayBlockingQueue<>(1);
	static volatile boolean released;

	static long waitLock() {
		long t0 = System.nanoTime();
		LOCK.lock();
		long w = System.nanoTime() - t0;
		LOCK.unlock();
		return w;
	}

	static long waitQueue() throws InterruptedException {
		long t0 = System.nanoTime();
		QUEUE.take();
		return System.nanoTime() - t0;
	}

	static long waitBare() {
		long t0 = System.nanoTime();
		while (!released)
			LockSupport.park();
		return System.nanoTime() - t0;
	}

	static void sleep(long ms) {
		try {
			Thread.sleep(ms);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
	}

	// runs body in a thread named name, and what starts the wait's end after holdMs
	static long round(String name, java.util.concurrent.Callable<Long> body, Runnable end,
			  long holdMs) throws Exception {
		long[] w = new long[1];
		Thread t = new Thread(() -> {
			try {
				w[0] = body.call();
			} catch (Exception e) {
				throw new RuntimeException(e);
			}
		}, name);
		t.start();
		sleep(holdMs);
		end.run();
		t.join();
		return w[0];
	}

	public static void main(String[] args) throws Exception {
		int rounds = Integer.parseInt(args[0]);
		long holdMs = Long.parseLong(args[1]);
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(Long.parseLong(args[2])); // time for jprof to attach
		long lock = 0, queue = 0, bare = 0;
		for (int i = 0; i < rounds; i++) {
			LOCK.lock();
			lock += round("lock-waiter", EvBlockers::waitLock, LOCK::unlock, holdMs);
			final int k = i;
			queue += round("queue-taker", EvBlockers::waitQueue, () -> QUEUE.offer(k),
				       holdMs);
			released = false;
			Thread[] bt = new Thread[1];
			bare += round("bare-parker", () -> {
				bt[0] = Thread.currentThread();
				return waitBare();
			}, () -> {
				released = true;
				LockSupport.unpark(bt[0]);
			}, holdMs);
		}
		System.out.println("lock_ns " + lock);
		System.out.println("queue_ns " + queue);
		System.out.println("bare_ns " + bare);
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// IdlePool.java: for idle.bats: a fixed pool whose 4 workers wait for a task most of the time
// (a no-op every 20 ms), beside 3 threads contending for a monitor (held 5 ms) and then a
// ReentrantLock (held 10 ms), with a sleep inside. The lock is held longer so that it is
// where the threads queue: with both held 5 ms they fell into step behind the monitor, one
// in each, and a 4-s recording once saw no ReentrantLock park of 100 us or more (2 threads
// then; with 3, 1 rehearsal in 4). Prints "ready", runs args[0] seconds.
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

public class IdlePool {
	static final Object MONITOR = new Object();
	static final ReentrantLock LOCK = new ReentrantLock();

	static void hold(long ms) {
		try {
			Thread.sleep(ms);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
	}

	static void onMonitor() {
		synchronized (MONITOR) {
			hold(5);
		}
	}

	static void onLock() {
		LOCK.lock();
		try {
			hold(10);
		} finally {
			LOCK.unlock();
		}
	}

	public static void main(String[] args) throws Exception {
		long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
		AtomicInteger n = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(4,
				r -> new Thread(r, "idle-worker-" + n.incrementAndGet()));
		for (int i = 0; i < 3; i++) {
			Thread t = new Thread(() -> {
				while (System.nanoTime() < end) {
					onMonitor();
					onLock();
				}
			}, "contender-" + i);
			t.setDaemon(true);
			t.start();
		}
		System.out.println("ready");
		System.out.flush();
		while (System.nanoTime() < end) {
			pool.execute(() -> {
			});
			Thread.sleep(20);
		}
		pool.shutdown();
		pool.awaitTermination(5, TimeUnit.SECONDS);
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// EvBlocked.java HOLD_MS: thread "holder" takes a monitor and sleeps HOLD_MS inside it;
// thread "waiter" meanwhile blocks entering it, in EvBlocked.waitHere. Prints "ready" once
// the waiter is BLOCKED (so an agent attached after that finds it already blocked), then
// "entered" when it gets the monitor, then "done".
public class EvBlocked {
	static final Object LOCK = new Object();

	static void waitHere() {
		synchronized (LOCK) {
			System.out.println("entered");
			System.out.flush();
		}
	}

	public static void main(String[] args) throws Exception {
		final long hold = Long.parseLong(args[0]);
		final java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
		Thread holder = new Thread(() -> {
			synchronized (LOCK) {
				held.countDown();
				try {
					Thread.sleep(hold);
				} catch (InterruptedException e) {
				}
			}
		}, "holder");
		holder.start();
		held.await();
		Thread waiter = new Thread(EvBlocked::waitHere, "waiter");
		waiter.start();
		while (waiter.getState() != Thread.State.BLOCKED)
			Thread.sleep(5);
		System.out.println("ready");
		System.out.flush();
		holder.join();
		waiter.join();
		System.out.println("done");
	}
}

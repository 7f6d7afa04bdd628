// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// AgentOffLoad.java: what makes every JVMTI event of the agent fire, all the time, for
// tests/e2e/agent_off.bats: two threads allocate (short-lived and kept objects, so sampled
// objects are also freed) and three threads fight over one monitor held briefly.
// Usage: AgentOffLoad SECONDS; prints "ready", runs SECONDS, prints "done ROUNDS".
public final class AgentOffLoad {
	static final Object GATE = new Object();
	static final int KEEP = 16 * 1024;
	static volatile Object sink;
	static volatile boolean stop;
	static long shared;

	static void allocate() {
		Object[] kept = new Object[KEEP];
		int at = 0;
		while (!stop) {
			for (int i = 0; i < 4096; i++)
				sink = new long[8];
			kept[at] = new byte[1024];
			at = (at + 1) % KEEP;
			try {
				Thread.sleep(1);
			} catch (InterruptedException e) {
				return;
			}
		}
	}

	static void contend() {
		while (!stop) {
			synchronized (GATE) {
				long t = System.nanoTime();
				while (System.nanoTime() - t < 200_000)
					shared++;
			}
		}
	}

	public static void main(String[] args) throws Exception {
		long secs = Long.parseLong(args[0]);
		Thread[] ts = new Thread[5];
		for (int i = 0; i < ts.length; i++) {
			ts[i] = new Thread(i < 2 ? AgentOffLoad::allocate : AgentOffLoad::contend,
					   (i < 2 ? "alloc-" : "contend-") + i);
			ts[i].setDaemon(true);
			ts[i].start();
		}
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(secs * 1000);
		stop = true;
		for (Thread t : ts)
			t.join();
		System.out.println("done " + shared);
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Accuracy.java: accuracy ground truth (bench/suite.py, tests/e2e/accuracy.bats): threads at 100/50/25% duty measure their own CPU.
//
// Usage: java Accuracy [--mixed] SECS [TRIGGER]. Prints "ready", waits for a line on stdin
// (or for the file TRIGGER to exist: the profiler is up), runs SECS seconds, then prints one
// line per thread and per (thread, method):
//   thread NAME CPU_NS      method NAME METHOD|other CPU_NS
// By default 3 threads ("dutyN") at 100/50/25% duty: each busy slice of a 10 ms period runs
// 2/3 of its wall time in hotA and 1/3 in hotB. --mixed: 6 threads of different kinds (pure
// CPU in random slices, allocation, system calls, two threads contending for a monitor,
// irregular bursts and sleeps), 100-400% of CPU asked of 2 cores. The CPU of each part is
// the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID, via ThreadMXBean) read around it, so
// every split is measured, not assumed; "other" is what the thread spent outside them.
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.SplittableRandom;

public class Accuracy {
	static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
	static volatile long sink;

	// spins until the wall clock reaches `until`; the loop body is the work
	static long hotA(long until, long x) {
		while (System.nanoTime() < until)
			for (int i = 0; i < 200; i++)
				x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long hotB(long until, long x) {
		while (System.nanoTime() < until)
			for (int i = 0; i < 200; i++)
				x ^= (x << 13) ^ (x >>> 7) ^ (x << 17);
		return x;
	}

	static final class Worker extends Thread {
		final int duty;
		final long end;
		long cpu, cpuA, cpuB;

		Worker(int duty, long end) {
			super("duty" + duty);
			this.duty = duty;
			this.end = end;
		}

		@Override
		public void run() {
			final long period = 10_000_000L, busy = period * duty / 100;
			long c0 = MX.getCurrentThreadCpuTime(), x = duty;
			long next = System.nanoTime();
			while (next < end) {
				long a0 = MX.getCurrentThreadCpuTime();
				x = hotA(next + busy * 2 / 3, x);
				long a1 = MX.getCurrentThreadCpuTime();
				x = hotB(next + busy, x);
				long b1 = MX.getCurrentThreadCpuTime();
				cpuA += a1 - a0;
				cpuB += b1 - a1;
				next += period;
				long rest = next - System.nanoTime();
				if (rest > 0) {
					try {
						Thread.sleep(rest / 1_000_000, (int)(rest % 1_000_000));
					} catch (InterruptedException e) {
						return;
					}
				}
			}
			sink = x;
			cpu = MX.getCurrentThreadCpuTime() - c0;
		}
	}

	// the mixed workload's parts; each spins (or works) until the wall clock reaches `until`
	static final Object[] kept = new Object[4096];

	static long allocWork(long until, long x) {
		int i = 0;
		while (System.nanoTime() < until) {
			for (int k = 0; k < 32; k++) {
				byte[] b = new byte[64 + (int)((x >>> 40) & 4095)];
				b[0] = (byte)x;
				x = x * 6364136223846793005L + b.length;
				kept[i++ & 4095] = b; // some live, most garbage: the GC has work
			}
		}
		return x;
	}

	static long ioWork(long until, long x, FileOutputStream out, FileInputStream in,
			   byte[] buf) throws IOException {
		while (System.nanoTime() < until) {
			out.write(buf, 0, 512); // /dev/null: a write system call's cost
			x += in.read(buf, 0, 4096); // /dev/zero: a read's, with its copy
		}
		return x;
	}

	// the mixed workload's measured parts, by index
	static final String[] PARTS = { "hotA", "hotB", "allocWork", "ioWork" };
	static final int HOT_A = 0, HOT_B = 1, ALLOC = 2, IO = 3;

	// one mixed worker: runs `body` until `end`, then records its CPU clock
	abstract static class Mixed extends Thread {
		final long end;
		final long[] parts = new long[PARTS.length];
		final SplittableRandom rnd;
		long cpu, x;
		// ioWork's: /dev/null and /dev/zero (mixio opens them, no other thread does IO)
		FileOutputStream out;
		FileInputStream in;
		final byte[] buf = new byte[4096];

		Mixed(String name, long end, long seed) {
			super(name);
			this.end = end;
			this.rnd = new SplittableRandom(seed);
		}

		// runs part P (its CPU clock added to the part) until `until`. Plain fields, no
		// boxing or map: a call C2 inlines late (Long.valueOf, Map.merge) leaves its
		// scope on the nodes it creates after parsing, and the inlined loops' pcs then
		// name the caller in the JVM's own debug info (decisions.md)
		void part(int p, long until) throws IOException {
			long c0 = MX.getCurrentThreadCpuTime();
			if (p == HOT_A)
				x = hotA(until, x);
			else if (p == HOT_B)
				x = hotB(until, x);
			else if (p == ALLOC)
				x = allocWork(until, x);
			else
				x = ioWork(until, x, out, in, buf);
			parts[p] += MX.getCurrentThreadCpuTime() - c0;
		}

		void nap(long ns) {
			try {
				Thread.sleep(ns / 1_000_000, (int)(ns % 1_000_000));
			} catch (InterruptedException e) {
				Thread.currentThread().interrupt();
			}
		}

		abstract void body() throws IOException;

		@Override
		public void run() {
			long c0 = MX.getCurrentThreadCpuTime();
			try {
				body();
			} catch (IOException e) {
				throw new RuntimeException(e);
			}
			sink = x;
			cpu = MX.getCurrentThreadCpuTime() - c0;
		}
	}

	static final Object MONITOR = new Object();

	static Mixed[] mixed(long end) {
		return new Mixed[] {
			// all CPU, random slices of 0.2-3 ms, each hotA or hotB at random
			new Mixed("mixcpu", end, 1) {
				void body() throws IOException {
					for (long t; (t = System.nanoTime()) < end;)
						part(rnd.nextBoolean() ? HOT_A : HOT_B,
						     t + rnd.nextLong(200_000, 3_000_000));
				}
			},
			// allocation (TLAB refills, GC), then a little CPU, then a nap: about 70%
			new Mixed("mixalloc", end, 2) {
				void body() throws IOException {
					for (long t; (t = System.nanoTime()) < end;) {
						part(ALLOC, t + 4_000_000);
						part(HOT_B, System.nanoTime() + 1_000_000);
						nap(2_000_000);
					}
				}
			},
			// system calls, then CPU, then a nap of 0-4 ms
			new Mixed("mixio", end, 3) {
				void body() throws IOException {
					try (FileOutputStream o = new FileOutputStream("/dev/null");
					     FileInputStream i = new FileInputStream("/dev/zero")) {
						out = o;
						in = i;
						for (long t; (t = System.nanoTime()) < end;) {
							part(IO, t + 2_000_000);
							part(HOT_A, System.nanoTime() + 1_000_000);
							nap(rnd.nextLong(1, 4_000_000));
						}
					}
				}
			},
			// two threads: hotA holding the monitor 1 ms, hotB outside it 0.5 ms; the
			// waits (spinning, then blocked) are "other"
			new Mixed("mixlock1", end, 4) {
				void body() throws IOException {
					lockLoop(this);
				}
			},
			new Mixed("mixlock2", end, 5) {
				void body() throws IOException {
					lockLoop(this);
				}
			},
			// irregular bursts: 0.1-5 ms of hotA or hotB, then a nap of 0.1-10 ms
			new Mixed("mixburst", end, 6) {
				void body() throws IOException {
					for (long t; (t = System.nanoTime()) < end;) {
						part(rnd.nextInt(3) == 0 ? HOT_B : HOT_A,
						     t + rnd.nextLong(100_000, 5_000_000));
						nap(rnd.nextLong(100_000, 10_000_000));
					}
				}
			},
		};
	}

	static void lockLoop(Mixed m) throws IOException {
		while (System.nanoTime() < m.end) {
			synchronized (MONITOR) {
				m.part(HOT_A, System.nanoTime() + 1_000_000);
			}
			m.part(HOT_B, System.nanoTime() + 500_000);
		}
	}

	public static void main(String[] args) throws Exception {
		boolean mix = args.length > 0 && args[0].equals("--mixed");
		int a = mix ? 1 : 0;
		int secs = Integer.parseInt(args[a]);
		System.out.println("ready");
		System.out.flush();
		if (args.length > a + 1) {
			while (!Files.exists(Paths.get(args[a + 1])))
				Thread.sleep(10);
		} else {
			new BufferedReader(new InputStreamReader(System.in)).readLine();
		}
		long end = System.nanoTime() + secs * 1_000_000_000L;
		if (mix) {
			Mixed[] ms = mixed(end);
			for (Mixed m : ms)
				m.start();
			for (Mixed m : ms)
				m.join();
			for (Mixed m : ms) {
				long sum = 0;
				System.out.println("thread " + m.getName() + " " + m.cpu);
				for (int p = 0; p < PARTS.length; p++) {
					if (m.parts[p] == 0)
						continue;
					System.out.println("method " + m.getName() + " " + PARTS[p] +
							   " " + m.parts[p]);
					sum += m.parts[p];
				}
				System.out.println("method " + m.getName() + " other " +
						   Math.max(0, m.cpu - sum));
			}
			return;
		}
		Worker[] ws = { new Worker(100, end), new Worker(50, end), new Worker(25, end) };
		for (Worker w : ws)
			w.start();
		for (Worker w : ws)
			w.join();
		for (Worker w : ws) {
			System.out.println("thread " + w.getName() + " " + w.cpu);
			System.out.println("method " + w.getName() + " hotA " + w.cpuA);
			System.out.println("method " + w.getName() + " hotB " + w.cpuB);
			System.out.println("method " + w.getName() + " other " +
					   Math.max(0, w.cpu - w.cpuA - w.cpuB));
		}
	}
}

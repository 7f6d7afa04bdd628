// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// H2Bench.java: a real application's throughput: JDBC transactions on H2 (Debian libh2-java).
//
// Usage: java -cp h2.jar:DIR H2Bench THREADS SECS [KEEP [WARMUP_SECS [own]]]. Creates an in-memory
// H2 database with an index; its THREADS worker threads warm up together for WARMUP_SECS
// (default 3) seconds; prints "ready", waits for a line on stdin (the profiler is up), then
// every worker runs transactions (insert a row, query a range by the index, update one row) on
// its own connection for SECS seconds; prints "ops_per_s=N" (transactions per second) and
// "ops_per_cpu_s=N" (transactions per second of the workers' own CPU time: a profiler's
// signal handlers and interrupts in those threads count, other processes' share of the cores
// does not, so it is the quieter figure on a shared host). KEEP > 0: each transaction also
// deletes the thread's row of KEEP transactions before, so the table stays at THREADS x KEEP
// rows and every round does the same work on the same heap (without it the in-memory table
// grows until the heap is full). "own": each worker has a table of its own (with one table
// the workers convoy on its lock, and the convoy's length makes throughput bimodal from one
// JVM to the next). SECS 0: see serve().
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

public class H2Bench {
	static final String URL = "jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1";
	static volatile long until;
	static long keep;
	static boolean ownTables;
	static final AtomicLong ops = new AtomicLong();
	static final AtomicLong cpuNs = new AtomicLong();
	static final ThreadMXBean mx = ManagementFactory.getThreadMXBean();

	static long work(Connection c, int id, long n0, boolean count) throws Exception {
		String t = table(id);
		PreparedStatement ins = c.prepareStatement(
			"INSERT INTO " + t + "(id, k, v) VALUES (?, ?, ?)");
		PreparedStatement sel = c.prepareStatement(
			"SELECT COUNT(*), SUM(LENGTH(v)) FROM " + t + " WHERE k BETWEEN ? AND ?");
		PreparedStatement upd = c.prepareStatement("UPDATE " + t + " SET v = ? WHERE id = ?");
		PreparedStatement del = c.prepareStatement("DELETE FROM " + t + " WHERE id = ?");
		long n = n0, sum = 0;
		while (System.nanoTime() < until) {
			long key = (long)id << 40 | n;
			int k = (int)(n * 2654435761L & 0xfffff);
			ins.setLong(1, key);
			ins.setInt(2, k);
			ins.setString(3, "row " + n + " of thread " + id);
			ins.executeUpdate();
			sel.setInt(1, k - 64);
			sel.setInt(2, k + 64);
			try (ResultSet r = sel.executeQuery()) {
				if (r.next())
					sum += r.getLong(1);
			}
			upd.setString(1, "updated " + n);
			upd.setLong(2, (long)id << 40 | (keep > 0 ? n - keep / 2 : n / 2));
			upd.executeUpdate();
			if (keep > 0 && n >= keep) {
				del.setLong(1, (long)id << 40 | (n - keep));
				del.executeUpdate();
			}
			n++;
			if (count)
				ops.incrementAndGet();
		}
		return n + (sum & 1);
	}

	static String table(int id) {
		return ownTables ? "t" + id : "t";
	}

	// every worker on its own connection until `until`; each continues its own key sequence
	static void run(Connection[] cs, long[] next, boolean count) throws Exception {
		Thread[] ts = new Thread[cs.length];
		Exception[] failed = new Exception[1];
		for (int i = 0; i < cs.length; i++) {
			final int id = i;
			ts[i] = new Thread(() -> {
				long c0 = mx.getCurrentThreadCpuTime();
				try {
					next[id] = work(cs[id], id, next[id], count);
				} catch (Exception e) {
					synchronized (failed) {
						failed[0] = e;
					}
				}
				if (count)
					cpuNs.addAndGet(mx.getCurrentThreadCpuTime() - c0);
			}, "h2-worker-" + i);
			ts[i].start();
		}
		for (Thread t : ts)
			t.join();
		if (failed[0] != null)
			throw failed[0];
	}

	/*
	 * SECS 0: the workers run until stdin ends; each line read prints the totals so far,
	 * "ops=N work_cpu_ns=N t_ns=N" (transactions, the workers' own CPU time, System.nanoTime),
	 * so a driver can measure windows of one JVM with and without a profiler.
	 */
	static void serve(Connection[] cs, long[] next, BufferedReader in) throws Exception {
		until = Long.MAX_VALUE;
		Thread[] ts = new Thread[cs.length];
		for (int i = 0; i < cs.length; i++) {
			final int id = i;
			ts[i] = new Thread(() -> {
				try {
					work(cs[id], id, next[id], true);
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
			}, "h2-worker-" + i);
			ts[i].start();
		}
		while (in.readLine() != null) {
			long cpu = 0;
			for (Thread t : ts)
				cpu += Math.max(mx.getThreadCpuTime(t.getId()), 0);
			System.out.printf("ops=%d work_cpu_ns=%d t_ns=%d%n", ops.get(), cpu,
				System.nanoTime());
			System.out.flush();
		}
		until = 0;
		for (Thread t : ts)
			t.join();
	}

	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[0]);
		int secs = Integer.parseInt(args[1]);
		keep = args.length > 2 ? Long.parseLong(args[2]) : 0;
		int warmup = args.length > 3 ? Integer.parseInt(args[3]) : 3;
		ownTables = args.length > 4 && args[4].equals("own");
		Connection setup = DriverManager.getConnection(URL);
		try (Statement s = setup.createStatement()) {
			for (int i = 0; i < (ownTables ? threads : 1); i++) {
				s.execute("CREATE TABLE " + table(i) + "(id BIGINT PRIMARY KEY, k INT, "
					+ "v VARCHAR(100))");
				s.execute("CREATE INDEX " + table(i) + "_k ON " + table(i) + "(k)");
			}
		}
		Connection[] cs = new Connection[threads];
		long[] next = new long[threads];
		for (int i = 0; i < threads; i++)
			cs[i] = DriverManager.getConnection(URL);
		// warm-up: every worker at once, as measured, so the JIT compiles the hot paths and
		// the table reaches its steady size before anything is measured
		until = System.nanoTime() + warmup * 1_000_000_000L;
		run(cs, next, false);
		System.out.println("ready");
		System.out.flush();
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		if (secs == 0) {
			serve(cs, next, in);
			return;
		}
		in.readLine();
		long t0 = System.nanoTime();
		until = t0 + secs * 1_000_000_000L;
		run(cs, next, true);
		double el = (System.nanoTime() - t0) / 1e9;
		System.out.printf("ops_per_s=%.1f ops_per_cpu_s=%.1f elapsed_ms=%.1f work_cpu_ms=%.1f%n",
			ops.get() / el, ops.get() / (cpuNs.get() / 1e9), el * 1000, cpuNs.get() / 1e6);
		for (Connection c : cs)
			c.close();
		setup.close();
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// H2Bench.java: a real application's throughput: JDBC transactions on H2 (Debian libh2-java).
//
// Usage: java -cp h2.jar:DIR H2Bench THREADS SECS [KEEP]. Creates an in-memory H2 database
// with an index, warms up for 3 s, prints "ready", waits for a line on stdin (the profiler is
// up), then every thread runs transactions (insert a row, query a range by the index, update
// one row) on its own connection for SECS seconds; prints "ops_per_s=N" (transactions per
// second). KEEP > 0: each transaction also deletes the thread's row of KEEP transactions
// before, so the table stays at THREADS x KEEP rows and a long run keeps a steady heap (without
// it the in-memory table grows until the heap is full).
import java.io.BufferedReader;
import java.io.InputStreamReader;
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
	static final AtomicLong ops = new AtomicLong();

	static long work(Connection c, int id, long n0, boolean count) throws Exception {
		PreparedStatement ins = c.prepareStatement(
			"INSERT INTO t(id, k, v) VALUES (?, ?, ?)");
		PreparedStatement sel = c.prepareStatement(
			"SELECT COUNT(*), SUM(LENGTH(v)) FROM t WHERE k BETWEEN ? AND ?");
		PreparedStatement upd = c.prepareStatement("UPDATE t SET v = ? WHERE id = ?");
		PreparedStatement del = c.prepareStatement("DELETE FROM t WHERE id = ?");
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

	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[0]);
		int secs = Integer.parseInt(args[1]);
		keep = args.length > 2 ? Long.parseLong(args[2]) : 0;
		Connection setup = DriverManager.getConnection(URL);
		try (Statement s = setup.createStatement()) {
			s.execute("CREATE TABLE t(id BIGINT PRIMARY KEY, k INT, v VARCHAR(100))");
			s.execute("CREATE INDEX t_k ON t(k)");
		}
		Connection[] cs = new Connection[threads];
		long[] next = new long[threads];
		for (int i = 0; i < threads; i++)
			cs[i] = DriverManager.getConnection(URL);
		// warm-up: the JIT compiles the hot paths before anything is measured
		until = System.nanoTime() + 3_000_000_000L;
		for (int i = 0; i < threads; i++)
			next[i] = work(cs[i], i, 0, false);
		System.out.println("ready");
		System.out.flush();
		new BufferedReader(new InputStreamReader(System.in)).readLine();
		long t0 = System.nanoTime();
		until = t0 + secs * 1_000_000_000L;
		Thread[] ts = new Thread[threads];
		for (int i = 0; i < threads; i++) {
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
		for (Thread t : ts)
			t.join();
		double el = (System.nanoTime() - t0) / 1e9;
		System.out.printf("ops_per_s=%.1f elapsed_ms=%.1f%n", ops.get() / el, el * 1000);
		for (Connection c : cs)
			c.close();
		setup.close();
	}
}

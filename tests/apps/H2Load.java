// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// H2Load.java: a real application under load for realapps.bats: JDBC transactions on H2.
//
// Usage: java -cp /usr/share/java/h2.jar:DIR H2Load THREADS SECS [WARMUP_SECS [since-agent]]
// THREADS worker threads, each on its own connection to one in-memory H2 database, run
// auto-committed statements on one shared, indexed table (insert a row, count a key range
// by the index, update a row, delete the thread's oldest row) for SECS seconds in all.
// Every statement locks the shared table in H2's own code (MVTable.lock/unlock synchronize
// on the table), so the threads contend for that monitor as H2's users' threads do. After
// WARMUP_SECS (default 5; the JIT has compiled the hot paths) it prints "ready"; at the end
// "ops N" (transactions of all threads), "blocked_ns N" (the JVM's own measure of the time
// the workers were blocked entering a contended monitor: ThreadMXBean with contention
// monitoring, ms resolution) and exits 0. The blocked time counts from "ready", or with
// since-agent from when the jprof agent's channel /tmp/jprof-PID-TOKEN.ring appears (polled
// every 10 ms; the agent turns its monitor events on just after), so that it covers
// what a late-attached jprof can see. Only java.sql is compiled against: H2's driver is
// found on the class path at run time (JDBC service loading).
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

public class H2Load {
	static final String URL = "jdbc:h2:mem:h2load;DB_CLOSE_DELAY=-1";
	/* rows each thread keeps: the table stays bounded however long the load runs */
	static final long KEEP = 2000;
	static final AtomicLong ops = new AtomicLong();
	static volatile long until;

	static void work(Connection c, int id) throws Exception {
		PreparedStatement ins = c.prepareStatement("INSERT INTO t(id, k, v) VALUES (?, ?, ?)");
		PreparedStatement sel = c.prepareStatement(
			"SELECT COUNT(*), SUM(LENGTH(v)) FROM t WHERE k BETWEEN ? AND ?");
		PreparedStatement upd = c.prepareStatement("UPDATE t SET v = ? WHERE id = ?");
		PreparedStatement del = c.prepareStatement("DELETE FROM t WHERE id = ?");
		long base = (long)id << 40, sum = 0;

		for (long n = 0; System.nanoTime() < until; n++) {
			int k = (int)(n * 2654435761L + id * 40503L & 0xfffff);

			ins.setLong(1, base | n);
			ins.setInt(2, k);
			ins.setString(3, "row " + n + " of thread " + id);
			ins.executeUpdate();
			sel.setInt(1, k - 64);
			sel.setInt(2, k + 64);
			try (ResultSet r = sel.executeQuery()) {
				if (r.next())
					sum += r.getLong(1);
			}
			upd.setString(1, "updated " + n + " sum " + sum);
			upd.setLong(2, base | n / 2);
			upd.executeUpdate();
			if (n >= KEEP) {
				del.setLong(1, base | (n - KEEP));
				del.executeUpdate();
			}
			ops.incrementAndGet();
		}
	}

	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[0]);
		long secs = Long.parseLong(args[1]);
		long warmup = args.length > 2 ? Long.parseLong(args[2]) : 5;
		boolean sinceAgent = args.length > 3 && args[3].equals("since-agent");
		long t0 = System.nanoTime();
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		mx.setThreadContentionMonitoringEnabled(true);
		Connection setup = DriverManager.getConnection(URL);

		try (Statement s = setup.createStatement()) {
			s.execute("CREATE TABLE t(id BIGINT PRIMARY KEY, k INT, v VARCHAR(100))");
			s.execute("CREATE INDEX t_k ON t(k)");
		}
		until = t0 + secs * 1_000_000_000L;
		Thread[] ts = new Thread[threads];
		long[] blockedEnd = new long[threads];
		Throwable[] failed = new Throwable[1];
		for (int i = 0; i < threads; i++) {
			final int id = i;
			ts[i] = new Thread(() -> {
				try (Connection c = DriverManager.getConnection(URL)) {
					work(c, id);
					/* read by the thread itself: a thread that ended has no count */
					blockedEnd[id] = mx.getThreadInfo(Thread.currentThread().getId())
								 .getBlockedTime();
				} catch (Throwable e) {
					synchronized (failed) {
						failed[0] = e;
					}
				}
			}, "h2-worker-" + i);
			ts[i].start();
		}
		Thread.sleep(warmup * 1000);
		System.out.println("ready");
		System.out.flush();
		String ring = "/jprof-" + ProcessHandle.current().pid() + "-";
		while (sinceAgent && !mapsRing(ring) && System.nanoTime() < until)
			Thread.sleep(10);
		long[] blocked0 = blockedMs(mx, ts);
		long blocked = 0;
		for (int i = 0; i < threads; i++) {
			ts[i].join();
			blocked += blockedEnd[i] - blocked0[i];
		}
		setup.close();
		synchronized (failed) {
			if (failed[0] != null) {
				failed[0].printStackTrace();
				System.exit(1);
			}
		}
		System.out.println("ops " + ops.get());
		System.out.println("blocked_ns " + blocked * 1_000_000L);
	}

	/* each thread's total time blocked on monitor entry so far, in ms (0: thread ended) */
	// the agent's ring (its name has a random token) is mapped once the agent runs
	static boolean mapsRing(String want) throws Exception {
		for (String l : Files.readAllLines(Paths.get("/proc/self/maps")))
			if (l.endsWith(".ring") && l.contains(want))
				return true;
		return false;
	}

	static long[] blockedMs(ThreadMXBean mx, Thread[] ts) {
		long[] ids = new long[ts.length], ms = new long[ts.length];
		for (int i = 0; i < ts.length; i++)
			ids[i] = ts[i].getId();
		ThreadInfo[] info = mx.getThreadInfo(ids);
		for (int i = 0; i < ts.length; i++)
			ms[i] = info[i] != null ? info[i].getBlockedTime() : 0;
		return ms;
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// OffcpuApp.java [SECONDS] [MS]: four threads that block for known times per iteration:
// Thread.sleep (sleepLoop), Object.wait with a timeout nobody ends early (waitLoop), a
// blocking loopback socket read whose peer answers after MS (readLoop), and
// FileChannel.force (forceLoop). Each measures its own blocked times; at the end it
// prints one line per kind: "<kind> n=N mean_ms=X median_ms=M min_ms=Y early=E" (early:
// woke before MS, which a profiler must never cause), then "done". "started" once the
// threads are started and main goes to sleep.
import java.io.File;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;

public class OffcpuApp {
	static volatile boolean running = true;
	static long ms = 20;

	static final class Stat {
		final String kind;
		long n, early;
		double sum, min = Double.MAX_VALUE;
		final ArrayList<Double> all = new ArrayList<>();

		Stat(String kind) {
			this.kind = kind;
		}

		synchronized void add(long t0, long t1, boolean timed) {
			double d = (t1 - t0) / 1e6;
			n++;
			sum += d;
			min = Math.min(min, d);
			all.add(d);
			if (timed && d < ms)
				early++;
		}

		synchronized String line() {
			Collections.sort(all);
			return String.format("%s n=%d mean_ms=%.3f median_ms=%.3f min_ms=%.3f early=%d", kind,
					n, n > 0 ? sum / n : 0.0, n > 0 ? all.get(all.size() / 2) : 0.0,
					n > 0 ? min : 0.0, early);
		}
	}

	static final Stat sleepStat = new Stat("sleep"), waitStat = new Stat("wait"),
			readStat = new Stat("read"), forceStat = new Stat("force");
	static final Object lock = new Object();

	static void sleepLoop() throws Exception {
		while (running) {
			long t0 = System.nanoTime();
			Thread.sleep(ms);
			sleepStat.add(t0, System.nanoTime(), true);
		}
	}

	static void waitLoop() throws Exception {
		while (running) {
			long t0 = System.nanoTime();
			synchronized (lock) {
				lock.wait(ms);
			}
			waitStat.add(t0, System.nanoTime(), true);
		}
	}

	// the peer: for every byte received, waits ms and answers one byte
	static void peer(ServerSocket ss) {
		try (Socket s = ss.accept()) {
			InputStream in = s.getInputStream();
			OutputStream out = s.getOutputStream();
			while (in.read() >= 0) {
				Thread.sleep(ms);
				out.write(1);
				out.flush();
			}
		} catch (Exception e) {
			// the client closed the connection at the end
		}
	}

	static void readLoop(int port) throws Exception {
		try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
			s.setTcpNoDelay(true);
			InputStream in = s.getInputStream();
			OutputStream out = s.getOutputStream();
			while (running) {
				long t0 = System.nanoTime();
				out.write(1);
				out.flush();
				if (in.read() < 0)
					break;
				readStat.add(t0, System.nanoTime(), true);
			}
		}
	}

	static void forceLoop() throws Exception {
		File f = File.createTempFile("offcpuapp", ".dat");
		f.deleteOnExit();
		ByteBuffer b = ByteBuffer.allocate(4096);
		try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.WRITE)) {
			while (running) {
				b.clear();
				ch.write(b, 0);
				long t0 = System.nanoTime();
				ch.force(true);
				forceStat.add(t0, System.nanoTime(), false);
				Thread.sleep(ms);
			}
		}
	}

	interface Body {
		void run() throws Exception;
	}

	static Thread start(String name, Body body) {
		Thread t = new Thread(() -> {
			try {
				body.run();
			} catch (Exception e) {
				System.out.println(name + " failed: " + e);
			}
		}, name);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 5;
		if (args.length > 1)
			ms = Long.parseLong(args[1]);
		ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
		Thread p = start("peer", () -> peer(ss));
		Thread[] ts = { start("sleeper", OffcpuApp::sleepLoop), start("waiter", OffcpuApp::waitLoop),
				start("reader", () -> readLoop(ss.getLocalPort())),
				start("forcer", OffcpuApp::forceLoop) };
		System.out.println("started"); // main sleeps from here
		Thread.sleep((long) (secs * 1000));
		running = false;
		for (Thread t : ts)
			t.join();
		ss.close();
		p.join();
		for (Stat s : new Stat[] { sleepStat, waitStat, readStat, forceStat })
			System.out.println(s.line());
		System.out.println("done");
	}
}

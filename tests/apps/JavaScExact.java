// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// JavaScExact.java N GOFILE: once GOFILE exists, N times: ~1 ms of computation, then one
// pwrite64 (FileChannel.write at a position) of 64 bytes; prints "done N SUM". The
// computation keeps the thread on CPU so that a 999 Hz profiler signals it often; the
// JVM itself makes no pwrite64, so the count of the profile is exactly N.
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

public class JavaScExact {
	static long spin(long x) {
		long end = System.nanoTime() + 1_000_000;
		while (System.nanoTime() < end)
			for (int i = 0; i < 1000; i++)
				x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		File go = new File(args[1]);
		while (!go.exists())
			Thread.sleep(20);
		File f = File.createTempFile("javascexact", ".dat");
		f.deleteOnExit();
		ByteBuffer b = ByteBuffer.allocateDirect(64);
		long x = 1;
		try (FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.WRITE)) {
			for (int i = 0; i < n; i++) {
				x = spin(x);
				b.clear();
				ch.write(b, 0);
			}
		}
		System.out.println("done " + n + " " + x);
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// ShortLived.java: a JVM that computes for MS milliseconds (default 500) and exits 0.
public class ShortLived {
	public static void main(String[] args) {
		long ms = args.length > 0 ? Long.parseLong(args[0]) : 500;
		long end = System.nanoTime() + ms * 1000000L, x = 0;
		while (System.nanoTime() < end)
			for (int i = 0; i < 10000; i++)
				x += i * 31L ^ x;
		System.out.println("short " + (x == 42 ? "" : "ok"));
	}
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// GcPauses.java: forces GC pauses: System.gc() N times, GAP_MS apart, with allocation pressure
// in between (young pauses). Prints "ready" at start and "done" at the end.
// java GcPauses [N [GAP_MS [DELAY_MS]]]: DELAY_MS (default 0) after "ready", the first pause:
// G1 starts the GC workers beyond the first one then, on demand.
public class GcPauses {
	static volatile Object sink;

	public static void main(String[] args) throws Exception {
		int n = args.length > 0 ? Integer.parseInt(args[0]) : 20;
		long gapMs = args.length > 1 ? Long.parseLong(args[1]) : 100;
		Object[] keep = new Object[4096];
		long delayMs = args.length > 2 ? Long.parseLong(args[2]) : 0;
		System.out.println("ready");
		System.out.flush();
		Thread.sleep(delayMs);
		for (int i = 0; i < n; i++) {
			for (int j = 0; j < 40000; j++)
				keep[j % keep.length] = new byte[512 + (j & 1023)];
			sink = keep;
			System.gc();
			Thread.sleep(gapMs);
		}
		System.out.println("done");
	}
}

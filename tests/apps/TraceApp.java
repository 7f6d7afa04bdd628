// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// TraceApp.java: methods of known behaviour for jprof trace (tests/e2e/trace.bats). It prints
// "ready", then runs phase N when the file DIR/goN appears and writes DIR/doneN after it:
// phase 1: sleep5 x40, maybeThrow x50 (every tenth throws), fib(10) (177 calls), over(int) x7
// and over(String) x3, viaLambda x4 (called from a lambda), shapes x20 (switches, loops, a
// finally, long/double returns), new Point(i) x30 (Point(int) calls this(int, int) with a
// `new` and branches before it; Point(int, int) throws for 13, inside Point(int)'s this()
// call, which is no call of Point(int) begun); phase 2: Late (a class loaded only now).run
// x6; phase 3:
// sleep5 x10 and other x5; phase 4: tiny in a hot loop until DIR/go5 appears (the agent's
// overhead budget stops that trace). Also the rewriter's real class files (tests/unit/test_bytecode.c).
import java.nio.file.Files;
import java.nio.file.Path;

public class TraceApp {
    static volatile long sink;

    static void sleep5() throws InterruptedException {
        Thread.sleep(5);
    }

    static int maybeThrow(int i) {
        if (i % 10 == 9)
            throw new IllegalStateException("tenth " + i);
        return i * 2;
    }

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    static int over(int x) {
        return x + 1;
    }

    static int over(String s) {
        return s.length();
    }

    static void viaLambda() {
        sink++;
    }

    static int tiny(int i) {
        return i & 7;
    }

    static void other() {
        sink += 2;
    }

    // --args: an int, a long, a String (longer than the 16 chars kept, or null), a double
    static void slowArgs(int a, long b, String c, double d) throws InterruptedException
    {
	    Thread.sleep(5);
	    sink += a + b + (c == null ? 0 : c.length()) + (long)d;
    }

    // every construct the rewriter relocates: switches of both kinds, backward and forward
    // branches, a try/catch/finally, a synchronized block, wide returns
    static long shapes(int k) {
        long acc = 0;
        switch (k % 4) {
        case 0: acc += 1; break;
        case 1: acc += 3; break;
        case 2: acc += 5; break;
        default: acc += 7;
        }
        switch (k * 1000) {
        case 0: acc ^= 11; break;
        case 5000: acc ^= 13; break;
        case 100000: return acc * 2;
        default: acc ^= 17;
        }
        for (int i = 0; i < k; i++) {
            if ((i & 1) == 0)
                continue;
            acc += i;
        }
        try {
            if (k == 3)
                throw new RuntimeException("three");
            acc += 100;
        } catch (RuntimeException e) {
            acc -= 1;
        } finally {
            acc *= 3;
        }
        synchronized (TraceApp.class) {
            acc++;
        }
        if (k > 15)
            return acc;
        return acc + (long) half(k);
    }

    static double half(int k) {
        return k / 2.0;
    }

    static void waitFor(Path p) throws InterruptedException {
        while (!Files.exists(p))
            Thread.sleep(10);
    }

    static void done(Path dir, int n) throws Exception {
        Files.writeString(dir.resolve("done" + n), "done\n");
        System.out.println("done" + n);
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        System.out.println("ready");
        waitFor(dir.resolve("go1"));
        for (int i = 0; i < 40; i++)
            sleep5();
        for (int i = 0; i < 50; i++) {
            try {
                sink += maybeThrow(i);
            } catch (IllegalStateException e) {
                sink--;
            }
        }
        sink += fib(10);
        for (int i = 0; i < 7; i++)
            sink += over(i);
        for (int i = 0; i < 3; i++)
            sink += over("abc");
        Runnable r = () -> viaLambda();
        for (int i = 0; i < 4; i++)
            r.run();
        for (int i = 0; i < 20; i++)
            sink += shapes(i);
        for (int i = 0; i < 30; i++) {
            try {
                sink += new Point(i).y;
            } catch (IllegalArgumentException e) {
                sink--;
            }
        }
        done(dir, 1);
        waitFor(dir.resolve("go2"));
        for (int i = 0; i < 6; i++)
            sink += Late.run(i);
        done(dir, 2);
        waitFor(dir.resolve("go3"));
        for (int i = 0; i < 10; i++)
            sleep5();
        for (int i = 0; i < 5; i++)
            other();
	slowArgs(7, -8_000_000_000L, "a string over sixteen chars", 2.5);
	slowArgs(8, 1L, null, -0.125);
	done(dir, 3);
        waitFor(dir.resolve("go4"));
        while (!Files.exists(dir.resolve("go5")))
            for (int i = 0; i < 1_000_000; i++)
                sink += tiny(i);
        done(dir, 4);
        waitFor(dir.resolve("quit"));
    }
}

// constructors: code before super() and this() (branches, a `new`), one throwing
class Point {
    final int x, y;

    Point(int x, int y) {
        super();
        this.x = x;
        this.y = y > 0 ? y : -y;
        if (x == 13)
            throw new IllegalArgumentException("13");
    }

    Point(int x) {
        this(x < 0 ? 0 : x, new Object() != null ? 1 : 2);
    }
}

// loaded at its first use, in phase 2
class Late {
    static int run(int i) {
        return i * 3;
    }
}

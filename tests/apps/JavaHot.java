// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// JavaHot: Java workloads with known hot methods for the e2e tests.
//   java JavaHot split SECONDS  -- thread "worker-a" spins in JavaHot.spinA (a poll-free counted
//                                  loop calling a small method C2 inlines), thread "worker-b"
//                                  spins in JavaHot.spinB half of the time and sleeps otherwise.
//   java JavaHot jni SECONDS    -- thread "worker-j" calls a native method that makes syscalls.
//   java JavaHot jniattach SECONDS -- a native thread "jnat" spins in C (jnat_spin) for half of
//                                  SECONDS, then attaches to the JVM and spins in
//                                  JavaHot.attachedWork for the other half.
//   java JavaHot calls SECONDS  -- thread "worker-c" makes megamorphic calls to tiny methods
//                                  (through an interface: itable stubs; through an abstract
//                                  class: vtable stubs); run it with
//                                  -XX:CompileCommand=dontinline,JavaHot$*::* so that the
//                                  calls stay calls: samples in their prologues and stubs.
//   java JavaHot handles SECONDS -- thread "worker-h" calls tiny static methods through
//                                  method handles it picks at run time (not constants: the
//                                  calls go through MethodHandle.linkToStatic).
//   java JavaHot copies SECONDS -- thread "worker-y" copies long[] and Object[] arrays with
//                                  System.arraycopy: samples in the arraycopy stubs (and in
//                                  the GC barrier code they call).
//   java JavaHot i2c SECONDS   -- thread "worker-i" calls a compiled method of many arguments
//                                  from an interpreted loop (JavaHot.i2cLoop); run it with
//                                  -XX:CompileCommand=exclude,JavaHot::i2cLoop: every call
//                                  passes the I2C adapter (samples in it). Thread "worker-2"
//                                  calls an interpreted method of many arguments from a
//                                  compiled loop (JavaHot.c2iBatch); with
//                                  -XX:CompileCommand=exclude,JavaHot::manyInterp too, every
//                                  call passes the C2I adapter.
// Prints "ready" once its threads run, and "done <checksum>" at the end.
public class JavaHot {
    static volatile long sink;

    // small enough for C2 to inline into countedLoop
    static int tiny(int x) {
        return (x * 31) ^ (x >>> 3);
    }

    // an int-indexed counted loop: C2 compiles it without a safepoint poll
    static long countedLoop(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s += tiny(i);
        }
        return s;
    }

    static void spinA(long endNs) {
        while (System.nanoTime() < endNs) {
            sink += countedLoop(50_000_000);
        }
    }

    static long busyB(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            s = s * 6364136223846793005L + i;
        }
        return s;
    }

    static void spinB(long endNs) throws InterruptedException {
        while (System.nanoTime() < endNs) {
            long t = System.nanoTime();
            while (System.nanoTime() - t < 20_000_000L) {
                sink += busyB(100_000);
            }
            Thread.sleep(20);
        }
    }

    static native long nativeWrites(int n);

    // starts the "jnat" thread: natively for nativeNs, then attached, in attachedWork
    static native int startNativeThenJava(long nativeNs, long javaNs);

    // called by the attached native thread
    static void attachedWork(long javaNs) {
        long end = System.nanoTime() + javaNs;
        while (System.nanoTime() < end) {
            sink += busyB(100_000);
        }
        attachedDone = true;
    }

    static volatile boolean attachedDone;

    interface Op { long op(long x); }
    static final class OpA implements Op { public long op(long x) { return x + 1; } }
    static final class OpB implements Op { public long op(long x) { return x ^ 5; } }
    static final class OpC implements Op { public long op(long x) { return x * 3; } }
    static final class OpD implements Op { public long op(long x) { return x - 7; } }
    static abstract class Fn { abstract long fn(long x); }
    static final class FnA extends Fn { long fn(long x) { return x + 11; } }
    static final class FnB extends Fn { long fn(long x) { return x ^ 13; } }
    static final class FnC extends Fn { long fn(long x) { return x * 17; } }

    static long callLoop(long endNs) {
        Op[] ops = { new OpA(), new OpB(), new OpC(), new OpD() };
        Fn[] fns = { new FnA(), new FnB(), new FnC() };
        long s = 0;
        while (System.nanoTime() < endNs) {
            for (int i = 0; i < 1_000_000; i++) {
                s = ops[i & 3].op(s);
                s = fns[i % 3].fn(s);
            }
        }
        return s;
    }

    static long mhA(long x) { return x * 31 + 7; }
    static long mhB(long x) { return x ^ (x >>> 7); }
    static long mhC(long x) { return x + 0x9e3779b97f4a7c15L; }

    static long handleLoop(long endNs) throws Throwable {
        java.lang.invoke.MethodHandles.Lookup l = java.lang.invoke.MethodHandles.lookup();
        java.lang.invoke.MethodType t =
            java.lang.invoke.MethodType.methodType(long.class, long.class);
        java.lang.invoke.MethodHandle[] hs = {
            l.findStatic(JavaHot.class, "mhA", t),
            l.findStatic(JavaHot.class, "mhB", t),
            l.findStatic(JavaHot.class, "mhC", t),
        };
        long s = 0;
        while (System.nanoTime() < endNs) {
            for (int i = 0; i < 1_000_000; i++)
                s = (long) hs[i % 3].invokeExact(s);
        }
        return s;
    }

    static long copyLoop(long endNs) {
        long[] a = new long[2048], b = new long[2048];
        Object[] o = new Object[1024], p = new Object[1024];
        for (int i = 0; i < o.length; i++)
            o[i] = Integer.valueOf(i);
        long s = 0;
        while (System.nanoTime() < endNs) {
            for (int i = 0; i < 10_000; i++) {
                a[i & 2047] = i;
                System.arraycopy(a, 0, b, 0, a.length);
                System.arraycopy(o, 0, p, 0, o.length);
                s += b[(i * 7) & 2047] + (p[i & 1023] == null ? 0 : 1);
            }
        }
        return s;
    }

    // compiled soon (called from the loop below), never inlined there: that one stays
    // interpreted; its 20 arguments, each one bytecode to push, are 20 moves in the adapter
    static long many(long a, long b, long c, long d, long e, long f, long g, long h, long i,
                     long j, long k, long l, long m, long n, long o, long p, long q, long r,
                     long s, long t) {
        return a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p + q + r + s + t;
    }

    static long i2cLoop(long endNs) {
        long s = 0, x = 1;
        while (System.nanoTime() < endNs) {
            for (int i = 0; i < 10_000; i++)
                s += many(x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x);
        }
        return s;
    }

    // never compiled (excluded), so never inlined: each call from the compiled loop below
    // passes the C2I adapter, which lays the 20 arguments out as the interpreter wants them
    static long manyInterp(long a, long b, long c, long d, long e, long f, long g, long h,
                           long i, long j, long k, long l, long m, long n, long o, long p,
                           long q, long r, long s, long t) {
        return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ n ^ o ^ p ^ q ^ r ^ s ^ t;
    }

    // short, called often: compiled (not just its loop, on stack) within milliseconds
    static long c2iBatch(long x) {
        long s = 0;
        for (int i = 0; i < 100; i++, x++)
            s += manyInterp(x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x);
        return s;
    }

    static long c2iLoop(long endNs) {
        long s = 0, x = 1;
        while (System.nanoTime() < endNs) {
            for (int i = 0; i < 100; i++, x += 100)
                s += c2iBatch(x);
        }
        return s;
    }

    static void jniLoop(long endNs) {
        while (System.nanoTime() < endNs) {
            sink += nativeWrites(10_000);
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "split";
        double secs = args.length > 1 ? Double.parseDouble(args[1]) : 10;
        long end = System.nanoTime() + (long) (secs * 1e9);
        Thread[] ts;
        if (mode.equals("jniattach")) {
            System.loadLibrary("jnitest");
            long half = (long) (secs * 1e9 / 2);
            if (startNativeThenJava(half, half) != 0)
                throw new IllegalStateException("native thread not started");
            System.out.println("ready");
            System.out.flush();
            // the JVM does not wait for a thread it does not know yet
            long limit = end + 30_000_000_000L;
            while (!attachedDone && System.nanoTime() < limit)
                Thread.sleep(50);
            System.out.println("done " + sink + " attached " + attachedDone);
            return;
        } else if (mode.equals("calls")) {
            ts = new Thread[] { new Thread(() -> { sink += callLoop(end); }, "worker-c") };
        } else if (mode.equals("handles")) {
            ts = new Thread[] { new Thread(() -> {
                try {
                    sink += handleLoop(end);
                } catch (Throwable e) {
                    throw new RuntimeException(e);
                }
            }, "worker-h") };
        } else if (mode.equals("copies")) {
            ts = new Thread[] { new Thread(() -> { sink += copyLoop(end); }, "worker-y") };
        } else if (mode.equals("i2c")) {
            ts = new Thread[] { new Thread(() -> { sink += i2cLoop(end); }, "worker-i"),
                                new Thread(() -> { sink += c2iLoop(end); }, "worker-2") };
        } else if (mode.equals("jni")) {
            System.loadLibrary("jnitest");
            ts = new Thread[] { new Thread(() -> jniLoop(end), "worker-j") };
        } else {
            ts = new Thread[] {
                new Thread(() -> spinA(end), "worker-a"),
                new Thread(() -> {
                    try {
                        spinB(end);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }, "worker-b"),
            };
        }
        for (Thread t : ts) t.start();
        System.out.println("ready");
        System.out.flush();
        for (Thread t : ts) t.join();
        System.out.println("done " + sink);
    }
}

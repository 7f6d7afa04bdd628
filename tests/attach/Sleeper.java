// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Sleeper: a JVM for attach tests. Creates args[0] once running, then ticks to stdout.
import java.nio.file.Files;
import java.nio.file.Paths;

public class Sleeper {
    public static void main(String[] args) throws Exception {
        if (args.length > 0) {
            Files.write(Paths.get(args[0]), "ready\n".getBytes());
        }
        for (long tick = 0; ; tick++) {
            System.out.println("tick " + tick);
            Thread.sleep(100);
        }
    }
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// JavacLoop.java: the JDK's compiler run over and over inside one JVM, as a build daemon
// (Gradle's, Maven's, an IDE's) keeps it: javac's work without a JVM start each round.
//
// Usage: java JavacLoop ROUNDS_FILE JAVAC_ARGS...: runs javac (javax.tools) with JAVAC_ARGS
// until killed, writing the number of rounds done to ROUNDS_FILE after each one.
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

public class JavacLoop {
	public static void main(String[] args) throws Exception {
		JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
		String[] jargs = Arrays.copyOfRange(args, 1, args.length);
		OutputStream none = OutputStream.nullOutputStream();
		for (long n = 1;; n++) {
			javac.run(null, none, none, jargs);
			Files.writeString(Paths.get(args[0]), Long.toString(n));
		}
	}
}

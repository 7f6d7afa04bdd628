// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// TomcatLoad.java: a real application server under HTTP load (realapps.bats, bench/suite.py).
//
// Usage: java -cp TOMCAT_JARS:DIR TomcatLoad CLIENTS SECS [WARMUP_SECS [BASEDIR]]
// Debian's Tomcat 10 (libtomcat10-java), embedded: one NIO connector on 127.0.0.1 (a free
// port) and one servlet, /work, which renders a page of rows (a sorted word list with counts
// and an escaped HTML table), what a small web application does per request. CLIENTS client
// threads in the same JVM send keep-alive HTTP/1.1 GETs over loopback sockets and read whole
// responses, so Tomcat's own threads (http-nio-*: acceptor, poller, executor) do the server's
// work through its whole pipeline: socket reads, HTTP parsing, valves, filter chain, servlet,
// response writes. After WARMUP_SECS (default 5; the JIT has compiled the hot paths) it prints
// "ready". SECS > 0: it runs SECS seconds in all, then prints "ops N" (responses read) and
// exits 0. SECS 0: see serve(). BASEDIR (default: a new directory under java.io.tmpdir,
// deleted at exit) is Tomcat's work directory.
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

public class TomcatLoad {
	static final AtomicLong ops = new AtomicLong();
	static volatile long until;
	// kept: a logger's level holds only while something references the logger
	static final Logger TOMCAT_LOG = Logger.getLogger("org.apache");

	static final String[] WORDS = { "alpha", "bravo", "charlie", "delta", "echo", "foxtrot",
		"golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november", "oscar",
		"papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray",
		"yankee", "zulu", "<tag>", "a&b" };

	// the application: a page of N rows from a seed, words counted and sorted, HTML-escaped
	public static final class Work extends HttpServlet {
		@Override
		protected void doGet(HttpServletRequest req, HttpServletResponse resp)
			throws IOException {
			int n = 40;
			long seed = 1;
			String p = req.getParameter("n"), s = req.getParameter("seed");
			if (p != null)
				n = Math.max(1, Math.min(400, Integer.parseInt(p)));
			if (s != null)
				seed = Long.parseLong(s);
			TreeMap<String, Integer> counts = new TreeMap<>();
			List<String> rows = new ArrayList<>();
			for (int i = 0; i < n; i++) {
				seed = seed * 6364136223846793005L + 1442695040888963407L;
				String w = WORDS[(int)((seed >>> 33) % WORDS.length)] + "-" + ((seed >>> 20) & 63);
				counts.merge(w, 1, Integer::sum);
				rows.add(w);
			}
			rows.sort(Comparator.reverseOrder());
			resp.setContentType("text/html");
			resp.setCharacterEncoding("UTF-8");
			PrintWriter out = resp.getWriter();
			out.print("<html><body><table>");
			for (String r : rows)
				out.print("<tr><td>" + escape(r) + "</td><td>" + counts.get(r) + "</td></tr>");
			out.print("</table><p>" + counts.size() + " distinct</p></body></html>");
		}

		static String escape(String s) {
			StringBuilder b = new StringBuilder(s.length() + 8);
			for (int i = 0; i < s.length(); i++) {
				char c = s.charAt(i);
				if (c == '<')
					b.append("&lt;");
				else if (c == '>')
					b.append("&gt;");
				else if (c == '&')
					b.append("&amp;");
				else
					b.append(c);
			}
			return b.toString();
		}
	}

	// one client: keep-alive GETs on one connection until `until`; reads each whole response
	static void client(int port, int id) throws IOException {
		try (Socket sock = new Socket(InetAddress.getLoopbackAddress(), port)) {
			sock.setTcpNoDelay(true);
			OutputStream os = sock.getOutputStream();
			InputStream is = sock.getInputStream();
			byte[] buf = new byte[65536];
			for (long i = 0; System.nanoTime() < until; i++) {
				String q = "GET /work?n=" + (20 + (i * 7 + id) % 60) + "&seed=" + (i ^ id)
					+ " HTTP/1.1\r\nHost: localhost\r\n\r\n";
				os.write(q.getBytes(StandardCharsets.US_ASCII));
				readResponse(is, buf);
				ops.incrementAndGet();
			}
		}
	}

	// reads one response: its head up to the blank line, then its chunked or sized body
	static void readResponse(InputStream is, byte[] buf) throws IOException {
		StringBuilder head = new StringBuilder();
		int c, prev3 = 0;
		while ((c = is.read()) >= 0) {
			head.append((char)c);
			prev3 = (prev3 << 8 | c) & 0xffffffff;
			if (prev3 == 0x0d0a0d0a)
				break;
		}
		if (c < 0)
			throw new IOException("connection closed");
		String h = head.toString().toLowerCase();
		if (!h.startsWith("http/1.1 200"))
			throw new IOException("status: " + h.substring(0, Math.min(40, h.length())));
		int cl = h.indexOf("content-length:");
		if (cl >= 0) {
			int end = h.indexOf('\r', cl);
			skip(is, buf, Integer.parseInt(h.substring(cl + 15, end).trim()));
			return;
		}
		for (;;) { // chunked: size line, data, CRLF; a 0 size ends it (no trailers here)
			StringBuilder line = new StringBuilder();
			while ((c = is.read()) >= 0 && c != '\n')
				if (c != '\r')
					line.append((char)c);
			if (c < 0)
				throw new IOException("connection closed in a chunk");
			int size = Integer.parseInt(line.toString().trim(), 16);
			skip(is, buf, size + 2);
			if (size == 0)
				return;
		}
	}

	static void skip(InputStream is, byte[] buf, int n) throws IOException {
		while (n > 0) {
			int r = is.read(buf, 0, Math.min(n, buf.length));
			if (r < 0)
				throw new IOException("connection closed in a body");
			n -= r;
		}
	}

	static Thread[] startClients(int clients, int port, Throwable[] failed) {
		Thread[] ts = new Thread[clients];
		for (int i = 0; i < clients; i++) {
			final int id = i;
			ts[i] = new Thread(() -> {
				try {
					client(port, id);
				} catch (Throwable e) {
					failed[0] = e;
				}
			}, "client-" + i);
			ts[i].start();
		}
		return ts;
	}

	/*
	 * SECS 0: the clients run until stdin ends; each line read prints the totals so far,
	 * "ops=N work_cpu_ns=N t_ns=N" (responses, the whole JVM's CPU time, System.nanoTime),
	 * so a driver can measure windows of one JVM with and without a profiler.
	 */
	static void serve(int clients, int port, Throwable[] failed) throws Exception {
		com.sun.management.OperatingSystemMXBean os =
			(com.sun.management.OperatingSystemMXBean)ManagementFactory.getOperatingSystemMXBean();
		until = Long.MAX_VALUE;
		Thread[] ts = startClients(clients, port, failed);
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
		while (in.readLine() != null) {
			if (failed[0] != null)
				throw new RuntimeException(failed[0]);
			System.out.printf("ops=%d work_cpu_ns=%d t_ns=%d%n", ops.get(),
				os.getProcessCpuTime(), System.nanoTime());
			System.out.flush();
		}
		until = 0;
		for (Thread t : ts)
			t.join();
	}

	static void delete(File f) {
		File[] in = f.listFiles();
		if (in != null)
			for (File g : in)
				delete(g);
		f.delete();
	}

	public static void main(String[] args) throws Exception {
		int clients = Integer.parseInt(args[0]);
		int secs = Integer.parseInt(args[1]);
		int warmup = args.length > 2 ? Integer.parseInt(args[2]) : 5;
		boolean own = args.length <= 3;
		Path base = own ? Files.createTempDirectory("tomcatload") : Path.of(args[3]);
		TOMCAT_LOG.setLevel(Level.SEVERE); // not its notes on stopping a web application

		Tomcat tomcat = new Tomcat();
		tomcat.setBaseDir(base.toString());
		Connector conn = new Connector("HTTP/1.1");
		conn.setPort(0);
		conn.setProperty("address", "127.0.0.1");
		// no cap on requests per connection (Tomcat's default closes one after 100)
		conn.setProperty("maxKeepAliveRequests", "-1");
		tomcat.getService().addConnector(conn);
		tomcat.setConnector(conn);
		Context ctx = tomcat.addContext("", base.toAbsolutePath().toString());
		Tomcat.addServlet(ctx, "work", new Work()).addMapping("/work");
		tomcat.start();
		int port = conn.getLocalPort();

		Throwable[] failed = new Throwable[1];
		long t0 = System.nanoTime();
		try {
			// warm-up: the clients as measured, so the JIT compiles the hot paths first
			until = t0 + warmup * 1_000_000_000L;
			for (Thread t : startClients(clients, port, failed))
				t.join();
			if (failed[0] != null)
				throw new RuntimeException(failed[0]);
			System.out.println("ready");
			System.out.flush();
			if (secs == 0) {
				serve(clients, port, failed);
			} else {
				until = t0 + secs * 1_000_000_000L;
				for (Thread t : startClients(clients, port, failed))
					t.join();
				if (failed[0] != null)
					throw new RuntimeException(failed[0]);
				System.out.println("ops " + ops.get());
			}
		} finally {
			tomcat.stop();
			tomcat.destroy();
			if (own)
				delete(base.toFile());
		}
	}
}

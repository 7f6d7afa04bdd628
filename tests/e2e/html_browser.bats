#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# html_browser.bats: the HTML flame graph in headless Chromium, driven with real mouse and keyboard
# events (tests/e2e/html_driver.py): no console errors, search, zoom, reverse view, header, 100k
# stacks, a diff page (report --diff). Screenshots and the driver's step logs stay in build/test-artifacts/html/.
bats_require_minimum_version 1.5.0

load helpers

DRIVER=$BATS_TEST_DIRNAME/html_driver.py
GEN=$BATS_TEST_DIRNAME/gen_folded.py

setup_file() {
	# beside the jprof under test (build/ unless make's OUT says otherwise)
	export ART=${JPROF_TEST_ARTIFACTS:-$(dirname "$JPROF")/test-artifacts}/html
	mkdir -p "$ART"
}

setup() {
	[[ -x $JPROF ]] || missing "jprof not built at $JPROF (run make)"
	command -v chromium >/dev/null || missing "chromium (Debian package chromium; scripts/install-deps.sh)"
	command -v python3 >/dev/null || missing "python3"
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

# drive NAME HTML STEP...: runs the browser; its JSON lines go to $ART/NAME.jsonl
drive() {
	local name=$1 html=$2
	shift 2
	run python3 "$DRIVER" --html "$html" --out "$ART" "$@" 3>&-
	printf '%s\n' "$output" >"$ART/$name.jsonl"
	echo "$output"
	LOG=$ART/$name.jsonl
	[[ $status -eq 0 ]]
}

# step STEP EXPR: a Python expression over the step's line `d` (its state is `s`), printed as JSON
# (strings bare)
step() {
	python3 - "$LOG" "$1" "$2" <<'PY'
import json, sys
log, want, expr = sys.argv[1:]
for line in open(log):
    d = json.loads(line)
    if d.get("step") == want:
        s = d.get("state", {})
        v = eval(expr)
        print(v if isinstance(v, str) else json.dumps(v))
        sys.exit(0)
sys.exit("no step %s in %s" % (want, log))
PY
}

@test "html browser: loads clean; literal search highlights the frame; a click zooms; reverse shows the leaf as a root" {
	cat >"$OUT/s.folded" <<-'EOF'
	[process 1 java];Main.main_[0];Main.work_[j];Main.inl_[i] 30
	[process 1 java];Main.main_[0];Main.work_[j] 10
	[process 1 java];Main.main_[0];Other.run_[j];Main.inl_[i] 7
	[process 1 java];Main.main_[0];</script><script>alert(1)</script>;<img src=x onerror=alert(2)>;write_[k] 5
	[process 2 app];main;a.b(c)*d;write_[k] 3
	EOF
	run -0 "$JPROF" report "$OUT/s.folded" -o "$OUT/s.html"
	drive synthetic "$OUT/s.html" load shot:synthetic-load search:Main.inl pixel:Main.inl \
		shot:synthetic-search click:Main.work shot:synthetic-zoom reset hover:Main.work view:reverse \
		shot:synthetic-reverse 'search:b(c' regex shot:synthetic-regex \
		'search:Main\.(inl|work)' view:flame shot:synthetic-flame
	# loaded at the top of the page, no scrolling of its own
	[[ $(step load 's["scrollY"]') == 0 ]]
	[[ $(step load 's["roots"]') == '["[process 1 java]", "[process 2 app]"]' ]]
	# the literal search highlights exactly that frame, in the highlight colour, with its share
	[[ $(step search:Main.inl 's["highlighted"]') == '["Main.inl"]' ]]
	[[ $(step search:Main.inl 's["match"]') == "Matched: 67.27% of all (37 samples)" ]]
	[[ $(step pixel:Main.inl 'd["rgb"]') == '[224, 60, 224]' ]]
	# a real click zooms, and the search shows the zoomed view's share besides the whole's
	[[ $(step click:Main.work 's["zoom"]') == Main.work ]]
	[[ $(step click:Main.work 's["match"]') == "Matched: 75.00% of zoomed (30 samples)  ·  67.27% of all (37 samples)" ]]
	# the reset button zooms out; a tooltip tells the frame's kind and weights
	[[ $(step reset 's["zoom"]') == all ]]
	[[ $(step hover:Main.work 's["tip"]') == "Main.work
kind:   Java JIT
weight: 40 samples (72.73% of total, 76.92% of parent)
self:   10 samples (18.18%)" ]]
	# reverse: the leaves are the roots, Main.inl merged from its two callers
	[[ $(step view:reverse 's["roots"]') == '["Main.inl", "Main.work", "write"]' ]]
	[[ $(step view:reverse 's["widestRoot"]') == Main.inl ]]
	[[ $(step view:reverse 's["status"]') == *"Reverse (callee-first)"* ]]
	# literal by default: "b(c" matches the name; as a regex it is invalid and says so
	[[ $(step 'search:b(c' 's["highlighted"]') == '["a.b(c)*d"]' ]]
	[[ $(step regex 's["match"]') == "invalid regex:"* ]]
	[[ $(step regex 's["highlighted"]') == '[]' ]]
	[[ $(step 'search:Main\.(inl|work)' 'sorted(s["highlighted"])') == '["Main.inl", "Main.work"]' ]]
	[[ $(step view:flame 's["view"]') == flame ]]
	# the markup in a frame name stayed text: no dialog, no error (drive fails on either)
	[[ $(grep -c '"error"' "$LOG") == 0 ]]
	[[ -s $ART/synthetic-reverse.png ]]
}

@test "html browser: threads blocked all recording are hidden, counted in the header, shown by the toggle" {
	cat >"$OUT/w.folded" <<-'EOF'
	java [1] Main;Main.main_[0];Main.lock_[j];[park] 30
	java [1] Main;[blocked all recording] 900
	java [2] Idle;[blocked all recording] 100
	EOF
	run -0 "$JPROF" report "$OUT/w.folded" -o "$OUT/w.html"
	drive whole "$OUT/w.html" load shot:whole-hidden search:Main.lock whole shot:whole-shown \
		whole
	# hidden: the process with nothing else is gone, the other's share is of what is shown
	[[ $(step load 's["roots"]') == '["java [1] Main"]' ]]
	[[ $(step load 's["meta"]') == *"hiddenblocked all recording: 1,000 samples"* ]]
	[[ $(step search:Main.lock 's["match"]') == "Matched: 100.00% of all (30 samples)" ]]
	# the toggle shows them, and hides them again
	[[ $(step whole 's["roots"]') == '["java [1] Main", "java [2] Idle"]' ]]
	[[ $(step whole 's["meta"]') == *"shownblocked all recording"* ]]
	[[ $(grep -c '"error"' "$LOG") == 0 ]]
}

# a JavaHot recording with CPU and off-CPU: the header says what was recorded, weights show as
# time, and the reverse view's widest root is the leaf with the most weight in the data. One
# JDK's: the page is the test here (Java names per JDK are java.bats' and java_walk.bats')
real_recording() {
	local home=$1 tag=$2
	require_jdk "$home"
	[[ -f $APPS/JavaHot.class ]] || missing "test apps not built (make apps)"
	"$home/bin/java" -cp "$APPS" JavaHot split 30 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
	run -0 "$JPROF" record -p "$JPID" -e cpu,offcpu -d 3 -o "$OUT/real.html"
	drive "real-$tag" "$OUT/real.html" load shot:"real-$tag-load" search:JavaHot.spinA \
		shot:"real-$tag-search" click:JavaHot.spinA shot:"real-$tag-zoom" hover:JavaHot.spinA \
		view:reverse \
		shot:"real-$tag-reverse"
	local meta
	meta=$(step load 's["meta"]')
	[[ $meta == *"host$(hostname)"* ]]
	[[ $meta == *"eventscpu,offcpu"* ]]
	[[ $meta == *"rate99 Hz"* ]]
	[[ $meta =~ duration3\.[0-9]+\ s ]]
	[[ $meta =~ samples[1-9][0-9]* ]]
	[[ $meta == *"command"*"record -p $JPID -e cpu,offcpu -d 3 -o $OUT/real.html"* ]]
	[[ $(step load 'd["timing"]["total_ms"] > 0') == true ]]
	# CPU + off-CPU weights are time: shown as ms or s, in the status, the search and the zoom
	[[ $(step load 's["status"]') =~ Total:\ [0-9.]+\ (ms|s) ]]
	[[ $(step search:JavaHot.spinA 's["highlighted"]') == *'"JavaHot.spinA"'* ]]
	[[ $(step search:JavaHot.spinA 's["match"]') =~ of\ all\ \([0-9.]+\ (ms|s)\)$ ]]
	[[ $(step click:JavaHot.spinA 's["zoom"]') == JavaHot.spinA ]]
	[[ $(step click:JavaHot.spinA 's["match"]') == "Matched: 100.00% of zoomed"* ]]
	[[ $(step hover:JavaHot.spinA 's["tip"]') =~ weight:\ [0-9.]+\ (ms|s)\ \( ]]
	# the heaviest leaf, summed over every stack in the embedded data, is the widest reverse root
	local leaf
	leaf=$(python3 - "$OUT/real.html" <<-'PY'
	import collections, json, re, sys
	doc = open(sys.argv[1]).read()
	d = json.loads(re.search(r'<script id="jp-data" type="application/json">(.*?)</script>', doc, re.S).group(1))
	nodes, names = d["nodes"], d["names"]
	n = len(nodes) // 4
	self_w = [nodes[4 * i + 2] for i in range(n)]
	stack = []  # [node, children still to come], preorder as html.c writes it
	for i in range(n):
	    while stack and stack[-1][1] == 0:
	        stack.pop()
	    if stack:
	        stack[-1][1] -= 1
	        self_w[stack[-1][0]] -= nodes[4 * i + 2]
	    if nodes[4 * i + 3]:
	        stack.append([i, nodes[4 * i + 3]])
	leaf = collections.Counter()
	for i in range(1, n):
	    # threads blocked all recording: one frame the page hides until its toggle is on
	    if self_w[i] > 0 and names[nodes[4 * i]] != "[blocked all recording]":
	        leaf[(names[nodes[4 * i]], nodes[4 * i + 1])] += self_w[i]
	print(leaf.most_common(1)[0][0][0])
	PY
	)
	echo "heaviest leaf: $leaf"
	[[ $(step view:reverse 's["widestRoot"]') == "$leaf" ]]
	[[ $(step view:reverse 's["roots"]') == *"\"$leaf\""* ]]
	# the spinning Java methods are leaves, so roots of the reverse view
	[[ $(step view:reverse 's["roots"]') =~ \"JavaHot(\.|::)(countedLoop|tiny|busyB)\" ]]
}

@test "html browser: a real recording on JDK 25: header, time units, zoomed share, reverse root" {
	[[ $EUID -eq 0 ]] || missing "root to record"
	real_recording "$JDK25" jdk25
}

@test "html browser: 100,000 distinct stacks load, search and reverse in time" {
	python3 "$GEN" 100000 7 >"$OUT/big.folded"
	[[ $(wc -l <"$OUT/big.folded") -eq 100000 ]]
	run -0 "$JPROF" report "$OUT/big.folded" -o "$OUT/big.html"
	drive big "$OUT/big.html" load shot:big-load search:Unsafe_Park shot:big-search \
		view:reverse shot:big-reverse click:Unsafe_Park shot:big-reverse-zoom
	[[ $(step load 's["nodes"] > 100000') == true ]]
	[[ $(step load 's["scrollY"]') == 0 ]]
	# generous bounds: two cores shared with four other builds; the numbers go to the log
	step load '"load %d ms, painted %d ms, script %.0f ms (parse %.0f, first draw %.0f)" % (d["load_ms"], d["painted_ms"], d["timing"]["total_ms"], d["timing"]["parse_ms"], d["timing"]["draw_ms"])' |
		tee "$ART/big-timing.txt"
	step view:reverse '"reverse view built in %.0f ms, step %d ms" % (d["timing"]["reverse_ms"], d["ms"])' |
		tee -a "$ART/big-timing.txt"
	[[ $(step load 'd["painted_ms"] < 60000') == true ]]
	[[ $(step view:reverse 'd["ms"] < 60000') == true ]]
	[[ $(step search:Unsafe_Park 's["highlighted"]') == '["Unsafe_Park"]' ]]
	# the widest reverse root is the leaf with the most weight in the folded input
	local leaf
	leaf=$(awk '{ w = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";"); s[f[n]] += w }
		END { for (k in s) if (s[k] > m) { m = s[k]; b = k }; print b }' "$OUT/big.folded")
	leaf=${leaf%_\[[jik0]\]}
	echo "heaviest leaf: $leaf"
	[[ $(step view:reverse 's["widestRoot"]') == "$leaf" ]]
	[[ $(step click:Unsafe_Park 's["zoom"]') == Unsafe_Park ]]
	[[ $(step click:Unsafe_Park 's["match"]') == "Matched: 100.00% of zoomed"* ]]
}

@test "html browser: the flame view of deep stacks opens at its roots; dotted Java names match a search" {
	python3 - >"$OUT/deep.folded" <<-'PY'
	frames = ["java/lang/Thread.run_[j]"] + ["com/acme/Deep.f%d_[j]" % i for i in range(200)]
	print("[process 1 java];" + ";".join(frames) + " 5")
	print("[process 1 java];java/lang/Thread.run_[j];java/util/HashMap.get_[j] 20")
	PY
	run -0 "$JPROF" report "$OUT/deep.folded" -o "$OUT/deep.html"
	drive deep "$OUT/deep.html" load view:flame 'hover:[process 1 java]' shot:deep-flame \
		search:java.util.HashMap 'search:java\.util\.Hash' regex
	[[ $(step load 's["scrollY"]') == 0 ]]
	# the roots (201 rows below the top) are in the 800-pixel window, not the empty top
	[[ $(step view:flame 's["scrollY"] > 0') == true ]]
	[[ $(step 'hover:[process 1 java]' '0 <= d["rect"]["cy"] <= 800') == true ]]
	# a literal search and a regex in dotted form match the slashed name
	[[ $(step search:java.util.HashMap 's["highlighted"]') == '["java/util/HashMap.get"]' ]]
	[[ $(step regex 's["highlighted"]') == '["java/util/HashMap.get"]' ]]
}

@test "html browser: a diff page: frames coloured by change, BASE's header and removed paths; search, zoom, reverse" {
	cat >"$OUT/a.folded" <<-'EOF2'
	[process 1 java];java/lang/Thread.run_[j];com/acme/App.work_[j];com/acme/App.steady_[j] 90
	[process 1 java];java/lang/Thread.run_[j];com/acme/App.work_[j];com/acme/App.slowed_[j] 10
	[process 1 java];java/lang/Thread.run_[j];java/util/HashMap.get_[j] 20
	[process 1 java];java/lang/Thread.run_[j];com/acme/Old.gone_[j] 5
	EOF2
	sed 's/App.slowed_\[j\] 10/App.slowed_[j] 20/; s|com/acme/Old.gone|com/acme/New.fresh|' \
		"$OUT/a.folded" >"$OUT/b.folded"
	run -0 "$JPROF" report --diff "$OUT/a.folded" "$OUT/a.folded" -o "$OUT/self.html"
	run -0 "$JPROF" report --diff "$OUT/a.folded" "$OUT/b.folded" -o "$OUT/d.html"
	# against itself: no frame has a change colour, nothing grew, in either view
	drive diff-self "$OUT/self.html" load shot:diff-self view:reverse
	[[ $(step load 's["diff"]["changed"]') == 0 ]]
	[[ $(step load 's["diff"]["grew"]') == '[]' ]]
	[[ $(step load 's["diff"]["removed"]') == 0 ]]
	[[ $(step view:reverse 's["diff"]["changed"]') == 0 ]]
	drive diff "$OUT/d.html" load shot:diff-load pixel:com/acme/App.slowed pixel:java/util/HashMap.get \
		search:com.acme.App shot:diff-search click:com/acme/App.work shot:diff-zoom \
		hover:com/acme/App.slowed view:reverse shot:diff-reverse hover:java/util/HashMap.get
	# slowed: 10 of 125 -> 20 of 135 (8.00% -> 14.81%, 1.85x), the top grown function
	[[ $(step load 's["diff"]["grew"][0]') == 'com/acme/App.slowed_[j]' ]]
	[[ $(step load '"%.2f" % s["diff"]["factor"]') == 1.85 ]]
	[[ $(step load 's["diff"]["shrank"]') == *'"com/acme/Old.gone_[j]"'* ]]
	[[ $(step load 's["diff"]["removed"]') == 1 ]]
	[[ $(step load 's["diff"]["metaBase"]') == BASE* ]]
	[[ $(step load 's["meta"]') == NEW* ]]
	# red where it grew, blue where it shrank (HashMap.get: 16.00% -> 14.81%)
	[[ $(step pixel:com/acme/App.slowed 'd["rgb"][0] > d["rgb"][2] + 40') == true ]]
	[[ $(step pixel:java/util/HashMap.get 'd["rgb"][2] > d["rgb"][0] + 10') == true ]]
	# a dotted class name finds the slashed frames; a click zooms; the tooltip compares
	[[ $(step search:com.acme.App 'sorted(s["highlighted"])') == '["com/acme/App.slowed", "com/acme/App.steady", "com/acme/App.work"]' ]]
	[[ $(step click:com/acme/App.work 's["zoom"]') == com/acme/App.work ]]
	[[ $(step hover:com/acme/App.slowed 's["tip"]') == *"base:   8.00% (10 samples)
new:    14.81% (20 samples)
delta:  +6.81 points
factor: 1.85x" ]]
	# reverse: the leaves are roots, compared with BASE's reverse tree the same way
	[[ $(step view:reverse 's["roots"]') == *'"com/acme/App.slowed"'* ]]
	[[ $(step view:reverse 's["diff"]["removed"]') == 1 ]]
	[[ $(step hover:java/util/HashMap.get 's["tip"]') == *"base:   16.00% (20 samples)
new:    14.81% (20 samples)
delta:  -1.19 points
factor: 0.93x" ]]
	[[ $(grep -c '"error"' "$LOG") == 0 ]]
	[[ -s $ART/diff-reverse.png ]]
}

# phase_times FILE.pb.gz: "A_FIRST A_LAST B_FIRST B_LAST A_N B_N" (time_ms of the Samples, a slot each, of
# Phases.phaseA and phaseB, go tool pprof -traces, which shows 2700 ms as 2.7s)
phase_times() {
	go tool pprof -traces "$1" 2>/dev/null | awk '
		/^-----/ { t = -1; next }
		$1 == "time_ms:" { t = $2 + 0; if ($2 ~ /[0-9]s$/) t *= 1000; if ($2 ~ /min$/) t *= 60000; next }
		t >= 0 && /Phases\.phaseA/ { if (!na++ || t < a0) a0 = t; if (t > a1) a1 = t }
		t >= 0 && /Phases\.phaseB/ { if (!nb++ || t < b0) b0 = t; if (t > b1) b1 = t }
		END { print a0 + 0, a1 + 0, b0 + 0, b1 + 0, na + 0, nb + 0 }'
}

@test "timeline: phaseA then phaseB: pprof time_ms, report's round trip and --since/--until, JFR times, speedscope per thread, the HTML brushes, link and range compare" {
	[[ $EUID -eq 0 ]] || missing "root to record"
	require_jdk "$JDK17"
	require_jdk "$JDK25"
	command -v go >/dev/null || missing "go (Debian golang-go) for go tool pprof"
	[[ -f $APPS/Phases.class ]] || missing "test apps not built (make apps)"
	"$JDK17/bin/java" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,Phases::* \
		-cp "$APPS" Phases 2 "$OUT/go" >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	"$JPROF" record -p "$JPID" -d 6 -o "$OUT/t.pb.gz" -o "$OUT/t.jfr" -o "$OUT/t.html" \
		-o "$OUT/t.speedscope.json" 2>"$OUT/rec.err" 3>&- &
	local rec=$!
	sleep 1
	touch "$OUT/go"
	wait "$rec" || { cat "$OUT/rec.err"; false; }
	# pprof: A's samples all before B's (give or take the slot of the change), 2 s (20 slots) each
	local a0 a1 b0 b1 na nb
	read -r a0 a1 b0 b1 na nb < <(phase_times "$OUT/t.pb.gz")
	echo "phaseA $a0..$a1 ms ($na), phaseB $b0..$b1 ms ($nb)"
	((na >= 15 && nb >= 15 && a1 <= b0 + 100 && b1 - a0 >= 3000 && b1 - a0 <= 4500))
	run -0 go tool pprof -top -tagfocus="time_ms=0ms:$((a1 - 200))ms" "$OUT/t.pb.gz"
	[[ $output == *Phases.phaseA* && $output != *Phases.phaseB* ]]
	# report reads the times back and writes them again: the same phases
	run -0 "$JPROF" report "$OUT/t.pb.gz" -o "$OUT/again.pb.gz"
	[[ $(phase_times "$OUT/again.pb.gz") == "$a0 $a1 $b0 $b1 $na $nb" ]]
	# report --since/--until inside the recording: +offsets from its start
	run -0 "$JPROF" report "$OUT/t.pb.gz" --until "+$((a1 - 200))ms" -f folded
	[[ $output == *Phases.phaseA* && $output != *Phases.phaseB* ]]
	run -0 "$JPROF" report "$OUT/t.pb.gz" --since "+$((b0 + 100))ms" -f folded
	[[ $output == *Phases.phaseB* && $output != *Phases.phaseA* ]]
	# JFR: samples at their times, in order, inside the recording's window; A's before B's
	jfr_json() { "$JDK25/bin/jfr" print --json --events "$1" "$OUT/t.jfr"; }
	jfr_json jdk.ExecutionSample >"$OUT/exec.json"
	jfr_json jprof.Recording >"$OUT/rec.json"
	python3 - "$OUT/exec.json" "$OUT/rec.json" <<-'PY'
	import datetime, json, re, sys
	def ns(s):  # "2026-11-27T14:06:44.661996627Z"
	    m = re.match(r"(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$", s)
	    t = datetime.datetime.fromisoformat(m.group(1)).replace(tzinfo=datetime.timezone.utc)
	    return int(t.timestamp()) * 10**9 + int((m.group(2) or "0").ljust(9, "0"))
	def dur(s):  # "PT4.941457386S"
	    return int(round(float(re.match(r"PT([\d.]+)S", s).group(1)) * 1e9))
	ev = json.load(open(sys.argv[1]))["recording"]["events"]
	rec = json.load(open(sys.argv[2]))["recording"]["events"][0]["values"]
	start = ns(rec["startTime"]); end = start + dur(rec["duration"])
	t = [ns(e["values"]["startTime"]) for e in ev]
	assert len(t) > 100, len(t)
	assert all(a <= b for a, b in zip(t, t[1:])), "times go back"
	assert start <= t[0] and t[-1] <= end, (start, t[0], t[-1], end)
	def has(e, m):
	    return any(f["method"]["name"] == m for f in e["values"]["stackTrace"]["frames"])
	ta = [ns(e["values"]["startTime"]) for e in ev if has(e, "phaseA")]
	tb = [ns(e["values"]["startTime"]) for e in ev if has(e, "phaseB")]
	assert ta and tb and max(ta) <= min(tb) + 100 * 10**6, (max(ta), min(tb))
	print("jfr: %d samples %.3f..%.3f s of %.3f s" % (len(t), (t[0] - start) / 1e9, (t[-1] - start) / 1e9, (end - start) / 1e9))
	PY
	# speedscope: one profile per thread; the main thread's samples A then B, units
	python3 - "$OUT/t.speedscope.json" <<-'PY'
	import json, sys
	d = json.load(open(sys.argv[1]))
	fr = [f["name"] for f in d["shared"]["frames"]]
	main = [p for p in d["profiles"] if any(fr[i].startswith("Phases.phaseA") for s in p["samples"] for i in s)]
	assert len(main) == 1 and len(d["profiles"]) > 1, [p["name"] for p in d["profiles"]]
	p = main[0]
	assert p["type"] == "sampled" and p["unit"] in ("none", "nanoseconds") and len(p["samples"]) == len(p["weights"])
	assert p["endValue"] == sum(p["weights"])
	ph = [("A" if any(fr[i].startswith("Phases.phaseA") for i in s) else "B")
	      for s in p["samples"] if any(fr[i].startswith("Phases.phase") for i in s)]
	assert "".join(ph).rstrip("B").count("B") <= 1 and ph[0] == "A" and ph[-1] == "B", "".join(ph)
	PY
	# HTML: a drag over the timeline up to A's end shows A, not B; the link to a B range too
	local frac hfrac
	read -r frac hfrac < <(python3 - "$OUT/t.html" "$a1" <<-'PY'
	import json, re, sys
	doc = open(sys.argv[1]).read()
	t = json.loads(re.search(r'<script id="jp-data" type="application/json">(.*?)</script>', doc, re.S).group(1))["time"]
	# the timeline up to A's end less a slot or two; the heatmap's columns (seconds) before it
	cols = -(-t["nslots"] * t["res_ms"] // 1000)
	print(round((int(sys.argv[2]) - 200) / (t["nslots"] * t["res_ms"]), 3), round((int(sys.argv[2]) // 1000) / cols, 3))
	PY
	)
	drive timeline "$OUT/t.html" load shot:timeline-load "brush:tl:0:$frac" shot:timeline-brush \
		search:Phases.phaseB search:Phases.phaseA by:thread "open:t=$((b0 + 300))-$((b1 - 100))" \
		search:Phases.phaseB search:Phases.phaseA shot:timeline-link "brush:hm:0:$hfrac" \
		shot:timeline-heatmap search:Phases.phaseB "open:t=$((b0 + 300))-$((b1 - 100))" \
		"brush:tl:0:$frac:shift" pixel:Phases.phaseB shot:timeline-compare
	[[ $(step load 's["time"]["res_ms"]') == 100 ]]
	[[ $(step load 's["time"]["range"]') == null ]]
	[[ $(step "brush:tl:0:$frac" 's["time"]["range"][1] <= '"$a1") == true ]]
	[[ $(step "brush:tl:0:$frac" 's["time"]["hash"]') == "#t=0-"* ]]
	python3 - "$LOG" <<-'PY'
	import json, sys
	st = [json.loads(l) for l in open(sys.argv[1])]
	seq = [(d["step"], d.get("state", {})) for d in st]
	# in order: after the brush, B not matched, A matched; after the link, the other way round
	s = [x for x in seq if x[0].startswith("search:")]
	assert s[0][0] == "search:Phases.phaseB" and s[0][1]["highlighted"] == [], s[0]
	assert "Phases.phaseA" in s[1][1]["highlighted"], s[1]
	assert "Phases.phaseB" in s[2][1]["highlighted"], s[2]
	assert s[3][1]["highlighted"] == [], s[3]
	# the heatmap's first whole seconds of A: no B
	assert s[4][1]["highlighted"] == [] and s[4][1]["time"]["range"][0] == 0, s[4]
	by = [x for x in seq if x[0] == "by:thread"][0][1]["time"]
	assert by["by"] == "thread" and "&by=thread" in by["hash"] and any("[" in g for g in by["groups"]), by
	o = [x for x in seq if x[0].startswith("open:")][0][1]["time"]
	assert o["range"] and o["by"] == "proc", o
	# shift-drag over A: B's range compared with A's, phaseB (new there) coloured as grown
	c = [x for x in seq if x[0].endswith(":shift")][0][1]["time"]
	assert c["base"] and c["base"][0] == 0 and c["range"][0] > c["base"][1] and c["changed"] > 0, c
	assert "&b=0-" in c["hash"] or "b=0-" in c["hash"], c
	rgb = [d["rgb"] for d in st if d["step"] == "pixel:Phases.phaseB"][0]
	assert rgb[0] > rgb[1] + 60 and rgb[0] > rgb[2] + 60, rgb
	PY
	[[ $(grep -c '"error"' "$LOG") == 0 ]]
}

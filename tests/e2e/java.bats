#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# java.bats: Java stacks joined with native and kernel frames, on JDK 17 and JDK 25.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

# start_java JDK_HOME MODE SECONDS [JVM flags...]: sets JPID, waits for "ready"
start_java() {
	local home=$1 mode=$2 secs=$3
	shift 3
	require_jdk "$home"
	"$home/bin/java" "$@" -Djava.library.path="$APPS" -cp "$APPS" JavaHot "$mode" "$secs" \
		>"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1 # let the JIT compile the hot methods
}

tid_of() { # tid_of PID THREAD_NAME
	grep -lx "$2" /proc/"$1"/task/*/comm | head -1 | awk -F/ '{ print $5 }'
}

cpu_ticks() { # utime + stime of a thread
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/task/$2/stat"
}

# profiles the split workload and compares each method's share with its thread's CPU time
check_split() {
	local ta tb a0 b0 a1 b1 a b
	ta=$(tid_of "$JPID" worker-a)
	tb=$(tid_of "$JPID" worker-b)
	[[ -n $ta && -n $tb ]]
	a0=$(cpu_ticks "$JPID" "$ta")
	b0=$(cpu_ticks "$JPID" "$tb")
	run -0 "$JPROF" record --samples -p "$JPID" -F 199 -d 5 --per-thread -o "$OUT/s.folded" "$@"
	echo "$output"
	a1=$(cpu_ticks "$JPID" "$ta")
	b1=$(cpu_ticks "$JPID" "$tb")
	REPORT=$output
	a=$(folded_sum ';JavaHot\.spinA_' "$OUT/s.folded")
	b=$(folded_sum ';JavaHot\.spinB_' "$OUT/s.folded")
	# thread roots carry the Java thread names
	grep -Eq "^java \[$JPID\][^;]*;worker-a \[$ta\];.*JavaHot\.spinA_" "$OUT/s.folded"
	grep -Eq "^java \[$JPID\][^;]*;worker-b \[$tb\];.*JavaHot\.spinB_" "$OUT/s.folded"
	(( a + b > 300 ))
	awk -v a="$a" -v b="$b" -v ca=$((a1 - a0)) -v cb=$((b1 - b0)) 'BEGIN {
		p = 100 * a / (a + b); t = 100 * ca / (ca + cb);
		printf "spinA share: profile %.1f%% (%d/%d), thread CPU %.1f%% (%d/%d ticks)\n", p, a, a + b, t, ca, ca + cb;
		exit (p - t > 5 || t - p > 5) }'
	# the stack reads root to leaf: thread entry, then the hot loop
	grep -Eq 'java/lang/Thread\.run(With)?_\[[0j]\];.*JavaHot\.spinA_\[[0j]\];JavaHot\.countedLoop_\[j\]' "$OUT/s.folded"
}

# complete Java stacks of the JVM's Java-thread samples once its agent was connected, in
# percent, from the report line (sampling starts before the attach: the samples taken
# before it are marked and counted as "agent not yet attached")
complete_pct() {
	local line java complete noagent
	line=$(grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT" | head -1)
	java=$(sed -nE 's/.* ([0-9]+) in Java threads .*/\1/p' <<<"$line")
	complete=$(sed -nE 's/.* of which ([0-9]+) with complete Java stacks.*/\1/p' <<<"$line")
	noagent=$(sed -nE 's/.*[ ,]([0-9]+) agent not yet attached.*/\1/p' <<<"$line")
	awk -v j="${java:-0}" -v c="${complete:-0}" -v n="${noagent:-0}" \
		'BEGIN { if (j - n > 0) printf "%.1f\n", 100 * c / (j - n); else print 0 }'
}

@test "jdk17, dynamic attach: per-method shares match per-thread CPU time" {
	start_java "$JDK17" split 20
	check_split
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 98) }'
	# the agent's own time per stack request, from its handler's clock
	us=$(sed -nE "s/^jprof: JVM $JPID \([^)]*\): .*stack requests: [1-9][0-9]*, ([0-9.]+) us each in the agent.*/\1/p" <<<"$REPORT")
	echo "agent handler: ${us:-none} us per request"
	awk -v u="${us:-0}" 'BEGIN { exit !(u > 0 && u < 1000) }'
}

@test "jdk25, dynamic attach: per-method shares match per-thread CPU time" {
	start_java "$JDK25" split 20
	check_split
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 98) }'
}

@test "jdk17, -agentpath: shares, no safepoint bias, inlined frames" {
	start_java "$JDK17" split 20 -agentpath:"$JPROF_AGENT"
	check_split --no-attach
	# the poll-free counted loop (and what C2 inlined into it) holds nearly all of spinA's samples
	loop=$(folded_sum ';JavaHot\.countedLoop_\[j\](;JavaHot\.tiny_\[i\])?( |;)' "$OUT/s.folded")
	a=$(folded_sum ';JavaHot\.spinA_' "$OUT/s.folded")
	echo "countedLoop: $loop of $a spinA samples"
	(( loop * 100 >= a * 90 ))
	grep -Eq ';JavaHot\.countedLoop_\[j\];JavaHot\.tiny_\[i\] [0-9]+$' "$OUT/s.folded"
}

@test "jdk25, -agentpath: shares and inlined frames" {
	start_java "$JDK25" split 20 -agentpath:"$JPROF_AGENT"
	check_split --no-attach
	grep -Eq ';JavaHot\.countedLoop_\[j\];JavaHot\.tiny_\[i\] [0-9]+$' "$OUT/s.folded"
}

@test "-Xint: interpreted frames carry _[0]" {
	start_java "$JDK17" split 20 -Xint
	run -0 "$JPROF" record -p "$JPID" -F 199 -d 3 -o "$OUT/x.folded"
	grep -Eq ';JavaHot\.spinA_\[0\];JavaHot\.countedLoop_\[0\]' "$OUT/x.folded"
	! grep -q '_\[j\]' "$OUT/x.folded"
}

@test "JNI: Java, then native, then kernel frames in one stack" {
	start_java "$JDK17" jni 20
	run -0 "$JPROF" record -p "$JPID" -F 199 -d 3 -o "$OUT/n.folded"
	grep -Eq ';JavaHot\.jniLoop_\[[0ji]\];JavaHot\.nativeWrites;Java_JavaHot_nativeWrites;([^;]*;)*[^;]*_\[k\]' "$OUT/n.folded"
	# no Java frame above a native or kernel one
	! grep -Eq '_\[k\];.*JavaHot' "$OUT/n.folded"
}

@test "native threads of a JVM are not asked again; one that attaches later gets Java stacks" {
	start_java "$JDK17" jniattach 8
	# about 3 s of the jnat thread spinning in C, then 4 s attached, spinning in Java
	run -0 "$JPROF" record --samples -p "$JPID" -F 499 -d 7 --per-thread -o "$OUT/t.folded"
	echo "$output"
	local skipped native java attached
	skipped=$(grep -Eo '\([0-9]+ not asked again\)' <<<"$output" | grep -Eo '[0-9]+')
	native=$(folded_sum ';jnat \[[0-9]+\];.*jnat_spin' "$OUT/t.folded")
	attached=$(grep -E ';jnat \[[0-9]+\];' "$OUT/t.folded" | grep -v jnat_spin |
		awk '{ s += $NF } END { print s + 0 }')
	java=$(folded_sum ';jnat \[[0-9]+\];.*JavaHot\.attachedWork_\[[0ji]\]' "$OUT/t.folded")
	echo "not asked again: $skipped; jnat: $native native, $attached attached of which $java with Java frames"
	# the native phase: asked once, then not again (GC threads add to the count)
	((native > 300 && skipped * 4 > native * 3))
	# the attached phase: a re-ask found it a Java thread; its samples have Java stacks
	((attached > 300 && java * 100 >= attached * 90))
	wait "$JPID"
	JPID=
	grep -q 'attached true' "$OUT/java.out"
}

@test "jprof killed with SIGKILL: the JVM finishes its work correctly" {
	start_java "$JDK17" split 6
	"$JPROF" record -p "$JPID" -F 999 -o "$OUT/k.folded" 2>/dev/null 3>&- &
	local jp=$!
	sleep 2
	kill -9 "$jp"
	wait "$jp" 2>/dev/null || true
	local rc=0
	wait "$JPID" || rc=$?
	JPID=
	echo "JVM exit code: $rc"
	[[ $rc -eq 0 ]]
	grep -q '^done ' "$OUT/java.out"
	! grep -qi 'fatal\|SIGSEGV\|hs_err' "$OUT/java.err" "$OUT/java.out"
}

@test "attaching twice reuses the loaded agent" {
	start_java "$JDK17" split 20
	run -0 "$JPROF" record -p "$JPID" -d 2 -o "$OUT/1.folded"
	grep -q 'JavaHot.spinA_' "$OUT/1.folded"
	[[ $(grep -c jprof-agent /proc/"$JPID"/maps | head -1) -ge 1 ]]
	run -0 "$JPROF" record -p "$JPID" -d 2 -o "$OUT/2.folded"
	grep -q 'JavaHot.spinA_' "$OUT/2.folded"
	# one agent library mapped, not two
	[[ $(grep jprof-agent /proc/"$JPID"/maps | awk '{ print $6 }' | sort -u | wc -l) -eq 1 ]]
	kill -0 "$JPID"
}

# An agent serves one recording after another: its counters in each report are that
# recording's, not its life's (the second one showed the first one's requests too)
@test "the agent's counters in a report are that recording's" {
	local rec req n
	start_java "$JDK17" split 30
	for rec in 1 2; do
		run -0 "$JPROF" record -p "$JPID" -F 499 --java-walk signal -d 2 -o "$OUT/$rec.folded"
		req=$(sed -nE "s/^jprof: JVM $JPID \([^)]*\): .*stack requests: ([0-9]+),.*/\1/p" <<<"$output")
		n=$(sed -nE "s/^jprof: JVM $JPID \([^)]*\): ([0-9]+) samples,.*/\1/p" <<<"$output")
		echo "recording $rec: $n samples, $req stack requests"
		# a signal per Java sample: about as many requests as samples, never twice as many
		((n > 100 && req * 10 <= n * 12))
	done
}

@test "a JVM with attach disabled gets a clear warning, and Java frames read from its memory" {
	start_java "$JDK17" split 20 -XX:+DisableAttachMechanism
	run -0 "$JPROF" record -p "$JPID" -d 2 -o "$OUT/d.folded"
	[[ $output == *"attach mechanism disabled"* ]]
	[[ $(folded_total "$OUT/d.folded") -gt 0 ]]
	# no agent: BPF walks it (never a signal) and jprof names the frames from its memory
	grep -q 'JavaHot.spinA_' "$OUT/d.folded"
	kill -0 "$JPID"
}

@test "record -a attaches every JVM and shows Java frames for each" {
	start_java "$JDK17" split 20
	local first=$JPID
	start_java "$JDK25" split 20
	run -0 "$JPROF" record -a -d 3 --per-pid -o "$OUT/all.folded"
	echo "$output"
	grep -Eq "^java \[$first\][^;]*;.*JavaHot\.spinA_" "$OUT/all.folded"
	grep -Eq "^java \[$JPID\][^;]*;.*JavaHot\.spinA_" "$OUT/all.folded"
	{ kill -9 "$first" && wait "$first"; } 2>/dev/null || true
}

@test "record -a attaches a JVM that starts during the recording" {
	"$JPROF" record -a -d 8 --per-pid -o "$OUT/late.folded" 2>"$OUT/late.err" 3>&- &
	local jp=$!
	sleep 1
	start_java "$JDK17" split 12
	local rc=0
	wait "$jp" || rc=$?
	cat "$OUT/late.err"
	[[ $rc -eq 0 ]]
	grep -Eq "^java \[$JPID\][^;]*;.*JavaHot\.countedLoop_\[j\]" "$OUT/late.folded"
}

@test "jprof list shows the JVM with its version, then the loaded agent" {
	start_java "$JDK17" split 20
	run -0 "$JPROF" list
	echo "$output"
	grep -Eq "^$JPID +$JPID +root +17\.[0-9.]+ +none +- +- +JavaHot$" <<<"$output"
	run -0 "$JPROF" record -p "$JPID" -d 1 -o "$OUT/l.folded"
	run -0 "$JPROF" list
	# loaded, with no JVMTI event on (a CPU recording asks for none)
	grep -Eq "^$JPID .* loaded +- .*JavaHot$" <<<"$output"
}

@test "--dotted and --lines: java.lang.Thread.run, and source lines inside the method" {
	start_java "$JDK17" split 20
	run -0 "$JPROF" record -p "$JPID" -F 199 -d 2 --dotted --lines -o "$OUT/dl.folded"
	grep -q ';java\.lang\.Thread\.run:[0-9]\+_\[[0ji]\];' "$OUT/dl.folded"
	! grep -q 'java/lang/' "$OUT/dl.folded"
	# countedLoop's frames carry lines of countedLoop's body in JavaHot.java
	local first last lines
	first=$(grep -n 'static long countedLoop' "$REPO/tests/apps/JavaHot.java" | cut -d: -f1)
	last=$((first + 6))
	lines=$(grep -o 'JavaHot\.countedLoop:[0-9]*' "$OUT/dl.folded" | cut -d: -f2 | sort -u)
	echo "countedLoop lines seen: $lines (method spans $first-$last)"
	[[ -n $lines ]]
	for l in $lines; do ((l > first && l <= last)); done
}

@test "late attach: inlined frames are reported missing, and --recompile brings them back" {
	start_java "$JDK17" split 30
	sleep 2 # the hot loop is compiled before the agent comes
	run -0 "$JPROF" record -p "$JPID" -F 199 -d 3 -o "$OUT/late.folded"
	echo "$output"
	[[ $output == *"agent attached late"*"--recompile"* ]]
	! grep -q 'JavaHot\.tiny_\[i\]' "$OUT/late.folded"
	{ kill -9 "$JPID" && wait "$JPID"; } 2>/dev/null || true
	start_java "$JDK17" split 30
	sleep 2
	run -0 "$JPROF" record -p "$JPID" -F 199 -d 5 --recompile -o "$OUT/recompiled.folded"
	echo "$output"
	grep -Eq ';JavaHot\.countedLoop_\[j\];JavaHot\.tiny_\[i\] [0-9]+$' "$OUT/recompiled.folded"
	kill -0 "$JPID"
}

@test "the agent names JIT code of samples without a Java stack; a perf map only with --perf-map" {
	# testfault=1: every stack walk faults on purpose, so no sample has a Java stack
	start_java "$JDK17" split 20 -agentpath:"$JPROF_AGENT"=testfault=1
	rm -f "/tmp/perf-$JPID.map"
	run -0 "$JPROF" record --no-attach -p "$JPID" -F 199 -d 3 -o "$OUT/nj.folded"
	echo "$output"
	[[ ! -e /tmp/perf-$JPID.map ]]
	# the JIT frames of the native walk, named by the agent's dictionary (no perf map read)
	grep -E '^java;\[no Java stack[^;]*\];.*JavaHot\.[a-zA-Z]+_\[j\]' "$OUT/nj.folded"
	kill_jpid
	# the agent loaded by an attach of --perf-map writes one, for perf and other tools
	start_java "$JDK17" split 20
	rm -f "/tmp/perf-$JPID.map"
	run -0 "$JPROF" record --perf-map -p "$JPID" -F 199 -d 2 -o "$OUT/pm.folded"
	grep -q 'JavaHot::' "/tmp/perf-$JPID.map"
	rm -f "/tmp/perf-$JPID.map"
	grep -Eq ';JavaHot\.[a-zA-Z]+_\[j\] [0-9]+$' "$OUT/pm.folded"
}

@test "--no-attach: no agent loaded, Java stacks from BPF's walk named from the JVM's memory" {
	start_java "$JDK17" split 20
	rm -f "/tmp/perf-$JPID.map"
	"$JDK17/bin/jcmd" "$JPID" Compiler.perfmap >/dev/null
	run -0 "$JPROF" record --no-attach -p "$JPID" -F 199 -d 2 -o "$OUT/na.folded"
	echo "$output"
	rm -f "/tmp/perf-$JPID.map"
	[[ $output == *"no jprof agent loaded (--no-attach)"* ]]
	[[ $output == *"1 JVMs (0 with Java stacks)"* ]]
	# whole Java stacks, named as the agent names them (not jcmd's "long JavaHot.countedLoop(int)")
	grep -Eq '^java;java/lang/Thread\.run_\[0\];.*JavaHot\.countedLoop_\[j\] [0-9]+$' "$OUT/na.folded"
	if grep -q 'countedLoop(int)' "$OUT/na.folded" || grep -q jprof-agent "/proc/$JPID/maps"; then
		false
	fi
}

@test "a JVM that execs a new JVM in the same pid is attached again" {
	local go=$OUT/go jp i
	[[ -f $APPS/SignalSafety.class && -f $APPS/libsigsafety.so ]] ||
		{ missing "SignalSafety and libsigsafety.so (make apps)"; return; }
	# SignalSafety spins, then (1.5 s after go) execs JavaHot's JVM in its own pid
	"$JDK17/bin/java" -Djava.library.path="$APPS" -cp "$APPS" SignalSafety exec cpu "$go" 4 \
		"$JDK17/bin/java" -cp "$APPS" JavaHot split 8 >"$OUT/jvm.out" 2>&1 3>&- &
	JPID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready' "$OUT/jvm.out" 2>/dev/null && break
		sleep 0.1
	done
	"$JPROF" record -v -p "$JPID" -d 9 -o "$OUT/x.folded" 2>"$OUT/err" &
	jp=$!
	sleep 1.5
	touch "$go"
	wait "$jp"
	cat "$OUT/jvm.out"
	grep -v 'debug:' "$OUT/err"
	grep -q "JVM $JPID exec'd another program: retired, looked at again" "$OUT/err"
	# the first program's Java frames, then the second's: its JVM got an agent of its own
	grep -q 'SignalSafety\.spinFor' "$OUT/x.folded"
	grep -q 'JavaHot\.spinA' "$OUT/x.folded"
	grep -Eq "^jprof: JVM $JPID \(JavaHot\): Java stacks from" "$OUT/err"
}

#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# realapps.bats: complete Java stacks on real JIT-heavy work (javac on java.util) and on VM stubs.
bats_require_minimum_version 1.5.0

load helpers

SRC17=/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip # openjdk-17-source
SRC25=/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

# unpack_src ZIP DIR: java.base's java/util (without java/util/concurrent): about 270 real
# sources that compile standalone with --patch-module java.base=DIR/java.base
unpack_src() {
	local zip=$1 dir=$2
	[[ -r $zip ]] || { missing "JDK sources $zip (Debian: openjdk-17-source)"; return; }
	mkdir -p "$dir"
	(cd "$dir" && unzip -q "$zip" 'java.base/java/util/*')
	find "$dir" -name '*.java' ! -path '*/java/util/concurrent/*' >"$dir/files.txt"
	(($(wc -l <"$dir/files.txt") > 200))
}

# percent of the JVM's Java-thread samples with complete Java stacks once its agent
# answered, from jprof's own per-JVM line in $REPORT: the samples of the JVM's start-up,
# before the agent was attached ("agent not yet attached"), loaded ("no agent") or had
# its handler up ("agent not ready"), are left out; every stack walk failure counts
complete_pct() {
	local line java complete pre=0 n
	line=$(grep -E "^jprof: JVM $JPID \(java\): " <<<"$REPORT" | head -1)
	[[ -n $line ]] || { echo "no per-JVM line for $JPID" >&2; return 1; }
	java=$(sed -nE 's/.* ([0-9]+) in Java threads .*/\1/p' <<<"$line")
	complete=$(sed -nE 's/.* of which ([0-9]+) with complete Java stacks.*/\1/p' <<<"$line")
	for why in "agent not yet attached" "no agent" "agent not ready"; do
		n=$(sed -nE "s/.*[ ,]([0-9]+) $why[,;]?( |\$).*/\1/p" <<<"$line")
		pre=$((pre + ${n:-0}))
	done
	awk -v j="${java:-0}" -v c="${complete:-0}" -v n="$pre" \
		'BEGIN { if (j - n > 0) printf "%.1f\n", 100 * c / (j - n); else print 0 }'
}

# javac_run JDK_HOME SRC_ZIP MODE(p|a): javac compiles java.util while jprof records it
# at 999 Hz for 12 s: p: -p PID, the agent attached by jprof; a: -a, the agent loaded with
# -J-agentpath. Checks javac's exit code, completeness >= 95% and javac's own frames.
javac_run() {
	local home=$1 zip=$2 mode=$3 src=$OUT/src pid rc=0 agent=()
	require_jdk "$home"
	unpack_src "$zip" "$src"
	[[ $mode == a ]] && agent=(-J-agentpath:"$JPROF_AGENT")
	"$home/bin/javac" "${agent[@]}" -nowarn -XDignore.symbol.file \
		--patch-module java.base="$src/java.base" -d "$OUT/classes" @"$src/files.txt" \
		>"$OUT/javac.log" 2>&1 3>&- &
	JPID=$!
	if [[ $mode == p ]]; then
		# an attach while the JVM is still in its start phase fails (GetEnv: JNI_EDETACHED
		# before the live phase, "Agent_OnAttach returned -1", not retried): that is
		# start-up attach, not the walk this file measures; javac is live after 1 s
		sleep 1
		run -0 "$JPROF" record -p "$JPID" --per-pid -F 999 -d 12 -o "$OUT/j.folded"
	else
		run -0 "$JPROF" record -a --no-attach --per-pid -F 999 -d 12 -o "$OUT/j.folded"
	fi
	REPORT=$output
	grep -E "^jprof: JVM $JPID " <<<"$REPORT"
	grep -a 'jprof agent' "$OUT/javac.log" || true # the agent's own word, if any
	pid=$JPID
	wait "$JPID" || rc=$?
	JPID=
	((rc == 0)) || { cat "$OUT/javac.log"; echo "javac exited $rc"; return 1; }
	# the compiler really ran, under the profile, in its own Java code
	[[ -s $OUT/classes/java/util/ArrayList.class || -s $OUT/classes/java.base/java/util/ArrayList.class ]]
	n=$(folded_sum 'com/sun/tools/javac/(comp|code|jvm|parser)/[A-Za-z$]+\.[A-Za-z<>$]+_\[[ji0]\]' \
		"$OUT/j.folded")
	echo "samples in javac's compiled or interpreted frames: $n"
	((n > 300))
	# and the stacks are whole, not cut at a wrong guess of the fallback: javac's Java
	# stacks start at its main (or a thread's run) in nearly every sample that has one
	grep -E "^[^;]* \[$pid\];" "$OUT/j.folded" | awk '/_\[[ji0]\]/ && !/\[no Java stack/ {
		t += $NF; if ($0 ~ /com\/sun\/tools\/javac\/Main\.main_|java\/lang\/Thread\.run/) r += $NF }
		END { printf "Java stacks rooted at main or Thread.run: %d of %d\n", r, t
			exit !(t > 0 && r * 100 >= t * 98) }'
	pct=$(JPID=$pid complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 95) }'
}

# math_run JDK_HOME: a loop of Math.sin/cos/sqrt/log, whose samples land in VM stubs and
# intrinsics (AGCT alone: about 10% complete); >= 95% with the fallback walk, which says so.
# -agentpath: this build's agent, whoever else attaches to the JVM
math_run() {
	local home=$1 rc=0
	require_jdk "$home"
	"$home/bin/java" -agentpath:"$JPROF_AGENT" -cp "$APPS" MathLoop 12 >"$OUT/math.out" 2>&1 3>&- &
	JPID=$!
	wait_file "$OUT/math.out" 20
	sleep 1 # past start-up: steady state
	run -0 "$JPROF" record -p "$JPID" --no-attach -F 999 -d 6 -o "$OUT/m.folded"
	REPORT=$output
	grep -E "^jprof: JVM $JPID " <<<"$REPORT"
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	grep -Eq "^jprof: JVM $JPID \(java\): .*fallback walker: [1-9][0-9]* of [0-9]+ AGCT failures recovered" <<<"$REPORT"
	# the loop's own frame under main, in most of the profile (pre-attach samples included)
	k=$(folded_sum '^java;MathLoop\.main_\[[0ij]\];MathLoop\.kernel_\[j\]' "$OUT/m.folded")
	all=$(folded_total "$OUT/m.folded")
	echo "MathLoop.kernel: $k of $all samples"
	((k > 300 && k * 100 >= all * 80))
	awk -v p="$pct" 'BEGIN { exit !(p >= 95) }'
	wait "$JPID" || rc=$?
	JPID=
	((rc == 0)) || { cat "$OUT/math.out"; echo "MathLoop exited $rc"; return 1; }
}

@test "jdk17 javac, -p (attach): >= 95% complete Java stacks, javac's frames, no crash" {
	javac_run "$JDK17" "$SRC17" p
}

@test "jdk25 javac, -p (attach): >= 95% complete Java stacks, javac's frames, no crash" {
	javac_run "$JDK25" "$SRC25" p
}

@test "jdk17 javac, -a, -agentpath: >= 95% complete Java stacks, javac's frames, no crash" {
	javac_run "$JDK17" "$SRC17" a
}

@test "jdk25 javac, -a, -agentpath: >= 95% complete Java stacks, javac's frames, no crash" {
	javac_run "$JDK25" "$SRC25" a
}

@test "jdk17 Math.sin/sqrt loop (VM stubs, intrinsics): >= 95% complete" {
	math_run "$JDK17"
}

@test "jdk25 Math.sin/sqrt loop (VM stubs, intrinsics): >= 95% complete" {
	math_run "$JDK25"
}

# a fault inside the fallback walk (testfault=N: every Nth AGCT walk and every Nth fallback
# read a PROT_NONE page) is caught: the sample keeps AGCT's own answer, the agent counts
# the fault, the JVM runs on and the other fallbacks still recover their samples
@test "jdk17 Math loop, faults inside the fallback walk are caught, counted, reported" {
	local rc=0 pid agent_faults walk_faults unknown
	require_jdk "$JDK17"
	(cd "$OUT" && exec "$JDK17/bin/java" -agentpath:"$JPROF_AGENT"=testfault=5 -cp "$APPS" \
		MathLoop 8 >"$OUT/math.out" 2>&1 3>&-) &
	JPID=$!
	pid=$JPID
	wait_file "$OUT/math.out" 20
	run -0 "$JPROF" record -p "$JPID" --no-attach -F 999 -d 4 -o "$OUT/m.folded"
	REPORT=$output
	grep -E "^jprof: JVM $JPID " <<<"$REPORT"
	wait "$JPID" || rc=$?
	JPID=
	((rc == 0)) || { cat "$OUT/math.out"; echo "MathLoop exited $rc"; return 1; }
	! grep -q 'jprof agent:' "$OUT/math.out"
	[[ ! -e $OUT/hs_err_pid$pid.log ]]
	agent_faults=$(grep -Eo '[0-9]+ faults' <<<"$REPORT" | awk '{ print $1 }' | head -1)
	walk_faults=$(grep -Eo '[0-9]+ stack walk faulted \(caught\)' <<<"$REPORT" | awk '{ print $1 }' | head -1)
	unknown=$(grep -Eo '[0-9]+ unknown, Java' <<<"$REPORT" | awk '{ print $1 }' | head -1)
	echo "agent faults ${agent_faults:-0}, of AGCT walks ${walk_faults:-0}, kept 'unknown, Java' ${unknown:-0}"
	# the fallback's own faults: counted by the agent beyond the AGCT walks' faults
	((${agent_faults:-0} > ${walk_faults:-0} && ${unknown:-0} > 0))
	grep -Eq "^jprof: JVM $pid \(java\): .*fallback walker: [1-9][0-9]* of [0-9]+ AGCT failures recovered" <<<"$REPORT"
}

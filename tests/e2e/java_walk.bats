#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# java_walk.bats: the Java walk in BPF (--java-walk shadow) on JDK 17 and JDK 25. BPF walks
# the Java frames of every sample in the code cache by the layout the agent read from
# libjvm's VMStructs, the agent's signal handler still walks the same instant with
# AsyncGetCallTrace, and the join compares both sample by sample. realapps.bats does the
# same on javac, where the walks meet interpreted frames, entry frames and deep inlining.
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

# shadow_run JDK_HOME: JavaHot split (two threads in compiled loops, main interpreted)
# recorded at 999 Hz with the BPF walk beside the agent's
shadow_run() {
	local home=$1
	require_jdk "$home"
	"$home/bin/java" -cp "$APPS" JavaHot split 12 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 1
	run -0 "$JPROF" record -p "$JPID" -F 999 -d 6 --per-thread --java-walk shadow \
		-o "$OUT/w.folded"
	REPORT=$output
	echo "$REPORT" | grep -E "^jprof: JVM $JPID"
	# the profile is the agent's, as without the option
	(($(folded_sum 'JavaHot\.spinA_\[[0j]\];JavaHot\.countedLoop_\[j\]' "$OUT/w.folded") > 1000))
}

@test "jdk17: BPF walks the Java stacks of samples in Java code, the same as the agent's" {
	shadow_run "$JDK17"
	# nearly every sample is in JIT code: walked whole; all agree (main is interpreted:
	# its Method* is named from the first agreeing samples)
	jwalk_check "$JPID" 95 99.5 0.5
}

@test "jdk25: BPF walks the Java stacks of samples in Java code, the same as the agent's" {
	shadow_run "$JDK25"
	jwalk_check "$JPID" 95 99.5 0.5
}

@test "--java-walk: a bad mode is refused with a clear error" {
	run -2 "$JPROF" record -a -d 1 --java-walk sometimes -o "$OUT/x.folded"
	[[ $output == *"--java-walk: 'sometimes': expected shadow or signal"* ]]
	[[ ! -e $OUT/x.folded ]]
}

#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# early_walk.bats: Java stacks before the agent is in (issue 31). jprof reads the layout of
# BPF's Java walk from outside a JVM it finds (libjvm.so's VMStructs, the JVM's memory) and
# BPF walks it at once, without a signal; the join holds the raw frames until the agent's
# dictionary names them. A JVM started during `record -a`: the share of its Java samples
# with complete Java stacks over its whole life, before (--java-walk signal: no BPF walk)
# and after. A JVM with -XX:+DisableAttachMechanism is walked and never signalled: it lives,
# its Java frames are named from its memory. JDK 17 and 25.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	JPID=
	JPROF_PID=
	NS_PID=
	NS_USER=
}

teardown() {
	if [[ -n ${JPROF_PID:-} ]]; then
		{ kill -9 "$JPROF_PID" && wait "$JPROF_PID"; } 2>/dev/null || true
	fi
	kill_jpid
	ns_teardown
}

# whole_pct: the per-JVM line's "with complete Java stacks (P%)" of JVM $JPID in $REPORT: all
# its samples of Java threads, from its first to its last (before the agent too)
whole_pct() {
	grep -E "^jprof: JVM $JPID \([^)]*\): [0-9]+ samples, " <<<"$REPORT" | head -1 |
		sed -nE 's/.* with complete Java stacks \(([0-9.]+)%\).*/\1/p'
}

# started_during JDK MODE: `record -a` with --java-walk MODE; JavaHot starts 1 s in and runs
# 5 s: its agent is attached once it is a second old, and loaded in a busy JVM after that
started_during() {
	local jdk=$1 mode=$2 i
	require_jdk "$jdk"
	"$JPROF" record -v -a -F 499 -d 9 --java-walk "$mode" -o "$OUT/$mode.folded" \
		2>"$OUT/$mode.err" 3>&- &
	JPROF_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q "recording" "$OUT/$mode.err" 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	# other engineers' tests may attach to any JVM: accept it quietly (JDK 17 ignores the option)
	"$jdk/bin/java" -XX:+IgnoreUnrecognizedVMOptions -XX:+EnableDynamicAgentLoading -cp "$APPS" \
		JavaHot split 5 >"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	wait "$JPID"
	JPID_DONE=$JPID
	JPID=
	wait "$JPROF_PID"
	JPROF_PID=
	REPORT=$(cat "$OUT/$mode.err")
}

early_run() {
	local jdk=$1 before after line held named mem
	started_during "$jdk" signal
	before=$(JPID=$JPID_DONE whole_pct)
	started_during "$jdk" bpf
	after=$(JPID=$JPID_DONE whole_pct)
	grep -E "^jprof: (JVM $JPID_DONE|Java walk before)" <<<"$REPORT"
	line=$(grep -E "^jprof: JVM $JPID_DONE: walked in BPF before its agent: " <<<"$REPORT")
	held=$(sed -nE 's/.*: ([0-9]+) samples held.*/\1/p' <<<"$line")
	named=$(sed -nE 's/.*held, ([0-9]+) named.*/\1/p' <<<"$line")
	mem=$(sed -nE "s/.*, ([0-9]+) named from the JVM's memory.*/\1/p" <<<"$line")
	echo "complete Java stacks over the JVM's life: before $before%, after $after%;" \
		"walked before its agent: $held, named by the agent $named, from memory $mem"
	# the walk before the agent worked, and its samples were named: by the agent's dictionary
	# once it came, the rest (methods no later sample taught) from the JVM's memory
	((held > 0 && (named + mem) * 100 >= held * 90))
	# the layout read from outside is the agent's
	grep -qE "^jprof: Java walk before the agent: .* [1-9][0-9]* the same, 0 different" <<<"$REPORT"
	awk -v a="$after" 'BEGIN { exit !(a >= 95) }'
}

@test "jdk17: a JVM started during record -a has Java stacks before its agent is in" {
	early_run "$JDK17"
}

@test "jdk25: a JVM started during record -a has Java stacks before its agent is in" {
	early_run "$JDK25"
}

# noattach_run JDK: a JVM that refuses agents, recorded alone: walked, never signalled, its
# methods named from its memory as the agent would name them
noattach_run() {
	local jdk=$1 samples mem spin busy
	require_jdk "$jdk"
	"$jdk/bin/java" -XX:+DisableAttachMechanism -cp "$APPS" JavaHot split 12 \
		>"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	run -0 "$JPROF" record --samples -v -p "$JPID" -F 999 -d 4 -o "$OUT/n.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID|Java walk before|debug: bpf:)" <<<"$REPORT"
	# never signalled, and alive
	grep -qE "^jprof: debug: bpf: [0-9]+ samples, .*, 0 signals " <<<"$REPORT"
	kill -0 "$JPID"
	samples=$(folded_total "$OUT/n.folded")
	mem=$(grep -E "^jprof: JVM $JPID: walked in BPF before its agent: " <<<"$REPORT" |
		sed -nE "s/.*, ([0-9]+) named from the JVM's memory.*/\1/p")
	# the same stacks as the agent's walk gives (java_walk.bats): whole, from Thread.run
	spin=$(folded_sum 'Thread\.run_\[0\];.*JavaHot\.spinA_\[[0j]\];JavaHot\.countedLoop_\[j\] ' \
		"$OUT/n.folded")
	busy=$(folded_sum 'Thread\.run_\[0\];.*JavaHot\.spinB_\[[0j]\];JavaHot\.busyB_\[j\]' "$OUT/n.folded")
	echo "samples $samples, named from memory $mem; spinA/countedLoop $spin, spinB/busyB $busy"
	((mem * 100 >= samples * 90))
	((spin > 1000 && busy > 300))
	# hidden classes named as the agent names them: no address
	if grep -E 'Lambda[^;]*0x' "$OUT/n.folded"; then
		false
	fi
}

@test "jdk17: a JVM that refuses agents is walked, never signalled, named from its memory" {
	noattach_run "$JDK17"
}

@test "jdk25: a JVM that refuses agents is walked, never signalled, named from its memory" {
	noattach_run "$JDK25"
}

# anchor_run JDK: a JVM that refuses agents, its thread "worker-j" in write(2) from a JNI
# method (JavaHot jni): outside the code cache at nearly every sample. BPF walks its Java
# frames from the thread's frame anchor (found through the JVM's thread list, read from
# outside): the kernel and native frames on top, the native method and its Java callers
# below, as the agent's walk gives them (java_walk.bats); never a signal
anchor_run() {
	local jdk=$1 samples whole line re
	require_jdk "$jdk"
	"$jdk/bin/java" -XX:+DisableAttachMechanism -Djava.library.path="$APPS" -cp "$APPS" \
		JavaHot jni 8 >"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
	sleep 0.5
	run -0 "$JPROF" record -v -p "$JPID" -F 999 -d 3 -o "$OUT/a.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID \(|samples of walked JVMs|threads for the walk|debug: bpf:)" \
		<<<"$REPORT"
	grep -qE "^jprof: debug: bpf: [0-9]+ samples, .*, 0 signals " <<<"$REPORT"
	kill -0 "$JPID"
	samples=$(folded_total "$OUT/a.folded")
	# Thread.run down to the JNI method, then its C function and write(2) into the kernel
	whole=$(folded_sum 'Thread\.run_\[0\];.*JavaHot\.jniLoop_\[[0j]\];JavaHot\.nativeWrites;Java_JavaHot_nativeWrites;([^;]*;)*write' \
		"$OUT/a.folded")
	echo "samples $samples, JNI write under its Java callers: $whole"
	((whole * 100 >= samples * 80))
	line=$(grep -E "^jprof: samples of walked JVMs outside the code cache: " <<<"$REPORT")
	re="walked whole from the thread's frame anchor \\(or native frame pointers\\): [0-9]+ \\(([0-9.]+)%"
	[[ $line =~ $re ]]
	awk -v p="${BASH_REMATCH[1]}" 'BEGIN { exit !(p >= 95) }'
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 95) }'
}

@test "jdk17: a thread in JNI and write(2), no agent: Java frames from its frame anchor, no signal" {
	anchor_run "$JDK17"
}

@test "jdk25: a thread in JNI and write(2), no agent: Java frames from its frame anchor, no signal" {
	anchor_run "$JDK25"
}

# ns_anchor_run JDK: the same JVM in a "container" of its own (new pid and mount namespaces,
# run by an unprivileged user), recorded from the host: its OSThreads know its threads by
# the tids they have in its namespace, BPF by the host's. jprof maps one to the other (the
# threads' NSpid in /proc), so BPF finds worker-j's JavaThread and walks from its frame
# anchor: Java frames for its samples, never a signal (issue 31)
ns_anchor_run() {
	local jdk=$1 u=jpt-early uid gid i samples whole line
	require_jdk "$jdk"
	command -v unshare >/dev/null && command -v setpriv >/dev/null ||
		{ missing "unshare and setpriv (util-linux)"; return; }
	uid=$(make_test_user "$u") || return 1
	NS_USER=$u
	gid=$(id -g "$u")
	unshare --pid --fork --mount-proc setpriv --reuid="$uid" --regid="$gid" --clear-groups \
		--inh-caps=-all -- "$jdk/bin/java" -XX:+DisableAttachMechanism -XX:-UsePerfData \
		-Djava.library.path="$APPS" -cp "$APPS" JavaHot jni 8 >"$OUT/java.out" 2>&1 3>&- &
	NS_PID=$!
	for ((i = 0; i < 100; i++)); do
		JPID=$(pgrep -P "$NS_PID" java || true)
		[[ -n $JPID ]] && break
		sleep 0.1
	done
	[[ -n $JPID ]] || { cat "$OUT/java.out"; return 1; }
	wait_ready "$OUT/java.out" 10
	# in its own pid namespace: it is pid 1 there
	grep -qE '^NSpid:\s+[0-9]+\s+1$' "/proc/$JPID/status"
	sleep 0.5
	run -0 "$JPROF" record -v -p "$JPID" -F 999 -d 3 -o "$OUT/c.folded"
	REPORT=$output
	grep -E "^jprof: (JVM $JPID \(|samples of walked JVMs|threads (for the walk|of JVMs in)|debug: bpf:)" \
		<<<"$REPORT"
	grep -qE "^jprof: debug: bpf: [0-9]+ samples, .*, 0 signals " <<<"$REPORT"
	kill -0 "$JPID"
	samples=$(folded_total "$OUT/c.folded")
	whole=$(folded_sum 'Thread\.run_\[0\];.*JavaHot\.jniLoop_\[[0j]\];JavaHot\.nativeWrites;Java_JavaHot_nativeWrites;([^;]*;)*write' \
		"$OUT/c.folded")
	echo "samples $samples, JNI write under its Java callers: $whole"
	((whole * 100 >= samples * 80))
	# the threads were mapped: the task directory read, every JavaThread found there
	line=$(grep -E "^jprof: threads of JVMs in other pid namespaces: " <<<"$REPORT")
	[[ $line =~ ([0-9]+)\ task\ directories\ read\ \(0\ failed\),\ 0\ threads\ not\ found ]]
	((BASH_REMATCH[1] > 0))
	pct=$(complete_pct)
	echo "complete Java stacks: $pct%"
	awk -v p="$pct" 'BEGIN { exit !(p >= 90) }'
}

ns_teardown() {
	if [[ -n ${NS_PID:-} ]]; then
		kill -9 "$NS_PID" 2>/dev/null || true
		wait "$NS_PID" 2>/dev/null || true
	fi
	[[ -z ${NS_USER:-} ]] || drop_test_user "$NS_USER"
}

@test "jdk17: a JVM in its own pid namespace, no agent: Java frames from its frame anchor, no signal" {
	ns_anchor_run "$JDK17"
}

@test "jdk25: a JVM in its own pid namespace, no agent: Java frames from its frame anchor, no signal" {
	ns_anchor_run "$JDK25"
}

#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shortjvm.bats: short-lived JVMs under `jprof record -a`. A script starts `java -version`,
# `javac -version` and a 0.5 s JVM (ShortLived) a few times while jprof records: every one of
# them is listed in jprof's report with its attach outcome (attached, exited before attach),
# and the samples of JVMs that were seen before their agent was ready carry the marker
# "[no Java stack: agent not yet attached]" and are counted in their per-JVM line. JDK 17, 25.
bats_require_minimum_version 1.5.0

load helpers

ROUNDS=3

setup() {
	OUT=$BATS_TEST_TMPDIR
	JPROF_PID=
}

teardown() {
	if [[ -n ${JPROF_PID:-} ]]; then
		{ kill -9 "$JPROF_PID" && wait "$JPROF_PID"; } 2>/dev/null || true
	fi
	# the script's JVMs end by themselves; any left over (a failed run) is ended here
	if [[ -s $OUT/pids ]]; then
		while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$OUT/pids"
	fi
}

# run_short JDK: jprof record -a while the script runs the JVMs; their pids in $OUT/pids,
# jprof's report in $OUT/err, the profile in $OUT/p.folded
run_short() {
	local jdk=$1 i
	require_root_bpf
	require_jdk "$jdk"
	[[ -x $jdk/bin/javac ]] || { missing "javac of $jdk"; return; }
	[[ -f $APPS/ShortLived.class ]] || { missing "ShortLived not built in $APPS (make apps)"; return; }
	"$JPROF" record --samples -v -a -d 20 -o "$OUT/p.folded" 2>"$OUT/err" 3>&- &
	JPROF_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q "recording" "$OUT/err" 2>/dev/null && break
		sleep 0.1
	done
	: >"$OUT/pids"
	# other engineers' tests may attach to any JVM: accept it quietly (JDK 17 ignores the option)
	local opt=(-XX:+IgnoreUnrecognizedVMOptions -XX:+EnableDynamicAgentLoading)
	for ((i = 0; i < ROUNDS; i++)); do
		"$jdk/bin/java" "${opt[@]}" -version >/dev/null 2>&1 3>&- &
		echo $! >>"$OUT/pids"
		wait $!
		"$jdk/bin/javac" "${opt[@]/#/-J}" -version >/dev/null 2>&1 3>&- &
		echo $! >>"$OUT/pids"
		wait $!
		"$jdk/bin/java" "${opt[@]}" -cp "$APPS" ShortLived 500 >"$OUT/short.$i" 2>&1 3>&- &
		echo $! >>"$OUT/pids"
		wait $!
		grep -q "short ok" "$OUT/short.$i" # ran to its end, unharmed
		sleep 0.3
	done
	kill -INT "$JPROF_PID"
	wait "$JPROF_PID"
	JPROF_PID=
	cat "$OUT/err"
}

# every pid of the script is listed with its outcome; prints "LISTED ATTACHED"
check_listed() {
	local p listed=0 attached=0 n
	n=$(wc -l <"$OUT/pids")
	while read -r p; do
		if grep -Eq "^jprof: JVM $p( \(|:).*(Java stacks from|exited|no Java stacks)" "$OUT/err"; then
			listed=$((listed + 1))
		else
			echo "JVM $p is not listed with an outcome"
		fi
		grep -Eq "^jprof: JVM $p \(.*\): Java stacks from" "$OUT/err" && attached=$((attached + 1))
	done <"$OUT/pids"
	echo "listed $listed of $n JVMs, $attached attached"
	((listed == n))
	# the 0.5 s JVMs live long enough to be attached: at least one of them is
	((attached >= 1))
}

# JVMs seen before their agent was ready: their pre-attach samples are marked in the profile
# and counted in their per-JVM line ("N agent not yet attached")
check_marked() {
	local marked counted
	marked=$(folded_sum '\[no Java stack: agent not yet attached\]' "$OUT/p.folded")
	counted=$(grep -Eo '[0-9]+ agent not yet attached' "$OUT/err" | awk '{ s += $1 } END { print s + 0 }')
	echo "marked in the profile: $marked; counted in per-JVM lines: $counted"
	((marked > 0))
	# other engineers' JVMs may add to both; the counts are of the same samples
	((marked == counted))
}

@test "short JVMs (JDK 17): each is listed with its attach outcome; pre-attach samples marked and counted" {
	run_short "$JDK17"
	check_listed
	check_marked
}

@test "short JVMs (JDK 25): each is listed with its attach outcome; pre-attach samples marked and counted" {
	run_short "$JDK25"
	check_listed
	check_marked
}

# The process table: 200 short processes that each burn 30 ms (sampled at 999 Hz) and 6 short
# JVMs start and exit under `record -a`; by the end, what jprof holds of them is dropped
# (exits 4 s after the kernel told, execs at once), and its report still lists the JVMs
@test "processes and JVMs that exit are dropped once: jprof holds what lives" {
	local i k n line held exited execed retired hot jvm
	require_root_bpf
	require_jdk "$JDK17"
	[[ -x $APPS/hotab && -f $APPS/ShortLived.class ]] || { missing "hotab, ShortLived (make apps)"; return; }
	"$JPROF" record -v -a -F 999 -d 30 -o "$OUT/p.folded" 2>"$OUT/err" 3>&- &
	JPROF_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q "recording" "$OUT/err" 2>/dev/null && break
		sleep 0.1
	done
	: >"$OUT/pids"
	for ((i = 0; i < 6; i++)); do
		"$JDK17/bin/java" -XX:+IgnoreUnrecognizedVMOptions -XX:+EnableDynamicAgentLoading \
			-cp "$APPS" ShortLived 500 >/dev/null 2>&1 3>&- &
		jvm=$!
		echo "$jvm" >>"$OUT/pids"
		# 192 processes in all, 4 at a time, each 30 ms of CPU in hot_a/hot_b
		for ((k = 0; k < 8; k++)); do
			hot=()
			for ((n = 0; n < 4; n++)); do
				"$APPS/hotab" 0.03 >/dev/null 3>&- &
				hot+=($!)
			done
			wait "${hot[@]}"
		done
		wait "$jvm" || true
	done
	# every exit told before the end, and its 4 s linger over
	sleep 6
	kill -INT "$JPROF_PID"
	wait "$JPROF_PID"
	JPROF_PID=
	line=$(grep 'debug: memory:' "$OUT/err" | tail -1)
	echo "$line"
	held=$(sed -E 's/.*processes: ([0-9]+) held now.*/\1/' <<<"$line")
	exited=$(sed -E 's/.* ([0-9]+) exited and [0-9]+ exec.d forgotten.*/\1/' <<<"$line")
	execed=$(sed -E "s/.* exited and ([0-9]+) exec.d forgotten.*/\1/" <<<"$line")
	retired=$(sed -E 's/.*\(([0-9]+) JVMs retired\).*/\1/' <<<"$line")
	echo "held $held, exited $exited, exec'd $execed, JVMs retired $retired"
	# hotab and the JVMs were sampled (a bash fork that execs them: an exec, then an exit)
	((exited >= 150))
	((retired >= 6))
	# what is held at the end is the live processes: far fewer than came and went
	((held < exited / 2))
	grep -Eq '(^|;)hot_a(;| )' "$OUT/p.folded"
	# the JVMs are listed in the report although jprof let them go
	while read -r p; do
		grep -Eq "^jprof: JVM $p( \(|:)" "$OUT/err"
	done <"$OUT/pids"
}

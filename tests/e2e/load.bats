#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# load.bats: jprof on a saturated host (issue 13): one JVM with 200 always-runnable
# threads on this host's few CPUs, sampled at 999 Hz. jprof ends within 1 s of SIGTERM,
# reports what it lost, and still joins complete Java stacks. How long it runs past -d and
# what it costs there are measured, not asserted: `make bench`'s load part (bench/load.sh).
bats_require_minimum_version 1.5.0

load helpers

THREADS=200
# JDK 17 by default; LOAD_JDK=$JDK25 runs the same on JDK 25
: "${LOAD_JDK:=$JDK17}"

setup() {
	require_root_bpf
	require_jdk "$LOAD_JDK"
	[[ -x /usr/bin/time ]] || { missing "/usr/bin/time (Debian package time)"; return; }
	[[ -f $APPS/ManyThreads.class ]] || { missing "$APPS/ManyThreads.class (make apps)"; return; }
	[[ -f $JPROF_AGENT ]] || { missing "agent not built at $JPROF_AGENT"; return; }
	OUT=$BATS_TEST_TMPDIR
	JPID= PP=
	# This shell measures time: it runs above the load it makes (its children below are
	# put back to the default priority), else its own clock reads would be late.
	renice -n -15 -p "$BASHPID" >/dev/null
	cd "$OUT" # the JVM's attach files go here, not into the tree
}

teardown() {
	local p
	for p in $PP $JPID; do
		{ kill -9 "$p" && wait "$p"; } 2>/dev/null || true
	done
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# 200 spinning Java threads with the agent loaded at start, at the default priority
start_load() {
	nice -n 15 "$LOAD_JDK/bin/java" -agentpath:"$JPROF_AGENT" -cp "$APPS" ManyThreads "$THREADS" 600 \
		>"$OUT/java.out" 2>&1 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 60
	sleep 2 # the JIT compiles the loop
}

# jprof in the background, started at the default priority as from a shell (it raises
# its own). Sets PP (the /usr/bin/time process), JP (jprof) and T0 (it said "recording").
start_jprof() {
	nice -n 15 /usr/bin/time -f '%U %S' -o "$OUT/time" "$JPROF" record --samples -p "$JPID" \
		-F 999 -o "$OUT/p.folded" "$@" 2>"$OUT/err" 3>&- &
	PP=$!
	for ((i = 0; i < 6000; i++)); do
		grep -q recording "$OUT/err" 2>/dev/null && break
		sleep 0.01
	done
	T0=$(now_ms)
	grep -q recording "$OUT/err"
	JP=$(pgrep -P "$PP" -x jprof)
	[[ -n $JP ]]
}

# check_report MIN_PCT: every loss has its place, the profile holds what jprof says it
# counted, and >= MIN_PCT% of the JVM's Java-thread samples have complete Java stacks
check_report() {
	local min=$1 samples pct deep
	cat "$OUT/err"
	grep -Eq '^jprof: [0-9]+ samples \(.*\), [0-9]+ lost \(ring buffer full\)' "$OUT/err"
	samples=$(sed -nE 's/^jprof: ([0-9]+) samples \(.*/\1/p' "$OUT/err")
	[[ $samples -gt 0 ]]
	[[ $(folded_total "$OUT/p.folded") -eq $samples ]]
	pct=$(sed -nE "s/^jprof: JVM $JPID \([^)]*\): .* complete Java stacks \(([0-9.]+)%\).*/\1/p" "$OUT/err")
	echo "# $THREADS threads: $(grep -E "^jprof: JVM $JPID \(" "$OUT/err" | cut -d: -f3-)" >&3
	echo "# $(grep -E '^jprof: [0-9]+ samples' "$OUT/err" | cut -d, -f1-4)" >&3
	[[ -n $pct ]] && awk -v p="$pct" -v m="$min" 'BEGIN { exit !(p >= m) }'
	# and the stacks are the workload's: spin -> deep (x32) -> burn, mostly
	deep=$(folded_sum ';ManyThreads\.spin_\[[ji0]\];ManyThreads\.deep_\[[ji0]\];' "$OUT/p.folded")
	[[ $((deep * 100)) -ge $((samples * 80)) ]]
}

@test "load: SIGTERM under that load ends jprof within 1 s, profile written" {
	local t1 ts
	start_load
	start_jprof
	sleep 8
	ts=$(now_ms)
	kill -TERM "$JP"
	wait "$PP"
	t1=$(now_ms)
	PP=
	echo "# jprof: exited $((t1 - ts)) ms after SIGTERM" >&3
	grep -q 'Terminated: stopping and writing what was recorded' "$OUT/err"
	# a short run, cut short: the samples of its last moments may still lack their traces
	check_report 90
	[[ $((t1 - ts)) -le 1000 ]]
}

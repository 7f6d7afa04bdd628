#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# aggregate.bats: --aggregate counts repeated CPU stacks in the kernel (a stack goes through
# the ring once, then only counts per thread and 100 ms slot). The same busy JVM recorded with
# and without it: every sample BPF took is in the profile (JP_STAT_SAMPLES, as -v prints
# it, equals the profile's total), per thread too, the same top frames, the same complete
# Java stacks. With a tiny counts map the samples that find it full go out whole: counted,
# nothing lost; with room for 8 stacks in user space the least used are let go (BPF forgets
# them first, and sends them whole again): nothing lost either.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	require_jdk "$JDK17"
	OUT=$BATS_TEST_TMPDIR
	"$JDK17/bin/java" -cp "$APPS" JavaHot split 30 >"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/java.out" 10
}

teardown() {
	kill_jpid
}

# rec NAME ARGS...: records JPID at 999 Hz for 3 s into $OUT/NAME.folded (CPU time, the
# default) and NAME.pb.gz, its counts (report --samples) in $OUT/NAME.n.folded, its report
# in $OUT/NAME.err and REPORT; sets TOTAL (the profile's samples) and COUNTED (in the kernel)
rec() {
	local name=$1 taken lost cpu_s ns
	shift
	run -0 "$JPROF" record -v -p "$JPID" -F 999 -d 3 --per-thread "$@" -o "$OUT/$name.folded" \
		-o "$OUT/$name.pb.gz"
	echo "$output" >"$OUT/$name.err"
	REPORT=$output
	grep -E "^jprof: (debug: (bpf|aggregation):|JVM $JPID|aggregation|[0-9]+ samples)" \
		<<<"$REPORT" >&2
	taken=$(sed -nE 's/^jprof: debug: bpf: ([0-9]+) samples,.*/\1/p' <<<"$REPORT")
	TOTAL=$(sed -nE 's/^jprof: ([0-9]+) samples \(.*/\1/p' <<<"$REPORT")
	lost=$(sed -nE 's/^jprof: [0-9]+ samples \(.*\), ([0-9]+) lost \(ring.*/\1/p' <<<"$REPORT")
	COUNTED=$(sed -nE 's/^jprof: debug: aggregation: ([0-9]+) samples counted.*/\1/p' \
		<<<"$REPORT")
	COUNTED=${COUNTED:-0}
	echo "$name: BPF took $taken, the profile has $TOTAL, ring lost $lost," \
		"counted in the kernel $COUNTED"
	# nothing lost: every sample taken is in the profile, and the folded lines add up to it
	[[ -n $taken && -n $TOTAL ]]
	((taken == TOTAL + lost && lost == 0))
	run -0 "$JPROF" report --samples --per-thread "$OUT/$name.pb.gz" -o "$OUT/$name.n.folded"
	(($(folded_total "$OUT/$name.n.folded") == TOTAL))
	# and the time they weigh adds up to the threads' CPU time the scheduler gave
	cpu_s=$(sed -nE 's/^jprof: CPU time: ([0-9.]+) s on CPU .*/\1/p' <<<"$REPORT")
	ns=$(folded_total "$OUT/$name.folded")
	echo "$name: CPU time $cpu_s s, the profile's $ns ns"
	[[ -n $cpu_s ]]
	awk -v s="$cpu_s" -v n="$ns" 'BEGIN { d = n / 1e9 - s
		exit !(s > 1 && d <= 0.001 && d >= -0.001) }'
	! grep -q "never learnt" <<<"$REPORT"
}

tid_of() { # tid_of PID THREAD_NAME
	grep -lx "$2" /proc/"$1"/task/*/comm | head -1 | awk -F/ '{ print $5 }'
}

cpu_ticks() { # utime + stime of a thread
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/task/$2/stat"
}

# split_check NAME ARGS...: rec NAME ARGS, and worker-a's share of the two workers' CPU
# time in the profile within 5 points of its share of their /proc CPU time meanwhile (as
# java.bats checks)
split_check() {
	local name=$1 ta tb a0 b0 a1 b1 a b
	ta=$(tid_of "$JPID" worker-a)
	tb=$(tid_of "$JPID" worker-b)
	[[ -n $ta && -n $tb ]]
	a0=$(cpu_ticks "$JPID" "$ta")
	b0=$(cpu_ticks "$JPID" "$tb")
	rec "$@"
	a1=$(cpu_ticks "$JPID" "$ta")
	b1=$(cpu_ticks "$JPID" "$tb")
	# enough samples of them, and their shares of the CPU time jprof weighed
	(($(folded_sum ";worker-[ab] \\[($ta|$tb)\\];" "$OUT/$name.n.folded") > 300))
	a=$(folded_sum ";worker-a \\[$ta\\];" "$OUT/$name.folded")
	b=$(folded_sum ";worker-b \\[$tb\\];" "$OUT/$name.folded")
	awk -v a="$a" -v b="$b" -v ca=$((a1 - a0)) -v cb=$((b1 - b0)) -v n="$name" 'BEGIN {
		p = 100 * a / (a + b); t = 100 * ca / (ca + cb);
		printf "%s: worker-a: profile %.1f%% (%.0f/%.0f ns), /proc %.1f%% (%d/%d)\n",
			n, p, a, a + b, t, ca, ca + cb
		exit (p - t > 5 || t - p > 5) }'
	# whole Java stacks: the thread entry, then the hot loop
	(($(folded_sum 'java/lang/Thread\.run(With)?_\[[0j]\];.*JavaHot\.spinA_\[[0j]\];JavaHot\.countedLoop_\[j\]' \
		"$OUT/$name.folded") * 100 >= a * 80))
}

@test "aggregate: the same busy JVM with and without: all samples, per thread, same top frames" {
	local p1 p2
	sleep 1 # the agent attached by the first recording stays: both see the same JVM
	split_check plain --no-aggregate
	p1=$(complete_pct)
	((COUNTED == 0))
	split_check agg --aggregate
	p2=$(complete_pct)
	echo "complete Java stacks $p1% / $p2%"
	# most samples were counted in the kernel
	((COUNTED * 100 >= TOTAL * 60))
	# complete Java stacks unchanged
	awk -v a="$p1" -v b="$p2" 'BEGIN { exit !(a >= 95 && b >= 95) }'
	# the same top frame (the leaf with the most self samples)
	[[ $(folded_top "$OUT/plain.folded" | cut -d' ' -f2-) == \
		$(folded_top "$OUT/agg.folded" | cut -d' ' -f2-) ]]
}

@test "aggregate: a counts map of 2 entries: samples that find it full go out whole, counted" {
	local full asked
	sleep 1
	JPROF_TEST_AGG_MAX=2 split_check tiny --aggregate
	full=$(sed -nE 's/.*count: ([0-9]+) \(counts map full\).*/\1/p' "$OUT/tiny.err")
	asked=$(sed -nE 's/.* drains \(([0-9]+) asked by BPF\).*/\1/p' "$OUT/tiny.err")
	echo "full records for a full map: $full; drains BPF asked: $asked"
	((full > 0 && COUNTED > 0 && asked > 0))
}

@test "aggregate: 8 stacks kept: the least used let go and forgotten by BPF, nothing lost" {
	local retired notkept
	sleep 1
	JPROF_TEST_AGG_RECORDS=8 split_check few --aggregate
	retired=$(sed -nE 's/.* ([0-9]+) stacks let go for room.*/\1/p' "$OUT/few.err")
	notkept=$(sed -nE 's/.*records of new stacks \([0-9]+ kept, ([0-9]+) only until.*/\1/p' \
		"$OUT/few.err")
	echo "stacks let go: $retired; records not kept: $notkept"
	((retired > 0 && COUNTED > 0))
}

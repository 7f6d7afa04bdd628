#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# wall.bats: `-e wall`, the wall-clock view. Threads of WallMix spin, sleep, mix both, wait
# on a monitor and block for microseconds at a time; per thread, on-CPU + runnable +
# blocked time must add up to the recording's duration within 2%, and the blocked share
# must match what the thread measured itself within 3 pp. On JDK 25 only: the view is the
# kernel's (on the CPU, waiting for one, switched out), the JVM's part the threads' names,
# and JDK 17's threads sleep, park and wait through the same futex calls: its run checked
# nothing this one does not.
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

wall_mix() {
	local home=$1 dur jp JPID_SAVED
	require_jdk "$home"
	[[ -r $APPS/WallMix.class ]] || missing "WallMix.class not built in $APPS (make apps)"
	[[ -r $JPROF_AGENT ]] || missing "agent not built at $JPROF_AGENT (make)"
	"$home/bin/java" -agentpath:"$JPROF_AGENT" -cp "$APPS" WallMix 13 "$OUT/mark" \
		>"$OUT/java.out" 2>"$OUT/java.err" 3>&- &
	JPID=$!
	JPID_SAVED=$JPID
	wait_ready "$OUT/java.out"
	sleep 1
	"$JPROF" record -p "$JPID" -e wall -d 6 -o "$OUT/wall.folded" 2>"$OUT/jprof.err" 3>&- &
	jp=$!
	# with -e wall the sampler's perf events open when the window starts: then the threads
	# measure themselves for 5.5 of its 6 s (their patterns are steady: same split)
	for ((i = 0; i < 200; i++)); do
		ls -l "/proc/$jp/fd" 2>/dev/null | grep -q perf_event && break
		sleep 0.1
	done
	touch "$OUT/mark.start"
	sleep 5.5
	touch "$OUT/mark.stop"
	wait "$jp"
	# the recording is over: the threads end now, not at the 13 s that bound the run
	touch "$OUT/mark.end"
	wait "$JPID"
	JPID=
	dur=$(sed -n 's/^jprof: wall: \([0-9.]*\) s recorded.*/\1/p' "$OUT/jprof.err")
	# the per-thread table first: CI shows the start of a failed test's output
	run "$BATS_TEST_DIRNAME/wall_check.py" "$OUT/wall.folded" "$OUT/java.out" "${dur:-0}" 2 3
	echo "$output"
	cat "$OUT/java.out" "$OUT/jprof.err"
	[[ -n $dur ]]
	[[ $status -eq 0 ]]
	# per-thread roots without asking: wall is a per-thread view
	grep -Eq "^java \[$JPID_SAVED\][^;]*;spinner \[[0-9]+\];" "$OUT/wall.folded"
	grep -q '\[runnable\]' "$OUT/wall.folded" || echo "# no runnable time (idle machine)"
}

@test "wall (JDK 25): each thread's on-CPU + runnable + blocked time is the duration" {
	wall_mix "$JDK25"
}

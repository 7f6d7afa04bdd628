#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# idle.bats: -e offcpu and -e lock answer "what is contended": the waits of idle pool workers
# (a ThreadPoolExecutor's workers waiting for a task) are left out and counted by default and
# kept with --idle; real contention (a ReentrantLock) stays; the JVM's root names its main class.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	[[ -r $APPS/IdlePool.class ]] || missing "IdlePool class not built in $APPS (make apps)"
	[[ -r $JPROF_AGENT ]] || missing "agent not built at $JPROF_AGENT (make)"
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

start_pool() {
	require_jdk "$JDK17"
	"$JDK17/bin/java" -Xmx256m -cp "$APPS" IdlePool 20 >"$OUT/app.out" 2>"$OUT/app.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/app.out" 10
}

# record_twice EVENT: $OUT/def.folded (default) and $OUT/idle.folded (--idle), stderr in .err
record_twice() {
	"$JPROF" record -p "$JPID" -e "$1" -d 4 --per-pid -o "$OUT/def.folded" -o "$OUT/def.html" \
		-o "$OUT/def.pb.gz" 2>"$OUT/def.err" 3>&-
	"$JPROF" record -p "$JPID" -e "$1" -d 4 --per-pid --idle -o "$OUT/idle.folded" \
		2>"$OUT/idle.err" 3>&-
	cat "$OUT/def.err" "$OUT/idle.err"
}

# check_views CONTENTION_REGEX TITLE_EVENTS: what both recordings must show, what tells them
# apart, and the title's events
check_views() {
	local c_def c_idle i_def i_idle left
	c_def=$(folded_sum "$1" "$OUT/def.folded")
	c_idle=$(folded_sum "$1" "$OUT/idle.folded")
	i_def=$(folded_sum 'ThreadPoolExecutor\.getTask' "$OUT/def.folded")
	i_idle=$(folded_sum 'ThreadPoolExecutor\.getTask' "$OUT/idle.folded")
	left=$(sed -n 's/^jprof: \([0-9]*\) ms of idle pool waits left out .*--idle includes them$/\1/p' \
		"$OUT/def.err")
	echo "contention: default $c_def ns, --idle $c_idle ns; idle waits: default $i_def ns," \
		"--idle $i_idle ns; left out: $left ms"
	# the contention is there either way
	((c_def > 0 && c_idle > 0))
	# 4 idle workers for 4 s: about 16 s of waits for a task, left out and counted...
	((i_def == 0))
	[[ -n $left ]] && ((left > 4000))
	# ... and kept with --idle, which counts nothing left out
	((i_idle > 4000000000))
	! grep -q 'idle pool waits left out' "$OUT/idle.err"
	# the process root names the main class
	grep -Eq "^java \[$JPID\] IdlePool;" "$OUT/def.folded"
	grep -Eq "^java \[$JPID\] IdlePool;" "$OUT/idle.folded"
	# so does the title of a one-JVM recording, and the name survives pprof -> report
	grep -Fq "\"title\":\"jprof: $2 · java [$JPID] IdlePool\"" "$OUT/def.html"
	"$JPROF" report --per-pid "$OUT/def.pb.gz" -o "$OUT/back.folded"
	grep -Eq "^java \[$JPID\] IdlePool;" "$OUT/back.folded"
	! grep -Ev "^java \[$JPID\] IdlePool;" "$OUT/back.folded"
}

@test "idle: -e offcpu leaves idle pool workers' waits out (counted), --idle keeps them, contention stays (JDK 17)" {
	start_pool
	record_twice offcpu
	check_views 'IdlePool\.onLock(_\[.\])?;java/util/concurrent/locks/ReentrantLock\.lock' \
		'off-CPU (ns)'
	# JVM threads blocked all recording without a Java stack (idle GC, finalizer threads):
	# one frame under the root, each thread's whole time kept, counted in the report
	local whole
	whole=$(folded_sum "^java \\[$JPID\\] IdlePool;\\[blocked all recording\\] " "$OUT/def.folded")
	echo "blocked all recording: $whole ns"
	((whole >= 3500000000))
	grep -Eq '^jprof: [0-9]+ JVM threads blocked all recording without a Java stack' "$OUT/def.err"
	# nothing else of those threads: the frame is a leaf right under the root
	! grep -E ';\[blocked all recording\];' "$OUT/def.folded"
}

@test "idle: -e lock leaves idle pool workers' parks out (counted), --idle keeps them, contention stays (JDK 17)" {
	start_pool
	record_twice lock
	# the park names its blocker (the lock's sync) where the JVM's collector allows it
	check_views 'IdlePool\.onLock(_\[.\])?;java/util/concurrent/locks/ReentrantLock\.lock.*\[park\](;java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync_\[l\])? ' \
		'lock contention (ns)'
}

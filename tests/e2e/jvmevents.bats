#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# jvmevents.bats: agent events (JVMTI) as profiles: -e lock (contended monitors), -e alloc
# (sampled allocations), -e live (sampled and never freed), on real JVMs (JDK 17 and 25).
# Every JVM here is attached late (jprof finds it running) and exits before the recording
# ends, so both paths are covered by each test.
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	[[ -r $APPS/EvContend.class && -r $APPS/EvAlloc.class && -r $APPS/EvPark.class &&
		-r $APPS/EvSpin.class && -r $APPS/EvBlockers.class ]] ||
		missing "EvContend/EvAlloc/EvPark/EvSpin/EvBlockers classes not built in $APPS (make apps)"
	[[ -r $JPROF_AGENT ]] || missing "agent not built at $JPROF_AGENT (make)"
	OUT=$BATS_TEST_TMPDIR
	JPID=
}

teardown() {
	kill_jpid
}

# start_app JDK_HOME CLASS ARGS...: sets JPID once the app printed "ready"; JVM_OPT: one more
# JVM option (an -agentpath: the agent loaded at the JVM's start)
start_app() {
	local home=$1 cls=$2
	shift 2
	require_jdk "$home"
	"$home/bin/java" -Xmx512m ${JVM_OPT:+"$JVM_OPT"} -cp "$APPS" "$cls" "$@" >"$OUT/app.out" \
		2>"$OUT/app.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/app.out" 10
}

# ratio_ok GOT WANT PCT: |GOT - WANT| <= PCT% of WANT
ratio_ok() {
	awk -v g="$1" -v w="$2" -v p="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= w * p / 100) }'
}

check_lock() {
	start_app "$1" EvContend 20 100 2000
	"$JPROF" record -v -p "$JPID" -e lock -d 8 -o "$OUT/lock.folded" -o "$OUT/lock.pb.gz" \
		-o "$OUT/lock.html" -o "$OUT/lock.jfr" 2>"$OUT/err" 3>&-
	wait "$JPID"
	JPID=
	cat "$OUT/err" "$OUT/app.out"
	head -20 "$OUT/lock.folded"
	want=$(sed -n 's/^waited_ns //p' "$OUT/app.out")
	# the waits are in the waiter's method, with the monitor's class as the leaf
	got=$(folded_sum 'EvContend\.blockedOnGate(_\[.\])?;EvContend\$Gate_\[l\] ' "$OUT/lock.folded")
	echo "waited: program $want ns, jprof $got ns"
	ratio_ok "$got" "$want" 10
	# nothing of the holder's sleep is counted as contention
	[[ -z $(grep 'holdGate' "$OUT/lock.folded") ]]
	grep -Eq '^jprof: monitor contention: (19|20|21|22) waits' "$OUT/err"
	grep -q 'agent events: .* 2[0-9] monitor waits' "$OUT/err"
	# pprof carries delay and contentions; read back, the delay is the folded weight
	"$JPROF" report "$OUT/lock.pb.gz" >"$OUT/back.folded"
	[[ $(folded_total "$OUT/back.folded") == $(folded_total "$OUT/lock.folded") ]]
	"$JPROF" report -f pprof -o "$OUT/back.pb.gz" "$OUT/lock.pb.gz"
	gzip -dc "$OUT/lock.pb.gz" | grep -aq contentions
	# the flame graph weighs nanoseconds
	grep -q '"unit":"ns"' "$OUT/lock.html"
	# JFR: jdk.JavaMonitorEnter with the monitor class, read by the JDK's own jfr tool
	require_jdk "$JDK25"
	"$JDK25/bin/jfr" print --events jdk.JavaMonitorEnter "$OUT/lock.jfr" >"$OUT/lock.jfr.txt"
	grep -q 'monitorClass = EvContend\$Gate' "$OUT/lock.jfr.txt"
	grep -q 'EvContend.blockedOnGate()' "$OUT/lock.jfr.txt"
}

# The monitors a thread's exit takes, as folded lines: its Thread object (which join() also
# takes; no Java frame) and on JDK 17 its ThreadGroup (Thread.exit)
EXIT_MONITORS='^java;java\.lang\.Thread_\[l\] [0-9]+$|^java;java/lang/Thread\.exit(_\[.\])?;java/lang/ThreadGroup\.threadTerminated(_\[.\])?;java\.lang\.ThreadGroup_\[l\] [0-9]+$'

# other_stacks ALLOWED FOLDED: FOLDED's lines that match neither the regex ALLOWED nor a
# thread's exit monitors, printed (so a failure shows them); the caller wants none
other_stacks() {
	local other
	other=$(grep -vE "$1|$EXIT_MONITORS" "$2" || true)
	echo "other stacks: ${other:-none}" >&2
	printf '%s' "$other"
}

# java.util.concurrent: a waiter parks in ReentrantLock.lock() while a holder sleeps with it
check_park() {
	start_app "$1" EvPark 20 100 2000
	"$JPROF" record -v -p "$JPID" -e lock -d 8 -o "$OUT/park.folded" -o "$OUT/park.pb.gz" \
		2>"$OUT/err" 3>&-
	wait "$JPID"
	JPID=
	cat "$OUT/err" "$OUT/app.out"
	head -20 "$OUT/park.folded"
	want=$(sed -n 's/^waited_ns //p' "$OUT/app.out")
	# the parks are in the waiting method, under ReentrantLock.lock, [park] under the leaf
	# that names the blocker (the lock's NonfairSync, from Thread.parkBlocker)
	got=$(folded_sum 'EvPark\.parkedOnLock(_\[.\])?;java/util/concurrent/locks/ReentrantLock\.lock(_\[.\])?;.*;jdk/internal/misc/Unsafe\.park(_\[.\])?;\[park\];java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync_\[l\] ' \
		"$OUT/park.folded")
	echo "parked: program $want ns, jprof $got ns"
	ratio_ok "$got" "$want" 10
	# one contention each: 20 waits, and the waiter's are all parks. Beside them only the
	# monitors a thread's exit takes, rarely contended: its Thread object, which join() also
	# takes (seen once in CI on JDK 25: one 36 us wait, no Java frame), and on JDK 17 its
	# ThreadGroup, which holder and waiter ending together both take in Thread.exit (once
	# in CI, once in 10 runs here under 2 busy loops: one 421 us wait)
	n=$(sed -nE 's/^jprof: monitor contention: ([0-9]+) waits.* parks: ([0-9]+),.*/\1 \2/p' "$OUT/err")
	echo "waits and parks: $n"
	read -r waits parks <<<"$n"
	# every park: BPF walks each at its futex's return (a waiter just started is found at
	# the end of the JVM's thread list). The signal -e lock still sends for the blocker may
	# get no trace (none within the bound, or "not a Java thread" for a thread just started:
	# 1 of 16 runs here): that park keeps BPF's stack and ends in [park] (before, it was lost).
	# One may still be lost, as in check_blockers: a park whose walk fails too (once in a
	# rehearsal, JDK 25: 19 parks, 1.90 of the program's 2.00 s, within the 10% below)
	((parks >= 19 && parks <= 24 && waits >= parks && waits <= parks + 2))
	# -e lock shows no other blocked time: the holder's sleep, the main thread's join
	[[ -z $(grep -E 'holdLock|\[off-cpu\]|Thread\.sleep|Thread\.join' "$OUT/park.folded") ]]
	[[ -z $(other_stacks ';\[park\];java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync_\[l\] [0-9]*$|EvPark\.parkedOnLock(_\[.\])?;.*;\[park\] [0-9]+$' "$OUT/park.folded") ]]
	# pprof: contentions beside the delay, the delay read back equal to the folded weight
	gzip -dc "$OUT/park.pb.gz" | grep -aq contentions
	"$JPROF" report "$OUT/park.pb.gz" >"$OUT/back.folded"
	[[ $(folded_total "$OUT/back.folded") == $(folded_total "$OUT/park.folded") ]]
}

@test "lock (JDK 17): ReentrantLock parks land on the waiting method as [park], total within 10%" {
	check_park "$JDK17"
}

@test "lock (JDK 25): ReentrantLock parks land on the waiting method as [park], total within 10%" {
	check_park "$JDK25"
}

# Parks carry their blocker's class (Thread.parkBlocker, read by the agent's signal handler):
# a waiter parks 10 times each in ReentrantLock.lock (the lock's NonfairSync), in
# ArrayBlockingQueue.take (the queue's notEmpty ConditionObject) and in LockSupport.park()
# with no blocker ([park] stays the leaf)
check_blockers() {
	local lock queue bare got parks named
	start_app "$1" EvBlockers 10 100 2000
	"$JPROF" record -v -p "$JPID" -e lock -d 7 -o "$OUT/b.folded" -o "$OUT/b.jfr" \
		2>"$OUT/err" 3>&-
	wait "$JPID"
	JPID=
	cat "$OUT/err" "$OUT/app.out"
	cut -c1-60,200- "$OUT/b.folded"
	lock=$(sed -n 's/^lock_ns //p' "$OUT/app.out")
	queue=$(sed -n 's/^queue_ns //p' "$OUT/app.out")
	bare=$(sed -n 's/^bare_ns //p' "$OUT/app.out")
	got=$(folded_sum 'EvBlockers\.waitLock(_\[.\])?;java/util/concurrent/locks/ReentrantLock\.lock(_\[.\])?;.*;jdk/internal/misc/Unsafe\.park(_\[.\])?;\[park\];java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync_\[l\] ' \
		"$OUT/b.folded")
	echo "ReentrantLock: program $lock ns, jprof $got ns"
	ratio_ok "$got" "$lock" 12
	got=$(folded_sum 'EvBlockers\.waitQueue(_\[.\])?;java/util/concurrent/ArrayBlockingQueue\.take(_\[.\])?;.*;jdk/internal/misc/Unsafe\.park(_\[.\])?;\[park\];java\.util\.concurrent\.locks\.AbstractQueuedSynchronizer\$ConditionObject_\[l\] ' \
		"$OUT/b.folded")
	echo "ArrayBlockingQueue: program $queue ns, jprof $got ns"
	# 10 parks of a kind: one may go without its Java stack and so is no park (as in
	# check_park), 10% of this total: seen once in a fresh-clone rehearsal (0.896 of the queue's)
	ratio_ok "$got" "$queue" 12
	got=$(folded_sum 'EvBlockers\.waitBare(_\[.\])?;java/util/concurrent/locks/LockSupport\.park(_\[.\])?;jdk/internal/misc/Unsafe\.park(_\[.\])?;\[park\] ' \
		"$OUT/b.folded")
	echo "LockSupport.park(): program $bare ns, jprof $got ns"
	ratio_ok "$got" "$bare" 12
	# no class named where none was: the waiter's only leaves are those three (and the
	# monitors a thread's exit takes, as in check_park), or [park] alone (a park whose
	# blocker's trace did not come, as in check_park)
	[[ -z $(other_stacks ';\[park\];java\.util\.concurrent\.locks\.(ReentrantLock\$NonfairSync|AbstractQueuedSynchronizer\$ConditionObject)_\[l\] [0-9]+$|EvBlockers\.wait(Bare|Lock|Queue)(_\[.\])?;.*;\[park\] [0-9]+$' "$OUT/b.folded") ]]
	# the 30 parks (BPF walks them, as above), the 20 with a blocker named (one may keep
	# BPF's stack without its blocker, as above). One may still be lost: a park whose walk
	# fails too (1 of 9 runs here, JDK 17: 29 parks, 19 named)
	read -r parks named < <(sed -nE 's/.* ([0-9]+) parks \([0-9]+ under --lock-threshold; ([0-9]+) with their blocker.s class\).*/\1 \2/p' "$OUT/err")
	echo "parks: $parks, with their blocker's class: $named"
	((parks >= 29 && parks <= 33 && named >= 19 && named <= 20))
	# JFR: the class is the monitor class of the wait
	require_jdk "$JDK25"
	"$JDK25/bin/jfr" print --events jdk.JavaMonitorEnter "$OUT/b.jfr" >"$OUT/b.jfr.txt"
	grep -q 'monitorClass = java.util.concurrent.locks.ReentrantLock\$NonfairSync' "$OUT/b.jfr.txt"
}

@test "lock (JDK 17): parks name their blocker's class (ReentrantLock, ArrayBlockingQueue), none for LockSupport.park()" {
	check_blockers "$JDK17"
}

@test "lock (JDK 25): parks name their blocker's class (ReentrantLock, ArrayBlockingQueue), none for LockSupport.park()" {
	check_blockers "$JDK25"
}

@test "lock (JDK 17): contended monitor waits land on the waiting method and the monitor class, total within 10%" {
	check_lock "$JDK17"
}

@test "lock (JDK 25): contended monitor waits land on the waiting method and the monitor class, total within 10%" {
	check_lock "$JDK25"
}

@test "lock (JDK 17), agent loaded at the JVM's start with lock events: the same" {
	JVM_OPT=-agentpath:$JPROF_AGENT=lock check_lock "$JDK17"
	grep -q "agent already loaded" "$OUT/err"
}

# A JVM whose agent an earlier recording loaded without events: this build's agent is the
# same copy, loaded again it adds the events, live (no JVM restart).
@test "lock (JDK 17): an agent an earlier recording loaded without events adds them" {
	start_app "$JDK17" EvContend 20 100 3500
	"$JPROF" record -v -p "$JPID" -d 1 -o "$OUT/cpu.folded" 2>"$OUT/err1" 3>&-
	grep -q "agent attached" "$OUT/err1"
	"$JPROF" record -v -p "$JPID" -e lock -d 8 -o "$OUT/lock.folded" 2>"$OUT/err" 3>&-
	wait "$JPID"
	JPID=
	cat "$OUT/err" "$OUT/app.out" "$OUT/app.err"
	grep -q "events added on a later attach" "$OUT/app.err"
	! grep -q "its agent runs without" "$OUT/err"
	want=$(sed -n 's/^waited_ns //p' "$OUT/app.out")
	got=$(folded_sum 'EvContend\.blockedOnGate(_\[.\])?;EvContend\$Gate_\[l\] ' "$OUT/lock.folded")
	echo "waited: program $want ns, jprof $got ns"
	ratio_ok "$got" "$want" 10
}

# An agent is loaded once per JVM: one started without events cannot send them, and a
# recording that asks for them says so instead of showing no contention.
@test "lock, alloc: a JVM whose agent was loaded without these events is named" {
	JVM_OPT=-agentpath:$JPROF_AGENT start_app "$JDK17" EvContend 20 100 2000
	"$JPROF" record -v -p "$JPID" -e lock,alloc -d 3 -o "$OUT/none.pb.gz" 2>"$OUT/err" 3>&-
	cat "$OUT/err"
	grep -Eq "^jprof: JVM $JPID: its agent runs without the lock,alloc events asked \(loaded at the JVM's start" "$OUT/err"
}

check_alloc() {
	start_app "$1" EvAlloc 1500 5000
	"$JPROF" record -v -p "$JPID" -e alloc -d 9 -o "$OUT/alloc.folded" -o "$OUT/alloc.jfr" \
		2>"$OUT/err" 3>&-
	wait "$JPID"
	JPID=
	cat "$OUT/err" "$OUT/app.out"
	sort -k2 -n -r -t' ' "$OUT/alloc.folded" | head -5 | cut -c1-300
	samples=$(sed -n 's/.*agent events: \([0-9]*\) allocation samples.*/\1/p' "$OUT/err")
	echo "allocation samples: $samples"
	((samples >= 2000))
	dying=$(folded_sum 'EvAlloc\.dying(_\[.\])?;long\[\]_\[a\] ' "$OUT/alloc.folded")
	keep=$(folded_sum 'EvAlloc\.keeping(_\[.\])?;byte\[\]_\[a\] ' "$OUT/alloc.folded")
	total=$(folded_total "$OUT/alloc.folded")
	want_dying=$(sed -n 's/.* dying_bytes \([0-9]*\).*/\1/p' "$OUT/app.out")
	want_keep=$(sed -n 's/.* kept_bytes \([0-9]*\).*/\1/p' "$OUT/app.out")
	echo "dying: $dying (program $want_dying), keeping: $keep (program $want_keep), all: $total"
	# per-site shares of the two sites: 75% / 25% within 5 points
	awk -v d="$dying" -v k="$keep" 'BEGIN { s = 100 * d / (d + k); print "dying share " s; exit !(s >= 70 && s <= 80) }'
	# the byte estimates within 10% of what the program allocated
	ratio_ok "$dying" "$want_dying" 10
	ratio_ok "$keep" "$want_keep" 10
	# JFR: jdk.ObjectAllocationSample with the class, read by the JDK's own jfr tool
	require_jdk "$JDK25"
	"$JDK25/bin/jfr" print --events jdk.ObjectAllocationSample "$OUT/alloc.jfr" >"$OUT/alloc.jfr.txt"
	grep -q 'objectClass = byte\[\]' "$OUT/alloc.jfr.txt"
	grep -q 'EvAlloc.keeping()' "$OUT/alloc.jfr.txt"
}

@test "alloc (JDK 17): sites and classes of sampled allocations, shares within 5 pp, bytes within 10%" {
	check_alloc "$JDK17"
}

@test "alloc (JDK 25): sites and classes of sampled allocations, shares within 5 pp, bytes within 10%" {
	check_alloc "$JDK25"
}

check_live() {
	start_app "$1" EvAlloc 1500 4000
	"$JPROF" record -v -p "$JPID" -e live -d 8 -o "$OUT/live.folded" 2>"$OUT/err" 3>&-
	wait "$JPID"
	JPID=
	cat "$OUT/err" "$OUT/app.out"
	sort -k2 -n -r -t' ' "$OUT/live.folded" | head -5 | cut -c1-300
	keep=$(folded_sum 'EvAlloc\.keeping(_\[.\])?;byte\[\]_\[a\] ' "$OUT/live.folded")
	dying=$(folded_sum 'EvAlloc\.dying(_\[.\])?;long\[\]_\[a\] ' "$OUT/live.folded")
	echo "live: keeping $keep, dying $dying"
	# the kept ring is 64 MiB of byte[1008]: that is what stays live; the dying site
	# keeps at most what was allocated since the last GC
	ratio_ok "$keep" $((64 * 1024 * 1024)) 25
	((dying * 5 < keep))
	grep -Eq 'agent events: [0-9]+ allocation samples, [1-9][0-9]* frees' "$OUT/err"
	# age at death: the dying arrays die young (< 100 ms, the next young GC), the kept
	# ones live while 64 rounds of the ring pass (>= 100 ms): 80% of each site's frees
	young() { # young SITE-REGEX: percent of the site's freed objects younger than 100 ms
		grep -E "^jprof: +[0-9 ]+ $1\$" "$OUT/err" |
			awk '{ y = $2 + $3 + $4; t = y + $5 + $6 + $7; print t ? int(100 * y / t) : -1 }'
	}
	dy=$(young 'long\[\]_\[a\] <- EvAlloc\.dying') ky=$(young 'byte\[\]_\[a\] <- EvAlloc\.keeping')
	echo "died young: dying site $dy%, keeping site $ky%"
	((dy >= 80 && ky >= 0 && ky <= 20))
}

@test "live (JDK 17): the kept site is live at the end, the dying one is not" {
	check_live "$JDK17"
}

@test "live (JDK 25): the kept site is live at the end, the dying one is not" {
	check_live "$JDK25"
}

# Issue 8: blocked entering a contended monitor from JIT-compiled code, a thread is in the
# VM and AGCT cannot walk it; the wait's Java stack comes from MonitorContendedEnter.
check_offcpu_monitor() {
	local try
	# A second run only when the first misses: once in a CI rehearsal (of 3 this day, and
	# 3 of 3 runs alone after it) the waits before the agent was ready weighed 26%, not the
	# usual ~10% (11.6 s "agent not ready" of 89 s blocked). Both runs print their figures.
	for try in 1 2; do
		offcpu_monitor_run "$1" && return 0
		echo "run $try missed"
	done
	return 1
}

offcpu_monitor_run() {
	start_app "$1" EvHot 3000 4000
	"$JPROF" record -v -p "$JPID" -e offcpu -d 8 -o "$OUT/off.folded" 2>"$OUT/err" 3>&-
	wait "$JPID"
	JPID=
	cat "$OUT/err" "$OUT/app.out"
	awk '{ print $NF, $0 }' "$OUT/off.folded" | sort -nr | head -5 | cut -c1-300
	want=$(sed -n 's/^waited_ns //p' "$OUT/app.out")
	got=$(folded_sum 'EvHot\.work(_\[.\])?;.*futex' "$OUT/off.folded")
	echo "blocked on the monitor: program $want ns, jprof under EvHot.work $got ns"
	# (called in a condition, where set -e does not stop it: each check returns itself)
	grep -Eq '[1-9][0-9]* blocked or spinning samples got the Java stack of their monitor wait' \
		"$OUT/err" || return 1
	# the program counts from its start, jprof from its attach (~0.3 s later): 20%
	ratio_ok "$got" "$want" 20
}

# A thread blocked entering a monitor before the agent came: its MonitorContendedEnter went
# unheard, so the agent's scan at attach reports it, and its blocked time (the whole
# recording: still blocked at the end) carries its Java stack. Failed 1 run in 4 of the
# EvHot test above before, when its waiters had blocked before the attach.
check_blocked_at_attach() {
	start_app "$1" EvBlocked 8000
	"$JPROF" record -v -p "$JPID" -e offcpu -d 3 -o "$OUT/off.folded" 2>"$OUT/err" 3>&-
	kill_jpid
	JPID=
	cat "$OUT/err"
	grep -F 'waitHere' "$OUT/off.folded" | cut -c1-300 || true
	grep -Eq 'monitor waits \([0-9]+ under --lock-threshold; 1 of threads already blocked' \
		"$OUT/err"
	got=$(folded_sum 'EvBlocked\.waitHere(_\[.\])?;.*futex' "$OUT/off.folded")
	echo "blocked under EvBlocked.waitHere: $got ns of a 3 s recording"
	((got >= 2000000000))
}

# A waiter spinning for a contended monitor runs in the VM (ObjectMonitor), where AGCT cannot
# walk it: with -e lock its CPU samples inside the wait take the wait's Java stack. Without
# that, 64% of this app's CPU samples of Java threads had complete Java stacks.
check_spin() {
	start_app "$1" EvSpin 2000 5000
	"$JPROF" record -v -p "$JPID" -e cpu,lock -d 5 -o "$OUT/spin.folded" 2>"$OUT/err" 3>&-
	kill_jpid
	cat "$OUT/err"
	awk '{ print $NF, $0 }' "$OUT/spin.folded" | sort -nr | head -5 | cut -c1-300
	pct=$(sed -nE "s/^jprof: JVM $JPID \([^)]*\): .*CPU samples of Java threads: .*, ([0-9.]+)% of the [0-9]+ after the agent connected.*/\1/p" "$OUT/err")
	[[ -n $pct ]] || pct=$(sed -nE "s/^jprof: JVM $JPID \([^)]*\): .* with complete Java stacks \(([0-9.]+)%\).*/\1/p" "$OUT/err")
	echo "complete Java stacks: $pct%"
	awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 90) }'
	# Most spinning samples are walked in BPF from the thread's frame anchor now; the rest
	# take their monitor wait's stack from the agent. Either way they have the Java stack
	# (checked below), so how many took the wait's is printed, not required: under 2 busy
	# loops it was 0 once in 4 runs (4-32 on an idle host).
	sed -nE 's/.*; ([0-9]+ blocked or spinning samples got the Java stack of their monitor wait).*/\1/p' "$OUT/err"
	# tens of thousands of waits a second: jprof keeps up with the agent's ring (it read one
	# round of 4,096 records per 100 ms before, and the agent dropped half of the events)
	! grep -Eq 'events dropped|ring full' "$OUT/err"
	# the VM's monitor code sits on the waiting Java method (-e cpu,lock: CPU samples in ns)
	grep -Eq 'EvSpin\.work(_\[.\])?;([^;]*;)*(ObjectMonitor::|SpinPause)' "$OUT/spin.folded"
}

@test "cpu,lock (JDK 17): CPU samples of threads spinning for a monitor have its Java stack" {
	check_spin "$JDK17"
}

@test "cpu,lock (JDK 25): CPU samples of threads spinning for a monitor have its Java stack" {
	check_spin "$JDK25"
}

@test "offcpu (JDK 17): a thread blocked on a monitor since before the attach has its Java stack" {
	check_blocked_at_attach "$JDK17"
}

@test "offcpu (JDK 25): a thread blocked on a monitor since before the attach has its Java stack" {
	check_blocked_at_attach "$JDK25"
}

@test "offcpu (JDK 17): blocked time entering a contended monitor from JIT code has its Java stack" {
	check_offcpu_monitor "$JDK17"
}

@test "offcpu (JDK 25): blocked time entering a contended monitor from JIT code has its Java stack" {
	check_offcpu_monitor "$JDK25"
}

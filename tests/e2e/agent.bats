#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# agent.bats: libjprofagent in real JVMs (JDK 17 and 25), loaded at start and by dynamic
# attach, driven by tests/agent/agent_driver (tgkill at 1 kHz, as the BPF sampler would).
# In CI (CI set) a missing prerequisite fails; outside CI a non-root run skips loudly.
bats_require_minimum_version 1.5.0

load helpers

AGENT_TESTS=${APPS%/}; AGENT_TESTS=${AGENT_TESTS%/*}/agent
DRIVER=$AGENT_TESTS/agent_driver
JFLAGS=(-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JprofWorkload::hotLoop
	-XX:CompileCommand=dontinline,JprofWorkload::inlineCaller)

setup_file() {
	[[ $EUID -eq 0 ]] || { missing "needs root (run via sudo make check-e2e)"; return; }
	[[ -f $JPROF_AGENT ]] || { missing "agent not built at $JPROF_AGENT (make)"; return; }
	[[ -x $DRIVER && -f $AGENT_TESTS/JprofWorkload.class ]] ||
		{ missing "agent test driver/workload not built in $AGENT_TESTS (make check-e2e builds them)"; return; }
}

setup() {
	JPID=
	OUTF=$BATS_TEST_TMPDIR/driver.out
	LOGF=$BATS_TEST_TMPDIR/jvm.out
}

teardown() {
	[[ -n $JPID ]] && kill -9 "$JPID" 2>/dev/null || true
	[[ -n ${DPID:-} ]] && kill -9 "$DPID" 2>/dev/null || true
}

# start_jvm JDK_HOME SECONDS [JVM args...]: the workload in the background, output in $LOGF
start_jvm() {
	local home=$1 secs=$2
	shift 2
	[[ -x $home/bin/java ]] || { missing "JDK missing: $home/bin/java"; return; }
	"$home/bin/java" "${JFLAGS[@]}" "$@" -cp "$AGENT_TESTS" JprofWorkload "$secs" >"$LOGF" 2>&1 3>&- &
	JPID=$!
}

# wait_jvm: the workload must finish on its own and say it computed right
wait_jvm() {
	local rc=0
	wait "$JPID" || rc=$?
	JPID=
	cat "$LOGF"
	[[ $rc -eq 0 ]] || { echo "JVM exited $rc"; return 1; }
	grep -q '^jprof-workload ok' "$LOGF"
	! grep -q 'jprof agent:' "$LOGF"
}

# completeness THREAD: percent of that thread's traces that reach Thread.run
completeness() {
	awk -v t="$1" '$1 == "#" && $2 == "complete" && $3 == t { sub("%", "", $5); print $5 }' "$OUTF"
}

# check_profile MIN_PERCENT
check_profile() {
	local pct
	grep '^#' "$OUTF"
	grep -Eq '^jprof-hot;.*JprofWorkload\.hotLoop_\[j\] [0-9]+$' "$OUTF"
	pct=$(completeness jprof-hot)
	echo "# jprof-hot complete traces: ${pct:-none}% (need $1%); $(grep -E '^# err' "$OUTF" | tr '\n' ' ')" >&3
	[[ -n $pct ]] && awk -v p="$pct" -v m="$1" 'BEGIN { exit !(p >= m) }'
}

# the workload runs 5 s: the driver's 3 s from the agent's first answer, and 2 s to spare
run_at_start() {
	start_jvm "$1" 5 -agentpath:"$JPROF_AGENT"
	run -0 timeout 30 "$DRIVER" -p "$JPID" -d 3 -w 20
	echo "$output" >"$OUTF"
	check_profile 98
	# the small method shows up inlined into its JIT-compiled caller
	grep -Eq '^jprof-inline;.*JprofWorkload\.inlineCaller_\[j\];JprofWorkload\.mix_\[i\] [0-9]+$' "$OUTF"
	wait_jvm
}

run_attached() {
	local home=$1
	start_jvm "$home" 9
	sleep 2
	run -0 "$home/bin/jcmd" "$JPID" JVMTI.agent_load "$JPROF_AGENT"
	# a second attach finds the first one running and is a no-op
	run -0 "$home/bin/jcmd" "$JPID" JVMTI.agent_load "$JPROF_AGENT"
	[[ $output == *"return code: 0"* ]]
	run -0 timeout 30 "$DRIVER" -p "$JPID" -d 3 -w 20
	echo "$output" >"$OUTF"
	# code compiled before the attach has no non-safepoint debug info: AGCT fails more
	# often there (-5 unknown Java) until it is recompiled
	check_profile 90
	wait_jvm
}

@test "agent: JDK 17 at start: JIT and inlined frames, complete traces" {
	run_at_start "$JDK17"
}

@test "agent: JDK 25 at start: JIT and inlined frames, complete traces" {
	run_at_start "$JDK25"
}

@test "agent: JDK 17 attached twice by jcmd" {
	run_attached "$JDK17"
}

@test "agent: JDK 25 attached twice by jcmd" {
	run_attached "$JDK25"
}

@test "agent: the JVM runs on and completes after the reader is SIGKILLed" {
	start_jvm "$JDK17" 6 -agentpath:"$JPROF_AGENT"
	timeout 30 "$DRIVER" -p "$JPID" -d 20 -w 20 >"$OUTF" 2>&1 3>&- &
	DPID=$!
	sleep 3
	kill -9 "$DPID"
	wait "$DPID" || true
	DPID=
	wait_jvm
}

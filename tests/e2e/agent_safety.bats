#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# agent_safety.bats: the agent never harms the JVM it lives in (issues 7 and 13): thread
# churn sampled at 999 Hz never deadlocks it, a fault inside AsyncGetCallTrace is caught and
# reported, and a /tmp without room makes the agent decline while the JVM runs on.
# In CI (CI set) a missing prerequisite fails; outside CI a non-root run skips loudly.
bats_require_minimum_version 1.5.0

load helpers

setup_file() {
	require_root_bpf || return
	[[ -f $JPROF_AGENT ]] || { missing "agent not built at $JPROF_AGENT (make)"; return; }
	[[ -f $APPS/ThreadChurn.class ]] || { missing "ThreadChurn not built in $APPS (make apps)"; return; }
	command -v unshare >/dev/null || missing "unshare (util-linux)"
}

setup() {
	JPID=
	RPID=
	JOUT=$BATS_TEST_TMPDIR/jvm.out
	PROF=$BATS_TEST_TMPDIR/out.folded
	JERR=$BATS_TEST_TMPDIR/jprof.err
}

teardown() {
	[[ -n ${RPID:-} ]] && kill -9 "$RPID" 2>/dev/null || true
	[[ -n $JPID ]] && kill -9 "$JPID" 2>/dev/null || true
	# the JVM's hs_err file, if it crashed, is evidence: show it
	cat "$BATS_TEST_TMPDIR"/hs_err_pid*.log 2>/dev/null | head -40 || true
}

# churn JDK SECONDS LIMIT [JVM args...]: ThreadChurn in the background ($JPID is the java
# process itself); wait_churn gives it LIMIT s (a hang must fail the test, never stall it)
churn() {
	local home=$1 secs=$2 limit=$3
	shift 3
	require_jdk "$home" || return
	(cd "$BATS_TEST_TMPDIR" && exec "$home/bin/java" "$@" -cp "$APPS" ThreadChurn "$secs" \
		>"$JOUT" 2>&1 3>&-) &
	JPID=$!
	JDEADLINE=$(($(date +%s) + limit))
}

# hung_stacks PID: what a hung JVM's threads are doing, where it matters (signal handler,
# malloc, locks): the evidence for the report
hung_stacks() {
	command -v gdb >/dev/null || { echo "(no gdb for the stacks)"; return 0; }
	timeout 90 gdb -batch -p "$1" -ex 'set pagination off' -ex 'thread apply all bt 24' 2>&1 |
		grep -E '^Thread |on_stack_request|on_fault|GetEnv|tls_get_addr|malloc|lll_lock|jprof' |
		head -200 || true
}

# wait_churn: the JVM ended by itself in time, its threads all computed right
wait_churn() {
	local rc=0
	while kill -0 "$JPID" 2>/dev/null && (($(date +%s) < JDEADLINE)); do
		sleep 0.2
	done
	if kill -0 "$JPID" 2>/dev/null; then
		echo "JVM hung: still running at its time limit; its stacks:"
		hung_stacks "$JPID"
		grep -E 'jprof|copy-' "/proc/$JPID/maps" | awk '{ print $6, $7 }' | sort -u
		kill -9 "$JPID"
		wait "$JPID" || true
		JPID=
		cat "$JOUT"
		return 1
	fi
	wait "$JPID" || rc=$?
	JPID=
	cat "$JOUT"
	[[ $rc -eq 0 ]] || { echo "JVM exited $rc"; return 1; }
	grep -q '^threadchurn ok threads=[0-9]' "$JOUT"
}

# the java pid ($JPID), once it has exec'ed java (after cd, unshare, bash)
java_pid() {
	for ((i = 0; i < 100; i++)); do
		[[ $(cat "/proc/$JPID/comm" 2>/dev/null) == java ]] && { echo "$JPID"; return 0; }
		sleep 0.1
	done
	return 1
}

# record PID SECONDS: jprof at 999 Hz (attaches the agent unless it is there)
record() {
	run timeout -s INT $(($2 + 60)) "$JPROF" record -p "$1" -F 999 -d "$2" -o "$PROF"
	echo "$output" | tee "$JERR"
	[[ $status -eq 0 ]]
}

# The agent is loaded at start and the attach mechanism is off: no other profiler on the
# host (any `jprof record -a`, with whatever agent it carries) may inject its own agent
# into this JVM and decide the outcome. Attach is covered by agent.bats and the full-/tmp
# test; the handler is the same code either way.
NOATTACH=-XX:+DisableAttachMechanism

# record_bg PID SECONDS: jprof in the background (the JVM's fate is checked first)
record_bg() {
	"$JPROF" record -p "$1" -F 999 -d "$2" -o "$PROF" 2>"$JERR" 3>&- &
	RPID=$!
}

# wait_record LIMIT: jprof ends by itself within LIMIT s, successfully
wait_record() {
	local rc=0
	for ((i = 0; i < $1 * 10; i++)); do
		kill -0 "$RPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$RPID" 2>/dev/null && { kill -INT "$RPID"; echo "jprof still running after $1 s"; }
	wait "$RPID" || rc=$?
	RPID=
	cat "$JERR"
	[[ $rc -eq 0 ]] || { echo "jprof exited $rc"; return 1; }
}

stress() {
	local home=$1 secs=$2 t0 pid
	t0=$(date +%s)
	churn "$home" "$secs" $((secs + 240)) -agentpath:"$JPROF_AGENT" $NOATTACH
	pid=$(java_pid)
	sleep 1
	record_bg "$pid" $((secs - 3))
	# first the JVM: a hang is the failure this test is about
	wait_churn
	wait_record 120
	echo "# $(basename "$home"): $(tail -1 "$JOUT"), $(($(date +%s) - t0)) s; $(grep -E '^jprof: JVM' "$JERR")" >&3
	# jprof saw the app's own Java frames on its short-lived threads
	[[ $(folded_sum ';ThreadChurn\.work_\[[ji0]\]' "$PROF") -gt 0 ]]
	grep -Eq '^jprof: JVM [0-9]+ .*with complete Java stacks' "$JERR"
}

# 18 s each in the suite, 15 of them recorded (thousands of threads all the same); make
# bench's soak part runs them for 90 s (STRESS_SECS)
@test "agent safety: JDK 17, thousands of short-lived threads under 999 Hz, no deadlock" {
	stress "$JDK17" "${STRESS_SECS:-18}"
}

@test "agent safety: JDK 25, thousands of short-lived threads under 999 Hz, no deadlock" {
	stress "$JDK25" "${STRESS_SECS:-18}"
}

# fault JDK: every 7th walk faults inside the protected region (test-only agent option); the
# JVM ends about when the 4 s recording does (the recording stops at its exit)
fault() {
	local home=$1 pid n
	churn "$home" 6 120 -agentpath:"$JPROF_AGENT"=testfault=7 $NOATTACH
	pid=$(java_pid)
	sleep 1
	record "$pid" 4
	wait_churn
	! grep -q 'jprof agent:' "$JOUT"
	[[ ! -e $BATS_TEST_TMPDIR/hs_err_pid$pid.log ]]
	n=$(grep -Eo '[0-9]+ stack walk faulted \(caught\)' "$JERR" | awk '{ print $1 }')
	echo "# $(basename "$home"): ${n:-no} faults caught and reported" >&3
	[[ ${n:-0} -gt 0 ]]
	[[ $(folded_sum ';ThreadChurn\.work_\[[ji0]\]' "$PROF") -gt 0 ]]
}

@test "agent safety: JDK 17, a fault inside AsyncGetCallTrace is caught, counted and reported" {
	fault "$JDK17"
}

@test "agent safety: JDK 25, a fault inside AsyncGetCallTrace is caught, counted and reported" {
	fault "$JDK25"
}

# full_tmp JDK [JVM args...]: the JVM in its own mount namespace whose /tmp is a 640 KiB
# tmpfs: the agent copy (~190 KiB) fits, the 4 MiB ring does not
full_tmp() {
	local home=$1 pid rec=0
	shift
	require_jdk "$home" || return
	# The build dir may itself live under /tmp (a CI clone there): the JVM sees it bound on
	# /mnt of its private mount namespace, so the tmpfs over /tmp hides nothing it needs.
	local build apps
	build=$(dirname "$JPROF_AGENT")
	[[ $APPS == "$build"/* ]] || { missing "APPS under the agent's build dir ($APPS, $build)"; return; }
	apps=/mnt/${APPS#"$build"/}
	(cd "$BATS_TEST_TMPDIR" && exec unshare --mount --propagation private -- \
		bash -c 'mount --bind "$1" /mnt && shift &&
			 mount -t tmpfs -o size=640k,mode=1777 jpt-agent-tmp /tmp && exec "$@"' \
		full_tmp "$build" "$home/bin/java" "${@//"$build"//mnt}" -cp "$apps" ThreadChurn 8 \
		>"$JOUT" 2>&1 3>&-) &
	JPID=$!
	JDEADLINE=$(($(date +%s) + 120))
	pid=$(java_pid)
	sleep 2
	# the JVM first: if it died, its own report (hs_err header) names the culprit
	record "$pid" 4 || rec=$?
	wait_churn
	[[ ${rec:-0} -eq 0 ]]
	# one line from the agent, naming the reason; no crash
	[[ $(grep -c 'jprof agent:' "$JOUT") -eq 1 ]]
	grep -q 'jprof agent: .*No space left on device' "$JOUT"
	[[ ! -e $BATS_TEST_TMPDIR/hs_err_pid$pid.log ]]
	# jprof still profiled it, natively
	grep -Eq "^jprof: JVM $pid " "$JERR"
	grep -Eq '(libjvm\.so|start_thread|thread_native_entry)' "$PROF"
}

@test "agent safety: JDK 17, /tmp full at start (-agentpath): the agent declines, the JVM runs on" {
	full_tmp "$JDK17" -agentpath:"$JPROF_AGENT" $NOATTACH
}

@test "agent safety: JDK 25, /tmp full when jprof attaches: the agent declines, the JVM runs on" {
	full_tmp "$JDK25"
}

@test "agent safety: JDK 17, a second copy of the agent (another path) declines, the first keeps sampling" {
	local pid rec=0
	require_jdk "$JDK17" || return
	cp "$JPROF_AGENT" "$BATS_TEST_TMPDIR/copy-a.so"
	cp "$JPROF_AGENT" "$BATS_TEST_TMPDIR/copy-b.so"
	churn "$JDK17" 10 120 -agentpath:"$BATS_TEST_TMPDIR/copy-a.so"
	pid=$(java_pid)
	sleep 2
	run -0 timeout 30 "$JDK17/bin/jcmd" "$pid" JVMTI.agent_load "$BATS_TEST_TMPDIR/copy-b.so"
	[[ $output == *"return code: 0"* ]]
	record "$pid" 3 || rec=$?
	wait_churn
	[[ ${rec:-0} -eq 0 ]]
	# copy b (and jprof's own copy, if it attached one: a path it does not know) stood back
	grep -q 'jprof agent: another jprof agent already runs in this JVM' "$JOUT"
	! grep 'jprof agent:' "$JOUT" | grep -v 'another jprof agent already runs in this JVM'
	[[ $(folded_sum ';ThreadChurn\.work_\[[ji0]\]' "$PROF") -gt 0 ]]
}

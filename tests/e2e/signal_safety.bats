#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# signal_safety.bats: a JVM with the agent, run by an unprivileged user, stops handling
# the agent's signal mid-recording (it execs a non-Java program with the same pid, or
# resets the signal to SIG_DFL); jprof must never send it the signal again, on the CPU
# sampler's path and on the off-CPU one: jprof's own counters show each refusal (requests
# not sent: the handler is not the agent's; the JVM unregistered at exec or exit). The agent
# answers on SIGURG, whose default action is to ignore it, so the one window BPF's check
# cannot close (check, then a delivery that may wait for a CPU) cannot kill either: the
# last test sends SIGURG to a reset JVM. On a real-time signal (signo=40) the attacks
# here killed the JVM through that window twice in about ten runs of this file.
# The reset tests record with --java-walk signal: the default walk (BPF, from the frame
# anchor) asks the agent for few stacks, maybe none in the seconds after a reset, and a
# test of the refusal needs requests to refuse (CI at 23b1ee3: "not sent" was 0).
bats_require_minimum_version 1.5.0

load helpers

TUSER=jpt-bpf-sig

setup_file() {
	require_root_bpf
	[[ -f $JPROF_AGENT ]] || { missing "agent not built at $JPROF_AGENT (make)"; return; }
	[[ -f $APPS/SignalSafety.class && -f $APPS/libsigsafety.so && -x $APPS/sigsafe_target ]] ||
		{ missing "test apps not built in $APPS (make apps)"; return; }
	command -v setpriv >/dev/null || { missing "setpriv (util-linux)"; return; }
	make_test_user "$TUSER" >/dev/null
}

teardown_file() {
	id -u "$TUSER" >/dev/null 2>&1 && rm -rf "/tmp/hsperfdata_$TUSER"
	drop_test_user "$TUSER"
}

setup() {
	OUT=$BATS_TEST_TMPDIR
	JPID= RPID=
	# the JVM's user must see the go file: a world-readable directory of its own
	GODIR=$(mktemp -d /tmp/jpt-bpf-sig.XXXXXX)
	chmod 755 "$GODIR"
}

teardown() {
	local p
	for p in $JPID $RPID; do
		{ kill -9 "$p" && wait "$p"; } 2>/dev/null || true
	done
	rm -rf "$GODIR"
	# the agent's channel and perf map, left behind by an exec or a SIGKILL
	find /tmp -maxdepth 1 -user "$TUSER" \( -name 'jprof-*.ring' -o -name 'jprof-*.dict' \
		-o -name 'perf-*.map' \) -delete 2>/dev/null || true
}

# attack JDK MODE LOAD TARGET [jprof args...]: the JVM (MODE exec|reset, LOAD cpu|sleep) as
# $TUSER, jprof record (TARGET -a or -p) around it; the attack comes 1.5 s after "go",
# which is given 2 s into the recording. Leaves JVM_RC, JPROF_RC and the outputs in $OUT.
attack() {
	local home=$1 mode=$2 load=$3 target=$4 prog=() targ=(-a) i
	shift 4
	require_jdk "$home"
	[[ $mode == exec ]] && prog=("$APPS/sigsafe_target" "$([[ $load == cpu ]] && echo spin || echo sleep)" 4)
	(cd "$GODIR" && exec setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups -- \
		"$home/bin/java" -agentpath:"$JPROF_AGENT" -Djava.library.path="$APPS" -cp "$APPS" \
		SignalSafety "$mode" "$load" "$GODIR/go" 4 "${prog[@]}") >"$OUT/jvm.out" 2>&1 3>&- &
	JPID=$!
	JPID_SEEN=$JPID
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready' "$OUT/jvm.out" 2>/dev/null && break
		sleep 0.1
	done
	grep -q '^ready' "$OUT/jvm.out" || { cat "$OUT/jvm.out"; return 1; }

	[[ $target == -p ]] && targ=(-p "$JPID")
	# with -a jprof reads every process on a shared host: cap it, so that a runaway never
	# brings the global OOM killer to other processes
	(ulimit -v $((4 << 20)) && exec "$JPROF" record -v "${targ[@]}" -F 999 -d 12 "$@" \
		-o "$OUT/out.folded") >"$OUT/jprof.out" 2>&1 3>&- &
	RPID=$!
	# with -a, agents go into every JVM on the host first: the clock starts after that
	for ((i = 0; i < 600; i++)); do
		grep -q 'recording' "$OUT/jprof.out" && break
		sleep 0.1
	done
	sleep 2 # Java stacks answered by the agent before the attack
	touch "$GODIR/go"
	# other recordings on a shared host send their own requests (a jprof without these
	# checks kills the JVM just the same): name them if the test fails
	sleep 1.5
	pgrep -a -f 'jprof record' | grep -v "^$RPID " >"$OUT/others.txt" || true
	if [[ -n ${KILL_AFTER:-} ]]; then
		sleep "$((KILL_AFTER - 1))"
		kill -9 "$JPID"
	fi
	JVM_RC=0
	wait "$JPID" || JVM_RC=$?
	JPID=
	JPROF_RC=0
	wait "$RPID" || JPROF_RC=$?
	RPID=
	echo "--- JVM (exit $JVM_RC)"
	cat "$OUT/jvm.out"
	echo "--- jprof (exit $JPROF_RC)"
	cat "$OUT/jprof.out"
	echo "--- other jprof recordings at the attack"
	cat "$OUT/others.txt"
}

# sum of the counts of folded lines matching a regex, as an integer (folded_sum prints 1e+10)
weight() { grep -E -- "$1" "$OUT/out.folded" | awk '{ s += $NF } END { printf "%.0f\n", s }'; }

# the report's "N stack requests not sent ... JVMs unregistered: E at exec, X at exit"
not_sent() { sed -nE 's/^jprof: ([0-9]+) stack requests not sent.*/\1/p' "$OUT/jprof.out"; }
unreg_exec() { sed -nE 's/.*JVMs unregistered: ([0-9]+) at exec.*/\1/p' "$OUT/jprof.out"; }
unreg_exit() { sed -nE 's/.*JVMs unregistered: .*, ([0-9]+) at exit.*/\1/p' "$OUT/jprof.out"; }
withdrawn() { sed -nE 's/.*JVMs unregistered: .*, ([0-9]+) withdrawn.*/\1/p' "$OUT/jprof.out"; }

# the JVM answered stack requests before the attack: Java frames of SignalSafety
check_java_before() {
	(($(weight 'SignalSafety\.(spinFor|blockFor|work)_') > 0))
}

check_exec_survived() {
	local leaf=$1
	[[ $JVM_RC -eq 0 && $JPROF_RC -eq 0 ]]
	grep -q '^exec ' "$OUT/jvm.out"
	grep -q '^target survived' "$OUT/jvm.out"
	check_java_before
	# the new program was sampled all along (same pid), so it was at risk
	(($(weight ";$leaf( |;)") > 0))
	(($(unreg_exec) >= 1))
}

check_reset_survived() {
	[[ $JVM_RC -eq 0 && $JPROF_RC -eq 0 ]]
	grep -Eq '^reset signal [0-9]+' "$OUT/jvm.out"
	grep -q '^jvm survived' "$OUT/jvm.out"
	check_java_before
	# samples after the reset found SIG_DFL and sent nothing; at its end the JVM was
	# unregistered: by the agent's withdrawal at VM death or, if that was missed, at exit
	(($(not_sent) > 0))
	(($(unreg_exit) + $(withdrawn) >= 1))
}

@test "jdk17, -a: a JVM that execs a busy C program mid-recording is not killed" {
	attack "$JDK17" exec cpu -a
	check_exec_survived target_spin
}

@test "jdk25, -p: a JVM that execs a busy C program mid-recording is not killed" {
	attack "$JDK25" exec cpu -p
	check_exec_survived target_spin
}

@test "jdk25, -a: a JVM whose native code resets the signal to SIG_DFL keeps running" {
	attack "$JDK25" reset cpu -a --java-walk signal
	check_reset_survived
}

@test "jdk17, -p: a JVM whose native code resets the signal to SIG_DFL keeps running" {
	attack "$JDK17" reset cpu -p --java-walk signal
	check_reset_survived
}

@test "jdk17, -p -e offcpu: blocked JVM threads after a reset to SIG_DFL are not signalled" {
	attack "$JDK17" reset sleep -p -e offcpu --java-walk signal
	check_reset_survived
}

@test "jdk25, -a -e offcpu: a blocked JVM that execs a sleeping C program is not killed" {
	attack "$JDK25" exec sleep -a -e offcpu
	check_exec_survived target_sleep
}

@test "jdk17, -p: an agent that withdraws its signal gets no more stack requests" {
	attack "$JDK17" withdraw cpu -p -v
	[[ $JVM_RC -eq 0 && $JPROF_RC -eq 0 ]]
	grep -q '^withdrew 0' "$OUT/jvm.out"
	grep -q '^jvm survived' "$OUT/jvm.out"
	check_java_before
	grep -q "JVM $JPID_SEEN: the agent withdrew its signal" "$OUT/jprof.out"
	(($(withdrawn) == 1))
	# dropped from the map, not merely refused by the handler check
	(($(not_sent) == 0))
}

@test "jdk25, -p: a JVM killed mid-recording is unregistered in the kernel at its exit" {
	KILL_AFTER=3 attack "$JDK25" reset cpu -p
	((JVM_RC == 137))
	check_java_before
	(($(unreg_exit) == 1))
	(($(withdrawn) == 0))
}

# the agent's default signal is one whose default action is to ignore it: a request that
# reaches a thread after the process reset the handler (BPF checks the handler before it
# sends, the kernel delivers later, maybe after a preemption) is dropped, not fatal
@test "default signal SIGURG: a request delivered after a reset to SIG_DFL cannot kill" {
	local i t n=0
	require_jdk "$JDK17"
	(cd "$GODIR" && exec setpriv --reuid="$TUSER" --regid="$TUSER" --clear-groups -- \
		"$JDK17/bin/java" -agentpath:"$JPROF_AGENT" -Djava.library.path="$APPS" -cp "$APPS" \
		SignalSafety reset cpu "$GODIR/go" 3) >"$OUT/jvm.out" 2>&1 3>&- &
	JPID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready' "$OUT/jvm.out" 2>/dev/null && break
		sleep 0.1
	done
	touch "$GODIR/go"
	for ((i = 0; i < 300; i++)); do
		grep -q '^reset signal' "$OUT/jvm.out" 2>/dev/null && break
		sleep 0.1
	done
	cat "$OUT/jvm.out"
	grep -q '^reset signal 23$' "$OUT/jvm.out" # SIGURG, the agent's handler found there
	# what a late request is: the signal, to every thread, now that the handler is SIG_DFL
	for t in /proc/"$JPID"/task/*; do
		kill -s URG "${t##*/}" 2>/dev/null && n=$((n + 1))
	done
	echo "signalled $n threads"
	((n > 5))
	JVM_RC=0
	wait "$JPID" || JVM_RC=$?
	JPID=
	cat "$OUT/jvm.out"
	((JVM_RC == 0))
	grep -q '^jvm survived' "$OUT/jvm.out"
}

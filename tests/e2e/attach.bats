#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# attach.bats: dynamic attach of an agent into running JVMs (JDK 17/25, other users, pid+mount
# namespaces) and the refusals that must leave the JVM untouched.
bats_require_minimum_version 1.5.0

load helpers

: "${ATTACH_TEST_DIR_ABS:=$(dirname "$JPROF")/tests/attach}"
DRIVER=$ATTACH_TEST_DIR_ABS/attach_test
MARKER_AGENT=$ATTACH_TEST_DIR_ABS/marker_agent.so

setup_file() {
	# a world-readable class dir and a sticky marker dir, so a JVM running as nobody can use them
	export WORK
	WORK=$(mktemp -d /tmp/jprof-attach.XXXXXX)
	chmod 1777 "$WORK"
	mkdir -m 0755 "$WORK/cp"
	cp "$ATTACH_TEST_DIR_ABS/Sleeper.class" "$WORK/cp/" 2>/dev/null || true
	chmod 0644 "$WORK/cp/"* 2>/dev/null || true
}

teardown_file() {
	rm -rf "$WORK"
	# our marker agent's copies, unless some process still maps one
	local f
	for f in /tmp/jprof-agent-*.so; do
		[[ -f $f ]] && { cmp -s "$f" "$MARKER_AGENT" || cmp -s "$f" /etc/hostname; } || continue
		grep -qsF "$f" /proc/[0-9]*/maps || rm -f "$f"
	done
}

setup() {
	[[ $EUID -eq 0 ]] || { missing "attach tests need root (other users' JVMs, namespaces)"; return; }
	[[ -x $DRIVER && -f $MARKER_AGENT && -f $WORK/cp/Sleeper.class ]] ||
		{ missing "attach test programs not built in $ATTACH_TEST_DIR_ABS (make attach-test)"; return; }
	require_jdk "$JDK17"
	JPIDS=()
	N=$BATS_TEST_NUMBER
}

teardown() {
	local p
	for p in "${JPIDS[@]}"; do
		kill -CONT "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
	done
	sleep 0.2
	for p in "${JPIDS[@]}"; do
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true # our children (java, setpriv'd java, unshare): reaped
	done
}

# start_jvm JDK_HOME [setpriv|ns] [JVM options...]: sets JPID (host pid) and JLOG
start_jvm() {
	local home=$1 mode=${2:-} ready
	shift 2 || shift $#
	JSEQ=$((${JSEQ:-0} + 1))
	JLOG=$WORK/jvm.$N.$JSEQ.log
	ready=$WORK/ready.$N.$JSEQ
	case $mode in
	setpriv)
		command -v setpriv >/dev/null || { missing "setpriv (util-linux)"; return; }
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$home/bin/java" "$@" -cp "$WORK/cp" Sleeper "$ready" >"$JLOG" 2>&1 3>&- &
		JPID=$!
		JPIDS+=("$JPID")
		wait_file "$ready" 30 || { cat "$JLOG"; return 1; }
		;;
	ns | ns-nobody)
		command -v unshare >/dev/null || { missing "unshare (util-linux)"; return; }
		local as=()
		[[ $mode == ns-nobody ]] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		# new pid + mount namespace with its own /tmp: the JVM is pid 1 and sees only its /tmp
		# (the new /tmp hides $WORK: copy the classes through the cwd, which stays reachable)
		unshare --pid --fork --mount --mount-proc sh -c \
			'cd "$1" && shift && mount -t tmpfs tmpfs /tmp && cp -r . /tmp/cp && exec "$@"' \
			sh "$WORK/cp" "${as[@]}" "$home/bin/java" "$@" -cp /tmp/cp Sleeper /tmp/ready \
			>"$JLOG" 2>&1 3>&- &
		JPIDS+=("$!")
		local u=$! i=0
		JPID=
		while [[ -z $JPID ]] && ((i++ < 100)); do
			JPID=$(pgrep -P "$u" java || true)
			[[ -n $JPID ]] || sleep 0.1
		done
		[[ -n $JPID ]] || { cat "$JLOG"; return 1; }
		JPIDS+=("$JPID")
		wait_file "/proc/$JPID/root/tmp/ready" 30 || { cat "$JLOG"; return 1; }
		;;
	*)
		[[ -n $mode ]] && set -- "$mode" "$@"
		"$home/bin/java" "$@" -cp "$WORK/cp" Sleeper "$ready" >"$JLOG" 2>&1 3>&- &
		JPID=$!
		JPIDS+=("$JPID")
		wait_file "$ready" 30 || { cat "$JLOG"; return 1; }
		;;
	esac
}

# the JVM lives, keeps ticking, printed no thread dump and left no trigger file behind
jvm_unharmed() {
	local before after
	kill -0 "$JPID"
	before=$(grep -c '^tick' "$JLOG")
	sleep 0.5
	after=$(grep -c '^tick' "$JLOG")
	((after > before)) || { echo "JVM stopped ticking ($before -> $after)"; return 1; }
	! grep -q 'Full thread dump' "$JLOG" || { echo "JVM printed a thread dump"; return 1; }
	local ns
	ns=$(awk '/^NSpid:/ { print $NF }' "/proc/$JPID/status")
	[[ ! -e /proc/$JPID/cwd/.attach_pid$ns && ! -e /proc/$JPID/root/tmp/.attach_pid$ns ]] ||
		{ echo "trigger file left behind"; return 1; }
}

# attach_ok MARKER_AS_SEEN_BY_JVM MARKER_AS_SEEN_BY_US
attach_ok() {
	run -0 "$DRIVER" -v -t 15000 "$JPID" "$MARKER_AGENT" "$1"
	echo "$output"
	[[ $output == *attached* && $output != *"already loaded"* ]]
	wait_file "$2" 5
	grep -qx "attached pid=[0-9]*" "$2"
	grep -q 'jprof-agent-[0-9a-f]*-[0-9]*\.so' "/proc/$JPID/maps"
	jvm_unharmed
}

@test "attach: JDK 17 without attach socket (SIGQUIT path), second attach is a no-op" {
	start_jvm "$JDK17"
	[[ ! -e /tmp/.java_pid$JPID ]]
	attach_ok "$WORK/marker.$N" "$WORK/marker.$N"
	[[ $(grep -c . "$WORK/marker.$N") -eq 1 ]]
	# the copy: made by the helper as the JVM's user (root here), 0644, content- and uid-named
	local copy
	copy=$(grep -o '/tmp/jprof-agent-[0-9a-f]*-0\.so' "/proc/$JPID/maps" | head -1)
	[[ $(stat -c '%u %a' "$copy") == "0 644" ]]
	cmp "$copy" "$MARKER_AGENT"

	run -0 "$DRIVER" "$JPID" "$MARKER_AGENT" "$WORK/marker.$N"
	echo "$output"
	[[ $output == *"already loaded"* ]]
	[[ $(grep -c . "$WORK/marker.$N") -eq 1 ]]
	jvm_unharmed
}

@test "attach: JDK 17, attach socket already present (jcmd-started listener)" {
	start_jvm "$JDK17"
	"$JDK17/bin/jcmd" "$JPID" VM.version >/dev/null
	[[ -S /tmp/.java_pid$JPID ]]
	attach_ok "$WORK/marker.$N" "$WORK/marker.$N"
}

# A SIGQUIT that reaches a JVM whose listener is up already prints a thread dump into the
# application's output: jprof sends none then, and of two jprofs attaching at once only one
# sends it (the other waits for the listener it starts).
@test "attach: two attaches of a fresh JVM at once send one SIGQUIT: no thread dump (4 JVMs)" {
	local delay out1 out2
	# the second one 0-60 ms later, while the first one's SIGQUIT starts the listener
	for delay in 0 0.01 0.03 0.06; do
		start_jvm "$JDK17"
		out1=$WORK/two.$N.$delay.a out2=$WORK/two.$N.$delay.b
		"$DRIVER" -v -t 15000 "$JPID" "$MARKER_AGENT" "$WORK/marker.$N.$delay" >"$out1" 2>&1 &
		sleep "$delay"
		"$DRIVER" -v -t 15000 "$JPID" "$MARKER_AGENT" "$WORK/marker.$N.$delay" >"$out2" 2>&1
		wait $!
		cat "$out1" "$out2"
		grep -Eq "attached|already loaded" "$out1" && grep -Eq "attached|already loaded" "$out2"
		jvm_unharmed
	done
}

# the claim itself: a SIGQUIT another jprof has just sent (its marker in /run/jprof) is not
# sent again; the attach waits for that one's listener, and here none comes
@test "attach: a SIGQUIT another jprof has just sent is not sent again" {
	local start
	start_jvm "$JDK17"
	start=$(awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' "/proc/$JPID/stat")
	mkdir -p -m 0700 /run/jprof
	touch "/run/jprof/sigquit-$JPID-$start"
	# a marker a killed jprof left a minute ago: spent, swept at the next claim
	touch -d '1 minute ago' /run/jprof/sigquit-1-1
	run "$DRIVER" -v -t 2000 "$JPID" "$MARKER_AGENT" "$WORK/marker.$N"
	rm -f "/run/jprof/sigquit-$JPID-$start"
	echo "$output"
	[[ $status -ne 0 && $output == *"another jprof has just sent it SIGQUIT"* ]]
	[[ ! -S /tmp/.java_pid$JPID ]] # not signalled: no listener
	jvm_unharmed
	attach_ok "$WORK/marker.$N" "$WORK/marker.$N"
	[[ ! -e /run/jprof/sigquit-1-1 ]]
}

# HotSpot restarts a listener whose socket file is gone at the next SIGQUIT (no dump): a
# listener that runs is not taken for reachable then
@test "attach: a listener whose socket file a /tmp cleaner removed is restarted, no dump" {
	start_jvm "$JDK17"
	"$JDK17/bin/jcmd" "$JPID" VM.version >/dev/null
	rm -f "/tmp/.java_pid$JPID"
	attach_ok "$WORK/marker.$N" "$WORK/marker.$N"
}

@test "attach: JDK 25 with -XX:+EnableDynamicAgentLoading: no warning" {
	require_jdk "$JDK25"
	start_jvm "$JDK25" -XX:+EnableDynamicAgentLoading
	attach_ok "$WORK/marker.$N" "$WORK/marker.$N"
	! grep -q 'agent has been loaded dynamically' "$JLOG"
}

@test "attach: JDK 25 without flags: loads (the JVM warns)" {
	require_jdk "$JDK25"
	start_jvm "$JDK25"
	attach_ok "$WORK/marker.$N" "$WORK/marker.$N"
	run -0 "$DRIVER" "$JPID" "$MARKER_AGENT" "$WORK/marker.$N"
	[[ $output == *"already loaded"* ]]
}

@test "attach: agent whose Agent_OnAttach fails gives its return code (JDK 17 and 25)" {
	local home
	for home in "$JDK17" "$JDK25"; do
		[[ -x $home/bin/java ]] || { require_jdk "$home"; return; }
		start_jvm "$home"
		run -1 "$DRIVER" "$JPID" "$MARKER_AGENT" "fail:$WORK/marker.$N"
		echo "$output"
		[[ $output == *"agent load failed: Agent_OnAttach returned 42"* ]]
		jvm_unharmed
		# a file that is no library: the JVM's dlopen message comes through
		run -1 "$DRIVER" "$JPID" /etc/hostname x
		echo "$output"
		[[ $output == *"agent load failed:"*"was not loaded"* ]]
		jvm_unharmed
	done
}

@test "attach: JVM running as another user (nobody via setpriv)" {
	start_jvm "$JDK17" setpriv
	[[ $(awk '/^Uid:/ { print $3 }' "/proc/$JPID/status") == 65534 ]]
	attach_ok "$WORK/marker.$N" "$WORK/marker.$N"
	[[ $(stat -c %u "/tmp/.java_pid$JPID") == 65534 ]]
	[[ $(stat -c %u "$WORK/marker.$N") == 65534 ]]
	# the agent copy was written by a helper that had become nobody, not by root
	local copy
	copy=$(grep -o '/tmp/jprof-agent-[0-9a-f]*-65534\.so' "/proc/$JPID/maps" | head -1)
	[[ $(stat -c '%u %a' "$copy") == "65534 644" ]]
	[[ $output == *"helper "*" runs as uid 65534 gid 65534 with 0 groups, CapEff 0"* ]]
}

@test "attach: JDK 25 JVM in a new pid + mount namespace with a private /tmp" {
	require_jdk "$JDK25"
	start_jvm "$JDK25" ns -XX:+EnableDynamicAgentLoading
	run -0 "$DRIVER" --probe "$JPID"
	echo "$output"
	[[ $output == *"nspid=1 "* && $output == *"version=25."* ]]
	attach_ok /tmp/marker "/proc/$JPID/root/tmp/marker"
	[[ -S /proc/$JPID/root/tmp/.java_pid1 ]]
	run -0 "$DRIVER" "$JPID" "$MARKER_AGENT" /tmp/marker
	[[ $output == *"already loaded"* ]]
}

@test "attach: JDK 17 JVM as nobody in a new pid + mount namespace" {
	command -v setpriv >/dev/null || { missing "setpriv (util-linux)"; return; }
	start_jvm "$JDK17" ns-nobody
	run -0 "$DRIVER" --probe "$JPID"
	echo "$output"
	[[ $output == *"nspid=1 "* && $output == *"uid=65534 "* ]]
	attach_ok /tmp/marker "/proc/$JPID/root/tmp/marker"
	[[ $(stat -c %u "/proc/$JPID/root/tmp/.java_pid1") == 65534 ]]
}

@test "attach: -XX:+DisableAttachMechanism is refused with a clear error, JVM unharmed" {
	start_jvm "$JDK17" -XX:+DisableAttachMechanism
	run -1 "$DRIVER" "$JPID" "$MARKER_AGENT" "$WORK/marker.$N"
	echo "$output"
	[[ $output == *"attach mechanism disabled (-XX:+DisableAttachMechanism)"* ]]
	[[ ! -e $WORK/marker.$N ]]
	jvm_unharmed
}

@test "attach: no socket and SIGQUIT not caught (-Xrs): refused, not signalled" {
	start_jvm "$JDK17" -Xrs
	# -Xrs starts the listener at startup; take its socket away to force the signal path
	local i=0
	while [[ ! -S /tmp/.java_pid$JPID ]] && ((i++ < 100)); do sleep 0.1; done
	[[ -S /tmp/.java_pid$JPID ]]
	rm -f "/tmp/.java_pid$JPID"
	run -1 "$DRIVER" "$JPID" "$MARKER_AGENT" "$WORK/marker.$N"
	echo "$output"
	[[ $output == *"does not handle SIGQUIT"* ]]
	jvm_unharmed
}

@test "attach: a stopped JVM times out with a clear error" {
	start_jvm "$JDK17"
	kill -STOP "$JPID"
	run -1 "$DRIVER" -t 800 "$JPID" "$MARKER_AGENT" "$WORK/marker.$N"
	echo "$output"
	[[ $output == *"JVM did not answer the attach request within 800 ms"* ]]
	kill -CONT "$JPID"
	sleep 0.5
	kill -0 "$JPID"
	# the late SIGQUIT finds no trigger file (we removed it): a thread dump, nothing worse
	run -0 "$DRIVER" "$JPID" "$MARKER_AGENT" "$WORK/marker.$N"
	echo "$output"
	[[ $output == *attached* ]]
}

@test "attach: a non-Java process and nonexistent pids give clear errors" {
	sleep 1000 3>&- &
	JPIDS+=("$!")
	run -1 "$DRIVER" "$!" "$MARKER_AGENT" x
	echo "$output"
	[[ $output == *"error: not a JVM"* ]]
	kill -0 "${JPIDS[0]}"

	sleep 0 3>&- &
	local gone=$!
	wait "$gone" || true
	run -1 "$DRIVER" "$gone" "$MARKER_AGENT" x
	echo "$output"
	[[ $output == *"error: no such process"* ]]
	run -1 "$DRIVER" 2147483646 "$MARKER_AGENT" x
	[[ $output == *"error: no such process"* ]]
}

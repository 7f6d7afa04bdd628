#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# offcpu.bats: blocked time with stacks, and Java threads that keep their sleep times while
# their stacks are requested at syscall exit; via sc_driver and `jprof record -e offcpu`.
bats_require_minimum_version 1.5.0

load helpers

load kernel_helpers

SIGNO=40 # the agent's signal in the driver tests (SIGRTMIN+6 with glibc)

require_java_app() {
	require_jdk "$JDK17"
	[[ -r $APPS/OffcpuApp.class ]] || missing "OffcpuApp.class not built in $APPS (make apps)"
	[[ -r $JPROF_AGENT ]] || missing "agent not built at $JPROF_AGENT (make)"
}

# field KEY LINE-PATTERN FILE: values of KEY=V on lines matching the pattern
field() {
	grep -E -- "$2" "$3" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# stat NAME FILE
stat_of() {
	sed -n "s/^stat $1=//p" "$2"
}

# median_ms KIND FILE: OffcpuApp's own measurement (the median shrugs off load spikes of
# the shared machine; the mean is printed too)
median_ms() {
	sed -n "s/^$1 n=[0-9]* .*median_ms=\([0-9.]*\) .*/\1/p" "$2"
}

@test "offcpu (driver): 5 x 100 ms nanosleep is ~500 ms blocked in clock_nanosleep with both stacks" {
	require_driver
	"$APPS/sc_sleeper" 5 100 3>&- &
	APP_PID=$!
	"$SC_DRIVER" -p "$APP_PID" -e offcpu -d 3 --min-block 1000 --ready "$OUT/ready" \
		>"$OUT/out" 2>"$OUT/err" 3>&- &
	TOOL_PID=$!
	wait_file "$OUT/ready" 10
	kill -USR1 "$APP_PID"
	wait "$APP_PID"
	APP_PID=
	wait "$TOOL_PID"
	TOOL_PID=
	cat "$OUT/out" "$OUT/err"
	[[ $(grep -c '^sample kind=offcpu .*name=clock_nanosleep ' "$OUT/out") -eq 5 ]]
	ns=$(sed -n 's/^offcpu tid=[0-9]* ns=\([0-9]*\) .*/\1/p' "$OUT/out" | head -1)
	echo "blocked: $ns ns"
	((ns >= 500000000 && ns < 550000000))
	for k in $(field kstack '^sample kind=offcpu' "$OUT/out"); do ((k >= 3)); done
	for u in $(field ustack '^sample kind=offcpu' "$OUT/out"); do ((u >= 2)); done
	# not a JVM: never flagged for a Java trace
	[[ -z $(field flags '^sample kind=offcpu' "$OUT/out" | grep -v '^0$') ]]
	[[ $(stat_of offcpu_lost "$OUT/out") == 0 ]]
}

@test "offcpu (driver): Java threads are signalled at syscall exit only; sleep times unchanged (2%)" {
	require_driver
	require_java_app
	local java=$JDK17/bin/java args=(-agentpath:"$JPROF_AGENT"=signo=$SIGNO -cp "$APPS" OffcpuApp 5 50)
	# baseline: same run, nothing loaded
	"$java" "${args[@]}" >"$OUT/base" 2>&1 3>&-
	# profiled: the driver registers the JVM so off-CPU samples request Java stacks
	"$java" "${args[@]}" >"$OUT/prof" 2>&1 3>&- &
	APP_PID=$!
	sleep 0.5
	"$SC_DRIVER" -p "$APP_PID" -e offcpu -d 4 --jvm $SIGNO --min-block 1000 -q >"$OUT/out" 2>&1
	wait "$APP_PID"
	APP_PID=
	cat "$OUT/base" "$OUT/prof" "$OUT/out"
	grep -q '^done$' "$OUT/prof"
	! grep -q 'failed' "$OUT/prof"
	# the profiler woke nobody early
	for k in sleep wait read; do grep -Eq "^$k n=[0-9]+ .* early=0$" "$OUT/prof"; done
	# Thread.sleep(50) and Object.wait(50) take what they took without profiling (2%)
	for k in sleep wait; do
		b=$(median_ms $k "$OUT/base") p=$(median_ms $k "$OUT/prof")
		awk -v k=$k -v b="$b" -v p="$p" 'BEGIN { d = (p - b) / b * 100;
			printf "%s median: base %.3f ms, profiled %.3f ms (%+.2f%%)\n", k, b, p, d;
			exit (d > 2 || d < -2) }'
	done
	# stack requests were sent, and only at syscall exit: each one answers a flagged sample
	sent=$(stat_of sig_sent "$OUT/out") n=$(stat_of offcpu "$OUT/out")
	echo "off-CPU samples $n, signals sent $sent"
	((sent > 100 && sent <= n))
	[[ $(stat_of sig_err "$OUT/out") == 0 ]]
}

# --- the CLI contract (user/record.c, user/opts.c) -------------------------------------

@test "jprof record -e offcpu: folded stacks through do_sleep weighted in nanoseconds" {
	require_root_bpf
	"$APPS/sc_sleeper" 5 100 3>&- &
	APP_PID=$!
	"$JPROF" record -e offcpu -p "$APP_PID" -d 4 --min-block 1000 -o "$OUT/off.folded" \
		>"$OUT/out" 2>&1 3>&- &
	TOOL_PID=$!
	sleep 1.5
	kill -USR1 "$APP_PID"
	wait "$APP_PID"
	APP_PID=
	wait "$TOOL_PID"
	TOOL_PID=
	cat "$OUT/out" "$OUT/off.folded"
	grep -Eq '^sc_sleeper;(.*;)?main;do_sleep;.*nanosleep' "$OUT/off.folded"
	ns=$(folded_sum ';do_sleep;' "$OUT/off.folded")
	echo "blocked under do_sleep: $ns ns"
	((ns >= 500000000 && ns < 550000000))
}

@test "jprof record -e offcpu,syscalls: a slow blocking call counts once, not as both events" {
	require_root_bpf
	"$APPS/sc_sleeper" 5 100 3>&- &
	APP_PID=$!
	"$JPROF" record -e offcpu,syscalls -p "$APP_PID" -d 4 --min-block 1000 --slow 10000 \
		-o "$OUT/both.folded" -o "$OUT/both.pb.gz" >"$OUT/out" 2>"$OUT/err" 3>&- &
	TOOL_PID=$!
	sleep 1.5
	kill -USR1 "$APP_PID"
	wait "$APP_PID"
	APP_PID=
	wait "$TOOL_PID"
	TOOL_PID=
	cat "$OUT/err" "$OUT/both.folded"
	# 5 x 100 ms of nanosleep: ~0.5 s under do_sleep, not ~1 s (off-CPU + slow syscall)
	ns=$(folded_sum ';do_sleep;' "$OUT/both.folded")
	echo "blocked under do_sleep: $ns ns"
	((ns >= 500000000 && ns < 550000000))
	# each event in its own unit in the summary; the slow calls are still recorded
	grep -Eq '^jprof: off-CPU: [0-9]+ intervals, [0-9.]+ s blocked' "$OUT/err"
	grep -Eq '^jprof: slow syscalls: 5 calls, 0\.5[0-9]* s' "$OUT/err"
	run -0 "$JPROF" report "$OUT/both.pb.gz" --top 30
	echo "$output"
	[[ $output == *"100.00%"*"do_sleep [native]"* ]]
}

@test "jprof record -e offcpu: Java frames of Thread.sleep, wait, socket read and force" {
	require_root_bpf
	require_java_app
	"$JDK17/bin/java" -agentpath:"$JPROF_AGENT" -cp "$APPS" OffcpuApp 6 50 >"$OUT/app" 2>&1 3>&- &
	APP_PID=$!
	sleep 1
	run -0 "$JPROF" record -e offcpu -p "$APP_PID" -d 3 --min-block 1000 -o "$OUT/java.folded"
	echo "$output"
	wait "$APP_PID"
	APP_PID=
	cat "$OUT/app"
	for m in sleepLoop waitLoop readLoop forceLoop; do
		grep -Eq ";OffcpuApp\.$m(_\[[a-z0-9]\])?;" "$OUT/java.folded" ||
			{ echo "no OffcpuApp.$m frame"; false; }
	done
	for k in sleep wait read; do grep -Eq "^$k n=[0-9]+ .* early=0$" "$OUT/app"; done
	# blocked time per Java method within 10% of the truth: each loop is blocked for the
	# share n * mean / run time of the app's 6 s, so for that share of the recording
	local secs
	secs=$(sed -nE 's/.* samples \((.*, )?([0-9.]+) s\), .*/\2/p' <<<"$output" | tail -1)
	for pair in sleep:sleepLoop wait:waitLoop read:readLoop; do
		local k=${pair%%:*} m=${pair#*:} got n mean
		got=$(folded_sum ";OffcpuApp\.$m(_\[[a-z0-9]\])?;" "$OUT/java.folded")
		n=$(sed -nE "s/^$k n=([0-9]+) .*/\1/p" "$OUT/app")
		mean=$(sed -nE "s/^$k n=[0-9]+ mean_ms=([0-9.]+) .*/\1/p" "$OUT/app")
		awk -v got="$got" -v n="$n" -v mean="$mean" -v secs="$secs" -v m="$m" 'BEGIN {
			truth = n * mean / 6000 * secs * 1e9;
			printf "%s: profile %.0f ms blocked, truth %.0f ms\n", m, got / 1e6, truth / 1e6;
			exit (got < truth * 0.9 || got > truth * 1.1) }'
	done
}

# A JVM that refuses agents (-XX:+DisableAttachMechanism): its threads' blocked intervals
# get their Java frames from BPF's walk at the blocking syscall's return (from the thread's
# frame anchor), named from the JVM's memory; nothing is signalled. Before that walk, no
# off-CPU sample of a JVM without agent had a Java frame ("[no Java stack: no agent]").
@test "jdk25 -e offcpu, no agent: sleep, wait and socket read have their Java frames, walked in BPF, no signal" {
	require_root_bpf
	require_jdk "$JDK25"
	[[ -r $APPS/OffcpuApp.class ]] || missing "OffcpuApp.class not built in $APPS (make apps)"
	"$JDK25/bin/java" -XX:+DisableAttachMechanism -cp "$APPS" OffcpuApp 6 50 >"$OUT/app" 2>&1 3>&- &
	APP_PID=$!
	sleep 1
	run -0 "$JPROF" record -v -e offcpu -p "$APP_PID" -d 3 --min-block 1000 -o "$OUT/nw.folded"
	grep -E "^jprof: (off-CPU|debug: bpf:)" <<<"$output"
	wait "$APP_PID"
	APP_PID=
	cat "$OUT/app"
	grep -q '^done' "$OUT/app"
	for k in sleep wait read; do grep -Eq "^$k n=[0-9]+ .* early=0$" "$OUT/app"; done
	grep -qE "^jprof: debug: bpf: [0-9]+ samples, .*, 0 signals " <<<"$output"
	for m in sleepLoop waitLoop readLoop; do
		grep -Eq ";OffcpuApp\.$m(_\[[a-z0-9]\])?;" "$OUT/nw.folded" ||
			{ echo "no OffcpuApp.$m frame"; false; }
	done
	# the sleeping thread's blocked time is under its Java frames: its share n * mean of
	# the app's 6 s, for the recording's length (70%: intervals of a thread jprof had not
	# read in the JVM's thread list yet have none)
	local secs got n mean
	secs=$(sed -nE 's/.* samples \((.*, )?([0-9.]+) s\), .*/\2/p' <<<"$output" | tail -1)
	got=$(folded_sum ';OffcpuApp\.sleepLoop(_\[[a-z0-9]\])?;java/lang/Thread\.sleep' "$OUT/nw.folded")
	n=$(sed -nE 's/^sleep n=([0-9]+) .*/\1/p' "$OUT/app")
	mean=$(sed -nE 's/^sleep n=[0-9]+ mean_ms=([0-9.]+) .*/\1/p' "$OUT/app")
	awk -v got="$got" -v n="$n" -v mean="$mean" -v secs="$secs" 'BEGIN {
		truth = n * mean / 6000 * secs * 1e9;
		printf "sleepLoop: %.0f ms blocked under Thread.sleep, truth %.0f ms\n", got / 1e6, truth / 1e6;
		exit (got < truth * 0.7 || got > truth * 1.1) }'
}

@test "jprof record -e offcpu: a sleep still open at the end counts up to the end, under do_sleep" {
	require_root_bpf
	"$APPS/sc_sleeper" 1 60000 3>&- &
	APP_PID=$!
	sleep 0.5 # sc_sleeper blocks SIGUSR1 first
	"$JPROF" record -e offcpu -p "$APP_PID" -d 4 --min-block 1000 -o "$OUT/open.folded" \
		>"$OUT/out" 2>&1 3>&- &
	TOOL_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q 'recording' "$OUT/out" && break
		sleep 0.05
	done
	kill -USR1 "$APP_PID" # the 60 s sleep begins right after the recording's start
	wait "$TOOL_PID"
	TOOL_PID=
	cat "$OUT/out" "$OUT/open.folded"
	grep -Eq '^jprof: off-CPU: [0-9]+ intervals, [0-9.]+ s blocked, 1 still open at the end' \
		"$OUT/out"
	ns=$(folded_sum ';do_sleep;' "$OUT/open.folded")
	echo "blocked under do_sleep: $ns ns of a 4 s recording"
	# the whole recording but the moments before the release (5%)
	((ns >= 3800000000 && ns <= 4100000000))
}

# blocked_whole JDK: a JVM's threads blocked since before the recording (the launcher's
# thread in pthread_join, "main" in Thread.sleep) are blocked for the whole recording, the
# launcher's too when a SIGQUIT (a thread dump, as an attach sends) wakes it for a moment
# in the middle: its time before that counts from the start (a fresh-clone run lost 0.5 s
# of it to an attach)
blocked_whole() {
	require_root_bpf
	require_jdk "$1"
	[[ -r $APPS/OffcpuApp.class ]] || missing "OffcpuApp.class not built in $APPS (make apps)"
	[[ -r $JPROF_AGENT ]] || missing "agent not built at $JPROF_AGENT (make)"
	"$1/bin/java" -agentpath:"$JPROF_AGENT" -cp "$APPS" OffcpuApp 8 50 >"$OUT/app" 2>&1 3>&- &
	APP_PID=$!
	# main asleep from "started" on (a JVM slow to start ran main's start into the recording)
	wait_line "$OUT/app" '^started' 10 || true
	sleep 0.5
	"$JPROF" record -e offcpu -p "$APP_PID" -d 3 --min-block 1000 --per-thread \
		-o "$OUT/java.folded" >"$OUT/out" 2>&1 3>&- &
	TOOL_PID=$!
	wait_line "$OUT/out" recording 5 || true
	sleep 1
	kill -QUIT "$APP_PID"
	local rc=0
	wait "$TOOL_PID" || rc=$?
	TOOL_PID=
	output=$(cat "$OUT/out")
	echo "$output"
	((rc == 0))
	grep -q '^Full thread dump' "$OUT/app"
	local pid=$APP_PID
	wait "$APP_PID"
	APP_PID=
	grep -q '^done' "$OUT/app"
	[[ $output =~ [0-9]+\ still\ blocked\ at\ the\ end ]]
	local secs launcher main
	secs=$(sed -nE 's/.* samples \((.*, )?([0-9.]+) s\), .*/\2/p' <<<"$output" | tail -1)
	launcher=$(folded_sum "^java \\[[0-9]+\\][^;]*;java \\[$pid\\][^;]*;" "$OUT/java.folded")
	main=$(folded_sum '^java \[[0-9]+\][^;]*;main \[[0-9]+\];' "$OUT/java.folded")
	grep -E "^java \[[0-9]+\][^;]*;(java|main) " "$OUT/java.folded" | cut -c1-200
	echo "recording $secs s; blocked: launcher (pthread_join) $launcher ns, main $main ns"
	for ns in "$launcher" "$main"; do
		awk -v ns="$ns" -v secs="$secs" 'BEGIN { exit (ns < secs * 0.95e9 || ns > secs * 1.05e9) }'
	done
}

@test "jdk17 -e offcpu: the launcher thread in join and main in sleep are blocked the whole recording" {
	blocked_whole "$JDK17"
}

@test "jdk25 -e offcpu: the launcher thread in join and main in sleep are blocked the whole recording" {
	blocked_whole "$JDK25"
}

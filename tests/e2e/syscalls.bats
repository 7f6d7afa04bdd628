#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# syscalls.bats: exact syscall counts and errors, latency table, slow-call stacks; through the
# kernel-side driver (SC_DRIVER) and through `jprof record -e syscalls`.
bats_require_minimum_version 1.5.0

load helpers

load kernel_helpers

# run_traced SECS CMD...: CMD (a tracer of $APP_PID, output in $OUT/out, errors in $OUT/err)
# runs in the background; once attached (1.5 s, or $OUT/ready) the workload is released.
run_traced() {
	local secs=$1
	shift
	rm -f "$OUT/ready"
	"$@" >"$OUT/out" 2>"$OUT/err" 3>&- &
	TOOL_PID=$!
	# ready: the driver's --ready file, or jprof's "recording" line (sampling has begun)
	for ((i = 0; i < 100; i++)); do
		[[ -e $OUT/ready ]] && break
		grep -q 'recording' "$OUT/err" 2>/dev/null && break
		sleep 0.1
	done
	[[ -e $OUT/ready ]] || grep -q 'recording' "$OUT/err" || sleep 1.5
	kill -USR1 "$APP_PID"
	wait "$APP_PID"
	APP_PID=
	local rc=0
	wait "$TOOL_PID" || rc=$?
	TOOL_PID=
	cat "$OUT/err" >&2
	return $rc
}

# row NAME FILE: "calls errors" of syscall NAME in a text table
row() {
	awk -v n="$1" '$1 == n { print $2, $3; exit }' "$2"
}

@test "syscalls (driver): exact counts of writes, ENOENT and EACCES errors" {
	require_driver
	start_waiting sc_exact 1000 100 5
	run_traced 3 "$SC_DRIVER" -p "$APP_PID" -e syscalls -d 3 --ready "$OUT/ready"
	cat "$OUT/out"
	[[ $(row write "$OUT/out") == "1000 0" ]]
	[[ $(row openat "$OUT/out") == "100 100" ]]
	[[ $(row execve "$OUT/out") == "5 5" ]]
	grep -Eq '^ +100 +ENOENT$' "$OUT/out"
	grep -Eq '^ +5 +EACCES$' "$OUT/out"
	grep -q 'interpolated within log2' "$OUT/out"
	grep -q '^stat sc_agg_full=0$' "$OUT/out"
}

@test "syscalls (driver): a 50 ms nanosleep is a slow-call sample with a user stack, getppid is not" {
	require_driver
	start_waiting sc_sleeper 3 50
	run_traced 3 "$SC_DRIVER" -p "$APP_PID" -e syscalls -d 3 --slow 10000 --ready "$OUT/ready"
	cat "$OUT/out"
	[[ $(grep -c '^sample kind=syscall .*name=clock_nanosleep ' "$OUT/out") -eq 3 ]]
	! grep -q '^sample kind=syscall .*name=getppid ' "$OUT/out"
	# latency >= 50 ms, some user frames
	awk '/^sample kind=syscall/ { for (i = 1; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] == "weight_ns" && kv[2] < 50000000) bad = 1;
		if (kv[1] == "ustack" && kv[2] < 2) bad = 1 } } END { exit bad }' "$OUT/out"
	[[ $(row getppid "$OUT/out") == "3000 0" ]]
	# p50 of 3 calls of ~50 ms lies in the [33.5, 67.1) ms log2 bucket
	awk '$1 == "clock_nanosleep" { exit !($6 >= 33554 && $6 < 67109 && $9 >= 50000) }' "$OUT/out"
}

@test "syscalls (driver): --json is valid JSON with the exact counts" {
	require_driver
	command -v jq >/dev/null || missing "jq"
	start_waiting sc_exact 200 20
	run_traced 3 "$SC_DRIVER" -p "$APP_PID" -e syscalls -d 3 --json -q --ready "$OUT/ready"
	jq . "$OUT/out" >/dev/null
	[[ $(jq '[.processes[].syscalls[] | select(.name == "write") | .calls] | add' "$OUT/out") == 200 ]]
	[[ $(jq '[.processes[].syscalls[] | select(.name == "openat") | .errnos.ENOENT] | add' "$OUT/out") == 20 ]]
}

# --- the CLI contract (user/record.c, user/opts.c) -------------------------------------

@test "jprof record -e syscalls -p: text table with exact counts on stdout" {
	require_root_bpf
	start_waiting sc_exact 1000 100 5
	run_traced 4 "$JPROF" record -e syscalls -p "$APP_PID" -d 4
	cat "$OUT/out"
	[[ $(row write "$OUT/out") == "1000 0" ]]
	[[ $(row openat "$OUT/out") == "100 100" ]]
	grep -Eq 'ENOENT' "$OUT/out"
}

@test "jprof record -e syscalls -f json: valid JSON with the exact counts" {
	require_root_bpf
	command -v jq >/dev/null || missing "jq"
	start_waiting sc_exact 300 30
	run_traced 4 "$JPROF" record -e syscalls -p "$APP_PID" -d 4 -f json
	jq . "$OUT/out" >/dev/null
	[[ $(jq '[.processes[].syscalls[] | select(.name == "write") | .calls] | add' "$OUT/out") == 300 ]]
	[[ $(jq '[.processes[].syscalls[] | select(.name == "openat") | .errnos.ENOENT] | add' "$OUT/out") == 30 ]]
}

@test "jprof record -e syscalls --slow: folded slow-call stacks end in the syscall name" {
	require_root_bpf
	start_waiting sc_sleeper 3 50
	run_traced 4 "$JPROF" record -e syscalls -p "$APP_PID" -d 4 --slow 10000 -o "$OUT/slow.folded"
	cat "$OUT/slow.folded"
	grep -Eq ';do_sleep;(clock_)?nanosleep [0-9]+$' "$OUT/slow.folded"
	! grep -q 'getppid' "$OUT/slow.folded"
	# weights are nanoseconds: three calls of >= 50 ms
	(( $(folded_sum 'nanosleep [0-9]+$' "$OUT/slow.folded") >= 150000000 ))
}

# jprof_own JDK: JavaScExact under `-e cpu,syscalls -F 999 --per-thread`: the stack requests'
# rt_sigreturn and gettid are on the "caused by jprof" list, not among the JVM's own calls,
# and the workload's own pwrite64 count stays exact
jprof_own() {
	require_root_bpf
	require_jdk "$1"
	command -v jq >/dev/null || missing "jq"
	[[ -r $APPS/JavaScExact.class ]] || missing "JavaScExact.class not built in $APPS (make apps)"
	[[ -r $JPROF_AGENT ]] || missing "agent not built at $JPROF_AGENT (make)"
	"$1/bin/java" -agentpath:"$JPROF_AGENT" -cp "$APPS" JavaScExact 2000 "$OUT/go" \
		>"$OUT/app" 2>&1 3>&- &
	APP_PID=$!
	sleep 1
	# a signal for every Java stack: the calls it causes are what this test tells apart (the
	# default BPF walk leaves most samples of a thread in Java code without one)
	"$JPROF" record -e cpu,syscalls -F 999 -p "$APP_PID" -d 8 --per-thread -f json \
		--java-walk signal -o "$OUT/cpu.folded" >"$OUT/out" 2>"$OUT/err" 3>&- &
	TOOL_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q 'recording' "$OUT/err" && break
		sleep 0.1
	done
	touch "$OUT/go"
	wait "$APP_PID"
	APP_PID=
	wait "$TOOL_PID"
	TOOL_PID=
	cat "$OUT/app" "$OUT/err"
	grep -q '^done 2000 ' "$OUT/app"
	jq . "$OUT/out" >/dev/null
	local q='[.processes[] | .syscalls[] | select(.name == $n) | .calls] | add // 0'
	local qj='[.processes[] | .caused_by_jprof[] | select(.name == $n) | .calls] | add // 0'
	local pw own jp ownt jpt gt
	pw=$(jq --arg n pwrite64 "$q" "$OUT/out")
	own=$(jq --arg n rt_sigreturn "$q" "$OUT/out")
	jp=$(jq --arg n rt_sigreturn "$qj" "$OUT/out")
	echo "pwrite64 $pw; rt_sigreturn: own $own, caused by jprof $jp"
	[[ $pw == 2000 ]]
	# ~2 s of 999 Hz sampling of the busy thread: its requests are jprof's, whatever the load
	((jp >= 300))
	# the JVM's own signals (a safepoint poll's SIGSEGV) are rare next to 999 Hz
	((own * 50 <= jp))
	# the busy thread itself: no rt_sigreturn of its own, gettid only from the JVM's setup
	local t='.processes[] | select(any(.syscalls[]; .name == "pwrite64"))'
	ownt=$(jq "[$t | .syscalls[] | select(.name == \"rt_sigreturn\") | .calls] | add // 0" "$OUT/out")
	gt=$(jq "[$t | .syscalls[] | select(.name == \"gettid\") | .calls] | add // 0" "$OUT/out")
	jpt=$(jq "[$t | .caused_by_jprof[] | select(.name == \"gettid\") | .calls] | add // 0" "$OUT/out")
	echo "busy thread: own rt_sigreturn $ownt, own gettid $gt, jprof's gettid $jpt"
	[[ $ownt == 0 ]]
	((gt <= 10 && jpt >= 300))
	# rt_sigreturn returns the interrupted code's register: never counted as an error
	[[ $(jq '[.processes[] | (.syscalls[], .caused_by_jprof[]) |
		select(.name == "rt_sigreturn") | .errors] | add // 0' "$OUT/out") == 0 ]]
}

@test "jdk17 -e cpu,syscalls at 999 Hz: jprof's rt_sigreturn and gettid apart, exact pwrite64 count" {
	jprof_own "$JDK17"
}

@test "jdk25 -e cpu,syscalls at 999 Hz: jprof's rt_sigreturn and gettid apart, exact pwrite64 count" {
	jprof_own "$JDK25"
}
